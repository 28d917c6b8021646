#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of 'make demo': show the page-fault tracepoints at work on the
# seed workload through a tracefs instance.
T=/sys/kernel/tracing/instances/demo

say() { printf '\n=== %s\n' "$*"; }

# Decode an arm64 ESR of a data abort: EC, WnR, fault status.
decode() {
	esr=$(($1))
	ec=$(( (esr >> 26) & 0x3f )); wnr=$(( (esr >> 6) & 1 )); dfsc=$(( esr & 0x3f ))
	case $ec in
	36) where="data abort from EL0 (user)" ;;
	37) where="data abort from EL1 (kernel)" ;;
	32) where="instruction abort from EL0" ;;
	*) where="EC 0x$(printf %x $ec)" ;;
	esac
	case $dfsc in
	4|5|6|7) fsc="translation fault, level $((dfsc - 4))" ;;
	9|10|11) fsc="access flag fault, level $((dfsc - 8))" ;;
	13|14|15) fsc="permission fault, level $((dfsc - 12))" ;;
	*) fsc="DFSC 0x$(printf %x $dfsc)" ;;
	esac
	rw="read"
	[ "$wnr" = 1 ] && rw="write"
	echo "$where, $rw, $fsc"
}

show() {
	grep -v '^#' "$T/trace" | while read -r line; do
		echo "$line"
		code=${line##*error_code=}
		[ "$(uname -m)" = aarch64 ] && echo "        ^ ESR $code: $(decode "$code")"
	done
}

cd /tmp || exit 1
if command -v perf >/dev/null; then
	say "perf record -e exceptions:page_fault_user -- microbench 16"
	perf record -q -e exceptions:page_fault_user -o pf.data -- microbench 16
	say "perf script (the faults at 0xcafe0000: loading the program faults too)"
	perf script -i pf.data -F trace:comm,pid,event,trace | grep 'address=0xcafe' |
		while read -r line; do
			echo "$line"
			code=${line##*error_code=}
			[ "$(uname -m)" = aarch64 ] && echo "        ^ ESR $code: $(decode "$code")"
		done
	echo "($(perf script -i pf.data | wc -l) page_fault_user events in all for microbench 16)"
fi

if command -v perf >/dev/null; then
	say "perf record -e exceptions:page_fault_user --call-graph fp,defer -- callchain 4"
	perf record -q -e exceptions:page_fault_user --call-graph fp,defer -o cc.data -- callchain 4
	say "perf script: the faults in level3 with their user call paths, unwound once per fault on the way back to user space"
	perf script -i cc.data -F comm,pid,event,trace,ip,sym 2>/dev/null |
		awk 'BEGIN { RS = ""; ORS = "\n\n" } /level3/'
	echo "The samples' user parts came from $(perf report -D -i cc.data 2>/dev/null |
		grep -c 'PERF_RECORD_CALLCHAIN_DEFERRED(') PERF_RECORD_CALLCHAIN_DEFERRED records" \
		"($(perf script -i cc.data 2>/dev/null | grep -c page_fault_user) samples)."
fi

mkdir "$T"
say "tracefs: page_fault_user in an instance, microbench 16 again"
# Filter on the workload's pid, set before it runs: the wrapper stops
# itself until the filter is in place, then execs microbench.
sh -c 'kill -STOP $$; exec microbench 16' &
pid=$!
sleep 0.2
filter="common_pid == $pid && address >= 0xcafe0000 && address < 0xcaff0000"
echo "filter: $filter"
echo "$filter" > "$T/events/exceptions/page_fault_user/filter"
echo 1 > "$T/events/exceptions/page_fault_user/enable"
kill -CONT $pid
wait $pid
echo 0 > "$T/events/exceptions/page_fault_user/enable"
show

say "page_fault_kernel: read() copies into a fresh 1 MiB user buffer (dd reading /bin/busybox)"
cp /dev/null "$T/trace"
echo 'comm == "dd"' > "$T/events/exceptions/page_fault_kernel/filter"
echo 1 > "$T/events/exceptions/page_fault_kernel/enable"
dd if=/bin/busybox of=/dev/null bs=1M count=1 2>/dev/null
echo 0 > "$T/events/exceptions/page_fault_kernel/enable"
show | head -n 6
echo "... $(grep -c page_fault_kernel "$T/trace") page_fault_kernel events in all, one per page the copy touched"
rmdir "$T"

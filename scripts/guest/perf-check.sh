#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest check of the user-facing tool: perf (built from the same tree) must
# record and decode the page fault events. KTAP via kselftest's helpers.
# shellcheck source=/dev/null # kselftest's, at its path in the guest
. /kselftest/kselftest/ktap_helpers.sh
cd /tmp || exit 1

# arm64 only: an AArch32 program (the selftests build one when they have
# an AArch32 compiler), and a uprobe on a prologue (x86_64's gcc builds
# callchain's level3 without a frame of its own).
arm64=
[ "$(uname -m)" = aarch64 ] && arm64=1
c32=/kselftest/perf_events/deferred_compat_child

ktap_print_header
if [ -n "$arm64" ]; then ktap_set_plan 6; else ktap_set_plan 4; fi

# The page size (4 KiB, or 64 KiB on the 64k kernel variant).
page=$(sed -n 's/^KernelPageSize: *\([0-9]*\) kB$/\1/p' /proc/self/smaps | head -n 1)
page=$((${page:-4} * 1024))

# 16 stores, a page apart from 0xcafe0000, from one instruction: 16
# events, page by page, one ip.
perf record -q -e exceptions:page_fault_user -o pf.data -- microbench 16 >/dev/null
lo=$((0xcafe0000))
hi=$((lo + 16 * page))
perf script -i pf.data -F trace:trace 2>/dev/null | grep 'address=0x' |
while read -r line; do
	a=$(echo "$line" | sed 's/.*address=\(0x[0-9a-f]*\).*/\1/')
	[ $((a)) -ge $lo ] && [ $((a)) -lt $hi ] && echo "$line"
done >pf.txt
n=$(wc -l <pf.txt)
addrs=$(sed 's/.*address=\(0x[0-9a-f]*\).*/\1/' pf.txt | tr '\n' ' ')
want=""
i=0
while [ $i -lt 16 ]; do
	want="$want$(printf '0x%x ' $((lo + i * page)))"
	i=$((i + 1))
done
ips=$(sed 's/.*ip=\(0x[0-9a-f]*\).*/\1/' pf.txt | sort -u | wc -l)
if [ "$n" = 16 ] && [ "$addrs" = "$want" ] && [ "$ips" = 1 ]; then
	ktap_test_pass "perf record/script: 16 page_fault_user events at 0xcafe0000.., one ip"
else
	ktap_print_msg "got $n events, $ips ips, addresses: $addrs"
	ktap_test_fail "perf record/script: 16 page_fault_user events at 0xcafe0000.., one ip"
fi

# Reading /dev/zero into a fresh 1 MiB buffer: the kernel faults on each
# of its pages (256 of 4 KiB).
pages=$((1048576 / page))
perf stat -x, -o stat.txt -e exceptions:page_fault_kernel -- \
	dd if=/dev/zero of=/dev/null bs=1M count=1 2>/dev/null
count=$(grep page_fault_kernel stat.txt | cut -d, -f1)
if [ "${count:-0}" -ge $pages ] 2>/dev/null; then
	ktap_test_pass "perf stat: page_fault_kernel counts the pages of a 1 MiB read"
else
	ktap_print_msg "perf stat said: $(cat stat.txt), for $pages pages"
	ktap_test_fail "perf stat: page_fault_kernel counts the pages of a 1 MiB read"
fi
# Recorded with callchains: the kernel part starts at the tracepoint's
# caller, once (arm64 reported it twice before the series).
perf record -q -g -e exceptions:page_fault_user -o cc.data -- microbench 4 >/dev/null
perf script -i cc.data -F ip,sym 2>/dev/null >cc.txt
# Samples are separated by blank lines; count them and those whose first
# two entries are the same address.
# shellcheck disable=SC2046 # numbers, split into $1... on purpose
set -- $(awk 'NF == 0 { n = 0; next }
	      { n++; if (n == 1) { s++; first = $1 } else if (n == 2 && $1 == first) d++ }
	      END { print s + 0, d + 0 }' cc.txt)
if [ "$1" -ge 4 ] && [ "$2" = 0 ]; then
	ktap_test_pass "perf record -g: the tracepoint's caller is the first entry, once"
else
	ktap_print_msg "$1 samples, $2 with the first entry twice; the first of them:"
	head -n 12 cc.txt | while read -r l; do ktap_print_msg "$l"; done
	ktap_test_fail "perf record -g: the tracepoint's caller is the first entry, once"
fi
# --call-graph fp,defer stopped by SIGINT while the workload runs, as a
# user stops it: perf script decodes the session without an error (on
# arm64 it fixes up leaf frames through DWARF, so perf needs libdw), and
# most samples show main, which calls the frameless syscall(). (x86_64's
# perf has no such fix-up: there a frame pointer walk from syscall()
# skips main, with or without defer, so only the outermost frame counts.)
name="perf record --call-graph fp,defer, stopped by SIGINT: perf script decodes it"
want=__libc_start_call_main
[ -n "$arm64" ] && want=main
timeout -s INT 3 perf record -q -e task-clock -c 1000000 --call-graph fp,defer \
	-o int.data -- syscalls 1000000000 >/dev/null 2>int.err
perf script -i int.data -F comm,ip,sym >int.txt 2>>int.err
rc=$?
# shellcheck disable=SC2046 # numbers, split into $1... on purpose
set -- $(awk -v want="$want" '/^[^ \t]/ { s++ } $2 == want { m++ } END { print s + 0, m + 0 }' int.txt)
if [ $rc = 0 ] && ! grep -qi error int.err && [ "$1" -ge 20 ] && [ $(($2 * 2)) -ge "$1" ]; then
	ktap_test_pass "$name ($2 of $1 samples show $want)"
else
	ktap_print_msg "perf script exited with $rc; $2 of $1 samples show $want"
	while read -r l; do ktap_print_msg "$l"; done <int.err
	ktap_test_fail "$name"
fi

# An AArch32 program under --call-graph fp,defer: its samples keep the
# user callchain that --call-graph fp gives (level3 <- level2 <- level1 <-
# main), not a deferred record the kernel cannot fill. User-mode samples
# only (task-clock:u), of 300 ms of the child's user time: the kernel's
# share of the run (exec, faults, its clock reads) grows with a slow host
# and a debug kernel, its user time does not. The child spends nearly all
# of that in level3(). At least a quarter of the samples must show the
# chain: without the compat fallback none does, and the 64 KiB-page debug
# guest under TCG was seen with fewer than half (85 of 178, kernel
# samples still counted then).
c32_chains() { # call-graph mode: prints samples and those with the chain
	perf record -q -e task-clock:u -c 2000000 --call-graph "$1" -o c32.data -- \
		"$c32" 300 >/dev/null 2>c32.err
	perf script -i c32.data -F ip,sym 2>>c32.err |
		awk 'NF == 0 { if (n) s++; n = 0; next }
		     { f[++n] = $2; if (n >= 4 && f[n - 3] == "level3" && f[n - 2] == "level2" &&
			 f[n - 1] == "level1" && $2 == "main") hit[s] = 1 }
		     END { if (n) s++; for (k in hit) h++; print s + 0, h + 0 }'
}
if [ -n "$arm64" ]; then
	name="perf record --call-graph fp,defer: an AArch32 program keeps its user callchains"
	if [ ! -x "$c32" ]; then
		ktap_test_fail "$name (no $c32: the selftests were built without an AArch32 compiler)"
	else
		# shellcheck disable=SC2046 # numbers, split into $1... on purpose
		set -- $(c32_chains fp) $(c32_chains fp,defer)
		if [ "$1" -ge 20 ] && [ $(($2 * 4)) -ge "$1" ] &&
		   [ "$3" -ge 20 ] && [ $(($4 * 4)) -ge "$3" ]; then
			ktap_test_pass "$name ($2 of $1 samples with fp, $4 of $3 with fp,defer)"
		else
			ktap_print_msg "level3 <- level2 <- level1 <- main in $2 of $1 samples with fp, $4 of $3 with fp,defer"
			while read -r l; do ktap_print_msg "$l"; done <c32.err
			ktap_test_fail "$name"
		fi
	fi
fi

# A uprobe from perf probe -x on level3, so on its first instruction
# (STP x29, x30): the return address into level2 is still in x30 there.
# perf adds it to the callchain taken in place, from the sampled x30; the
# kernel puts it in the deferred one. Both must show the whole path, once.
probe_chains() { # call-graph mode: prints samples and those with the path
	perf record -q -e probe_callchain:level3 --call-graph "$1" -o up.data -- \
		sh -c 'callchain 1; callchain 1; callchain 1' >/dev/null 2>up.err
	perf script -i up.data -F ip,sym 2>>up.err |
		awk 'NF == 0 { n = 0; next }
		     { f[++n] = $2; if (n == 4) { s++; if (f[1] == "level3" && f[2] == "level2" &&
			 f[3] == "level1" && f[4] == "main") h++ } }
		     END { print s + 0, h + 0 }'
}
if [ -n "$arm64" ]; then
	name="perf probe -x on a function's first instruction: fp and fp,defer callchains name its caller"
	if ! perf probe -q -x "$(command -v callchain)" level3 2>up.err; then
		while read -r l; do ktap_print_msg "$l"; done <up.err
		ktap_test_fail "$name (perf probe failed)"
	else
		# shellcheck disable=SC2046 # numbers, split into $1... on purpose
		set -- $(probe_chains fp) $(probe_chains fp,defer)
		perf probe -q -d 'probe_callchain:*'
		if [ "$1" = 3 ] && [ "$2" = 3 ] && [ "$3" = 3 ] && [ "$4" = 3 ]; then
			ktap_test_pass "$name"
		else
			ktap_print_msg "level3 <- level2 <- level1 <- main in $2 of $1 samples with fp, $4 of $3 with fp,defer"
			while read -r l; do ktap_print_msg "$l"; done <up.err
			ktap_test_fail "$name"
		fi
	fi
fi
ktap_finished

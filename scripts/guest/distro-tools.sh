#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run in the distro guest's Debian root (scripts/guest/distro.sh), with
# Debian's bash, perf, trace-cmd and bpftrace. KTAP via kselftest's helpers.
#   distro-tools tools          what a user does first with each tool
#   distro-tools doc-examples   the Documentation page's examples, as written
# shellcheck source=/dev/null # kselftest's, at its path in the guest
. /tmp/h/ktap_helpers.sh
work=/tmp/work
mkdir -p $work && cd $work || exit 1

x86=
[ "$(uname -m)" = x86_64 ] && x86=1
page=$(sed -n 's/^KernelPageSize: *\([0-9]*\) kB$/\1/p' /proc/self/smaps | head -n 1)
page=$((${page:-4} * 1024))
# microbench N: N stores, a page apart from 0xcafe0000, from one
# instruction: N faults in [lo, hi).
lo=$((0xcafe0000))
hi=$((lo + 16 * page))
range="address >= $lo && address < $hi"

# check NAME COND-STATUS [FILE...]: a case; on failure FILEs go to the log.
check() {
	local name=$1 st=$2 f
	shift 2
	if [ "$st" = 0 ]; then
		ktap_test_pass "$name"
		return
	fi
	for f in "$@"; do
		[ -f "$f" ] && head -n 30 "$f" | sed 's/^/# /'
	done
	ktap_test_fail "$name"
}
ok() { [ "$1" ] && echo 0 || echo 1; }

# perf: list, record with a filter and script, stat (3 cases).
perf_events() {
	# Listing the events.
	perf list 'exceptions:*' >list.txt 2>&1
	check "perf list: both page-fault events" \
		"$(ok "$(grep -c 'exceptions:page_fault_\(user\|kernel\)' list.txt | grep -x 2)")" list.txt

	# Record, filter on the address, script: one event a page, one ip.
	perf record -q -e exceptions:page_fault_user --filter "$range" -o rec.data -- \
		microbench 16 >/dev/null 2>rec.err
	perf script -i rec.data -F trace:trace >rec.txt 2>>rec.err
	n=$(grep -c 'address=0x' rec.txt)
	addrs=$(sed -n 's/.*address=\(0x[0-9a-f]*\).*/\1/p' rec.txt | sort -u | wc -l)
	ips=$(sed -n 's/.*ip=\(0x[0-9a-f]*\).*/\1/p' rec.txt | sort -u | wc -l)
	check "perf record --filter, perf script: 16 events, 16 pages, one ip ($n, $addrs, $ips)" \
		"$(ok "$([ "$n" = 16 ] && [ "$addrs" = 16 ] && [ "$ips" = 1 ] && echo y)")" rec.txt rec.err

	# Counting: the same filter in perf stat.
	perf stat -x, -o stat.txt -e exceptions:page_fault_user --filter "$range" -- \
		microbench 16 >/dev/null 2>&1
	n=$(grep page_fault_user stat.txt | cut -d, -f1)
	check "perf stat --filter: 16 page_fault_user ($n)" "$(ok "$([ "$n" = 16 ] && echo y)")" stat.txt
}

# perf's callchains of the events: in place and deferred (3 cases).
perf_callchains() {
	# User and kernel stacks, taken in place and deferred, for a
	# glibc-linked program built with frame pointers.
	for mode in fp fp,defer; do
		perf record -q -e exceptions:page_fault_user --call-graph $mode \
			-o cg.data -- callchain-dyn 4 >/dev/null 2>cg.err
		perf script -i cg.data -F ip,sym >cg.txt 2>>cg.err
		# Of the samples (blank-line separated) whose user part starts
		# in level3 (its 4 stores), those with the kernel's fault path
		# and then level3 <- level2 <- level1 <- main. x86_64's gcc
		# gives level3, a leaf, no frame of its own: a frame-pointer
		# walk from it goes on from level2's frame, into level1.
		# shellcheck disable=SC2046 # numbers, split into $1... on purpose
		set -- $(awk -v x86="$x86" 'function end() { if (l3) { n++; if (k && p == 4) f++ } k = p = l3 = 0 }
			      NF == 0 { end(); next }
			      $1 ~ /^ffff/ { if ($2 == "handle_mm_fault" || $2 ~ /page_fault$/) k = 1; next }
			      { if ($2 == "level3" && !p) { p = 1; l3 = 1 }
				else if (p == 1 && $2 == "level2") p = 2
				else if (p == 1 && x86 && $2 == "level1") p = 3
				else if (p == 2 && $2 == "level1") p = 3
				else if (p == 3 && $2 == "main") p = 4 }
			      END { end(); print n + 0, f + 0 }' cg.txt)
		awk -v RS= '/level3/' cg.txt >cg.l3
		check "perf record --call-graph $mode, glibc-linked: kernel frames, then level3${x86:+ (level2 lost)}..main in $2 of 4 samples from level3 ($1)" \
			"$(ok "$([ "$1" = 4 ] && [ "$2" = 4 ] && echo y)")" cg.l3 cg.err
	done

	# A Debian program, built without -fno-omit-frame-pointer: what the
	# frame-pointer walk gives there (reported, not judged), and that every
	# deferred user part starts at the faulting instruction in a Debian
	# object (perl or a library) and perf script reads the session.
	# shellcheck disable=SC2016 # perl's variable
	perf record -q -e exceptions:page_fault_user --call-graph fp,defer -o pl.data -- \
		perl -e '$x = "a" x 4000000' >/dev/null 2>pl.err
	perf script -i pl.data -F ip,sym,dso >pl.txt 2>>pl.err
	rc=$?
	# A user part starts in Debian's files (perl, libperl, libc, ld.so)
	# or the vDSO; the others are printed.
	# shellcheck disable=SC2046 # numbers, split into $1... on purpose
	set -- $(awk 'NF == 0 { if (u) { s++; d += u; if (u > m) m = u } u = 0; next }
		      /\[kernel\.kallsyms\]/ { next }
		      { u++; if (u == 1) { if ($NF ~ /^\((\/usr\/|\[vdso\])/) g++; else print >"pl.odd" } }
		      END { if (u) { s++; d += u; if (u > m) m = u } print s + 0, g + 0, m + 0, (s ? int(d / s) : 0) }' pl.txt)
	ktap_print_msg "perl: $1 samples with user frames, $2 starting in a Debian object, user depth at most $3, mean $4"
	[ -s pl.odd ] && sort pl.odd | uniq -c | head -n 5 | while read -r l; do ktap_print_msg "first user frame elsewhere: $l"; done
	check "perf --call-graph fp,defer, a Debian program (perl): user parts start in its objects ($2 of $1)" \
		"$(ok "$([ $rc = 0 ] && [ "$1" -ge 50 ] && [ "$2" = "$1" ] && echo y)")" pl.err pl.txt
}

# perf trace and perf ftrace (2 cases).
perf_tracers() {
	# perf trace: system calls (syscall tracepoints) and the events.
	perf trace -e 'exit_group,exceptions:page_fault_user' --filter "$range" -- \
		microbench 4 >/dev/null 2>trace.txt
	n=$(grep -c 'page_fault_user' trace.txt)
	check "perf trace: exit_group and 4 page_fault_user ($n)" \
		"$(ok "$(grep -q exit_group trace.txt && [ "$n" = 4 ] && echo y)")" trace.txt

	# The function graph of the generic fault handling (the arch's fault
	# handlers are not traceable: arm64's do_page_fault() is __kprobes,
	# x86's exc_page_fault() noinstr).
	perf ftrace -G handle_mm_fault -- microbench 1 >ftrace.txt 2>&1
	check "perf ftrace -G handle_mm_fault: __handle_mm_fault in the graph" \
		"$(ok "$(grep -q '__handle_mm_fault' ftrace.txt && echo y)")" ftrace.txt
}

# tc_record NAME EVENT ARGS...: trace-cmd record -e EVENT ARGS into
# NAME.dat, reported into NAME.txt. trace-cmd 3.3.1 sometimes records
# nothing at all from a command that runs at once (a race of its
# recorder, on the base kernel too: docs/distro.md); such a recording
# is taken again, twice at most, and said so.
tc_record() {
	local name=$1 event=$2 i
	shift 2
	for i in 1 2 3; do
		trace-cmd record -q -e "$event" -o "$name.dat" "$@" >/dev/null 2>"$name.err"
		trace-cmd report -i "$name.dat" >"$name.txt" 2>>"$name.err"
		grep -q "${event#*:}:" "$name.txt" && return
		ktap_print_msg "trace-cmd record -e $event: an empty recording (try $i of 3)"
	done
}

# trace-cmd: a filter, kernel stacks, user stacks (3 cases).
trace_cmd() {
	# trace-cmd: record with a filter, report.
	tc_record tc exceptions:page_fault_user -f "$range" microbench 16
	n=$(grep -c 'page_fault_user:.*address=0x' tc.txt)
	check "trace-cmd record -f, report: 16 page_fault_user ($n)" "$(ok "$([ "$n" = 16 ] && echo y)")" tc.txt tc.err
	# Kernel stacks (-T): dd's read faults on its buffer, from the read path.
	tc_record tk exceptions:page_fault_kernel -T dd if=/dev/zero of=/dev/null bs=1M count=1
	check "trace-cmd record -T: page_fault_kernel with the read path in its stack" \
		"$(ok "$(grep -q 'page_fault_kernel:' tk.txt && grep -q 'vfs_read' tk.txt && echo y)")" tk.txt tk.err
	# User stacks (-O userstacktrace): one after each of the 16 events,
	# starting at the event's ip.
	tc_record tu exceptions:page_fault_user -f "$range" -O userstacktrace microbench 16
	# shellcheck disable=SC2046 # numbers, split into $1... on purpose
	set -- $(awk '/page_fault_user:/ { e++; sub(/.*ip=/, ""); ip = $1; next }
		      /user_stack:/ { u++; if ($NF == ip) m++ }
		      END { print e + 0, u + 0, m + 0 }' tu.txt)
	check "trace-cmd -O userstacktrace: $1 events, $2 user stacks, $3 starting at the event's ip" \
		"$(ok "$([ "$1" = 16 ] && [ "$2" = 16 ] && [ "$3" = 16 ] && echo y)")" tu.txt tu.err
}

# bpftrace (3 cases).
bpftrace_cases() {
	# bpftrace, as the fault-tracing lab uses it: a count, a count by
	# error code, and a histogram keyed on the event's fields.
	bpftrace -q -e "tracepoint:exceptions:page_fault_user /args.address >= $lo && args.address < $hi/ { @n = count(); }" \
		-c 'microbench 16' >bt1.txt 2>&1
	check "bpftrace: count() of the page_fault_user events is 16" \
		"$(ok "$(grep -qx '@n: 16' bt1.txt && echo y)")" bt1.txt
	bpftrace -q -e "tracepoint:exceptions:page_fault_user /args.address >= $lo && args.address < $hi/ { @[args.error_code] = count(); }" \
		-c 'microbench 16' >bt2.txt 2>&1
	n=$(awk -F': ' '/^@\[/ { s += $2 } END { print s + 0 }' bt2.txt)
	check "bpftrace: counts by error code add up to 16 ($n)" "$(ok "$([ "$n" = 16 ] && echo y)")" bt2.txt
	bpftrace -q -e "tracepoint:exceptions:page_fault_user /args.address >= $lo && args.address < $hi/ { @[comm] = lhist((args.address - $lo) / $page, 0, 16, 1); }" \
		-c 'microbench 16' >bt3.txt 2>&1
	# One fault in each of the 16 one-page buckets, under microbench.
	n=$(awk '/^@\[microbench\]/ { m = 1; next } m && /^\[[0-9]+, [0-9]+\)/ && $3 == 1 { b++ } END { print b + 0 }' bt3.txt)
	check "bpftrace: lhist of the fault's page in the region, keyed on comm: 16 buckets of 1 ($n)" \
		"$(ok "$([ "$n" = 16 ] && echo y)")" bt3.txt
}

# What a user does first with each tool: 14 cases.
tools() {
	ktap_print_header
	ktap_set_plan 14
	ktap_print_msg "$(perf version 2>&1 | head -n 1), $(trace-cmd --version 2>&1 | grep -m1 version), $(bpftrace --version 2>&1)"
	# As the Documentation tells users without binutils: where libdw has
	# no answer (no debug information), Debian's perf falls back to the
	# addr2line program and, without it, perf script dies on callchains
	# (seen on x86_64).
	perf config addr2line.style=libdw
	perf_events
	perf_callchains
	perf_tracers
	trace_cmd
	bpftrace_cases
	ktap_finished
}

# perf_fd_open PID: PID holds a perf event open.
perf_fd_open() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[[ $(readlink "$fd") == *perf_event* ]] && return 0
	done
	return 1
}

# Run the Documentation's examples (doc-examples.py), a subsection in one
# shell, in order, each as written: it must succeed and print lines that
# match its documented output. Where an example says ./prog, ./prog is a
# glibc-linked program that faults (callchain); ./touch16 is microbench
# (16 stores, a page apart from 0xcafe0000); a bpftrace example runs
# until it is interrupted, as a user would, after ./prog ran.
doc_examples() {
	local ex=/tmp/h/examples n f base cmd sect prev='' rc name pat
	cp /tmp/h/bin/microbench $work/touch16
	cp /tmp/h/bin/callchain-dyn $work/prog
	n=$(printf '%s\n' "$ex"/*.cmd | wc -l)
	ktap_print_header
	ktap_set_plan "$n"
	for f in "$ex"/*.cmd; do
		base=${f%.cmd}
		cmd=$(cat "$f")
		sect=$(cat "$base.section")
		[ "$sect" != "$prev" ] && { cd $work || return 1; }
		prev=$sect
		name="$sect: $(head -n 1 "$f" | sed 's/[[:space:]]*\\$//')"
		if [[ $cmd == bpftrace* ]]; then
			eval "$cmd" >"$base.log" 2>&1 &
			# 'Attaching' comes before the attach: wait for its
			# tracepoint's perf event, open and enabled with it.
			for _ in $(seq 120); do
				perf_fd_open "$(pgrep -x bpftrace)" && break
				sleep 0.5
			done
			$work/prog >/dev/null
			sleep 1
			pkill -INT -x bpftrace
			wait $!
			rc=$?
			# Its maps, printed when it stops.
			grep -q '^@' "$base.log" || rc=no-map
		else
			eval "$cmd" >"$base.log" 2>&1 </dev/null
			rc=$?
		fi
		while read -r pat; do
			grep -Pq -- "$pat" "$base.log" || rc="no line like: $pat"
		done <"$base.out"
		if [ "$rc" = 0 ]; then
			ktap_test_pass "$name"
		else
			ktap_print_msg "$rc"
			head -n 30 "$base.log" | sed 's/^/# /'
			ktap_test_fail "$name"
		fi
	done
	ktap_finished
}

case ${1:-} in
tools) tools ;;
doc-examples) doc_examples ;;
*) echo "usage: distro-tools tools|doc-examples" >&2; exit 2 ;;
esac

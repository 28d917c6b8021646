#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# perf's page-faults count (pfcount) of fixed workloads, alone and with the
# task sampling its callchains as 'perf record -g' does, as KTAP whose case
# names carry the counts: the upstream gate (scripts/check/upstream.sh)
# compares the base's and the series' cases by name, so a count that
# differs fails there. Needs no perf tool: riscv64's guest has none.
n=0
rc=0
echo "HARNESS: suite perf:page-faults"
echo "KTAP version 1"
echo "1..5"
# count NAME ARGS...: pfcount ARGS prints the count.
count() {
	name=$1
	shift
	n=$((n + 1))
	if out=$(pfcount "$@" 2>/tmp/pf-counts.err) && [ -n "$out" ]; then
		echo "ok $n $name: $out"
	else
		sed 's/^/# /' /tmp/pf-counts.err
		echo "not ok $n $name"
		rc=1
	fi
}
count "64 writes to fresh pages" write 64
count "FUTEX_WAKE_OP_PRIVATE on 64 fresh pages (faults with page faults disabled)" futex 64
count "64 writes to fresh pages, sampled as by perf record -g" -g write 64
count "FUTEX_WAKE_OP_PRIVATE on 64 fresh pages, sampled as by perf record -g" -g futex 64
# The user stack walk of each sample reads the frame pointer's page with
# page faults disabled; the page stays absent.
count "1 s with the frame pointer on an absent page, sampled as by perf record -g" -g fp 1
exit $rc

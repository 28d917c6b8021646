#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# perf's page-faults count (pfcount) of fixed workloads, alone and with a
# 'perf record -g' sampling them, as KTAP whose case names carry the
# counts: the upstream gate (scripts/check/upstream.sh) compares the base's and
# the series' cases by name, so a count that differs fails there.
n=0
rc=0
echo "KTAP version 1"
echo "1..5"
# count NAME COMMAND...: COMMAND prints the count.
count() {
	name=$1
	shift
	n=$((n + 1))
	if out=$("$@" 2>/tmp/pf-counts.err) && [ -n "$out" ]; then
		echo "ok $n $name: $out"
	else
		sed 's/^/# /' /tmp/pf-counts.err
		echo "not ok $n $name"
		rc=1
	fi
}
# shellcheck disable=SC2317 # run by count
rec() {
	perf record -q -g -e cpu-clock -F 1000 -o /tmp/pf-counts.data -- "$@"
}
count "64 writes to fresh pages" pfcount write 64
count "FUTEX_WAKE_OP_PRIVATE on 64 fresh pages (faults with page faults disabled)" \
	pfcount futex 64
count "64 writes to fresh pages, under perf record -g" rec pfcount write 64
count "FUTEX_WAKE_OP_PRIVATE on 64 fresh pages, under perf record -g" rec pfcount futex 64
# perf's user stack walk reads the frame pointer's page with page faults
# disabled, at each sample; the page stays absent.
count "1 s with the frame pointer on an absent page, under perf record -g" \
	rec pfcount fp 1
exit $rc

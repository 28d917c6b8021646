#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# harness.mode=upstream: the suites upstream already has, through upstream's
# own runners, so that the base kernel and the series can be compared on
# the same initramfs (scripts/check/upstream.sh): kselftest's ftrace (the
# whole ftracetest), perf_events and verification collections, and perf
# test, C and shell tests, both in Debian's root on the gate's disk;
# lib/test_vmalloc.c; and perf's page-faults count of fixed workloads
# (pf-counts).
rc=0
# arm64 under TCG: sigtrap_threads's watchpoint storms take 4 of its 5
# cases past their timeout on either kernel, and once held the guest for
# over ten minutes: not run there.
tests="-c ftrace -c verification"
for t in $(sed -n 's/^perf_events://p' /kselftest/kselftest-list.txt); do
	[ "$(uname -m)" = aarch64 ] && [ "$t" = sigtrap_threads ] && continue
	tests="$tests -t perf_events:$t"
done
# In Debian's root on the gate's disk, whose tools ftracetest uses.
# shellcheck disable=SC2086 # options, one a word
distro kselftest $tests || rc=1
# lib/test_vmalloc.c (a module): the series changes vmap().
echo "HARNESS: suite vmalloc:test_vmalloc"
suite test-vmalloc || rc=1
# Not an upstream suite: what the series must not change about perf's
# page-faults count, compared with the base's by the gate.
pf-counts || rc=1
# perf test last: 'HARNESS: suite' names every result after it. All of
# it, in Debian's root on the gate's disk, whose bash, python3 and
# binutils its shell tests need (scripts/guest/distro.sh).
if command -v perf >/dev/null; then
	echo "HARNESS: suite perf:test"
	distro perf-test-all || rc=1
fi
exit $rc

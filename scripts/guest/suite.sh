#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest's own suites of configs/suites, run by its init (check mode):
# suite NAME.
case $1 in
clang)
	# The page-fault cases again, from the test built by clang.
	/kselftest/exceptions-clang/page_fault_events -f page_fault
	;;
ftracetest)
	# ftracetest with the series' test only (the others need modules and
	# tracers these small kernels leave out).
	cd /kselftest/ftrace && ./ftracetest -K test.d/event/page-fault-events.tc
	;;
rv-pagefault)
	# The RV pagefault monitor's test, from a directory of its own: the
	# other verification tests need stress-ng.
	rv=/tmp/rv-pagefault
	mkdir -p $rv/test.d
	cp /kselftest/verification/test.d/functions \
		/kselftest/verification/test.d/rv_pagefault.tc $rv/test.d/
	ln -sf /kselftest/verification/rt_page_fault $rv/
	/kselftest/ftrace/ftracetest -K --rv $rv
	;;
memfd-noexec)
	# Where vm.memfd_noexec = 2 forbids executable memfds, the page-fault
	# test must still pass, its exec cases skipping with the reason.
	pfe=/kselftest/exceptions/page_fault_events
	echo "TAP version 13"
	echo "1..1"
	name="page_fault_events under vm.memfd_noexec=2: exec cases skip, the rest pass"
	if ! echo 2 2>/dev/null >/proc/sys/vm/memfd_noexec; then
		echo "ok 1 $name # SKIP no vm.memfd_noexec sysctl (CONFIG_PID_NS)"
		exit 0
	fi
	# Its exit status is 4 when every case skipped: read the output.
	out=$($pfe 2>&1)
	if echo "$out" | grep -q '^ok .*exec.*# SKIP vm.memfd_noexec' &&
	   ! echo "$out" | grep -q '^not ok'; then
		echo "ok 1 $name"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok 1 $name"
		exit 1
	fi
	;;
kmemleak)
	# kmemleak's verdict on all the suites before it. An object must be
	# 5 s old to be reported: scan twice.
	kml=/sys/kernel/debug/kmemleak
	echo "TAP version 13"
	echo "1..1"
	if ! [ -w $kml ] || ! echo scan 2>/dev/null >$kml; then
		echo "ok 1 no suspected memory leaks # SKIP no kmemleak (configs/debug.config has it)"
		exit 0
	fi
	sleep 6
	echo scan >$kml
	leaks=$(grep -c '^unreferenced object' $kml)
	if [ "$leaks" = 0 ]; then
		echo "ok 1 no suspected memory leaks"
	else
		head -n 40 $kml | sed 's/^/# /'
		echo "not ok 1 no suspected memory leaks ($leaks)"
		exit 1
	fi
	;;
test-vmalloc)
	# lib/test_vmalloc.c, loaded as its selftest loads it (modprobe):
	# every test in its mask (-1), then the fixed-size test through
	# vmalloc_huge() of 4 MiB. The module reports to the kernel log, a
	# Summary line per test, and never stays loaded (its init fails on
	# purpose). A test reported twice (a loader that retries a refused
	# module) counts once, failed if either run failed it. Loop counts a
	# debug kernel under QEMU runs in a minute.
	echo "TAP version 13"
	if ! grep -q '/test_vmalloc\.ko:' "/lib/modules/$(uname -r)/modules.dep" 2>/dev/null; then
		echo "1..1"
		echo "ok 1 test_vmalloc # SKIP no test_vmalloc module (CONFIG_TEST_VMALLOC=m)"
		exit 0
	fi
	kib=$(sed -n 's/^KernelPageSize: *\([0-9]*\) kB$/\1/p' /proc/self/smaps | head -n 1)
	for run in "run_test_mask=-1 test_loop_count=1000" \
		"run_test_mask=1 use_huge=1 nr_pages=$((4096 / ${kib:-4})) test_loop_count=100"; do
		echo "test_vmalloc: $run" >/dev/kmsg
		# shellcheck disable=SC2086 # parameters, one a word
		modprobe test_vmalloc $run 2>/dev/null
		dmesg | sed -n "/test_vmalloc: $run\$/,\$ s/.*Summary: \(.*\)/\1|$run/p"
	done | awk -F'|' '{ split($1, f, " "); k = f[1] " (" $2 ")"
		     # NAME passed: P failed: F xfailed: X repeat: R ...
		     if (!(k in bad)) name[n++] = k
		     if (f[5] == 0 && f[3] + f[7] == f[9]) bad[k] += 0; else { bad[k]++; print "# " $1 } }
		   END { for (i = 0; i < n; i++) printf "%s %d %s\n", bad[name[i]] ? "not ok" : "ok", i + 1, name[i]
			 print "1.." n + 0; exit n == 0 }'
	;;
*)
	echo "usage: suite clang|ftracetest|rv-pagefault|memfd-noexec|kmemleak|test-vmalloc" >&2
	exit 2
	;;
esac

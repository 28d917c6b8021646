#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of the distro run (configs/suites: distro PART, PART being
# tools, doc-examples or perf-test). The first call mounts the Debian root
# of /dev/vda (scripts/build/distro.sh) read-only, gives it the pseudo file
# systems and writable /tmp, /root and /run, and copies in what the tests
# run (our static programs, a glibc-linked one, the Documentation's
# examples, kselftest's KTAP helpers, our perf and its shell tests). Then,
# with Debian's bash in that root: the tools' tests (distro-tools), the
# Documentation's examples, perf test's shell test of the series, or
# (the upstream gate) all of perf test or kselftest's runner.
d=/distro
h=$d/tmp/h
if ! [ -d $h ]; then
	if ! [ -b /dev/vda ] || ! mkdir -p $d || ! mount -t ext4 -o ro /dev/vda $d; then
		echo "TAP version 13"
		echo "1..1"
		echo "not ok 1 the Debian root on /dev/vda mounts # no disk: boot with GUEST_DISK (make check's distro run)"
		exit 1
	fi
	for m in proc:proc sysfs:sys devtmpfs:dev tmpfs:tmp tmpfs:root tmpfs:run; do
		mount -t "${m%%:*}" "${m%%:*}" "$d/${m#*:}"
	done
	mount -t tracefs tracefs $d/sys/kernel/tracing
	mount -t debugfs debugfs $d/sys/kernel/debug
	# The kernel's modules where Debian's kmod looks, and the installed
	# kselftests, writable (its runners write their logs beside them).
	[ -d /lib/modules ] && mount --bind /lib/modules $d/usr/lib/modules
	mkdir -p $h/bin $h/perf/bin $h/kselftest
	mount --bind /kselftest $h/kselftest
	cp /kselftest/kselftest/ktap_helpers.sh /usr/bin/distro-tools $h/
	cp /usr/bin/microbench /usr/bin/callchain /usr/bin/callchain-dyn $h/bin/
	cp -r /usr/share/doc-examples $h/examples
	cp /usr/bin/perf $h/perf/bin/
	cp -r /usr/libexec/perf-core/tests $h/perf/
fi
# in_root PATH COMMAND...: COMMAND in Debian's root, with only PATH and
# what a login on the serial console would have.
in_root() {
	p=$1
	shift
	chroot $d /usr/bin/env -i PATH="$p" HOME=/root TERM=dumb PAGER=cat LANG=C "$@"
}
case $1 in
tools | doc-examples)
	in_root /tmp/h/bin:/usr/sbin:/usr/bin /bin/bash /tmp/h/distro-tools "$1"
	;;
kselftest)
	# kselftest's runner, with the arguments after "kselftest", in
	# Debian's root: its dash, gawk, binutils, coreutils, kmod and ping,
	# which ftracetest's tests use (the upstream gate).
	shift
	in_root /usr/sbin:/usr/bin /tmp/h/kselftest/run_kselftest.sh "$@"
	;;
perf-test | perf-test-all)
	# With our perf, in a directory of its own (Debian's perf is the
	# tools' test): perf test's shell test of the series (perf-test), or
	# every test of perf test, one after the other, their output shown
	# for those that fail (perf-test-all: the upstream gate,
	# scripts/guest/upstream.sh), with Debian's bash, python3 and binutils.
	# Our perf is static: the libdw in it dlopen()s libdebuginfod for a
	# binary without DWARF, which brings Debian's libc.so.6 into a static
	# program (on x86_64 its early init then divides by zero): Debian's
	# libdebuginfod is hidden from here on.
	for f in "$d"/usr/lib/*/libdebuginfod.so.1; do
		[ -e "$f" ] && mount --bind /dev/null "$f"
	done
	perf() {
		in_root /tmp/h/perf/bin:/usr/sbin:/usr/bin PERF_EXEC_PATH=/tmp/h/perf perf "$@"
	}
	if [ "$1" = perf-test ]; then
		perf test -vv fp,defer 2>&1 | perf-test-ktap
		exit
	fi
	# Left out on either kernel, because a TCG guest's speed decides
	# them (docs/upstream.md): "python profiling with jitdump" failed in
	# one boot of two; "Zstd ... multi-record data" needs two compressed
	# records from 'perf record -F max' at the rate the kernel has lowered
	# to by then (of three runs in one boot, the base wrote 1, 1 and 1,
	# the series 4, 1 and 2).
	skip=$(perf test list 2>&1 | sed -n \
		-e 's/^ *\([0-9]*\): python profiling with jitdump$/\1,/p' \
		-e 's/^ *\([0-9]*\): Zstd perf.data compression.decompression of multi-record data$/\1,/p' |
		tr -d '\n')
	perf test -S -v --failure-snippet-lines=40 ${skip:+--skip "${skip%,}"} 2>&1 | perf-test-ktap
	;;
*)
	echo "usage: distro tools|doc-examples|perf-test|perf-test-all|kselftest ARGS" >&2
	exit 2
	;;
esac

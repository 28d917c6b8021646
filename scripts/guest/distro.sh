#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of the distro run (init, suite distro): mount the Debian root
# of /dev/vda (scripts/build-distro.sh) read-only, give it the pseudo file
# systems and writable /tmp, /root and /run, copy in what the tests run
# (our static programs, a glibc-linked one, the Documentation's examples,
# kselftest's KTAP helpers, our perf and its shell tests) and run, with
# Debian's bash in that root, the tools' tests (distro-tools), the
# Documentation's examples and perf test's shell test of the series.
d=/distro
suite() { echo "HARNESS: suite $1"; }
if ! [ -b /dev/vda ] || ! mkdir -p $d || ! mount -t ext4 -o ro /dev/vda $d; then
	for s in distro:tools distro:doc-examples; do
		suite $s
		echo "TAP version 13"
		echo "1..1"
		echo "not ok 1 the Debian root on /dev/vda mounts # no disk: boot with GUEST_DISK (make check's distro run)"
	done
	exit 1
fi
for m in proc:proc sysfs:sys devtmpfs:dev tmpfs:tmp tmpfs:root tmpfs:run; do
	mount -t "${m%%:*}" "${m%%:*}" "$d/${m#*:}"
done
mount -t tracefs tracefs $d/sys/kernel/tracing
mount -t debugfs debugfs $d/sys/kernel/debug
h=$d/tmp/h
mkdir -p $h/bin
cp /kselftest/kselftest/ktap_helpers.sh /usr/bin/distro-tools $h/
cp /usr/bin/microbench /usr/bin/callchain /usr/bin/callchain-dyn $h/bin/
cp -r /usr/share/doc-examples $h/examples
rc=0
run() {
	chroot $d /usr/bin/env -i PATH=/tmp/h/bin:/usr/sbin:/usr/bin HOME=/root \
		TERM=dumb PAGER=cat LANG=C /bin/bash /tmp/h/distro-tools "$1" || rc=1
}
suite distro:tools
run tools
suite distro:doc-examples
run doc-examples
# perf test's shell tests of the series (bash's, Debian's), with our
# perf: in a directory of its own, as Debian's perf is the tools' test.
suite distro:perf-test
# Our perf is static: the libdw in it dlopen()s libdebuginfod for a
# binary without DWARF, which brings Debian's libc.so.6 into a static
# program (on x86_64 its early init then divides by zero). After the
# tools' tests, Debian's libdebuginfod is hidden.
for f in "$d"/usr/lib/*/libdebuginfod.so.1; do
	[ -e "$f" ] && mount --bind /dev/null "$f"
done
mkdir -p $h/perf/bin
cp /usr/bin/perf $h/perf/bin/
cp -r /usr/libexec/perf-core/tests $h/perf/
chroot $d /usr/bin/env -i PATH=/tmp/h/perf/bin:/usr/sbin:/usr/bin HOME=/root \
	TERM=dumb PAGER=cat LANG=C PERF_EXEC_PATH=/tmp/h/perf \
	perf test -vv fp,defer 2>&1 | perf-test-ktap
exit $rc

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The suites upstream already runs (scripts/guest/upstream.sh: perf test
# in Debian's root on the distro run's disk, the whole ftracetest, the
# perf_events and verification kselftests), on
# the base kernel and on the series kernel of ARCH, both with the series'
# configuration and the same initramfs; then both side by side as KTAP
# (ktap.py compare) in build/logs/$ARCH/upstream.ktap, which fails where a
# test passes on the base and not on the series. The serial logs:
# build/logs/$ARCH/upstream-{base,series}.log. A verdict whose inputs (both
# trees, the configuration, the harness and the tools) are those of a
# passing run is kept, as the other gates' are (lib.sh, CACHE=0). An arch
# outside UPSTREAM_ARCHES (lib.sh) compares perf's page-faults counts
# alone (scripts/guest/pf-counts.sh): riscv64's guest has no perf tool.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree
logs=$BUILD/logs/$ARCH
ktap=$logs/upstream.ktap
mkdir -p "$logs"
for f in "$OUT/$IMAGE" "$OUT/initramfs.cpio.gz"; do
	[ -f "$f" ] || die "$f missing; run 'make rootfs ARCH=$ARCH' first"
done
# perf test runs in Debian's root (the distro run's disk): its shell tests
# need bash, python3 and binutils.
mode=upstream disk=
if [[ " $UPSTREAM_ARCHES " == *" $ARCH "* ]]; then
	"$TOP/scripts/build/distro.sh"
	disk=$(distro_disk)
else
	mode=pf-counts
fi
key=$({
	git -C "$SRC" rev-parse 'base^{tree}' 'HEAD^{tree}'
	cat "$OUT/.config" "$0" ${disk:+"${disk%/*}/stamp"}
} | verdict_key)
# x86_64 under QEMU's TCG with two CPUs: ftracetest's function graph
# tests stop the base kernel too with "Oops: int3" at a function entry
# while ftrace patches it (docs/upstream.md). With one CPU they pass.
append=
[ "$ARCH" = x86_64 ] && append=$DISTRO_APPEND
rc=0
if ! verdict_reuse "upstream-$ARCH" "$key" "base, series, configuration and tools" >"$ktap"; then
	# boot VARIANT LOG: the suites on that kernel, into LOG.json.
	boot() {
		# Under TCG ftracetest alone takes minutes; the limit still
		# reports a hung guest, with its log, inside CI's 90 minutes.
		rm -f "$logs/$2.log"
		VARIANT=$1 TIMEOUT=2400 GUEST_LOG=$2 GUEST_APPEND="${GUEST_APPEND:-} $append" \
			GUEST_DISK=$disk "$TOP/scripts/run-guest.sh" $mode || true
		# Failures are expected on both kernels: the comparison judges.
		python3 "$TOP/scripts/check/ktap.py" parse "$ARCH upstream $1" "$logs/$2.log" \
			"$logs/$2.json" >"$logs/$2.txt" || true
	}
	compare() {
		python3 "$TOP/scripts/check/ktap.py" compare "$logs/upstream-base.json" "$@" >"$ktap"
	}
	# The series kernel is built: its boot runs beside the base kernel's
	# build and boot, which the two cores take in about the time of the
	# two boots one after the other. A case that a busy host makes late
	# is run again below, alone.
	boot series upstream-series &
	series=$!
	VARIANT=base "$TOP/scripts/build/kernel.sh" || { wait $series; exit 1; }
	boot base upstream-base
	wait $series
	# Some upstream tests time what they wait for (ftracetest's poll on
	# a histogram gives 'sleep 2' 4 s): a case that fails on the series
	# only is run once more, on a second boot alone, before it counts.
	if ! compare "$logs/upstream-series.json"; then
		boot series upstream-series-again
		compare "$logs/upstream-series.json" "$logs/upstream-series-again.json" || rc=1
	fi
	if [ $rc = 0 ]; then verdict_keep "upstream-$ARCH" "$key" "$ktap"; else verdict_drop "upstream-$ARCH"; fi
fi
# The counts of each suite's base/series pairs, then the cases that differ.
echo "$ARCH upstream suites, base/series ($logs/upstream-{base,series}.log):"
sed -n -e '/^HARNESS: suite/q' -e 's/^# /  /p' "$ktap"
exit $rc

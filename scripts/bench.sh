#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make bench': boot the pinned base and the series side by side under
# QEMU -icount shift=0 (exact guest instruction counts), run the guest's
# bench program in each, and print the tables (scripts/bench-report.py).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ARCH=${ARCH:-arm64}
check_arch
[ "$ARCH" = arm64 ] || die "make bench measures the arm64 series; run it with ARCH=arm64"

RUNS=${BENCH_RUNS:-5}
OUTDIR=$BUILD/bench
mkdir -p "$OUTDIR"

"$TOP/scripts/tree.sh"
build_guest || die "building the $ARCH guest failed at $FAILED_STEP"
VARIANT=base "$TOP/scripts/build-kernel.sh"

logs=()
for variant in base series; do
	VARIANT=$variant ICOUNT=1 GUEST_APPEND="bench.runs=$RUNS ${BENCH_APPEND:-}" \
		"$TOP/scripts/run-guest.sh" bench
	name=bench; [ $variant = base ] && name=bench-base
	logs+=("$variant=$BUILD/logs/$ARCH/$name-icount.log")
done
# The AUX allocator (series only: the KUnit suite that measures it is part
# of the series), in a boot of its own so that its fragmentation fixture
# leaves the other parts' page allocator alone.
KUNIT_FILTER=perf_aux ICOUNT=1 GUEST_LOG=bench-aux-icount GUEST_APPEND="bench.parts=aux" \
	"$TOP/scripts/run-guest.sh" bench
logs+=("series=$BUILD/logs/$ARCH/bench-aux-icount.log")
python3 "$TOP/scripts/bench-report.py" "$OUTDIR" "${logs[@]}"

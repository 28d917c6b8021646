#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make bench': boot the pinned base and the series side by side under
# QEMU -icount shift=0 (exact guest instruction counts), run the guest's
# bench program in each, and print the tables (scripts/bench/report.py).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
ARCH=${ARCH:-arm64}
check_arch
[ "$ARCH" = arm64 ] || die "make bench measures the arm64 series; run it with ARCH=arm64"

RUNS=${BENCH_RUNS:-5}
# What to measure: guest (base and series side by side: faults, microbench,
# syscalls, callchains), aux (the AUX allocator), frag (a long-running
# device); BENCH_PARTS="aux frag" runs only those.
PARTS=" ${BENCH_PARTS:-guest aux frag} "
for p in $PARTS; do
	case $p in guest|aux|frag) ;; *) die "unknown part '$p' in BENCH_PARTS; supported: guest aux frag" ;; esac
done
OUTDIR=$BUILD/bench
mkdir -p "$OUTDIR"

"$TOP/scripts/series/tree.sh"
build_guest || die "building the $ARCH guest failed at $FAILED_STEP"
logs=()
if [[ $PARTS == *" guest "* ]]; then
	VARIANT=base "$TOP/scripts/build/kernel.sh"
	for variant in base series; do
		VARIANT=$variant ICOUNT=1 GUEST_APPEND="bench.runs=$RUNS ${GUEST_APPEND:-}" \
			"$TOP/scripts/run-guest.sh" bench
		name=bench; [ $variant = base ] && name=bench-base
		logs+=("$variant=$BUILD/logs/$ARCH/$name-icount.log")
	done
	# The fault handler's code, base and series, side by side.
	logs+=("vmlinux-base=$BUILD/base/out/$ARCH/vmlinux" "vmlinux-series=$BUILD/out/$ARCH/vmlinux")
fi
# The AUX allocator and a long-running device are measured by a KUnit
# suite of the harness's own (scripts/bench/aux_bench.c, not part of the
# series), built into two trees beside the series': frag/linux (the
# series) and frag-old/linux (the series without its AUX allocation
# policy, those patches reverted as 'make mutants' does).
# bench_tree DIR [SUBJECT...]: DIR at the series' HEAD, the patches with
# those subjects reverted, and the bench suite added.
bench_tree() {
	local dir=$BUILD/$1/linux subject
	shift
	# A worktree left from an assembled tree that has since been removed
	# is made again.
	if [ "$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null)" != "$dir" ]; then
		rm -rf "$dir"
		mkdir -p "${dir%/linux}"
		git -C "$SRC" worktree prune
		git -C "$SRC" worktree add -q --detach "$dir" HEAD
	fi
	git -C "$dir" reset -q --hard
	git -C "$dir" clean -qfd kernel/events
	git -C "$dir" checkout -q --detach "$(git -C "$SRC" rev-parse HEAD)"
	for subject in "$@"; do
		revert_patch "$dir" "$subject" >&2 || die "cannot make $dir"
	done
	mkdir -p "$dir/kernel/events/tests"
	cp "$TOP/scripts/bench/aux_bench.c" "$dir/kernel/events/tests/"
	# shellcheck disable=SC2016 # a make variable, written as it is
	echo 'obj-$(CONFIG_KUNIT) += tests/aux_bench.o' >>"$dir/kernel/events/Makefile"
}
if [[ $PARTS == *" aux "* || $PARTS == *" frag "* ]]; then
	bench_tree frag
	VARIANT=frag "$TOP/scripts/build/kernel.sh"
fi
# The AUX allocator, in a boot of its own so that its fragmentation
# fixture leaves the other parts' page allocator alone.
if [[ $PARTS == *" aux "* ]]; then
	VARIANT=frag KUNIT_FILTER=perf_aux_bench ICOUNT=1 GUEST_LOG=bench-aux-icount \
		GUEST_APPEND="bench.parts=aux aux_bench.fragment=1" "$TOP/scripts/run-guest.sh" bench
	logs+=("series=$BUILD/logs/$ARCH/bench-aux-icount.log")
fi
# A long-running device: BENCH_FRAG_RUNS boots each of the default PMU and
# PREFER_LARGE on the series, and of PREFER_LARGE on the series without
# its AUX allocation policy, all with configs/ARCH-frag.config and a
# sparse disk whose reads fill the page cache.
if [[ $PARTS == *" frag "* ]]; then
	bench_tree frag-old "perf/aux: Add KUnit tests for the AUX area allocator" \
		"perf/aux: Don't retry AUX chunk orders that already failed" \
		"perf/aux: Don't reclaim or compact for AUX pages a PMU only prefers large"
	VARIANT=frag-old "$TOP/scripts/build/kernel.sh"
	disk=$OUTDIR/churn.img
	rm -f "$disk"
	truncate -s 3G "$disk"
	for run in $(seq "${BENCH_FRAG_RUNS:-3}"); do
		for v in default prefer-large prefer-large-old; do
			variant=frag kernel=series pmu=$v
			[ $v = prefer-large-old ] && variant=frag-old kernel=series-old pmu=prefer-large
			VARIANT=$variant GUEST_DISK=$disk KUNIT_FILTER=perf_aux_churn GUEST_LOG=bench-frag-$v-$run \
				GUEST_APPEND="bench.parts=frag bench.frag=$pmu page_owner=on ${GUEST_APPEND:-}" \
				"$TOP/scripts/run-guest.sh" bench
			logs+=("$kernel=$BUILD/logs/$ARCH/bench-frag-$v-$run.log")
		done
	done
	rm -f "$disk"
fi
OBJDUMP=${CROSS_COMPILE}objdump python3 "$TOP/scripts/bench/report.py" "$OUTDIR" "${logs[@]}"

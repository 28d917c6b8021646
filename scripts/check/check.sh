#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make check', in two phases. Phase 1, the series' own tests: for each arch
# in $ARCHES build the kernel, the selftests and the initramfs, run the
# KUnit suites with kunit.py, boot the guests (GUEST_RUNS), run the suites
# and turn the serial logs into results; the bench smoke test; then its
# own total line. Phase 2, the series judged from outside: upstream's
# suites on the base and the series, and the mutants (MUTANTS=0 leaves
# them out); then the total of both. PHASES=1 stops after phase 1, which
# alone fits a cold run on a 2-core machine in CI's 90 minutes
# (docs/results.md). A step that fails counts as a failed test of that
# arch (with its log named), and the next arch still runs.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

ARCHES=${ARCHES:-$SUPPORTED_ARCHES}
# The guest boots of each arch: check (the suites on the series kernel),
# 64k (the suites on the debug kernel, configs/debug.config, with 64 KiB
# pages: one boot proves both), distro (Debian's perf, trace-cmd and
# bpftrace in Debian's root on a disk, scripts/build/distro.sh).
# GUEST_RUNS, if set, is the runs of every arch.
declare -A RUNS=([arm64]="check 64k distro" [riscv64]=check [x86_64]="check distro")
GUEST_RUNS=${GUEST_RUNS:-}
# The arches whose C files are built after each patch, W=1 and sparse
# (scripts/check/each-patch.sh), and each mailed series alone on the base
# (scripts/check/each-series.sh): arm64, where every patch's generic code and
# the arm64 code are built; the x86 and riscv code is one call each, built
# at the top of the series for their guests.
PATCH_BUILD_ARCHES=arm64
PHASES=${PHASES:-1 2}
# The runs: variant, serial log's name and time limit (s). They take about
# 15 s (check), 1 min (64k) and 1 min (distro) here; the limits leave 5x or
# more for a slower host yet let a hung guest be reported, with its log,
# well inside CI's 90 minutes. The distro run boots with Debian's root as
# its disk and runs the suites named distro (configs/suites).
declare -A RUN=([check]="series check 900" [64k]="64k check-64k 1500"
	[distro]="series distro 1200")
results=()
rc=0
declare -A failed_build=()
# A step that left no results to parse counts as one failed test.
step_failed() {
	printf '{"arch": "%s", "totals": {"pass": 0, "fail": 1, "skip": 0}, "cases": [{"suite": "(harness)", "case": "%s", "state": "fail", "reason": "step failed"}]}\n' \
		"$1" "$2" >"$3"
	echo "  FAIL $1: step $2 failed (see above)"
	rc=1
	results+=("$3")
}
start=$SECONDS
# collect LABEL LOG JSON [--suites FILE]: a gate's KTAP (or a guest's
# serial log) into JSON, counted in the total line.
collect() {
	python3 "$TOP/scripts/check/ktap.py" parse "$@" || rc=1
	results+=("$3")
}
# What the per-patch builds of ARCH depend on besides the harness and the
# tools (verdict_key): every commit's tree, the configuration, sparse and
# the script that builds them.
patch_builds_key() {
	{
		git -C "$SRC" rev-parse 'base^{tree}'
		git -C "$SRC" log --format=%T base..HEAD
		cat "$OUT/.config"
		sparse --version
		cat "$TOP/scripts/check/each-patch.sh"
	} | verdict_key
}
# What each mailed series alone builds from: the trees of the series
# applied to the bare base (scripts/series/parts.sh), the configuration, the
# tools and the scripts. Empty if they do not apply (the gate says why).
series_builds_key() {
	(
		. "$TOP/scripts/series/parts.sh"
		mail_groups
		for i in "${!MAIL_NAME[@]}"; do
			h=$(mail_replay "${MAIL_FIRST[$i]}" "${MAIL_LAST[$i]}" 2>/dev/null) || exit 1
			echo "${MAIL_NAME[$i]} ${MAIL_FIRST[$i]} $(git -C "$SRC" rev-parse "$h^{tree}")"
		done
		cat "$OUT/.config" "$TOP/scripts/series/parts.sh" "$TOP/scripts/check/each-series.sh"
	) | verdict_key
}
# What kunit.py's verdict depends on: the tree (its .kunitconfig files
# among it) and the script that runs it.
kunit_key() {
	{
		git -C "$SRC" rev-parse 'HEAD^{tree}'
		cat "$TOP/scripts/check/kunit.sh"
	} | verdict_key
}
# cached_gate NAME KEY WHAT LABEL KTAP CMD...: the verdict of gate NAME
# where KEY is the one it passed with (WHAT being what stayed the same),
# else CMD run with progress lines, its KTAP kept for next time if it
# passes.
cached_gate() {
	local name=$1 key=$2 what=$3 label=$4 ktap=$5
	shift 5
	if verdict_reuse "$name" "$key" "$what" >"$ktap"; then
		return 0
	elif with_progress "$label" "$ktap" "$@"; then
		verdict_keep "$name" "$key" "$ktap"
	else
		verdict_drop "$name"
		rc=1
	fi
}
# Each gate's header, and what the one before it cost (printed at the end).
gate_times=()
gate_name=
gate() {
	[ -n "$gate_name" ] && gate_times+=("$gate_name: $(elapsed "$gate_t0")")
	gate_name=$1
	gate_t0=$SECONDS
	[ -n "$1" ] && printf '\n== %s\n' "$1"
	return 0
}
gate tree
"$TOP/scripts/series/tree.sh" || exit 1

# Patch hygiene first: checkpatch --strict on every patch.
mkdir -p "$BUILD/logs"
gate lint
"$TOP/scripts/check/lint.sh" >"$BUILD/logs/lint.log" 2>&1 || rc=1
collect lint "$BUILD/logs/lint.log" "$BUILD/logs/lint.json"
for ARCH in $ARCHES; do
	(check_arch) || exit 1
	check_arch
	mkdir -p "$BUILD/logs/$ARCH"
	gate "$ARCH: kernel, perf, selftests, initramfs"
	built=
	build_guest || built=$FAILED_STEP
	failed_build[$ARCH]=$built
	# Every patch builds; W=1 and sparse find nothing new (on the kernel
	# just built, so it costs only what the patches change).
	if [ -z "$built" ] && [[ " $PATCH_BUILD_ARCHES " == *" $ARCH "* ]]; then
		gate "$ARCH: builds after each patch, W=1, sparse"
		pb=$BUILD/logs/$ARCH/patch-builds
		cached_gate "patch-builds-$ARCH" "$(patch_builds_key)" "commits, configuration and tools" \
			"$ARCH patch builds" "$pb.ktap" "$TOP/scripts/check/each-patch.sh"
		collect "$ARCH builds" "$pb.ktap" "$pb.json"
		gate "$ARCH: each mailed series alone on the base"
		sb=$BUILD/logs/$ARCH/series-builds
		cached_gate "series-builds-$ARCH" "$(series_builds_key)" "mailed series, configuration and tools" \
			"$ARCH series builds" "$sb.ktap" "$TOP/scripts/check/each-series.sh"
		collect "$ARCH series builds" "$sb.ktap" "$sb.json"
	fi
	runs=${GUEST_RUNS:-${RUNS[$ARCH]:-check}}
	# The KUnit suites of the series as reviewers run them: kunit.py with
	# the series' .kunitconfig files, on a kernel of its own
	# (scripts/check/kunit.sh), on UPSTREAM_ARCHES (lib.sh) where the arch's
	# series kernel boots for the suites (run 'check'); that boot leaves
	# KUnit to this.
	if [[ " $UPSTREAM_ARCHES " == *" $ARCH "* && " $runs " == *" check "* ]]; then
		gate "$ARCH: KUnit suites, kunit.py"
		ku=$BUILD/logs/$ARCH/kunit
		cached_gate "kunit-$ARCH" "$(kunit_key)" "tree, .kunitconfig files and tools" \
			"$ARCH kunit" "$ku.ktap" "$TOP/scripts/check/kunit.sh"
		collect "$ARCH kunit" "$ku.ktap" "$ku.json" \
			--suites "$TOP/configs/suites"
	fi
	for run in $runs; do
		[ -n "${RUN[$run]:-}" ] || die "unknown run '$run' in GUEST_RUNS; supported: ${!RUN[*]}"
		read -r variant log timeout <<<"${RUN[$run]}"
		label=$ARCH
		if [ "$run" = check ]; then gate "$ARCH guest"; else label+=" $run" && gate "$label"; fi
		# For this boot only: the mutants' boots must not inherit them.
		disk='' suites='' append=${GUEST_APPEND:-}
		[ "$run" = distro ] && disk=$(distro_disk) suites=distro append+=" $DISTRO_APPEND"
		json=$BUILD/logs/$ARCH/results-$run.json
		step=$built
		if [ -z "$step" ] && [ "$variant" != series ] &&
			! VARIANT=$variant "$TOP/scripts/build/kernel.sh"; then
			step=build/kernel-$variant
		fi
		[ -z "$step" ] && [ "$run" = distro ] && ! "$TOP/scripts/build/distro.sh" && step=build/distro
		[ -z "$step" ] && { VARIANT=$variant TIMEOUT=$timeout GUEST_DISK=$disk GUEST_SUITES=$suites \
			GUEST_APPEND=$append boot_collect "$label" "$log" "$json" || rc=1; }
		# A guest that booted has a log to read, even if it failed.
		if [ -f "$json" ]; then results+=("$json"); else step_failed "$label" "${step:-run-guest}" "$json"; fi
	done
done
# The benchmark, in miniature (arm64 only: it measures the arm64 series).
case " $ARCHES " in *" arm64 "*)
	gate "bench smoke"
	"$TOP/scripts/bench/smoke.sh" >"$BUILD/logs/bench-smoke.ktap" 2>&1 || rc=1
	collect bench "$BUILD/logs/bench-smoke.ktap" "$BUILD/logs/bench-smoke.json"
	;;
esac
# Phase 1's verdict, complete on its own.
phase1=$(python3 "$TOP/scripts/check/ktap.py" total "${results[@]}") || rc=1
printf '\nphase 1 of 2, the tests of the series: %s (%ds)\n' "$phase1" $((SECONDS - start))
# Phase 2 (PHASES=1 leaves it out).
[[ " $PHASES " == *" 2 "* ]] || { ARCHES=; MUTANTS=0; }
# The suites upstream's CI already runs (perf test, ftracetest, the
# perf_events and RV kselftests) on the base and on the series, side by
# side (scripts/check/upstream.sh): on arm64, and on x86_64, the arch that
# already has the tracepoints and the deferred callchains; perf's
# page-faults counts alone on the other arches. Not when GUEST_RUNS picks
# boots.
for ARCH in $ARCHES; do
	[ -z "$GUEST_RUNS" ] || continue
	check_arch
	gate "$ARCH: upstream suites, base and series"
	up=$BUILD/logs/$ARCH/upstream
	rm -f "$up.ktap"
	built=${failed_build[$ARCH]}
	if [ -z "$built" ]; then "$TOP/scripts/check/upstream.sh" || rc=1; fi
	if [ -f "$up.ktap" ]; then
		collect "$ARCH upstream" "$up.ktap" "$up.json"
	else
		step_failed "$ARCH upstream" "${built:-upstream.sh}" "$up.json"
	fi
done
# The tests fail without what they test (scripts/check/mutants.sh): after the
# check boots, each mutant costs an incremental build and a boot.
if [ "${MUTANTS:-1}" = 1 ] && [[ " ${GUEST_RUNS:-check} " = *" check "* ]]; then
	gate mutants
	msg LOG "$BUILD/logs/mutants.out"
	rm -f "$BUILD/logs/mutants.ktap"
	with_progress mutants "$BUILD/logs/mutants.out" "$TOP/scripts/check/mutants.sh" || rc=1
	if [ -f "$BUILD/logs/mutants.ktap" ]; then
		collect mutants "$BUILD/logs/mutants.ktap" "$BUILD/logs/mutants.json"
	else
		tail -n 5 "$BUILD/logs/mutants.out"
		step_failed mutants mutants.sh "$BUILD/logs/mutants.json"
	fi
fi
gate ""
printf '\n'
for t in "${gate_times[@]}"; do msg TIME "$t"; done
printf 'base: %s; %s; %ds\n' "$(cut -d' ' -f1-3 "$BUILD/base/BASE")" \
	"$(git -C "$SRC" log --oneline base..HEAD | wc -l) patches" $((SECONDS - start))
total=$(python3 "$TOP/scripts/check/ktap.py" total "${results[@]}") || rc=1
# CI deletes its clone: the logs of the last run that failed stay beside
# the verdicts, so that a failure can be read afterwards.
if [ $rc != 0 ]; then
	kept=$CACHE_ROOT/failed-run
	rm -rf "$kept" && mkdir -p "$kept" && cp -a "$BUILD/logs/." "$kept/" &&
		msg LOGS "this failed run's logs are kept in $kept"
fi
echo "$total"
exit $rc

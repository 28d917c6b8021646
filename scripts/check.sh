#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make check': for each arch in $ARCHES build the kernel, the selftests and
# the initramfs, boot the guest, run the suites and turn the serial log into
# results; then print one total line. A step that fails counts as a failed
# test of that arch (with its log named), and the next arch still runs.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

ARCHES=${ARCHES:-arm64 x86_64}
results=()
rc=0
start=$SECONDS
"$TOP/scripts/tree.sh" || exit 1

# Patch hygiene first: checkpatch --strict on every patch.
mkdir -p "$BUILD/logs"
printf '\n== lint\n'
"$TOP/scripts/lint.sh" >"$BUILD/logs/lint.log" 2>&1 || rc=1
python3 "$TOP/scripts/ktap.py" parse lint "$BUILD/logs/lint.log" "$BUILD/logs/lint.json" || rc=1
results+=("$BUILD/logs/lint.json")
for ARCH in $ARCHES; do
	(check_arch) || exit 1
	check_arch
	json=$BUILD/logs/$ARCH/results.json
	mkdir -p "$(dirname "$json")"
	rm -f "$json"
	printf '\n== %s\n' "$ARCH"
	# A log from an earlier run must never be read as this run's.
	rm -f "$BUILD/logs/$ARCH/check.log"
	step=
	build_guest || step=$FAILED_STEP
	if [ -z "$step" ] && ! "$TOP/scripts/run-guest.sh" check; then
		step=run-guest
	fi
	# A guest that booted has a log to read, even if it failed.
	if [ -f "$BUILD/logs/$ARCH/check.log" ]; then
		python3 "$TOP/scripts/ktap.py" parse "$ARCH" "$BUILD/logs/$ARCH/check.log" "$json" \
			--required "$TOP/configs/required-tests" || rc=1
	else
		printf '{"arch": "%s", "totals": {"pass": 0, "fail": 1, "skip": 0}, "cases": [{"suite": "(harness)", "case": "%s", "state": "fail", "reason": "step failed"}]}\n' \
			"$ARCH" "$step" >"$json"
		echo "  FAIL $ARCH: step $step failed (see above)"
		rc=1
	fi
	results+=("$json")
done
# The benchmark, in miniature (arm64 only: it measures the arm64 series).
case " $ARCHES " in *" arm64 "*)
	printf '\n== bench smoke\n'
	"$TOP/scripts/bench-smoke.sh" >"$BUILD/logs/bench-smoke.ktap" 2>&1 || rc=1
	python3 "$TOP/scripts/ktap.py" parse bench "$BUILD/logs/bench-smoke.ktap" \
		"$BUILD/logs/bench-smoke.json" || rc=1
	results+=("$BUILD/logs/bench-smoke.json")
	;;
esac
printf '\nbase: %s; %s; %ds\n' "$(cut -d' ' -f1-3 "$BUILD/base/BASE")" \
	"$(git -C "$SRC" log --oneline base..HEAD | wc -l) patches" $((SECONDS - start))
python3 "$TOP/scripts/ktap.py" total "${results[@]}" || rc=1
exit $rc

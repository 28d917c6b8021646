#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A tiny 'make bench' inside 'make check', so the benchmark cannot rot:
# one run of the fault-path and system-call parts under -icount, then the
# report, then a check that it produced numbers. Prints KTAP.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
ARCH=arm64
check_arch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ktap_begin bench-smoke 2
log=$BUILD/logs/$ARCH/bench-smoke.log
if GUEST_LOG=bench-smoke GUEST_APPEND="bench.runs=1 bench.parts=fault,syscall" ICOUNT=1 \
	TIMEOUT=300 "$TOP/scripts/run-guest.sh" bench >/dev/null 2>&1 &&
	[ "$(grep -c '^BENCH part=fault .*per_fault=' "$log")" -ge 10 ] &&
	grep -q '^BENCH part=syscall .*kernel_instructions=[0-9]' "$log" &&
	grep -q '^BENCH part=task_struct bytes=[0-9]' "$log"; then
	st=0
else
	st=1
	echo "# no or too few BENCH lines in $log"
fi
ktap_result $st 1 "bench: guest fault-path and system-call measurements under -icount"
if python3 "$TOP/scripts/bench/report.py" "$tmp" "base=$log" "series=$log" >"$tmp/report" 2>&1 &&
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); r = j["fault"]; sys.exit(not (len(r) >= 10 and all(x["median"] > 100 for x in r) and all(x["per_call"] > 10 for x in j["syscall"]) and j["syscall"]))' "$tmp/results.json"; then
	st=0
else
	st=1
	sed 's/^/# /' "$tmp/report"
fi
ktap_result $st 2 "bench: report tables and results.json"
ktap_end

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf record --call-graph fp,defer: stitched user callchains
#
# With --call-graph fp,defer the kernel walks the user stack on the way
# back to user space and writes it once, as a PERF_RECORD_CALLCHAIN_DEFERRED
# record, for every sample taken since the task entered the kernel; perf
# script puts it back into each of those samples. The leafloop workload
# spins in leaf(), called by parent(), called by leafloop(): the samples
# taken in leaf() must show that whole path, as --call-graph fp shows it
# (on arm64 perf finds parent() from the sampled link register, leaf()
# having no frame record, for deferred callchains too).

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_has_symbol.sh
. "${shelldir}"/lib/perf_has_symbol.sh

skip_test_missing_symbol leafloop

if [ "$(uname -m)" = aarch64 ] &&
   perf version --build-options | grep HAVE_DWARF_UNWIND_SUPPORT | grep -q OFF; then
	echo "Skip: no DWARF unwind support, which finds leaf()'s caller on arm64"
	exit 2
fi

# Kernels whose architecture has no user stack unwinder take the user
# callchain in place, as with --call-graph fp: then only the chains are
# checked.
deferred=1
if ! grep -qw unwind_deferred_request /proc/kallsyms 2>/dev/null; then
	echo "This kernel has no deferred user unwinder: checking the callchains only"
	deferred=0
fi

err=0
perfdata=$(mktemp /tmp/__perf_test.perf.data.XXXXX)
script=$(mktemp /tmp/__perf_test.script.XXXXX)

cleanup() {
	rm -f "${perfdata}" "${script}"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

if ! perf record -o "${perfdata}" -e task-clock:u --call-graph fp,defer \
		--user-callchains -- perf test -w leafloop 1; then
	echo "perf record --call-graph fp,defer failed"
	cleanup
	exit 1
fi

if [ "${deferred}" = 1 ]; then
	n=$(perf report -i "${perfdata}" --stats 2>/dev/null |
	    awk '$1 == "CALLCHAIN_DEFERRED" { print $3; exit }')
	if [ "${n:-0}" -gt 0 ] 2>/dev/null; then
		echo "${n} deferred callchain records"
	else
		echo "FAIL: no deferred callchain records"
		perf report -i "${perfdata}" --stats
		err=1
	fi
fi

if ! perf script -i "${perfdata}" -F comm,ip,sym > "${script}"; then
	echo "FAIL: perf script failed"
	err=1
fi

# The samples in leaf(), and those of them whose next frames are parent()
# and leafloop(). A sample in leaf()'s first instructions may lack
# parent() (x86_64's leaf() has a frame of its own, set up only there):
# nine in ten must have it.
read -r total good < <(awk '
	NF == 0 { n = 0; next }
	/^[^ \t]/ { n = 0; next }
	{ n++; s[n] = $2 }
	n == 1 && s[1] == "leaf" { total++ }
	n == 3 && s[1] == "leaf" && s[2] == "parent" && s[3] == "leafloop" { good++ }
	END { print total + 0, good + 0 }' "${script}")
if [ "${total}" -ge 10 ] && [ $((good * 10)) -ge $((total * 9)) ]; then
	echo "${good} of ${total} samples in leaf() show parent() and leafloop()"
else
	echo "FAIL: ${good} of ${total} samples in leaf() show parent() and leafloop()"
	grep -m 1 -A 6 -E '^[[:space:]]+[[:xdigit:]]+ leaf$' "${script}"
	err=1
fi

cleanup
exit ${err}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # read by the scripts that source it
# Shared helpers for the harness scripts: paths, messages, ARCH handling,
# the suites, the verdicts, KTAP, progress; the building helpers come
# from build/lib.sh. Sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$TOP/build
SRC=$BUILD/linux
# What outlives a clone on this machine: the compiler cache, the kept
# builds and verdicts, Debian's packages and the last failed run's logs.
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/arm64-trace-series

msg()  { printf '  %-8s %s\n' "$1" "$2"; }
warn() { printf '\n*** WARNING: %s\n\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# suites ARCH: configs/suites' lines for ARCH's guests, tab-separated:
# SUITE, all (every run) or named (a run of its own, which names it), RUN.
suites() {
	awk -v arch="$1" -v arches=" $SUPPORTED_ARCHES " -v OFS='\t' '
	/^[#!]/ || NF < 4 { next }
	{ run = $0; for (i = 1; i <= 3; i++) sub(/^[ \t]*[^ \t]+[ \t]+/, "", run) }
	$2 == "*" { print $1, "all", run; next }
	# ON: ARCH, ARCH-RUN (that run of ARCH) or RUN (that run of any arch).
	{ n = split($2, on, ","); for (i = 1; i <= n; i++) {
		if (on[i] == arch) { print $1, "all", run; next }
		w = on[i]; sub(/-.*/, "", w)
		if (w == arch || (w == on[i] && !index(arches, " " w " "))) {
			print $1, "named", run; next } } }' "$TOP/configs/suites"
}
# The kselftest collections built into the guests: those of configs/suites'
# kselftests, plus ftrace (ftracetest) and verification (the RV monitor's
# .tc, which ftracetest runs).
KSELFTEST_TARGETS=$(awk '!/^#/ && $4 == "kselftest" { sub(/:.*/, "", $1); print $1 }' \
	"$TOP/configs/suites" | sort -u | tr '\n' ' ')"ftrace verification"

# The architectures the harness knows: one file each in scripts/arch/,
# which says everything arch-specific (compiler, images, QEMU, packages).
SUPPORTED_ARCHES=$(cd "$TOP/scripts/arch" && for f in *.sh; do printf '%s ' "${f%.sh}"; done)
SUPPORTED_ARCHES=${SUPPORTED_ARCHES% }

# The arches judged by upstream's own runners in 'make check': kunit.py
# runs their KUnit suites (scripts/check/kunit.sh), so their series kernel's
# boot does not; and the suites upstream's CI runs compare the base and
# the series there (scripts/check/upstream.sh). Another arch's guest runs the
# KUnit suites at boot.
UPSTREAM_ARCHES="arm64 x86_64"

check_arch() {
	case " $SUPPORTED_ARCHES " in
	*" ${ARCH:-} "*) ;;
	*) die "unknown ARCH='${ARCH:-}'; supported: $SUPPORTED_ARCHES (e.g. make check ARCHES=arm64)" ;;
	esac
	# What one arch file sets and another may not.
	unset CROSS_COMPILE_COMPAT QEMU_DISK DEB_SUITE NO_PERF
	# shellcheck source=arch/arm64.sh
	. "$TOP/scripts/arch/$ARCH.sh"
	OUT=$BUILD/out/$ARCH
	# A tree other than the series' is build/V/linux, built in
	# build/V/out/ARCH: the same paths relative to the output directory
	# as the series' own, so that the compiler cache (CCACHE_BASEDIR)
	# hands it every object it shares with the series.
	# VARIANT=base: the pinned base without the series (a worktree of
	# build/linux at tag 'base'), for side-by-side measurements.
	if [ "${VARIANT:-series}" = base ]; then
		SRC=$BUILD/base/linux
		OUT=$BUILD/base/out/$ARCH
		if [ ! -d "$SRC" ]; then
			[ -d "$BUILD/linux/.git" ] || die "no assembled tree at $BUILD/linux; run 'make tree' first"
			git -C "$BUILD/linux" worktree add -q --detach "$SRC" base
		fi
	fi
	case "${VARIANT:-series}" in
	series|base) ;;
	# VARIANT=64k: the series with configs/debug.config on top (lockdep,
	# KASAN, UBSAN, KFENCE, kmemleak, ...) and 64 KiB pages, where the
	# arch has them (configs/ARCH-64k.config).
	64k)
		[ -f "$TOP/configs/$ARCH-64k.config" ] ||
			die "VARIANT=64k: $ARCH has no 64 KiB-page configuration (configs/$ARCH-64k.config)"
		OUT=$BUILD/out/$ARCH-64k
		CONFIG_EXTRA="debug $ARCH-64k"
		export CONFIG_EXTRA
		;;
	# VARIANT=frag: the series with make bench's AUX suite and
	# configs/ARCH-frag.config; frag-old: the same without the series'
	# AUX allocation policy (the trees bench.sh prepares).
	frag|frag-old)
		[ -f "$TOP/configs/$ARCH-frag.config" ] ||
			die "VARIANT=$VARIANT: $ARCH has no configs/$ARCH-frag.config"
		OUT=$BUILD/$VARIANT/out/$ARCH
		SRC=$BUILD/$VARIANT/linux
		CONFIG_EXTRA=$ARCH-frag
		export CONFIG_EXTRA
		;;
	*) die "unknown VARIANT='$VARIANT'; supported: series base 64k frag frag-old" ;;
	esac
	# The name of the kernel and perf kept for another clone (build_keep).
	KEPT=$ARCH
	[ "${VARIANT:-series}" = series ] || KEPT=$ARCH-$VARIANT
	export ARCH SRC CROSS_COMPILE KARCH DEBARCH IMAGE QEMU OUT
}

need_root() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (it runs apt-get); run it as root or install the packages listed in scripts/build/deps.sh by hand"
}

# The QEMU command line every ARCH guest starts with, short of memory,
# kernel and serial port. -nodefaults: no NIC, VGA, floppy or CD-ROM, so
# no option ROM from a package the harness does not install (the guests
# need no network). run-guest.sh boots with it and deps.sh tries it first.
qemu_args() {
	QEMU_ARGS=(-nodefaults -nic none -display none -no-reboot "${QEMU_MACHINE[@]}")
}

# The verdicts of gates whose inputs are all known (per-patch builds,
# mutants) are kept beside the compiler cache, under a hash of those
# inputs: a rerun with the same key proves nothing the passing run did
# not, so it reuses the verdict (CACHE=0 runs the gate anyway).
VERDICTS=$CACHE_ROOT/verdicts
# The key: stdin (what the gate itself depends on, its own script among
# it), the harness that builds and boots (configs/, the build and guest
# scripts, the result parser; not the benchmark, lint or export scripts)
# and the compiler and QEMU of the current ARCH.
verdict_key() {
	{
		cat
		git -C "$TOP" ls-files -z configs ':!configs/mutants' scripts/arch scripts/guest scripts/lib.sh \
			scripts/build scripts/run-guest.sh scripts/check/ktap.py |
			(cd "$TOP" && xargs -0 sha256sum)
		"${CROSS_COMPILE}gcc" --version | head -n 1
		"$QEMU" --version | head -n 1
	} | sha256sum | cut -d' ' -f1
}

# verdict_reuse NAME KEY WHAT: if gate NAME passed with KEY (and
# CACHE is not 0), say so, WHAT being what stayed the same, and
# print its KTAP. verdict_keep NAME KEY KTAP stores a pass, verdict_drop
# NAME forgets one.
verdict_reuse() {
	local v=$VERDICTS/$1
	[ "${CACHE:-1}" = 1 ] && [ "$(cat "$v.key" 2>/dev/null)" = "$2" ] || return 1
	msg SAME "$3 as the passing run of $(date -r "$v.key" '+%F %T'): its verdict stands" >&2
	cat "$v.ktap"
}
verdict_keep() {
	mkdir -p "$VERDICTS"
	cp "$3" "$VERDICTS/$1.ktap"
	echo "$2" >"$VERDICTS/$1.key"
}
verdict_drop() { rm -f "$VERDICTS/$1.key"; }

# KTAP from the host gates, read by scripts/check/ktap.py like a guest's:
# ktap_begin NAME COUNT, one ktap_result per test, ktap_end [RC].
ktap_begin() {
	printf 'HARNESS: begin %s\nKTAP version 1\n1..%d\n' "$1" "$2"
}
# ktap_result STATUS N DESCRIPTION: "ok" where STATUS is 0, "not ok" else.
ktap_result() {
	if [ "$1" = 0 ]; then echo "ok $2 $3"; else echo "not ok $2 $3"; fi
}
ktap_end() {
	echo "HARNESS: end${1:+ rc=$1}"
}
# Run "$@" (output to LOG) and print a line every minute
# while it runs: elapsed time, and how far it got: for a kbuild log the
# objects compiled (of how many the last build of that tree compiled, if
# known), for a KTAP log its last result. Returns the command's status.
with_progress() {
	local label=$1 log=$2 pid rc=0 t0=$SECONDS
	shift 2
	"$@" >"$log" 2>&1 &
	pid=$!
	while ! wait_for "$pid" 60; do
		msg ... "$label: $(elapsed "$t0")$(progress_of "$log")"
	done
	wait "$pid" || rc=$?
	local n
	n=$(objects_in "$log")
	# The most a build of this tree compiled: the total, once it was cold.
	[ "$rc" = 0 ] && [ "$n" -gt "$(cat "$log.count" 2>/dev/null || echo 0)" ] &&
		echo "$n" >"$log.count"
	msg ... "$label: $([ "$rc" = 0 ] && echo "done" || echo "failed") in $(elapsed "$t0")"
	return "$rc"
}
# Objects a kbuild log says were built (its "  CC  foo.o" lines).
objects_in() {
	local n
	n=$(grep -c -E '^  (CC|AS|LD|AR) ' "$1" 2>/dev/null) || true
	echo "${n:-0}"
}
progress_of() {
	local n total="" last
	n=$(objects_in "$1")
	if [ "$n" -gt 0 ]; then
		[ -f "$1.count" ] && total=/$(cat "$1.count")
		echo ", $n$total objects"
		return 0
	fi
	last=$(grep -E '^(not )?ok ' "$1" 2>/dev/null | tail -n 1 | cut -c1-70)
	[ -z "$last" ] || echo ", last: $last"
}
# True once PID has exited, false if it still runs after SECS seconds.
wait_for() {
	local i
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
	done
	! kill -0 "$1" 2>/dev/null
}
elapsed() { local d=$((SECONDS - $1)); printf '%dm%02ds' $((d / 60)) $((d % 60)); }

# boot_collect LABEL NAME JSON: boot ARCH's guest in check mode
# (run-guest.sh, with the caller's VARIANT, TIMEOUT and GUEST_* settings),
# its serial log in build/logs/$ARCH/NAME.log, and turn the log into JSON
# by configs/suites (ktap.py parse, which prints the table). Fails if the
# guest or a test failed; JSON is missing only if no log came.
boot_collect() {
	local log=$BUILD/logs/$ARCH/$2.log rc=0
	rm -f "$log" "$3"	# never read an earlier run's log as this one's
	GUEST_LOG=$2 "$TOP/scripts/run-guest.sh" check || rc=1
	[ -f "$log" ] || return 1
	python3 "$TOP/scripts/check/ktap.py" parse "$1" "$log" "$3" --suites "$TOP/configs/suites" || rc=1
	return $rc
}

# The distro run's disk, Debian's root for ARCH (scripts/build/distro.sh
# makes it), and what a boot with it adds to the kernel command line: one
# CPU, for the reason docs/distro.md gives.
distro_disk() { echo "$BUILD/distro/$DEBARCH/root.ext4"; }
DISTRO_APPEND="nr_cpus=1"

# Building: Kbuild, the kept builds, the tree's commits, Debian's apt.
# shellcheck source=scripts/build/lib.sh
. "$TOP/scripts/build/lib.sh"

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # read by the scripts that source it
# Shared helpers for the harness scripts: paths, ARCH handling, messages.
# Sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$TOP/build
SRC=$BUILD/linux

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
# runs their KUnit suites (scripts/kunit.sh), so their series kernel's
# boot does not; and the suites upstream's CI runs compare the base and
# the series there (scripts/upstream.sh). Another arch's guest runs the
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
	[ "$(id -u)" = 0 ] || die "$1 needs root (it runs apt-get); run it as root or install the packages listed in scripts/deps.sh by hand"
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
VERDICTS=${XDG_CACHE_HOME:-$HOME/.cache}/arm64-trace-series/verdicts
# The key: stdin (what the gate itself depends on, its own script among
# it), the harness that builds and boots (configs/, the build and guest
# scripts, the result parser; not the benchmark, lint or export scripts)
# and the compiler and QEMU of the current ARCH.
verdict_key() {
	{
		cat
		git -C "$TOP" ls-files -z configs ':!configs/mutants' scripts/arch scripts/guest scripts/lib.sh \
			'scripts/build-*.sh' scripts/run-guest.sh scripts/ktap.py |
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

# KTAP from the host gates, read by scripts/ktap.py like a guest's:
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

# debian_apt "SUITE..." ARGS...: apt-get ARGS for $DEBARCH packages of those
# Debian suites, with sources, lists, cache and an empty dpkg status of its
# own under build/apt/ (so that 'install --download-only' resolves every
# dependency), the host's configuration and keyring otherwise: the host's
# apt is left as it was.
debian_apt() {
	local suites=$1 s
	shift
	local d=$BUILD/apt/${suites// /+}-$DEBARCH
	local opts=(-o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts="$d/parts"
		    -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache"
		    -o Dir::State::status="$d/status"
		    -o APT::Architecture="$DEBARCH" -o APT::Architectures="$DEBARCH")
	mkdir -p "$d"
	[ -f "$d/status" ] || : >"$d/status"
	if [ ! -f "$d/sources.list" ]; then
		mkdir -p "$d/parts" "$d/lists/partial" "$d/cache/archives/partial"
		for s in $suites; do
			echo "deb http://deb.debian.org/debian $s main"
		done >"$d/sources.list.new"
		mv "$d/sources.list.new" "$d/sources.list"
		apt-get "${opts[@]}" update -qq >"$d/update.log" 2>&1 || {
			rm -f "$d/sources.list"
			die "apt-get update for Debian $suites ($DEBARCH) failed; see $d/update.log"
		}
	fi
	apt-get "${opts[@]}" "$@"
}

# One big build at a time on this machine (kernel and perf builds each use
# every core): take the build lock, held until the calling script exits.
build_lock() {
	mkdir -p "$BUILD"
	exec 9>"$BUILD/.build.lock"
	flock 9
}

# The distro run's disk, Debian's root for ARCH (scripts/build-distro.sh
# makes it), and what a boot with it adds to the kernel command line: one
# CPU, for the reason docs/distro.md gives.
distro_disk() { echo "$BUILD/distro/$DEBARCH/root.ext4"; }
DISTRO_APPEND="nr_cpus=1"

# Everything a guest of ARCH boots: packages, kernel, selftests, perf and
# the initramfs, in order. On failure FAILED_STEP names the step.
build_guest() {
	local s
	for s in deps build-kernel build-selftests build-perf build-rootfs; do
		"$TOP/scripts/$s.sh" || { FAILED_STEP=$s; return 1; }
	done
}

# make in the kernel tree for ARCH, out of tree in $OUT, with ccache and a
# reproducible build stamp. kbuild_env first, once.
kbuild_env() {
	# The compiler cache lives outside the clone, so that a second clone on
	# the same machine (CI's) starts warm. CCACHE_DIR overrides it.
	export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/arm64-trace-series/ccache}
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}
	# Paths below the clone are hashed relative to it, and not the working
	# directory: the same object compiled in another clone is a hit.
	export CCACHE_BASEDIR=$TOP CCACHE_NOHASHDIR=1
	export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-2026-01-01}
	export KBUILD_BUILD_USER=harness KBUILD_BUILD_HOST=harness
	KCC=${CROSS_COMPILE}gcc
	command -v "$KCC" >/dev/null || die "$KCC not found; run 'make deps ARCH=$ARCH' (as root)"
	command -v ccache >/dev/null && KCC="ccache $KCC"
	return 0
}
# KMAKE_QUIET= (empty) lets kbuild print a line per object, which
# with_progress counts. A dependency file from the compiler cache can name
# a header the tree does not have (seen once, 2026-12-04, for an object a
# mutant's revert changed): fixdep stops on it and leaves it behind. Then
# kmake runs make once more without taking results from the cache, which
# replaces them.
kmake() {
	local rc=0
	kmake_once "$@" || rc=$?
	if [ "$rc" != 0 ] && stale_depfile; then
		echo "kmake: a dependency file names a file that is not there; again without compiler-cache hits" >&2
		rc=0
		CCACHE_RECACHE=1 kmake_once "$@" || rc=$?
	fi
	return "$rc"
}
# Whether a dependency file of an object that fixdep left in $OUT (it
# removes those it has read) names a file that does not exist. perf's and
# the selftests' builds below $OUT keep theirs.
stale_depfile() {
	find "$OUT" \( -path "$OUT/perf" -o -path "$OUT/kselftest" \) -prune -o \
		-name '.*.o.d' -type f -print0 2>/dev/null | xargs -0 -r cat |
		tr -s ' \\\t' '\n' | grep -v -e ':$' -e '^$' | sort -u |
		(cd "$OUT" && while read -r f; do [ -e "$f" ] || exit 0; done; exit 1)
}
kmake_once() {
	# shellcheck disable=SC2086 # no option at all where KMAKE_QUIET is empty
	make ${KMAKE_QUIET--s} -C "$SRC" O="$OUT" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" \
		CC="$KCC" -j"$(nproc)" "$@"
}

# Builds whose inputs are all known are kept beside the compiler cache as
# well, the last one of each output directory, named by a hash of those
# inputs: the kernel's image and UAPI headers (scripts/build-kernel.sh) and
# perf (scripts/build-perf.sh). Another clone on this machine (CI's fresh
# one) takes them into an output directory that has no build yet, instead
# of compiling and linking the same tree again. CACHE=0 always
# builds; BUILD_KEEP=0 keeps nothing (the mutants' builds).
BUILDS=${XDG_CACHE_HOME:-$HOME/.cache}/arm64-trace-series/builds
# build_take NAME KEY DIR: unpack into DIR the files NAME kept under KEY.
build_take() {
	[ "${CACHE:-1}" = 1 ] && [ -n "$2" ] && [ -f "$BUILDS/$1.$2.tar" ] &&
		tar -C "$3" -xf "$BUILDS/$1.$2.tar"
}
# build_keep NAME KEY DIR FILE...: keep those files of DIR as NAME's under
# KEY, in place of what NAME kept before. A clone that reads the old one
# meanwhile still reads all of it.
build_keep() {
	local name=$1 key=$2 dir=$3
	shift 3
	[ "${BUILD_KEEP:-1}" = 1 ] && [ -n "$key" ] && [ ! -f "$BUILDS/$name.$key.tar" ] || return 0
	mkdir -p "$BUILDS"
	tar -C "$dir" -cf "$BUILDS/.$name.$$.tar" "$@" &&
		mv "$BUILDS/.$name.$$.tar" "$BUILDS/$name.$key.tar" &&
		find "$BUILDS" -maxdepth 1 -name "$name.*.tar" ! -name "$name.$key.tar" -delete
}

# The commit of the series (base..HEAD of the assembled tree) with subject
# $1; fails unless exactly one has it.
series_commit() {
	local c
	c=$(git -C "$BUILD/linux" log --format='%H%x09%s' base..HEAD |
		awk -F'\t' -v s="$1" '$2 == s { print $1 }')
	[ -n "$c" ] && [ "$(echo "$c" | wc -l)" = 1 ] && echo "$c"
}

# revert_patch DIR SUBJECT: take the series' patch SUBJECT out of the
# tree checked out in DIR (a commit on top); says why it cannot.
revert_patch() {
	local c
	c=$(series_commit "$2") || { echo "no single patch '$2' in the series"; return 1; }
	git -C "$1" revert --no-edit "$c" >/dev/null 2>&1 || {
		git -C "$1" revert --abort >/dev/null 2>&1
		echo "'$2' does not revert cleanly in $1"
		return 1
	}
}

# For the scripts that build other states of the tree in $OUT
# (patch-builds.sh, series-builds.sh): tree_builds NAME checks that the
# series is built and committed, takes the build lock, sets branch (the
# series' branch) and logs ($BUILD/logs/$ARCH/NAME, which keeps the
# series' .config), and puts the tree and the kernel back at the series,
# built, when the script exits, whatever happens.
tree_builds() {
	[ -f "$OUT/.config" ] || die "no $OUT/.config; run 'make kernel ARCH=$ARCH' first"
	[ -z "$(git -C "$SRC" status --porcelain --untracked-files=no)" ] ||
		die "$SRC has uncommitted changes; commit or export them first"
	build_lock
	branch=$(git -C "$SRC" symbolic-ref -q --short HEAD) || die "$SRC is not on a branch"
	kbuild_env
	logs=$BUILD/logs/$ARCH/$1
	mkdir -p "$logs"
	cp "$OUT/.config" "$logs/series.config"
	rm -f "$logs/kconfig.state"
	trap tree_builds_restore EXIT
}
tree_builds_restore() {
	git -C "$SRC" checkout -q "$branch"
	rm -f "$logs/kconfig.state"
	cp "$logs/series.config" "$OUT/.config"
	kmake >"$logs/final.log" 2>&1
}
# built_dirs FROM TO: the directories ("dir/") of the C files that differ
# between the two commits, outside tools/, that the kernel in $OUT builds.
built_dirs() {
	git -C "$SRC" diff --name-only "$1" "$2" -- '*.c' | grep -v '^tools/' |
		xargs -r -n1 dirname | sort -u | while read -r d; do
			compgen -G "$OUT/$d/*.o" >/dev/null && echo "$d/"
		done
	return 0
}
# built_objects FROM TO: the objects of the C files that differ between the
# two commits, outside tools/, that the kernel in $OUT has built.
built_objects() {
	git -C "$SRC" diff --name-only --diff-filter=AM "$1" "$2" -- '*.c' | grep -v '^tools/' |
		while read -r f; do
			[ -f "$OUT/${f%.c}.o" ] && echo "${f%.c}.o"
		done
	return 0
}
# configured OBJ: whether the configuration in $OUT and the Makefiles of
# the tree checked out build OBJ (a single-object target compiles what
# Kbuild would not): every CONFIG_ symbol on a Makefile line that adds OBJ,
# or a directory above it, is y or m. Each directory's Makefile (or Kbuild)
# names OBJ and the directories by their paths below it.
configured() {
	local d=${1%/*} rel sym
	while :; do
		rel=${1#"$d"/}
		for sym in $(cat "$SRC/$d/Kbuild" "$SRC/$d/Makefile" 2>/dev/null |
			sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' |
			awk -v r="$rel" '{ for (i = 2; i <= NF; i++)
				if ($i == r || ($i ~ /\/$/ && index(r, $i) == 1)) { print $1; break } }' |
			grep -o 'CONFIG_[A-Za-z0-9_]*'); do
			grep -qE "^$sym=(y|m)$" "$OUT/.config" || return 1
		done
		[ "$d" = "${d%/*}" ] && return 0
		d=${d%/*}
	done
}
# The series' .config on whatever state is checked out (Kbuild drops the
# options of patches not applied). Where the state has the Kconfig files
# the .config in $OUT was last made for, that .config stays as it is:
# writing it again would only make Kbuild sync the configuration again.
tree_builds_configure() {
	local kconfig
	kconfig=$(git -C "$SRC" ls-files -s -- '*Kconfig*' | sha256sum)
	[ "$kconfig" = "$(cat "$logs/kconfig.state" 2>/dev/null)" ] && return 0
	cp "$logs/series.config" "$OUT/.config"
	kmake olddefconfig >/dev/null 2>&1
	echo "$kconfig" >"$logs/kconfig.state"
}

need_tree() {
	[ -e "$SRC/.git" ] || die "no assembled tree at $SRC; run 'make tree' first"
}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2153 # globals of lib.sh and its callers
# The harness's building helpers, sourced by lib.sh: Debian's apt for
# another arch, the build lock, make in the kernel tree (Kbuild, ccache),
# the kept builds, the tree's commits and the per-patch builds' trees.

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

# Everything a guest of ARCH boots: packages, kernel, selftests, perf and
# the initramfs, in order. On failure FAILED_STEP names the step.
build_guest() {
	local s
	for s in deps kernel selftests perf rootfs; do
		"$TOP/scripts/build/$s.sh" || { FAILED_STEP=build/$s; return 1; }
	done
}

# make in the kernel tree for ARCH, out of tree in $OUT, with ccache and a
# reproducible build stamp. kbuild_env first, once.
kbuild_env() {
	# The compiler cache lives outside the clone, so that a second clone on
	# the same machine (CI's) starts warm. CCACHE_DIR overrides it.
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE_ROOT/ccache}
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
# inputs: the kernel's image and UAPI headers (scripts/build/kernel.sh) and
# perf (scripts/build/perf.sh). Another clone on this machine (CI's fresh
# one) takes them into an output directory that has no build yet, instead
# of compiling and linking the same tree again. CACHE=0 always
# builds; BUILD_KEEP=0 keeps nothing (the mutants' builds).
BUILDS=$CACHE_ROOT/builds
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
# (check/each-patch.sh, check/each-series.sh): tree_builds NAME checks that the
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

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Upstream's per-patch gates for ARCH, as KTAP (part of 'make check', after
# the arch's kernel is built):
#   1. the kernel builds, without warnings, after every patch of the series
#      (bisectability), each build incremental on the one before;
#   2. W=1 and sparse (C=2; skipped, with the reason, when the kernel
#      rejects the installed sparse) find nothing new in the C files the series
#      touches, compared with the same files at the base.
# Both run in the arch's own output directory, so only what a patch changes
# is compiled again, and end with the tree and the kernel back at the
# series' HEAD. The series' .config is put back before every build (Kbuild
# drops the options of patches not applied yet).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
check_arch
need_tree
command -v sparse >/dev/null || die "sparse not found; run 'make deps' (as root)"
[ -f "$OUT/.config" ] || die "no $OUT/.config; run 'make kernel ARCH=$ARCH' first"
[ -z "$(git -C "$SRC" status --porcelain --untracked-files=no)" ] ||
	die "$SRC has uncommitted changes; commit or export them first"

build_lock
branch=$(git -C "$SRC" symbolic-ref -q --short HEAD) || die "$SRC is not on a branch"
kbuild_env
logs=$BUILD/logs/$ARCH/patch-builds
mkdir -p "$logs"
cp "$OUT/.config" "$logs/series.config"
configure() {
	cp "$logs/series.config" "$OUT/.config"
	kmake olddefconfig >/dev/null 2>&1
}
# Back to the series, whatever happens: checked out, configured, built.
restore() {
	git -C "$SRC" checkout -q "$branch"
	cp "$logs/series.config" "$OUT/.config"
	kmake >"$logs/final.log" 2>&1
}
trap restore EXIT

commits=$(git -C "$SRC" rev-list --reverse base..HEAD)
nr=$(echo "$commits" | grep -c .)
echo "HARNESS: begin patch-builds $ARCH"
echo "KTAP version 1"
echo "1..3"
rc=0

# 1. Every patch builds, without warnings.
bad=
i=0
for c in $commits; do
	i=$((i + 1))
	subject=$(git -C "$SRC" log -1 --format=%s "$c")
	git -C "$SRC" checkout -q "$c"
	configure
	if ! kmake >"$logs/$i.log" 2>&1; then
		echo "# build fails after patch $i: $subject (log: $logs/$i.log)"
		grep -m5 -E 'error|Error' "$logs/$i.log" | sed 's/^/#   /'
		bad=1
		break
	fi
	if grep -q 'warning:' "$logs/$i.log"; then
		echo "# warnings after patch $i: $subject (log: $logs/$i.log)"
		grep -m5 'warning:' "$logs/$i.log" | sed 's/^/#   /'
		bad=1
	fi
done
if [ -z "$bad" ]; then
	echo "ok 1 builds: $ARCH kernel builds, without warnings, after each of the $nr patches"
else
	echo "not ok 1 builds: $ARCH kernel builds, without warnings, after each of the $nr patches"
	rc=1
fi

# 2. W=1 and sparse on the touched C files this configuration builds, at
# the series and at the base. Line numbers move between the two; the
# messages are compared without them. A file the base cannot compile in
# this configuration (it needs what the series adds) counts as having no
# findings there.
files=$(git -C "$SRC" diff --name-only --diff-filter=AM base.."$branch" -- '*.c' |
	grep -v '^tools/' || true)
# The kernel's own test of the checker: Debian's sparse 0.6.4 lacks
# __typeof_unqual__, which v7.3's headers use, and Kbuild then silently
# runs no checker at all.
checker=(C=2 CHECK=sparse)
sparse_ok=1
if [ "$(cd "$SRC" && scripts/checker-valid.sh sparse --arch="$KARCH" 2>/dev/null)" != 1 ]; then
	sparse_ok=0
	checker=()
fi
findings() { # file
	local o=${1%.c}.o
	rm -f "$OUT/$o"
	kmake W=1 "${checker[@]}" "$o" 2>&1 | grep -E '(warning|error):' |
		sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/' | sort -u
}
built=
for f in $files; do
	[ -f "$OUT/${f%.c}.o" ] && built+=" $f"
done
git -C "$SRC" checkout -q "$branch"
configure
for f in $built; do
	findings "$f" >"$logs/series-${f//\//_}"
done
git -C "$SRC" checkout -q base
configure
bad=
for f in $built; do
	key=${f//\//_}
	: >"$logs/base-$key"
	if [ -f "$SRC/$f" ]; then
		findings "$f" >"$logs/base-$key"
		grep -q 'error:' "$logs/base-$key" && : >"$logs/base-$key"
	fi
	new=$(comm -13 "$logs/base-$key" "$logs/series-$key")
	if [ -n "$new" ]; then
		echo "# new findings in $f:"
		echo "$new" | head -n 10 | sed 's/^/#   /'
		bad=1
	fi
done
what="W=1"
[ $sparse_ok = 1 ] && what="W=1 and sparse"
if [ -z "$built" ]; then
	echo "not ok 2 w1: $ARCH: no file the series touches is built here"
	rc=1
elif [ -z "$bad" ]; then
	echo "ok 2 w1: $ARCH: nothing new from $what in$built"
else
	echo "not ok 2 w1: $ARCH: new findings from $what (see above)"
	rc=1
fi
if [ $sparse_ok = 1 ]; then
	echo "ok 3 sparse: $ARCH: run with W=1 above"
else
	echo "ok 3 sparse: $ARCH # SKIP $(sparse --version 2>/dev/null | head -n1) is rejected by the kernel's scripts/checker-valid.sh (no __typeof_unqual__); a newer sparse is not in Debian"
fi
echo "HARNESS: end rc=$rc"
exit $rc

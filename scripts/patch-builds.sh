#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Upstream's per-patch gates, for each arch in $ARCHES (part of 'make
# check-full'), as KTAP:
#   - the kernel builds after every patch of the series (bisectability),
#     incrementally, with the configuration of the arch's series kernel;
#   - W=1 and sparse (C=2) find nothing new in the C files the series
#     touches, compared with the same files at the base.
# The builds run in build/linux itself, so that ccache serves every file
# the patches leave alone; the branch is checked out again at the end.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_tree
ARCHES=${ARCHES:-arm64 x86_64}
command -v sparse >/dev/null || die "sparse not found; run 'make deps' (as root)"
[ -z "$(git -C "$SRC" status --porcelain --untracked-files=no)" ] ||
	die "$SRC has uncommitted changes; commit or export them first"

build_lock
branch=$(git -C "$SRC" symbolic-ref -q --short HEAD) || die "$SRC is not on a branch"
trap 'git -C "$SRC" checkout -q "$branch"' EXIT
commits=$(git -C "$SRC" rev-list --reverse base..HEAD)
# C files of the kernel proper that the series adds or changes
files=$(git -C "$SRC" diff --name-only --diff-filter=AM base..HEAD -- '*.c' |
	grep -v '^tools/' || true)
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}

nr_commits=$(echo "$commits" | grep -c .)
echo "HARNESS: begin patch-builds"
echo "KTAP version 1"
echo "1..$(($(echo $ARCHES | wc -w) * 2))"
n=0 rc=0
for ARCH in $ARCHES; do
	check_arch
	steps=$BUILD/out/$ARCH-steps
	[ -f "$OUT/.config" ] || die "no $OUT/.config; run 'make kernel ARCH=$ARCH' first"
	mkdir -p "$steps"
	cc=${CROSS_COMPILE}gcc
	command -v ccache >/dev/null && cc="ccache $cc"
	kmake() {
		make -s -C "$SRC" O="$steps" ARCH="$ARCH" CROSS_COMPILE="$CROSS_COMPILE" \
			CC="$cc" -j"$(nproc)" "$@"
	}

	# 1. Every patch builds.
	bad=
	i=0
	for c in $commits; do
		i=$((i + 1))
		git -C "$SRC" checkout -q "$c"
		cp "$OUT/.config" "$steps/.config"
		# Options of later patches are dropped here; that is the point.
		if ! kmake olddefconfig >/dev/null 2>&1 ||
		   ! kmake >"$steps/build-$i.log" 2>&1; then
			echo "# $ARCH: build fails after patch $i: $(git -C "$SRC" log -1 --format=%s "$c")"
			grep -m5 -E 'error|Error' "$steps/build-$i.log" | sed 's/^/#   /'
			bad=1
			break
		fi
		# A warning that the base build does not have would fail upstream's
		# -Werror builds (CONFIG_WERROR) too.
		if grep -q 'warning:' "$steps/build-$i.log"; then
			echo "# $ARCH: warnings after patch $i: $(git -C "$SRC" log -1 --format=%s "$c")"
			grep -m5 'warning:' "$steps/build-$i.log" | sed 's/^/#   /'
			bad=1
		fi
	done
	n=$((n + 1))
	if [ -z "$bad" ]; then
		echo "ok $n $ARCH: the kernel builds, without warnings, after each of the $nr_commits patches"
	else
		echo "not ok $n $ARCH: the kernel builds, without warnings, after each of the $nr_commits patches"
		rc=1
	fi

	# 2. W=1 and sparse: new findings in the touched files. Line numbers
	# move between base and series; compare the messages without them.
	bad=
	checked=
	for rev in base "$branch"; do
		git -C "$SRC" checkout -q "$rev"
		cp "$OUT/.config" "$steps/.config"
		kmake olddefconfig >/dev/null 2>&1
		for f in $files; do
			o=${f%.c}.o
			# Only files this configuration builds, and that exist here
			[ -f "$OUT/$o" ] && [ -f "$SRC/$f" ] || continue
			rm -f "$steps/$o"
			kmake W=1 C=2 CHECK=sparse "$o" 2>&1 |
				grep -E '(warning|error):' |
				sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/' | sort -u \
				>"$steps/w1-$rev-${f//\//_}.txt"
			[ "$rev" = base ] || checked+=" $f"
		done
	done
	for f in $checked; do
		new=$(comm -13 "$steps/w1-base-${f//\//_}.txt" "$steps/w1-$branch-${f//\//_}.txt" 2>/dev/null ||
		      cat "$steps/w1-$branch-${f//\//_}.txt")
		if [ -n "$new" ]; then
			echo "# $ARCH: new W=1/sparse findings in $f:"
			echo "$new" | head -n 10 | sed 's/^/#   /'
			bad=1
		fi
	done
	n=$((n + 1))
	if [ -z "$bad" ] && [ -n "$checked" ]; then
		echo "ok $n $ARCH: no new W=1 or sparse findings in$checked"
	else
		[ -n "$checked" ] || echo "# $ARCH: no touched file is built by this configuration"
		echo "not ok $n $ARCH: no new W=1 or sparse findings in the touched files"
		rc=1
	fi
done
echo "HARNESS: end rc=$rc"
exit $rc

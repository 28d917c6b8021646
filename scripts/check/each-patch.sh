#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Upstream's per-patch gates for ARCH, as KTAP (part of 'make check', after
# the arch's kernel is built):
#   1. the objects of the series' C files build, without warnings, after
#      every patch of the series (bisectability), each build incremental
#      on the one before, from the last patch back to the first and then
#      the series again;
#   2. W=1 and 3. sparse (C=2; see below for how Debian's 0.6.4 is run)
#      find nothing new in the C files the series touches, compared with
#      the same files at the base.
# All run in the arch's own output directory, so only what a patch changes
# is compiled again, and end with the tree and the kernel back at the
# series' HEAD. The series' .config is put back before every build (Kbuild
# drops the options of patches not applied yet).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree
command -v sparse >/dev/null || die "sparse not found; run 'make deps' (as root)"
tree_builds patch-builds
rm -f "$logs"/base-* "$logs"/series-*

commits=$(git -C "$SRC" rev-list --reverse base..HEAD)
nr=$(echo "$commits" | grep -c .)
ktap_begin "patch-builds $ARCH" 3
rc=0

# 1. Every patch builds, without warnings. The kernel in $OUT is the
# series' own: going back from it, patch by patch, each build compiles
# only what the next patch changed, and the configuration changes once
# (where a patch adds the Kconfig options the series' .config sets), not
# twice. The series' own state comes last, built from the first patch's.
# Each log lists what was compiled, and the count goes into the KTAP.
# A patch whose tree differs from the one built just before it only in
# what this kernel is not built from (tools/, Documentation/, MAINTAINERS,
# another arch's arch/ directory) gives the same kernel: not built again.
srcarch=${IMAGE#arch/}
srcarch=${srcarch%%/*}
kernel_changes() { # commit commit: the paths between them the build reads
	git -C "$SRC" diff --name-only "$1" "$2" |
		awk -v own="arch/$srcarch/" '!/^(tools|Documentation)\// && $0 != "MAINTAINERS" &&
			(!/^arch\// || index($0, own) == 1)'
}
# Not the whole kernel after each patch (three near-full builds: the
# series changes headers most of the kernel includes, sched.h and
# perf_event.h) but the objects of the C files the series touches that
# this configuration builds (Kbuild's single-object targets, which still
# run the prepare step: generated headers, asm-offsets). A header a patch
# changes is then compiled in every file of the series that includes it,
# which is where a patch breaks the build.
mapfile -t targets < <(built_objects base HEAD)
scope="the ${#targets[@]} objects of the series' C files compile"
bad=
prev=$(git -C "$SRC" rev-parse HEAD) prev_i=$nr	# the kernel in $OUT
mapfile -t order < <(seq $((nr - 1)) -1 1; echo "$nr")
for i in "${order[@]}"; do
	c=$(echo "$commits" | sed -n "${i}p")
	subject=$(git -C "$SRC" log -1 --format=%s "$c")
	git -C "$SRC" checkout -q "$c"
	if [ -z "$(kernel_changes "$prev" "$c")" ]; then
		echo "# patch $i: the kernel sources of patch $prev_i, built already: $subject"
		continue
	fi
	prev=$c prev_i=$i
	tree_builds_configure
	# Of the series' objects, those this patch's tree has.
	here=()
	for d in "${targets[@]}"; do
		[ -f "$SRC/${d%.o}.c" ] && configured "$d" && here+=("$d")
	done
	if [ ${#here[@]} = 0 ]; then
		echo "# patch $i: none of the series' C files is built here yet: $subject"
		continue
	fi
	if ! KMAKE_QUIET="" kmake "${here[@]}" >"$logs/$i.log" 2>&1; then
		echo "# build fails after patch $i: $subject (log: $logs/$i.log)"
		grep -m5 -E 'error|Error' "$logs/$i.log" | sed 's/^/#   /'
		bad=1
		break
	fi
	echo "# patch $i: $(objects_in "$logs/$i.log") objects built: $subject"
	if grep -q 'warning:' "$logs/$i.log"; then
		echo "# warnings after patch $i: $subject (log: $logs/$i.log)"
		grep -m5 'warning:' "$logs/$i.log" | sed 's/^/#   /'
		bad=1
	fi
done
[ -z "$bad" ] || rc=1
ktap_result "${bad:-0}" 1 "builds: $ARCH: $scope, without warnings, after each of the $nr patches"

# 2. W=1 and sparse on the touched C files this configuration builds, at
# the series and at the base. Line numbers move between the two; the
# messages are compared without them. A file the base cannot compile in
# this configuration (it needs what the series adds) counts as having no
# findings there.
# sparse: v7.3's headers use __typeof_unqual__ under __CHECKER__, which
# Debian's sparse 0.6.4 (the newest there is) lacks, so the kernel's
# scripts/checker-valid.sh rejects it and Kbuild would silently check
# nothing. We run it with __typeof_unqual__ read as __typeof__: that keeps
# the qualifiers and address spaces the real operator drops, which makes
# a few false findings (rcu_dereference() comparisons "different address
# spaces"), the same at the base and at the series, so the comparison
# cancels them. 0.6.4 also cannot fold the __builtin_strlen() in
# MODULE_INFO()'s static_assert(): "bad constant expression" on a
# MODULE_*() or module_param*() line (which expands to one) is dropped.
# Findings are compared with their number of occurrences, so one more of
# a kind the base already has still counts.
sparse_cf=(-D__typeof_unqual__=__typeof__ -fmax-errors=100000 -fmax-warnings=100000)
sparse_ok=1
if [ "$(cd "$SRC" && scripts/checker-valid.sh sparse --arch="$KARCH" "${sparse_cf[@]}" 2>/dev/null)" != 1 ]; then
	sparse_ok=0
fi
strip_lines() {
	sed -E 's/:[0-9]+:[0-9]+:/:/; s/:[0-9]+:/:/' | sort
}
# A kbuild log on stdin, made with 'make -Otarget' so that each object's
# output comes in one piece after its "CC" (gcc) or "CHECK" (sparse)
# line: "FILE<TAB>DIAGNOSTIC" for each warning or error, FILE being the
# C file of that line.
split_log() {
	awk '/^  (CC|CHECK) +[^ ]+\.[oc]$/ { f = $2; sub(/\.o$/, ".c", f); next }
	     f != "" && /(warning|error):/ { print f "\t" $0 }'
}
# sparse's findings (stdin) in FILE itself, less 0.6.4's "bad constant
# expression" on a MODULE_*() or module_param*() line.
sparse_own() {
	local f line
	grep -E "^(.*/)?$1:[0-9]+:[0-9]+: (warning|error):" |
		while IFS= read -r line; do
			if [[ $line =~ ^([^:]+):([0-9]+):[0-9]+:\ error:\ bad\ constant\ expression$ ]]; then
				f=${BASH_REMATCH[1]}
				sed -n "${BASH_REMATCH[2]}p" "$f" 2>/dev/null |
					grep -qE '^[[:space:]]*(MODULE_[A-Z_]+|module_param[a-z_]*)\(' && continue
			fi
			printf '%s\n' "$line"
		done
}
# findings PREFIX: the W=1 (gcc) and sparse findings of each C file of
# $built that the tree checked out has, in $logs/PREFIX-<file>.gcc and
# .sparse (empty for a file it lacks). One kbuild run per tool for all
# of them, so the prepare step runs twice, not twice per file; the
# objects are compiled again (W=1), then only checked (C=2).
findings() {
	local f key objs=()
	for f in $built; do
		: >"$logs/$1-${f//\//_}.gcc"
		: >"$logs/$1-${f//\//_}.sparse"
		[ -f "$SRC/$f" ] || continue
		objs+=("${f%.c}.o")
		rm -f "$OUT/${f%.c}.o"
	done
	[ ${#objs[@]} -gt 0 ] || return 0
	KMAKE_QUIET="" kmake -k -Otarget W=1 "${objs[@]}" 2>&1 | split_log >"$logs/$1.gcc.all"
	: >"$logs/$1.sparse.all"
	[ $sparse_ok = 1 ] &&
		KMAKE_QUIET="" kmake -k -Otarget W=1 C=2 CHECK=sparse CF="${sparse_cf[*]}" "${objs[@]}" 2>&1 |
		split_log >"$logs/$1.sparse.all"
	for f in $built; do
		key=${f//\//_}
		awk -F'\t' -v f="$f" '$1 == f { print $2 }' "$logs/$1.gcc.all" | strip_lines >"$logs/$1-$key.gcc"
		awk -F'\t' -v f="$f" '$1 == f { print $2 }' "$logs/$1.sparse.all" | sparse_own "$f" |
			strip_lines >"$logs/$1-$key.sparse"
	done
}
built=$(built_objects base "$branch" | sed 's/\.o$/.c/; s/^/ /' | tr -d '\n')
git -C "$SRC" checkout -q "$branch"
tree_builds_configure
findings series
git -C "$SRC" checkout -q base
tree_builds_configure
findings base
# compare KIND: the series' findings of that kind that the base lacks
compare() {
	local f key new bad=
	for f in $built; do
		key=${f//\//_}
		new=$(comm -13 "$logs/base-$key.$1" "$logs/series-$key.$1")
		if [ -n "$new" ]; then
			echo "# new $1 findings in $f:"
			echo "$new" | head -n 10 | sed 's/^/#   /'
			bad=1
		fi
	done
	[ -z "$bad" ]
}
# A file the base cannot compile in this configuration: no findings there.
for f in $built; do
	key=${f//\//_}
	if grep -q 'error:' "$logs/base-$key.gcc"; then
		: >"$logs/base-$key.gcc"
		: >"$logs/base-$key.sparse"
	fi
done
count() { # kind: findings at the base and at the series, all files
	echo "$(cat "$logs"/base-*."$1" | grep -c .) at the base, $(cat "$logs"/series-*."$1" | grep -c .) with the series"
}
# verdict N NAME KIND TOOL: test N, findings of KIND (gcc or sparse) by TOOL.
verdict() {
	local st=1 what
	if [ -z "$built" ]; then
		what="no file the series touches is built here"
	elif compare "$3"; then
		st=0 what="nothing new from $4 in$built ($(count "$3"))"
	else
		what="new findings from $4 (see above)"
	fi
	[ $st = 0 ] || rc=1
	ktap_result $st "$1" "$2: $ARCH: $what"
}
verdict 2 w1 gcc W=1
if [ $sparse_ok = 0 ]; then
	ktap_result 0 3 "sparse: $ARCH # SKIP $(sparse --version 2>/dev/null | head -n1) is rejected by the kernel's scripts/checker-valid.sh even with __typeof_unqual__ defined"
else
	verdict 3 sparse sparse "sparse $(sparse --version)"
fi
ktap_end $rc
exit $rc

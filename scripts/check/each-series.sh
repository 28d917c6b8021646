#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Each mailed series (patches/cover/, scripts/series/parts.sh) compiles for ARCH,
# without warnings, on the bare base alone, as KTAP (part of 'make check',
# after the per-patch builds). A series that starts at the first patch is
# the tree after its last patch, which the per-patch builds built whole.
# Of the others, every directory with a C file the series touches (and
# this configuration builds) is built, subdirectories included: the
# series' own code and its neighbours that include the headers it
# changes. Not the whole kernel: each such state shares little with the
# ones the compiler cache has, and a full build of each, per arch, would
# cost 'make check' more than all the per-patch builds together.
# In the arch's own output directory, with the series' .config (Kbuild
# drops the options of what is not applied); the tree and the kernel are
# back at the series' HEAD at the end.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree
. "$TOP/scripts/series/parts.sh"
mail_groups
tree_builds series-builds

ktap_begin "series-builds $ARCH" ${#MAIL_NAME[@]}
rc=0
for i in "${!MAIL_NAME[@]}"; do
	name=${MAIL_NAME[$i]} first=${MAIL_FIRST[$i]} last=${MAIL_LAST[$i]}
	what="series-build: $ARCH: $name (patches $first-$last) alone on the base"
	if ! head=$(mail_replay "$first" "$last" 2>"$logs/$name.replay"); then
		sed 's/^/# /' "$logs/$name.replay"
		ktap_result 1 $((i + 1)) "$what: does not apply"
		rc=1
		continue
	fi
	if [ "$first" = 1 ] && [ "$(git -C "$SRC" rev-parse "$head^{tree}")" = \
		"$(git -C "$SRC" rev-parse "$(git -C "$SRC" rev-list --reverse base.."$MAIL_TIP" | sed -n "${last}p")^{tree}")" ]; then
		ktap_result 0 $((i + 1)) "$what: the tree after patch $last, built by the per-patch builds"
		continue
	fi
	dirs=$(built_dirs base "$head")
	if [ -z "$dirs" ]; then
		ktap_result 0 $((i + 1)) "$what: # SKIP no C file it touches is built for $ARCH"
		continue
	fi
	git -C "$SRC" checkout -q "$head"
	tree_builds_configure
	st=0
	# shellcheck disable=SC2086 # directories, one a word
	if ! KMAKE_QUIET="" kmake $dirs >"$logs/$name.log" 2>&1; then
		echo "# $name does not compile alone (log: $logs/$name.log)"
		grep -m5 -E 'error|Error' "$logs/$name.log" | sed 's/^/#   /'
		st=1
	elif grep -q 'warning:' "$logs/$name.log"; then
		echo "# warnings in $name alone (log: $logs/$name.log)"
		grep -m5 'warning:' "$logs/$name.log" | sed 's/^/#   /'
		st=1
	fi
	[ $st = 0 ] || rc=1
	if [ $st = 0 ]; then
		ktap_result 0 $((i + 1)) "$what: ${dirs//$'\n'/ } compile, $(objects_in "$logs/$name.log") objects"
	else
		ktap_result 1 $((i + 1)) "$what: ${dirs//$'\n'/ } do not compile cleanly"
	fi
done
ktap_end $rc
exit $rc

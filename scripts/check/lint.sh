#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run checkpatch.pl --strict on every commit of build/linux (base..HEAD), as
# the full patch a maintainer would receive (overlay files included), and
# print the verdicts as KTAP; then whether each mailed series applies, the
# result parser's tests and shellcheck on the harness. Exit non-zero if
# any of them fails.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
need_tree
. "$TOP/scripts/series/parts.sh"
mail_groups

# checkpatch's SPDX check runs python3 with 'ply'; Debian's python3-ply is
# installed for /usr/bin/python3, which a pyenv or venv python would hide.
export PATH=/usr/bin:$PATH

commits=$(git -C "$SRC" rev-list --reverse base..HEAD)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ktap_begin lint $(($(echo "$commits" | grep -c . || true) + 3 + ${#MAIL_NAME[@]}))
n=0 rc=0
for c in $commits; do
	n=$((n + 1))
	name=$(git -C "$SRC" log -1 --format=%s "$c")
	ignore=()
	while IFS=$'\t' read -r type subject reason; do
		[ "$subject" = "$name" ] || continue
		ignore+=(--ignore "$type")
		echo "# exception for '$name': $type: $reason"
	done < <(grep -v '^#' "$TOP/configs/checkpatch-exceptions")
	# checkpatch asks whether MAINTAINERS needs updating whenever a patch
	# adds a file; answer it: when get_maintainer.pl already finds a
	# maintained section for every new file, the answer is no.
	added=$(git -C "$SRC" diff-tree --no-commit-id --diff-filter=A --name-only -r "$c")
	if [ -n "$added" ]; then
		git -C "$SRC" show "$c:MAINTAINERS" >"$tmp/MAINTAINERS"
		sections=$(cd "$SRC" && for f in $added; do
			perl scripts/get_maintainer.pl --mpath "$tmp/MAINTAINERS" \
				--no-git --no-git-fallback -f "$f" |
				sed -n 's/.*(maintainer:\(.*\))$/\1/p' | head -n1 | grep . || echo NONE
		done | sort -u)
		if ! echo "$sections" | grep -qx NONE; then
			ignore+=(--ignore FILE_PATH_CHANGES)
			echo "# new files covered by MAINTAINERS: ${sections//$'\n'/ }"
		fi
	fi
	out=$(git -C "$SRC" format-patch --stdout -1 "$c" |
		(cd "$SRC" && perl scripts/checkpatch.pl --strict --quiet --showfile "${ignore[@]}" -) 2>&1) || true
	st=0
	# shellcheck disable=SC2001 # '# ' before every line
	[ -z "$out" ] || { sed 's/^/# /' <<<"$out"; st=1 rc=1; }
	ktap_result $st "$n" "checkpatch: $name"
done

# The series as mailed (git format-patch, as 'make series' writes it)
# applies to the bare base, in order, and gives exactly the tree that
# was built and tested. Applied to a scratch index: no checkout needed.
n=$((n + 1))
git -C "$SRC" format-patch -q -o "$tmp/mail" base..HEAD
export GIT_INDEX_FILE=$tmp/index
git -C "$SRC" read-tree base
applied=0
for p in "$tmp"/mail/*.patch; do
	if ! err=$(git -C "$SRC" apply --cached "$p" 2>&1); then
		echo "# $(basename "$p") does not apply: $err" | head -n 5
		break
	fi
	applied=$((applied + 1))
done
tree=$(git -C "$SRC" write-tree)
unset GIT_INDEX_FILE
st=0
if [ "$applied" != "$((n - 1))" ] || [ "$tree" != "$(git -C "$SRC" rev-parse 'HEAD^{tree}')" ]; then
	echo "# applied $applied of $((n - 1)); tree $tree, tested tree $(git -C "$SRC" rev-parse 'HEAD^{tree}')"
	st=1 rc=1
fi
ktap_result $st "$n" "series: the $applied of $((n - 1)) patches apply to the base and give the tested tree"

# Each mailed series (patches/cover/) applies to the bare base alone.
for i in "${!MAIL_NAME[@]}"; do
	n=$((n + 1)) st=0
	mail_replay "${MAIL_FIRST[$i]}" "${MAIL_LAST[$i]}" >/dev/null 2>"$tmp/replay" || st=1
	[ $st = 0 ] || { sed 's/^/# /' "$tmp/replay"; rc=1; }
	ktap_result $st "$n" "series: ${MAIL_NAME[$i]} (patches ${MAIL_FIRST[$i]}-${MAIL_LAST[$i]}) applies to the bare base alone"
done

# The result parser (scripts/check/ktap.py), on serial logs saved from real
# guests (scripts/check/tests/).
n=$((n + 1)) st=0
if ! python3 -m unittest discover -s "$TOP/scripts/check/tests" -p '*_test.py' >"$tmp/unittest" 2>&1; then
	sed 's/^/# /' "$tmp/unittest"
	st=1 rc=1
fi
ktap_result $st "$n" "ktap.py: $(grep -o '^Ran [0-9]* tests' "$tmp/unittest" | cut -d' ' -f2) tests on saved guest logs"

# The harness's shell scripts, checked by shellcheck with the exclusions
# that .shellcheckrc names and says why.
n=$((n + 1)) st=0
mapfile -t sh < <(cd "$TOP" && git ls-files '*.sh' scripts/guest/init .ci/run | grep -v '^tools/')
if ! (cd "$TOP" && shellcheck -f gcc "${sh[@]}") >"$tmp/shellcheck" 2>&1; then
	sed 's/^/# /' "$tmp/shellcheck"
	st=1 rc=1
fi
ktap_result $st "$n" "shellcheck: ${#sh[@]} scripts"
ktap_end $rc
exit $rc

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The series as it is mailed (sourced after lib.sh by series/mail.sh, check/lint.sh
# and check/each-series.sh): not one series but one per cover letter in
# patches/cover/, in the order of their names. A cover letter's
# "First patch:" line names, by subject, the patch its series starts at;
# the series runs to the patch before the next one's first patch. Each
# is mailed against the bare base, so each must apply, and build, there
# alone, without the series mailed before it. A group of one patch (a fix
# for its maintainers alone) is mailed without a cover letter.

COVERS=$TOP/patches/cover

# mail_groups: sets MAIL_NAME, MAIL_FIRST and MAIL_LAST (1-based patch
# numbers in base..HEAD) for each cover letter, and MAIL_TIP to HEAD (the
# series, wherever the tree is checked out later); dies if the letters do
# not cut the series into consecutive pieces from its first patch.
mail_groups() {
	local subjects total cover first n i next
	MAIL_NAME=() MAIL_FIRST=() MAIL_LAST=()
	MAIL_TIP=$(git -C "$SRC" rev-parse HEAD)
	subjects=$(git -C "$SRC" log --reverse --format=%s base.."$MAIL_TIP")
	total=$(echo "$subjects" | grep -c .)
	for cover in "$COVERS"/*; do
		first=$(sed -n 's/^First patch: //p' "$cover")
		[ -n "$first" ] || die "$cover has no 'First patch: <subject>' line"
		n=$(echo "$subjects" | grep -nxF -- "$first" | cut -d: -f1)
		[ "$(echo "$n" | grep -c .)" = 1 ] ||
			die "$cover starts at '$first', which is not the subject of exactly one patch of the series"
		MAIL_NAME+=("$(basename "$cover")")
		MAIL_FIRST+=("$n")
	done
	[ "${MAIL_FIRST[0]:-}" = 1 ] ||
		die "the first cover letter in $COVERS must start at the series' first patch"
	for i in "${!MAIL_FIRST[@]}"; do
		next=${MAIL_FIRST[$((i + 1))]:-$((total + 1))}
		[ "$next" -gt "${MAIL_FIRST[$i]}" ] ||
			die "the cover letters in $COVERS are not in the order of the patches they start at"
		MAIL_LAST+=($((next - 1)))
	done
}

# mail_replay FIRST LAST: patches FIRST..LAST of the series applied to the
# bare base, committed with their authors and messages, in a scratch
# index (no checkout); prints the last commit. Fails, saying which patch
# does not apply, if one needs a patch outside the range.
mail_replay() {
	local idx parent c tree
	idx=$(mktemp)
	parent=$(git -C "$SRC" rev-parse base)
	GIT_INDEX_FILE=$idx git -C "$SRC" read-tree base
	for c in $(git -C "$SRC" rev-list --reverse base.."$MAIL_TIP" | sed -n "$1,$2p"); do
		if ! git -C "$SRC" diff --binary "$c^" "$c" |
			GIT_INDEX_FILE=$idx git -C "$SRC" apply --cached --3way - >/dev/null 2>"$idx.err"; then
			echo "'$(git -C "$SRC" log -1 --format=%s "$c")' does not apply without the patches before patch $1: $(head -n 3 "$idx.err")" >&2
			rm -f "$idx" "$idx.err"
			return 1
		fi
		tree=$(GIT_INDEX_FILE=$idx git -C "$SRC" write-tree)
		parent=$(git -C "$SRC" log -1 --format=%B "$c" |
			GIT_AUTHOR_NAME=$(git -C "$SRC" log -1 --format=%an "$c") \
			GIT_AUTHOR_EMAIL=$(git -C "$SRC" log -1 --format=%ae "$c") \
			GIT_AUTHOR_DATE=$(git -C "$SRC" log -1 --format=%ad "$c") \
			git -C "$SRC" commit-tree "$tree" -p "$parent")
	done
	rm -f "$idx" "$idx.err"
	echo "$parent"
}

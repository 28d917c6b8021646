#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Write the commits of build/linux (base..HEAD) back into the repo: files a
# commit adds go to the overlay and onto its series line, the rest of the
# commit into patches/NNNN-*.patch (git format-patch).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
need_tree

git_t() { git -C "$SRC" "$@"; }

if [ -f "$SRC/.git/series-partial" ] && [ "${FORCE:-0}" != 1 ]; then
	die "the last 'make tree' stopped at $(cat "$SRC/.git/series-partial"), so the tree lacks the patches after it; exporting now would drop them from patches/series. Rerun with FORCE=1 if that is what you want."
fi
[ -z "$(git_t status --porcelain --untracked-files=no)" ] ||
	die "$SRC has uncommitted changes; commit them first"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
old_files=$(awk '!/^#/ && NF { for (i = 2; i <= NF; i++) print $i }' "$TOP/patches/series" 2>/dev/null || true)

n=0
: >"$tmp/series"
: >"$tmp/files"
for c in $(git_t rev-list --reverse base..HEAD); do
	n=$((n + 1))
	added=$(git_t diff-tree --no-commit-id --diff-filter=A --name-only -r "$c")
	others=$(git_t diff-tree --no-commit-id --diff-filter=a --name-only -r "$c")
	for f in $added; do
		mkdir -p "$tmp/overlay/$(dirname "$f")"
		git_t show "$c:$f" >"$tmp/overlay/$f"
		[ "$(git_t ls-tree "$c" -- "$f" | cut -c1-6)" = 100755 ] && chmod +x "$tmp/overlay/$f"
		echo "$f" >>"$tmp/files"
	done
	fp=(format-patch --zero-commit --no-signature --abbrev=12 -N --start-number "$n" -o "$tmp/patches")
	if [ -n "$others" ]; then
		# Name the changed files (never exclude the added ones): with a
		# pathspec, format-patch -1 picks the newest commit touching it.
		# shellcheck disable=SC2086 # paths, one a word
		name=$(git_t "${fp[@]}" -1 "$c" -- $others)
	else
		# Only new files: the mail part alone (tree.sh commits the files).
		name=$(git_t "${fp[@]}" -1 "$c")
		sed -i '/^---$/,$d' "$name"
		printf -- '---\n' >>"$name"
	fi
	echo "$(basename "$name")${added:+ ${added//$'\n'/ }}" >>"$tmp/series"
done

# Replace the queue and overlay; files no longer added by any patch leave
# the overlay (they stay in this repo's history).
rm -f "$TOP"/patches/*.patch
mkdir -p "$TOP/patches"
[ -d "$tmp/patches" ] && cp "$tmp"/patches/*.patch "$TOP/patches/"
{
	echo "# The series, in order: <patch> [files the patch adds, kept at their kernel paths]"
	cat "$tmp/series"
} >"$TOP/patches/series"
for f in $old_files; do
	grep -qxF "$f" "$tmp/files" || rm -f "$TOP/$f"
done
[ -d "$tmp/overlay" ] && cp -a "$tmp/overlay/." "$TOP/"

git_t rev-parse HEAD >"$SRC/.git/series-head"
rm -f "$SRC/.git/series-partial"
"$TOP/scripts/series/tree.sh" --stamp-only
msg EXPORT "$n patches -> patches/ ($(git -C "$TOP" status --porcelain -- patches arch include kernel drivers tools Documentation | wc -l) paths changed in the repo)"

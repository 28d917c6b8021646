#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Assemble build/linux: the base committed and tagged 'base', then one commit
# per patches/series line (git am of the patch plus the line's new files).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

SERIES=$TOP/patches/series
[ -f "$SERIES" ] || die "$SERIES not found"

git_t() { git -C "$SRC" "$@"; }

# A stamp of everything the series consists of: when it matches the one the
# tree was built from, there is nothing to do and no file is touched (so the
# kernel build stays incremental).
stamp() {
	(cd "$TOP" && {
		cat patches/series
		awk '!/^#/ && NF { print "patches/" $1; for (i = 2; i <= NF; i++) print $i }' \
			patches/series | while read -r f; do
			[ -f "$f" ] || die "patches/series names $f, which does not exist"
			sha256sum "$f"
		done
	} | sha256sum | cut -d' ' -f1)
}

# 'make export' calls this to record that the tree and the queue agree.
if [ "${1:-}" = --stamp-only ]; then
	stamp >"$SRC/.git/series-stamp"
	exit 0
fi

"$TOP/scripts/series/fetch-base.sh"
if [ ! -d "$SRC/.git" ]; then
	msg TREE "extracting $(cut -d' ' -f1-2 "$BUILD/base/BASE") into $SRC"
	rm -rf "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xf "$BUILD/base/linux-source-7.3.tar.xz" -C "$SRC.tmp" --strip-components=1
	git -C "$SRC.tmp" init -q -b series
	# Commits made in the tree carry the user's own identity; only a
	# machine without one gets a placeholder (git needs a committer).
	git -C "$SRC.tmp" config user.name >/dev/null ||
		git -C "$SRC.tmp" config user.name "Series Builder"
	git -C "$SRC.tmp" config user.email >/dev/null ||
		git -C "$SRC.tmp" config user.email "series@localhost"
	git -C "$SRC.tmp" config gc.auto 0
	# Debian's packaging adds "/*" to the top .gitignore, which would hide
	# every new file; drop that stanza so the tree behaves like upstream's.
	sed -i '/^# Debian packaging/,$d' "$SRC.tmp/.gitignore"
	git -C "$SRC.tmp" add -A -f
	GIT_AUTHOR_DATE="1000000000 +0000" GIT_COMMITTER_DATE="1000000000 +0000" \
		git -C "$SRC.tmp" commit -q -m "Base: $(cut -d' ' -f1-2 "$BUILD/base/BASE")" \
		-m "Debian's top-level '/*' .gitignore stanza removed."
	git -C "$SRC.tmp" tag base
	mv "$SRC.tmp" "$SRC"
fi

want=$(stamp)
have=$(cat "$SRC/.git/series-stamp" 2>/dev/null || true)
if [ "$want" = "$have" ] && [ -z "$(git_t status --porcelain)" ]; then
	msg TREE "$SRC is up to date with patches/series"
	[ "$(git_t rev-parse HEAD)" = "$(cat "$SRC/.git/series-head" 2>/dev/null)" ] ||
		warn "$SRC has commits that are not exported yet: building the tree as it is ('make export' to write them to patches/)"
	exit 0
fi

# Never lose work done in the tree: refuse when it holds changes that
# 'make export' has not written back, unless FORCE=1 (then keep them on a
# backup branch).
if [ -n "$(git_t status --porcelain)" ]; then
	[ "${FORCE:-0}" = 1 ] || die "$SRC has uncommitted changes; commit them and run 'make export', or rerun with FORCE=1 to discard them"
	git_t stash -q -u
	warn "uncommitted changes in $SRC stashed (git -C $SRC stash list)"
fi
exported=$(cat "$SRC/.git/series-head" 2>/dev/null || git_t rev-parse base)
if [ "$(git_t rev-parse HEAD)" != "$exported" ]; then
	[ "${FORCE:-0}" = 1 ] || die "$SRC has commits that are not in patches/ (HEAD is not what 'make export' last wrote); run 'make export' first, or rerun with FORCE=1"
	b=backup/$(date +%Y%m%d-%H%M%S)
	git_t branch "$b" HEAD
	warn "previous tree HEAD kept as branch $b in $SRC"
fi

git_t checkout -q -B series base
rm -f "$SRC/.git/series-partial"
n=0
while read -r patch files; do
	n=$((n + 1))
	p=$TOP/patches/$patch
	if grep -q '^diff --git' "$p"; then
		if ! out=$(git_t am -q --committer-date-is-author-date "$p" 2>&1); then
			git_t am --abort >/dev/null 2>&1 || true
			git_t rev-parse HEAD >"$SRC/.git/series-head"
			echo "$patch" >"$SRC/.git/series-partial"
			rm -f "$SRC/.git/series-stamp"
			die "patch $patch (series line $n) does not apply on top of $(git_t describe --tags --always HEAD):
$(echo "$out" | grep -E '^(error|fatal):' || echo "$out")
The tree is left at the last patch that applied. Fix it there, commit, 'make export'."
		fi
	else
		# A patch that only adds new files: no diff for git am, so take the
		# message and author from the mail and commit the files below.
		info=$(mktemp)
		git mailinfo "$info.msg" "$info.patch" <"$p" >"$info"
		author=$(sed -n 's/^Author: //p' "$info")
		email=$(sed -n 's/^Email: //p' "$info")
		date=$(sed -n 's/^Date: //p' "$info")
		subject=$(sed -n 's/^Subject: //p' "$info")
		{ echo "$subject"; echo; cat "$info.msg"; } >"$info.full"
		GIT_AUTHOR_NAME=$author GIT_AUTHOR_EMAIL=$email GIT_AUTHOR_DATE=$date \
		GIT_COMMITTER_DATE=$date git_t commit -q --allow-empty -F "$info.full"
		rm -f "$info" "$info".*
	fi
	if [ -n "${files:-}" ]; then
		for f in $files; do
			[ -f "$TOP/$f" ] || die "series line $n ($patch) names $f, which is missing from the repo"
			mkdir -p "$(dirname "$SRC/$f")"
			cp -p "$TOP/$f" "$SRC/$f"
			git_t add -f "$f"
		done
		GIT_COMMITTER_DATE=$(git_t log -1 --format=%aD) git_t commit -q --amend --no-edit
	fi
	msg APPLY "$patch"
done < <(grep -v '^#' "$SERIES" | awk 'NF')

git_t rev-parse HEAD >"$SRC/.git/series-head"
echo "$want" >"$SRC/.git/series-stamp"
msg TREE "$SRC: base + $n patches ($(git_t rev-parse --short HEAD))"

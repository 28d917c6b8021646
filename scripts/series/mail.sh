#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make series': write the mail-ready series to build/series/, one
# directory per cover letter in patches/cover/ (scripts/series/parts.sh): git
# format-patch --cover-letter of that part of build/linux applied to the
# bare base alone, signed off by the sender, with To/Cc on each patch
# from the tree's get_maintainer.pl and on the cover letter the union.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

# The sender signs every patch (the Developer's Certificate of Origin
# needs a real person): git's author identity, from user.name and
# user.email or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL. An address in a
# domain reserved for examples and tests (RFC 2606, RFC 6761), or
# GitHub's noreply one, stands for nobody: such an identity is a
# placeholder, like the one the patches in patches/ are committed with.
placeholder='@([^>]*\.)?(example(\.(com|net|org))?|invalid|test|localhost)>|@users\.noreply\.'
sender=$(git -C "$TOP" var GIT_AUTHOR_IDENT 2>/dev/null | sed 's/ [0-9]* [-+][0-9]*$//') || sender=
if [ -z "$sender" ] || grep -qE "$placeholder" <<<"$sender"; then
	# shellcheck disable=SC2016 # the single quotes are in double quotes
	die "no sender identity${sender:+ ('$sender' is a placeholder)}: the patches are signed off by whoever mails them; set yours with git config user.name 'Your Name' and git config user.email your@address (or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL), then run make series again"
fi
# 'make series' asks this first, before it assembles the tree.
[ "${1:-}" != --check-sender ] || exit 0
need_tree
. "$TOP/scripts/series/parts.sh"

DIR=$BUILD/series
rm -rf "$DIR"
mkdir -p "$DIR"
mail_groups

# The placeholder author (and the cover letter's placeholder sender)
# become the sender; authors and sign-offs of real people are kept.
unplaceholder() { # patch
	# A long From: header is folded onto continuation lines.
	perl -0pi -e 'BEGIN { ($who, $ph) = splice(@ARGV, 0, 2) }
		s/^(From|Signed-off-by): ([^\n]*(?:\n[ \t][^\n]*)*)/my ($k, $v) = ($1, $2); $v =~ m{$ph} ? "$k: $who" : "$k: $v"/gme' \
		"$sender" "$placeholder" "$1"
}
sign() { # patch
	unplaceholder "$1"
	git interpret-trailers --in-place --if-exists addIfDifferent \
		--trailer "Signed-off-by: $sender" "$1"
}
# address PATCH TO CC: puts the recipients above its Subject: line.
address() {
	sed -i "0,/^Subject:/s//To: $2\nCc: $3\nSubject:/" "$1"
}
# get_maintainer.pl looks up the commits a message names, which the base
# (a source package, no history) lacks: its complaints go to a log.
gm() {
	(cd "$SRC" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --norolestats --nokeywords "$@") \
		2>>"$DIR/get_maintainer.log"
}
# cover DIR LETTER HEAD: the cover letter's subject and text from
# patches/cover/, the checkpatch findings kept on purpose in its patches
# (base..HEAD), and its recipients: everyone its patches go to.
cover() {
	local c=$1/0000-cover-letter.patch letter=$2 text subj ex to cc
	subj=$(sed -n 's/^Subject: //p' "$letter")
	[ -n "$subj" ] || die "$letter has no 'Subject: <subject>' line"
	text=$(mktemp)
	{
		sed '1,/^$/d' "$letter"
		ex=$(grep -v '^#' "$TOP/configs/checkpatch-exceptions" | while IFS=$'\t' read -r type s reason; do
			git -C "$SRC" log --format=%s base.."$3" | grep -qxF -- "$s" &&
				printf '  %s: %s (%s)\n' "$s" "$type" "$reason"
		done || true)
		[ -z "$ex" ] || printf '\ncheckpatch findings kept on purpose:\n%s\n' "$ex"
	} >"$text"
	SUBJ=$subj perl -pi -e 's/\*\*\* SUBJECT HERE \*\*\*/$ENV{SUBJ}/' "$c"
	sed -i -e "/\*\*\* BLURB HERE \*\*\*/{r $text
d}" "$c"
	rm -f "$text"
	unplaceholder "$c"
	# The shortlog names authors without their address: a placeholder
	# author's patches are the sender's.
	git -C "$SRC" log --format='%an <%ae>' base.."$3" | sort -u | grep -E "$placeholder" |
		sed 's/ <.*//' | while IFS= read -r who; do
			WHO=$who NAME=${sender% <*} perl -pi -e 's/^\Q$ENV{WHO}\E( \(\d+\):)$/$ENV{NAME}$1/' "$c"
		done
	to=$(sed -n 's/^To: //p' "$1"/0*.patch | tr ',' '\n' | sort -u | grep . | paste -sd, -)
	cc=$(sed -n 's/^Cc: //p' "$1"/0*.patch | tr ',' '\n' | sort -u | grep . |
		grep -vxF -f <(echo "$to" | tr ',' '\n') | paste -sd, -)
	address "$c" "$to" "$cc"
}

for i in "${!MAIL_NAME[@]}"; do
	name=${MAIL_NAME[$i]} first=${MAIL_FIRST[$i]} last=${MAIL_LAST[$i]}
	head=$(mail_replay "$first" "$last") ||
		die "series $name (patches $first-$last) does not apply to the bare base alone"
	# A fix of one patch goes alone, without a cover letter.
	letter=--cover-letter
	[ "$first" != "$last" ] || letter=--no-cover-letter
	# The Message-Ids are made of the committer's address: the sender's.
	email=${sender##*<}
	GIT_COMMITTER_NAME=${sender% <*} GIT_COMMITTER_EMAIL=${email%>} \
		git -C "$SRC" format-patch -q $letter --thread --base=base -o "$DIR/$name" base.."$head"
	for p in "$DIR/$name"/[0-9]*.patch; do
		case "$p" in *0000-cover-letter.patch) continue ;; esac
		sign "$p"
		to=$(gm -m --nol --nor "$p" | paste -sd, -)
		cc=$(gm "$p" | grep -vxF -f <(echo "$to" | tr ',' '\n') | paste -sd, - || true)
		address "$p" "$to" "$cc"
	done
	if [ $letter = --no-cover-letter ]; then
		msg SERIES "$DIR/$name: series patch $first alone"
		continue
	fi
	cover "$DIR/$name" "$COVERS/$name" "$head"
	msg SERIES "$DIR/$name: cover letter + $((last - first + 1)) patches (series patches $first-$last)"
done
# Neither a placeholder address nor a placeholder author's name is left.
names=$(git -C "$SRC" log --format='%an <%ae>' base..HEAD | sort -u | grep -E "$placeholder" | sed 's/ <.*//' || true)
for f in "$DIR"/*/*.patch; do
	if grep -qE "$placeholder" "$f" || { [ -n "$names" ] && grep -qF "$names" "$f"; }; then
		die "a placeholder identity is still in $f"
	fi
done

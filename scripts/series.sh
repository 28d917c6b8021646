#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make series': write the mail-ready series to build/series/: git
# format-patch --cover-letter of build/linux (new files included), with
# To/Cc on each patch from the tree's get_maintainer.pl.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# The sender signs every patch (the Developer's Certificate of Origin
# needs a real person): git's author identity, from user.name and
# user.email or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL. An address in a
# domain reserved for examples and tests (RFC 2606, RFC 6761), or
# GitHub's noreply one, stands for nobody: such an identity is a
# placeholder, like the one the patches in patches/ are committed with.
placeholder='@([^>]*\.)?(example(\.(com|net|org))?|invalid|test|localhost)>|@users\.noreply\.'
sender=$(git -C "$TOP" var GIT_AUTHOR_IDENT 2>/dev/null | sed 's/ [0-9]* [-+][0-9]*$//') || sender=
if [ -z "$sender" ] || grep -qE "$placeholder" <<<"$sender"; then
	die "no sender identity${sender:+ ('$sender' is a placeholder)}: the patches are signed off by whoever mails them; set yours with git config user.name 'Your Name' and git config user.email your@address (or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL), then run make series again"
fi
# 'make series' asks this first, before it assembles the tree.
[ "${1:-}" != --check-sender ] || exit 0
need_tree

DIR=$BUILD/series
rm -rf "$DIR"
n=$(git -C "$SRC" rev-list --count base..HEAD)
[ "$n" -gt 0 ] || die "no patches in $SRC (base..HEAD is empty)"
git -C "$SRC" format-patch -q --cover-letter --thread --base=base -o "$DIR" base..HEAD
# The placeholder author and sign-off become the sender's; authors and
# sign-offs of real people are kept. Nothing with a placeholder address
# may be left.
for p in "$DIR"/[0-9]*.patch; do
	# A long From: header is folded onto continuation lines.
	perl -0pi -e 'BEGIN { ($who, $ph) = splice(@ARGV, 0, 2) }
		s/^(From|Signed-off-by): ([^\n]*(?:\n[ \t][^\n]*)*)/my ($k, $v) = ($1, $2); $v =~ m{$ph} ? "$k: $who" : "$k: $v"/gme' \
		"$sender" "$placeholder" "$p"
	case "$p" in *0000-cover-letter.patch) continue ;; esac
	git interpret-trailers --in-place --if-exists addIfDifferent \
		--trailer "Signed-off-by: $sender" "$p"
done
if grep -lE "$placeholder" "$DIR"/*.patch >/dev/null; then
	die "a placeholder identity is still in $(grep -lE "$placeholder" "$DIR"/*.patch | head -n 1)"
fi

# Per-patch recipients: maintainers and lists of the files each touches.
for p in "$DIR"/[0-9]*.patch; do
	case "$p" in *0000-cover-letter.patch) continue ;; esac
	gm() { (cd "$SRC" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --norolestats --nokeywords "$@"); }
	to=$(gm -m --nol --nor "$p")
	cc=$(gm "$p" | grep -vxF "$to" || true)
	to=$(echo "$to" | paste -sd, -)
	cc=$(echo "$cc" | paste -sd, -)
	sed -i "0,/^Subject:/s//To: $to\nCc: $cc\nSubject:/" "$p"
done

# The cover letter: subject, what the series does, the patch list with
# their one-line summaries (format-patch adds the shortlog and diffstat),
# the accepted checkpatch exceptions, and where the numbers come from.
cover=$DIR/0000-cover-letter.patch
blurb=$(mktemp)
{
	echo "This series makes arm64 emit the generic page fault trace events,"
	echo "wires arm64 into the generic frame pointer user unwinder so that"
	echo "perf's deferred user callchains work there, and lets Arm SPE and"
	echo "CoreSight ask for large AUX chunks without bringing back the direct"
	echo "reclaim and compaction that made order-0 the default: high-order"
	echo "attempts for PMUs that only prefer large chunks take a free block or"
	echo "fall back at once. Selftests, KUnit suites and documentation cover"
	echo "each part."
	echo
	echo "Tested in 2 CPU QEMU guests (arm64 -M virt -cpu max, and x86_64 as"
	echo "the reference): every selftest and KUnit case passes; each patch is"
	echo "checkpatch --strict clean and the tree builds without warnings after"
	echo "each one, for both; W=1 and sparse (0.6.4, with __typeof_unqual__"
	echo "read as __typeof__) find nothing new in the touched files."
	echo "Numbers, from QEMU -icount runs: with the events off, do_page_fault()"
	echo "is within the run-to-run spread of v7.3.4; on memory with no free"
	echo "block above order 3, a 16 MiB PREFER_LARGE AUX buffer costs 0 direct"
	echo "reclaims and compactions, against 3530 and 6674 without the"
	echo "allocation policy. Each commit message says how its numbers were"
	echo "produced."
	ex=$(grep -v '^#' "$TOP/configs/checkpatch-exceptions" | awk -F'\t' 'NF >= 3 { printf "  %s: %s (%s)\n", $2, $1, $3 }')
	if [ -n "$ex" ]; then
		echo
		echo "checkpatch findings kept on purpose:"
		echo "$ex"
	fi
} >"$blurb"
sed -i -e "s/\*\*\* SUBJECT HERE \*\*\*/arm64: page fault tracepoints, deferred user callchains, large AUX buffers/" \
	-e "/\*\*\* BLURB HERE \*\*\*/{r $blurb
d}" "$cover"
rm -f "$blurb"
msg SERIES "$DIR: cover letter + $n patches"

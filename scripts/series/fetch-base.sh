#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the pinned base kernel (Debian's linux-source-7.3) into build/base/,
# verify its checksums and leave the tarball there for 'make tree'.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

PKG=linux-source-7.3
VERSION=7.3.4-1~bpo13+1
SUITE=trixie-backports
DEB_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
TAR_SHA256=76df1affb19f24926949369be1d74b60071c963c598ce8780bddd4bbf0fc3bc4

DIR=$BUILD/base
TARBALL=$DIR/$PKG.tar.xz
RECORD=$DIR/BASE	# which package the cached tarball came from

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# A cached base is checked again: a tree is never built from a damaged one.
if [ -f "$TARBALL" ] && [ -f "$RECORD" ]; then
	want=$(sed -n 's/.* sha256=//p' "$RECORD")
	got=$(sha_of "$TARBALL")
	[ "$got" = "$want" ] ||
		die "the cached base $TARBALL fails its checksum: got $got, want $want (from $RECORD). Remove $DIR and rerun to fetch it again."
	exit 0
fi
mkdir -p "$DIR"

# The machine's Debian archive: "URI keyring" of its first source that is
# not the security archive, from deb822 files (*.sources) or one-line
# lists (sources.list, *.list), whichever the machine uses.
debian_mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
		     { uri = ""; key = ""
		       for (i = 1; i <= NF; i++) {
			 if ($i ~ /^URIs:/) { split($i, w, " "); uri = w[2] }
			 if ($i ~ /^Signed-By:/) { split($i, w, " "); key = w[2] }
		       }
		       if (uri != "" && uri !~ /security/) { print uri, key; exit } }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n -E '/^deb[[:space:]]/ { /security/d
			s/^deb[[:space:]]+(\[([^]]*)\][[:space:]]+)?([^[:space:]]+).*/\3 \2/p }' "$f" |
			sed -E 's/ .*signed-by=([^[:space:]]+).*/ \1/; s/ [^/].*$/ /'
	done
}

# Make the suite reachable. URIs and Signed-By come from the machine's own
# Debian source so that no host name lives in this repository.
add_suite() {
	local uris keyring
	grep -rqs "$SUITE" /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	need_root "adding the $SUITE apt source"
	read -r uris keyring < <(debian_mirror | head -n 1) || true
	[ -n "${uris:-}" ] ||
		die "no Debian archive in /etc/apt/sources.list or /etc/apt/sources.list.d/: cannot tell which mirror to use for $SUITE"
	msg APT "adding $SUITE (from $uris) to /etc/apt/sources.list.d/$SUITE.sources"
	{
		echo "Types: deb"
		echo "URIs: $uris"
		echo "Suites: $SUITE"
		echo "Components: main"
		[ -n "$keyring" ] && echo "Signed-By: $keyring"
	} >"/etc/apt/sources.list.d/$SUITE.sources"
	apt-get update -qq >/dev/null || die "apt-get update failed after adding $SUITE"
}

command -v apt-get >/dev/null || die "apt-get not found: the base comes from Debian's archive; run on Debian"
add_suite
if ! apt-cache madison "$PKG" 2>/dev/null | grep -q .; then
	need_root "apt-get update"
	apt-get update -qq >/dev/null
fi

tmp=$(mktemp -d "$DIR/dl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

pinned=1
if apt-cache madison "$PKG" | awk '{print $3}' | grep -qxF "$VERSION"; then
	want=$VERSION
else
	want=$(apt-cache madison "$PKG" | awk '{print $3}' | sort -V | tail -n1)
	[ -n "$want" ] || die "no $PKG in any apt source, even after adding $SUITE"
	pinned=0
	warn "$PKG $VERSION is gone from the archive; FALLING BACK to $want." \
	     "Results are NOT from the pinned base; $RECORD says which base was used."
fi

msg FETCH "$PKG=$want"
(cd "$tmp" && apt-get download -qq "$PKG=$want" 2>&1 | grep -v 'unsandboxed' || true)
deb=$(find "$tmp" -maxdepth 1 -name "*.deb" | head -n 1)
[ -n "$deb" ] || die "apt-get download $PKG=$want produced no .deb"

if [ "$pinned" = 1 ]; then
	got=$(sha_of "$deb")
	[ "$got" = "$DEB_SHA256" ] ||
		die "checksum mismatch for $(basename "$deb"): got $got, want $DEB_SHA256. Nothing was kept; check the mirror, then retry."
fi

dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/src/$PKG.tar.xz" ||
	die "$(basename "$deb") holds no usr/src/$PKG.tar.xz"
if [ "$pinned" = 1 ]; then
	got=$(sha_of "$tmp/usr/src/$PKG.tar.xz")
	[ "$got" = "$TAR_SHA256" ] ||
		die "checksum mismatch for $PKG.tar.xz inside the .deb: got $got, want $TAR_SHA256"
fi

mv "$tmp/usr/src/$PKG.tar.xz" "$TARBALL"
mv "$deb" "$DIR/"
echo "$PKG $want pinned=$pinned sha256=$(sha_of "$TARBALL")" >"$RECORD"
msg BASE "$(cat "$RECORD")"

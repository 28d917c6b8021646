#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest initramfs for ARCH: Debian's busybox-static for $DEBARCH,
# the installed kselftests, our guest programs (scripts/guest/) and init.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check_arch

DEBS=$BUILD/debs/$DEBARCH
ROOT=$OUT/rootfs
KSFT=$OUT/kselftest/kselftest_install
[ -x "$KSFT/run_kselftest.sh" ] || die "no kselftests in $KSFT; run 'make selftests ARCH=$ARCH' first"

# Debian packages for the guest, downloaded once and kept in build/debs.
fetch_deb() {
	local pkg=$1
	ls "$DEBS/${pkg}"_*.deb >/dev/null 2>&1 && return 0
	mkdir -p "$DEBS"
	chmod 755 "$DEBS"
	msg FETCH "$pkg:$DEBARCH"
	(cd "$DEBS" && apt-get download -qq "$pkg:$DEBARCH" 2>&1 | grep -v unsandboxed || true)
	ls "$DEBS/${pkg}"_*.deb >/dev/null 2>&1 ||
		die "apt-get download $pkg:$DEBARCH failed; run 'make deps ARCH=$ARCH' (adds the $DEBARCH architecture) and retry"
}

rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc}
fetch_deb busybox-static
dpkg-deb -x "$DEBS"/busybox-static_*.deb "$OUT/busybox.x"
cp "$OUT/busybox.x/bin/busybox" "$ROOT/bin/busybox"
rm -rf "$OUT/busybox.x"
ln -s busybox "$ROOT/bin/sh"

cp -a "$KSFT" "$ROOT/kselftest"
# configs/kselftests: the lines for every arch and those NAME@$ARCH.
sed -e 's/#.*//' "$TOP/configs/kselftests" |
	awk -v arch="$ARCH" 'NF { n = split($1, a, "@"); if (n == 1 || a[2] == arch) print a[1] }' \
	>"$ROOT/kselftest/harness-tests"
install -m 755 "$TOP/scripts/guest/init" "$ROOT/init"
if [ -x "$OUT/perf/perf" ]; then
	"${CROSS_COMPILE}strip" -o "$ROOT/usr/bin/perf" "$OUT/perf/perf"
else
	warn "no perf for $ARCH ($OUT/perf/perf); 'make perf' builds it"
fi
# With the UAPI headers of the kernel they run on, not the C library's.
for src in "$TOP"/scripts/guest/*.c; do
	"${CROSS_COMPILE}gcc" -static -O2 -Wall -Werror -isystem "$OUT/usr/include" \
		-fno-omit-frame-pointer \
		-mno-omit-leaf-frame-pointer -o "$ROOT/usr/bin/$(basename "$src" .c)" "$src" ||
		die "cannot build $src for $ARCH"
done
# Programs under development: anything in $OUT/extra/ lands in /usr/bin,
# and 'run-guest.sh NAME' runs it as the guest's harness.mode.
if [ -d "$OUT/extra" ]; then
	for prog in "$OUT"/extra/*; do
		[ -f "$prog" ] && install -m 755 "$prog" "$ROOT/usr/bin/"
	done
fi
for f in "$TOP"/scripts/guest/*.sh; do
	install -m 755 "$f" "$ROOT/usr/bin/$(basename "$f" .sh)"
done

(cd "$ROOT" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$OUT/initramfs.cpio.gz"
msg ROOTFS "$OUT/initramfs.cpio.gz ($(du -h "$OUT/initramfs.cpio.gz" | cut -f1))"

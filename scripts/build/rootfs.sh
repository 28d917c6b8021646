#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest initramfs for ARCH: Debian's busybox-static for $DEBARCH,
# the installed kselftests, our guest programs (scripts/guest/) and init.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch

DEBS=$BUILD/debs/$DEBARCH
ROOT=$OUT/rootfs
KSFT=$OUT/kselftest/kselftest_install
[ -x "$KSFT/run_kselftest.sh" ] || die "no kselftests in $KSFT; run 'make selftests ARCH=$ARCH' first"

# Debian packages for the guest, downloaded once and kept in build/debs.
fetch_deb() {
	local pkg=$1 apt=apt-get
	ls "$DEBS/${pkg}"_*.deb >/dev/null 2>&1 && return 0
	mkdir -p "$DEBS"
	chmod 755 "$DEBS"
	[ -n "${DEB_SUITE:-}" ] && apt="debian_apt $DEB_SUITE"
	msg FETCH "$pkg:$DEBARCH${DEB_SUITE:+ (Debian $DEB_SUITE)}"
	(cd "$DEBS" && $apt download -qq "$pkg:$DEBARCH" 2>&1 | grep -v unsandboxed || true)
	ls "$DEBS/${pkg}"_*.deb >/dev/null 2>&1 ||
		die "apt-get download $pkg:$DEBARCH failed; run 'make deps ARCH=$ARCH' (adds the $DEBARCH architecture) and retry"
}

rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc}
fetch_deb busybox-static
dpkg-deb -x "$DEBS"/busybox-static_*.deb "$OUT/busybox.x"
# /bin until Debian 12, /usr/bin from Debian 13 (merged /usr)
cp "$(find "$OUT/busybox.x" -path "*bin/busybox" -type f | head -n 1)" "$ROOT/bin/busybox"
rm -rf "$OUT/busybox.x"
ln -s busybox "$ROOT/bin/sh"
# The accounts a distribution has at least: ftracetest's mount-option
# tests look for a group other than root's.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
	>"$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOT/etc/group"

cp -a "$KSFT" "$ROOT/kselftest"
# configs/suites, this arch's part for the guest's init: SUITE, all or
# named (a suite of one run of the arch, which names it), RUN. A kselftest
# its Makefile does not build for this arch is left out, and said so
# (configs/suites says where a suite must report).
suites "$ARCH" | while IFS='	' read -r suite when run; do
	if [ "$run" = kselftest ] && ! grep -qx "$suite" "$KSFT/kselftest-list.txt"; then
		msg SKIP "$suite: not built for $ARCH" >&2
	elif [ "$run" != kunit ]; then
		printf '%s\t%s\t%s\n' "$suite" "$when" "$run"
	fi
done >"$ROOT/kselftest/harness-suites"
install -m 755 "$TOP/scripts/guest/init" "$ROOT/init"
if [ -n "${NO_PERF:-}" ]; then
	msg PERF "none for $ARCH: $NO_PERF"
elif [ -x "$OUT/perf/perf" ]; then
	# Without its DWARF, which makes perf script look source lines up
	# (with an addr2line the guest lacks), but with its symbols: perf
	# test's own workloads are found by name (perf_has_symbol.sh).
	"${CROSS_COMPILE}strip" --strip-debug -o "$ROOT/usr/bin/perf" "$OUT/perf/perf"
	# perf test's shell tests, where an installed perf has them.
	mkdir -p "$ROOT/usr/libexec/perf-core/tests"
	cp -r "$SRC/tools/perf/tests/shell" "$ROOT/usr/libexec/perf-core/tests/"
else
	warn "no perf for $ARCH ($OUT/perf/perf); 'make perf' builds it"
fi
# With the UAPI headers of the kernel they run on, not the C library's.
# Frame pointers in leaf functions too, where the compiler can (gcc 12
# cannot on riscv64).
leaf=-mno-omit-leaf-frame-pointer
"${CROSS_COMPILE}gcc" $leaf -E -x c /dev/null >/dev/null 2>&1 || leaf=
for src in "$TOP"/scripts/guest/*.c; do
	"${CROSS_COMPILE}gcc" -static -O2 -Wall -Werror -isystem "$OUT/usr/include" \
		-fno-omit-frame-pointer \
		$leaf -o "$ROOT/usr/bin/$(basename "$src" .c)" "$src" ||
		die "cannot build $src for $ARCH"
done
# callchain once more, linked against the C library as distributions link
# their programs, with debug information (the distro guest's tests run it
# in Debian's root, and look up its source lines).
"${CROSS_COMPILE}gcc" -O2 -g -Wall -Werror -fno-omit-frame-pointer $leaf \
	-o "$ROOT/usr/bin/callchain-dyn" "$TOP/scripts/guest/callchain.c" ||
	die "cannot build callchain.c for $ARCH with the C library"
# The Documentation page's examples, which the distro guest runs as tests.
python3 "$TOP/scripts/build/doc-examples.py" "$SRC/Documentation/trace/events-page-fault.rst" \
	"$ROOT/usr/share/doc-examples" >/dev/null || die "no examples in the Documentation page"
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

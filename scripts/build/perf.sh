#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build perf for the ARCH guest from the assembled tree's tools/perf, linked
# statically against Debian's $DEBARCH libraries (libtraceevent, libelf,
# libdw, zlib, zstd, lzma, bzip2), so it matches the kernel and needs
# nothing in the initramfs.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree
if [ -n "${NO_PERF:-}" ]; then
	msg PERF "none for $ARCH: $NO_PERF"
	exit 0
fi

build_lock
PERF_OUT=$OUT/perf
mkdir -p "$PERF_OUT" "$OUT/bin"

# Cross builds look libraries up with <prefix>pkg-config; Debian ships no
# such wrapper for every triplet, so point pkg-config at the multiarch dirs.
triplet=$(dpkg-architecture -a "$DEBARCH" -qDEB_HOST_MULTIARCH 2>/dev/null)
pc=$OUT/bin/$triplet-pkg-config
cat >"$pc" <<EOT
#!/bin/sh
PKG_CONFIG_LIBDIR=/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig exec pkg-config --static "\$@"
EOT
chmod +x "$pc"
"$pc" --exists libtraceevent libelf libdw zlib ||
	die "$pc finds no libtraceevent, libelf, libdw or zlib for $DEBARCH; run scripts/build/deps.sh (ARCH=$ARCH)"

# perf is built from tools/ alone (tools/testing aside). If those
# directories have the content (git's tree objects) they had at the last
# build, with this script and the same compiler and libraries, that build
# stands: most mutants and reruns change nothing there. Uncommitted
# changes there always build.
stamp=$PERF_OUT/.built-from
perf_tools_dirty() { git -C "$SRC" status --porcelain -- tools ':!tools/testing'; }
want=$({
	git -C "$SRC" ls-tree HEAD tools/ | grep -v $'\ttools/testing$'
	sha256sum <"$TOP/scripts/build/perf.sh"
	"${CROSS_COMPILE}gcc" --version | head -n 1
	"$pc" --modversion libtraceevent libelf libdw zlib
} 2>&1)
if [ -x "$PERF_OUT/perf" ] && [ -z "$(perf_tools_dirty)" ] &&
	[ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	msg PERF "$ARCH: tools/ unchanged since $PERF_OUT/perf was built: kept"
	exit 0
fi
rm -f "$stamp"
# Where nothing is built yet, the perf another clone kept from the same
# tools/ (lib.sh's build_take).
kept=perf-$KEPT key=
[ -z "$(perf_tools_dirty)" ] && key=$(sha256sum <<<"$want" | cut -d' ' -f1)
if [ ! -e "$PERF_OUT/perf" ] && build_take "$kept" "$key" "$PERF_OUT"; then
	echo "$want" >"$stamp"
	msg PERF "$ARCH: $PERF_OUT/perf as built before from this tools/ ($BUILDS)"
	exit 0
fi

# NO_JEVENTS: the tables of CPU-specific PMU events need a python that
# perf finds through python-config (python3-dev), and a QEMU guest has
# only the architected events, which perf knows without them.
msg PERF "$ARCH: tools/perf -> $PERF_OUT/perf"
if ! with_progress "$ARCH perf" "$PERF_OUT/build.log" make -C "$SRC/tools/perf" O="$PERF_OUT" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" \
	PKG_CONFIG="$pc" NO_JEVENTS=1 LDFLAGS=-static -j"$(nproc)" \
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_GTK2=1 NO_SLANG=1 NO_LIBUNWIND=1 \
	NO_LIBBPF=1 BUILD_BPF_SKEL=0 NO_LIBNUMA=1 NO_LIBCAP=1 \
	NO_BABELTRACE=1 NO_LIBCRYPTO=1 NO_JVMTI=1 NO_LIBLLVM=1 NO_CAPSTONE=1 \
	NO_LIBPFM4=1 NO_SDT=1 NO_LIBBABELTRACE=1 NO_RUST=1 "$PERF_OUT/perf"; then
	tail -n 30 "$PERF_OUT/build.log" >&2
	die "perf build failed; full log: $PERF_OUT/build.log"
fi
grep -qx 'feature-libtraceevent=1' "$PERF_OUT/FEATURE-DUMP" ||
	die "perf was built without libtraceevent (tracepoints would not parse); see $PERF_OUT/build.log"
grep -qx 'feature-libdw=1' "$PERF_OUT/FEATURE-DUMP" ||
	die "perf was built without libdw (perf script could not unwind through DWARF: install libdw-dev:$DEBARCH); see $PERF_OUT/build.log"
file "$PERF_OUT/perf" | grep -q 'statically linked' ||
	die "$PERF_OUT/perf is not statically linked; see $PERF_OUT/build.log"
[ -n "$(perf_tools_dirty)" ] || echo "$want" >"$stamp"
build_keep "$kept" "$key" "$PERF_OUT" perf FEATURE-DUMP

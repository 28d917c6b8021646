# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the harness scripts: paths, ARCH handling, messages.
# Sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/linux

msg()  { printf '  %-8s %s\n' "$1" "$2"; }
warn() { printf '\n*** WARNING: %s\n\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# The kselftest collections built into the guests: those configs/kselftests
# names, plus ftrace for ftracetest.
KSELFTEST_TARGETS=${KSELFTEST_TARGETS:-$(sed -e 's/#.*//' -e 's/:.*//' "$TOP/configs/kselftests" |
	awk 'NF' | sort -u | tr '\n' ' ')ftrace}

# The architectures the harness knows. Each maps to a cross prefix,
# a kernel image and a QEMU system emulator.
SUPPORTED_ARCHES="arm64 x86_64"

check_arch() {
	case "${ARCH:-}" in
	arm64)
		CROSS_COMPILE=aarch64-linux-gnu-
		KARCH=arm64
		DEBARCH=arm64
		IMAGE=arch/arm64/boot/Image
		QEMU=qemu-system-aarch64
		;;
	x86_64)
		CROSS_COMPILE=
		KARCH=x86_64
		DEBARCH=amd64
		IMAGE=arch/x86/boot/bzImage
		QEMU=qemu-system-x86_64
		;;
	*)
		die "unknown ARCH='${ARCH:-}'; supported: $SUPPORTED_ARCHES (e.g. make check ARCH=arm64)"
		;;
	esac
	OUT=$BUILD/out/$ARCH
	# VARIANT=base: the pinned base without the series (a worktree of
	# build/linux at tag 'base'), for side-by-side measurements.
	if [ "${VARIANT:-series}" = base ]; then
		SRC=$BUILD/linux-base
		OUT=$BUILD/out/$ARCH-base
		if [ ! -d "$SRC" ]; then
			[ -d "$BUILD/linux/.git" ] || die "no assembled tree at $BUILD/linux; run 'make tree' first"
			git -C "$BUILD/linux" worktree add -q --detach "$SRC" base
		fi
	fi
	# VARIANT=debug: the series with configs/debug.config on top (lockdep,
	# KASAN, UBSAN, KFENCE, kmemleak, ...), in its own output directory.
	case "${VARIANT:-series}" in
	series|base) ;;
	debug)
		OUT=$BUILD/out/$ARCH-debug
		CONFIG_EXTRA=debug
		export CONFIG_EXTRA
		;;
	*) die "unknown VARIANT='$VARIANT'; supported: series base debug" ;;
	esac
	export ARCH SRC CROSS_COMPILE KARCH DEBARCH IMAGE QEMU OUT
}

need_root() {
	[ "$(id -u)" = 0 ] || die "$1 needs root (it runs apt-get); run it as root or install the packages listed in scripts/deps.sh by hand"
}

# One big build at a time on this machine (kernel and perf builds each use
# every core): take the build lock, held until the calling script exits.
build_lock() {
	mkdir -p "$BUILD"
	exec 9>"$BUILD/.build.lock"
	flock 9
}

# Everything a guest of ARCH boots: packages, kernel, selftests, perf and
# the initramfs, in order. On failure FAILED_STEP names the step.
build_guest() {
	local s
	for s in deps build-kernel build-selftests build-perf build-rootfs; do
		"$TOP/scripts/$s.sh" || { FAILED_STEP=$s; return 1; }
	done
}

# make in the kernel tree for ARCH, out of tree in $OUT, with ccache and a
# reproducible build stamp. kbuild_env first, once.
kbuild_env() {
	export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
	export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-2026-01-01}
	export KBUILD_BUILD_USER=harness KBUILD_BUILD_HOST=harness
	KCC=${CROSS_COMPILE}gcc
	command -v "$KCC" >/dev/null || die "$KCC not found; run 'make deps ARCH=$ARCH' (as root)"
	command -v ccache >/dev/null && KCC="ccache $KCC"
	return 0
}
kmake() {
	make -s -C "$SRC" O="$OUT" ARCH="$ARCH" CROSS_COMPILE="$CROSS_COMPILE" \
		CC="$KCC" -j"$(nproc)" "$@"
}

need_tree() {
	[ -e "$SRC/.git" ] || die "no assembled tree at $SRC; run 'make tree' first"
}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # read by the scripts that source it
# arm64, the subject of the series. Every fact the harness knows about an
# architecture lives in a file like this one, read by check_arch (lib.sh).

# Cross compiler prefix, kbuild ARCH, Debian architecture, kernel image.
CROSS_COMPILE=aarch64-linux-gnu-
# The AArch32 compiler of the selftests' compat program (the kernel's name).
CROSS_COMPILE_COMPAT=arm-linux-gnueabihf-
KARCH=arm64
DEBARCH=arm64
IMAGE=arch/arm64/boot/Image
# The emulator and the machine it emulates. pauth-impdef: QEMU's cheap PAuth
# hash; the architected one is very slow under TCG and the tests do not
# depend on it.
QEMU=qemu-system-aarch64
QEMU_MACHINE=(-M virt -cpu "max,pauth-impdef=on")
CONSOLE=ttyAMA0
# The disk device: the distro run's Debian root, make bench's fragmentation
# runs (configs/arm64-frag.config).
QEMU_DISK=virtio-blk-device
# Host packages, as "command:package" for those the harness runs and plain
# names for the rest (headers, libraries, firmware).
ARCH_PKGS=(aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	   arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
	   qemu-system-aarch64:qemu-system-arm)

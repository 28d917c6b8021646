# SPDX-License-Identifier: GPL-2.0
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
QEMU_MACHINE=(-M virt -cpu max,pauth-impdef=on)
CONSOLE=ttyAMA0
# The disk device: the distro run's Debian root, make bench's fragmentation
# runs (configs/arm64-frag.config).
QEMU_DISK=virtio-blk-device
# Host packages, as "command:package" for those the harness runs and plain
# names for the rest (headers, libraries, firmware).
ARCH_PKGS=(aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	   arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
	   qemu-system-aarch64:qemu-system-arm)
# The guest boots 'make check' gives this arch (scripts/check.sh): the
# suites, the suites again on the debug kernel built with 64 KiB pages
# (one boot proves both; make check-debug has the 4 KiB debug kernel),
# and the distro run: Debian's perf, trace-cmd and bpftrace in Debian's
# root on a disk (scripts/build-distro.sh). 'make check-full' adds the
# stress run: the suites again and again, a fault storm, hostile stacks.
CHECK_RUNS="check 64k distro"
FULL_RUNS="check stress 64k distro"
# After each patch 'make check' compiles the objects of the C files the
# series touches (scripts/patch-builds.sh); 'make check-full' builds the
# whole kernel after each patch. The series changes headers that most of
# the kernel includes (sched.h, perf_event.h): the whole kernel after
# every patch costs three near-full builds, and the directories of the
# series' files (scope 'dirs') 300 objects each time, most of a cold
# 'make check' on a 2-core machine. A patch's own files, and the series'
# files that include what it changes, are where it breaks the build.
PATCH_BUILDS_SCOPE=files

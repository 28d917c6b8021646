# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # read by the scripts that source it
# riscv64, the third arch: it has emitted the page fault events since
# before the series, which converts it to page_fault_enter(). See arm64.sh
# for what each name means.

CROSS_COMPILE=riscv64-linux-gnu-
KARCH=riscv
DEBARCH=riscv64
IMAGE=arch/riscv/boot/Image
QEMU=qemu-system-riscv64
# OpenSBI from Debian's opensbi package as the firmware, named rather than
# left to QEMU's search path.
QEMU_MACHINE=(-M virt -cpu rv64 -bios /usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin)
CONSOLE=ttyS0
ARCH_PKGS=(riscv64-linux-gnu-gcc:gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
	   qemu-system-riscv64:qemu-system-misc opensbi)
# Debian 12 has no riscv64 packages (riscv64 became a release architecture
# with Debian 13): the guest's busybox comes from that release, fetched
# with an apt of its own under build/ (scripts/build/rootfs.sh), and the
# guest has no perf (it would link Debian's riscv64 libraries).
DEB_SUITE=trixie
NO_PERF="Debian 12 has no riscv64 libraries to link perf with"

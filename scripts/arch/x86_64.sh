# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # read by the scripts that source it
# x86_64, the upstream reference: it has the events and the user unwinder.
# See arm64.sh for what each name means.

CROSS_COMPILE=
KARCH=x86_64
DEBARCH=amd64
IMAGE=arch/x86/boot/bzImage
QEMU=qemu-system-x86_64
QEMU_MACHINE=(-cpu max)
CONSOLE=ttyS0
# The distro run's disk (Debian's root), on the PCI bus.
QEMU_DISK=virtio-blk-pci
ARCH_PKGS=(qemu-system-x86_64:qemu-system-x86)

# SPDX-License-Identifier: GPL-2.0
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
# Only the suites in 'make check': the series adds no x86 code, and the
# generic code it changes runs in the arm64 stress and debug boots
# ('make check-debug ARCHES=x86_64' or GUEST_RUNS="check stress debug"
# still give x86_64 the others).
CHECK_RUNS="check distro"
# Builds after each patch only in 'make check-full' (the whole kernel
# there): the series changes one x86 file, which the x86 kernel of the
# series, built whole for its guest, compiles; the generic code of every
# patch is built after each patch on arm64 in 'make check'.
PER_PATCH_BUILDS=full

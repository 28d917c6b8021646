#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the ARCH kernel with the initramfs in QEMU, in harness.mode=$1
# (check or demo), under a hard timeout; keep the whole serial log in
# build/logs/$ARCH/$1.log. Exit 0 only if the guest reached its end marker.
# ICOUNT=1 boots with -icount shift=0 (exact guest instruction counts).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check_arch

mode=${1:?usage: run-guest.sh check|demo}
TIMEOUT=${TIMEOUT:-900}
LOGDIR=$BUILD/logs/$ARCH
name=$mode
[ "${VARIANT:-series}" != series ] && name+=-$VARIANT
[ "${ICOUNT:-0}" = 1 ] && name+=-icount
LOG=$LOGDIR/${GUEST_LOG:-$name}.log
kernel=$OUT/$IMAGE
# One user space for every kernel variant of an arch.
initrd=$BUILD/out/$ARCH/initramfs.cpio.gz
for f in "$kernel" "$initrd"; do
	[ -f "$f" ] || die "$f missing; run 'make kernel rootfs ARCH=$ARCH' first"
done
# The kernel's own modules (scripts/build/kernel.sh), appended: the kernel
# unpacks one cpio archive after the other.
if [ -f "$OUT/modules.cpio.gz" ]; then
	cat "$initrd" "$OUT/modules.cpio.gz" >"$OUT/initrd.cpio.gz"
	initrd=$OUT/initrd.cpio.gz
fi
command -v "$QEMU" >/dev/null || die "$QEMU not found; run 'make deps ARCH=$ARCH' (as root)"

qemu_args
args=("${QEMU_ARGS[@]}" -m 2048 -smp 2 -kernel "$kernel" -initrd "$initrd" -serial "file:$LOG")
append="console=$CONSOLE panic=-1 oops=panic loglevel=4 harness.mode=$mode ${GUEST_APPEND:-}"
# GUEST_SUITES="SUITE ...": check mode runs only those suites (the
# guest's harness.suites=; mutants.sh): no KUnit unless one is named.
[ -n "${GUEST_SUITES:-}" ] && append+=" harness.suites=$(echo "$GUEST_SUITES" | xargs | tr ' ' ,)"
# The built-in KUnit suites run at boot in 'check' mode, but not on the
# series' kernel of UPSTREAM_ARCHES (lib.sh), where kunit.py runs them
# (scripts/check/kunit.sh). KUNIT_FILTER=GLOB runs those that match in any
# mode ('make bench').
if [ -n "${KUNIT_FILTER:-}" ]; then
	append+=" kunit.filter_glob=$KUNIT_FILTER"
elif [ "$mode" != check ] ||
	[[ "${VARIANT:-series}" = series && " $UPSTREAM_ARCHES " == *" $ARCH "* ]] ||
	[[ -n "${GUEST_SUITES:-}" && " $GUEST_SUITES" != *" kunit:"* ]]; then
	append+=" kunit.enable=0"
fi
[ "${ICOUNT:-0}" = 1 ] && args+=(-icount shift=0)
# GUEST_DISK=FILE: FILE as the guest's read-only disk (/dev/vda).
if [ -n "${GUEST_DISK:-}" ]; then
	[ -n "${QEMU_DISK:-}" ] || die "GUEST_DISK: $ARCH has no disk device (QEMU_DISK in scripts/arch/$ARCH.sh)"
	[ -r "$GUEST_DISK" ] || die "GUEST_DISK: cannot read $GUEST_DISK"
	args+=(-drive "if=none,format=raw,readonly=on,id=disk0,file=$GUEST_DISK" -device "$QEMU_DISK,drive=disk0")
fi

mkdir -p "$LOGDIR"
[ -f "$LOG" ] && mv -f "$LOG" "$LOG.old"
msg BOOT "$ARCH guest, mode=$mode, timeout ${TIMEOUT}s, log $LOG"
rc=0
timeout -k 10 "$TIMEOUT" "$QEMU" "${args[@]}" -append "$append" </dev/null || rc=$?
if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "FAIL: $ARCH guest timed out after ${TIMEOUT}s (hung?); serial log: $LOG" >&2
	exit 1
fi
[ $rc = 0 ] || { echo "FAIL: $QEMU exited with $rc; serial log: $LOG" >&2; exit 1; }
if ! grep -q '^HARNESS: end' "$LOG"; then
	echo "FAIL: $ARCH guest stopped before the end of its run (panic?); serial log: $LOG" >&2
	grep -m1 -A20 -E 'Kernel panic|Unable to handle|BUG:|Oops' "$LOG" >&2 || tail -n 20 "$LOG" >&2
	exit 1
fi

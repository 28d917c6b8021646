#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build and install the kselftests for ARCH, statically linked, from the
# assembled tree into build/out/$ARCH/kselftest/kselftest_install.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree

TARGETS=$KSELFTEST_TARGETS
[ -f "$OUT/usr/include/linux/perf_event.h" ] ||
	die "no UAPI headers in $OUT/usr/include; run 'make kernel ARCH=$ARCH' first"

msg KSFT "$TARGETS"
# FORCE_TARGETS=1: a program that does not compile fails the build; by
# default kselftest drops its whole collection and carries on.
rm -rf "$OUT/kselftest/kselftest_install"
if ! with_progress "$ARCH kselftests" "$OUT/kselftest.log" \
	make -C "$SRC/tools/testing/selftests" O="$OUT" ARCH="$KARCH" \
	CROSS_COMPILE="$CROSS_COMPILE" ${CROSS_COMPILE_COMPAT:+CROSS_COMPILE_COMPAT="$CROSS_COMPILE_COMPAT"} \
	TARGETS="$TARGETS" USERLDFLAGS=-static FORCE_TARGETS=1 \
	-j"$(nproc)" install; then
	tail -n 30 "$OUT/kselftest.log" >&2
	die "kselftest build failed; full log: $OUT/kselftest.log"
fi

# The page-fault test again, built by Debian's clang (LLVM=1), which the
# guest runs as exceptions:clang: where the faults are taken (one ip for
# all of them, inside the access function) must not depend on the
# compiler.
clang_out=$OUT/kselftest/kselftest_install/exceptions-clang
mkdir -p "$clang_out"
if ! with_progress "$ARCH page-fault test (clang)" "$OUT/kselftest-clang.log" \
	make -C "$SRC/tools/testing/selftests/exceptions" ARCH="$KARCH" LLVM=1 \
	OUTPUT="$clang_out" KHDR_INCLUDES="-isystem $OUT/usr/include" \
	USERLDFLAGS=-static; then
	tail -n 30 "$OUT/kselftest-clang.log" >&2
	die "clang build of the page-fault test failed; full log: $OUT/kselftest-clang.log"
fi

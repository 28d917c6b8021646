#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The series' KUnit suites for ARCH the way a reviewer runs them: the
# kernel's own tools/testing/kunit/kunit.py, given the .kunitconfig files
# the series adds (named on patches/series lines), builds its own kernel
# in build/kunit/$ARCH, boots it in QEMU and judges the results with its
# own parser. Prints KTAP for ktap.py parse: the kernel's console (its
# KUnit KTAP, for the per-case table and configs/suites), then
# kunit.py's verdict. kunit.py's own output: build/logs/$ARCH/kunit.out.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree
out=$BUILD/logs/$ARCH/kunit.out
kdir=$BUILD/kunit/$ARCH
mkdir -p "$kdir" "${out%/*}"

args=()
for f in $(awk '!/^#/ { for (i = 2; i <= NF; i++) if ($i ~ /(^|\/)\.kunitconfig/) print $i }' \
	   "$TOP/patches/series"); do
	args+=("--kunitconfig=$f")
done
[ ${#args[@]} -gt 0 ] || die "patches/series adds no .kunitconfig"

build_lock
kbuild_env
# TCG needs more than kunit.py's default 300 s for the whole run.
# kunit.py tries KVM first. Our guests all run under TCG, and KVM nested
# in a VM can start a guest that never runs (this machine, 2026-12-06:
# x86_64 hung before its first line): QEMU is shown /dev/null in place of
# /dev/kvm, in a mount namespace of its own, made as root (also in a
# chroot, where / is no mount point and only /dev can be made private)
# or else in a user namespace.
hide_kvm='{ mount --make-rprivate / 2>/dev/null || mount --make-rprivate /dev; } &&
	mount --bind /dev/null /dev/kvm && exec "$@"'
nokvm=()
if [ -e /dev/kvm ]; then
	for ns in "--mount --propagation unchanged" "--map-root-user --mount"; do
		# shellcheck disable=SC2086 # $ns is two or three options
		if unshare $ns sh -c "$hide_kvm" sh true 2>/dev/null; then
			read -r -a nsopts <<<"$ns"
			nokvm=(unshare "${nsopts[@]}" sh -c "$hide_kvm" sh)
			break
		fi
	done
	[ ${#nokvm[@]} -gt 0 ] ||
		warn "no mount namespace to hide /dev/kvm in: kunit.py's guest may try KVM"
fi
rc=0
rm -f "$kdir/test.log"
(cd "$SRC" && "${nokvm[@]}" ./tools/testing/kunit/kunit.py run --arch="$KARCH" \
	${CROSS_COMPILE:+--cross_compile="$CROSS_COMPILE"} --build_dir="$kdir" \
	--make_options="CC=$KCC" \
	--jobs="$(nproc)" --timeout=900 "${args[@]}") \
	>"$out" 2>&1 || rc=$?

# The console of the run (what kunit.py parsed), then our results.
cat "$kdir/test.log" 2>/dev/null || true
echo "HARNESS: begin kunit.py"
# Only the KUnit suites owe results here (configs/suites).
echo "HARNESS: scope kunit kunit.py"
echo "HARNESS: suite kunit.py"
printf 'KTAP version 1\n1..1\n'
sed -n '/^\[.*\] \(Testing complete\|Elapsed time\)/s/^/# /p' "$out"
ktap_result "$rc" 1 "kunit.py run --arch=$KARCH ${args[*]}"
ktap_end "$rc"
exit "$rc"

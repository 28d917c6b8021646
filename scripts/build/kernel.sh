#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure (allnoconfig + configs/ fragments) and build the kernel for ARCH
# out of tree in build/out/$ARCH, plus its UAPI headers for the selftests.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch
need_tree

build_lock
mkdir -p "$OUT"
kbuild_env

frags=("$TOP/configs/common.config" "$TOP/configs/$ARCH.config")
for extra in ${CONFIG_EXTRA:-}; do
	frags+=("$TOP/configs/$extra.config")
done
want=$(cat "${frags[@]}" | sha256sum | cut -d' ' -f1)
# Options of the fragments missing from $OUT/.config. Kbuild drops an option
# whose Kconfig entry went away (a tree checked out at an older commit, a
# revert), so this is checked on every build, not only after configuring.
# The base lacks the options the series adds (its KUnit suites): there,
# options that no Kconfig file defines are left out of the check.
known=
if [ "${VARIANT:-series}" = base ]; then
	known=$OUT/.known-options
	git -C "$SRC" grep -h -E '^\s*(menu)?config\s+[A-Z0-9_]+' -- '*Kconfig*' |
		awk '{ print "CONFIG_" $2 }' | sort -u >"$known.tmp"
	mv "$known.tmp" "$known"
fi
# A later fragment overrides an earlier one ("# CONFIG_X is not set" too).
missing_options() {
	cat "${frags[@]}" | sed -n -e 's/^\(CONFIG_[A-Z0-9_]*\)=\(.*\)$/\1=\2/p' \
		-e 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1=n/p' |
		awk -F= '{ v[$1] = $0 } END { for (o in v) if (v[o] !~ /=n$/) print v[o] }' |
		while read -r line; do
			[ -n "$known" ] && ! grep -qxF "${line%%=*}" "$known" && continue
			grep -qxF "$line" "$OUT/.config" || echo "$line"
		done
}
if [ "$(cat "$OUT/.config-stamp" 2>/dev/null)" != "$want" ] || [ ! -f "$OUT/.config" ] ||
   [ -n "$(missing_options)" ]; then
	msg CONFIG "allnoconfig + ${frags[*]##*/}"
	kmake allnoconfig >/dev/null
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OUT" "$OUT/.config" "${frags[@]}" >"$OUT/config.log"
	kmake olddefconfig >/dev/null
	# merge_config only warns; an option that did not stick is an error.
	missing=$(missing_options)
	[ -z "$missing" ] || die "these options from configs/ did not stick (missing dependency?): $missing"
	echo "$want" >"$OUT/.config-stamp"
fi

# What the build depends on: the tree committed, the configuration, how
# Kbuild is run and the compilers. Empty (nothing taken or kept) while the
# tree has uncommitted changes.
build_key=
if [ -z "$(git -C "$SRC" status --porcelain --untracked-files=no)" ]; then
	build_key=$({
		git -C "$SRC" rev-parse 'HEAD^{tree}'
		cat "$OUT/.config" "$0"
		declare -f kbuild_env kmake_once
		env | grep '^KBUILD_BUILD_' | sort
		# A tool that is missing is named by its error; the status of
		# the last one does not matter.
		for tool in "${CROSS_COMPILE}gcc" "${CROSS_COMPILE}ld" gcc pahole; do
			"$tool" --version 2>&1 | head -n 1
		done
		true
	} | sha256sum | cut -d' ' -f1)
fi
# An output directory without a build takes the one another clone kept
# (lib.sh's build_take): the guests need only the image and the headers.
kept=kernel-$KEPT
if [ ! -e "$OUT/vmlinux" ] && build_take "$kept" "$build_key" "$OUT"; then
	msg KERNEL "$ARCH: $OUT/$IMAGE and the UAPI headers, as built before from this tree and configuration ($BUILDS)"
	exit 0
fi
msg KERNEL "$ARCH ($(git -C "$SRC" describe --always --tags HEAD)) -> $OUT/$IMAGE"
if ! KMAKE_QUIET="" with_progress "$ARCH${VARIANT:+ $VARIANT} kernel" "$OUT/build.log" kmake; then
	tail -n 30 "$OUT/build.log" >&2
	die "kernel build failed; full log: $OUT/build.log"
fi
kmake headers >/dev/null 2>>"$OUT/build.log"
# The kernel's modules, installed by the kernel's own modules_install and
# stripped, with depmod's index (kmod's), in a cpio archive that
# run-guest.sh appends to the initramfs: /lib/modules/RELEASE/, without the
# link to the build tree, so that the guest's modprobe finds them.
keep=("$IMAGE" usr/include)
if [ -s "$OUT/modules.order" ]; then
	rm -rf "$OUT/modroot"
	kmake modules_install INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 \
		>/dev/null 2>>"$OUT/build.log"
	rm -f "$OUT"/modroot/lib/modules/*/build
	(cd "$OUT/modroot" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -n) >"$OUT/modules.cpio.gz"
	keep+=(modules.cpio.gz)
fi
build_keep "$kept" "$build_key" "$OUT" "${keep[@]}"

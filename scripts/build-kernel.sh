#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure (allnoconfig + configs/ fragments) and build the kernel for ARCH
# out of tree in build/out/$ARCH, plus its UAPI headers for the selftests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
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
missing_options() {
	cat "${frags[@]}" | sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=\(.*\)$/\1=\2/p' |
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

msg KERNEL "$ARCH ($(git -C "$SRC" describe --always --tags HEAD)) -> $OUT/$IMAGE"
build() { KMAKE_QUIET= with_progress "$ARCH${VARIANT:+ $VARIANT} kernel$1" "$OUT/build.log" kmake; }
# A dependency file from the compiler cache can name a header this tree
# does not have (seen once, 2026-12-04, for an object a mutant's revert
# changed), and fixdep stops on it. Then the objects left are compiled
# again without taking results from the cache, which replaces them.
if ! build "" && ! { grep -q '^fixdep: error opening file' "$OUT/build.log" &&
		       CCACHE_RECACHE=1 build " (stale dependency file: without cache hits)"; }; then
	tail -n 30 "$OUT/build.log" >&2
	die "kernel build failed; full log: $OUT/build.log"
fi
kmake headers >/dev/null 2>>"$OUT/build.log"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the host packages the harness needs for the given arches (default
# $ARCH; only those missing), then check in seconds, before any long build,
# that every tool the pipeline runs is there and that each arch's QEMU
# starts with the guests' options. Anything missing stops it with the
# package to install.
#
# usage: deps.sh [ARCH...]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=("${ARCH:-}")
t0=$SECONDS

# "command:package" for what the harness runs, plain names for headers and
# libraries. Each arch's own (cross compiler, QEMU) are in scripts/arch/;
# the guests' libraries, "package:debarch", go in libs.
pkgs=(git:git make:make gcc:gcc libc6-dev flex:flex bison:bison bc:bc libssl-dev
      libelf-dev ccache:ccache cpio:cpio xz:xz-utils zstd:zstd gzip:gzip
      depmod:kmod python3:python3 python3-ply python3-git perl:perl rsync:rsync
      file:file dpkg-deb:dpkg dpkg-architecture:dpkg-dev sparse:sparse
      pkg-config:pkg-config flock:util-linux timeout:coreutils apt-get:apt
      clang:clang mke2fs:e2fsprogs shellcheck:shellcheck)
libs=()	# packages of the guests' architectures
foreign=()
for ARCH in "${arches[@]}"; do
	check_arch
	pkgs+=("${ARCH_PKGS[@]}")
	# The guest's perf links these statically, for the guest's architecture
	# (libdw, with what its static archive needs, for DWARF unwinding:
	# perf script fixes up arm64 leaf frames with it).
	[ -z "${NO_PERF:-}" ] &&
		for p in libelf-dev libtraceevent-dev zlib1g-dev libzstd-dev libdw-dev liblzma-dev libbz2-dev; do
			libs+=("$p:$DEBARCH")
		done
	# Guest user space comes from Debian packages of the guest's
	# architecture: the host's release, unless the arch file names another
	# (fetched with an apt of its own, see build/rootfs.sh).
	[ -z "${DEB_SUITE:-}" ] && [ "$DEBARCH" != "$(dpkg --print-architecture)" ] &&
		! dpkg --print-foreign-architectures | grep -qx "$DEBARCH" && foreign+=("$DEBARCH")
done

missing=()
for e in "${pkgs[@]}" "${libs[@]}"; do
	# "command:package" names its package after the colon
	p=$e
	[[ " ${libs[*]} " == *" $e "* ]] || p=${e#*:}
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk 'NF && !seen[$0]++')

if [ ${#foreign[@]} -gt 0 ] || [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing packages: ${foreign[*]:+(dpkg architecture ${foreign[*]}) }${missing[*]}
  install them as root: ${foreign[*]:+dpkg --add-architecture ${foreign[*]} && apt-get update && }apt-get install --no-install-recommends ${missing[*]}"
	for a in "${foreign[@]}"; do
		msg DEPS "dpkg --add-architecture $a"
		dpkg --add-architecture "$a"
	done
fi
if [ ${#missing[@]} -gt 0 ]; then
	mkdir -p "$BUILD"
	msg DEPS "apt-get install ${missing[*]}"
	apt="apt-get -o DPkg::Lock::Timeout=300"
	$apt update -qq >"$BUILD/apt.log" 2>&1 || die "apt-get update failed; see $BUILD/apt.log"
	DEBIAN_FRONTEND=noninteractive $apt install -y -qq --no-install-recommends \
		"${missing[@]}" >>"$BUILD/apt.log" 2>&1 ||
		die "apt-get install ${missing[*]} failed; see $BUILD/apt.log"
fi

# Every command the pipeline runs, present now?
for e in "${pkgs[@]}"; do
	[[ $e == *:* ]] || continue
	command -v "${e%%:*}" >/dev/null ||
		die "${e%%:*} not found although its package ${e#*:} is installed; reinstall it: apt-get install --reinstall ${e#*:}"
done

# Each arch's QEMU starts with the guests' machine options and finds every
# file it loads (firmware, option ROMs); paused (-S), then told to quit.
for ARCH in "${arches[@]}"; do
	check_arch
	qemu_args
	if ! err=$(printf 'quit\n' | timeout 30 "$QEMU" "${QEMU_ARGS[@]}" -m 128 -S \
			-monitor stdio -serial null 2>&1 >/dev/null); then
		hint=
		case $err in
		*efi-*.rom*|*pxe-*.rom*) hint=" (option ROMs: package ipxe-qemu)" ;;
		*bios*.bin*) hint=" (PC firmware: package seabios)" ;;
		*opensbi*|*fw_dynamic*) hint=" (RISC-V firmware: package opensbi)" ;;
		esac
		die "$QEMU does not start with the guests' options (${QEMU_ARGS[*]}):
  ${err:-no message}$hint"
	fi
done
msg DEPS "ok: packages, tools and QEMU for ${arches[*]} ($((SECONDS - t0))s)"

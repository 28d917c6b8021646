#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the host packages the harness needs for ARCH (only those missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check_arch

pkgs=(git make gcc libc6-dev flex bison bc libssl-dev libelf-dev ccache cpio
      xz-utils zstd kmod python3 python3-ply python3-git perl rsync file dpkg-dev
      sparse)
case "$ARCH" in
arm64)  pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm) ;;
x86_64) pkgs+=(qemu-system-x86) ;;
esac
# The guest's perf links these statically, for the guest's architecture.
pkgs+=(pkg-config)
for p in libelf-dev libtraceevent-dev zlib1g-dev libzstd-dev; do
	pkgs+=("$p:$DEBARCH")
done

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done

# Guest user space comes from Debian packages of the guest's architecture.
if [ "$DEBARCH" != "$(dpkg --print-architecture)" ] &&
   ! dpkg --print-foreign-architectures | grep -qx "$DEBARCH"; then
	need_root "adding the $DEBARCH dpkg architecture"
	msg DEPS "dpkg --add-architecture $DEBARCH"
	dpkg --add-architecture "$DEBARCH"
fi

[ ${#missing[@]} -eq 0 ] && exit 0
mkdir -p "$BUILD"
need_root "installing ${missing[*]}"
msg DEPS "apt-get install ${missing[*]}"
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"${missing[@]}" >"$BUILD/apt.log" 2>&1 ||
	die "apt-get install failed; see $BUILD/apt.log"

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the distro guest's disk for ARCH: Debian's own user space for
# $DEBARCH with the tracing tools users run (Debian's perf, trace-cmd,
# bpftrace), every dependency as Debian resolves it, unpacked into an ext4
# image. The guest boots the usual initramfs, mounts this disk read-only
# and runs scripts/guest/distro-tools.sh in it (guest init, suite distro).
# The image is kept while the packages and this script are the same;
# 'make clean' drops it.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
check_arch

# Debian 13 and its backports: trixie's perf predates deferred callchains,
# the backported one (the kernel's version) has them.
SUITES="trixie trixie-backports"
# With what every Debian system has (dash is essential: /bin/sh), and
# what apt would add by default: bpftrace recommends libc6-dev. bpftrace
# asks clang for its include paths through /bin/sh, and without a shell
# it crashes (SIGSEGV) on any tracepoint probe whose arguments it reads.
# The upstream gate's suites run here too, perf test and kselftest's
# (ftracetest): with the rest of Debian's essential tools they use (diff,
# find, getconf, taskset, nice), bc, binutils (objdump, addr2line,
# readelf), ping, ip, gawk (strtonum), kmod (modprobe), mount, and the
# users and groups (base-passwd).
PKGS=(linux-perf/trixie-backports trace-cmd bpftrace libc6-dev
      dash bash coreutils grep sed mawk perl-base procps
      diffutils findutils libc-bin util-linux binutils iputils-ping bc
      gawk kmod mount base-passwd iproute2)
IMG=$(distro_disk)
DIR=${IMG%/*}
# The packages, downloaded once per machine: beside the compiler cache, so
# that a second clone (CI's) reuses them. Debian names a file by package,
# version and architecture, so a file there is that package.
DEBS=$CACHE_ROOT/debs/$DEBARCH
command -v mke2fs >/dev/null || die "mke2fs not found; run 'make deps' (package e2fsprogs)"
mkdir -p "$DIR" "$DEBS"
# The closure, as apt resolves the request against the lists it fetched
# first (debian_apt does not refresh them; 'make clean' does): every
# package a simulated install would unpack, with its version.
debian_apt "$SUITES" install -s --no-install-recommends "${PKGS[@]}" >"$DIR/apt.log" 2>&1 ||
	die "apt-get could not resolve ${PKGS[*]} for $DEBARCH; see $DIR/apt.log"
sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1 \2/p' "$DIR/apt.log" >"$DIR/closure.new"
[ -s "$DIR/closure.new" ] || die "apt-get resolved no packages for ${PKGS[*]}; see $DIR/apt.log"
# The image is kept while the closure and this script are the same.
stamp=$(cat "$DIR/closure.new" "$0" | sha256sum | cut -c1-16)
if [ -f "$IMG" ] && [ "$(cat "$DIR/stamp" 2>/dev/null)" = "$stamp" ]; then
	rm -f "$DIR/closure.new"
	msg DISTRO "$IMG (kept: $(cat "$DIR/packages"))"
	exit 0
fi
t0=$SECONDS
rm -f "$IMG" "$DIR/stamp"
mv "$DIR/closure.new" "$DIR/closure"
msg DISTRO "Debian $SUITES ($DEBARCH): ${PKGS[*]}"
# What the cache lacks, by name and version (apt-get download writes to
# the current directory).
cached_deb() {
	local f
	for f in "$DEBS/${1}_${2//:/%3a}_"*.deb; do
		[ -f "$f" ] && echo "$f" && return 0
	done
}
want=()
while read -r name ver; do
	[ -n "$(cached_deb "$name" "$ver")" ] || want+=("$name=$ver")
done <"$DIR/closure"
if [ ${#want[@]} -gt 0 ]; then
	(cd "$DEBS" && debian_apt "$SUITES" download -qq "${want[@]}") >>"$DIR/apt.log" 2>&1 ||
		die "apt-get could not download ${#want[@]} packages for $DEBARCH; see $DIR/apt.log"
fi
root=$DIR/root
rm -rf "$root"
mkdir -p "$root"
n=0
while read -r name ver; do
	deb=$(cached_deb "$name" "$ver")
	[ -n "$deb" ] || die "$name $ver was not downloaded; see $DIR/apt.log"
	dpkg-deb -x "$deb" "$root"
	n=$((n + 1))
done <"$DIR/closure"
[ -x "$root/usr/bin/perf" ] && [ -x "$root/usr/bin/trace-cmd" ] && [ -x "$root/usr/bin/bpftrace" ] ||
	die "the unpacked Debian root in $root lacks perf, trace-cmd or bpftrace"
# Documentation and translations are not run; what is left is what the
# packages install, as dpkg would (maintainer scripts aside: none of
# these tools needs one to run).
rm -rf "$root"/usr/share/{doc,man,info,locale}
# What the maintainer scripts would do: update-alternatives' awk (gawk,
# whose priority is above mawk's) and which (debianutils'), base-passwd's
# /etc/passwd and /etc/group.
ln -sf gawk "$root/usr/bin/awk"
ln -sf which.debianutils "$root/usr/bin/which"
cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
# Where the guest mounts its kernel's modules.
mkdir -p "$root/usr/lib/modules"
awk '$1 ~ /^(linux-perf|trace-cmd|bpftrace)$/ { print $1, $2 }' "$DIR/closure" |
	paste -sd, | sed 's/,/, /g' >"$DIR/packages"
mb=$(du -sm "$root" | cut -f1)
mke2fs -q -t ext4 -L distro -d "$root" "$IMG" $((mb * 5 / 4 + 64))M >"$DIR/mke2fs.log" 2>&1 ||
	die "mke2fs failed; see $DIR/mke2fs.log"
rm -rf "$root"
echo "$stamp" >"$DIR/stamp"
msg DISTRO "$IMG: $n packages, $mb MiB ($(cat "$DIR/packages")), $(elapsed $t0)"

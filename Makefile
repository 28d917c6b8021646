# SPDX-License-Identifier: GPL-2.0
# arm64 tracing & perf series: patch queue, kernel builds, QEMU guests, tests.
# 'make help' lists the targets.

ARCH ?= arm64
# Architectures 'make check' builds and boots.
ARCHES ?= arm64 x86_64
export ARCH ARCHES

S := scripts

.PHONY: help deps base tree export series kernel selftests perf rootfs boot check check-debug check-full demo bench clean distclean

help:
	@echo "make demo          build, boot the arm64 guest and show the series at work"
	@echo "make check         checkpatch every patch; for every arch in ARCHES ($(ARCHES)):"
	@echo "                   build after each patch, W=1/sparse vs base, boot, run the"
	@echo "                   tests; print a summary and 'N passed, N failed, N skipped'"
	@echo "make check-debug   the suites again on debug kernels (configs/debug.config:"
	@echo "                   lockdep, KASAN, UBSAN, KFENCE, kmemleak, ...)"
	@echo "make check-full    check, a stress run (selftests x3, fault storm, hostile"
	@echo "                   stacks, attr fuzz) and check-debug, for every arch"
	@echo "make bench         base vs series under QEMU -icount: instruction counts, tables"
	@echo "make tree          assemble build/linux from the base and patches/series"
	@echo "make export        write build/linux's commits back to patches/ and the overlay"
	@echo "make series        mail-ready series in build/series/ (cover letter, To/Cc)"
	@echo "make deps|base|kernel|selftests|perf|rootfs|boot   single steps (ARCH=$(ARCH))"
	@echo "make clean         remove build outputs, keep the base download and build/linux"

deps:
	@$(S)/deps.sh

base:
	@$(S)/fetch-base.sh

tree: deps
	@$(S)/tree.sh

export:
	@$(S)/export.sh

series: tree
	@$(S)/series.sh

kernel: tree
	@$(S)/build-kernel.sh

selftests: kernel
	@$(S)/build-selftests.sh

perf: tree
	@$(S)/build-perf.sh

rootfs: selftests perf
	@$(S)/build-rootfs.sh

boot: rootfs
	@$(S)/run-guest.sh check

check:
	@$(S)/deps.sh
	@$(S)/check.sh

check-debug:
	@$(S)/deps.sh
	@GUEST_RUNS=debug $(S)/check.sh

check-full:
	@$(S)/deps.sh
	@GUEST_RUNS="check stress debug" $(S)/check.sh

demo: rootfs
	@$(S)/run-guest.sh demo
	@sed -n '/^HARNESS: begin/,/^HARNESS: end/p' build/logs/$(ARCH)/demo.log | grep -v '^HARNESS'

bench:
	@$(S)/deps.sh
	@$(S)/bench.sh

clean:
	rm -rf build/out build/logs

distclean:
	rm -rf build

# SPDX-License-Identifier: GPL-2.0
# arm64 tracing & perf series: patch queue, kernel builds, QEMU guests, tests.
# 'make help' lists the targets.

ARCH ?= arm64
# Architectures 'make check' builds and boots: one file each in scripts/arch/.
ARCHES ?= $(sort $(basename $(notdir $(wildcard scripts/arch/*.sh))))
export ARCH ARCHES

S := scripts

.PHONY: help deps base tree export series series-sender kernel selftests perf rootfs boot check check-quick check-debug check-full mutants upstream demo bench clean distclean

help:
	@echo "make demo          build, boot the arm64 guest and show the series at work"
	@echo "make check         checkpatch every patch; for every arch in ARCHES ($(ARCHES)):"
	@echo "                   build and boot, run the tests; on arm64 also the"
	@echo "                   series' files after each patch, W=1/sparse vs base and"
	@echo "                   the tests on a debug kernel with 64 KiB pages; on arm64"
	@echo "                   and x86_64 the KUnit suites with kunit.py, the distro"
	@echo "                   run (Debian's perf, trace-cmd, bpftrace) and upstream's"
	@echo "                   suites on base and series; the mutants; print a summary"
	@echo "                   and 'N passed, N failed, N skipped' (PHASES=1: stop"
	@echo "                   before upstream's suites and the mutants)"
	@echo "make check-full    make check plus the whole kernel after each patch on"
	@echo "                   arm64 and x86_64, arm64's stress boot (selftests x3,"
	@echo "                   fault storm, hostile stacks, attr fuzz) and riscv64's"
	@echo "                   debug boot"
	@echo "make check-quick   make check with only the normal guest per arch"
	@echo "make check-debug   only the debug kernels (configs/debug.config: lockdep,"
	@echo "                   KASAN, UBSAN, KFENCE, kmemleak, ...)"
	@echo "make mutants       show the tests fail without what they test: patches"
	@echo "                   reverted (by subject), every case's expectation"
	@echo "                   broken, the drivers without the AUX capability"
	@echo "make upstream      perf test, ftracetest, the perf_events and RV kselftests"
	@echo "                   on the base and the series kernel of ARCH, side by side"
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

series: series-sender tree
	@$(S)/series.sh
series-sender:
	@$(S)/series.sh --check-sender

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

# The whole gate, as CI runs it; check-full adds what does not fit in its
# time budget (scripts/check.sh, CHECK_FULL).
check:
	@$(S)/deps.sh $(ARCHES)
	@$(S)/check.sh

check-full:
	@$(S)/deps.sh $(ARCHES)
	@CHECK_FULL=1 $(S)/check.sh

check-quick:
	@$(S)/deps.sh $(ARCHES)
	@GUEST_RUNS=check $(S)/check.sh

check-debug:
	@$(S)/deps.sh $(ARCHES)
	@GUEST_RUNS=debug $(S)/check.sh

mutants:
	@$(S)/deps.sh $(ARCHES)
	@$(S)/mutants.sh

upstream: rootfs
	@$(S)/upstream.sh

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

# SPDX-License-Identifier: GPL-2.0
# arm64 tracing & perf series: patch queue, kernel builds, QEMU guests, tests.
# 'make help' lists the targets.

ARCH ?= arm64
# Architectures 'make check' builds and boots: one file each in scripts/arch/.
ARCHES ?= $(sort $(basename $(notdir $(wildcard scripts/arch/*.sh))))
export ARCH ARCHES

S := scripts

.PHONY: help deps base tree export series series-sender kernel selftests perf rootfs boot check mutants upstream demo bench clean distclean

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
	@$(S)/build/deps.sh

base:
	@$(S)/series/fetch-base.sh

tree: deps
	@$(S)/series/tree.sh

export:
	@$(S)/series/export.sh

series: series-sender tree
	@$(S)/series/mail.sh
series-sender:
	@$(S)/series/mail.sh --check-sender

kernel: tree
	@$(S)/build/kernel.sh

selftests: kernel
	@$(S)/build/selftests.sh

perf: tree
	@$(S)/build/perf.sh

rootfs: selftests perf
	@$(S)/build/rootfs.sh

boot: rootfs
	@$(S)/run-guest.sh check

# The whole gate, as CI runs it (scripts/check/check.sh).
check:
	@$(S)/build/deps.sh $(ARCHES)
	@$(S)/check/check.sh

mutants:
	@$(S)/build/deps.sh $(ARCHES)
	@$(S)/check/mutants.sh

upstream: rootfs
	@$(S)/check/upstream.sh

demo: rootfs
	@$(S)/run-guest.sh demo
	@sed -n '/^HARNESS: begin/,/^HARNESS: end/p' build/logs/$(ARCH)/demo.log | grep -v '^HARNESS'

bench:
	@$(S)/build/deps.sh
	@$(S)/bench/bench.sh

clean:
	rm -rf build/out build/*/out build/logs

distclean:
	rm -rf build

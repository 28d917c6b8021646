#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of the fault-path measurement: kernel instructions per fault
# (faultcost) with the page-fault tracepoints off, then on into a tracefs
# instance. Prints one "BENCH ..." line per run for the host to collect.
runs=${BENCH_RUNS:-5}
pages=${BENCH_PAGES:-1000}
T=/sys/kernel/tracing/instances/bench

measure() {
	for kind in anon-write file-read; do
		i=0
		while [ $i -lt "$runs" ]; do
			echo "BENCH variant=$1 $(faultcost "$kind" "$pages")"
			i=$((i + 1))
		done
	done
}

measure tp-off
if [ -d /sys/kernel/tracing/events/exceptions/page_fault_user ]; then
	mkdir "$T"
	echo 1 > "$T/events/exceptions/enable"
	measure tp-tracefs
	echo 0 > "$T/events/exceptions/enable"
	rmdir "$T"
fi

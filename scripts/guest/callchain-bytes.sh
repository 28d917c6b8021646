#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of the callchain-size measurement: record the same workload
# with --call-graph fp and fp,defer, and count the bytes perf wrote for
# samples and deferred callchain records (sizes from 'perf report -D').
# Workloads: dd with 4 MiB reads of /dev/zero (long syscalls, several
# samples per kernel entry) and a user-only loop (microbench touching
# pages already faulted in is not user-only, so use busybox's own 'seq').
cd /tmp || exit 1
runs=${BENCH_RUNS:-3}

sizes() { # data file -> "samples sample_bytes deferred deferred_bytes"
	perf report -D -i "$1" 2>/dev/null | awk '
		function size(s) { sub(/.*\[0x/, "", s); sub(/\].*/, "", s); return hex(s) }
		function hex(s,   v, i) {
			v = 0
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		/PERF_RECORD_SAMPLE\(/ { n++; b += size($0) }
		/PERF_RECORD_CALLCHAIN_DEFERRED\(/ { d++; db += size($0) }
		END { printf "%d %d %d %d\n", n, b, d, db }'
}

for workload in syscall user; do
	case $workload in
	syscall) cmd="dd if=/dev/zero of=/dev/null bs=4M count=64" ;;
	user) cmd="seq 1 200000" ;;
	esac
	for mode in fp fp,defer; do
		i=0
		while [ $i -lt "$runs" ]; do
			# The workload's kernel instructions (sampling, unwinding
			# and output included) from an inner perf stat.
			# shellcheck disable=SC2086 # a command and its arguments
			perf record -q -e cpu-clock -c 200000 --call-graph "$mode" \
				-o cc.data -- perf stat -x, -e instructions:k -o st.txt \
				-- $cmd >/dev/null 2>&1
			k=$(grep instructions:k st.txt | cut -d, -f1)
			# shellcheck disable=SC2046 # numbers, split into $1... on purpose
			set -- $(sizes cc.data)
			echo "BENCH part=callchain workload=$workload mode=$mode samples=$1" \
				"sample_bytes=$2 deferred=$3 deferred_bytes=$4 kernel_instructions=$k"
			i=$((i + 1))
		done
	done
done

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of 'make bench' (boot with -icount shift=0): prints one
# "BENCH part=... key=value ..." line per measurement for the host to
# collect. Kernel instructions per fault come from faultcost's per-task
# PERF_COUNT_HW_INSTRUCTIONS counter (kernel only).
runs=${BENCH_RUNS:-5}
pages=1000
T=/sys/kernel/tracing
I=$T/instances/bench
cd /tmp || exit 1
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	bench.runs=*) runs=${arg#bench.runs=} ;;
	bench.parts=*) parts=${arg#bench.parts=} ;;
	esac
done
parts=${parts:-fault,microbench,callchain}

# faultcost under a given setup, $runs times for each fault kind.
fault() { # variant [wrapper command...]
	variant=$1
	shift
	for kind in anon-write file-read; do
		i=0
		while [ $i -lt "$runs" ]; do
			out=$("$@" faultcost "$kind" "$pages" 2>/dev/null | grep '^faultcost')
			set -- "$@"
			echo "BENCH part=fault variant=$variant ${out#faultcost }"
			i=$((i + 1))
		done
	done
}

has_events() { [ -d $T/events/exceptions/page_fault_user ]; }

case ,$parts, in *,fault,*)
	fault off
	if has_events; then
		mkdir $I
		echo 1 > $I/events/exceptions/page_fault_user/enable
		fault tracefs
		echo 0 > $I/events/exceptions/page_fault_user/enable
		rmdir $I
		fault perf-tracepoint perf record -q -e exceptions:page_fault_user -o pf.data --
	fi
	# The pre-series method on arm64: a kprobe feeding perf.
	if echo 'p:bench/hmf handle_mm_fault' >> $T/kprobe_events 2>/dev/null; then
		fault perf-kprobe-handle_mm_fault perf record -q -e bench:hmf -o kp.data --
		echo '-:bench/hmf' >> $T/kprobe_events
	else
		echo "BENCH part=fault variant=perf-kprobe-handle_mm_fault error=rejected"
	fi
	if echo 'p:bench/dpf do_page_fault' >> $T/kprobe_events 2>/dev/null; then
		fault perf-kprobe-do_page_fault perf record -q -e bench:dpf -o kp.data --
		echo '-:bench/dpf' >> $T/kprobe_events
	else
		echo "BENCH part=fault variant=perf-kprobe-do_page_fault error=rejected(__kprobes)"
	fi
	fault perf-sw-page-faults perf record -q -e page-faults -c 1 -o sw.data --
	;;
esac

case ,$parts, in *,microbench,*)
	i=0
	while [ $i -lt "$runs" ]; do
		perf stat -x, -e instructions:u,instructions:k -o st.txt -- microbench 100000 >/dev/null
		u=$(grep instructions:u st.txt | cut -d, -f1)
		k=$(grep instructions:k st.txt | cut -d, -f1)
		echo "BENCH part=microbench pages=100000 user_instructions=$u kernel_instructions=$k"
		i=$((i + 1))
	done
	;;
esac

case ,$parts, in *,callchain,*)
	BENCH_RUNS=$runs callchain-bytes
	;;
esac

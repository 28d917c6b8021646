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
	bench.frag=*) frag=${arg#bench.frag=} ;;
	bench.frag_cycles=*) frag_cycles=${arg#bench.frag_cycles=} ;;
	esac
done
parts=${parts:-fault,microbench,callchain,syscall}

# faultcost under a given setup, $runs times for each fault kind.
fault() { # variant [wrapper command...]
	variant=$1
	shift
	for kind in anon-write file-read kernel-write; do
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
	# Both events, so that user and kernel faults each have theirs.
	if has_events; then
		mkdir $I
		echo 1 > $I/events/exceptions/enable
		fault tracefs
		echo 0 > $I/events/exceptions/enable
		rmdir $I
		fault perf-tracepoint perf record -q -e 'exceptions:*' -o pf.data --
	fi
	# The pre-series method on arm64: a kprobe, into tracefs or perf.
	if echo 'p:bench/hmf handle_mm_fault' >> $T/kprobe_events 2>/dev/null; then
		mkdir $I
		echo 1 > $I/events/bench/hmf/enable
		fault tracefs-kprobe-handle_mm_fault
		echo 0 > $I/events/bench/hmf/enable
		rmdir $I
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

# Kernel instructions of one getppid(): two runs of $calls and of 0 calls,
# the same process start and exit in both. And the size of task_struct.
case ,$parts, in *,syscall,*)
	calls=100000
	kinstr() { # command...: its kernel instructions
		perf stat -x, -e instructions:k -o st.txt -- "$@" >/dev/null
		grep instructions:k st.txt | cut -d, -f1
	}
	i=0
	while [ $i -lt "$runs" ]; do
		k0=$(kinstr syscalls 0)
		kn=$(kinstr syscalls $calls)
		echo "BENCH part=syscall calls=$calls kernel_instructions=$kn kernel_instructions_0=$k0"
		i=$((i + 1))
	done
	f=/sys/kernel/slab/task_struct/object_size
	if [ -r $f ]; then
		echo "BENCH part=task_struct bytes=$(cat $f)"
	else
		echo "BENCH part=task_struct error=no_$f"
	fi
	;;
esac

case ,$parts, in *,callchain,*)
	BENCH_RUNS=$runs callchain-bytes
	;;
esac

# The AUX allocator, from make bench's perf_aux_bench KUnit suite that ran
# at boot (the host boots with kunit.filter_glob=perf_aux_bench): chunks, page
# table entries and time of each rb_alloc_aux(), and for the fragmented
# cases the direct reclaim/compaction of the allocating task and of all
# tasks. Under -icount shift=0 a nanosecond of guest time is one
# instruction.
case ,$parts, in *,aux,*)
	dmesg | sed -n 's/^\[[ 0-9.]*\] *//; s/^# [a-z_]*: //p' | awk '
	# The digits of what matches re in the line.
	function num(re, v) {
		if (!match($0, re))
			return ""
		v = substr($0, RSTART, RLENGTH)
		gsub(/[^0-9]/, "", v)
		return v
	}
	/rb_alloc_aux\(\) = / {
		split($0, f, /[;,:] */)
		for (i in f) {
			n = split(f[i], w, " ")
			if (f[i] ~ /^direct reclaim/) reclaim = w[n]
			if (f[i] ~ /^direct compaction/) compact = w[n]
			if (f[i] ~ /^allocstall/) allocstall = substr(w[n], 2)
			if (f[i] ~ /^compact_stall/) compact_stall = substr(w[n], 2)
		}
		next
	}
	/pages \([0-9]+ KiB\), chunks=[0-9]+:.* ns$/ {
		desc = $0; sub(/: [0-9]+ pages \(.*/, "", desc)
		pmu = desc ~ /^prefer-large/ ? "prefer-large" : desc ~ /^no-sg/ ? "no-sg" : "default"
		state = desc ~ /fragmented/ ? "fragmented" : "fresh"
		if (desc ~ /overwrite|watermark|freed/)
			next
		chunks = num("chunks=[0-9]+"); ns = num("[0-9]+ ns$")
		pages = num(": [0-9]+ pages"); kib = num("\\([0-9]+ KiB\\)")
		entries = num("entries=[0-9]+"); blocks = num("[0-9]+ PMD blocks")
		groups = num("[0-9]+ contiguous PTE groups"); ptes = num("[0-9]+ PTEs")
		plain = num("plain vmap\\(\\) [0-9]+")
		line = "BENCH part=aux pmu=" pmu " state=" state " pages=" pages " kib=" kib \
			" chunks=" chunks " entries=" entries " blocks=" blocks " groups=" groups \
			" ptes=" ptes " plain=" plain " ns=" ns
		if (state == "fragmented")
			line = line " reclaim=" reclaim " compact=" compact " allocstall=" allocstall " compact_stall=" compact_stall
		print line
	}'
	;;
esac

# A long-running device (the host boots a kernel with configs/ARCH-frag.config,
# page_owner=on and a disk): churn page cache, anonymous memory and kernel
# objects in the background while the perf_aux_churn KUnit suite allocates
# and frees AUX buffers (4 MiB per CPU, 64 MiB every 4th cycle), with the
# PMU bench.frag= says; then read what that left behind. Stalls are counted
# for the whole run, THP on a fresh MADV_HUGEPAGE mapping afterwards.
case ,$parts, in *,frag,*)
	vm() { awk -v k="$1" '$1 ~ "^" k { n += $2 } END { print n + 0 }' /proc/vmstat; }
	p=/sys/module/aux_bench/parameters
	run=/sys/kernel/debug/kunit/perf_aux_churn/run
	anon=$(awk '/^MemTotal/ { print int($2 / 2048) }' /proc/meminfo)
	if [ ! -b /dev/vda ] || [ ! -w $run ] || [ ! -d /sys/kernel/mm/transparent_hugepage ]; then
		echo "BENCH part=frag error=needs_/dev/vda,$run,THP"
	else
		# Held open, so the disk's page cache outlives the churn.
		exec 3</dev/vda
		churn run /dev/vda "$anon" &
		churner=$!
		# Until little memory is free (1 min at most).
		i=0
		while [ $i -lt 60 ] && awk '/^MemTotal/ { t = $2 } /^MemFree/ { f = $2 }
			END { exit !(f > t / 8) }' /proc/meminfo; do
			sleep 1
			i=$((i + 1))
		done
		a0=$(vm allocstall); c0=$(vm compact_stall); f0=$(vm compact_fail)
		echo "${frag_cycles:-200}" > $p/churn_cycles
		[ "$frag" = default ] && echo N > $p/churn_prefer_large || echo Y > $p/churn_prefer_large
		echo 1 > $run
		a1=$(vm allocstall); c1=$(vm compact_stall); f1=$(vm compact_fail)
		kill $churner; wait $churner
		# "N cycles, N buffers, N failed, N chunks, N above order N, N us"
		# shellcheck disable=SC2046 # numbers, split into $1... on purpose
		set -- $(dmesg | sed -n 's/.*churn [a-z-]*: //p' | tail -n 1 | tr -c '0-9\n' ' ') 0 0 0 0 0 0 0
		aux="buffers=$2 failed=$3 chunks=$4 large=$5 alloc_us=$7"
		ok=0
		if grep -q '^ *ok [0-9]* aux_churn$' ${run%run}results; then
			ok=1
		else
			cat ${run%run}results
		fi
		mixed=$(awk '/^Number of mixed blocks/ { on = 1; next }
			on && /^Node/ { for (i = 5; i <= NF; i++) n += $i }
			END { print on ? n + 0 : "no_page_owner" }' /proc/pagetypeinfo)
		# Free memory in blocks of order >= 4 and >= 9, in pages; order-10 blocks.
		free=$(awk '{ for (i = 5; i <= NF; i++) { o = i - 5; p = $i; for (k = 0; k < o; k++) p *= 2; all += p
			if (o >= 4) o4 += p; if (o >= 9) o9 += p; if (o == 10) b10 += $i } }
			END { printf "free_pages=%d free_o4=%d free_o9=%d blocks_o10=%d", all, o4, o9, b10 }' /proc/buddyinfo)
		t0=$(vm thp_fault_alloc); b0=$(vm thp_fault_fallback)
		pk=$(churn thp 64)
		t1=$(vm thp_fault_alloc); b1=$(vm thp_fault_fallback)
		exec 3<&-
		echo "BENCH part=frag pmu=$frag ok=$ok $pk $free mixed=$mixed allocstall=$((a1 - a0)) compact_stall=$((c1 - c0)) compact_fail=$((f1 - f0)) thp_alloc=$((t1 - t0)) thp_fallback=$((b1 - b0)) $aux"
	fi
	;;
esac

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of make check's stress boot (harness.mode=stress): the series under
# load, as KTAP. The host fails the run on any kernel splat in the log.
#   1. the selftests of the series, stress.rounds times over (flakes);
#   2. a fault storm on every CPU for stress.secs, with both page fault
#      events on in tracefs and 'perf record -a --call-graph fp,defer' on;
#   3. hostile user stacks (bad frame pointers) on every CPU at once,
#      then again under a system-wide deferred-callchain perf session;
#   4. random perf_event_open() attributes (attrfuzz) on every CPU.
. /kselftest/kselftest/ktap_helpers.sh
cd /tmp || exit 1

secs=60
perfsecs=5
rounds=3
fuzz=2000
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	stress.secs=*) secs=${arg#stress.secs=} ;;
	stress.perfsecs=*) perfsecs=${arg#stress.perfsecs=} ;;
	stress.rounds=*) rounds=${arg#stress.rounds=} ;;
	stress.fuzz=*) fuzz=${arg#stress.fuzz=} ;;
	esac
done
T=/sys/kernel/tracing
cpus=$(seq 0 $(($(nproc) - 1)))
selftests="perf_events/deferred_callchain exceptions/page_fault_events"

# result OK NAME: one KTAP line
result() {
	if [ "$1" = 0 ]; then
		ktap_test_pass "$2"
	else
		ktap_test_fail "$2"
	fi
}

# Show the lines of a log that say what went wrong, as KTAP diagnostics.
show() {
	grep -E "$2" "$1" | head -n 20 | sed 's/^/# | /'
}

ktap_print_header
# Each round runs every selftest; then storm, hostile (two) and fuzz.
ktap_set_plan $((rounds * $(echo $selftests | wc -w) + 4))

# 1. The selftests, again and again.
r=1
while [ $r -le "$rounds" ]; do
	for t in $selftests; do
		(cd /kselftest/${t%/*} && ./${t#*/}) >st.log 2>&1
		rc=$?
		[ $rc = 0 ] || show st.log 'not ok|FAIL|Expected|problems'
		result $rc "rounds: ${t#*/}, round $r"
	done
	r=$((r + 1))
done

# 2. Fault storm. Each CPU runs callchain (2048 fresh pages faulted from a
# known call chain) and dd (the kernel faults on dd's fresh buffer) in a
# loop for stress.secs, with both events on in a tracefs instance; for the
# last stress.perfsecs of it, 'perf record -a' samples every user fault
# with its deferred user callchain (a tracepoint event samples every hit;
# a whole minute of them would not fit in the guest's tmpfs).
mkdir $T/instances/stress
echo 1024 >$T/instances/stress/buffer_size_kb
echo 1 >$T/instances/stress/events/exceptions/enable
rm -f stop
for c in $cpus; do
	(while [ ! -e stop ]; do
		taskset -c "$c" callchain 2048 >/dev/null
		taskset -c "$c" dd if=/dev/zero of=/dev/null bs=1M count=4 2>/dev/null
	done) &
done
sleep $((secs > perfsecs ? secs - perfsecs : 0))
perf record -q -a --call-graph fp,defer -o storm.data \
	-e exceptions:page_fault_user -- sleep "$perfsecs" >perf.log 2>&1
prc=$?
touch stop
wait
echo 0 >$T/instances/stress/events/exceptions/enable
user=$(grep -c 'page_fault_user:' $T/instances/stress/trace)
kernel=$(grep -c 'page_fault_kernel:' $T/instances/stress/trace)
rmdir $T/instances/stress
# Samples, and those of callchain whose stitched user stack has level3
set -o pipefail
perf script -i storm.data -F comm,event,ip,sym 2>script.log | awk '
	/^[^ \t]/ { n++; ours = $1 == "callchain"; next }
	ours && /level3/ { stitched++; ours = 0 }
	END { print n + 0, stitched + 0 }' >counts.txt
src=$?
set +o pipefail
read -r samples stitched <counts.txt
ktap_print_msg "fault storm ${secs}s: tracefs saw $user user and $kernel kernel faults (last 1 MiB per CPU); perf ${perfsecs}s: rc $prc, script rc $src, $samples page_fault_user samples, $stitched of callchain with level3 in the user stack"
[ $prc = 0 ] || cat perf.log
[ $src = 0 ] || head script.log
ok=1
[ $prc = 0 ] && [ $src = 0 ] && [ "$user" -gt 0 ] && [ "$kernel" -gt 0 ] &&
	[ "$samples" -gt 0 ] && [ "$stitched" -gt 0 ] && ok=0
rm -f storm.data
result $ok "storm: faults on every CPU under tracefs and perf -a --call-graph fp,defer"

# 3. Hostile stacks on every CPU at once: the selftest's hostile fixtures,
# one instance per CPU, each checking its own records. Then again under a
# system-wide deferred-callchain session, which must record and decode;
# the instances' verdicts are only shown there: perf core hands a deferred
# record to every defer_output event of the task, so each instance also
# gets the records of unwinds only the system-wide session asked for, and
# counts them as records that answer none of its samples.
# Run a command pinned to each CPU at once, its output in PREFIX-CPU.log;
# fails if any of them does.
each_cpu() { # prefix command...
	prefix=$1
	shift
	pids=
	for c in $cpus; do
		taskset -c "$c" "$@" >"$prefix-$c.log" 2>&1 &
		pids="$pids $!"
	done
	erc=0
	for p in $pids; do
		wait "$p" || erc=1
	done
	return $erc
}
hostile() { # log-prefix
	each_cpu "$1" /kselftest/perf_events/deferred_callchain -v hostile_kernel_address \
		-v hostile_unmapped -v hostile_misaligned -v hostile_self_loop -v hostile_two_frame_cycle
	hrc=$?
	for c in $cpus; do
		ktap_print_msg "$1 on cpu $c: $(grep -E '^# (PASSED|FAILED)' "$1-$c.log")"
	done
}
hostile alone
ok=$hrc
for c in $cpus; do
	grep -q '^# PASSED: ' alone-$c.log || show alone-$c.log 'not ok|FAIL|Expected|problems'
done
result $ok "hostile: bad frame pointers on every CPU at once"

# A fixed window that covers the instances (they take a few seconds):
# perf record of a workload, rather than one stopped with SIGINT.
perf record -q -a --call-graph fp,defer -e cpu-clock -F 1000 \
	-o hostile.data -- sleep 20 >perf.log 2>&1 &
pp=$!
sleep 2
hostile shared
ok=0
wait $pp || ok=1
perf script -i hostile.data -F comm,event,ip,sym >hostile.txt 2>script.log || ok=1
n=$(grep -c '^[^ 	]' hostile.txt)
ktap_print_msg "perf -a: $n samples decoded"
[ "$n" -gt 0 ] || ok=1
[ $ok = 0 ] || { cat perf.log; head script.log; }
rm -f hostile.data hostile.txt
result $ok "hostile: the same under perf -a --call-graph fp,defer, which records and decodes"

# 4. Random attributes, one fuzzer per CPU (its seed: 1 + the CPU).
ok=0
each_cpu fuzz attrfuzz "$fuzz" || ok=1
for c in $cpus; do
	sed 's/^/# cpu '"$c"': /' fuzz-$c.log
done
result $ok "fuzz: perf_event_open() attributes on every CPU, $fuzz each"

ktap_finished

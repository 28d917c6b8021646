#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make mutants': show that the tests fail when what they test is missing.
# Each mutant is one scratch commit on top of the assembled tree: a patch of
# the series taken out again (git revert of its commit, the same tree as
# dropping its line from patches/series), or an edit by scripts/mutate.py
# (a broken expectation in every test case; huge AUX mappings taken out of
# the drivers). The kernel, selftests and initramfs are rebuilt
# incrementally and booted as in 'make check', running only the suites of
# the cases the mutant names; exactly those cases must fail and the rest of
# their suites pass. The tree is put back after every mutant, also on
# error. Prints KTAP and the usual total line.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
# A mutant's kernel and perf are not the series': lib.sh keeps no build of
# theirs for another clone.
export BUILD_KEEP=0

# name|arch|how|"suite: case" patterns that must fail (';'-separated).
# how: "revert:SUBJECT" takes the patch with that subject out again (found
# by subject, so inserting a patch moves nothing), "mutate:MODE WHAT" runs
# scripts/mutate.py MODE.
# A patch of generic code has its mutant on arm64 only: that the tests can
# fail without it is shown there, and on x86_64 the same revert would
# prove it again at the cost of a rebuild and a boot. x86_64 and riscv64
# keep the mutants of their own patches and of the tests.
DF='perf_events:deferred_callchain:'
DE='perf_events:deferred_entry:'
DU='perf_events:deferred_users.sh:'
PF='exceptions:page_fault_events:'
# The page-fault test again under vm.memfd_noexec=2: its exec cases skip,
# which counts once a case fails and the output shows them.
MN='exceptions:memfd_noexec:'
VH='kunit:vmap_huge:'
PK='kunit:page_fault_event:'
# The distro run's suites (Debian's tools; the Documentation's examples).
DT='distro:tools:'
DX='distro:doc-examples:'
PA='kunit:perf_aux:'
ALL=(
	"without-tracepoints|arm64|mutate:no-arm64-events arm64 calls kprobe_page_fault() alone, as before the series|$PF page_fault.*;$PF fault_count.user_write.*;$PF fault_count.uaccess.*;$PF fault_count.faults_disabled.*;$PF fault_count.segv_user_addr.*;$PF fault_count.nofault_kernel_addr.*;$PF fault_count.kprobe_fetch.*;$PF fault_count.kprobe_single_step.*;$MN page_fault.*;$MN fault_count.user_write.*;$MN fault_count.uaccess.*;$MN fault_count.faults_disabled.*;$MN fault_count.segv_user_addr.*;$MN fault_count.nofault_kernel_addr.*;$MN fault_count.kprobe_fetch.*;$MN fault_count.kprobe_single_step.*;exceptions:clang: *;ftrace:ftracetest: *;verification:ftracetest: *;perf:page_fault_events: perf record/script*;perf:page_fault_events: perf stat*;perf:page_fault_events: perf record -g*;$PK write to a read-only kernel page;$DT perf record*;$DT perf stat*;$DT perf --call-graph*;$DT perf trace*;$DT trace-cmd*;$DT bpftrace*;$DX tracefs: cat *trace;$DX tracefs: cat *hist;$DX bpftrace: *"
	"perf-in-helper|arm64|mutate:perf-in-helper arm64 counts page-faults before the test for page faults disabled|$PF fault_count.faults_disabled.*;$PF fault_count.kprobe_fetch.*;$MN page_fault.exec.*;$MN fault_count.kprobe_single_step.*;$MN fault_count.faults_disabled.*;$MN fault_count.kprobe_fetch.*;$PK write to a read-only kernel page"
	"without-fault-helper|x86_64|revert:x86/mm: Report page faults through page_fault_enter()|$PF fault_count.kprobe_single_step.*;$MN page_fault.exec.*;$MN fault_count.kprobe_single_step.*"
	"event-before-kprobe|riscv64|mutate:event-before-kprobe page_fault_enter() reports faults before kprobe_page_fault() has looked at them|$PF fault_count.kprobe_fetch.*;$PF fault_count.kprobe_single_step.*;$MN page_fault.exec.*;$MN fault_count.kprobe_fetch.*;$MN fault_count.kprobe_single_step.*"
	"without-rv-arm64|arm64|revert:rv: Let the pagefault monitor run where the fault events are emitted|verification:ftracetest: *"
	"without-caller-regs|arm64|revert:arm64: perf: Don't report the caller twice in tracepoint callchains|perf:page_fault_events: perf record -g*"
	"without-cpu-wide-fix|arm64|revert:perf/core: Let CPU-wide events receive deferred callchains|$DF deferred.per_cpu.*;$DF deferred.per_cpu_pinned.*;$DF deferred.per_cpu_self_output.*"
	"without-exec-fix|arm64|revert:unwind_user/deferred: Unwind the old program's stack at exec|perf_events:deferred_exec: *"
	"exec-work-queued|arm64|mutate:exec-work-queued exec runs the callbacks before it takes the task work off the list|$DU exec *"
	"ealready-needs-cache|arm64|mutate:ealready-needs-cache a repeated request is refused only where the unwind cache is|$DU without an unwind cache*"
	"without-answered-cookie-fix|arm64|revert:unwind_user/deferred: Don't hand out a cookie whose record is already out|$DF deferred.cpu_clock.*;$DF deferred.cpu_clock_self_output.*;?$DF deferred.one_entry_many_samples.*;?$DF deferred.per_cpu*;?$DF deferred.hostile_*"
	"without-compat-fallback|arm64|revert:unwind_user/deferred: Leave tasks the unwinder cannot walk to the caller|perf_events:deferred_compat: *;perf:page_fault_events: perf record --call-graph fp,defer: an AArch32*"
	"without-xol-ip|arm64|revert:unwind_user: Start at the probed address while a uprobe is stepped out of line|$DE *;perf:page_fault_events: perf probe -x*"
	"without-unwinder|arm64|revert:arm64: Add the frame pointer user unwinder|$DF deferred.cpu_clock*;$DF deferred.page_faults.*;$DF deferred.one_entry_many_samples.*;$DF deferred.per_cpu*;$DF deferred.hostile_*;$DE *;$DU *;perf_events:deferred_exec: *"
	"no-deferred-leaf-fixup|arm64|mutate:no-deferred-leaf-fixup perf fixes up arm64 leaf frames of callchains taken in place only|perf:page_fault_events: perf record --call-graph fp,defer, stopped*;perf:page_fault_events: perf probe -x*;distro:perf-test: *"
	"no-arm64-unwinder|arm64|mutate:no-arm64-unwinder arm64's user unwinder walks no task|distro:perf-test: *"
	"without-no-reclaim|arm64|mutate:aux-reclaims rb_alloc_aux_page() may reclaim for every chunk|$PA aux_large_chunks_never_reclaim"
	"without-no-retry|arm64|revert:perf/aux: Don't retry AUX chunk orders that already failed|$PA prefer-large, 4 MiB, no large block free"
	"tests|arm64|mutate:tests a broken expectation in every case|exceptions:page_fault_events: *;exceptions:memfd_noexec: *;exceptions:clang: *;kunit:perf_aux: *;$VH *;$PK *"
	"tests|x86_64|mutate:tests a broken expectation in every case|exceptions:page_fault_events: *;exceptions:memfd_noexec: *;exceptions:clang: *;kunit:perf_aux: *;$VH *;$PK *"
	"requester-only-records|arm64|mutate:requester-only-records deferred records only to events with defer_callchain|$DF deferred.cpu_clock.*;$DF deferred.page_faults.*;$DF deferred.one_entry_many_samples.*;$DF deferred.per_cpu.*;$DF deferred.per_cpu_pinned.*;$DF deferred.hostile_*"
	"without-vmap-huge|arm64|revert:mm/vmalloc: Let vmap() map contiguous runs of pages with huge entries|$VH vmap_huge_mixed_orders;$VH vmap_huge_broken_run;$VH vmap_huge_unmap;$VH vmap_huge_set_memory"
)

git_t() { git -C "$SRC" "$@"; }
ktap=$BUILD/logs/mutants.ktap
mkdir -p "$BUILD/logs"
# The table, in the usual form, and the total line.
report() {
	ktap_end >>"$ktap"
	echo
	grep -v '^HARNESS' "$ktap"
	python3 "$TOP/scripts/ktap.py" parse mutants "$ktap" "$BUILD/logs/mutants.json" >/dev/null
	python3 "$TOP/scripts/ktap.py" total "$BUILD/logs/mutants.json"
}

# Only the mutants of the arches in ARCHES (all of them by default) and,
# if MUTANTS_ONLY lists names (space-separated), only those.
todo=()
for m in "${ALL[@]}"; do
	IFS='|' read -r name arch _ <<<"$m"
	case " ${ARCHES:-$SUPPORTED_ARCHES} " in *" $arch "*) ;; *) continue ;; esac
	[ -z "${MUTANTS_ONLY:-}" ] || [[ " $MUTANTS_ONLY " == *" $name "* ]] || continue
	todo+=("$m")
done
ktap_begin mutants "${#todo[@]}" >"$ktap"

"$TOP/scripts/tree.sh" || exit 1
head=$(git_t rev-parse HEAD)
if [ "$head" != "$(cat "$SRC/.git/series-head")" ] || [ -n "$(git_t status --porcelain)" ]; then
	# Mutants reset the tree: never with work in it that patches/ lacks.
	{
		ktap_begin mutants 1
		ktap_result 0 1 "mutants # SKIP $SRC has work not exported to patches/ ('make export' first)"
	} >"$ktap"
	report
	exit 0
fi
trap 'git_t reset -q --hard "$head"' EXIT

# What a mutant's verdict depends on: its line above (not the others), the
# mutated tree (kernel, KUnit suites and selftests), how mutants are made
# and judged, the harness and the tools.
mutant_key() {
	{
		echo "$1"
		git_t rev-parse 'HEAD^{tree}'
		sed '/^ALL=(/,/^)/d' "$TOP/scripts/mutants.sh"
		case $1 in *"|mutate:"*) cat "$TOP/scripts/mutate.py" ;; esac
	} | verdict_key
}

mutate() {
	case $1 in
	revert:*) revert_patch "$SRC" "${1#revert:}" ;;
	mutate:*)
		set -- "${1#mutate:}"
		python3 "$TOP/scripts/mutate.py" "${1%% *}" "$SRC" &&
			git_t commit -q -a -m "mutant: ${1%% *}"
		;;
	esac
}
# The suites of a mutant's "suite: case" patterns, space-separated.
mutant_suites() {
	tr ';' '\n' <<<"$1" | sed -e 's/^?//' -e 's/: .*//' | sort -u | tr '\n' ' '
}
# Those of them its guest runs: all but KUnit's (scripts/kunit.sh).
guest_suites() {
	mutant_suites "$1" | tr ' ' '\n' | grep -v '^kunit:' | tr '\n' ' '
}
# judge LOG JSON: LOG's results into JSON; failures are the point here,
# so the table only, not the FAIL lines.
judge() {
	[ -f "$1" ] || return 1
	python3 "$TOP/scripts/ktap.py" parse "$ARCH mutant $name" \
		"$1" "$2" --required "$TOP/configs/required-tests" | grep -v -e '^  FAIL' -e '^       | '
	[ -f "$2" ]
}
# The disk a mutant's guest needs: the distro run's, for its suites. Its
# boot keeps both CPUs: it also runs the suites of the other cases, and its
# distro suites are arm64's, where the one-CPU reason was not seen.
mutant_disk() {
	case ";$1" in *";distro:"* | *";?distro:"*) distro_disk ;; esac
}
# What a mutant does, in words.
describe() {
	case $1 in
	revert:*) echo "revert '${1#revert:}'" ;;
	mutate:*) set -- "${1#mutate:}"; echo "mutate.py ${1%% *}: ${1#* }" ;;
	esac
}

n=0
for m in "${todo[@]}"; do
	IFS='|' read -r name ARCH how fails <<<"$m"
	what=$(describe "$how")
	n=$((n + 1))
	check_arch
	printf '\n== mutant %s (%s): %s\n' "$name" "$ARCH" "$what"
	git_t reset -q --hard "$head"
	log=$BUILD/logs/$ARCH/mutant-$name.log
	json=${log%.log}.json
	rm -f "$log" "$json" "$log.expect" "${log%.log}-kunit.log" "${json%.json}-kunit.json"
	ok=
	vc=mutant-$ARCH-$name
	if ! out=$(mutate "$how" 2>&1); then
		echo "# $out" >>"$ktap"
	elif key=$(mutant_key "$m") &&
		verdict_reuse "$vc" "$key" "tree, harness and tools" >>"$ktap"; then
		ok=1
	elif [ -n "$(guest_suites "$fails")" ] && ! build_guest; then
		echo "# step $FAILED_STEP failed" >>"$ktap"
	elif [ -n "$(mutant_disk "$fails")" ] && ! "$TOP/scripts/build-distro.sh"; then
		echo "# step build-distro failed" >>"$ktap"
	else
		# The guest runs only the suites of the cases the mutant names
		# (the others passed on the series' own kernel); kunit.py the
		# KUnit suites, if it names any (kunit.py's verdict then fails
		# too).
		IFS=';' read -r -a globs <<<"$fails"
		jsons=()
		if [ -n "$(guest_suites "$fails")" ]; then
			GUEST_DISK=$(mutant_disk "$fails") GUEST_SUITES=$(guest_suites "$fails") \
				GUEST_LOG=mutant-$name TIMEOUT=900 "$TOP/scripts/run-guest.sh" check
			judge "$log" "$json" && jsons+=("$json")
		fi
		if [[ ";$fails" == *";kunit:"* ]]; then
			"$TOP/scripts/kunit.sh" >"${log%.log}-kunit.log" || true
			judge "${log%.log}-kunit.log" "${json%.json}-kunit.json" && jsons+=("${json%.json}-kunit.json")
			globs+=("?kunit.py: *")
		fi
		if [ ${#jsons[@]} = 0 ]; then
			echo "# no results, serial log $log" >>"$ktap"
		elif python3 "$TOP/scripts/ktap.py" expect "${jsons[@]}" "${globs[@]}" >"$log.expect"; then
			ok=1
			verdict_keep "$vc" "$key" "$log.expect"
		else
			verdict_drop "$vc"
		fi
		[ -f "$log.expect" ] && tee -a "$ktap" <"$log.expect"
	fi
	ktap_result "$([ -n "$ok" ]; echo $?)" "$n" "mutants: $name ($ARCH): $what" >>"$ktap"
done
git_t reset -q --hard "$head"
report

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# 'make mutants': show that the tests fail when what they test is missing.
# Each mutant is one scratch commit on top of the assembled tree: a patch of
# the series taken out again (git revert of its commit, the same tree as
# dropping its line from patches/series), or an edit by scripts/check/mutate.py
# (a broken expectation in every test case; huge AUX mappings taken out of
# the drivers). The kernel, selftests and initramfs are rebuilt
# incrementally and booted as in 'make check', running only the suites of
# the cases the mutant names; exactly those cases must fail and the rest of
# their suites pass. The tree is put back after every mutant, also on
# error. Prints KTAP and the usual total line.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
# A mutant's kernel and perf are not the series': lib.sh keeps no build of
# theirs for another clone.
export BUILD_KEEP=0

# The mutants (configs/mutants), one "name|arch|how|globs" line each, how
# being revert:SUBJECT or "mutate:MODE WHAT", globs ';'-separated.
read_mutants() {
	awk -v OFS='|' '
	function flush() { if (name != "") print name, arch, how, globs }
	/^#/ || !NF { next }
	/^[^ \t]/ { flush(); name = $1; arch = $2; how = $3; globs = ""; next }
	{ sub(/^[ \t]+/, "") }
	/^what: / {
		what = substr($0, 7)
		how = how == "revert" ? "revert:" what : how " " what
		next
	}
	{ globs = globs (globs == "" ? "" : ";") $0 }
	END { flush() }' "$TOP/configs/mutants"
}
mapfile -t ALL < <(read_mutants)
[ ${#ALL[@]} -gt 0 ] || die "no mutants in configs/mutants"

git_t() { git -C "$SRC" "$@"; }
ktap=$BUILD/logs/mutants.ktap
mkdir -p "$BUILD/logs"
# The table, in the usual form, and the total line.
report() {
	ktap_end >>"$ktap"
	echo
	grep -v '^HARNESS' "$ktap"
	python3 "$TOP/scripts/check/ktap.py" parse mutants "$ktap" "$BUILD/logs/mutants.json" >/dev/null
	python3 "$TOP/scripts/check/ktap.py" total "$BUILD/logs/mutants.json"
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

"$TOP/scripts/series/tree.sh" || exit 1
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
# The tree goes back after the mutants; the build does not: the kernel of
# the last mutant of each arch must not pass for the series' afterwards.
# Without it, the next kernel.sh takes the series' kept build again
# (lib.sh's build_take) or builds it.
mutated=
forget_mutant_kernels() {
	for ARCH in $mutated; do
		check_arch
		rm -f "$OUT/vmlinux" "$OUT/$IMAGE"
	done
}
trap 'git_t reset -q --hard "$head"; forget_mutant_kernels' EXIT

# What a mutant's verdict depends on: its entry in configs/mutants (not the others), the
# mutated tree (kernel, KUnit suites and selftests), how mutants are made
# and judged, the harness and the tools.
mutant_key() {
	{
		echo "$1"
		git_t rev-parse 'HEAD^{tree}'
		cat "$TOP/scripts/check/mutants.sh"
		case $1 in *"|mutate:"*) cat "$TOP/scripts/check/mutate.py" ;; esac
	} | verdict_key
}

mutate() {
	case $1 in
	revert:*) revert_patch "$SRC" "${1#revert:}" ;;
	mutate:*)
		set -- "${1#mutate:}"
		python3 "$TOP/scripts/check/mutate.py" "${1%% *}" "$SRC" &&
			git_t commit -q -a -m "mutant: ${1%% *}"
		;;
	esac
}
# The suites of a mutant's "suite: case" patterns, space-separated.
mutant_suites() {
	tr ';' '\n' <<<"$1" | sed -e 's/^?//' -e 's/: .*//' | sort -u | tr '\n' ' '
}
# Those of them its guest runs: all but KUnit's (scripts/check/kunit.sh).
guest_suites() {
	mutant_suites "$1" | tr ' ' '\n' | grep -v '^kunit:' | tr '\n' ' '
}
# Failures are the point here: the tables only, not the FAIL lines.
tables() { grep -v -e '^  FAIL' -e '^       | '; }
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
	[[ " $mutated " == *" $ARCH "* ]] || mutated+=" $ARCH"
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
	elif [ -n "$(mutant_disk "$fails")" ] && ! "$TOP/scripts/build/distro.sh"; then
		echo "# step build/distro failed" >>"$ktap"
	else
		# The guest runs only the suites of the cases the mutant names
		# (the others passed on the series' own kernel); kunit.py the
		# KUnit suites, if it names any (kunit.py's verdict then fails
		# too).
		IFS=';' read -r -a globs <<<"$fails"
		jsons=()
		if [ -n "$(guest_suites "$fails")" ]; then
			GUEST_DISK=$(mutant_disk "$fails") GUEST_SUITES=$(guest_suites "$fails") TIMEOUT=900 \
				boot_collect "$ARCH mutant $name" "mutant-$name" "$json" | tables
			[ -f "$json" ] && jsons+=("$json")
		fi
		if [[ ";$fails" == *";kunit:"* ]]; then
			"$TOP/scripts/check/kunit.sh" >"${log%.log}-kunit.log" || true
			python3 "$TOP/scripts/check/ktap.py" parse "$ARCH mutant $name" "${log%.log}-kunit.log" \
				"${json%.json}-kunit.json" --suites "$TOP/configs/suites" | tables
			[ -f "${json%.json}-kunit.json" ] && jsons+=("${json%.json}-kunit.json")
			globs+=("?kunit.py: *")
		fi
		if [ ${#jsons[@]} = 0 ]; then
			echo "# no results, serial log $log" >>"$ktap"
		elif python3 "$TOP/scripts/check/ktap.py" expect "${jsons[@]}" "${globs[@]}" >"$log.expect"; then
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

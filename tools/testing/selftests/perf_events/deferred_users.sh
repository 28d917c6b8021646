#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Deferred user unwinds of more than one user, through the two users of
# CONFIG_TEST_UNWIND_DEFERRED (<debugfs>/unwind_deferred_test/):
#
# - exec runs the callbacks of the unwinds requested before it. A request
#   by a second user while they run (here from the first user's callback,
#   as an interrupt or NMI could make it) must neither find the task work
#   still queued, where adding it again corrupts the task's work list, nor
#   go unanswered: the second user gets its callback once, with the first
#   request's cookie and stack;
# - a request made after the user's callback ran in the same kernel entry
#   fails with -EALREADY, also when the task has no unwind cache (its
#   allocation failed: failslab, and the test users' fail-nth, make it
#   fail).

DIR="$(dirname "$(readlink -f "$0")")"
. "$DIR"/../kselftest/ktap_helpers.sh

dir=/sys/kernel/debug/unwind_deferred_test
failslab=/sys/kernel/debug/failslab

ktap_print_header
[ "$(id -u)" -eq 0 ] || { ktap_skip_all "needs root"; exit "$KSFT_SKIP"; }
[ -d $dir ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ ! -d $dir ]; then
	ktap_skip_all "no $dir (CONFIG_TEST_UNWIND_DEFERRED=y)"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 3

# check NAME EXPECTED...: every "key value" of EXPECTED is in the result.
check() {
	name=$1
	shift
	result=$(cat $dir/result)
	ktap_print_msg "$name:" $result
	ok=true
	for want in "$@"; do
		if ! echo "$result" | grep -qx "$want"; then
			ktap_print_msg "expected '$want'"
			ok=false
		fi
	done
	ktap_test_result "$name" $ok
}

# A child shell arms the exec probe with its own PID, then execs.
sh -c "echo \$\$ > $dir/exec && exec sh -c :"
check "exec answers a second user's request made while it runs callbacks" \
	"first_request 0" "first_calls 1" "first_cookie_answered 1" \
	"work_queued_in_callback 0" "second_requested 1" "second_request 0" \
	"second_calls 1" "second_cookie_answered 1" "same_cookie 1" \
	"same_stack 1"

# A new task: the first request allocates its unwind cache.
sh -c "echo 1 > $dir/request"
check "a request after the callback fails with -EALREADY" \
	"first_request 0" "first_calls 1" "cache 1" "again_ealready 1" \
	"again_cookie 0"

# The same with the cache allocation failed by failslab: "nocache" makes
# the first fault injection point after the request fail.
if [ ! -w $failslab/ignore-gfp-wait ]; then
	ktap_test_skip "no failslab (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)"
	ktap_finished
fi
ignore=$(cat $failslab/ignore-gfp-wait)
echo N > $failslab/ignore-gfp-wait
sh -c "echo nocache > $dir/request"
echo "$ignore" > $failslab/ignore-gfp-wait
check "without an unwind cache, a request after the callback fails with -EALREADY" \
	"first_request 0" "first_calls 1" "cache 0" "again_ealready 1" \
	"again_cookie 0"
ktap_finished

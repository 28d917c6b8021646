#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# perf test's output on stdin as KTAP on stdout: its result lines
# ("  5: Test basic open/mmap/read : Ok", " 73.3: ... : Skip (why)")
# become KTAP results, everything else diagnostics.
echo "KTAP version 1"
awk '
match($0, /^ *[0-9]+(\.[0-9]+)?: /) {
	id = substr($0, 1, RLENGTH - 2); sub(/^ */, "", id)
	rest = substr($0, RLENGTH + 1)
	if (match(rest, /: (Ok|Skip.*|FAILED!)$/)) {
		desc = substr(rest, 1, RSTART - 1); st = substr(rest, RSTART + 2)
		sub(/ +$/, "", desc)
		n++
		if (st == "Ok")
			print "ok " n " " id " " desc
		else if (st ~ /^Skip/) {
			why = st; sub(/^Skip */, "", why); gsub(/^\(|\)$/, "", why)
			print "ok " n " " id " " desc " # SKIP " why
		} else
			print "not ok " n " " id " " desc
		next
	}
}
{ print "# " $0 }
END { print "1.." n }'

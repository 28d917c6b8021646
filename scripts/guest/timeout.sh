#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kselftest runner calls GNU 'timeout --foreground'; busybox's timeout
# has no such option (and needs none: the runner is not interactive here).
[ "$1" = --foreground ] && shift
exec /bin/busybox timeout "$@"

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __SELFTESTS_PERF_EVENTS_TRACEPOINT_ID_H
#define __SELFTESTS_PERF_EVENTS_TRACEPOINT_ID_H

#include <stdio.h>

#include "../kselftest.h"

/*
 * The perf event id (attr.config) of tracepoint @name, "group/event", from
 * tracefs wherever it is mounted; -1 if neither place has it.
 */
static inline int tracepoint_id(const char *name)
{
	static const char * const roots[] = {
		"/sys/kernel/tracing/events",
		"/sys/kernel/debug/tracing/events",
	};
	char path[256];
	unsigned int i;
	int id = -1;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(roots) && id < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s/id", roots[i], name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

#endif

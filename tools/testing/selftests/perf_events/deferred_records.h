/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records the small deferred-callchain tests read back from a perf
 * ring: samples of PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN and
 * PERF_RECORD_CALLCHAIN_DEFERRED, copied out of the ring in order; and the
 * CPUs the tests keep their tasks on; tracepoint ids. Include it after
 * defining _GNU_SOURCE.
 */
#ifndef DEFERRED_RECORDS_H
#define DEFERRED_RECORDS_H

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "../kselftest.h"

struct dr_sample {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 nr;
	__u64 ips[];
};

struct dr_deferred {
	struct perf_event_header header;
	__u64 cookie;
	__u64 nr;
	__u64 ips[];
};

/*
 * The length to mmap() for a ring that holds @records records of up to
 * @size bytes each: the data pages, a power of two, and the header page.
 */
static inline size_t dr_ring_len(size_t records, size_t size, long page)
{
	size_t pages = 1;

	while (pages * page < records * size)
		pages *= 2;
	return (pages + 1) * page;
}

/* Copy up to @size bytes of unread records out of the ring, in order. */
static inline size_t dr_ring_copy(struct perf_event_mmap_page *pg, char *out,
				  size_t size)
{
	char *data = (char *)pg + pg->data_offset;
	__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = pg->data_tail, len = head - tail, i;

	if (len > size)
		len = size;
	for (i = 0; i < len; i++)
		out[i] = data[(tail + i) % pg->data_size];
	return len;
}

/* The record at @off of a copy, or NULL past its end or on a bad size. */
static inline const struct perf_event_header *dr_record(const char *buf,
							size_t len, size_t off)
{
	const struct perf_event_header *h = (const void *)(buf + off);

	if (off + sizeof(*h) > len || h->size < sizeof(*h) || off + h->size > len)
		return NULL;
	return h;
}

/*
 * Sampling a tracepoint (attr.config, the caller's) with its user callchain
 * deferred: the kernel part left out, the event disabled until enabled.
 */
static inline struct perf_event_attr dr_tracepoint_attr(int id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.exclude_callchain_kernel = 1,
		.disabled = 1,
		.defer_callchain = 1,
		.defer_output = 1,
	};

	return attr;
}

/* The deferred record of @cookie at or after @off of a copy, or NULL. */
static inline const struct dr_deferred *dr_answer(const char *buf, size_t len,
						  size_t off, __u64 cookie)
{
	const struct perf_event_header *h;

	for (; (h = dr_record(buf, len, off)); off += h->size) {
		const struct dr_deferred *d = (const void *)h;

		if (h->type == PERF_RECORD_CALLCHAIN_DEFERRED && d->cookie == cookie)
			return d;
	}
	return NULL;
}

/* The cookie at the end of a sample's callchain, or 0 if there is none. */
static inline __u64 dr_sample_cookie(const struct dr_sample *s)
{
	if (s->nr >= 2 && s->ips[s->nr - 2] == PERF_CONTEXT_USER_DEFERRED)
		return s->ips[s->nr - 1];
	return 0;
}

/* The user ips after PERF_CONTEXT_USER in a callchain: how many, and where. */
static inline __u64 dr_user_part(const __u64 *chain, __u64 nr, const __u64 **ips)
{
	__u64 i;

	for (i = 0; i + 1 < nr; i++) {
		if (chain[i] == PERF_CONTEXT_USER) {
			*ips = &chain[i + 1];
			return nr - i - 1;
		}
	}
	return 0;
}

/*
 * Whether a sample holds its user stack in place, after PERF_CONTEXT_USER.
 * A kernel without a deferred unwinder for the arch (no CONFIG_UNWIND_USER)
 * does that for every sample that asked for a deferred one.
 */
static inline int dr_sample_user_in_place(const struct dr_sample *s)
{
	const __u64 *ips;

	return dr_user_part(s->ips, s->nr, &ips) && ips[0] < PERF_CONTEXT_MAX;
}

/*
 * A CPU set as large as the machine's, its size in bytes in @size: a
 * cpu_set_t holds only CPU_SETSIZE (1024) CPUs, and sched_getaffinity()
 * fails with EINVAL on a machine with more. CPU_FREE() it.
 */
static inline cpu_set_t *dr_cpu_alloc(size_t *size)
{
	long nconf = sysconf(_SC_NPROCESSORS_CONF);

	if (nconf < 1)
		nconf = CPU_SETSIZE;
	*size = CPU_ALLOC_SIZE(nconf);
	return CPU_ALLOC(nconf);
}

/* Keep task @pid (0: the caller) on the @nr CPUs in @cpus: 0 or -errno. */
static inline int dr_set_cpus(pid_t pid, const int *cpus, int nr)
{
	cpu_set_t *set;
	size_t size;
	int i, err = 0;

	set = dr_cpu_alloc(&size);
	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	for (i = 0; i < nr; i++)
		CPU_SET_S(cpus[i], size, set);
	if (sched_setaffinity(pid, size, set))
		err = -errno;
	CPU_FREE(set);
	return err;
}

/*
 * The first CPUs the caller may run on, at most @max of them, in @cpus:
 * how many, -ENOENT for none, or -errno.
 */
static inline int dr_first_cpus(int *cpus, int max)
{
	int cpu, nr = 0, err = 0;
	cpu_set_t *set;
	size_t size;

	set = dr_cpu_alloc(&size);
	if (!set)
		return -ENOMEM;
	if (sched_getaffinity(0, size, set))
		err = -errno;
	for (cpu = 0; !err && cpu < (int)(size * 8) && nr < max; cpu++)
		if (CPU_ISSET_S(cpu, size, set))
			cpus[nr++] = cpu;
	CPU_FREE(set);
	if (err)
		return err;
	return nr ? nr : -ENOENT;
}

#define DR_NO_UNWINDER	"user stacks taken in place: no deferred unwinder for this arch " \
			"(CONFIG_UNWIND_USER)"

/*
 * A return address as the kernel reports it: without the pointer
 * authentication code that pac-ret signs saved return addresses with
 * (xpaclri is a NOP on a CPU without pointer authentication).
 */
#define DR_ATTR(x)	__attribute__((x))

static inline DR_ATTR(always_inline) unsigned long dr_strip_ra(unsigned long ra)
{
#if defined(__aarch64__)
	register unsigned long lr asm("x30") = ra;

	asm ("hint #7" : "+r" (lr));	/* xpaclri */
	return lr;
#else
	return ra;
#endif
}

/*
 * The perf event id (attr.config) of tracepoint @name, "group/event", from
 * tracefs wherever it is mounted; -1 if neither place has it.
 */
static inline int dr_tracepoint_id(const char *name)
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

#endif /* DEFERRED_RECORDS_H */

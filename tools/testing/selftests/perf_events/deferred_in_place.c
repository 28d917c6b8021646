// SPDX-License-Identifier: GPL-2.0
/*
 * A deferred user callchain is the one the sample would carry in place.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "deferred_callchain.h"
#include "tracepoint_id.h"

/*
 * The deferred user callchain must be the one the sample would carry in
 * place: two events on raw_syscalls:sys_enter of this task, filtered on
 * getppid(), one with defer_callchain and one without, write into the
 * same ring. Each call writes one sample of each, next to each other; the
 * user part of the one without defer_callchain (perf_callchain_user(),
 * walked in the syscall) must equal, ip for ip and to the outermost frame,
 * the deferred record that answers the other one's cookie (walked on the
 * way back to user space). (Software events will not do: the events of
 * one software event type share the callchain of the first one sampled.)
 *
 * Where deferral is the point, the two may differ in length, never in an
 * ip they both have: the walk in place runs with page faults disabled and
 * ends at a frame record it cannot read without faulting (a page not
 * mapped at that moment), where the deferred walk may fault and go on; so
 * the in-place callchain may be a prefix of the deferred one. And on x86,
 * perf_callchain_user() follows the frame pointer as long as it points
 * into user space, so past the outermost frame record (glibc's start code
 * keeps none) it goes on reading whatever the last saved frame pointer
 * leads to, where the generic unwinder stops because the next frame does
 * not lie above the last: there the deferred callchain may be a prefix of
 * the one taken in place. Most pairs must be equal.
 */
#if defined(__x86_64__)
#define DC_IN_PLACE_RUNS_ON	1
#else
#define DC_IN_PLACE_RUNS_ON	0
#endif

FIXTURE(in_place)
{
	struct dc_session s;
	int fd;			/* the event without defer_callchain */
};

FIXTURE_SETUP(in_place)
{
	struct dc_config c = {
		.type = PERF_TYPE_TRACEPOINT,
		.period = 1,
		.defer = true,
	};
	struct perf_event_attr attr;
	char filter[32];
	int id, err;

	dc_session_init(&self->s);
	self->fd = -1;
	if (!DC_HAVE_WORKLOAD)
		SKIP(return, "no workload for this architecture");
	if (geteuid())
		SKIP(return, "needs root for kernel callchains and tracepoints");
	id = tracepoint_id("raw_syscalls/sys_enter");
	if (id < 0)
		SKIP(return, "no tracepoint raw_syscalls/sys_enter in tracefs");
	c.config = id;
	err = dc_session_open(&self->s, &c, false);
	if (err == -EOPNOTSUPP)
		SKIP(return, "perf_event_open() rejects defer_callchain/defer_output");
	ASSERT_EQ(0, err) TH_LOG("opening the events: %s", strerror(-err));

	dc_attr(&attr, PERF_TYPE_TRACEPOINT, id, 1);
	self->fd = dc_perf_open(&attr, 0, -1);
	ASSERT_LE(0, self->fd) TH_LOG("opening the event without defer_callchain: %s",
				      strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_SET_OUTPUT, self->s.ring[0].fd));
	snprintf(filter, sizeof(filter), "id == %d", __NR_getppid);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_SET_FILTER, filter));
	ASSERT_EQ(0, ioctl(self->s.ring[0].fd, PERF_EVENT_IOC_SET_FILTER, filter));
}

FIXTURE_TEARDOWN(in_place)
{
	if (self->fd >= 0)
		close(self->fd);
	dc_session_close(&self->s);
}

static bool dc_is_deferred(const struct dc_sample *smp)
{
	return smp->nr >= 2 &&
	       smp->chain[smp->nr - 2] == PERF_CONTEXT_USER_DEFERRED;
}

/* How the user stacks of the pairs of samples compare. */
struct dc_pairs {
	size_t pairs, workload, equal, shorter, longer;
};

/*
 * One call, sampled by both events: the user stack walked in place by
 * @without and the deferred record that answers @with.
 */
static void dc_compare_pair(struct __test_metadata *_metadata,
			    const struct dc_state *st,
			    const struct dc_sample *with,
			    const struct dc_sample *without,
			    struct dc_pairs *p, struct dc_result *res)
{
	__u64 cookie = with->chain[with->nr - 1];
	const struct dc_deferred *d;
	const __u64 *ips = NULL;
	__u64 nr, k;
	size_t j, n;

	p->pairs++;
	nr = dr_user_part(without->chain, without->nr, &ips);
	if (!nr) {
		dc_bad(res, "sample at %#llx without a user callchain",
		       without->ip);
		return;
	}
	p->workload += ips[0] == st->e->w->pc;
	j = dc_find_cookie(st->ours, st->nr_ours, cookie, &n);
	if (n != 1) {
		dc_bad(res, "cookie %#llx: %zu deferred records", cookie, n);
		return;
	}
	d = &st->ours[j];
	for (k = 0; k < nr && k < d->nr && ips[k] == d->ips[k]; k++)
		;
	if (k == nr && k == d->nr) {
		p->equal++;
		return;
	}
	if (k == nr) {
		p->shorter++;
		return;
	}
	if (DC_IN_PLACE_RUNS_ON && k == d->nr && k >= 4) {
		p->longer++;
		return;
	}
	if (!res->bad)
		for (k = 0; k < nr || k < d->nr; k++)
			TH_LOG("[%llu] in place %#llx, deferred %#llx", k,
			       k < nr ? ips[k] : 0, k < d->nr ? d->ips[k] : 0);
	dc_bad(res, "call at %#llx: %llu ips in place, %llu deferred",
	       ips[0], nr, d->nr);
}

TEST_F(in_place, matches_deferred)
{
	struct dc_work w = {
		.op = DC_OP_SYSCALLS,
		.count = DC_SYSCALLS,
		.nr = __NR_getppid,
	};
	const struct dc_expect e = { .w = &w, .defer = true, .pinned_ring = -1 };
	__u32 pid = getpid(), tid = syscall(SYS_gettid);
	const struct dc_sample *smp, *prev = NULL;
	struct dc_result res = { 0 };
	struct dc_pairs p = { 0 };
	struct dc_records recs;
	struct dc_state st;
	size_t i, cookies = 0;

	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	dc_run(&self->s, &w, 4, false);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_DISABLE, 0));
	dc_drain_all(&self->s);
	ASSERT_EQ(0, self->s.err) TH_LOG("%s", self->s.why);

	ASSERT_EQ(0, dc_parse(&self->s, &recs));
	ASSERT_EQ(0, recs.lost) TH_LOG("records lost, results meaningless");
	ASSERT_EQ(0, dc_state_init(&st, &e, &recs));
	for (i = 0; i < recs.nr_samples; i++) {
		smp = &recs.samples[i];
		if (smp->pid != pid || smp->tid != tid)
			continue;
		cookies += dc_is_deferred(smp);
		/* A pair: one sample of each event, in either order. */
		if (!prev || dc_is_deferred(prev) == dc_is_deferred(smp)) {
			prev = smp;
			continue;
		}
		if (dc_is_deferred(smp))
			dc_compare_pair(_metadata, &st, smp, prev, &p, &res);
		else
			dc_compare_pair(_metadata, &st, prev, smp, &p, &res);
		prev = NULL;
	}
	if (!cookies && recs.nr_samples)
		SKIP(goto out, DR_NO_UNWINDER);
	TH_LOG("pairs %zu (workload %zu): equal %zu, shorter in place %zu, longer %zu",
	       p.pairs, p.workload, p.equal, p.shorter, p.longer);
	EXPECT_LT(0, p.workload) TH_LOG("no pair from a syscall of the workload");
	EXPECT_LT(p.pairs / 2, DC_IN_PLACE_RUNS_ON ? p.equal + p.longer : p.equal)
		TH_LOG("of %zu pairs, %zu equal, %zu longer in place",
		       p.pairs, p.equal, p.longer);
	EXPECT_EQ(0, res.bad) TH_LOG("%zu problems, first: %s", res.bad, res.why);
out:
	dc_state_free(&st);
	dc_records_free(&recs);
}

TEST_HARNESS_MAIN

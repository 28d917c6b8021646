// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains, sample kind by sample kind: a cookie per
 * kernel entry, one record per cookie after the samples it answers, the
 * exact return addresses of the workload; per task and per CPU, with the
 * records in the sampling event's buffer or a side-band event's. What
 * the kernel promises, and the workload, are in deferred_callchain.h.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "deferred_callchain.h"

FIXTURE(deferred)
{
	struct dc_session s;
	char *area;
	size_t area_len;
	struct iovec iov[DC_READ_IOVS];
	int zero_fd;
	int pinned_ring;
};

FIXTURE_VARIANT(deferred)
{
	__u32 type;
	__u64 config;
	__u64 period;
	enum dc_op op;
	bool defer;		/* defer_callchain on the sampling event */
	bool self_output;	/* defer_output on the sampling event itself */
	bool per_cpu;		/* pid -1, one event per CPU */
	bool pinned;		/* workload pinned to one CPU */
};

/* cpu-clock samples of the task while level3() makes syscalls */
FIXTURE_VARIANT_ADD(deferred, cpu_clock)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = true,
};

/* The same, the sampling event receives the deferred records itself */
FIXTURE_VARIANT_ADD(deferred, cpu_clock_self_output)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = true,
	.self_output = true,
};

/* One sample per page fault while level3() writes to fresh pages */
FIXTURE_VARIANT_ADD(deferred, page_faults)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_PAGE_FAULTS,
	.period = 1,
	.op = DC_OP_FAULTS,
	.defer = true,
};

/* Many samples in one long read(): one cookie, one record */
FIXTURE_VARIANT_ADD(deferred, one_entry_many_samples)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_LONG_READ,
	.defer = true,
};

/* Per-CPU events; kernel threads are sampled too */
FIXTURE_VARIANT_ADD(deferred, per_cpu)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = true,
	.per_cpu = true,
};

/* Per-CPU sampling events that receive the deferred records themselves */
FIXTURE_VARIANT_ADD(deferred, per_cpu_self_output)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = true,
	.self_output = true,
	.per_cpu = true,
};

FIXTURE_VARIANT_ADD(deferred, per_cpu_pinned)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = true,
	.per_cpu = true,
	.pinned = true,
};

/* Without defer_callchain: the user stack is in the sample itself */
FIXTURE_VARIANT_ADD(deferred, no_defer)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = false,
};

FIXTURE_VARIANT_ADD(deferred, no_defer_per_cpu)
{
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_CPU_CLOCK,
	.period = DC_PERIOD_NS,
	.op = DC_OP_SYSCALLS,
	.defer = false,
	.per_cpu = true,
};

FIXTURE_SETUP(deferred)
{
	struct dc_config c = {
		.type = variant->type,
		.config = variant->config,
		.period = variant->period,
		.pid = variant->per_cpu ? -1 : 0,
		.defer = variant->defer,
		.self_output = variant->self_output,
	};
	long page_size = sysconf(_SC_PAGESIZE);
	int err, i;

	dc_session_init(&self->s);
	self->zero_fd = -1;
	self->pinned_ring = -1;
	if (!DC_HAVE_WORKLOAD)
		SKIP(return, "no workload for this architecture");
	if (geteuid())
		SKIP(return, "needs root: kernel callchains, per-CPU events");

	err = dc_session_open(&self->s, &c, variant->per_cpu);
	if (err == -EOPNOTSUPP)
		SKIP(return, "perf_event_open() rejects defer_callchain/defer_output");
	ASSERT_EQ(0, err) TH_LOG("opening the events: %s", strerror(-err));

	if (variant->pinned) {
		ASSERT_EQ(0, dr_set_cpus(0, &self->s.ring[0].cpu, 1));
		self->pinned_ring = 0;
	}
	if (variant->op == DC_OP_FAULTS) {
		self->area_len = DC_FAULT_AREA * page_size;
		self->area = mmap(NULL, self->area_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, self->area);
		/* One fault per page; fails harmlessly without THP. */
		madvise(self->area, self->area_len, MADV_NOHUGEPAGE);
	}
	if (variant->op == DC_OP_LONG_READ) {
		self->area_len = DC_READ_CHUNK;
		self->area = mmap(NULL, self->area_len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				  -1, 0);
		ASSERT_NE(MAP_FAILED, self->area);
		self->zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, self->zero_fd);
		for (i = 0; i < DC_READ_IOVS; i++) {
			self->iov[i].iov_base = self->area;
			self->iov[i].iov_len = self->area_len;
		}
	}
}

FIXTURE_TEARDOWN(deferred)
{
	dc_session_close(&self->s);
	if (self->area && self->area != MAP_FAILED)
		munmap(self->area, self->area_len);
	if (self->zero_fd >= 0)
		close(self->zero_fd);
}

TEST_F(deferred, callchains)
{
	struct dc_work w = { .op = variant->op };
	struct dc_expect e = {
		.w = &w,
		.defer = variant->defer,
		.self_output = variant->self_output,
		.per_cpu = variant->per_cpu,
		.pinned_ring = self->pinned_ring,
	};
	unsigned long calls, max_calls = ~0UL;
	struct dc_result res;

	switch (variant->op) {
	case DC_OP_SYSCALLS:
		w.count = DC_SYSCALLS;
		w.nr = __NR_getppid;
		break;
	case DC_OP_LONG_READ:
		w.count = 1;
		w.nr = __NR_readv;
		w.arg[0] = self->zero_fd;
		w.arg[1] = (unsigned long)self->iov;
		w.arg[2] = DC_READ_IOVS;
		break;
	case DC_OP_FAULTS:
		w.count = DC_FAULT_PAGES;
		w.pages = self->area;
		w.step = sysconf(_SC_PAGESIZE);
		max_calls = DC_FAULT_AREA / DC_FAULT_PAGES;
		break;
	default:
		ASSERT_TRUE(false);
	}

	calls = dc_run(&self->s, &w, max_calls, variant->per_cpu);
	ASSERT_EQ(0, self->s.err) TH_LOG("%s", self->s.why);
	ASSERT_EQ(0, dc_check(&e, &self->s, &res)) TH_LOG("%s", res.why);
	if (variant->defer && !res.marked && res.samples)
		SKIP(return, DR_NO_UNWINDER);
	EXPECT_EQ(0, res.bad) TH_LOG("%zu problems, first: %s", res.bad, res.why);

	/* The checks above are only as good as the samples they saw. */
	ASSERT_LT(0, res.samples) TH_LOG("no samples of the test task");
	ASSERT_LT(0, res.workload) TH_LOG("no user stack from the workload");
	EXPECT_LT(0, res.at_pc) TH_LOG("no sample inside a kernel entry of the workload");
	if (variant->defer)
		EXPECT_LT(0, res.deferred);
	/*
	 * One fault, one sample, one cookie. The software event samples the
	 * user registers of the fault: the samples have no kernel part.
	 */
	if (variant->op == DC_OP_FAULTS) {
		EXPECT_GE(calls * DC_FAULT_PAGES, res.at_pc);
		EXPECT_LE(res.at_pc, res.cookies);
	}
	/* Each readv() is one kernel entry: one cookie, many samples. */
	if (variant->op == DC_OP_LONG_READ) {
		TH_LOG("readv() calls %lu, with samples %zu, most samples in one %zu",
		       calls, res.entries, res.max_per_cookie);
		EXPECT_LT(0, res.entries);
		EXPECT_GE(calls, res.entries);
		EXPECT_LT(1, res.max_per_cookie);
	}
	if (variant->per_cpu)
		EXPECT_LT(0, res.kthread_samples);
}

TEST_HARNESS_MAIN

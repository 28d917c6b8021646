// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred unwinder stops where frame pointers lead nowhere: a
 * kernel address, an unmapped page, a misaligned record, a record that
 * points at itself, two that point at each other.
 */
#define _GNU_SOURCE

#include "kselftest_harness.h"
#include "deferred_callchain.h"

FIXTURE(hostile)
{
	struct dc_session s;
};

FIXTURE_VARIANT(hostile)
{
	enum dc_hostile kind;
};

FIXTURE_VARIANT_ADD(hostile, kernel_address)
{
	.kind = DC_HOSTILE_KERNEL,
};

FIXTURE_VARIANT_ADD(hostile, unmapped)
{
	.kind = DC_HOSTILE_UNMAPPED,
};

FIXTURE_VARIANT_ADD(hostile, misaligned)
{
	.kind = DC_HOSTILE_MISALIGNED,
};

FIXTURE_VARIANT_ADD(hostile, self_loop)
{
	.kind = DC_HOSTILE_SELF,
};

FIXTURE_VARIANT_ADD(hostile, two_frame_cycle)
{
	.kind = DC_HOSTILE_CYCLE,
};

FIXTURE_SETUP(hostile)
{
	struct dc_config c = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.period = DC_PERIOD_NS,
		.defer = true,
	};
	int err;

	dc_session_init(&self->s);
	if (!DC_HAVE_WORKLOAD)
		SKIP(return, "no workload for this architecture");
	if (geteuid())
		SKIP(return, "needs root for kernel callchains");
	err = dc_session_open(&self->s, &c, false);
	if (err == -EOPNOTSUPP)
		SKIP(return, "perf_event_open() rejects defer_callchain/defer_output");
	ASSERT_EQ(0, err) TH_LOG("opening the events: %s", strerror(-err));
}

FIXTURE_TEARDOWN(hostile)
{
	dc_session_close(&self->s);
}

/*
 * An unmapped page above the stack pointer, so that the unwinder gets past
 * its fp >= sp check and has to read it.
 */
static unsigned long dc_unmapped_above(unsigned long sp)
{
	unsigned long start, end, top = 0, next = DC_USER_TOP;
	long page_size = sysconf(_SC_PAGESIZE);
	unsigned long addr;
	unsigned char vec;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (start <= sp && sp < end)
			top = end;
		else if (start > sp && start < next)
			next = start;
	}
	fclose(f);
	if (!top || next <= top + page_size)
		return 0;
	addr = (top + (next - top) / 2) & ~(page_size - 1);
	/* mincore() fails with ENOMEM on an unmapped page */
	if (mincore((void *)addr, page_size, &vec) == 0 || errno != ENOMEM)
		return 0;
	return addr;
}

TEST_F(hostile, unwinder_stops)
{
	struct dc_work w = {
		.op = DC_OP_HOSTILE,
		.count = DC_SYSCALLS,
	};
	struct dc_expect e = {
		.w = &w,
		.defer = true,
		.pinned_ring = -1,
	};
	struct dc_frame frames[2];
	struct dc_result res;

	/*
	 * The unwinder: cfa = fp + 2 words, ra at cfa - 1 word, next fp at
	 * cfa - 2 words; it stops when fp < sp, when cfa <= sp, when cfa is
	 * misaligned or when reading the frame record fails.  The frames
	 * live in this function's frame, above the sp of level3().
	 */
	w.exp_nr = 1;
	switch (variant->kind) {
	case DC_HOSTILE_KERNEL:
		w.bad_fp = DC_KERNEL_ADDR;
		break;
	case DC_HOSTILE_UNMAPPED:
		w.bad_fp = dc_unmapped_above((unsigned long)&frames);
		if (!w.bad_fp)
			SKIP(return, "no unmapped page found above the stack");
		break;
	case DC_HOSTILE_MISALIGNED:
		w.misalign = true;
		break;
	case DC_HOSTILE_SELF:
		frames[0].fp = (unsigned long)&frames[0];
		frames[0].ra = (unsigned long)level1;
		w.bad_fp = (unsigned long)&frames[0];
		w.exp[1] = frames[0].ra;
		w.exp_nr = 2;
		break;
	case DC_HOSTILE_CYCLE:
		frames[0].fp = (unsigned long)&frames[1];
		frames[0].ra = (unsigned long)level1;
		frames[1].fp = (unsigned long)&frames[0];
		frames[1].ra = (unsigned long)level2;
		w.bad_fp = (unsigned long)&frames[0];
		w.exp[1] = frames[0].ra;
		w.exp[2] = frames[1].ra;
		w.exp_nr = 3;
		break;
	}

	dc_run(&self->s, &w, ~0UL, false);
	ASSERT_EQ(0, self->s.err) TH_LOG("%s", self->s.why);
	ASSERT_EQ(0, dc_check(&e, &self->s, &res)) TH_LOG("%s", res.why);
	if (!res.marked && res.samples)
		SKIP(return, DR_NO_UNWINDER);
	EXPECT_EQ(0, res.bad) TH_LOG("%zu problems, first: %s", res.bad, res.why);

	ASSERT_LT(0, res.samples) TH_LOG("no samples of the test task");
	ASSERT_LT(0, res.workload) TH_LOG("no deferred record with the hostile fp");
	EXPECT_LT(0, res.at_pc);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for rb_alloc_aux(), the allocator behind the perf AUX area:
 * how it splits a buffer into physically contiguous chunks for a PMU that
 * takes pages, one that prefers large chunks (PERF_PMU_CAP_AUX_PREFER_LARGE,
 * as Arm SPE and the CoreSight ETM PMU) and one that needs them
 * (PERF_PMU_CAP_AUX_NO_SG), and what each chunk's allocation may cost.
 *
 * A fake PMU's setup_aux() sees the chunks: rb_alloc_aux() puts a chunk's
 * order in page_private() of its first page. Sizes are in bytes, so that a
 * case means the same buffer with 4, 16 and 64 KiB pages, and no case takes
 * more than AUX_TEST_MAX_BYTES nor more than 1/16 of memory.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/perf_event.h>
#include <linux/sizes.h>
#include <trace/events/kmem.h>

#include "../internal.h"

#define AUX_TEST_MAX_BYTES	SZ_32M

struct aux_test {
	struct pmu pmu;
	struct perf_event event;
	struct perf_buffer *rb;
	int setup_calls;
	/* The chunks setup_aux() was given, by order. */
	int nr_chunks;
	int chunks[NR_PAGE_ORDERS];
	bool bad_chunk;
	/* Calls of the rb_alloc_aux_page() stub above its largest order. */
	int asked_above;
};

static void *aux_test_setup_aux(struct perf_event *event, void **pages,
				int nr_pages, bool overwrite)
{
	struct aux_test *t = container_of(event->pmu, struct aux_test, pmu);
	int i, j, order;

	t->setup_calls++;
	for (i = 0; i < nr_pages; i += 1 << order) {
		struct page *first = virt_to_page(pages[i]);

		order = PagePrivate(first) ? page_private(first) : 0;
		if (order > MAX_PAGE_ORDER || i + (1 << order) > nr_pages ||
		    !IS_ALIGNED(page_to_pfn(first), 1 << order)) {
			t->bad_chunk = true;
			break;
		}
		for (j = 1; j < 1 << order; j++)
			t->bad_chunk |= virt_to_page(pages[i + j]) != first + j;
		t->chunks[order]++;
		t->nr_chunks++;
	}
	return t;
}

static void aux_test_free_aux(void *aux)
{
}

static int aux_test_init(struct kunit *test)
{
	struct aux_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	/* rb_alloc_aux() only looks at the event's PMU and CPU. */
	t->pmu.setup_aux = aux_test_setup_aux;
	t->pmu.free_aux = aux_test_free_aux;
	t->event.pmu = &t->pmu;
	t->event.cpu = -1;
	t->rb = rb_alloc(0, 0, -1, RING_BUFFER_WRITABLE);
	if (!t->rb)
		return -ENOMEM;
	test->priv = t;
	return 0;
}

static void aux_test_exit(struct kunit *test)
{
	struct aux_test *t = test->priv;

	if (rb_has_aux(t->rb))
		rb_free_aux(t->rb);
	rb_free(t->rb);
}

static void aux_check_budget(struct kunit *test, unsigned long size)
{
	if (size > AUX_TEST_MAX_BYTES ||
	    size >> PAGE_SHIFT > totalram_pages() / 16)
		kunit_skip(test, "needs %lu MiB: more than %u MiB or 1/16 of memory",
			   size >> 20, AUX_TEST_MAX_BYTES >> 20);
}

static int aux_test_alloc(struct kunit *test, unsigned int caps,
			  unsigned long size, unsigned long wm, bool overwrite)
{
	struct aux_test *t = test->priv;

	aux_check_budget(test, size);
	t->pmu.capabilities = caps;
	return rb_alloc_aux(t->rb, &t->event, 0, size >> PAGE_SHIFT, wm,
			    overwrite ? 0 : RING_BUFFER_WRITABLE);
}

struct aux_layout_case {
	const char *desc;
	unsigned int caps;
	unsigned long size;	/* of the buffer */
	unsigned long wm;	/* 0: half the buffer */
	bool overwrite;
	unsigned long chunk;	/* of every chunk on fresh memory; 0: a page */
	int err;		/* what rb_alloc_aux() returns */
};

static const struct aux_layout_case layout_cases[] = {
	{ .desc = "default PMU, 4 MiB", .size = SZ_4M },
	/* The watermark's size, at most MAX_PAGE_ORDER. */
	{ .desc = "prefer-large, 16 MiB", .size = SZ_16M,
	  .caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .chunk = SZ_8M },
	{ .desc = "prefer-large, 4 MiB, watermark 64 KiB", .size = SZ_4M,
	  .wm = SZ_64K, .caps = PERF_PMU_CAP_AUX_PREFER_LARGE,
	  .chunk = SZ_64K },
	/* No watermark in overwrite mode: as large as the buffer. */
	{ .desc = "prefer-large, 4 MiB, overwrite", .size = SZ_4M,
	  .overwrite = true, .caps = PERF_PMU_CAP_AUX_PREFER_LARGE,
	  .chunk = SZ_4M },
	{ .desc = "no-sg, largest block, overwrite",
	  .size = PAGE_SIZE << MAX_PAGE_ORDER, .overwrite = true,
	  .caps = PERF_PMU_CAP_AUX_NO_SG, .chunk = PAGE_SIZE << MAX_PAGE_ORDER },
	{ .desc = "no-sg, twice the largest block, overwrite",
	  .size = 2 * PAGE_SIZE << MAX_PAGE_ORDER, .overwrite = true,
	  .caps = PERF_PMU_CAP_AUX_NO_SG, .chunk = PAGE_SIZE << MAX_PAGE_ORDER,
	  .err = -ENOMEM },
};

KUNIT_ARRAY_PARAM_DESC(layout, layout_cases, desc);

/* Free blocks of at least @order, counted in blocks of @order. */
static unsigned long aux_free_blocks(int order)
{
	unsigned long nr = 0;
	struct zone *zone;
	int o;

	for_each_populated_zone(zone) {
		for (o = order; o < NR_PAGE_ORDERS; o++) {
			/* Without the zone lock: to skip, an estimate will do. */
			nr += data_race(zone->free_area[o].nr_free) << (o - order);
		}
	}
	return nr;
}

/* On fresh memory, every chunk has the size the case expects. */
static void aux_layout(struct kunit *test)
{
	const struct aux_layout_case *p = test->param_value;
	struct aux_test *t = test->priv;
	int order = p->chunk > PAGE_SIZE ?
		    min_t(int, ilog2(p->chunk >> PAGE_SHIFT), MAX_PAGE_ORDER) : 0;
	int nr_chunks = (p->size >> PAGE_SHIFT) >> order;

	aux_check_budget(test, p->size);
	if (order && aux_free_blocks(order) < nr_chunks + 1)
		kunit_skip(test, "fewer than %d free order-%d blocks",
			   nr_chunks + 1, order);
	KUNIT_ASSERT_EQ(test, aux_test_alloc(test, p->caps, p->size, p->wm,
					     p->overwrite), p->err);
	if (p->err) {
		KUNIT_EXPECT_EQ(test, t->setup_calls, 0);
		KUNIT_EXPECT_FALSE(test, rb_has_aux(t->rb));
		return;
	}
	KUNIT_EXPECT_EQ(test, t->setup_calls, 1);
	KUNIT_EXPECT_FALSE(test, t->bad_chunk);
	KUNIT_EXPECT_EQ(test, t->nr_chunks, nr_chunks);
	KUNIT_EXPECT_EQ(test, t->chunks[order], nr_chunks);
}

/* The test task's page allocations for AUX pages (zeroed, not compound). */
struct aux_gfp_log {
	struct task_struct *task;
	int high;		/* attempts above order 0 */
	int high_reclaim;	/* of which may reclaim or wake kswapd */
	int high_reserves;	/* of which may use the reserves */
};

static void aux_probe_page_alloc(void *data, struct page *page,
				 unsigned int order, gfp_t gfp, int migratetype)
{
	struct aux_gfp_log *log = data;

	if (!in_task() || current != log->task || !order ||
	    (gfp & (__GFP_ZERO | __GFP_COMP)) != __GFP_ZERO)
		return;
	log->high++;
	log->high_reclaim += !!(gfp & __GFP_RECLAIM);
	log->high_reserves += !(gfp & __GFP_NOMEMALLOC);
}

/* Allocate a buffer and log the test task's attempts for it. */
static int aux_alloc_logged(struct kunit *test, struct aux_gfp_log *log,
			    unsigned int caps, unsigned long size,
			    bool overwrite)
{
	int ret;

	*log = (struct aux_gfp_log){ .task = current };
	/* Not once the probe is in: a skip would leave it there. */
	aux_check_budget(test, size);
	KUNIT_ASSERT_EQ(test, register_trace_mm_page_alloc(aux_probe_page_alloc,
							   log), 0);
	ret = aux_test_alloc(test, caps, size, 0, overwrite);
	unregister_trace_mm_page_alloc(aux_probe_page_alloc, log);
	tracepoint_synchronize_unregister();
	return ret;
}

/*
 * A PMU that only prefers large chunks never reclaims, compacts or dips
 * into reserves for one (it takes smaller chunks instead); one that needs
 * them (AUX_NO_SG) still may.
 */
static void aux_large_chunks_never_reclaim(struct kunit *test)
{
	struct aux_test *t = test->priv;
	struct aux_gfp_log log;

	KUNIT_ASSERT_EQ(test, aux_alloc_logged(test, &log,
					       PERF_PMU_CAP_AUX_PREFER_LARGE,
					       SZ_4M, false), 0);
	kunit_info(test, "prefer-large: %d high-order attempts, %d may reclaim, %d may use reserves\n",
		   log.high, log.high_reclaim, log.high_reserves);
	KUNIT_EXPECT_GT(test, log.high, 0);
	KUNIT_EXPECT_EQ(test, log.high_reclaim, 0);
	KUNIT_EXPECT_EQ(test, log.high_reserves, 0);

	rb_free_aux(t->rb);
	KUNIT_ASSERT_EQ(test, aux_alloc_logged(test, &log,
					       PERF_PMU_CAP_AUX_NO_SG, SZ_1M,
					       true), 0);
	KUNIT_EXPECT_GT(test, log.high, 0);
	KUNIT_EXPECT_EQ(test, log.high_reclaim, log.high);
}

/*
 * rb_alloc_aux_page() on a machine with no free block above
 * PAGE_ALLOC_COSTLY_ORDER: a chunk of at most that order, and a count of
 * the calls that asked for more.
 */
static struct page *aux_stub_alloc_page(int node, int order, bool need_contig)
{
	struct aux_test *t = kunit_get_current_test()->priv;
	struct page *page;

	if (order > PAGE_ALLOC_COSTLY_ORDER) {
		t->asked_above++;
		order = PAGE_ALLOC_COSTLY_ORDER;
	}
	page = alloc_pages_node(node, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				order);
	if (page && order) {
		split_page(page, order);
		SetPagePrivate(page);
		set_page_private(page, order);
	}
	return page;
}

static const struct aux_layout_case retry_cases[] = {
	/* Asks for the watermark's order once, then for what it got. */
	{ .desc = "prefer-large, 4 MiB, no large block free", .size = SZ_4M,
	  .caps = PERF_PMU_CAP_AUX_PREFER_LARGE },
	/* Asks every chunk for the watermark's order. */
	{ .desc = "no-sg, 4 MiB, no large block free", .size = SZ_4M,
	  .caps = PERF_PMU_CAP_AUX_NO_SG },
};

KUNIT_ARRAY_PARAM_DESC(retry, retry_cases, desc);

/*
 * When large blocks run out, a PMU that only prefers them asks for an
 * order that failed once per buffer, not once per chunk; one that needs
 * them keeps asking.
 */
static void aux_failed_orders_not_retried(struct kunit *test)
{
	const struct aux_layout_case *p = test->param_value;
	struct aux_test *t = test->priv;
	int nr_pages = p->size >> PAGE_SHIFT, rem, order, expected = 0;
	int max_order = get_order(p->size / 2);

	/* rb_alloc_aux()'s chunk orders, all chunks capped by the stub. */
	for (rem = nr_pages; rem > 0; rem -= 1 << order) {
		order = min(max_order, ilog2(rem));
		expected += order > PAGE_ALLOC_COSTLY_ORDER;
		order = min(order, PAGE_ALLOC_COSTLY_ORDER);
	}
	if (p->caps & PERF_PMU_CAP_AUX_PREFER_LARGE)
		expected = min(expected, 1);

	kunit_activate_static_stub(test, rb_alloc_aux_page,
				   aux_stub_alloc_page);
	KUNIT_ASSERT_EQ(test, aux_test_alloc(test, p->caps, p->size, 0, false),
			0);
	kunit_deactivate_static_stub(test, rb_alloc_aux_page);
	kunit_info(test, "%s: %d chunks, %d asked above order %d\n", p->desc,
		   t->nr_chunks, t->asked_above, PAGE_ALLOC_COSTLY_ORDER);
	KUNIT_EXPECT_GT(test, expected, 0);
	KUNIT_EXPECT_EQ(test, t->asked_above, expected);
	KUNIT_EXPECT_EQ(test, t->chunks[PAGE_ALLOC_COSTLY_ORDER],
			nr_pages >> PAGE_ALLOC_COSTLY_ORDER);
}

static struct kunit_case aux_test_cases[] = {
	KUNIT_CASE_PARAM(aux_layout, layout_gen_params),
	KUNIT_CASE(aux_large_chunks_never_reclaim),
	KUNIT_CASE_PARAM(aux_failed_orders_not_retried, retry_gen_params),
	{}
};

static struct kunit_suite aux_test_suite = {
	.name = "perf_aux",
	.init = aux_test_init,
	.exit = aux_test_exit,
	.test_cases = aux_test_cases,
};

kunit_test_suite(aux_test_suite);

MODULE_DESCRIPTION("KUnit tests for the perf AUX area allocator");
MODULE_LICENSE("GPL");

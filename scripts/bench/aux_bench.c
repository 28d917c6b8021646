// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's AUX allocator measurements. Not part of the series:
 * scripts/bench/bench.sh copies this file into the bench trees (series and
 * series-old, build/frag*/linux) as kernel/events/tests/aux_bench.c.
 *
 * perf_aux_bench allocates AUX buffers for a fake PMU and reports their
 * chunks, the page table entries of a huge vmap() of them (as SPE and TRBE
 * map them) and of a plain one, and the time rb_alloc_aux() took; its
 * fragmented cases (aux_bench.fragment=1) take nearly all free memory so
 * that no block above order 3 is free, and count the test task's direct
 * reclaim, compaction and high-order allocation attempts. perf_aux_churn
 * allocates and frees buffers under the guest's churn, run again through
 * debugfs with the parameters scripts/guest/bench.sh writes.
 */

#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/pgtable.h>
#include <linux/sizes.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>

/* Only mm/ knows it; the compaction events take a pointer to it. */
struct compact_control;
#include <trace/events/compaction.h>
#include <trace/events/vmscan.h>

#include "../internal.h"

#define AUX_TEST_MAX_BYTES	SZ_32M

/* What SPE and the cs_etm PMU ask for. */
#define AUX_LARGE	PERF_PMU_CAP_AUX_PREFER_LARGE

static bool fragment;
module_param(fragment, bool, 0444);
MODULE_PARM_DESC(fragment, "Run the cases that take nearly all free memory");

struct aux_test_pmu {
	struct pmu pmu;
	int setup_calls;
	int free_calls;
	/* What the last setup_aux() call was given. */
	void **pages;
	int nr_pages;
	bool overwrite;
	/* How those pages were laid out. */
	int nr_chunks;
	int chunks[NR_PAGE_ORDERS];
	bool bad_chunk;
	/* How vmap(VM_ALLOW_HUGE_VMAP) maps them, and a plain vmap(). */
	int entries[3];		/* PMD blocks, contiguous PTE groups, PTEs */
	int plain_entries;
};

struct aux_test_ctx {
	struct aux_test_pmu tpmu;
	struct perf_event *event;
	struct perf_buffer *rb;
	u64 alloc_ns;		/* how long the last rb_alloc_aux() took */
};

static void aux_test_record_chunks(struct aux_test_pmu *tpmu, void **pages,
				   int nr_pages)
{
	int i, j, order;

	for (i = 0; i < nr_pages; i += 1 << order) {
		struct page *first = virt_to_page(pages[i]);

		order = PagePrivate(first) ? page_private(first) : 0;
		if (order > MAX_PAGE_ORDER || i + (1 << order) > nr_pages ||
		    !IS_ALIGNED(page_to_pfn(first), 1 << order)) {
			tpmu->bad_chunk = true;
			return;
		}
		for (j = 1; j < 1 << order; j++) {
			if (virt_to_page(pages[i + j]) != first + j)
				tpmu->bad_chunk = true;
		}
		tpmu->chunks[order]++;
		tpmu->nr_chunks++;
	}
}

/* The size of the init_mm entry that maps @vaddr, 0 if none does. */
static unsigned long vmalloc_entry_size(const void *vaddr)
{
	unsigned long addr = (unsigned long)vaddr;
	pgd_t *pgd = pgd_offset_k(addr);
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;
	pte_t *pte;

	if (pgd_none(pgdp_get(pgd)))
		return 0;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(p4dp_get(p4d)))
		return 0;
	pud = pud_offset(p4d, addr);
	if (pud_none(pudp_get(pud)))
		return 0;
	if (pud_leaf(pudp_get(pud)))
		return PUD_SIZE;
	pmd = pmd_offset(pud, addr);
	if (pmd_none(pmdp_get(pmd)))
		return 0;
	if (pmd_leaf(pmdp_get(pmd)))
		return PMD_SIZE;
	pte = pte_offset_kernel(pmd, addr);
	if (!pte_present(ptep_get(pte)))
		return 0;
	return arch_vmap_pte_range_unmap_size(addr, pte);
}

/*
 * Count the entries that map @nr_pages at @base into @n[0..2]: PMD blocks,
 * contiguous PTE groups, PTEs. False if a page is not mapped to @pages.
 */
static bool aux_count_entries(void *base, void **pages, int nr_pages, int *n)
{
	unsigned long size;
	int i;

	for (i = 0; i < nr_pages; i += size >> PAGE_SHIFT) {
		size = vmalloc_entry_size(base + i * PAGE_SIZE);
		if (!size || size > PMD_SIZE ||
		    vmalloc_to_page(base + i * PAGE_SIZE) !=
		    virt_to_page(pages[i]))
			return false;
		n[size == PMD_SIZE ? 0 : size > PAGE_SIZE ? 1 : 2]++;
	}
	return true;
}

/*
 * Map the buffer as SPE and TRBE do and count the entries that map it;
 * count those of a plain vmap() of it too, which maps page by page.
 */
static void aux_test_map(struct aux_test_pmu *tpmu)
{
	int i, n[3] = {}, nr_pages = tpmu->nr_pages;
	struct page **pglist;
	void *huge, *plain;

	pglist = kcalloc(nr_pages, sizeof(*pglist), GFP_KERNEL);
	if (!pglist) {
		tpmu->bad_chunk = true;
		return;
	}
	for (i = 0; i < nr_pages; i++)
		pglist[i] = virt_to_page(tpmu->pages[i]);
	huge = vmap(pglist, nr_pages, VM_MAP | VM_ALLOW_HUGE_VMAP, PAGE_KERNEL);
	plain = vmap(pglist, nr_pages, VM_MAP, PAGE_KERNEL);
	kfree(pglist);

	if (!huge || !plain ||
	    !aux_count_entries(huge, tpmu->pages, nr_pages, tpmu->entries) ||
	    !aux_count_entries(plain, tpmu->pages, nr_pages, n))
		tpmu->bad_chunk = true;
	tpmu->plain_entries = n[0] + n[1] + n[2];
	if (huge)
		vunmap(huge);
	if (plain)
		vunmap(plain);
}

static void *aux_test_setup_aux(struct perf_event *event, void **pages,
				int nr_pages, bool overwrite)
{
	struct aux_test_pmu *tpmu = container_of(event->pmu,
						 struct aux_test_pmu, pmu);

	tpmu->setup_calls++;
	tpmu->pages = pages;
	tpmu->nr_pages = nr_pages;
	tpmu->overwrite = overwrite;
	aux_test_record_chunks(tpmu, pages, nr_pages);

	return tpmu;
}

static void aux_test_free_aux(void *aux)
{
	struct aux_test_pmu *tpmu = aux;

	tpmu->free_calls++;
}

static int aux_test_init(struct kunit *test)
{
	struct aux_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	/* rb_alloc_aux() only looks at the event's PMU and CPU. */
	ctx->event = kunit_kzalloc(test, sizeof(*ctx->event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->event);
	ctx->rb = rb_alloc(0, 0, -1, RING_BUFFER_WRITABLE);
	KUNIT_ASSERT_NOT_NULL(test, ctx->rb);

	ctx->tpmu.pmu.setup_aux = aux_test_setup_aux;
	ctx->tpmu.pmu.free_aux = aux_test_free_aux;
	ctx->event->pmu = &ctx->tpmu.pmu;
	ctx->event->cpu = -1;
	test->priv = ctx;

	return 0;
}

static void aux_test_exit(struct kunit *test)
{
	struct aux_test_ctx *ctx = test->priv;

	if (!ctx || !ctx->rb)
		return;
	if (rb_has_aux(ctx->rb))
		rb_free_aux(ctx->rb);
	rb_free(ctx->rb);
}

static int aux_test_alloc(struct kunit *test, unsigned int caps,
			  unsigned long size, unsigned long wm, bool overwrite)
{
	struct aux_test_ctx *ctx = test->priv;
	u64 start;
	int ret;

	ctx->tpmu.pmu.capabilities = caps;

	start = ktime_get_ns();
	ret = rb_alloc_aux(ctx->rb, ctx->event, 0, size >> PAGE_SHIFT, wm,
			   overwrite ? 0 : RING_BUFFER_WRITABLE);
	ctx->alloc_ns = ktime_get_ns() - start;
	/* Not timed: the mapping is the PMU's, not the allocator's. */
	if (!ret && ctx->tpmu.setup_calls)
		aux_test_map(&ctx->tpmu);

	return ret;
}

static int aux_entries(struct aux_test_pmu *tpmu)
{
	return tpmu->entries[0] + tpmu->entries[1] + tpmu->entries[2];
}

/*
 * Log the chunks the fake PMU was given, largest first, the entries that map
 * them, and how long the allocation took (under QEMU -icount shift=0, a
 * guest nanosecond is one instruction, so this also counts them).
 */
static void aux_test_report(struct kunit *test, const char *what)
{
	struct aux_test_ctx *ctx = test->priv;
	struct aux_test_pmu *tpmu = &ctx->tpmu;
	char buf[128];
	int order, len = 0;

	for (order = MAX_PAGE_ORDER; order >= 0; order--) {
		if (tpmu->chunks[order])
			len += scnprintf(buf + len, sizeof(buf) - len,
					 " %dx order-%d", tpmu->chunks[order],
					 order);
	}
	buf[len] = '\0';
	kunit_info(test, "%s: %d pages (%lu KiB), chunks=%d:%s, entries=%d (%d PMD blocks, %d contiguous PTE groups, %d PTEs; plain vmap() %d), %llu ns\n",
		   what, tpmu->nr_pages,
		   (unsigned long)tpmu->nr_pages << (PAGE_SHIFT - 10),
		   tpmu->nr_chunks, buf, aux_entries(tpmu), tpmu->entries[0],
		   tpmu->entries[1], tpmu->entries[2], tpmu->plain_entries,
		   ctx->alloc_ns);
}

struct aux_layout_case {
	const char *desc;
	unsigned int caps;
	unsigned long size;	/* of the buffer */
	unsigned long wm;	/* 0: rb_alloc_aux() uses half the buffer */
	bool overwrite;
	unsigned long chunk;	/* of every chunk on fresh memory, 0: a page */
	int err;		/* expected rb_alloc_aux() error, if any */
};

/* The order of @bytes chunks: at least a page, at most MAX_PAGE_ORDER. */
static int aux_chunk_order(unsigned long bytes)
{
	if (bytes <= PAGE_SIZE)
		return 0;
	return min_t(int, ilog2(bytes >> PAGE_SHIFT), MAX_PAGE_ORDER);
}

/*
 * The entries vmap() needs at most for a chunk of @order: PMD blocks, or
 * contiguous PTE groups where the architecture has them, or PTEs. Chunks
 * start at a multiple of their size in the buffer, so they are as aligned
 * as the mapping can be.
 */
static int aux_chunk_entries(int order)
{
	unsigned long bytes = PAGE_SIZE << order, cont = PAGE_SIZE;

	if (IS_ENABLED(CONFIG_HAVE_ARCH_HUGE_VMALLOC) &&
	    arch_vmap_pmd_supported(PAGE_KERNEL) && bytes >= PMD_SIZE)
		return bytes / PMD_SIZE;
	if (IS_ENABLED(CONFIG_HUGETLB_PAGE))
		cont = 1UL << arch_vmap_pte_supported_shift(PMD_SIZE);
	if (bytes >= cont)
		return bytes / cont;
	return 1 << order;
}

static int aux_entries_needed(struct aux_test_pmu *tpmu)
{
	int order, nr = 0;

	for (order = 0; order <= MAX_PAGE_ORDER; order++)
		nr += tpmu->chunks[order] * aux_chunk_entries(order);
	return nr;
}

/* Skip a case that would take more memory than this suite may. */
static void aux_check_budget(struct kunit *test, unsigned long bytes)
{
	if (bytes > AUX_TEST_MAX_BYTES ||
	    bytes >> PAGE_SHIFT > totalram_pages() / 16)
		kunit_skip(test, "needs %lu MiB: more than %u MiB or 1/16 of memory",
			   bytes >> 20, AUX_TEST_MAX_BYTES >> 20);
}

static void aux_check_layout(struct kunit *test)
{
	const struct aux_layout_case *p = test->param_value;
	struct aux_test_ctx *ctx = test->priv;
	struct aux_test_pmu *tpmu = &ctx->tpmu;
	int order = aux_chunk_order(p->chunk);
	int nr_pages = p->size >> PAGE_SHIFT;
	int nr_chunks = nr_pages >> order;
	int ret;

	aux_check_budget(test, p->size);

	ret = aux_test_alloc(test, p->caps, p->size, p->wm, p->overwrite);
	KUNIT_ASSERT_EQ(test, ret, p->err);
	if (p->err) {
		KUNIT_EXPECT_EQ(test, tpmu->setup_calls, 0);
		KUNIT_EXPECT_FALSE(test, rb_has_aux(ctx->rb));
		return;
	}

	aux_test_report(test, p->desc);
	KUNIT_EXPECT_EQ(test, tpmu->setup_calls, 1);
	KUNIT_EXPECT_PTR_EQ(test, tpmu->pages, ctx->rb->aux_pages);
	KUNIT_EXPECT_EQ(test, tpmu->nr_pages, nr_pages);
	KUNIT_EXPECT_EQ(test, tpmu->overwrite, p->overwrite);
	KUNIT_EXPECT_FALSE(test, tpmu->bad_chunk);
	KUNIT_EXPECT_EQ(test, tpmu->nr_chunks, nr_chunks);
	KUNIT_EXPECT_EQ(test, tpmu->chunks[order], nr_chunks);
	/* Chunks that happen to be adjacent may need fewer entries. */
	KUNIT_EXPECT_LE(test, aux_entries(tpmu), aux_entries_needed(tpmu));
}

static const struct aux_layout_case default_pmu_cases[] = {
	{ .desc = "default PMU, 1 MiB", .size = SZ_1M },
	{ .desc = "default PMU, 4 MiB", .size = SZ_4M },
	{ .desc = "default PMU, 16 MiB", .size = SZ_16M },
};

KUNIT_ARRAY_PARAM_DESC(default_pmu, default_pmu_cases, desc);

static void aux_default_pmu_gets_single_pages(struct kunit *test)
{
	aux_check_layout(test);
}

/*
 * Chunks of the watermark's size, rounded up to a power of two pages; the
 * watermark is half the buffer by default, and no chunk is larger than
 * MAX_PAGE_ORDER.
 */
static const struct aux_layout_case prefer_large_cases[] = {
	{ .desc = "prefer-large, 1 MiB", .size = SZ_1M,
	  .caps = AUX_LARGE, .chunk = SZ_512K },
	{ .desc = "prefer-large, 4 MiB", .size = SZ_4M,
	  .caps = AUX_LARGE, .chunk = SZ_2M },
	{ .desc = "prefer-large, 16 MiB", .size = SZ_16M,
	  .caps = AUX_LARGE, .chunk = SZ_8M },
};

KUNIT_ARRAY_PARAM_DESC(prefer_large, prefer_large_cases, desc);

static void aux_prefer_large_chunks_follow_watermark(struct kunit *test)
{
	aux_check_layout(test);
}

/* Free pages, with the per-cpu vmstat deltas folded in. */
static long aux_nr_free_pages(void)
{
	struct zone *zone;
	long nr = 0;

	for_each_populated_zone(zone)
		nr += zone_page_state_snapshot(zone, NR_FREE_PAGES);

	return nr;
}

static void aux_drain_local_pages(struct work_struct *work)
{
	drain_local_pages(NULL);
}

/*
 * Fragmented memory: the fixture takes every free block above
 * PAGE_ALLOC_COSTLY_ORDER. It splits the first blocks it gets and gives
 * back the first half of every 2 << PAGE_ALLOC_COSTLY_ORDER pages: each
 * half merges back into a block of PAGE_ALLOC_COSTLY_ORDER, whose buddy
 * stays allocated. No free block above that order is left, but the rest
 * of the system (kernel stacks, slabs: small orders) is served from the
 * blocks given back without having to compact, and the watermarks stay
 * met. Taking blocks of every order instead once left a 2 CPU guest
 * without a free order-2 block for kthreadd to fork a kernel thread
 * with, and it panicked: "System is deadlocked on memory". As it leaves
 * others next to no free memory, it only runs with aux_bench.fragment=1.
 */
#define AUX_FRAG_GFP	((GFP_KERNEL & ~__GFP_RECLAIM) | __GFP_NOWARN | \
			 __GFP_NOMEMALLOC)
#define AUX_FRAG_ORDER	PAGE_ALLOC_COSTLY_ORDER

struct aux_frag {
	struct list_head held;	/* first pages, order in page_private() */
	unsigned long nr_held;
	unsigned long nr_given;	/* pages given back, in AUX_FRAG_ORDER blocks */
	unsigned long target;	/* at least that many, see aux_frag_target() */
};

/*
 * Pages to give back: 64 MiB for the buffers, and on top what the zones'
 * watermarks keep out of reach. The fallbacks across pageblocks that the
 * fixture causes boost a zone's watermarks by up to a pageblock or one
 * and a half high watermarks, whichever is larger: 1024 pages with 64 KiB
 * pages. Without that headroom a 16 MiB buffer there (256 pages) failed
 * at order 0, with 1362 pages free, once the boost was met.
 */
static unsigned long aux_frag_target(void)
{
	unsigned long pages = SZ_64M >> PAGE_SHIFT, high;
	struct zone *zone;

	for_each_populated_zone(zone) {
		high = zone->_watermark[WMARK_HIGH];
		pages += high + max(pageblock_nr_pages, high * 3 / 2);
	}

	return pages;
}

static void aux_frag_hold(struct aux_frag *frag, struct page *page, int order)
{
	set_page_private(page, order);
	list_add(&page->lru, &frag->held);
	frag->nr_held += 1UL << order;
}

static void aux_frag_give_back_halves(struct aux_frag *frag, struct page *page,
				      int order)
{
	int half = 1 << AUX_FRAG_ORDER;
	int i, j;

	split_page(page, order);
	for (i = 0; i < 1 << order; i += 2 * half) {
		for (j = 0; j < half; j++) {
			__free_page(page + i + j);
			aux_frag_hold(frag, page + i + half + j, 0);
		}
		frag->nr_given += half;
	}
}

/* Take every block above AUX_FRAG_ORDER that is free without reclaim. */
static void aux_frag_take_blocks(struct aux_frag *frag)
{
	struct page *page;
	int order;

	for (order = MAX_PAGE_ORDER; order > AUX_FRAG_ORDER; order--) {
		while ((page = alloc_pages(AUX_FRAG_GFP, order))) {
			if (frag->nr_given < frag->target)
				aux_frag_give_back_halves(frag, page, order);
			else
				aux_frag_hold(frag, page, order);
			cond_resched();
		}
	}
}

static void aux_frag_release(void *data)
{
	struct aux_frag *frag = data;
	struct page *page, *next;
	int order;

	list_for_each_entry_safe(page, next, &frag->held, lru) {
		order = page_private(page);
		list_del(&page->lru);
		set_page_private(page, 0);
		__free_pages(page, order);
		cond_resched();
	}
}

struct aux_stalls {
	unsigned long reclaim;
	unsigned long compact;
};

/* Direct reclaim and direct compaction stalls of all tasks, /proc/vmstat's. */
static void aux_read_stalls(unsigned long *events, struct aux_stalls *stalls)
{
	int zid;

	all_vm_events(events);
	stalls->reclaim = 0;
	for (zid = 0; zid < MAX_NR_ZONES; zid++)
		stalls->reclaim += events[ALLOCSTALL_NORMAL - ZONE_NORMAL + zid];
	stalls->compact = 0;
#ifdef CONFIG_COMPACTION
	stalls->compact = events[COMPACTSTALL];
#endif
}

/*
 * Direct reclaim and direct compaction entered by the test's own task, seen
 * through their tracepoints: the vmstat counters are global, and other
 * tasks allocating while the fixture holds memory may stall there too.
 * Small allocations of the test task itself (the slab page behind the
 * kcalloc() of the page array) may compact as well, but none of those is
 * above PAGE_ALLOC_COSTLY_ORDER: only the attempts at large AUX chunks are.
 */
struct aux_stall_probe {
	struct task_struct *task;
	int reclaim;
	int compact;
	int costly;		/* of either kind, above the costly order */
	int max_order;
	int tries;		/* allocation attempts above the costly order */
	struct kprobe kp;
};

static void aux_stall_count(struct aux_stall_probe *sp, int order, int *nr)
{
	if (current != sp->task)
		return;
	(*nr)++;
	if (order > PAGE_ALLOC_COSTLY_ORDER)
		sp->costly++;
	sp->max_order = max(sp->max_order, order);
}

static void aux_probe_reclaim(void *data, gfp_t gfp, int order,
			      struct mem_cgroup *memcg)
{
	struct aux_stall_probe *sp = data;

	aux_stall_count(sp, order, &sp->reclaim);
}

#ifdef CONFIG_COMPACTION
static void aux_probe_compact(void *data, int order, gfp_t gfp, int prio)
{
	struct aux_stall_probe *sp = data;

	aux_stall_count(sp, order, &sp->compact);
}
#endif

/*
 * alloc_pages_node(nid, gfp, order), which rb_alloc_aux() calls for every
 * chunk it tries, called by the test's task above the costly order.
 */
static int aux_probe_alloc(struct kprobe *kp, struct pt_regs *regs)
{
	struct aux_stall_probe *sp = container_of(kp, struct aux_stall_probe,
						  kp);

	if (current == sp->task &&
	    regs_get_kernel_argument(regs, 2) > PAGE_ALLOC_COSTLY_ORDER)
		sp->tries++;
	return 0;
}

static void aux_stall_probe_unregister(void *data)
{
	unregister_trace_mm_vmscan_direct_reclaim_begin(aux_probe_reclaim, data);
#ifdef CONFIG_COMPACTION
	unregister_trace_mm_compaction_try_to_compact_pages(aux_probe_compact,
							    data);
#endif
	tracepoint_synchronize_unregister();
}

static int aux_stall_probe_register(struct kunit *test,
				    struct aux_stall_probe *sp)
{
	int ret;

	sp->task = current;
	ret = register_trace_mm_vmscan_direct_reclaim_begin(aux_probe_reclaim, sp);
	if (ret)
		return ret;
#ifdef CONFIG_COMPACTION
	ret = register_trace_mm_compaction_try_to_compact_pages(aux_probe_compact,
								sp);
	if (ret) {
		unregister_trace_mm_vmscan_direct_reclaim_begin(aux_probe_reclaim,
								sp);
		tracepoint_synchronize_unregister();
		return ret;
	}
#endif
	return kunit_add_action_or_reset(test, aux_stall_probe_unregister, sp);
}

static void aux_alloc_probe_unregister(void *data)
{
	struct aux_stall_probe *sp = data;

	unregister_kprobe(&sp->kp);
}

/* Count the test task's calls of the page allocator above the costly order. */
static int aux_alloc_probe_register(struct kunit *test,
				    struct aux_stall_probe *sp)
{
	int ret;

	sp->kp.symbol_name = "alloc_pages_node_noprof";
	sp->kp.pre_handler = aux_probe_alloc;
	ret = register_kprobe(&sp->kp);
	if (ret)
		return ret;
	return kunit_add_action_or_reset(test, aux_alloc_probe_unregister, sp);
}

static const struct aux_layout_case fragmented_cases[] = {
	{ .desc = "default PMU, 1 MiB, fragmented", .size = SZ_1M },
	{ .desc = "default PMU, 4 MiB, fragmented", .size = SZ_4M },
	{ .desc = "default PMU, 16 MiB, fragmented", .size = SZ_16M },
	{ .desc = "prefer-large, 1 MiB, fragmented", .size = SZ_1M,
	  .caps = AUX_LARGE },
	{ .desc = "prefer-large, 4 MiB, fragmented", .size = SZ_4M,
	  .caps = AUX_LARGE },
	{ .desc = "prefer-large, 16 MiB, fragmented", .size = SZ_16M,
	  .caps = AUX_LARGE },
};

KUNIT_ARRAY_PARAM_DESC(fragmented, fragmented_cases, desc);

static void aux_prefer_large_falls_back_without_reclaim(struct kunit *test)
{
	const struct aux_layout_case *p = test->param_value;
	struct aux_test_ctx *ctx = test->priv;
	struct aux_stall_probe *sp, seen;
	struct aux_stalls before, after;
	struct aux_frag *frag;
	unsigned long *events;
	int nr_pages = p->size >> PAGE_SHIFT;
	/* PREFER_LARGE, watermark half the buffer */
	int fresh_order = p->caps ? aux_chunk_order(p->size / 2) : 0;
	int ret, order, large = 0, max_tries;

	events = kunit_kcalloc(test, NR_VM_EVENT_ITEMS, sizeof(*events),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, events);
	sp = kunit_kzalloc(test, sizeof(*sp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sp);
	if (!fragment)
		kunit_skip(test, "takes nearly all free memory; runs with aux_bench.fragment=1");
	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		kunit_skip(test, "needs CONFIG_TRACEPOINTS to see direct reclaim");
	if (!IS_ENABLED(CONFIG_KPROBES))
		kunit_skip(test, "needs CONFIG_KPROBES to count allocation attempts");
	KUNIT_ASSERT_EQ(test, aux_stall_probe_register(test, sp), 0);
	KUNIT_ASSERT_EQ(test, aux_alloc_probe_register(test, sp), 0);
	frag = kunit_kzalloc(test, sizeof(*frag), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, frag);
	INIT_LIST_HEAD(&frag->held);
	frag->target = aux_frag_target();
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, aux_frag_release, frag), 0);

	aux_frag_take_blocks(frag);
	/*
	 * Freed pages may sit on per-cpu lists: flush those to the buddy
	 * lists, where the halves given back merge and where large blocks
	 * freed meanwhile can be taken too.
	 */
	KUNIT_ASSERT_EQ(test, schedule_on_each_cpu(aux_drain_local_pages), 0);
	aux_frag_take_blocks(frag);
	kunit_info(test, "fixture holds %lu pages, gave back %lu in order-%d blocks, %ld pages free\n",
		   frag->nr_held, frag->nr_given, AUX_FRAG_ORDER,
		   aux_nr_free_pages());
	if (frag->nr_given < frag->target)
		kunit_skip(test, "too little free memory to fragment");

	sp->reclaim = 0;
	sp->compact = 0;
	sp->costly = 0;
	sp->max_order = 0;
	sp->tries = 0;
	aux_read_stalls(events, &before);
	ret = aux_test_alloc(test, p->caps, p->size, p->wm, p->overwrite);
	aux_read_stalls(events, &after);
	seen = *sp;
	for (order = AUX_FRAG_ORDER + 1; order <= MAX_PAGE_ORDER; order++)
		large += ctx->tpmu.chunks[order];

	kunit_info(test, "rb_alloc_aux() = %d; this task: direct reclaim %d, direct compaction %d, highest order %d, allocations above order %d tried %d; all tasks: allocstall +%lu, compact_stall +%lu\n",
		   ret, seen.reclaim, seen.compact, seen.max_order,
		   AUX_FRAG_ORDER, seen.tries, after.reclaim - before.reclaim,
		   after.compact - before.compact);
	KUNIT_ASSERT_EQ(test, ret, 0);
	aux_test_report(test, p->desc);
	KUNIT_EXPECT_FALSE(test, ctx->tpmu.bad_chunk);
	/*
	 * The fixture did force chunks smaller than on fresh memory where
	 * those are above AUX_FRAG_ORDER, or single pages as always...
	 */
	if (!p->caps)
		KUNIT_EXPECT_EQ(test, ctx->tpmu.nr_chunks, nr_pages);
	else if (fresh_order > AUX_FRAG_ORDER)
		KUNIT_EXPECT_GT(test, ctx->tpmu.nr_chunks, nr_pages >> fresh_order);
	/* ...no attempt at a large chunk reclaimed or compacted for it... */
	KUNIT_EXPECT_EQ(test, seen.costly, 0);
	/*
	 * ...and an order that failed was not tried again: at most one
	 * failure per order above AUX_FRAG_ORDER, and one success per chunk
	 * above it.
	 */
	max_tries = max(fresh_order - AUX_FRAG_ORDER, 0) + large;
	KUNIT_EXPECT_LE(test, seen.tries, max_tries);
}

/*
 * AUX buffers as a long-running device allocates and frees them: each
 * cycle allocates a 4 MiB AUX buffer per online CPU and, every
 * AUX_CHURN_BIG_EVERY cycles, one of 64 MiB, holds them for churn_hold_ms
 * and frees them. At boot that is one cycle. For 'make bench' style
 * measurements, user space sets the parameters below, keeps anonymous
 * memory and page cache churning, runs the perf_aux_churn suite again
 * through its debugfs "run" file, and reads what that did to memory
 * (/proc/pagetypeinfo, /proc/buddyinfo, /proc/vmstat). The case checks
 * that every buffer was laid out in valid chunks and that a failed
 * allocation kept nothing.
 */
static unsigned int churn_cycles = 1;
module_param(churn_cycles, uint, 0644);
MODULE_PARM_DESC(churn_cycles, "AUX buffer cycles of the perf_aux_churn suite");
static bool churn_prefer_large;
module_param(churn_prefer_large, bool, 0644);
MODULE_PARM_DESC(churn_prefer_large, "perf_aux_churn PMU prefers large AUX chunks, as SPE does");
static unsigned int churn_hold_ms = 50;
module_param(churn_hold_ms, uint, 0644);
MODULE_PARM_DESC(churn_hold_ms, "How long perf_aux_churn holds each cycle's buffers");

#define AUX_CHURN_CPU_BYTES	SZ_4M
#define AUX_CHURN_BIG_BYTES	SZ_64M
#define AUX_CHURN_BIG_EVERY	4

struct aux_churn_buf {
	struct perf_event event;
	struct perf_buffer *rb;
};

static void aux_churn(struct kunit *test)
{
	struct aux_test_ctx *ctx = test->priv;
	struct aux_test_pmu *tpmu = &ctx->tpmu;
	unsigned int nr_cpus = num_online_cpus(), cycle, i, n, large = 0;
	unsigned int buffers = 0, failed = 0;
	struct aux_churn_buf *bufs;
	bool big = (AUX_CHURN_BIG_BYTES >> PAGE_SHIFT) <= totalram_pages() / 16;
	u64 ns = 0, start;
	int order, cpu;

	if (((u64)nr_cpus * AUX_CHURN_CPU_BYTES +
	     (big ? AUX_CHURN_BIG_BYTES : 0)) >> PAGE_SHIFT > totalram_pages() / 8)
		kunit_skip(test, "%u CPUs' buffers would take more than 1/8 of memory",
			   nr_cpus);

	bufs = kunit_kcalloc(test, nr_cpus + 1, sizeof(*bufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	tpmu->pmu.capabilities = churn_prefer_large ? AUX_LARGE : 0;
	n = 0;
	for_each_online_cpu(cpu) {
		if (n == nr_cpus)
			break;
		bufs[n].event.pmu = &tpmu->pmu;
		bufs[n++].event.cpu = cpu;
	}
	bufs[n].event.pmu = &tpmu->pmu;
	bufs[n].event.cpu = -1;

	for (cycle = 0; cycle < churn_cycles; cycle++) {
		n = nr_cpus + (big && cycle % AUX_CHURN_BIG_EVERY == 0);
		for (i = 0; i < n; i++) {
			unsigned long bytes = i < nr_cpus ? AUX_CHURN_CPU_BYTES :
					      AUX_CHURN_BIG_BYTES;

			bufs[i].rb = rb_alloc(0, 0, bufs[i].event.cpu,
					      RING_BUFFER_WRITABLE);
			if (!bufs[i].rb) {
				failed++;
				continue;
			}
			start = ktime_get_ns();
			if (rb_alloc_aux(bufs[i].rb, &bufs[i].event, 0,
					 bytes >> PAGE_SHIFT, 0,
					 RING_BUFFER_WRITABLE)) {
				/* As mmap() of the AUX area fails: nothing kept. */
				KUNIT_EXPECT_FALSE(test, rb_has_aux(bufs[i].rb));
				failed++;
			}
			ns += ktime_get_ns() - start;
			buffers++;
		}
		msleep(churn_hold_ms);
		for (i = 0; i < n; i++) {
			if (!bufs[i].rb)
				continue;
			if (rb_has_aux(bufs[i].rb))
				rb_free_aux(bufs[i].rb);
			rb_free(bufs[i].rb);
			bufs[i].rb = NULL;
		}
		cond_resched();
	}

	for (order = AUX_FRAG_ORDER + 1; order <= MAX_PAGE_ORDER; order++)
		large += tpmu->chunks[order];
	kunit_info(test, "churn %s: %u cycles, %u buffers, %u failed, %d chunks, %u above order %d, %llu us in rb_alloc_aux()\n",
		   churn_prefer_large ? "prefer-large" : "default", churn_cycles,
		   buffers, failed, tpmu->nr_chunks, large, AUX_FRAG_ORDER,
		   ns / NSEC_PER_USEC);
	/*
	 * Under enough memory pressure an allocation may fail, as it may on
	 * v7.3 (__GFP_NORETRY, also for single pages): user space counts
	 * those. At boot, with one cycle on idle memory, none may.
	 */
	if (churn_cycles == 1)
		KUNIT_EXPECT_EQ(test, failed, 0);
	KUNIT_EXPECT_FALSE(test, tpmu->bad_chunk);
}

static struct kunit_case aux_churn_cases[] = {
	KUNIT_CASE(aux_churn),
	{}
};

static struct kunit_suite aux_churn_suite = {
	.name = "perf_aux_churn",
	.init = aux_test_init,
	.exit = aux_test_exit,
	.test_cases = aux_churn_cases,
};

static struct kunit_case aux_test_cases[] = {
	KUNIT_CASE_PARAM(aux_default_pmu_gets_single_pages,
			 default_pmu_gen_params),
	KUNIT_CASE_PARAM(aux_prefer_large_chunks_follow_watermark,
			 prefer_large_gen_params),
	KUNIT_CASE_PARAM_ATTR(aux_prefer_large_falls_back_without_reclaim,
			      fragmented_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	{}
};

static struct kunit_suite aux_test_suite = {
	.name = "perf_aux_bench",
	.init = aux_test_init,
	.exit = aux_test_exit,
	.test_cases = aux_test_cases,
};

kunit_test_suites(&aux_test_suite, &aux_churn_suite);

MODULE_DESCRIPTION("make bench: the perf AUX area allocator");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for vmap() with VM_ALLOW_HUGE_VMAP: which kernel page table
 * entries map a page array made of runs of physically contiguous pages.
 *
 * Each case builds a page array, maps it, and counts the PMD blocks, groups
 * of contiguous PTEs and plain PTEs of init_mm that map the area.
 * The counts expected follow from how the case laid out its pages and the
 * sizes of the entries this kernel can use; every page is also checked to
 * be mapped to the right physical page, by the tables and by a read through
 * the mapping. The largest block taken is bounded (VMAP_TEST_MAX_BYTES) so
 * the suite behaves the same with any page size on any machine.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/set_memory.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

/* No block larger than this, nor than 1/64 of memory, is ever allocated. */
#define VMAP_TEST_MAX_BYTES	SZ_32M
#define VMAP_TEST_MAX_BLOCKS	8

struct vmap_census {
	unsigned int blocks;	/* PMD blocks */
	unsigned int groups;	/* groups of contiguous PTEs */
	unsigned int ptes;	/* plain PTEs */
};

struct vmap_test {
	struct page *block[VMAP_TEST_MAX_BLOCKS];
	unsigned int order[VMAP_TEST_MAX_BLOCKS];
	unsigned int nr_blocks;
	struct page **pages;
	unsigned int nr_pages;
	void *addr;
};

/*
 * The size of the init_mm entry that maps @vaddr: PUD_SIZE or PMD_SIZE for
 * a block, the contiguous PTE size for a PTE of a group, PAGE_SIZE for a
 * lone PTE, 0 if nothing maps it. (The suite is built in: init_mm is ours.)
 */
static unsigned long entry_size(const void *vaddr)
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

/* Pages in a group of contiguous PTEs, or 0 if vmap() cannot make one. */
static unsigned int cont_pages(void)
{
	/* Below a PMD: riscv warns about larger sizes (they are PMD blocks). */
	unsigned int shift = arch_vmap_pte_supported_shift(PMD_SIZE / 2);

	if (!IS_ENABLED(CONFIG_HUGETLB_PAGE) || shift == PAGE_SHIFT)
		return 0;
	return 1U << (shift - PAGE_SHIFT);
}

/* Pages in a PMD block, or 0 if vmap() cannot make one or it is too big. */
static unsigned int block_pages(void)
{
	unsigned long nr;

	if (!IS_ENABLED(CONFIG_HAVE_ARCH_HUGE_VMALLOC) ||
	    !arch_vmap_pmd_supported(PAGE_KERNEL))
		return 0;
	nr = PMD_SIZE >> PAGE_SHIFT;
	if (nr > VMAP_TEST_MAX_BYTES >> PAGE_SHIFT || nr > totalram_pages() / 64)
		return 0;
	return nr;
}

static int vmap_test_init(struct kunit *test)
{
	struct vmap_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	test->priv = t;
	return 0;
}

static void vmap_test_exit(struct kunit *test)
{
	struct vmap_test *t = test->priv;
	unsigned int i;

	if (t->addr)
		vunmap(t->addr);
	for (i = 0; i < t->nr_blocks; i++)
		__free_pages(t->block[i], t->order[i]);
	kvfree(t->pages);
}

/* An aligned block of 2^order pages, not compound (as the AUX area's). */
static struct page *take_block(struct kunit *test, unsigned int order)
{
	struct vmap_test *t = test->priv;
	struct page *page;

	KUNIT_ASSERT_LT(test, t->nr_blocks, VMAP_TEST_MAX_BLOCKS);
	KUNIT_ASSERT_LE(test, PAGE_SIZE << order, VMAP_TEST_MAX_BYTES);
	page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
	if (!page)
		kunit_skip(test, "no free order-%u block", order);
	t->block[t->nr_blocks] = page;
	t->order[t->nr_blocks++] = order;
	return page;
}

static struct page **page_array(struct kunit *test, unsigned int nr)
{
	struct vmap_test *t = test->priv;

	t->pages = kvcalloc(nr, sizeof(*t->pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->pages);
	t->nr_pages = nr;
	return t->pages;
}

/* @nr pages of which no two are physically adjacent in array order. */
static void add_scattered(struct kunit *test, struct page **pages,
			  unsigned int nr)
{
	struct page *block = take_block(test, order_base_2(nr));
	unsigned int i;

	for (i = 0; i < nr; i++)
		pages[i] = block + nr - 1 - i;
}

static void add_run(struct page **pages, struct page *first, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		pages[i] = first + i;
}

/* Is page @idx of the area mapped to its own page, as the CPU sees it? */
static bool page_ok(struct vmap_test *t, unsigned int idx)
{
	void *addr = t->addr + idx * PAGE_SIZE;

	return vmalloc_to_page(addr) == t->pages[idx] &&
	       *(unsigned long *)addr == idx;
}

/*
 * Count the entries that map the area, and the pages that are not mapped
 * to their own page or whose PTE is not in the group it should be in
 * (counted, not reported one by one: that would flood the log).
 */
static void census(struct kunit *test, struct vmap_census *c)
{
	struct vmap_test *t = test->priv;
	unsigned int idx, i, wrong = 0, first_wrong = 0;
	unsigned long size;

	memset(c, 0, sizeof(*c));
	for (idx = 0; idx < t->nr_pages; idx++)
		*(unsigned long *)page_address(t->pages[idx]) = idx;

	for (idx = 0; idx < t->nr_pages; idx += size >> PAGE_SHIFT) {
		void *addr = t->addr + idx * PAGE_SIZE;

		size = entry_size(addr);
		KUNIT_ASSERT_NE_MSG(test, size, 0, "page %u is not mapped", idx);
		KUNIT_ASSERT_LE_MSG(test, size, PMD_SIZE,
				    "a PUD block maps page %u", idx);
		KUNIT_ASSERT_TRUE(test, IS_ALIGNED((unsigned long)addr, size));
		KUNIT_ASSERT_LE(test, idx + (size >> PAGE_SHIFT), t->nr_pages);
		if (size == PMD_SIZE)
			c->blocks++;
		else if (size > PAGE_SIZE)
			c->groups++;
		else
			c->ptes++;
		for (i = 0; i < size >> PAGE_SHIFT; i++) {
			/* Every PTE of a group says it is in one. */
			if ((size == PMD_SIZE ||
			     entry_size(addr + i * PAGE_SIZE) == size) &&
			    page_ok(t, idx + i))
				continue;
			if (!wrong++)
				first_wrong = idx + i;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, wrong, 0,
			    "pages mapped wrongly, the first: page %u of %u",
			    first_wrong, t->nr_pages);
}

static void map_and_count(struct kunit *test, unsigned long flags,
			  struct vmap_census *c)
{
	struct vmap_test *t = test->priv;

	t->addr = vmap(t->pages, t->nr_pages, VM_MAP | flags, PAGE_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->addr);
	census(test, c);
}

static void expect_census(struct kunit *test, const struct vmap_census *c,
			  unsigned int blocks, unsigned int groups,
			  unsigned int ptes)
{
	KUNIT_EXPECT_EQ_MSG(test, c->blocks, blocks, "PMD blocks");
	KUNIT_EXPECT_EQ_MSG(test, c->groups, groups, "contiguous PTE groups");
	KUNIT_EXPECT_EQ_MSG(test, c->ptes, ptes, "PTEs");
}

/* Pages none of which is next to another: one PTE each. */
static void vmap_huge_scattered(struct kunit *test)
{
	struct vmap_census c;

	add_scattered(test, page_array(test, 32), 32);
	map_and_count(test, VM_ALLOW_HUGE_VMAP, &c);
	expect_census(test, &c, 0, 0, 32);
}

/* The smallest entry larger than a page, and whether it is a block. */
static unsigned int granule_pages(struct kunit *test, bool *is_block)
{
	unsigned int nr = cont_pages();

	*is_block = !nr;
	if (!nr)
		nr = block_pages();
	if (!nr)
		kunit_skip(test, "vmap() maps with pages only here");
	return nr;
}

static void expect_granules(struct kunit *test, const struct vmap_census *c,
			    bool is_block, unsigned int granules,
			    unsigned int ptes)
{
	expect_census(test, c, is_block ? granules : 0,
		      is_block ? 0 : granules, ptes);
}

/*
 * The AUX area's layout: chunks of decreasing order. A PMD-sized run and a
 * contiguous-PTE-sized run where vmap() can map them so (one PMD block, one
 * group), then an order-2 chunk and single pages that take PTEs.
 */
static void vmap_huge_mixed_orders(struct kunit *test)
{
	unsigned int blk = block_pages(), grp = cont_pages();
	unsigned int nr = blk + grp + 4 + 2, i = 0;
	struct page **pages;
	struct vmap_census c;

	if (!blk && !grp)
		kunit_skip(test, "vmap() maps with pages only here");
	pages = page_array(test, nr);
	if (blk) {
		add_run(pages, take_block(test, ilog2(blk)), blk);
		i += blk;
	}
	if (grp) {
		add_run(pages + i, take_block(test, ilog2(grp)), grp);
		i += grp;
	}
	add_run(pages + i, take_block(test, 2), 4);
	add_scattered(test, pages + i + 4, 2);
	map_and_count(test, VM_ALLOW_HUGE_VMAP, &c);
	expect_census(test, &c, blk ? 1 : 0, grp ? 1 : 0, 4 + 2);
}

/*
 * A run long enough for two entries that starts one page into an aligned
 * block: physical and virtual addresses never agree on the alignment, so
 * nothing larger than a page can map it.
 */
static void vmap_huge_misaligned_run(struct kunit *test)
{
	bool is_block;
	unsigned int nr = granule_pages(test, &is_block);
	struct vmap_census c;

	add_run(page_array(test, 2 * nr - 1),
		take_block(test, ilog2(nr) + 1) + 1, 2 * nr - 1);
	map_and_count(test, VM_ALLOW_HUGE_VMAP, &c);
	expect_granules(test, &c, is_block, 0, 2 * nr - 1);
}

/*
 * Two aligned granules of one block with a foreign page in the middle of
 * the first: the first is mapped with PTEs, the second is still whole.
 */
static void vmap_huge_broken_run(struct kunit *test)
{
	bool is_block;
	unsigned int nr = granule_pages(test, &is_block);
	struct page **pages = page_array(test, 2 * nr);
	struct vmap_census c;

	add_run(pages, take_block(test, ilog2(nr) + 1), 2 * nr);
	add_scattered(test, pages + nr / 2, 1);
	map_and_count(test, VM_ALLOW_HUGE_VMAP, &c);
	expect_granules(test, &c, is_block, 1, nr);
}

/* Without VM_ALLOW_HUGE_VMAP, vmap() maps every page with a PTE. */
static void vmap_huge_not_asked(struct kunit *test)
{
	bool is_block;
	unsigned int nr = granule_pages(test, &is_block);
	struct vmap_census c;

	add_run(page_array(test, 2 * nr), take_block(test, ilog2(nr) + 1),
		2 * nr);
	map_and_count(test, 0, &c);
	expect_granules(test, &c, is_block, 0, 2 * nr);
}

/*
 * The entries come down as they went up: vunmap_range_noflush(), which
 * vunmap() and the lazy purge use too, clears a granule and a PTE, and
 * the area then translates to nothing. The area stays allocated until
 * the exit, so no other mapping can take its addresses meanwhile.
 */
static void vmap_huge_unmap(struct kunit *test)
{
	struct vmap_test *t = test->priv;
	bool is_block;
	unsigned int nr = granule_pages(test, &is_block);
	unsigned int idx, mapped = 0;
	struct vmap_census c;

	add_run(page_array(test, nr + 1), take_block(test, ilog2(nr)), nr);
	add_scattered(test, t->pages + nr, 1);
	map_and_count(test, VM_ALLOW_HUGE_VMAP, &c);
	expect_granules(test, &c, is_block, 1, 1);

	vunmap_range((unsigned long)t->addr,
		     (unsigned long)t->addr + (nr + 1) * PAGE_SIZE);
	for (idx = 0; idx <= nr; idx++)
		mapped += entry_size(t->addr + idx * PAGE_SIZE) != 0;
	KUNIT_EXPECT_EQ_MSG(test, mapped, 0, "pages still mapped after unmap");
}

/*
 * set_memory_*() on a page of a flagged area: the architecture either
 * refuses it and leaves the mapping alone (arm64 changes only VM_ALLOC
 * areas), or splits the entry the page is in so that the page gets a PTE
 * of its own (x86). Either way every page stays mapped to its own page.
 * riscv's would change the linear alias of each page through
 * area->pages, which a vmap() area, flagged or not, does not have.
 */
static void vmap_huge_set_memory(struct kunit *test)
{
	struct vmap_test *t = test->priv;
	bool is_block;
	unsigned int nr = granule_pages(test, &is_block);
	struct vmap_census c;
	unsigned long addr;
	int ret;

	if (!IS_ENABLED(CONFIG_ARCH_HAS_SET_MEMORY))
		kunit_skip(test, "no set_memory_*() here");
	if (IS_ENABLED(CONFIG_RISCV))
		kunit_skip(test, "riscv's set_memory_*() cannot take a vmap() area");
	add_run(page_array(test, nr), take_block(test, ilog2(nr)), nr);
	map_and_count(test, VM_ALLOW_HUGE_VMAP, &c);
	expect_granules(test, &c, is_block, 1, 0);

	addr = (unsigned long)t->addr + PAGE_SIZE;
	ret = set_memory_ro(addr, 1);
	if (ret) {
		kunit_info(test, "set_memory_ro() refused: %d\n", ret);
		KUNIT_EXPECT_EQ(test, ret, -EINVAL);
		census(test, &c);
		expect_granules(test, &c, is_block, 1, 0);
		return;
	}
	KUNIT_EXPECT_EQ(test, entry_size((void *)addr), PAGE_SIZE);
	KUNIT_EXPECT_PTR_EQ(test, vmalloc_to_page((void *)addr), t->pages[1]);
	KUNIT_ASSERT_EQ(test, set_memory_rw(addr, 1), 0);
	census(test, &c);
	kunit_info(test, "set_memory_ro() split the granule: %u PTEs after\n",
		   c.ptes);
	KUNIT_EXPECT_GT(test, c.ptes, 0);
}

static struct kunit_case vmap_huge_cases[] = {
	KUNIT_CASE(vmap_huge_scattered),
	KUNIT_CASE(vmap_huge_mixed_orders),
	KUNIT_CASE(vmap_huge_misaligned_run),
	KUNIT_CASE(vmap_huge_broken_run),
	KUNIT_CASE(vmap_huge_not_asked),
	KUNIT_CASE(vmap_huge_unmap),
	KUNIT_CASE(vmap_huge_set_memory),
	{}
};

static struct kunit_suite vmap_huge_suite = {
	.name = "vmap_huge",
	.init = vmap_test_init,
	.exit = vmap_test_exit,
	.test_cases = vmap_huge_cases,
};

kunit_test_suite(vmap_huge_suite);

MODULE_DESCRIPTION("KUnit tests for huge mappings made by vmap()");
MODULE_LICENSE("GPL");

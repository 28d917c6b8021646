#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants for 'make mutants': edit the assembled tree so that tests must fail.

  mutate.py tests TREE        break one expectation of every case of the
                              page-fault selftest and of the perf_aux KUnit suite
  mutate.py no-aux-cap TREE   take PERF_PMU_CAP_AUX_PREFER_LARGE out of the
                              SPE and ETM drivers (their KUnit cases must fail)

Every edit must match exactly as often as stated, so a test that changes
shape makes this fail loudly instead of producing a mutant that breaks
nothing.
"""
import sys


def edit(root, path, pairs):
    p = '%s/%s' % (root, path)
    s = open(p).read()
    for old, new, count in pairs:
        n = s.count(old)
        if n != count:
            sys.exit('mutate.py: %s: %r found %d times, expected %d' % (path, old, n, count))
        s = s.replace(old, new)
    open(p, 'w').write(s)


def variant(name, old, new):
    head = 'FIXTURE_VARIANT_ADD(page_fault, %s)\n{' % name
    return (head + old, head + new, 1)


def tests(root):
    pf = 'tools/testing/selftests/exceptions/page_fault_events.c'
    A = '\n\t.backing = BACKING_ANON,\n\t.nr_pages = 16,\n'
    edit(root, pf, [
        # expect a write where the test reads
        variant('anon_read', A + '\t.access = ACCESS_READ,\n\t.want = { .user = true },',
                A + '\t.access = ACCESS_READ,\n\t.want = { .user = true, .write = true },'),
        # expect a translation fault over the zero page
        variant('anon_write_after_read', A + '\t.prepare = PREPARE_READ,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true, .write = true, .present = true },',
                A + '\t.prepare = PREPARE_READ,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true, .write = true },'),
        # expect a read where the test writes
        variant('user_write', '\n\t.backing = BACKING_ANON,\n\t.addr = USER_MAP_ADDR,\n\t.nr_pages = USER_MAP_PAGES,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true, .write = true },',
                '\n\t.backing = BACKING_ANON,\n\t.addr = USER_MAP_ADDR,\n\t.nr_pages = USER_MAP_PAGES,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true },'),
        # expect CoW faults on absent pages
        variant('cow_write', A + '\t.prepare = PREPARE_WRITE,\n\t.actor = ACTOR_CHILD,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true, .write = true, .present = true },',
                A + '\t.prepare = PREPARE_WRITE,\n\t.actor = ACTOR_CHILD,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true, .write = true },'),
        # expect a write where the test reads a private file mapping
        variant('file_private_read', '\n\t.backing = BACKING_FILE_PRIVATE,\n\t.nr_pages = 16,\n\t.access = ACCESS_READ,\n\t.want = { .user = true },',
                '\n\t.backing = BACKING_FILE_PRIVATE,\n\t.nr_pages = 16,\n\t.access = ACCESS_READ,\n\t.want = { .user = true, .write = true },'),
        # expect a read where the test writes a shared file mapping
        variant('file_shared_write', '\n\t.backing = BACKING_FILE_SHARED,\n\t.nr_pages = 16,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true, .write = true },',
                '\n\t.backing = BACKING_FILE_SHARED,\n\t.nr_pages = 16,\n\t.access = ACCESS_WRITE,\n\t.want = { .user = true },'),
        # expect a data access where the test executes
        variant('exec', '\n\t.backing = BACKING_FILE_EXEC,\n\t.nr_pages = 1,\n\t.access = ACCESS_EXEC,\n\t.want = { .user = true, .exec = true },',
                '\n\t.backing = BACKING_FILE_EXEC,\n\t.nr_pages = 1,\n\t.access = ACCESS_EXEC,\n\t.want = { .user = true },'),
        # expect a permission fault on never-touched PROT_NONE memory
        variant('prot_none_read', '\n\t.backing = BACKING_ANON_NONE,\n\t.nr_pages = 4,\n\t.access = ACCESS_READ,\n\t.sigsegv = true,\n\t.want = { .user = true },',
                '\n\t.backing = BACKING_ANON_NONE,\n\t.nr_pages = 4,\n\t.access = ACCESS_READ,\n\t.sigsegv = true,\n\t.want = { .user = true, .present = true },'),
        # expect page_fault_user for the kernel's uaccess faults
        variant('kernel_write_to_user', '\n\t.backing = BACKING_ANON,\n\t.nr_pages = KERNEL_BUF_PAGES,\n\t.access = ACCESS_UACCESS,\n\t.want = { .write = true },',
                '\n\t.backing = BACKING_ANON,\n\t.nr_pages = KERNEL_BUF_PAGES,\n\t.access = ACCESS_UACCESS,\n\t.want = { .user = true, .write = true },'),
        # expect a thread's faults to carry the process id, not the thread id
        ('EXPECT_EQ(tid, ev->pid)', 'EXPECT_EQ(tgid, ev->pid)', 1),
        # unprivileged: EPERM instead of EACCES for kernel-mode counting
        ('EXPECT_EQ(EACCES, errno) TH_LOG("%s: %s", pf_events[i],', 'EXPECT_EQ(EPERM, errno) TH_LOG("%s: %s", pf_events[i],', 1),
        # raw samples: expect the open to succeed
        ('PERF_SAMPLE_IP | PERF_SAMPLE_RAW,\n\t\t\t\t  true);\n\t\tEXPECT_EQ(-1, fd)', 'PERF_SAMPLE_IP | PERF_SAMPLE_RAW,\n\t\t\t\t  true);\n\t\tEXPECT_LE(0, fd)', 1),
        # user-mode counting: expect the 16 faults to be counted
        ('EXPECT_EQ(0, count);', 'EXPECT_EQ(USER_MAP_PAGES, count);', 1),
        # tracefs: expect nobody to create an instance
        ('EXPECT_EQ(-1, mkdir(path, 0700))', 'EXPECT_EQ(0, mkdir(path, 0700))', 1),
    ])

    aux = 'kernel/events/tests/aux_kunit.c'
    pairs = [
        # default PMU: expect order-1 chunks
        ('{ .desc = "default PMU, 256 pages", .nr_pages = 256 },', '{ .desc = "default PMU, 256 pages", .nr_pages = 256, .order = 1 },', 1),
        ('{ .desc = "default PMU, 1024 pages", .nr_pages = 1024 },\n\t{ .desc = "default PMU, 4096', '{ .desc = "default PMU, 1024 pages", .nr_pages = 1024, .order = 1 },\n\t{ .desc = "default PMU, 4096', 1),
        ('{ .desc = "default PMU, 4096 pages", .nr_pages = 4096 },', '{ .desc = "default PMU, 4096 pages", .nr_pages = 4096, .order = 1 },', 1),
        ('.nr_pages = 1024,\n\t  .overwrite = true },', '.nr_pages = 1024,\n\t  .overwrite = true, .order = 1 },', 1),
        # prefer-large and overwrite: expect smaller chunks (order 9 where the
        # right order is capped at MAX_PAGE_ORDER, 10, anyway)
        ('.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 7 },\n\t{ .desc = "prefer-large, 1024 pages",', '.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 6 },\n\t{ .desc = "prefer-large, 1024 pages",', 1),
        ('.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 9 },\n\t{ .desc = "prefer-large, 4096 pages",', '.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 8 },\n\t{ .desc = "prefer-large, 4096 pages",', 1),
        ('.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 11 },\n\t{ .desc = "prefer-large, 1024 pages, watermark 16', '.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 9 },\n\t{ .desc = "prefer-large, 1024 pages, watermark 16', 1),
        ('.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 4 },', '.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 3 },', 1),
        ('.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 2 },', '.caps = PERF_PMU_CAP_AUX_PREFER_LARGE, .order = 1 },', 1),
        ('.overwrite = true,\n\t  .order = 8 },', '.overwrite = true,\n\t  .order = 7 },', 1),
        ('.overwrite = true,\n\t  .order = 10 },', '.overwrite = true,\n\t  .order = 9 },', 2),
        ('.overwrite = true,\n\t  .order = 12 },', '.overwrite = true,\n\t  .order = 9 },', 1),
        # no-sg: smaller chunks, and success where one chunk cannot hold the buffer
        ('.caps = PERF_PMU_CAP_AUX_NO_SG, .overwrite = true, .order = 4 },', '.caps = PERF_PMU_CAP_AUX_NO_SG, .overwrite = true, .order = 3 },', 1),
        ('.nr_pages = 1 << MAX_PAGE_ORDER,\n\t  .caps = PERF_PMU_CAP_AUX_NO_SG, .overwrite = true,\n\t  .order = MAX_PAGE_ORDER },',
         '.nr_pages = 1 << MAX_PAGE_ORDER,\n\t  .caps = PERF_PMU_CAP_AUX_NO_SG, .overwrite = true,\n\t  .order = MAX_PAGE_ORDER - 1 },', 1),
        ('.order = MAX_PAGE_ORDER, .err = -ENOMEM },', '.order = MAX_PAGE_ORDER, .err = 0 },', 1),
        # free: expect setup_aux's buffer to be freed twice
        ('KUNIT_EXPECT_EQ(test, ctx->tpmu.free_calls, 1);', 'KUNIT_EXPECT_EQ(test, ctx->tpmu.free_calls, 2);', 1),
        # fragmented: expect the allocation to have reclaimed or compacted
        ('KUNIT_EXPECT_EQ(test, seen.costly, 0);', 'KUNIT_EXPECT_GT(test, seen.costly, 0);', 1),
    ]
    edit(root, aux, pairs)


def no_aux_cap(root):
    edit(root, 'drivers/perf/arm_spe_pmu.c', [(' |\n\t\t\t\t  PERF_PMU_CAP_AUX_PREFER_LARGE,', ',', 1)])
    edit(root, 'drivers/hwtracing/coresight/coresight-etm-perf.c',
         [(' |\n\t\t\t\t\t   PERF_PMU_CAP_AUX_PREFER_LARGE);', ');', 1)])


if __name__ == '__main__':
    mutants = {'tests': tests, 'no-aux-cap': no_aux_cap}
    if len(sys.argv) != 3 or sys.argv[1] not in mutants:
        sys.exit(__doc__)
    mutants[sys.argv[1]](sys.argv[2])

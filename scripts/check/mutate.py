#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants for 'make mutants': edit the assembled tree so that tests must fail.

  mutate.py tests TREE        break one expectation of every case of the
                              page-fault selftest and of the perf_aux,
                              page_fault_event and vmap_huge KUnit suites
  mutate.py perf-in-helper TREE
                              arm64 counts perf's page-faults right after
                              page_fault_enter(), before the test for page
                              faults disabled, not where v7.3 counts it
  mutate.py requester-only-records TREE
                              write PERF_RECORD_CALLCHAIN_DEFERRED only to
                              events that set defer_callchain, unlike what
                              the UAPI header documents
  mutate.py no-arm64-unwinder TREE
                              arm64's user unwinder walks no task: deferred
                              user callchains are refused and perf walks
                              every user stack in place
  mutate.py no-deferred-leaf-fixup TREE
                              perf adds the arm64 leaf frame's caller to
                              callchains taken in place only, not to
                              deferred ones
  mutate.py no-arm64-events TREE
                              arm64 calls kprobe_page_fault() where it calls
                              page_fault_enter(): no page fault tracepoint
                              (they stay defined, for the RV monitor)
  mutate.py exec-work-queued TREE
                              exec runs the pending unwind callbacks while
                              the task work is still queued, and cancels it
                              after
  mutate.py ealready-needs-cache TREE
                              unwind_deferred_request() refuses a request
                              after the callback only when the task has an
                              unwind cache
  mutate.py answered-cookie TREE
                              unwind_deferred_request() returns 1 and the
                              cookie again after the callback, as before
                              the series, instead of -EALREADY
  mutate.py outermost-frame TREE
                              the user unwinder stops before the return
                              address of the outermost frame record (the
                              one whose saved frame pointer is zero)
  mutate.py aux-reclaims TREE
                              rb_alloc_aux_page() may reclaim and compact
                              for every chunk, as before the series
  mutate.py event-before-kprobe TREE
                              page_fault_enter() reports a fault before
                              kprobe_page_fault() has looked at it: also the
                              faults taken in a kprobe's handler, which
                              riscv's kprobes fix up, and a single-stepped
                              instruction's with the kprobe slot's address
                              as ip

An edit replaces OLD by NEW in the whole file or only within one block (a
fixture variant, a table of cases). Its scope must occur exactly once and
OLD exactly as often as stated, so a test that changes shape makes this
fail loudly instead of producing a mutant that breaks nothing.
"""
import sys


def count_or_die(path, text, what, want):
    n = text.count(what)
    if n != want:
        sys.exit('mutate.py: %s: %r found %d times, expected %d' % (path, what, n, want))


def edit(root, path, edits):
    p = '%s/%s' % (root, path)
    s = open(p).read()
    for scope, end, old, new, count in edits:
        start, stop = 0, len(s)
        if scope:
            count_or_die(path, s, scope, 1)
            start = s.index(scope)
            stop = s.index(end, start)
        count_or_die(path, s[start:stop], old, count)
        s = s[:start] + s[start:stop].replace(old, new) + s[stop:]
    open(p, 'w').write(s)


def anywhere(old, new, count=1):
    return (None, None, old, new, count)


def variant(name, old, new):
    return ('FIXTURE_VARIANT_ADD(page_fault, %s)\n{' % name, '\n}', old, new, 1)


def table(name, old, new, count=1):
    return ('%s[] = {' % name, '\n};', old, new, count)


def tests(root):
    edit(root, 'tools/testing/selftests/exceptions/page_fault_events.c', [
        # expect a translation fault over the zero page
        variant('anon_write_after_read', ', .present = true }', ' }'),
        # expect a read where the test writes
        variant('user_write', '.want = { .user = true, .write = true }', '.want = { .user = true }'),
        # expect CoW faults on absent pages
        variant('cow_write', ', .present = true }', ' }'),
        # expect a data access where the test executes
        variant('exec', ', .exec = true }', ' }'),
        # expect a permission fault on never-touched PROT_NONE memory
        variant('prot_none_read', '.want = { .user = true }', '.want = { .user = true, .present = true }'),
        # expect page_fault_user for the kernel's uaccess faults
        variant('kernel_write_to_user', '.want = { .write = true }', '.want = { .user = true, .write = true }'),
        # expect a thread's faults to carry the process id, not the thread id
        anywhere('EXPECT_EQ(a->tid, ev->pid)', 'EXPECT_EQ(getpid(), ev->pid)'),
        # fault_count: expect perf to disagree with the tracepoint, and to
        # count the faults it does not count
        anywhere('EXPECT_TRUE(skips ? counted < COUNT_PAGES : counted == events)',
                 'EXPECT_TRUE(skips ? counted >= COUNT_PAGES : counted != events)'),
        # kprobe_single_step on arm64: expect the probe to be accepted
        anywhere('ret == -EINVAL && variant->probe_at_fault', 'ret == -EINVAL && !variant->probe_at_fault'),
    ])
    edit(root, 'kernel/events/tests/aux_kunit.c', [
        # layout: expect one chunk more than the buffer has, and success
        # where one chunk cannot hold a NO_SG buffer
        anywhere('KUNIT_EXPECT_EQ(test, t->nr_chunks, nr_chunks);',
                 'KUNIT_EXPECT_EQ(test, t->nr_chunks, nr_chunks + 1);'),
        table('layout_cases', '.err = -ENOMEM }', '.err = 0 }'),
        # expect a NO_SG chunk that may not reclaim
        anywhere('KUNIT_EXPECT_EQ(test, log.high_reclaim, log.high);',
                 'KUNIT_EXPECT_EQ(test, log.high_reclaim, 0);'),
        # expect one more call above the largest free order
        anywhere('KUNIT_EXPECT_EQ(test, t->asked_above, expected);',
                 'KUNIT_EXPECT_EQ(test, t->asked_above, expected + 1);'),
    ])
    edit(root, 'mm/tests/page_fault_event_kunit.c', [
        # the write: expect two page_fault_kernel events; the read: one
        anywhere('KUNIT_EXPECT_EQ(test, 1, seen.kernel);', 'KUNIT_EXPECT_EQ(test, 2, seen.kernel);'),
        anywhere('KUNIT_EXPECT_EQ(test, 0, seen.kernel);', 'KUNIT_EXPECT_EQ(test, 1, seen.kernel);'),
    ])
    edit(root, 'mm/tests/vmap_huge_kunit.c', [
        # every case: expect one PTE more than the layout has
        anywhere('KUNIT_EXPECT_EQ_MSG(test, c->ptes, ptes, "PTEs");',
                 'KUNIT_EXPECT_EQ_MSG(test, c->ptes, ptes + 1, "PTEs");'),
    ])


# arm64's do_page_fault() counts the perf event where v7.3 does: after the
# faults taken with page faults disabled have gone.
ARM64_ENTER = '\tif (page_fault_enter(regs, addr, esr, esr))\n\t\treturn 0;\n'


def perf_in_helper(root):
    perf = '\tperf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, regs, addr);\n'
    edit(root, 'arch/arm64/mm/fault.c', [
        anywhere(perf, ''),
        anywhere(ARM64_ENTER, ARM64_ENTER + perf),
    ])


def requester_only_records(root):
    edit(root, 'kernel/events/core.c',
         [anywhere('\tif (!event->attr.defer_output)\n\t\treturn;\n\n\t/* XXX do we really',
                   '\tif (!event->attr.defer_output || !event->attr.defer_callchain)\n'
                   '\t\treturn;\n\n\t/* XXX do we really')])


def no_arm64_unwinder(root):
    edit(root, 'arch/arm64/include/asm/unwind_user.h',
         [anywhere('\tif (compat_user_mode(regs))\n\t\treturn 0;\n\treturn sizeof(long);\n',
                   '\treturn 0;\n')])


def no_deferred_leaf_fixup(root):
    edit(root, 'tools/perf/util/machine.c',
         [anywhere('(chain->ips[usr_idx] == PERF_CONTEXT_USER ||\n'
                   '\t\t\t\t     chain->ips[usr_idx] == PERF_CONTEXT_USER_DEFERRED)',
                   'chain->ips[usr_idx] == PERF_CONTEXT_USER')])


def no_arm64_events(root):
    edit(root, 'arch/arm64/mm/fault.c', [
        anywhere(ARM64_ENTER, '\tif (kprobe_page_fault(regs, esr))\n\t\treturn 0;\n'),
    ])


def event_before_kprobe(root):
    report = '\tpage_fault_report(regs, address, error_code);\n'
    kprobe = '\tif (kprobe_page_fault(regs, trap))\n\t\treturn true;\n'
    edit(root, 'include/linux/page_fault_event.h', [
        anywhere(kprobe + report, report + kprobe),
    ])


def exec_work_queued(root):
    edit(root, 'kernel/unwind/deferred.c',
         [anywhere('\twhile (unwind_pending(info) && task_work_cancel(current, &info->work))\n'
                   '\t\tprocess_unwind_deferred(current);\n',
                   '\tif (unwind_pending(info)) {\n\t\tprocess_unwind_deferred(current);\n'
                   '\t\ttask_work_cancel(current, &info->work);\n\t}\n')])


def ealready_needs_cache(root):
    edit(root, 'kernel/unwind/deferred.c',
         [anywhere('\t\tif (READ_ONCE(info->unwind_completed) & bit) {\n',
                   '\t\tif (info->cache &&\n\t\t    (READ_ONCE(info->unwind_completed) & bit)) {\n')])


def answered_cookie(root):
    edit(root, 'kernel/unwind/deferred.c',
         [anywhere('\t\tif (READ_ONCE(info->unwind_completed) & bit) {\n'
                   '\t\t\t*cookie = 0;\n\t\t\treturn -EALREADY;\n\t\t}\n', '')])


def outermost_frame(root):
    fp = '\tif (frame->fp_off && get_user_word(&fp, cfa, frame->fp_off, state->ws))\n\t\treturn -EINVAL;\n'
    edit(root, 'kernel/unwind/user.c',
         [anywhere(fp, fp + '\tif (frame->fp_off && !fp)\n\t\treturn -EINVAL;\n')])


def aux_reclaims(root):
    edit(root, 'kernel/events/ring_buffer.c',
         [anywhere('\t\t\tgfp = PERF_AUX_GFP_NO_RECLAIM;\n', '\t\t\tgfp = PERF_AUX_GFP;\n')])


if __name__ == '__main__':
    mutants = {'tests': tests,
               'perf-in-helper': perf_in_helper,
               'requester-only-records': requester_only_records,
               'no-arm64-unwinder': no_arm64_unwinder,
               'no-deferred-leaf-fixup': no_deferred_leaf_fixup,
               'no-arm64-events': no_arm64_events,
               'event-before-kprobe': event_before_kprobe,
               'exec-work-queued': exec_work_queued,
               'ealready-needs-cache': ealready_needs_cache,
               'answered-cookie': answered_cookie,
               'outermost-frame': outermost_frame,
               'aux-reclaims': aux_reclaims}
    if len(sys.argv) != 3 or sys.argv[1] not in mutants:
        sys.exit(__doc__)
    mutants[sys.argv[1]](sys.argv[2])

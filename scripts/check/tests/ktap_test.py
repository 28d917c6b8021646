#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tests of scripts/check/ktap.py on serial logs saved from real guests (logs/):

  arm64-check.log     make check's arm64 guest: every case passes; KUnit
                      nested three deep, kselftest's '# '-nested KTAP,
                      several streams (HARNESS: suite)
  arm64-upstream.log  the upstream suites on the series (ftracetest's
                      shell traces, its '# # ' lines, left out): perf test
                      failures and skips, ftracetest's UNRESOLVED, a
                      runner whose own line disagrees with its children
  arm64-stopped.log   a guest stopped by the host's timeout in the middle
                      of a suite, as a hang or a panic leaves the log
  arm64-kunit.log     scripts/check/kunit.sh: kunit.py's guest console, then
                      kunit.py's verdict and its scope
  x86_64-distro.log   the distro run, our perf's shell test among it
  arm64-check-nokunit.log
                      make check's arm64 guest on the series kernel,
                      which leaves KUnit to kunit.py (kunit.enable=0)

Run: python3 -m unittest discover -s scripts/check/tests -p '*_test.py'
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import ktap  # noqa: E402


def log(name):
    return os.path.join(HERE, 'logs', name)


class Run:
    """ktap.py's command on files in a scratch directory; its output and
    exit status, and the JSON it wrote."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def call(self, func, *args):
        out = io.StringIO()
        ktap.DIAG.clear()
        with contextlib.redirect_stdout(out):
            rc = func(*args)
        return rc, out.getvalue()

    def parse(self, name, arch='arm64', required=None):
        req = None
        if required is not None:
            req = self.path('required')
            with open(req, 'w') as f:
                f.write(required)
        rc, out = self.call(ktap.cmd_parse, arch, log(name), self.path(name + '.json'), req)
        with open(self.path(name + '.json')) as f:
            res = json.load(f)
        res['states'] = {(c['suite'], c['case']): c['state'] for c in res['cases']}
        return rc, out, res


class Parse(unittest.TestCase):
    def setUp(self):
        self.run_ = Run()

    def tearDown(self):
        self.run_.dir.cleanup()

    def test_every_leaf_of_a_passing_run(self):
        rc, out, res = self.run_.parse('arm64-check.log')
        self.assertEqual(rc, 0)
        self.assertEqual(res['totals'], {'pass': 128, 'fail': 0, 'skip': 0})
        self.assertIn('arm64: 128 passed, 0 failed, 0 skipped', out)
        per_suite = {}
        for c in res['cases']:
            per_suite[c['suite']] = per_suite.get(c['suite'], 0) + 1
        # KUnit: suite, test, parameter: the parameters are the cases.
        self.assertEqual(per_suite['kunit:perf_aux'], 26)
        # kselftest's runner nests each program's KTAP behind '# '.
        self.assertEqual(per_suite['exceptions:page_fault_events'], 32)
        self.assertEqual(per_suite['perf_events:deferred_callchain'], 9)
        # A stream of our own, named by 'HARNESS: suite'.
        self.assertEqual(per_suite['exceptions:clang'], 20)
        self.assertEqual(res['states'][('kunit:page_fault_event',
                                        'write to a read-only kernel page')], 'pass')

    def test_required_suite_that_did_not_report(self):
        rc, out, res = self.run_.parse('arm64-check.log',
                                       required='exceptions:page_fault_events * * kselftest\n'
                                                'kunit:no_such_suite * * kunit\n')
        self.assertEqual(rc, 1)
        self.assertEqual(res['states'][('kunit:no_such_suite', '(suite)')], 'fail')
        self.assertEqual(res['totals']['fail'], 1)

    def test_where_a_suite_is_required(self):
        self.assertTrue(ktap.where('*', 'riscv64'))
        self.assertFalse(ktap.where('-', 'arm64'))
        self.assertTrue(ktap.where('arm64,x86_64', 'x86_64 distro'))
        self.assertTrue(ktap.where('64k', 'arm64 64k'))
        self.assertTrue(ktap.where('arm64-64k', 'arm64 64k'))
        self.assertFalse(ktap.where('arm64-64k', 'arm64'))
        self.assertFalse(ktap.where('distro', 'arm64 kunit'))

    def test_the_manifest(self):
        suites = os.path.join(HERE, '..', '..', '..', 'configs', 'suites')
        req, skip = ktap.read_required(suites, 'arm64 64k')
        self.assertIn('debug:kmemleak', req)
        self.assertIn('perf_events:deferred_compat', req)
        self.assertIn('kunit:perf_aux: no-sg, largest block, overwrite', skip)
        req, skip = ktap.read_required(suites, 'riscv64')
        self.assertNotIn('debug:kmemleak', req)
        self.assertNotIn('perf_events:deferred_callchain', req)
        self.assertIn('exceptions:clang', req)
        self.assertEqual(skip, ['kunit:vmap_huge: vmap_huge_set_memory'])
        req, _ = ktap.read_required(suites, 'x86_64 distro')
        self.assertIn('distro:perf-test', req)

    def test_expected_skip_only_where_it_is_expected(self):
        # A skip in a required suite is a failure, but where a ! line
        # expects it.
        req = 'perf:test * * perf\n!perf:test: 54.1 test of individual --pfm-events@%s\n'
        _, _, res = self.run_.parse('arm64-upstream.log', required=req % 'arm64')
        self.assertEqual(res['states'][('perf:test', '54.1 test of individual --pfm-events')],
                         'skip')
        _, _, res = self.run_.parse('arm64-upstream.log', required=req % 'x86_64')
        self.assertEqual(res['states'][('perf:test', '54.1 test of individual --pfm-events')],
                         'fail')

    def test_required_suite_only_on_its_arch(self):
        rc, _, res = self.run_.parse('arm64-check.log', arch='x86_64',
                                     required='kunit:no_such_suite * arm64 kunit\n')
        self.assertEqual(rc, 0)
        self.assertEqual(res['totals']['fail'], 0)
        rc, _, res = self.run_.parse('arm64-check.log', arch='x86_64',
                                     required='kunit:no_such_suite * arm64,x86_64 kunit\n')
        self.assertEqual(rc, 1)
        self.assertEqual(res['states'][('kunit:no_such_suite', '(suite)')], 'fail')

    def test_failures_and_skips(self):
        rc, out, res = self.run_.parse('arm64-upstream.log')
        st = res['states']
        self.assertEqual(rc, 1)
        self.assertEqual(st[('perf:test', '8 PERF_RECORD_* events & perf_sample fields')], 'fail')
        self.assertEqual(st[('perf:test', '73.3 User space counter reading of cycles')], 'fail')
        self.assertEqual(st[('perf:test', '2 Detect openat syscall event')], 'pass')
        self.assertEqual(st[('perf:test', '54.1 test of individual --pfm-events')], 'skip')
        self.assertEqual(st[('ftrace:ftracetest-ktap', 'Test tracefs GID mount option')], 'fail')
        # UNRESOLVED is a failure, as ftracetest's own exit status says.
        self.assertEqual(st[('ftrace:ftracetest-ktap',
                             'Test trace_printk from module')], 'fail')
        self.assertEqual(st[('ftrace:ftracetest-ktap', 'Basic trace file check')], 'pass')
        perf = [c['state'] for c in res['cases'] if c['suite'] == 'perf:test']
        self.assertEqual((perf.count('pass'), perf.count('fail'), perf.count('skip')),
                         (96, 6, 14))
        # Every test ftracetest announced, those that share a description
        # too.
        ftrace = [c for c in res['cases'] if c['suite'] == 'ftrace:ftracetest-ktap']
        self.assertEqual(len(ftrace), 180)
        # Why a case failed: the lines it printed before its result.
        self.assertIn('FAIL perf:test: 67 Symbols', out)

    def test_skip_in_a_required_suite_fails(self):
        _, _, res = self.run_.parse('arm64-upstream.log', required='perf:test * * perf\n')
        self.assertEqual(res['states'][('perf:test', '54.1 test of individual --pfm-events')],
                         'fail')
        reasons = {(c['suite'], c['case']): c['reason'] for c in res['cases']}
        self.assertIn('not compiled in', reasons[('perf:test', '54.1 test of individual --pfm-events')])

    def test_guest_stopped_in_the_middle_of_a_suite(self):
        rc, out, res = self.run_.parse('arm64-stopped.log')
        st = res['states']
        self.assertEqual(rc, 1)
        self.assertEqual(st[('(guest)', 'boot and run to the end')], 'fail')
        # The program that was running: its results so far, and the ones
        # its plan announced that never came.
        pfe = [c['state'] for c in res['cases'] if c['suite'] == 'exceptions:page_fault_events']
        self.assertEqual(pfe.count('pass'), 27)
        self.assertEqual(st[('exceptions:page_fault_events',
                             'selftests: exceptions: page_fault_events (plan)')],
                         'fail')
        self.assertIn('27 reported, plan 32', out)
        # The programs the runner announced and never started.
        self.assertEqual(st[('(runner)', 'plan')], 'fail')
        self.assertIn('1 reported, plan 8', out)

    def test_more_results_than_the_plan(self):
        # A suite whose plan was computed wrong (1..0) yet ran its cases.
        text = ('HARNESS: begin mode=check\nHARNESS: suite distro:doc-examples\n'
                'TAP version 13\n1..0\nok 1 one\nok 2 two\nHARNESS: end rc=0\n')
        with open(self.run_.path('plan.log'), 'w') as f:
            f.write(text)
        rc, out = self.run_.call(ktap.cmd_parse, 'arm64', self.run_.path('plan.log'),
                                 self.run_.path('plan.json'), None)
        self.assertEqual(rc, 1)
        self.assertIn('2 reported, plan 0', out)

    def test_kunit_py_run(self):
        rc, out, res = self.run_.parse('arm64-kunit.log', arch='arm64 kunit',
                                       required='kunit:perf_aux * * kunit\n'
                                       'exceptions:clang * * suite clang\n')
        self.assertEqual(rc, 0)
        self.assertEqual(res['totals'], {'pass': 42, 'fail': 0, 'skip': 0})
        self.assertEqual(res['states'][('kunit:vmap_huge', 'vmap_huge_cont_groups')], 'pass')
        self.assertTrue(any(s == 'kunit.py' and c.startswith('kunit.py run --arch=arm64')
                            for s, c in res['states']))
        # Its scope is KUnit: the guest's suites owe nothing there.
        self.assertNotIn(('exceptions:clang', '(suite)'), res['states'])

    def test_distro_run(self):
        rc, _, res = self.run_.parse('x86_64-distro.log', arch='x86_64 distro',
                                     required='distro:perf-test distro distro distro perf-test\n'
                                     'distro:tools distro arm64-distro distro tools\n')
        self.assertEqual(rc, 0)
        self.assertEqual(res['states'][('distro:perf-test', '108 perf record --call-graph '
                                        'fp,defer: stitched user callchains')], 'pass')

    def test_boot_without_kunit_owes_none(self):
        # The series kernel's check boot leaves KUnit to kunit.py
        # (kunit.enable=0), with no scope: no KUnit suite is owed; a
        # suite of its own still is.
        rc, _, res = self.run_.parse('arm64-check-nokunit.log',
                                     required='kunit:perf_aux * * kunit\n'
                                     'exceptions:clang * * suite clang\n')
        self.assertEqual(rc, 0)
        self.assertNotIn(('kunit:perf_aux', '(suite)'), res['states'])
        self.assertEqual(res['totals'], {'pass': 87, 'fail': 0, 'skip': 0})
        rc, _, res = self.run_.parse('arm64-check-nokunit.log', required='no:such_suite * * x\n')
        self.assertEqual(res['states'][('no:such_suite', '(suite)')], 'fail')

    def test_expect_over_several_runs(self):
        _, _, kunit = self.run_.parse('arm64-kunit.log', arch='arm64 kunit')
        _, _, distro = self.run_.parse('x86_64-distro.log', arch='x86_64 distro')
        runs = [self.run_.path('arm64-kunit.log.json'), self.run_.path('x86_64-distro.log.json')]
        rc, out = self.run_.call(ktap.cmd_expect, runs, ['kunit:vmap_huge: *'])
        self.assertEqual(rc, 1)
        self.assertIn('kunit:vmap_huge: vmap_huge_scattered: pass, should fail', out)
        self.assertIn('of %d cases failed' % (len(kunit['cases']) + len(distro['cases'])), out)
        rc, _ = self.run_.call(ktap.cmd_expect, runs, ['?kunit:vmap_huge: *'])
        self.assertEqual(rc, 0)


class Compare(unittest.TestCase):
    def setUp(self):
        self.run_ = Run()
        _, _, self.series = self.run_.parse('arm64-upstream.log')

    def tearDown(self):
        self.run_.dir.cleanup()

    def compare(self, base_cases, *series_runs):
        paths = []
        for i, cases in enumerate([base_cases] + list(series_runs or [self.series['cases']])):
            paths.append(self.run_.path('run%d.json' % i))
            with open(paths[-1], 'w') as f:
                json.dump({'cases': cases}, f)
        rc, out = self.run_.call(ktap.cmd_compare, *paths)
        with open(self.run_.path('cmp.log'), 'w') as f:
            f.write(out)
        _, _, res = self.run_.parse(self.run_.path('cmp.log'), arch='arm64 upstream')
        return rc, out, res

    def test_same_results_on_both(self):
        rc, out, res = self.compare(self.series['cases'])
        self.assertEqual(rc, 0, out)
        tot = self.series['totals']
        # What fails on both counts as skipped, with the base's reason.
        self.assertEqual(res['totals'], {'pass': tot['pass'], 'fail': 0,
                                         'skip': tot['fail'] + tot['skip']})
        self.assertNotIn('REGRESSION', out)

    def test_passes_on_the_base_only(self):
        base = [dict(c) for c in self.series['cases']]
        for c in base:
            if c['case'] == '67 Symbols':
                c['state'] = 'pass'
        rc, out, res = self.compare(base)
        self.assertEqual(rc, 1)
        self.assertIn('REGRESSION perf:test: 67 Symbols: base pass, series fail', out)
        self.assertEqual(res['states'][('perf:test', '67 Symbols')], 'fail')
        self.assertEqual(res['totals']['fail'], 1)

    def test_fails_on_one_series_boot_only(self):
        base = [dict(c, state='pass') if c['case'] == '67 Symbols' else c
                for c in self.series['cases']]
        again = base
        rc, out, res = self.compare(base, self.series['cases'], again)
        self.assertEqual(rc, 0, out)
        self.assertIn('flaky perf:test: 67 Symbols: failed on the first series boot', out)
        self.assertEqual(res['states'][('perf:test', '67 Symbols')], 'pass')
        # Failing on every boot of the series is a regression.
        rc, out, res = self.compare(base, self.series['cases'], self.series['cases'])
        self.assertEqual(rc, 1)
        self.assertIn('REGRESSION perf:test: 67 Symbols', out)

    def test_missing_on_the_series(self):
        base = self.series['cases'] + [{'suite': 'perf:test', 'case': '99 gone',
                                        'state': 'pass', 'reason': ''}]
        rc, _, res = self.compare(base)
        self.assertEqual(rc, 1)
        self.assertEqual(res['states'][('perf:test', '99 gone')], 'fail')

    def test_passes_on_the_series_only(self):
        base = [dict(c, state='skip') if c['case'] == '2 Detect openat syscall event' else c
                for c in self.series['cases']]
        rc, out, _ = self.compare(base)
        self.assertEqual(rc, 0)
        self.assertIn('differs perf:test: 2 Detect openat syscall event: base skip, series pass',
                      out)


if __name__ == '__main__':
    unittest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a guest's serial log into results: parse the (nested) KTAP that the
kselftest runner and KUnit print, count every leaf test case, print a
per-suite table, and write the counts to a JSON file.

  ktap.py parse ARCH LOG OUT.json [--suites configs/suites]
  ktap.py total RESULT.json...     (prints the final 'N passed, N failed' line)
  ktap.py expect RESULT.json... GLOB... (a mutant's results: the cases whose
                                    'suite: case' matches a GLOB fail, those
                                    matching a ?GLOB may fail, all others
                                    pass)
  ktap.py compare BASE.json SERIES.json [AGAIN.json...]
                                   (the same suites on the base and on
                                    the series, as KTAP: a case that
                                    passes on the base and not on the
                                    series, nor on its boots AGAIN, fails)
"""
import json
import re
import sys
from fnmatch import fnmatch

RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\s*(?:-\s*)?(.*?)\s*(?:#\s*(\S+)\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)')
HEADER = re.compile(r'^# (?:(selftests: \S+: \S+)|Subtest: (\S+))$')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
SPLATS = re.compile(r'(Kernel panic|Unable to handle kernel|BUG:|WARNING:|Oops|'
                    r'UBSAN:|KASAN:|possible circular locking|kmemleak: [0-9]+ new suspected)')


def read(path):
    with open(path, errors='replace') as f:
        return f.read()


def depth_of(line):
    """KTAP nesting: kselftest prefixes children with '# ', KUnit indents by 4."""
    d = 0
    while True:
        if line.startswith('# ') and not line.startswith('# #'):
            rest = line[2:]
        elif line.startswith('    '):
            rest = line[4:]
        else:
            return d, line
        if not (RESULT.match(rest) or PLAN.match(rest) or rest.startswith(('# ', '    ', 'TAP', 'KTAP'))):
            return d, line
        d, line = d + 1, rest


class Node:
    def __init__(self, name, depth):
        self.name, self.depth = name, depth
        self.children, self.plan, self.diag = [], None, []


# What a failed case printed just before its result line, shown under its
# FAIL line so that a CI log says why without the guest's serial log.
DIAG_LINES = 8
DIAG = {}


def parse(lines):
    """Build the result tree. Each result line closes the group of deeper
    results printed before it (KTAP prints a parent's line last)."""
    pending = {}           # depth -> list of finished nodes waiting for a parent
    plans = {}
    said = []              # lines since the last result line
    named = {}             # depth -> name of the test its results belong to
    for raw in lines:
        line = STAMP.sub('', raw.rstrip('\r\n'))
        d, body = depth_of(line)
        m = HEADER.match(body)
        if m:
            # kselftest names a program before its results, one level
            # up; KUnit names a suite at the level of its results.
            named[d + 1 if m.group(1) else d] = m.group(1) or m.group(2)
        m = PLAN.match(body)
        if m:
            plans[d] = int(m.group(1))
            pending.setdefault(d, [])
            continue
        m = RESULT.match(body)
        if not m:
            text = body.lstrip('# ').strip()
            if text and not re.match(r'(RUN|OK|FAIL|SKIP)\s|KTAP version|TAP version|Subtest:|module:', text):
                said = (said + [text])[-DIAG_LINES:]
            continue
        status, _, desc, directive, reason = m.groups()
        node = Node(desc, d)
        node.ok = status == 'ok'
        node.directive = (directive or '').upper()
        node.reason = reason or ''
        node.diag, said = said, []
        node.children = pending.pop(d + 1, [])
        node.plan = plans.pop(d + 1, None)
        pending.setdefault(d, []).append(node)
    # A test stopped before its own result line (the guest hung or
    # panicked): its results so far, under a failed parent of its name.
    for d in sorted((d for d in pending if d > 0 and pending[d]), reverse=True):
        node = Node(named.get(d, '(unfinished)'), d - 1)
        node.ok, node.directive, node.reason = False, '', 'stopped before its result'
        node.children, node.plan = pending.pop(d), plans.pop(d, None)
        pending.setdefault(d - 1, []).append(node)
    top = pending.get(0, [])
    return top, plans.get(0)


def leaves(node, suite, out):
    """Flatten to (suite, case, state, reason). A parent whose own line
    disagrees with its children (crash, timeout, bad exit) adds one failure;
    a child the plan announced but that never reported is a failure too."""
    if not node.children:
        if node.directive == 'SKIP':
            state = 'skip'
        elif node.ok or node.directive in ('XFAIL', 'TODO'):
            state = 'pass'
        else:
            state = 'fail'
            DIAG[(suite, node.name)] = node.diag
        out.append((suite, node.name, state, node.reason))
        return
    for c in node.children:
        leaves(c, suite, out)
    if node.plan is not None and len(node.children) != node.plan:
        out.append((suite, node.name + ' (plan)', 'fail',
                    '%d reported, plan %d' % (len(node.children), node.plan)))
    if not node.ok and not any(s == 'fail' for su, _, s, _ in out if su == suite):
        out.append((suite, node.name, 'fail', node.reason or 'failed'))


def suite_name(desc):
    m = re.match(r'selftests:\s*(\S+):\s*(\S+)', desc)
    return '%s:%s' % m.groups() if m else desc.split()[0].rstrip(':') if desc else '?'


def where(spec, arch):
    """Whether SPEC (*, -, or ARCH, RUN and ARCH-RUN, comma-separated)
    takes in the run ARCH ('arm64', 'arm64 64k', 'x86_64 distro')."""
    w = arch.split()
    return spec == '*' or bool(set(spec.split(',')) & {w[0], '-'.join(w), w[-1]})


def read_required(suites_file, arch):
    """From configs/suites: the suites required in the run ARCH and the
    cases that may skip there."""
    required, may_skip = [], []
    if not suites_file:
        return required, may_skip
    for l in read(suites_file).splitlines():
        if l.startswith('#') or not l.strip():
            continue
        if l.startswith('!'):
            # !SUITE: CASE@WHERE
            case, _, spec = l[1:].rpartition('@')
            if where(spec.strip(), arch):
                may_skip.append(case)
            continue
        f = l.split(None, 3)
        if len(f) == 4 and where(f[2], arch):
            required.append(f[0])
    return required, may_skip


def cmd_parse(arch, log, out_json, suites_file=None):
    text = read(log).splitlines()
    required, may_skip = read_required(suites_file, arch)
    begin = [i for i, l in enumerate(text) if l.startswith('HARNESS: begin')]
    body = text[begin[-1] + 1:] if begin else []
    # The guest may print several KTAP streams; 'HARNESS: suite NAME' starts
    # one whose top-level results all belong to suite NAME.
    streams, name = [[]], [None]
    # KUnit suites built into the kernel print their KTAP to the console
    # while it boots, before user space starts: one more stream.
    head = text[:begin[-1]] if begin else text
    # The guest prints the whole kernel log after 'HARNESS: kernel log';
    # take KUnit from there (the console may or may not have shown it).
    klog = [i for i, l in enumerate(head) if l.startswith('HARNESS: kernel log')]
    if klog:
        head = head[klog[-1] + 1:]
    kunit = [i for i, l in enumerate(head) if STAMP.sub('', l).startswith('KTAP version')]
    if kunit:
        streams.append(head[kunit[0]:])
        name.append('kunit')
        streams.append([])
        name.append(None)
    for line in body:
        if line.startswith('HARNESS: suite '):
            streams.append([])
            name.append(line.split(None, 2)[2].strip())
        else:
            streams[-1].append(line)
    rows = []
    for lines, sname in zip(streams, name):
        top, plan = parse(lines)
        for node in top:
            if sname == 'kunit':
                leaves(node, 'kunit:' + node.name, rows)
            elif sname:
                leaves(node, sname, rows)
            else:
                leaves(node, suite_name(node.name), rows)
        if plan is not None and len(top) != plan:
            rows.append((sname or '(runner)', 'plan', 'fail',
                         '%d reported, plan %d' % (len(top), plan)))
    if not begin or not any(l.startswith('HARNESS: end') for l in text):
        rows.append(('(guest)', 'boot and run to the end', 'fail', 'see ' + log))
    # Not in a test's diagnostic ('# ...'): a test may print those words.
    splats = [l for l in text if SPLATS.search(l)
              and not STAMP.sub('', l).lstrip().startswith('#')]
    if splats:
        rows.append(('(guest)', 'kernel log free of splats', 'fail', splats[0].strip()))
    # A guest told to run some suites only (a mutant's: 'HARNESS: scope
    # SUITE...') owes results for those alone; KUnit runs whole, if at all.
    scope = [l.split()[2:] for l in body if l.startswith('HARNESS: scope ')]
    scope = scope[-1] if scope else None
    # A kernel told not to run KUnit (kunit.enable=0) owes no KUnit results.
    no_kunit = any('Kernel command line:' in l and 'kunit.enable=0' in l.split()
                   for l in head)

    def in_scope(r):
        if no_kunit and r.startswith('kunit:'):
            return False
        return scope is None or any(r == w or r.startswith(w + ':') or
                                    (r.startswith('kunit:') and w.startswith('kunit:'))
                                    for w in scope)
    for r in required:
        if not any(ch in r for ch in '*?[') and in_scope(r) and \
                not any(su == r for su, _, _, _ in rows):
            rows.append((r, '(suite)', 'fail', 'required suite reported no results'))
    # A skip of a test the series makes required means the feature is missing.
    final = []
    for suite, case, state, reason in rows:
        if state == 'skip' and any(fnmatch(suite, r) for r in required) \
                and not any(fnmatch(suite + ': ' + case, m) for m in may_skip):
            state, reason = 'fail', 'required test skipped: ' + (
                reason or 'the test gave no reason (ftracetest: a "requires:" line not met)')
        final.append((suite, case, state, reason))

    suites = {}
    for suite, _, state, _ in final:
        suites.setdefault(suite, {'pass': 0, 'fail': 0, 'skip': 0})[state] += 1
    print('\n%s results (%s)' % (arch, log))
    print('  %-44s %5s %5s %5s' % ('suite', 'pass', 'fail', 'skip'))
    for s, c in suites.items():
        print('  %-44s %5d %5d %5d' % (s, c['pass'], c['fail'], c['skip']))
    for suite, case, state, reason in final:
        if state != 'pass':
            print('  %-4s %s: %s%s' % (state.upper(), suite, case, ' (%s)' % reason if reason else ''))
            for d in DIAG.get((suite, case), []) if state == 'fail' else []:
                print('       | ' + d)
    tot = {k: sum(c[k] for c in suites.values()) for k in ('pass', 'fail', 'skip')}
    if not final:
        tot['fail'] = 1
        print('  FAIL no test results at all in %s' % log)
    print('  %s: %d passed, %d failed, %d skipped' % (arch, tot['pass'], tot['fail'], tot['skip']))
    with open(out_json, 'w') as f:
        json.dump({'arch': arch, 'log': log, 'totals': tot,
                   'cases': [dict(zip(('suite', 'case', 'state', 'reason'), r)) for r in final]},
                  f, indent=1)
    return 1 if tot['fail'] else 0


def cmd_total(files):
    tot = {'pass': 0, 'fail': 0, 'skip': 0}
    for f in files:
        t = json.loads(read(f))['totals']
        for k in tot:
            tot[k] += t[k]
    print('%d passed, %d failed, %d skipped' % (tot['pass'], tot['fail'], tot['skip']))
    return 1 if tot['fail'] or not tot['pass'] else 0


def cmd_expect(result_jsons, globs):
    """A GLOB that starts with '?' names cases the mutant may or may not
    make fail (a race it opens without forcing it); the others must fail."""
    cases = [c for f in result_jsons for c in json.loads(read(f))['cases']]
    maybe = [g[1:] for g in globs if g.startswith('?')]
    must = [g for g in globs if not g.startswith('?')]
    wrong, failed = [], 0
    for c in cases:
        name = '%s: %s' % (c['suite'], c['case'])
        must_fail = any(fnmatch(name, g) for g in must)
        failed += c['state'] == 'fail'
        if not must_fail and any(fnmatch(name, g) for g in maybe):
            continue
        if (c['state'] == 'fail') != must_fail:
            wrong.append('%s: %s, should %s' % (name, c['state'],
                                               'fail' if must_fail else 'pass'))
    # A pattern that matches nothing would let a mutant through unseen.
    wrong += ['no case matches %r' % g for g in must + maybe
              if not any(fnmatch('%s: %s' % (c['suite'], c['case']), g) for c in cases)]
    for w in wrong:
        print('# ' + w)
    print('# %d of %d cases failed%s' % (failed, len(cases),
                                         '' if wrong else ', exactly those expected'))
    return 1 if wrong else 0


def cmd_compare(base_json, *series_json):
    """Each case of either kernel with its state on the base and on the
    series, as KTAP: it passes where the series passes, fails where the
    base passed and the series did not (or did not run it), and skips
    where neither passed (the reason is the base's). More than one series
    run: the later ones boot again for the cases the first one failed; a
    case that passes there is flaky, said so, and not a failure. The
    counts of each suite's base/series pairs, and every case whose state
    differs, come first as diagnostic lines."""
    def cases(path):
        # ftracetest has tests that share a description: the n-th of
        # them on the base is compared with the n-th on the series.
        out, seen = {}, {}
        for c in json.loads(read(path))['cases']:
            n = seen[c['suite'], c['case']] = seen.get((c['suite'], c['case']), 0) + 1
            out[c['suite'], c['case'] + (' (%d)' % n if n > 1 else '')] = c
        return out
    base, series = cases(base_json), cases(series_json[0])
    flaky = []
    for again in map(cases, series_json[1:]):
        for key, c in again.items():
            if key[0] == '(guest)' or key not in series:
                series.setdefault(key, c)
            elif c['state'] == 'pass' and series[key]['state'] != 'pass':
                flaky.append(key)
                series[key] = c
    suites = {}
    for key in sorted(set(base) | set(series)):
        b = base.get(key, {}).get('state', '-')
        s = series.get(key, {}).get('state', '-')
        # A guest that did not run to the end, or whose kernel log has a
        # splat, leaves nothing to compare: that fails on either kernel.
        why = (base.get(key) or series[key])['reason']
        if key[0] == '(guest)':
            res = 'not ok', '', '%s on the %s' % (why, 'base' if b == 'fail' else 'series')
        elif s == 'pass':
            res = 'ok', '', ''
        elif b in ('pass', '-'):
            res = 'not ok', '', series.get(key, {}).get('reason', 'not run on the series')
        else:
            res = 'ok', ' # SKIP %s on the base too' % {'fail': 'fails'}.get(b, 'skips'), why
        suites.setdefault(key[0], []).append((key[1], b, s, res))
    print('HARNESS: begin upstream')
    print('# %-40s %s' % ('suite', 'base/series: cases'))
    for suite, rows in suites.items():
        pairs = {}
        for _, b, s, _ in rows:
            pairs[b + '/' + s] = pairs.get(b + '/' + s, 0) + 1
        print('# %-40s %s' % (suite, ', '.join('%s %d' % kv for kv in sorted(pairs.items()))))
    for suite, case in flaky:
        print('# flaky %s: %s: failed on the first series boot, passed on another' % (suite, case))
    for suite, rows in suites.items():
        for case, b, s, res in rows:
            if b != s or res[0] == 'not ok':
                print('# %s %s: %s: base %s, series %s' %
                      ('REGRESSION' if res[0] == 'not ok' else 'differs', suite, case, b, s))
    rc = 0
    for suite, rows in suites.items():
        print('HARNESS: suite ' + suite)
        print('KTAP version 1\n1..%d' % len(rows))
        for n, (case, _, _, (res, directive, why)) in enumerate(rows, 1):
            rc |= res == 'not ok'
            if why:
                print('# ' + why)
            print('%s %d %s%s' % (res, n, case.replace('#', 'No.'), directive))
    print('HARNESS: end rc=%d' % rc)
    return rc


if __name__ == '__main__':
    a = sys.argv[1:]
    if a[:1] == ['parse'] and len(a) in (4, 6):
        req = a[5] if len(a) == 6 and a[4] == '--suites' else None
        sys.exit(cmd_parse(a[1], a[2], a[3], req))
    if a[:1] == ['expect'] and len(a) > 2:
        # The result files first (*.json), then the globs.
        n = next(i for i, x in enumerate(a[1:] + [''], 1) if not x.endswith('.json'))
        sys.exit(cmd_expect(a[1:n], a[n:]))
    if a[:1] == ['compare'] and len(a) > 2:
        sys.exit(cmd_compare(*a[1:]))
    if a[:1] == ['total'] and len(a) > 1:
        sys.exit(cmd_total(a[1:]))
    sys.exit(__doc__)

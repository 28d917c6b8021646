#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Collect the guests' BENCH lines and print the side-by-side tables.

  report.py OUTDIR KERNEL=LOG... [vmlinux-base=FILE vmlinux-series=FILE]

With the two vmlinux files (and OBJDUMP, the arch's objdump, in the
environment), it also compares the fault handler's disassembly.

Writes OUTDIR/results.json (every run).
"""
import difflib
import json
import os
import re
import subprocess
import statistics as st
import sys


def parse(logs):
    rows = []
    for kernel, log in logs:
        for line in open(log, errors='replace'):
            if not line.startswith('BENCH '):
                continue
            row = {'kernel': kernel}
            for k, v in re.findall(r'(\w[\w-]*)=(\S+)', line):
                try:
                    row[k] = float(v) if '.' in v else int(v)
                except ValueError:
                    row[k] = v
            rows.append(row)
    return rows


def summary(values):
    return st.median(values), max(values) - min(values), len(values)


# What the series adds to a fault with everything disabled, per kind.
DISABLED_GOAL = {k: {'page_fault_enter()': 3 if k == 'kernel-write' else 2,
                     'unwind_reset_info()': 3}
                 for k in ('anon-write', 'file-read', 'kernel-write')}


def fault_table(rows):
    out = []
    if not has(rows, 'fault'):
        return out
    print('\n1. Fault path: kernel instructions per fault. mean: over 1000 faults (median of runs,'
          ' spread = max - min);\n   mode, min: of 1000 faults counted one by one, free of'
          ' interrupt noise (median of runs, spread of the mode)')
    for kind in ('anon-write', 'file-read', 'kernel-write'):
        print('\n  %-40s %9s %7s %8s %7s %8s %8s %8s' % (kind, 'mean', 'spread', 'mode', 'spread',
                                                      'min', 'vs base', 'cost'))
        sel = [r for r in rows if r.get('part') == 'fault' and r.get('kind') == kind]
        base = [r for r in sel if r['kernel'] == 'base' and r['variant'] == 'off']
        off = [r for r in sel if r['kernel'] == 'series' and r['variant'] == 'off']
        if not base or not off:
            print('  (missing runs)')
            continue
        mode = lambda rs: st.median([r['single_mode'] for r in rs])
        b, s_off = mode(base), mode(off)
        order = []
        for r in sel:
            key = (r['kernel'], r['variant'])
            if key not in order:
                order.append(key)
        for kernel, variant in order:
            rs = [r for r in sel if (r['kernel'], r['variant']) == (kernel, variant)]
            m, spread, n = summary([r['per_fault'] for r in rs])
            mo, mo_spread, _ = summary([r['single_mode'] for r in rs])
            mn = st.median([r['single_min'] for r in rs])
            label = '%s, %s' % ('v7.3.4 base' if kernel == 'base' else 'series', variant)
            cost = mo - (b if kernel == 'base' else s_off)
            print('  %-40s %9.1f %7.1f %8.0f %7.0f %8.0f %+8.0f %+8.0f' % (
                label, m, spread, mo, mo_spread, mn, mo - b, cost))
            out.append({'kind': kind, 'kernel': kernel, 'variant': variant, 'median': m,
                        'spread': spread, 'mode': mo, 'mode_spread': mo_spread, 'min': mn,
                        'runs': n, 'ratio': m / st.median([r['per_fault'] for r in base])})
        noise = max(summary([r['single_mode'] for r in rs])[1] for rs in (base, off))
        # page_fault_enter(): two static branches, one more branch on the
        # kernel-mode path; unwind_reset_info(): 3 on each return to user
        # space (kernel-write's read() returns once, its fault does not).
        goal = DISABLED_GOAL[kind]
        print('  check: disabled - base = %+.0f instructions, mode spread %.0f'
              ' (goal %+d: %s, spread <= 1): %s'
              % (s_off - b, noise, sum(goal.values()),
                 ', '.join('%+d %s' % (n, what) for what, n in goal.items()),
                 'met' if s_off - b <= sum(goal.values()) and noise <= 1 else 'NOT met'))
        for consumer in ('tracefs', 'perf'):
            tp = [o for o in out if o['kind'] == kind and o['variant'] in
                  (consumer, consumer + '-tracepoint')]
            kp = [o for o in out if o['kind'] == kind and o['kernel'] == 'series'
                  and o['variant'] == consumer + '-kprobe-handle_mm_fault']
            if tp and kp and kp[0]['mode'] > s_off:
                t, k = tp[0]['mode'] - s_off, kp[0]['mode'] - s_off
                print('  check: %s via the tracepoint costs %.0f, via a kprobe %.0f: ratio %.2f'
                      ' (goal <= 0.5): %s' % (consumer, t, k, t / k, 'met' if t <= k / 2 else 'NOT met'))
    for r in rows:
        if r.get('part') == 'fault' and 'error' in r:
            print('  %s, %s: %s' % (r['kernel'], r['variant'], r['error']))
    return out


def has(rows, part):
    return any(r.get('part') == part for r in rows)


def microbench_table(rows):
    if not has(rows, 'microbench'):
        return []
    print('\n2. microbench 100000: guest instructions for 100,000 write faults at 0xcafe0000')
    print('  %-20s %14s %12s %14s %8s' % ('kernel', 'kernel instr', 'spread', 'user instr', 'vs base'))
    out, base = [], None
    for kernel in ('base', 'series'):
        sel = [r for r in rows if r.get('part') == 'microbench' and r['kernel'] == kernel]
        if not sel:
            continue
        k, spread, n = summary([r['kernel_instructions'] for r in sel])
        u = st.median([r['user_instructions'] for r in sel])
        base = base or k
        print('  %-20s %14.0f %12.0f %14.0f %8.4f' % (kernel, k, spread, u, k / base))
        out.append({'kernel': kernel, 'kernel_instructions': k, 'spread': spread,
                    'user_instructions': u, 'runs': n})
    return out


def syscall_table(rows):
    if not has(rows, 'syscall'):
        return []
    print('\n5. System call: kernel instructions of one getppid() (runs of N and of 0 calls)')
    print('  %-20s %12s %8s %18s' % ('kernel', 'per call', 'spread', 'task_struct bytes'))
    out = []
    for kernel in ('base', 'series'):
        sel = [r for r in rows if r.get('part') == 'syscall' and r['kernel'] == kernel]
        if not sel:
            continue
        per, spread, n = summary([(r['kernel_instructions'] - r['kernel_instructions_0'])
                                  / r['calls'] for r in sel])
        ts = [r['bytes'] for r in rows if r.get('part') == 'task_struct'
              and r['kernel'] == kernel and 'bytes' in r]
        print('  %-20s %12.2f %8.2f %18s' % (kernel, per, spread, ts[0] if ts else '-'))
        out.append({'kernel': kernel, 'per_call': per, 'spread': spread, 'runs': n,
                    'task_struct_bytes': ts[0] if ts else None})
    if len(out) == 2:
        d = out[1]['per_call'] - out[0]['per_call']
        print('  check: series - base = %+.2f instructions per call (goal <= +4, the generic reset x86_64 pays): %s'
              % (d, 'met' if d <= 4 else 'NOT met'))
        if out[0]['task_struct_bytes'] and out[1]['task_struct_bytes']:
            print('  task_struct: %+d bytes' % (out[1]['task_struct_bytes']
                                                - out[0]['task_struct_bytes']))
    return out


def callchain_table(rows):
    if not has(rows, 'callchain'):
        return []
    print('\n3. Deferred callchains: cpu-clock every 200 us, --call-graph fp vs fp,defer')
    print('  %-10s %-9s %8s %10s %12s %14s %12s' % ('workload', 'mode', 'samples', 'bytes/smpl',
                                                     'smpl/record', 'kernel instr', 'vs fp'))
    out = []
    for wl in ('syscall', 'user'):
        ref = None
        for mode in ('fp', 'fp,defer'):
            sel = [r for r in rows if r.get('part') == 'callchain' and r['kernel'] == 'series'
                   and r.get('workload') == wl and r.get('mode') == mode]
            if not sel:
                continue
            bps = st.median([(r['sample_bytes'] + r['deferred_bytes']) / r['samples'] for r in sel])
            spr = st.median([r['samples'] / r['deferred'] if r['deferred'] else 0 for r in sel])
            ki = st.median([r['kernel_instructions'] for r in sel])
            ns = st.median([r['samples'] for r in sel])
            ref = ref or ki
            print('  %-10s %-9s %8.0f %10.1f %12s %14.0f %+11.2f%%' % (
                wl, mode, ns, bps, '%.1f' % spr if spr else '-', ki, (ki / ref - 1) * 100))
            out.append({'workload': wl, 'mode': mode, 'samples': ns, 'bytes_per_sample': bps,
                        'samples_per_deferred_record': spr, 'kernel_instructions': ki})
    return out


def aux_table(rows):
    sel = [r for r in rows if r.get('part') == 'aux']
    if not sel:
        return []
    print('\n4. AUX buffer allocation and mapping (series, the perf_aux_bench suite of make bench): default PMU vs'
          ' PERF_PMU_CAP_AUX_PREFER_LARGE\n   (as SPE and cs_etm), fresh memory vs no free block above order 3;'
          ' entries = page table entries of the buffer mapped as SPE/TRBE do, vmap(VM_ALLOW_HUGE_VMAP)\n'
          '   (PMD blocks + contiguous PTE groups + PTEs), and of a plain vmap() as in v7.3;'
          ' instructions = guest ns under -icount shift=0')
    print('  %-8s %-13s %-10s %7s %18s %8s %14s %14s %22s' % (
        'size', 'pmu', 'memory', 'chunks', 'entries (b+g+p)', 'plain', 'instructions',
        'task rcl/cmp', 'all allocstall/cmpct'))
    out = []
    for kib in sorted({r['kib'] for r in sel}):
        for pmu in ('default', 'prefer-large'):
            for state in ('fresh', 'fragmented'):
                m = [r for r in sel if r['kib'] == kib and r['pmu'] == pmu and r['state'] == state]
                if not m:
                    continue
                r = m[-1]
                task = all_ = '-'
                if state == 'fragmented':
                    task = '%d/%d' % (r['reclaim'], r['compact'])
                    all_ = '+%d/+%d' % (r['allocstall'], r['compact_stall'])
                ent = '%d (%d+%d+%d)' % (r['entries'], r['blocks'], r['groups'], r['ptes'])
                print('  %-8s %-13s %-10s %7d %18s %8d %14d %14s %22s' % (
                    '%d MiB' % (kib // 1024), pmu, state, r['chunks'], ent, r['plain'], r['ns'],
                    task, all_))
                out.append({k: v for k, v in r.items() if k not in ('part', 'kernel')})
    return out


def frag_table(rows):
    sel = [r for r in rows if r.get('part') == 'frag']
    if not sel:
        return []
    cols = [('series', 'default', 'default PMU'),
            ('series', 'prefer-large', 'PREFER_LARGE'),
            ('series-old', 'prefer-large', 'PREFER_LARGE, old')]
    print('\n6. A long-running device (series, the perf_aux_churn suite of make bench under page-cache,'
          ' anonymous and kernel-object churn):\n   AUX buffers of 4 MiB per CPU and 64 MiB'
          ' every 4th cycle, allocated and freed, for the default PMU (order-0 pages, what SPE\n'
          '   and TRBE get on v7.3), PREFER_LARGE with the series\' allocation policy, and'
          ' PREFER_LARGE with that policy reverted\n   ("old": reclaim and compaction for'
          ' every order up to MAX_PAGE_ORDER for every chunk, as PREFER_LARGE PMUs get on v7.3).'
          ' Median over boots,'
          ' [min, max].')
    groups = [[r for r in sel if (r['kernel'], r['pmu']) == (k, p)] for k, p, _ in cols]
    print('  %-36s' % 'after the run' + ''.join('%26s' % c for _, _, c in cols))

    def mib(key):
        return lambda r: r[key] * r['page_kib'] / 1024

    metrics = [
        ('boots', None),
        ('AUX buffers', lambda r: r['buffers']),
        ('  failed', lambda r: r['failed']),
        ('  chunks', lambda r: r['chunks']),
        ('  chunks above order 3', lambda r: r['large']),
        ('  ms in rb_alloc_aux()', lambda r: r['alloc_us'] / 1000),
        ('direct reclaim stalls (allocstall)', lambda r: r['allocstall']),
        ('compaction stalls (compact_stall)', lambda r: r['compact_stall']),
        ('  of which failed (compact_fail)', lambda r: r['compact_fail']),
        ('pageblocks of mixed migrate types', lambda r: r['mixed']),
        ('free MiB', mib('free_pages')),
        ('  in blocks >= 64 KiB (order 4)', mib('free_o4')),
        ('  in blocks >= 2 MiB (order 9)', mib('free_o9')),
        ('free order-10 blocks', lambda r: r['blocks_o10']),
        ('THP faults of 64 MiB served huge', lambda r: r['thp_alloc']),
        ('  fell back to pages', lambda r: r['thp_fallback']),
    ]
    out = []
    for name, fn in metrics:
        cells = []
        for g in groups:
            if name == 'boots':
                cells.append('%d' % len(g))
                continue
            vals = [fn(r) for r in g if r.get('ok') == 1 and 'page_kib' in r]
            if not vals:
                cells.append('-')
                continue
            m = st.median(vals)
            cells.append('%.0f [%.0f, %.0f]' % (m, min(vals), max(vals)))
        print('  %-36s' % name + ''.join('%26s' % c for c in cells))
        out.append({'metric': name, 'cells': dict(zip([c for _, _, c in cols], cells))})
    bad = [r for r in sel if r.get('ok') != 1]
    if bad:
        print('  %d boot(s) did not complete the simulation: %s' % (
            len(bad), ', '.join('%s %s' % (r['kernel'], r.get('error', 'ok=0')) for r in bad)))
    return out


def disassemble(vmlinux, func):
    """The instructions of func, without addresses, branch targets as offsets."""
    out = subprocess.run([os.environ.get('OBJDUMP', 'objdump'), '-d', '--no-show-raw-insn',
                          '--disassemble=' + func, vmlinux],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = re.match(r'\s*[0-9a-f]+:\s+(.*)', line)
        if m:
            insn = re.sub(r'\b[0-9a-f]{8,}\s+<', '<', m.group(1))
            insn = re.sub(r'<([\w.]+)\+0x[0-9a-f]+>', r'<\1+off>', insn)
            insns.append(re.sub(r'\s*//.*', '', insn).strip())
    return insns


def disasm_table(vmlinux, func='do_page_fault'):
    if set(vmlinux) != {'base', 'series'}:
        return {}
    code = {k: disassemble(v, func) for k, v in vmlinux.items()}
    print('\n7. %s() disassembly, v7.3.4 base vs series: %d vs %d instructions, %d vs %d nops'
          ' (static branches);\n   the instructions that differ (unified diff, branch targets'
          ' and symbol offsets left out):' % (
              func, len(code['base']), len(code['series']),
              code['base'].count('nop'), code['series'].count('nop')))
    diff = list(difflib.unified_diff(code['base'], code['series'], 'base', 'series', n=1,
                                     lineterm=''))
    for line in diff[2:]:
        print('    ' + line)
    return {'function': func, 'base': len(code['base']), 'series': len(code['series']),
            'diff': diff}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    args = [a.split('=', 1) for a in sys.argv[2:]]
    vmlinux = {k[len('vmlinux-'):]: v for k, v in args if k.startswith('vmlinux-')}
    logs = [(k, v) for k, v in args if not k.startswith('vmlinux-')]
    rows = parse(logs)
    if not rows:
        sys.exit('no BENCH lines in %s' % ', '.join(l for _, l in logs))
    fault = fault_table(rows)
    micro = microbench_table(rows)
    cc = callchain_table(rows)
    aux = aux_table(rows)
    frag = frag_table(rows)
    sc = syscall_table(rows)
    dis = disasm_table(vmlinux)
    json.dump({'runs': rows, 'fault': fault, 'microbench': micro, 'callchain': cc, 'aux': aux,
               'frag': frag, 'syscall': sc, 'disassembly': dis},
              open(outdir + '/results.json', 'w'), indent=1)
    print('\nraw results: %s/results.json' % outdir)


main()

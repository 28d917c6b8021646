#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The examples of a Documentation page, to run as tests.

usage: doc-examples.py PAGE.rst OUTDIR

Every literal block after the page's "Examples" heading whose lines start
with a "# " prompt is an example: each prompt starts a command, kept as
written (a line ending in a backslash, or inside an open quote, goes on
on the next line); the lines without a prompt that follow a command are
its documented output ("..." stands for lines left out). OUTDIR gets, per
command, NN.cmd (the command), NN.out (its documented output as one
regular expression a line: numbers, addresses, hexadecimal codes and a
trace's flags column may differ, the rest may not) and NN.section (the subsection it is in, to run in one shell).
"""
import os
import re
import sys


def literal_blocks(lines):
    """(subsection, [lines]) for each indented block after a '::' line."""
    section, i, in_examples = None, 0, False
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if nxt and re.fullmatch(r'[=\-~^]{3,}', nxt.strip()) and line.strip():
            if nxt.startswith('='):
                in_examples = line.strip() == 'Examples'
            section = line.strip()
            i += 2
            continue
        if in_examples and line.rstrip().endswith('::'):
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(('\t', ' '))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            yield section, [b.expandtabs(8)[8:] if b.startswith('\t') else b.strip() for b in block if b.strip()]
            continue
        i += 1


def open_quote(text):
    return text.count("'") % 2 == 1


def pattern(line):
    """A documented output line as a regular expression."""
    out = []
    for tok in re.split(r'(\s+)', line.strip()):
        if not tok:
            continue
        if tok.isspace():
            out.append(r'\s+')
            continue
        # The trace's flags column (irqs-off, need-resched, ...) differs
        # from one arch and context to another.
        if re.fullmatch(r'\.{4,}', tok):
            out.append(r'\S{%d}' % len(tok))
            continue
        # Numbers: 0x hex, decimals, and bare hex with a digit in it.
        parts = re.split(r'(0x[0-9a-fA-F]+|\d+\.\d+|\b(?=[0-9a-fA-F]*\d)[0-9a-fA-F]+\b)', tok)
        for j, p in enumerate(parts):
            if not j % 2:
                out.append(re.escape(p))
            elif p.startswith('0x'):
                out.append(r'0x[0-9a-fA-F]+')
            elif re.fullmatch(r'\d+', p):
                out.append(r'[0-9a-fA-F]+' if len(p) > 4 else r'\d+')
            elif re.fullmatch(r'[\d.]+', p):
                out.append(r'\d+(?:\.\d+)?')
            else:
                out.append(r'[0-9a-fA-F]+')
    return ''.join(out)


def main():
    page, outdir = sys.argv[1], sys.argv[2]
    lines = open(page).read().splitlines()
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for section, block in literal_blocks(lines):
        if not block or not block[0].startswith('# '):
            continue
        cmds = []
        k = 0
        while k < len(block):
            line = block[k]
            if line.startswith('# '):
                text = line[2:]
                while (text.endswith('\\') or open_quote(text)) and k + 1 < len(block):
                    k += 1
                    text += '\n' + block[k]
                cmds.append([text, []])
            elif line.strip() != '...':
                cmds[-1][1].append(pattern(line))
            k += 1
        for text, out in cmds:
            n += 1
            base = os.path.join(outdir, '%02d' % n)
            with open(base + '.cmd', 'w') as f:
                f.write(text + '\n')
            with open(base + '.out', 'w') as f:
                f.write(''.join(o + '\n' for o in out))
            with open(base + '.section', 'w') as f:
                f.write(section + '\n')
    if not n:
        sys.exit('%s: no examples (literal blocks of "# " commands after "Examples")' % page)
    print('%d examples from %s' % (n, page))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Old against new: the markdown tables of two runs of the same benchmark, joined row by row.

Usage: compare_tables.py OLD.md NEW.md [TOLERANCE]   (tolerance: 0.03, i.e. new may be 3% slower)

A table of OLD is matched with the table of NEW that has the same header; a row with the row of the
same key (its first cell, and its second when the second column is n, series or length; the row's
number when its first cell is a time). Every cell that is a time ("0.182 ms", "1.06 s", "74.7 us *")
gives old, new and new / old. Rows of NEW only (new measures) are left out. Prints one table per
table with times, then a line with the largest ratio; exit status 0 whatever the ratios."""
import re
import sys

TIME = re.compile(r'^\s*([0-9.eE+-]+)\s*(us|ms|s)\b')
SCALE = {'us': 1e-6, 'ms': 1e-3, 's': 1.0}


def seconds(cell):
    m = TIME.match(cell)
    return float(m.group(1)) * SCALE[m.group(2)] if m else None


def tables(path):
    """[(header cells, [row cells])] of a markdown file."""
    out, lines = [], open(path).read().split('\n')
    i = 0
    while i < len(lines):
        if lines[i].startswith('|') and i + 1 < len(lines) and lines[i + 1].startswith('| ---'):
            header = [c.strip() for c in lines[i].strip().strip('|').split('|')]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith('|'):
                rows.append([c.strip() for c in lines[i].strip().strip('|').split('|')])
                i += 1
            out.append((header, rows))
        else:
            i += 1
    return out


def key(header, row, index):
    if seconds(row[0]) is not None:
        return ('row %d' % index,)
    if len(header) > 1 and header[1].split(' ')[0] in ('n', 'series', 'length', 'measure'):
        return tuple(row[:2])
    return (row[0],)


def main():
    old, new = tables(sys.argv[1]), tables(sys.argv[2])
    tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 0.03
    worst, worst_where, slower = 0.0, '', 0
    for header, rows in old:
        twin = next((t for t in new if t[0] == header), None)
        if twin is None:
            continue
        new_rows = {key(header, r, k): r for k, r in enumerate(twin[1])}
        keys = 2 if len(header) > 1 and header[1].split(' ')[0] in ('n', 'series', 'length', 'measure') else 1
        timed = [c for c in range(len(header)) if any(seconds(r[c]) is not None for r in rows if c < len(r))]
        timed = [c for c in timed if c >= keys or seconds(rows[0][0]) is not None]
        if not timed:
            continue
        cols = header[:keys] + [f'{header[c]} ({w})' for c in timed for w in ('old', 'new', 'new/old')]
        print('| ' + ' | '.join(cols) + ' |')
        print('|' + ' --- |' * len(cols))
        for k, r in enumerate(rows):
            kk = key(header, r, k)
            nr = new_rows.get(kk)
            cells = list(kk) + [''] * (keys - len(kk))
            for c in timed:
                a = seconds(r[c]) if c < len(r) else None
                b = seconds(nr[c]) if nr and c < len(nr) else None
                ratio = b / a if a and b else None
                cells += [r[c] if c < len(r) else '-', nr[c] if nr and c < len(nr) else '-',
                          '-' if ratio is None else ('%.3f%s' % (ratio, ' !' if ratio > 1 + tolerance else ''))]
                if ratio is not None:
                    slower += ratio > 1 + tolerance
                    if ratio > worst:
                        worst, worst_where = ratio, f'{header[c]}, {" ".join(kk)}'
            print('| ' + ' | '.join(cells) + ' |')
        print()
    print(f'largest new/old: {worst:.3f} ({worst_where}); cells more than {100 * tolerance:.0f}% slower: {slower}')


if __name__ == '__main__':
    main()

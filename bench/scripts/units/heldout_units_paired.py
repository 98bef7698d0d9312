#!/usr/bin/env python3
"""Paired before/after table from two heldout_units.py stderr logs.

The splits are the same in both runs (random.Random(seed * 1000 + s)), so
per split the difference of accuracies removes the split's own variation
and leaves the two releases' noise: mean and standard error of the
difference over splits. Usage:
  heldout_units_paired.py BEFORE.log AFTER.log > table.md
"""
import re
import statistics as st
import sys

LINE = re.compile(r"(\w+) split (\d+) (\S+) k=(\d+) eps=([\d.]+): acc ([\d.]+) bal ([\d.]+) "
                  r"([\d.]+) s n=(\d+) (\S+)$")


def load(path):
    out = {}
    for line in open(path):
        m = LINE.match(line.strip())
        if m:
            out[(m[1], int(m[2]), m[3], int(m[4]), float(m[5]))] = (float(m[6]), m[10])
    return out


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    keys = sorted({k[2:] for k in after if k[2:] in {b[2:] for b in before}},
                  key=lambda k: (k[2], k[0] != "unit", k[1]))
    print("| ε | release | before: algorithm, accuracy | after: algorithm, accuracy | after − before (paired, ± se) | splits |")
    print("|---:|:---|:---|:---|---:|---:|")
    for level, k, eps in keys:
        splits = sorted(s for (d, s, lv, kk, e) in after if (lv, kk, e) == (level, k, eps)
                        and (d, s, lv, kk, e) in before)
        pairs = [(before[("panel", s, level, k, eps)], after[("panel", s, level, k, eps)])
                 for s in splits]
        if len(pairs) < 2:
            continue
        diff = [a[0] - b[0] for b, a in pairs]
        name = "row level" if level == "row" else f"unit, k = {k}"
        ab = "/".join(sorted({b[1] for b, _ in pairs}))
        aa = "/".join(sorted({a[1] for _, a in pairs}))
        print(f"| {eps:g} | {name} | {ab} {st.mean(b[0] for b, _ in pairs):.3f} | "
              f"{aa} {st.mean(a[0] for _, a in pairs):.3f} | {st.mean(diff):+.3f} ± "
              f"{st.stdev(diff) / len(diff) ** 0.5:.3f} | {len(diff)} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turn a gpuhist-bench --matrix JSON (bench/results/latest.json) into the Markdown tables of
docs/PERFORMANCE.md: the auto choice per cell and distribution beside CUB and the read ceiling,
then every strategy's GB/s per cell.   usage: matrix_to_md.py [latest.json]"""
import json
import sys
from collections import defaultdict

path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/latest.json"
d = json.load(open(path))
dists = ["uniform", "hot90", "constant", "bell"]
print(f"Device: **{d['device']}**, {d['date']}, input {d.get('bytes', 0) / 2**30:.0f} GiB "
      f"device-resident, median of >= {d.get('reps', 10)} runs (CUDA events). Read ceiling: "
      f"{d['ceiling_gbps']:.0f} GB/s.\n")
print("| cell | dist | auto strategy | GB/s | / ceiling | target | CUB GB/s | vs CUB | auto / best |")
print("|---|---|---|---|---|---|---|---|---|")
def num(x, fmt):
    """A figure, or '-' where the run has none (no CUB call for the type)."""
    return "-" if x is None or x == 0 else format(x, fmt)


for c in d["cells"]:
    met = "" if c.get("meets_target") else " (short)"
    print(f"| {c['name']} | {c['dist']} | {c['strategy']} | {c['gbps']:.0f} | "
          f"{c['ceiling_ratio']:.2f} | {c['target_ceiling_ratio']:.2f}{met} | "
          f"{num(c.get('cub_gbps'), '.0f')} | {num(c.get('vs_cub'), '.2f')} | "
          f"{c.get('auto_vs_best', 1):.2f} |")
table = defaultdict(dict)
for r in d.get("all", []):
    table[r["name"]][(r["strategy"], r["dist"])] = r["gbps"]
print("\nEvery strategy that accepts the cell, GB/s (uniform / hot90 / constant / bell):\n")
print("| cell | strategy | GB/s |")
print("|---|---|---|")
for cell, vals in table.items():
    strategies = sorted({s for s, _ in vals}, key=lambda s: -max(vals.get((s, x), 0) for x in dists))
    for s in strategies:
        figs = " / ".join(f"{vals[(s, x)]:.0f}" if (s, x) in vals else "-" for x in dists)
        print(f"| {cell} | {s} | {figs} |")

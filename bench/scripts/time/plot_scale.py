#!/usr/bin/python3
"""Plots of docs/scale.md from the logs bench/scripts/time/scale.sh prints.

Reads the markdown tables of the ladder cell (| table | n | d | mode |
workers | algorithm | seconds | x scan | scans | peak MiB |) and of the
Citus cell (| table | n | d | shards | seconds (bare scan) | release seconds
| x scan | ...) in the given logs, and draws three panels against n: a
release's seconds, seconds over a bare scan of the same table (of the
distributed table for Citus), the scans of the table a release makes (the
count of n and d, then one aggregate in memory or T passes streaming), and
the backend's peak memory (VmHWM).

Usage (python3-matplotlib):
  /usr/bin/python3 bench/scripts/time/plot_scale.py OUT.png LOG...
e.g. the figure in docs/scale.md, from the ladder and Citus cells' output:
  bash bench/scripts/time/scale.sh --cells ladder > ladder.log
  bash bench/scripts/time/scale.sh --cells citus "452000x42 4500000x42 10000000x50" > citus.log
  /usr/bin/python3 bench/scripts/time/plot_scale.py bench/reports/scale.png ladder.log citus.log
"""
import sys


def rows(path):
    """(header cells, row cells) of every markdown table row in a log: a
    header is a row followed by a |---| line; rows keep the last header
    (bench/scripts/time/scale.sh prints other lines between a table's rows)."""
    lines = [l.strip() for l in open(path)]
    header = None
    for i, line in enumerate(lines):
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = cells
        elif header is not None and len(cells) == len(header):
            yield header, cells


def series(paths):
    """{label: [(n, d, seconds, x scan, peak MiB or None, table scans)]}."""
    out = {}
    for path in paths:
        for header, cells in rows(path):
            r = dict(zip(header, cells))
            try:
                n, d = int(r["n"]), int(r["d"])
            except (KeyError, ValueError):
                continue
            if "mode" in r and r["mode"] in ("in_memory", "streaming"):
                label = f"{r['mode'].replace('_', ' ')}, {r['workers']} workers"
                peak = float(r["peak MiB"]) if r.get("peak MiB", "-") not in ("-", "") else None
                point = (n, d, float(r["seconds"]), float(r["x scan"]), peak, int(r["scans"]))
            elif "release seconds" in r:
                label = f"Citus, 2 workers, {r['shards']} shards"
                point = (n, d, float(r["release seconds"]), float(r["x scan"]), None,
                         int(r["passes"]) + 1)
            else:
                continue
            out.setdefault(label, []).append(point)
    for pts in out.values():
        pts.sort()
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = series(sys.argv[2:])
    fig, axes = plt.subplots(1, 4, figsize=(19, 4.6))
    panels = [(2, "seconds per release"), (3, "seconds / bare scan"),
              (5, "scans of the table per release"), (4, "backend peak MiB (VmHWM)")]
    colour = {label: f"C{i}" for i, label in enumerate(sorted(data))}  # the same in every panel
    for ax, (k, title) in zip(axes, panels):
        for label, pts in sorted(data.items()):
            xy = [(p[0], p[k]) for p in pts if p[k] is not None]
            if not xy:
                continue
            ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=label,
                    color=colour[label])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows n (d = 42; the last point 10M x 50)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].axhline(25, color="grey", linestyle="--", linewidth=1)
    axes[1].text(5e4, 27, "25 scans (target, 10M x 50)", color="grey", fontsize=8)
    axes[3].axhline(256, color="grey", linestyle="--", linewidth=1)
    axes[3].text(5e4, 290, "256 MiB (target, streaming)", color="grey", fontsize=8)
    axes[0].legend(fontsize=8)
    fig.suptitle("dperm.train, dp_options(epsilon => 1, l2 => 0.1), each mode's default algorithm")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""FSSS-Minimax's time per leaf expanded against alpha-beta's (issue 24).

For each height and seed of ``UniformTree(branching=2, height=h, seed=s)``
(integer leaves), times ``fsss(tree, restart_deepest=True)`` and
``alphabeta(tree)`` through the public functions, interleaved, after a
warm-up call of each (JIT compiled), and reports the medians of
``--repeats`` runs: seconds, leaves expanded, ns per leaf and the ratio of
FSSS's ns/leaf to alpha-beta's, measured in the same run. ``--general``
also times the general FSSS kernels (the path every search took before the
specialised kernel) and checks that both expand the same leaves, visit the
same nodes and return the same value and move.

    python bench/fsss_per_leaf.py                       # h 20, 22, 24; seeds 0-2
    python bench/fsss_per_leaf.py --general --out bench/results/fsss_per_leaf/after.json

Writes one JSON object (``--out``, default
bench/results/fsss_per_leaf/fsss_per_leaf.json). Only the public API is
needed without ``--general``, so the same script times older checkouts
(``PYTHONPATH=/path/to/old/checkout``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import jitsearch as js


def _timed(fn):
    """(wall seconds, this thread's CPU seconds, result)."""
    c0, t0 = time.thread_time(), time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, time.thread_time() - c0, r


def _general(tree, restart_deepest):
    from jitsearch.search import fsss_minimax as fm
    from jitsearch.trees.memory import DEFAULT_MAX_BYTES

    return fm._fsss(tree, restart_deepest, False, None, None, None, "pool", False, DEFAULT_MAX_BYTES,
                    fm.DEFAULT_DENSE_MAX_BYTES, None, False)


def measure(height: int, seed: int, repeats: int, restart_deepest: bool, general: bool) -> dict:
    tree = js.UniformTree(branching=2, height=height, seed=seed)
    runs = {
        "fsss": lambda: js.fsss(tree, restart_deepest=restart_deepest),
        "alphabeta": lambda: js.alphabeta(tree),
    }
    if general:
        runs["fsss_general"] = lambda: _general(tree, restart_deepest)
    results = {name: fn() for name, fn in runs.items()}  # warm-up (and JIT)
    times = {name: [] for name in runs}
    cpu = {name: [] for name in runs}
    for _ in range(repeats):
        for name, fn in runs.items():
            dt, dc, r = _timed(fn)
            times[name].append(dt)
            cpu[name].append(dc)
            assert r.leaves_expanded == results[name].leaves_expanded
    f, a = results["fsss"], results["alphabeta"]
    if f.value != a.value:
        raise SystemExit(f"h={height} seed={seed}: FSSS value {f.value} != alpha-beta {a.value}")
    row = {"height": height, "seed": seed, "value": f.value}
    for name, r in results.items():
        sec = statistics.median(times[name])
        row[name] = {
            "seconds": sec,
            "seconds_all": times[name],
            "min_seconds": min(times[name]),
            "cpu_seconds": statistics.median(cpu[name]),
            "leaves": r.leaves_expanded,
            "nodes": r.nodes_visited,
            "ns_per_leaf": sec / r.leaves_expanded * 1e9,
            "cpu_ns_per_leaf": statistics.median(cpu[name]) / r.leaves_expanded * 1e9,
            "min_ns_per_leaf": min(times[name]) / r.leaves_expanded * 1e9,
        }
    row["ratio"] = row["fsss"]["ns_per_leaf"] / row["alphabeta"]["ns_per_leaf"]
    row["ratio_cpu"] = row["fsss"]["cpu_ns_per_leaf"] / row["alphabeta"]["cpu_ns_per_leaf"]
    row["ratio_min"] = row["fsss"]["min_ns_per_leaf"] / row["alphabeta"]["min_ns_per_leaf"]
    if general:
        g = results["fsss_general"]
        same = (g.value, g.best_move, g.leaves_expanded, g.nodes_visited) == (
            f.value, f.best_move, f.leaves_expanded, f.nodes_visited)
        if not same:
            raise SystemExit(f"h={height} seed={seed}: general and specialised FSSS differ")
        row["ratio_general"] = row["fsss_general"]["ns_per_leaf"] / row["alphabeta"]["ns_per_leaf"]
        row["speedup"] = row["fsss_general"]["seconds"] / row["fsss"]["seconds"]
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--heights", default="20,22,24", help="comma-separated heights (default 20,22,24)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--repeats", type=int, default=7, help="timed runs per search, median reported (>= 5)")
    p.add_argument("--no-restart", action="store_true", help="plain FSSS instead of restart_deepest=True")
    p.add_argument("--general", action="store_true", help="also time the general FSSS kernels")
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "fsss_per_leaf" / "fsss_per_leaf.json")
    args = p.parse_args(argv)
    try:
        heights = [int(x) for x in args.heights.split(",")]
        seeds = [int(x) for x in args.seeds.split(",")]
    except ValueError:
        print("--heights and --seeds take comma-separated integers", file=sys.stderr)
        return 2
    if args.repeats < 5 or any(not 1 <= h <= 40 for h in heights) or any(s < 0 for s in seeds):
        print("need --repeats >= 5, heights in 1..40 and seeds >= 0", file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    rows = []
    head = f"{'h':>3} {'seed':>4} {'FSSS s':>9} {'leaves':>8} {'ns/leaf':>8} {'AB s':>9} {'leaves':>8} {'ns/leaf':>8} {'ratio':>6} {'cpu':>5}"
    if args.general:
        head += f" {'general ns/leaf':>15} {'ratio':>6} {'speedup':>7}"
    print(head)
    for h in heights:
        for s in seeds:
            r = measure(h, s, args.repeats, not args.no_restart, args.general)
            rows.append(r)
            f, a = r["fsss"], r["alphabeta"]
            line = (f"{h:>3} {s:>4} {f['seconds']:>9.5f} {f['leaves']:>8} {f['ns_per_leaf']:>8.1f} "
                    f"{a['seconds']:>9.5f} {a['leaves']:>8} {a['ns_per_leaf']:>8.1f} {r['ratio']:>6.2f} {r['ratio_cpu']:>5.2f}")
            if args.general:
                line += f" {r['fsss_general']['ns_per_leaf']:>15.1f} {r['ratio_general']:>6.2f} {r['speedup']:>7.2f}"
            print(line, flush=True)
    by_height = {}
    for h in heights:
        sel = [r for r in rows if r["height"] == h]
        by_height[h] = {"median_ratio": statistics.median(r["ratio"] for r in sel),
                        "median_ratio_cpu": statistics.median(r["ratio_cpu"] for r in sel),
                        "median_ratio_min": statistics.median(r["ratio_min"] for r in sel)}
        if args.general:
            by_height[h]["median_ratio_general"] = statistics.median(r["ratio_general"] for r in sel)
    for h, v in by_height.items():
        extra = f", general {v['median_ratio_general']:.2f}" if args.general else ""
        print(f"h={h}: median ratio FSSS/alpha-beta per leaf {v['median_ratio']:.2f} "
              f"(CPU time {v['median_ratio_cpu']:.2f}, fastest runs {v['median_ratio_min']:.2f}){extra}")
    out = {
        "benchmark": "fsss_per_leaf",
        "tree": "UniformTree(branching=2, height=h, seed=s), integer leaves",
        "fsss": {"restart_deepest": not args.no_restart},
        "repeats": args.repeats,
        "statistic": "median wall seconds of the timed runs (after one warm-up call each), runs interleaved; "
                     "cpu_*: the same with this thread's CPU time (less sensitive to a loaded machine); "
                     "min_*: the fastest run; by_height: medians over seeds of the per-tree ratios",
        "rows": rows,
        "by_height": by_height,
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                    "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "python": sys.version.split()[0],
        "jitsearch": getattr(js, "__version__", None),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    png = _plot(rows, heights, args.general, args.out.with_suffix(".png"))
    if png:
        print(f"wrote {png}")
    return 0


def _plot(rows, heights, general, path):
    """CPU ns per leaf by height (medians over seeds), bars per search; None without matplotlib."""
    from jitsearch.benchmarks._plot import pyplot

    plt = pyplot()
    if plt is None:
        return None
    names = ["alphabeta", "fsss"] + (["fsss_general"] if general else [])
    labels = {"alphabeta": "alpha-beta", "fsss": "FSSS + restart", "fsss_general": "FSSS + restart, general kernel"}
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        ys = [statistics.median(r[name]["cpu_ns_per_leaf"] for r in rows if r["height"] == h) for h in heights]
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(heights))]
        ax.bar(xs, ys, width, label=labels[name])
    ax.set_xticks(range(len(heights)), [f"h = {h}" for h in heights])
    ax.set_ylabel("CPU ns per leaf expanded")
    ax.set_title("Uniform binary trees, integer leaves (median over seeds)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())

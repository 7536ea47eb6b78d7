"""Reproduce section 4 of Weinstein, Littman & Goschin, plus cost.

Experiment 1: binary trees, integer leaves uniform in [-2**31, 2**31]; mean
leaves expanded by alpha-beta, FSSS and MTD(+inf) per height with 95%
intervals, least-squares fits a*c**h (linear regression of log(mean) on h),
and how often FSSS beats MTD(+inf) and vice versa. Figure 4.1(a).

Experiment 2: binary trees with 0/1 leaves; the fraction of trees on which
FSSS (and MTD(+inf)) expand strictly fewer leaves than alpha-beta, odd and
even heights plotted separately. Figure 4.1(b).

Cost: wall time per solve and per expanded leaf and peak memory of
alpha-beta, FSSS with and without refinement (a), and MTD(+inf) on the same
trees; then a leaf-evaluation cost (``UniformTree(leaf_cost=k)``: k extra
hash rounds per leaf read) swept to find where FSSS's fewer expansions beat
alpha-beta's lower overhead in wall time.

Every tree's counts are appended to CSV files as they finish, so an
interrupted run continues with ``resume=True``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from ._plot import finish, pyplot
from ._rows import grouped, run_rows

PAPER_FITS = {"alphabeta": (1.74, 1.68), "fsss": (1.46, 1.65)}
EXP1_FIELDS = ["height", "seed", "value", "alphabeta", "fsss", "mtd_inf"]
ALGOS = ("alphabeta", "fsss", "mtd_inf")


def _seed(experiment: int, height: int, index: int) -> int:
    return experiment * 10**9 + height * 10**6 + index


def _count_tree(args):
    """Leaves expanded by the three solvers on one tree (runs in a worker)."""
    from ..search import alphabeta, fsss, mtd_inf
    from ..trees import UniformTree

    experiment, height, index = args
    values = "int" if experiment == 1 else "binary"
    tree = UniformTree(2, height, seed=_seed(experiment, height, index), values=values)
    ab = alphabeta(tree)
    fs = fsss(tree, restart_deepest=True)  # refinement (a): same leaves, faster
    md = mtd_inf(tree)
    if not (ab.value == fs.value == md.value):
        raise RuntimeError(f"solvers disagree on tree {args}: {ab.value} {fs.value} {md.value}")
    return {
        "height": height,
        "seed": tree.seed,
        "value": ab.value,
        "alphabeta": ab.leaves_expanded,
        "fsss": fs.leaves_expanded,
        "mtd_inf": md.leaves_expanded,
    }


def _run_counts(experiment, heights, trees, path: Path, resume, workers, progress, scheduler=None):
    """Fill ``path`` (CSV) with one row per (height, tree); returns all rows."""
    tasks = [(experiment, h, i) for h in heights for i in range(trees)]
    tasks.sort(key=lambda a: -a[1])  # the largest trees first so the workers finish together

    def key(item):
        if isinstance(item, dict):
            return (item["height"], item["seed"])
        return (item[1], _seed(*item))

    return run_rows(_count_tree, tasks, path, EXP1_FIELDS, key, resume=resume, workers=workers, scheduler=scheduler,
                    progress=progress, label=f"experiment {experiment}",
                    numeric=lambda k, v: float(v) if k == "value" else int(v))


def _fit(heights, means):
    """Least-squares fit of log(mean) = log(a) + h*log(c); returns (a, c)."""
    h = np.asarray(heights, dtype=float)
    y = np.log(np.asarray(means, dtype=float))
    slope, intercept = np.polyfit(h, y, 1)
    return float(math.exp(intercept)), float(math.exp(slope))


def summarize_experiment1(rows) -> dict:
    table = []
    for h, rs in grouped(rows, "height"):
        entry = {"height": h, "trees": len(rs)}
        for a in ALGOS:
            x = np.array([r[a] for r in rs], dtype=float)
            entry[f"{a}_mean"] = float(x.mean())
            entry[f"{a}_ci95"] = float(1.96 * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0
        f = np.array([r["fsss"] for r in rs])
        m = np.array([r["mtd_inf"] for r in rs])
        ab = np.array([r["alphabeta"] for r in rs])
        entry["fsss_beats_mtd"] = float(np.mean(f < m))
        entry["mtd_beats_fsss"] = float(np.mean(m < f))
        entry["fsss_above_alphabeta"] = int(np.sum(f > ab))
        entry["mtd_above_alphabeta"] = int(np.sum(m > ab))
        table.append(entry)
    fits = {}
    hs = [e["height"] for e in table]
    if len(hs) >= 2:
        for a in ALGOS:
            fits[a] = _fit(hs, [e[f"{a}_mean"] for e in table])
    all_f = np.array([r["fsss"] for r in rows])
    all_m = np.array([r["mtd_inf"] for r in rows])
    return {
        "by_height": table,
        "fits": {a: {"a": v[0], "c": v[1]} for a, v in fits.items()},
        "paper_fits": {a: {"a": v[0], "c": v[1]} for a, v in PAPER_FITS.items()},
        "fsss_beats_mtd_overall": float(np.mean(all_f < all_m)) if len(rows) else None,
        "mtd_beats_fsss_overall": float(np.mean(all_m < all_f)) if len(rows) else None,
        "trees": len(rows),
    }


def summarize_experiment2(rows) -> dict:
    table = []
    for h, rs in grouped(rows, "height"):
        ab = np.array([r["alphabeta"] for r in rs])
        f = np.array([r["fsss"] for r in rs])
        m = np.array([r["mtd_inf"] for r in rs])
        table.append({
            "height": h,
            "trees": len(rs),
            "parity": "even" if h % 2 == 0 else "odd",
            "fsss_fewer_than_alphabeta": float(np.mean(f < ab)),
            "mtd_fewer_than_alphabeta": float(np.mean(m < ab)),
            "fsss_fewer_than_mtd": float(np.mean(f < m)),
            "fsss_above_alphabeta": int(np.sum(f > ab)),
            "mtd_above_alphabeta": int(np.sum(m > ab)),
        })
    return {"by_height": table, "trees": len(rows)}


def _time_solver(fn, tree, repeats):
    best = []
    r = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = fn(tree)
        best.append(time.perf_counter() - t0)
    return statistics.median(best), r


def run_cost(heights=(16, 20, 22), trees=5, repeats=3, sweep_height=20, sweep_trees=3,
             costs=(0, 4, 16, 64, 256, 1024, 4096), progress=None) -> dict:
    """Wall time, time per expanded leaf and peak memory; leaf-cost sweep."""
    from ..search import alphabeta, fsss, mtd_inf
    from ..trees import UniformTree

    solvers = {
        "alphabeta": lambda t: alphabeta(t),
        "fsss": lambda t: fsss(t),
        "fsss_restart": lambda t: fsss(t, restart_deepest=True),
        "mtd_inf": lambda t: mtd_inf(t),
    }
    warm = UniformTree(2, 6, seed=1)
    for fn in solvers.values():
        fn(warm)
    table = []
    for h in heights:
        if progress:
            progress(f"cost: height {h}", 0, 0)
        per = {name: {"seconds": [], "leaves": [], "peak": []} for name in solvers}
        for i in range(trees):
            tree = UniformTree(2, h, seed=_seed(3, h, i))
            for name, fn in solvers.items():
                sec, r = _time_solver(fn, tree, repeats)
                per[name]["seconds"].append(sec)
                per[name]["leaves"].append(r.leaves_expanded)
                peak = r.extra.get("peak_bytes", 7 * 8 * (h + 1))  # alpha-beta: its stack
                per[name]["peak"].append(peak)
        ab_sec = statistics.median(per["alphabeta"]["seconds"])
        ab_per_leaf = sum(per["alphabeta"]["seconds"]) / sum(per["alphabeta"]["leaves"])
        for name, d in per.items():
            sec = statistics.median(d["seconds"])
            per_leaf = sum(d["seconds"]) / sum(d["leaves"])
            table.append({
                "height": h,
                "algorithm": name,
                "trees": trees,
                "median_seconds": sec,
                "mean_leaves": float(np.mean(d["leaves"])),
                "seconds_per_leaf": per_leaf,
                "peak_bytes": int(max(d["peak"])),
                "time_ratio_vs_alphabeta": sec / ab_sec,
                "per_leaf_ratio_vs_alphabeta": per_leaf / ab_per_leaf,
            })
    sweep = []
    for k in costs:
        if progress:
            progress(f"cost sweep: leaf_cost {k}", 0, 0)
        row = {"leaf_cost": k}
        for name in ("alphabeta", "fsss_restart", "mtd_inf"):
            secs = []
            for i in range(sweep_trees):
                tree = UniformTree(2, sweep_height, seed=_seed(3, sweep_height, i), leaf_cost=k)
                secs.append(_time_solver(solvers[name], tree, repeats)[0])
            row[name] = float(np.mean(secs))
        sweep.append(row)
    return {"by_height": table, "sweep_height": sweep_height, "sweep": sweep,
            "crossover": {name: _crossover(sweep, name) for name in ("fsss_restart", "mtd_inf")}}


def _crossover(sweep, name):
    """Leaf cost (log-interpolated) where ``name`` becomes faster than alpha-beta."""
    prev = None
    for row in sweep:
        diff = row[name] - row["alphabeta"]
        if diff <= 0:
            if prev is None:
                return float(row["leaf_cost"])
            k0, d0 = prev
            k1, d1 = row["leaf_cost"], diff
            if k0 <= 0:
                return float(k1 * d0 / (d0 - d1)) if d0 != d1 else float(k1)
            # interpolate on log(cost)
            frac = d0 / (d0 - d1)
            return float(math.exp(math.log(k0) + frac * (math.log(k1) - math.log(k0))))
        prev = (row["leaf_cost"], diff)
    return None


def _plots(out: Path, exp1: dict, exp2: dict, cost: dict | None) -> list[str]:
    plt = pyplot()
    if plt is None:
        return []
    written = []
    t = exp1["by_height"]
    if t:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        leaves = [2 ** e["height"] for e in t]
        styles = {"alphabeta": ("alpha-beta", "o-"), "fsss": ("FSSS", "s-"), "mtd_inf": ("MTD(+inf)", "^--")}
        for a, (label, style) in styles.items():
            ax.errorbar(leaves, [e[f"{a}_mean"] for e in t], yerr=[e[f"{a}_ci95"] for e in t],
                        fmt=style, ms=4, capsize=2, label=label)
        hs = np.array([e["height"] for e in t], dtype=float)
        for a, (pa, pc) in PAPER_FITS.items():
            ax.plot(2**hs, pa * pc**hs, ":", lw=1, label=f"paper fit {styles[a][0]}: {pa}*{pc}^h")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        written.append(finish(plt, fig, ax, out / "figure_4_1a.png", "leaves in the tree (2^h)",
                              "leaves expanded (mean, 95% CI)", "Figure 4.1(a): integer leaves in [-2^31, 2^31]",
                              fontsize=7))
    t = exp2["by_height"]
    if t:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for parity, marker in (("even", "o"), ("odd", "s")):
            rs = [e for e in t if e["parity"] == parity]
            hs = [e["height"] for e in rs]
            ax.plot(hs, [e["fsss_fewer_than_alphabeta"] for e in rs], marker + "-", label=f"FSSS, {parity} h")
            ax.plot(hs, [e["mtd_fewer_than_alphabeta"] for e in rs], marker + "--", label=f"MTD(+inf), {parity} h")
        ax.set_ylim(0, 1.02)
        written.append(finish(plt, fig, ax, out / "figure_4_1b.png", "height h",
                              "fraction of trees with fewer leaves than alpha-beta", "Figure 4.1(b): 0/1 leaves",
                              fontsize=8))
    if cost and cost["sweep"]:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        ks = [max(r["leaf_cost"], 1) for r in cost["sweep"]]
        for name, label in (("alphabeta", "alpha-beta"), ("fsss_restart", "FSSS + restart (a)"),
                            ("mtd_inf", "MTD(+inf)")):
            ax.plot(ks, [r[name] for r in cost["sweep"]], "o-", label=label)
        c = cost["crossover"].get("fsss_restart")
        if c:
            ax.axvline(max(c, 1), color="gray", ls=":", label=f"FSSS crossover ~{c:.0f} rounds")
        ax.set_xscale("log")
        ax.set_yscale("log")
        written.append(finish(plt, fig, ax, out / "cost_crossover.png",
                              "leaf evaluation cost (extra hash rounds; 0 plotted at 1)",
                              f"seconds per solve (h={cost['sweep_height']})",
                              "When do fewer expansions pay for FSSS's overhead?", fontsize=8))
    return written


def _markdown(result: dict) -> str:
    e1, e2, cost = result["experiment1"], result["experiment2"], result.get("cost")
    lines = ["# FSSS paper (Weinstein, Littman & Goschin), section 4, reproduced", ""]
    lines.append(f"Machine: {result['machine']}. Command: `{result['command']}`.")
    lines += ["", "## Experiment 1: integer leaves", "",
              "| h | trees | alpha-beta | FSSS | MTD(+inf) | FSSS < MTD | MTD < FSSS |",
              "|---|---|---|---|---|---|---|"]
    for e in e1["by_height"]:
        lines.append(
            f"| {e['height']} | {e['trees']} | {e['alphabeta_mean']:.1f} ± {e['alphabeta_ci95']:.1f} | "
            f"{e['fsss_mean']:.1f} ± {e['fsss_ci95']:.1f} | {e['mtd_inf_mean']:.1f} ± {e['mtd_inf_ci95']:.1f} | "
            f"{e['fsss_beats_mtd']:.2f} | {e['mtd_beats_fsss']:.2f} |"
        )
    lines += ["", "Least-squares fits a·c^h of the mean leaves expanded (log-linear):", "",
              "| algorithm | ours | paper |", "|---|---|---|"]
    for a, label in (("alphabeta", "alpha-beta"), ("fsss", "FSSS"), ("mtd_inf", "MTD(+inf)")):
        ours = e1["fits"].get(a)
        paper = e1["paper_fits"].get(a)
        fit_text = f"{ours['a']:.2f}·{ours['c']:.3f}^h" if ours else "(a fit needs two heights or more)"
        lines.append(f"| {label} | {fit_text} | " + (f"{paper['a']}·{paper['c']}^h |" if paper else "(not given) |"))
    lines += ["", f"Over all {e1['trees']} trees FSSS expanded strictly fewer leaves than MTD(+inf) on "
              f"{e1['fsss_beats_mtd_overall']:.1%} of them and MTD(+inf) fewer than FSSS on "
              f"{e1['mtd_beats_fsss_overall']:.1%}.", ""]
    lines += ["## Experiment 2: 0/1 leaves", "",
              "| h | parity | trees | FSSS < alpha-beta | MTD(+inf) < alpha-beta | FSSS < MTD |",
              "|---|---|---|---|---|---|"]
    for e in e2["by_height"]:
        lines.append(f"| {e['height']} | {e['parity']} | {e['trees']} | {e['fsss_fewer_than_alphabeta']:.3f} | "
                     f"{e['mtd_fewer_than_alphabeta']:.3f} | {e['fsss_fewer_than_mtd']:.3f} |")
    above = sum(e["fsss_above_alphabeta"] + e["mtd_above_alphabeta"] for e in e1["by_height"] + e2["by_height"])
    lines += ["", f"Trees on which FSSS or MTD(+inf) expanded more leaves than alpha-beta: {above}.", ""]
    if cost:
        lines += ["## Cost", "", "| h | algorithm | median s/solve | mean leaves | s per leaf | per-leaf ratio vs "
                  "alpha-beta | solve-time ratio | peak bytes |", "|---|---|---|---|---|---|---|---|"]
        for r in cost["by_height"]:
            lines.append(
                f"| {r['height']} | {r['algorithm']} | {r['median_seconds']:.4g} | {r['mean_leaves']:.0f} | "
                f"{r['seconds_per_leaf'] * 1e9:.0f} ns | {r['per_leaf_ratio_vs_alphabeta']:.1f}x | "
                f"{r['time_ratio_vs_alphabeta']:.1f}x | {r['peak_bytes']} |"
            )
        lines += ["", f"Leaf-cost sweep (h = {cost['sweep_height']}, mean seconds per solve):", "",
                  "| leaf cost (hash rounds) | alpha-beta | FSSS + restart | MTD(+inf) |", "|---|---|---|---|"]
        for r in cost["sweep"]:
            lines.append(f"| {r['leaf_cost']} | {r['alphabeta']:.4g} | {r['fsss_restart']:.4g} | {r['mtd_inf']:.4g} |")
        c = cost["crossover"]
        lines += ["", "Crossover (leaf cost above which the solver beats alpha-beta in wall time): "
                  f"FSSS + restart {c['fsss_restart'] if c['fsss_restart'] is None else round(c['fsss_restart'])}, "
                  f"MTD(+inf) {c['mtd_inf'] if c['mtd_inf'] is None else round(c['mtd_inf'])} hash rounds.", ""]
    return "\n".join(lines) + "\n"


def run_fsss_paper(
    out_dir,
    heights=tuple(range(4, 25)),
    trees: int = 500,
    exp2_heights=tuple(range(4, 21)),
    exp2_trees: int = 500,
    cost: bool = True,
    cost_heights=(16, 20, 22),
    resume: bool = False,
    workers: int | None = None,
    progress=None,
    command: str = "jitsearch bench fsss-paper",
    scheduler: str | None = None,
) -> dict:
    """Run everything, write CSV/JSON/markdown/PNG into ``out_dir``; return the summary."""
    out = Path(out_dir)
    if not resume:  # checked first, not after minutes of recomputation
        from ._rows import refuse_existing

        refuse_existing([out / "experiment1_trees.csv", out / "experiment2_trees.csv"])
    out.mkdir(parents=True, exist_ok=True)
    if trees < 1 or exp2_trees < 1:
        raise ValueError("trees per height must be >= 1")
    if min(heights) < 1 or max(heights) > 30 or min(exp2_heights) < 1 or max(exp2_heights) > 30:
        raise ValueError("heights must lie in 1..30")
    workers = workers or max(1, (os.cpu_count() or 1))
    rows1 = _run_counts(1, list(heights), trees, out / "experiment1_trees.csv", resume, workers, progress,
                        scheduler)
    rows2 = _run_counts(2, list(exp2_heights), exp2_trees, out / "experiment2_trees.csv", resume, workers, progress,
                        scheduler)
    result = {
        "benchmark": "fsss-paper",
        "command": command,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"Python {platform.python_version()}",
        "experiment1": summarize_experiment1(rows1),
        "experiment2": summarize_experiment2(rows2),
    }
    if cost:
        result["cost"] = run_cost(heights=cost_heights, progress=progress)
    result["plots"] = _plots(out, result["experiment1"], result["experiment2"], result.get("cost"))
    (out / "summary.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "summary.md").write_text(_markdown(result))
    return result

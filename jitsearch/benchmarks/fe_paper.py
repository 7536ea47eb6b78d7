"""Reproduce the experiments of Zhang, "Forward Estimation for Game-Tree Search".

Figure 1: node generations against depth for forward estimation (exact
edge-cost bounds, delta = 1), alpha-beta and the perfect-ordering lower
bound LB on uniform incremental trees (b = 2, 5, 10), with the paper's claim
about one million generations at b = 10 checked.

Figure 2: decision quality (how often a depth-k search picks the same first
move as full-depth minimax) against node generations on depth-10 trees with
random branching of mean 5, for alpha-beta and FE with delta = 1.0 ... 0.2
(on-line bounds, conditions (3)); also FE with exact bounds, for section 3's
claim that learned and exact bounds decide alike.

Figure 3(a): FE (delta 1.0 and 0.5) against alpha-beta in random-tree games
under the depth-increment protocol, 100 pairs per tournament, mean
branching 5; FE's win rate against alpha-beta's horizon (MORE / LESS).

Per-tree rows go to CSV as they finish (``resume=True`` continues), game
records to JSONL; ``summary.json``, ``summary.md`` and PNGs at the end.
"""

from __future__ import annotations

import json
import math
import os
import platform
from pathlib import Path

import numpy as np

from ._plot import finish, pyplot
from ._rows import run_rows

FIG1_FIELDS = ["branching", "depth", "seed", "alphabeta", "fe", "fe_online", "lb", "value"]
FIG2_ALGOS = ["alphabeta", "fe_exact", "fe_1.0", "fe_0.8", "fe_0.6", "fe_0.4", "fe_0.2"]


def _seed(tag: int, *parts: int) -> int:
    s = tag
    for p in parts:
        s = s * 1_000_003 + p
    return s % 2**63


def fig1_tree(task):
    from ..search import forward_estimation, incremental_alphabeta, perfect_ordering_generations
    from ..trees import IncrementalTree

    b, d, i = task
    tree = IncrementalTree(b, d, seed=_seed(1, b, d, i))
    ab = incremental_alphabeta(tree) if task_runs_alphabeta(b, d) else None
    fe = forward_estimation(tree)
    fo = forward_estimation(tree, bounds="online")
    if ab is not None and ab.value != fe.value:
        raise RuntimeError(f"FE with exact bounds disagrees with alpha-beta on {task}")
    return {
        "branching": b, "depth": d, "seed": tree.seed,
        "alphabeta": -1 if ab is None else ab.extra["node_generations"],
        "fe": fe.extra["node_generations"], "fe_online": fo.extra["node_generations"],
        "lb": perfect_ordering_generations(tree), "value": fe.value,
    }


def task_runs_alphabeta(b: int, d: int) -> bool:
    """Alpha-beta is skipped only where it is known to be hopeless (b = 10, d > 11)."""
    return not (b >= 10 and d > 11)


def fig2_tree(task):
    from ..search import forward_estimation, incremental_alphabeta
    from ..trees import IncrementalTree

    i, = task
    tree = IncrementalTree(5, 10, seed=_seed(2, i), random_branching=True)
    full = incremental_alphabeta(tree)
    rows = []
    for k in range(1, tree.depth + 1):
        row = {"seed": tree.seed, "search_depth": k, "full_move": full.best_move}
        runs = {
            "alphabeta": incremental_alphabeta(tree, depth=k),
            "fe_exact": forward_estimation(tree, depth=k, bounds="exact"),
        }
        for delta in (1.0, 0.8, 0.6, 0.4, 0.2):
            runs[f"fe_{delta}"] = forward_estimation(tree, depth=k, bounds="online", delta=delta)
        for name, r in runs.items():
            row[f"{name}_gens"] = r.extra["node_generations"]
            row[f"{name}_move"] = r.best_move
        rows.append(row)
    return rows


def summarize_fig1(rows) -> dict:
    table = []
    keys = sorted({(r["branching"], r["depth"]) for r in rows})
    for b, d in keys:
        rs = [r for r in rows if r["branching"] == b and r["depth"] == d]
        entry = {"branching": b, "depth": d, "trees": len(rs)}
        for name in ("alphabeta", "fe", "fe_online", "lb"):
            x = np.array([r[name] for r in rs], dtype=float)
            if np.any(x < 0):
                entry[name] = None
                continue
            entry[name] = float(x.mean())
            entry[f"{name}_ci95"] = float(1.96 * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0
        entry["fe_more_than_alphabeta"] = int(sum(1 for r in rs if r["alphabeta"] >= 0 and r["fe"] > r["alphabeta"]))
        table.append(entry)
    ebf = {}
    for b in sorted({k[0] for k in keys}):
        rs = [e for e in table if e["branching"] == b]
        for name in ("alphabeta", "fe", "fe_online", "lb"):
            pts = [(e["depth"], e[name]) for e in rs if e.get(name)]
            if len(pts) >= 3:
                hs, ys = zip(*pts[len(pts) // 2:])  # the deeper half: the asymptotic slope
                slope = np.polyfit(hs, np.log(ys), 1)[0]
                ebf.setdefault(str(b), {})[name] = float(math.exp(slope))
    return {"by_depth": table, "effective_branching_factor": ebf}


def summarize_fig2(rows) -> dict:
    table = []
    for k in sorted({r["search_depth"] for r in rows}):
        rs = [r for r in rows if r["search_depth"] == k]
        entry = {"search_depth": k, "trees": len(rs)}
        for a in FIG2_ALGOS:
            entry[f"{a}_gens"] = float(np.mean([r[f"{a}_gens"] for r in rs]))
            entry[f"{a}_quality"] = float(np.mean([r[f"{a}_move"] == r["full_move"] for r in rs]))
        table.append(entry)
    exact_vs_online = [r for r in rows if r["fe_exact_move"] != r["fe_1.0_move"]]
    return {"by_depth": table, "exact_vs_online_move_differs": len(exact_vs_online) / max(len(rows), 1)}


def run_fig3(out: Path, pairs: int, max_horizon: int, tree_depth: int, resume: bool, progress) -> dict:
    from ..arena.random_tree_tournament import GameConfig, PlayerSpec, depth_increment_protocol, more_less_points

    config = GameConfig(branching=5, random_branching=True, depth=tree_depth, seed=3)
    result = {"pairs": pairs, "tree_depth": tree_depth, "max_horizon": max_horizon}
    for delta in (1.0, 0.5):
        label = f"fe_{delta}"

        def prog(r, done, total, label=label):
            if progress:
                progress(f"figure 3(a) {label}: tournament {r + 1}", done, total)

        rounds = depth_increment_protocol(
            PlayerSpec("fe", 1, delta, "online"), PlayerSpec("alphabeta"), config, pairs,
            max_horizon=max_horizon, out=out / f"fig3_{label}_games.jsonl", resume=resume, progress=prog,
        )
        if rounds and rounds[-1].get("interrupted"):  # the games are on disk: --resume continues
            raise KeyboardInterrupt
        result[label] = {"rounds": rounds, "points": more_less_points(rounds)}
    return result


def _plots(out: Path, fig1: dict, fig2: dict, fig3: dict | None) -> list[str]:
    plt = pyplot()
    if plt is None:
        return []
    written = []
    bs = sorted({e["branching"] for e in fig1["by_depth"]})
    if bs:
        fig, axes = plt.subplots(1, len(bs), figsize=(4.2 * len(bs), 4), squeeze=False)
        for ax, b in zip(axes[0], bs):
            rs = [e for e in fig1["by_depth"] if e["branching"] == b]
            for name, label, style in (("alphabeta", "AB", "o-"), ("fe", "FE (exact)", "s-"),
                                       ("fe_online", "FE (on-line)", "^--"), ("lb", "LB", "k:")):
                pts = [(e["depth"], e[name]) for e in rs if e.get(name)]
                if pts:
                    ax.plot(*zip(*pts), style, ms=3, label=label)
            ax.axhline(1e6, color="gray", lw=0.8, ls="--")
            ax.set_yscale("log")
            ax.set_title(f"b = {b}")
            ax.set_xlabel("tree depth")
            ax.set_ylabel("node generations (mean)")
            ax.legend(fontsize=7)
        fig.suptitle("Figure 1: forward estimation vs alpha-beta on uniform random trees")
        fig.tight_layout()
        fig.savefig(out / "figure_1.png", dpi=110)
        plt.close(fig)
        written.append("figure_1.png")
    if fig2["by_depth"]:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for a, label in (("alphabeta", "AB"), ("fe_1.0", "FE-1.0"), ("fe_0.8", "FE-0.8"), ("fe_0.6", "FE-0.6"),
                         ("fe_0.4", "FE-0.4"), ("fe_0.2", "FE-0.2")):
            ax.plot([e[f"{a}_gens"] for e in fig2["by_depth"]], [100 * e[f"{a}_quality"] for e in fig2["by_depth"]],
                    "o-", ms=3, label=label)
        ax.set_xscale("log")
        written.append(finish(plt, fig, ax, out / "figure_2.png", "node generations (mean)",
                              "same first move as full-depth minimax (%)",
                              "Figure 2: depth 10, random branching mean 5", fontsize=8, dpi=110))
    if fig3:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for label, key, which, style in (("FE-1.0 (MORE)", "fe_1.0", "more", "o-"),
                                         ("FE-0.5 (MORE)", "fe_0.5", "more", "s--"),
                                         ("FE-0.5 (LESS)", "fe_0.5", "less", "^-")):
            pts = [(p["horizon_b"], 100 * p[which]["a_win_rate"]) for p in fig3[key]["points"] if p[which]]
            if pts:
                ax.plot(*zip(*pts), style, label=label)
        ax.axhline(50, color="gray", lw=0.8, ls=":")
        written.append(finish(plt, fig, ax, out / "figure_3a.png", "alpha-beta lookahead depth",
                              "FE win rate over alpha-beta (% of pairs)",
                              "Figure 3(a): random trees, mean branching 5", fontsize=8, dpi=110))
    return written


def _claims(fig1: dict, fig2: dict, fig3: dict | None) -> list[tuple[str, str, str]]:
    claims = []
    ebf = fig1["effective_branching_factor"]
    for b, e in sorted(ebf.items(), key=lambda kv: int(kv[0])):
        if {"alphabeta", "fe", "lb"} <= set(e):
            claims.append((
                f"Fig. 1, b={b}: FE reduces alpha-beta's effective branching factor, below even LB's",
                f"EBF (deeper half of depths): AB {e['alphabeta']:.3f}, FE exact {e['fe']:.3f}, "
                f"FE on-line {e.get('fe_online', float('nan')):.3f}, LB {e['lb']:.3f}",
                "agrees" if e["fe"] < e["lb"] else ("partly: FE < AB but not < LB" if e["fe"] < e["alphabeta"]
                                                    else "disagrees"),
            ))
    rows10 = {e["depth"]: e for e in fig1["by_depth"] if e["branching"] == 10}
    if 10 in rows10 and 11 in rows10:
        ab10 = rows10[10]["alphabeta"]
        fe11 = rows10[11]["fe"]
        claims.append((
            "b=10: with 10^6 generations AB cannot reach depth 10, FE reaches depth 11",
            f"AB at depth 10: {ab10:,.0f}; FE at depth 11: {fe11:,.0f} (exact bounds), "
            f"{rows10[11]['fe_online']:,.0f} (on-line)",
            "agrees" if ab10 and ab10 > 1e6 and fe11 < 1e6 else "disagrees",
        ))
    full = [e for e in fig2["by_depth"] if e["search_depth"] == max(x["search_depth"] for x in fig2["by_depth"])]
    if full:
        f = full[0]
        claims.append((
            "Fig. 2: FE-1.0 generates fewer nodes than AB and decides optimally at full depth",
            f"full depth: AB {f['alphabeta_gens']:,.0f} gens, FE-1.0 {f['fe_1.0_gens']:,.0f}; "
            f"FE-1.0 quality {100 * f['fe_1.0_quality']:.1f}%",
            "agrees" if f["fe_1.0_gens"] < f["alphabeta_gens"] and f["fe_1.0_quality"] >= 0.99 else "disagrees",
        ))
        claims.append((
            "Fig. 2: delta < 1 may not decide optimally; delta = 0.2 loses too much quality",
            "full-depth quality: " + ", ".join(f"FE-{d} {100 * f[f'fe_{d}_quality']:.1f}%"
                                                for d in ("0.8", "0.6", "0.4", "0.2")),
            "agrees" if f["fe_0.2_quality"] < f["fe_0.6_quality"] <= 1.0 else "see table",
        ))
    claims.append((
        "Section 3: exact and learned (on-line) bounds decide alike most of the time",
        f"first moves differ in {100 * fig2['exact_vs_online_move_differs']:.2f}% of (tree, depth) searches",
        "agrees" if fig2["exact_vs_online_move_differs"] < 0.05 else "disagrees",
    ))
    if fig3:
        pts1 = [p for p in fig3["fe_1.0"]["points"] if p["more"]]
        pts5 = [p for p in fig3["fe_0.5"]["points"] if p["more"] and p["horizon_b"] > 3]
        claims.append((
            "Fig. 3(a): FE-1.0 gets only one level deeper than AB, with more nodes",
            "; ".join(f"AB {p['horizon_b']}: FE {p['more']['horizon_a']} "
                      f"({p['more']['nodes_a'] / max(p['more']['nodes_b'], 1):.1f}x nodes)" for p in pts1),
            "agrees" if pts1 and all(p["more"]["horizon_a"] == p["horizon_b"] + 1 for p in pts1) else "see table",
        ))
        claims.append((
            "Fig. 3(a): FE-0.5 beats AB at AB horizons > 3 (searching deeper)",
            "; ".join(f"AB {p['horizon_b']}: MORE {100 * p['more']['a_win_rate']:.0f}% wins"
                      + (f", LESS {100 * p['less']['a_win_rate']:.0f}%" if p["less"] else "") for p in pts5) or "n/a",
            "agrees" if pts5 and all(p["more"]["a_win_rate"] > 0.5 for p in pts5) else "see table",
        ))
    return claims


def _markdown(result: dict) -> str:
    f1, f2, f3 = result["figure1"], result["figure2"], result.get("figure3a")
    lines = ["# Forward estimation (Zhang), reproduced", "",
             f"Machine: {result['machine']}. Command: `{result['command']}`.", "",
             "## The paper's claims next to ours", "", "| claim | measured | verdict |", "|---|---|---|"]
    for claim, measured, verdict in result["claims"]:
        lines.append(f"| {claim} | {measured} | {verdict} |")
    lines += ["", "## Figure 1: mean node generations (uniform trees, exact bounds for FE)", "",
              "| b | depth | trees | AB | FE exact | FE on-line | LB | FE > AB on |", "|---|---|---|---|---|---|---|---|"]
    for e in f1["by_depth"]:
        fmt = lambda x: "-" if x is None else f"{x:,.0f}"  # noqa: E731
        lines.append(f"| {e['branching']} | {e['depth']} | {e['trees']} | {fmt(e['alphabeta'])} | {fmt(e['fe'])} | "
                     f"{fmt(e['fe_online'])} | {fmt(e['lb'])} | {e['fe_more_than_alphabeta']} |")
    lines += ["", "## Figure 2: decision quality (depth 10, random branching mean 5)", "",
              "| k | " + " | ".join(f"{a} gens / %" for a in FIG2_ALGOS) + " |",
              "|---|" + "---|" * len(FIG2_ALGOS)]
    for e in f2["by_depth"]:
        lines.append(f"| {e['search_depth']} | " + " | ".join(
            f"{e[f'{a}_gens']:,.0f} / {100 * e[f'{a}_quality']:.1f}" for a in FIG2_ALGOS) + " |")
    if f3:
        lines += ["", f"## Figure 3(a): depth-increment protocol, {f3['pairs']} pairs per tournament, "
                  f"tree depth {f3['tree_depth']}", ""]
        for key in ("fe_1.0", "fe_0.5"):
            lines += [f"### {key.replace('_', ' delta=')}", "",
                      "| tournament | FE horizon | AB horizon | FE wins | ties | AB wins | FE win rate (95% CI) | "
                      "FE score | nodes FE | nodes AB |", "|---|---|---|---|---|---|---|---|---|---|"]
            for i, r in enumerate(f3[key]["rounds"]):
                lo, hi = r["a_win_rate_ci95"]
                lines.append(f"| {i + 1} | {r['horizon_a']} | {r['horizon_b']} | {r['a_wins']} | {r['ties']} | "
                             f"{r['b_wins']} | {100 * r['a_win_rate']:.0f}% ({100 * lo:.0f}-{100 * hi:.0f}) | "
                             f"{r['a_score']:.2f} | {r['nodes_a']:,} | {r['nodes_b']:,} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def run_fe_paper(out_dir, *, fig1_trees: int = 1000, fig1_depths=None, fig2_trees: int = 1000,
                 fig3: bool = True, fig3_pairs: int = 100, fig3_max_horizon: int = 6, fig3_tree_depth: int = 10,
                 resume: bool = False, workers: int | None = None, progress=None,
                 command: str = "jitsearch bench fe-paper", scheduler: str | None = None) -> dict:
    """Run figures 1, 2 and 3(a); write CSV/JSONL/JSON/markdown/PNG into ``out_dir``."""
    from ._rows import refuse_existing

    out = Path(out_dir)
    workers = workers or max(1, os.cpu_count() or 1)
    if fig1_trees < 1 or fig2_trees < 1 or fig3_pairs < 1:
        raise ValueError("tree and pair counts must be >= 1")
    if not resume:  # checked first, not after minutes of recomputation
        refuse_existing([out / "figure1_trees.csv", out / "figure2_trees.csv"]
                        + ([out / f"fig3_fe_{d}_games.jsonl" for d in (1.0, 0.5)] if fig3 else []))
    out.mkdir(parents=True, exist_ok=True)
    depths = fig1_depths or {2: list(range(2, 21, 2)), 5: list(range(2, 13)), 10: list(range(2, 12))}
    tasks = []
    for b, ds in depths.items():
        for d in ds:
            expected = b ** (0.75 * d)  # rough alpha-beta cost: fewer trees where it is large
            n = fig1_trees if expected < 3e5 else max(20, min(fig1_trees, int(fig1_trees * 3e5 / expected)))
            tasks += [(b, d, i) for i in range(n)]
    tasks.sort(key=lambda t: -(t[0] ** t[1]))
    rows1 = run_rows(fig1_tree, tasks, out / "figure1_trees.csv", FIG1_FIELDS,
                     key=lambda x: (x["branching"], x["depth"], x["seed"]) if isinstance(x, dict)
                     else (x[0], x[1], _seed(1, *x)),
                     resume=resume, workers=workers, progress=progress, label="figure 1", scheduler=scheduler)
    rows2_nested = run_rows(_fig2_flat, [(i,) for i in range(fig2_trees)], out / "figure2_trees.csv",
                            ["seed", "rows"], key=lambda x: x["seed"] if isinstance(x, dict) else _seed(2, x[0]),
                            resume=resume, workers=workers, progress=progress, label="figure 2", scheduler=scheduler,
                            numeric=lambda k, v: int(v) if k == "seed" else v)
    rows2 = [r for item in rows2_nested for r in json.loads(item["rows"])]
    result = {
        "benchmark": "fe-paper",
        "command": command,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"Python {platform.python_version()}",
        "figure1": summarize_fig1(rows1),
        "figure2": summarize_fig2(rows2),
    }
    if fig3:
        result["figure3a"] = run_fig3(out, fig3_pairs, fig3_max_horizon, fig3_tree_depth, resume, progress)
    result["claims"] = _claims(result["figure1"], result["figure2"], result.get("figure3a"))
    result["plots"] = _plots(out, result["figure1"], result["figure2"], result.get("figure3a"))
    (out / "summary.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "summary.md").write_text(_markdown(result))
    return result


def _fig2_flat(task):
    """One CSV row per tree holding its per-depth rows as JSON (resumable per tree)."""
    rows = fig2_tree(task)
    return {"seed": rows[0]["seed"], "rows": json.dumps(rows)}

"""Reproduce the four tables of Siljander ("Heuristic Monte-Carlo
Tree Search for Mancala") on Kalah(6,4), and answer its open question.

Tables (the first-listed algorithm is A; win % is A's):
1. alpha-beta (depth 1/3/5) vs MCTS (25/50/100 iterations)
2. FSSS (depth 1/3/5) vs HMCTS (25/50/100 iterations)
3. FSSS (depth 1/3/5) vs alpha-beta (depth 1/3/5)
4. alpha-beta (depth 1/3/5) vs HMCTS (25/50/100 iterations)

Settings: alpha-beta and FSSS use the paper's weighted heuristic
(``eval=heuristic``); MCTS is UCT with c = sqrt(2) (the paper's 2C with
C = sqrt(2)/2), random playouts, most-visited final move; HMCTS scores each
playout's final position by the heuristic mapped into [0, 1]. Standard
Kalah rules, ply cap 300. Phase ``paper``: 50 games per cell (25 pairs,
seats swapped, no random opening), as the paper; phase ``full``: ``pairs``
pairs per cell with 2 seeded random opening plies per pair (deterministic
searchers otherwise replay the same two games). Then the extension: MCTS
and HMCTS at more iterations against alpha-beta at depth 5.

Every game goes to a JSONL file as it ends (``resume=True`` continues);
``summary.json``, ``summary.md`` and ``winrate_vs_iterations.png`` at the end.
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path

from ..arena.matches import match_of, run_tournament
from ._plot import finish, pyplot

#: Kalah(6,4) under the standard rules (the matches' ply cap: Kalah's, 300).
KALAH_64 = {"houses": 6, "seeds": 4, "empty_capture": False}

C_UCT = "1.4142"
DEPTHS = (1, 3, 5)
ITERATIONS = (25, 50, 100)

# Siljander, section 4.1: (win %, mean moves, draw %) per (row setting, column setting)
PAPER = {
    1: {(1, 25): (96, 41.96, 0), (1, 50): (100, 48.13, 0), (1, 100): (100, 46.6, 0), (3, 25): (96, 39.9, 0),
        (3, 50): (100, 41.26, 0), (3, 100): (100, 34.4, 0), (5, 25): (100, 34.93, 0), (5, 50): (100, 39.266, 0),
        (5, 100): (100, 42.93, 0)},
    2: {(1, 25): (80, 79.53, 10), (1, 50): (83, 73.2, 13), (1, 100): (67, 78.433, 7), (3, 25): (60, 88.1, 13),
        (3, 50): (67, 81.56, 7), (3, 100): (60, 83.93, 10), (5, 25): (67, 54.766, 3), (5, 50): (73, 57.833, 7),
        (5, 100): (50, 57.833, 17)},
    3: {(1, 1): (100, 63, 0), (1, 3): (0, 142, 0), (1, 5): (0, 216, 0), (3, 1): (100, 189, 0),
        (3, 3): (100, 117, 0), (3, 5): (0, 252, 0), (5, 1): (0, 270, 0), (5, 3): (0, 107, 0), (5, 5): (0, 295, 0)},
    4: {(1, 25): (83, 77.86, 3), (1, 50): (80, 78.5, 7), (1, 100): (87, 85.1, 0), (3, 25): (60, 79.866, 7),
        (3, 50): (47, 86.56, 3), (3, 100): (47, 83.7, 7), (5, 25): (77, 67.366, 0), (5, 50): (57, 55.933, 10),
        (5, 100): (67, 64, 13)},
}
TITLES = {1: "alpha-beta vs MCTS", 2: "FSSS vs HMCTS", 3: "FSSS vs alpha-beta", 4: "alpha-beta vs HMCTS"}


def specs(table: int, row: int, col: int) -> tuple[str, str]:
    ab = lambda d: f"alphabeta:depth={d},eval=heuristic"  # noqa: E731
    fsss = lambda d: f"fsss:depth={d},eval=heuristic"  # noqa: E731
    if table == 1:
        return ab(row), f"mcts:iterations={col},c={C_UCT}"
    if table == 2:
        return fsss(row), f"hmcts:iterations={col},c={C_UCT}"
    if table == 3:
        return fsss(row), ab(col)
    return ab(row), f"hmcts:iterations={col},c={C_UCT}"


def cells():
    for t in (1, 2, 3, 4):
        for row in DEPTHS:
            for col in (DEPTHS if t == 3 else ITERATIONS):
                yield t, row, col


def run_mancala_paper(out: Path, *, pairs: int = 200, paper_games: int = 50, ext_iterations=(1000, 10000, 100000),
                      ext_pairs=(100, 100, 25), workers: int = 2, resume: bool = False, progress=None,
                      command: str = "", scheduler: str | None = None) -> dict:
    out = Path(out)
    games_dir = out / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    phases = [("paper", max(1, paper_games // 2), 0), ("full", pairs, 2)]
    jobs = [(ph, np_, op, t, r, c) for ph, np_, op in phases for t, r, c in cells()]
    for i, (phase, n_pairs, openings, t, r, c) in enumerate(jobs):
        a, b = specs(t, r, c)
        if progress:
            progress(f"{phase} table {t}: {a} vs {b}", i, len(jobs) + len(ext_iterations) * 2)
        res = run_tournament(a, b, match_of("kalah", KALAH_64, openings=openings, seed=1000 * t + 10 * r + c),
                                   n_pairs, out=games_dir / f"{phase}_t{t}_{r}_{c}.jsonl", resume=True,
                                   workers=workers, scheduler=scheduler)
        if res.get("interrupted"):  # every finished game is on disk: the next run resumes
            raise KeyboardInterrupt
        rows.append({"phase": phase, "table": t, "row": r, "col": c, **res})
    ext = []
    for j, (iters, n_pairs) in enumerate(zip(ext_iterations, ext_pairs)):
        for kind in ("mcts", "hmcts"):
            a, b = "alphabeta:depth=5,eval=heuristic", f"{kind}:iterations={iters},c={C_UCT}"
            if progress:
                progress(f"extension: {a} vs {b}", len(jobs) + 2 * j + (kind == "hmcts"),
                         len(jobs) + len(ext_iterations) * 2)
            res = run_tournament(a, b, match_of("kalah", KALAH_64, openings=2, seed=77), n_pairs,
                                       out=games_dir / f"ext_{kind}_{iters}.jsonl", resume=True, workers=workers,
                                       scheduler=scheduler)
            if res.get("interrupted"):
                raise KeyboardInterrupt
            ext.append({"kind": kind, "iterations": iters, **res})
    summary = {"benchmark": "mancala-paper", "command": command,
               "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
               "cells": rows, "extension": ext}
    (out / "summary.json").write_text(json.dumps(_finite(summary), indent=1) + "\n")
    (out / "summary.md").write_text(markdown(rows, ext))
    plots = []
    if ext and _plot(ext, out / "winrate_vs_iterations.png"):
        plots.append("winrate_vs_iterations.png")
    summary["plots"] = plots
    return summary


def _finite(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def _pct(r, key):
    lo, hi = r[key + "_ci95"]
    return f"{100 * r[key]:.0f} ({100 * lo:.0f}-{100 * hi:.0f})"


def markdown(rows, ext) -> str:
    lines = ["# Siljander's four tables on Kalah(6,4), standard rules", "",
             "Ours: A's win % and draw % with 95% Wilson intervals, mean plies per game. "
             "Paper: win %, draw %, mean moves as printed. `paper` = 50 games (25 pairs, seats swapped, no "
             "random opening); `full` = 2 random opening plies per pair, pairs as listed.", ""]
    for t in (1, 2, 3, 4):
        col_name = "alpha-beta depth" if t == 3 else "iterations"
        row_name = "FSSS depth" if t in (2, 3) else "alpha-beta depth"
        lines += [f"## Table {t}: {TITLES[t]}", "",
                  f"| {row_name} | {col_name} | paper win % | paper draw % | paper moves | ours (50 games) win % | "
                  f"draw % | plies | ours (full) games | win % | draw % | plies |", "|---" * 12 + "|"]
        for r_ in DEPTHS:
            for c in (DEPTHS if t == 3 else ITERATIONS):
                p = PAPER[t][(r_, c)]
                a = next((x for x in rows if x["phase"] == "paper" and (x["table"], x["row"], x["col"]) == (t, r_, c)),
                         None)
                b = next((x for x in rows if x["phase"] == "full" and (x["table"], x["row"], x["col"]) == (t, r_, c)),
                         None)
                cells_a = [_pct(a, "a_win_rate"), _pct(a, "draw_rate"), f"{a['mean_plies']:.1f}"] if a else ["-"] * 3
                cells_b = ([str(b["games"]), _pct(b, "a_win_rate"), _pct(b, "draw_rate"), f"{b['mean_plies']:.1f}"]
                           if b else ["-"] * 4)
                lines.append(f"| {r_} | {c} | {p[0]} | {p[2]} | {p[1]} | " + " | ".join(cells_a + cells_b) + " |")
        lines.append("")
    if ext:
        lines += ["## Extension: MCTS / HMCTS with more iterations against alpha-beta depth 5 (heuristic)", "",
                  "| B | iterations | games | B win % | draw % | B score | plies |", "|---|---|---|---|---|---|---|"]
        for e in ext:
            lo, hi = e["b_win_rate_ci95"]
            slo, shi = 1 - e["a_score_ci95"][1], 1 - e["a_score_ci95"][0]
            lines.append(f"| {e['kind']} | {e['iterations']} | {e['games']} | {100 * e['b_win_rate']:.0f} "
                         f"({100 * lo:.0f}-{100 * hi:.0f}) | {100 * e['draw_rate']:.0f} | "
                         f"{1 - e['a_score']:.2f} ({slo:.2f}-{shi:.2f}) | {e['mean_plies']:.1f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _plot(ext, path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in ("mcts", "hmcts"):
        pts = [e for e in ext if e["kind"] == kind]
        if not pts:
            continue
        xs = [e["iterations"] for e in pts]
        ys = [1 - e["a_score"] for e in pts]
        err = [[y - (1 - e["a_score_ci95"][1]) for y, e in zip(ys, pts)],
               [(1 - e["a_score_ci95"][0]) - y for y, e in zip(ys, pts)]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=kind.upper())
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    finish(plt, fig, ax, path, "iterations per move", "score against alpha-beta depth 5 (95% CI)",
           "Kalah(6,4): MCTS / HMCTS vs alpha-beta depth 5")
    return True

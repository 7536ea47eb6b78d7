#!/usr/bin/env python
"""CPU MCTS iterations per second: Oware(6,4) against Kalah(6,4), multi-tree.

Both searches are the multi-tree kernels (:func:`jitsearch.mcts.game.analyse_game`
and :func:`jitsearch.mcts.multi.analyse_positions`) from the start position,
UCT with c = sqrt 2, one playout per leaf, one leaf per step, the CPU
backend, warmed (JIT) first; medians of ``--runs`` interleaved runs, the
ratio Oware / Kalah measured in the same run. Two shapes: one tree (one
thread), and ``--trees`` trees over every core; and Oware's tree-parallel
CPU twin (one worker a tree) against the multi-tree search, one tree. An Oware iteration rebuilds
its leaf's repetition record and plays a longer game (about 100 plies
against Kalah's 40), each move checking that record.

Writes bench/results/oware_mcts.json. Run:
``python bench/oware_mcts.py [--runs 5] [--iterations 20000] [--trees 4]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from functools import partial
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "oware_mcts.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--trees", type=int, default=4)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()

    from jitsearch._threads import cpu_threads
    from jitsearch.games.kalah import KalahState
    from jitsearch.games.oware import OwareState
    from jitsearch.mcts.multi import analyse_positions
    from jitsearch.mcts.game import analyse_game
    from jitsearch.mcts.game_shared import tree_parallel_game

    analyse_oware = partial(analyse_game, "oware")

    load_start = os.getloadavg()
    ow, ka = OwareState.initial(6, 4), KalahState.initial(6, 4)

    def rate(fn, state, trees, seed):
        r = fn([state] * trees, iterations=args.iterations, playouts=1, leaves=1, seed=seed, backend="cpu")
        return r["iterations"] * trees / r["seconds"]

    shapes = {}
    for trees in (1, args.trees):
        rate(analyse_oware, ow, trees, 0), rate(analyse_positions, ka, trees, 0)  # warm-up (JIT, caches)
        o_rates, k_rates = [], []
        for r in range(args.runs):
            o_rates.append(rate(analyse_oware, ow, trees, r + 1))
            k_rates.append(rate(analyse_positions, ka, trees, r + 1))
        shape = {"trees": trees, "threads": min(trees, cpu_threads()),
                 "oware_iterations_per_s": statistics.median(o_rates),
                 "kalah_iterations_per_s": statistics.median(k_rates),
                 "ratio_oware_over_kalah": statistics.median(o_rates) / statistics.median(k_rates),
                 "oware_runs": o_rates, "kalah_runs": k_rates}
        shapes[f"trees_{trees}"] = shape
        print(json.dumps({k: v for k, v in shape.items() if not k.endswith("_runs")}))
    # the shared-tree twin (one worker a tree on the CPU) against the multi-tree search, one tree
    def shared_rate(seed):
        r = tree_parallel_game("oware", [ow], iterations=args.iterations, playouts=1, seed=seed, backend="cpu")
        return r["iterations"] / r["seconds"]

    shared_rate(0), rate(analyse_oware, ow, 1, 0)
    s_rates, m_rates = [], []
    for r in range(args.runs):
        s_rates.append(shared_rate(r + 1))
        m_rates.append(rate(analyse_oware, ow, 1, r + 1))
    shapes["oware_shared_vs_multi_one_tree"] = {
        "shared_iterations_per_s": statistics.median(s_rates), "multi_iterations_per_s": statistics.median(m_rates),
        "ratio_shared_over_multi": statistics.median(s_rates) / statistics.median(m_rates),
        "shared_runs": s_rates, "multi_runs": m_rates}
    print(json.dumps({k: v for k, v in shapes["oware_shared_vs_multi_one_tree"].items() if not k.endswith("_runs")}))
    result = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_start": load_start,
                          "load_end": os.getloadavg()},
              "settings": {"iterations_per_tree": args.iterations, "playouts_per_leaf": 1, "leaves": 1,
                           "c": "sqrt 2", "runs": args.runs, "backend": "cpu"},
              "shapes": shapes,
              "not_measured": ["the CUDA kernel (no device on this machine; it is checked bit for bit against the "
                               "CPU twin under NUMBA_ENABLE_CUDASIM=1)", "strength (left to a separate match)"]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python
"""Oware against Kalah, and Oware's searchers against each other.

1. Random playouts per second on the CPU (one thread): Oware(6,4) with
   :func:`jitsearch.kernels.game_playouts.evaluate_states` against Kalah(6,4)
   with :func:`jitsearch.games.kalah.playouts.evaluate_cpu`, each from the start
   position, both warmed up first, medians of ``--runs`` interleaved runs;
   the ratio is Oware / Kalah measured in the same run. Plies per playout
   are reported too (an Oware playout is longer, and each of its moves checks
   the repetition record).
2. Strength at a fixed time per move: alphabeta:time=T against
   mc:playouts=P (P chosen so that one move takes about T seconds on this
   machine, measured first), ``--pairs`` pairs of games from seeded 2-ply
   openings, both seats.

The GPU twin and the endgame database are not measured (no device on the
machine this ran on; no database yet). Writes bench/results/oware.json.

Run: ``python bench/oware.py [--runs 5] [--playouts 2000] [--pairs 4] [--time 0.2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results" / "oware.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--playouts", type=int, default=2000)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--time", type=float, default=0.2)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()

    from jitsearch.arena.agents import parse_agent
    from jitsearch.arena.game_match import GameMatch
    from jitsearch.arena.matches import run_tournament
    from jitsearch.games.kalah import KalahState
    from jitsearch.games.oware import OwareState
    from jitsearch.kernels.game_playouts import evaluate_states
    from jitsearch.games.kalah.playouts import evaluate_cpu

    load_start = os.getloadavg()
    ow = OwareState.initial(6, 4)
    ka = KalahState.initial(6, 4)

    def run_oware(seed):
        t0 = time.perf_counter()
        out = evaluate_states("oware", [ow], args.playouts, seed=seed)
        return time.perf_counter() - t0, int(out["plies"][0])

    def run_kalah(seed):
        t0 = time.perf_counter()
        out = evaluate_cpu(ka.board[None, :], np.array([0]), args.playouts, seed)
        return time.perf_counter() - t0, int(out["plies"][0])

    run_oware(0), run_kalah(0)  # warm-up (JIT)
    o_rates, k_rates, o_plies, k_plies = [], [], [], []
    for r in range(args.runs):
        for fn, rates, plies in ((run_oware, o_rates, o_plies), (run_kalah, k_rates, k_plies)):
            s, p = fn(r + 1)
            rates.append(args.playouts / s)
            plies.append(p / args.playouts)
    playouts = {"oware_playouts_per_s": statistics.median(o_rates), "kalah_playouts_per_s": statistics.median(k_rates),
                "ratio_oware_over_kalah": statistics.median(o_rates) / statistics.median(k_rates),
                "oware_plies_per_playout": statistics.mean(o_plies), "kalah_plies_per_playout": statistics.mean(k_plies),
                "oware_plies_per_s": statistics.median(o_rates) * statistics.mean(o_plies),
                "kalah_plies_per_s": statistics.median(k_rates) * statistics.mean(k_plies),
                "runs": args.runs, "playouts_per_run": args.playouts}
    print(json.dumps(playouts, indent=1))

    # MC playouts per move that take about --time seconds from the start (6 children)
    probe = parse_agent("mc:playouts=200", game="oware", seed=1)
    probe(ow)
    t0 = time.perf_counter()
    probe(ow)
    per = (time.perf_counter() - t0) / 200
    mc_playouts = max(10, int(args.time / per))
    a, b = f"alphabeta:time={args.time}", f"mc:playouts={mc_playouts}"
    t0 = time.perf_counter()
    match = run_tournament(a, b, GameMatch.of("oware", {}, openings=2, seed=1), args.pairs)
    strength = {"a": a, "b": b, "pairs": args.pairs, "wall_s": time.perf_counter() - t0,
                "games": match["games"], "wins": match["a_wins"], "draws": match["draws"],
                "losses": match["b_wins"], "score": match["a_score"],
                **{k: match["statistics"][k] for k in ("elo", "elo_interval", "pentanomial")}}
    print(json.dumps(strength, indent=1))
    result = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_start": load_start,
                          "load_end": os.getloadavg()},
              "cpu_playouts": playouts, "strength_at_time_per_move": strength,
              "not_measured": ["GPU playouts (no device here)", "endgame database build rate (no database yet)"]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

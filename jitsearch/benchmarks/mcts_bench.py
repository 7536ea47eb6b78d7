"""MCTS and playout speed on Kalah(6,4) from the start.

* random playouts per second: the CPU twin on one core and on all cores;
* MCTS simulations per second on one core (UCT, c = 2, one random playout
  per simulation), against OpenSpiel's C++ ``pyspiel.MCTSBot`` with
  ``RandomRolloutEvaluator(1, seed)`` on its "mancala" game when
  ``open-spiel`` is installed, in the same run;
* root parallelism: the same search on ``workers`` threads (independent
  trees), simulations per second of all of them together.

Each figure is the median of ``repeats`` timed runs after a warm-up.
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np


def _median_rate(fn, work: float, repeats: int) -> float:
    fn()  # warm-up (compilation, caches)
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        rates.append(work / (time.perf_counter() - t0))
    return statistics.median(rates)


def run_mcts_bench(*, simulations: int = 20000, playout_states: int = 256, playouts_per_state: int = 200,
                   repeats: int = 5, workers: int | None = None, progress=None) -> dict:
    from ..games.kalah import KalahState
    from ..kernels.playouts import evaluate_cpu
    from ..mcts.search import mcts_search

    workers = workers or os.cpu_count() or 1
    s = KalahState.initial(6, 4)
    boards = np.repeat(s.board[None, :], playout_states, axis=0)
    n_playouts = playout_states * playouts_per_state
    out = {"benchmark": "mcts", "machine": f"{platform.processor() or platform.machine()}, "
                                           f"{os.cpu_count()} cores, Python {platform.python_version()}",
           "simulations": simulations, "repeats": repeats, "workers": workers}
    if progress:
        progress("playouts, one core")
    plies = evaluate_cpu(boards, 0, playouts_per_state, 1)["plies"].sum()
    out["playouts_per_second_1core"] = _median_rate(lambda: evaluate_cpu(boards, 0, playouts_per_state, 1),
                                                    n_playouts, repeats)
    out["plies_per_playout"] = float(plies / n_playouts)
    if progress:
        progress("playouts, all cores")
    out["playouts_per_second_all_cores"] = _median_rate(
        lambda: evaluate_cpu(boards, 0, playouts_per_state, 1, threads=workers), n_playouts, repeats)
    if progress:
        progress("MCTS, one core")
    seeds = iter(range(10**6))
    out["mcts_sims_per_second_1core"] = _median_rate(
        lambda: mcts_search(s, iterations=simulations, c=2.0, seed=next(seeds)), simulations, repeats)
    if progress:
        progress(f"MCTS, root parallelism on {workers} threads")
    out["mcts_sims_per_second_root_parallel"] = _median_rate(
        lambda: mcts_search(s, iterations=simulations * workers, c=2.0, workers=workers, seed=next(seeds)),
        simulations * workers, repeats)
    out["root_parallel_speedup"] = out["mcts_sims_per_second_root_parallel"] / out["mcts_sims_per_second_1core"]
    try:
        import pyspiel
    except ImportError:
        out["openspiel"] = None
    else:
        if progress:
            progress("OpenSpiel MCTSBot")
        game = pyspiel.load_game("mancala")
        state = game.new_initial_state()

        def os_run():
            bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, next(seeds)), 2.0, simulations, 10**9,
                                  False, next(seeds), False)
            bot.step(state)

        out["openspiel"] = {"version": getattr(pyspiel, "__version__", "?"),
                            "mcts_sims_per_second": _median_rate(os_run, simulations, repeats)}
        out["speedup_vs_openspiel_1core"] = out["mcts_sims_per_second_1core"] / out["openspiel"]["mcts_sims_per_second"]
        out["speedup_vs_openspiel_root_parallel"] = (out["mcts_sims_per_second_root_parallel"]
                                                     / out["openspiel"]["mcts_sims_per_second"])
    return out

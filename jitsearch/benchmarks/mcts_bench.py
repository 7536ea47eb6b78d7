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


#: Timed runs per figure.
MAX_REPEATS = 100
#: MCTS simulations of the whole benchmark (warm-ups and repeats, one core and parallel).
MAX_BENCH_SIMULATIONS = 10**9


def run_mcts_bench(*, simulations: int = 20000, playout_states: int = 256, playouts_per_state: int = 200,
                   repeats: int = 5, workers: int | None = None, progress=None) -> dict:
    """Run the benchmark; every argument is checked and the work and the
    trees' memory are estimated before anything runs (``ValueError``)."""
    from ..games import get as get_game
    from .._checks import check_int, max_threads
    from ..games.playout import check_work
    from ..mcts.config import MAX_ITERATIONS, MCTSConfig
    from ..mcts.search import mcts_search, tree_capacity
    from ..trees.memory import DEFAULT_MAX_BYTES

    simulations = check_int("simulations", simulations, 1, MAX_ITERATIONS)
    repeats = check_int("repeats", repeats, 1, MAX_REPEATS)
    if workers is not None:
        workers = check_int("workers", workers, 1, max_threads())
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable or None, got {type(progress).__name__}")
    check_work(playout_states, playouts_per_state, "the playout figure")
    workers = workers or os.cpu_count() or 1
    if simulations * workers > MAX_ITERATIONS:
        raise ValueError(f"simulations x workers = {simulations * workers:,} is above the limit of "
                         f"{MAX_ITERATIONS:,} MCTS iterations: lower --simulations or --workers")
    total = (repeats + 1) * simulations * (1 + workers)
    if total > MAX_BENCH_SIMULATIONS:
        raise ValueError(f"the benchmark would run {total:,} MCTS simulations ((repeats + 1) x simulations x "
                         f"(1 + workers)), above the limit of {MAX_BENCH_SIMULATIONS:,}: lower --simulations, "
                         f"--repeats or --workers")
    for iterations, w in ((simulations, 1), (simulations * workers, workers)):  # the trees fit, before any run
        tree_capacity(MCTSConfig(iterations=iterations, workers=w), 6, -(-iterations // w), DEFAULT_MAX_BYTES // w)
    kalah = get_game("kalah")
    evaluate_cpu = kalah.fast_playouts.evaluate_cpu  # Kalah's array API of batches
    s = kalah.initial(houses=6, seeds=4)
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

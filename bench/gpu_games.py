#!/usr/bin/env python
"""The generic CUDA kernels for every registered game on a GPU, against the CPU in the same run.

For each game (Kalah(6,4), Oware(6,4), Connect Four 7x6 by default):

1. **Twin checks**: the generic CUDA playout kernel (:mod:`jitsearch.kernels.cuda_game_playouts`)
   gives the CPU's counters (:mod:`jitsearch.kernels.game_playouts`) on 64 random positions,
   bit for bit; the multi-tree CUDA kernel grows the CPU twin's trees (8 positions, fixed tree
   keys, every tree array compared); the tree-parallel kernel with one block gives the CPU
   twin's root statistics (the run records a mismatch; it does not stop).
2. **Playouts per second** from ``--states`` random live positions (16 random plies from the
   start), ``--playouts`` each: the generic CUDA kernel (host call: packing and transfers
   included, the median of ``--repeats`` after one untimed call) against the CPU on every core
   (``threads=`` the machine's cores). For Kalah also its own register-board kernel
   (:class:`jitsearch.games.kalah.cuda_playouts.CudaEvaluator`), the same states.
3. **MCTS iterations per second** of one tree from the start position, ``--search-seconds``
   each after a warm-up: multi-tree (``analyse_game``, one tree, backend cuda, 32 leaves a step)
   and tree-parallel (``tree_parallel_game``, backend cuda, default blocks), against the CPU
   (``threads`` every core, one tree: ``analyse_game`` backend cpu).

Writes ``--out`` (JSON). Needs a CUDA GPU (numba-cuda, numpy < 2.5).

    python bench/gpu_games.py [--games kalah,oware,connect4] [--quick] --out gpu_games.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jitsearch.games import get  # noqa: E402


def positions(game, count: int, plies: int, seed: int) -> list:
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = game.initial()
        for _ in range(rnd.randrange(plies + 1)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def median_rate(fn, work: float, repeats: int) -> float:
    fn()  # compile and warm
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return work / statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="kalah,oware,connect4")
    ap.add_argument("--states", type=int, default=65536)
    ap.add_argument("--playouts", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--search-seconds", type=float, default=1.0)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, e.g. under the simulator)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.quick:
        a.states, a.playouts, a.repeats, a.search_seconds = 64, 2, 1, 0.05
    from jitsearch.kernels.cuda_game_playouts import evaluate_states_cuda
    from jitsearch.kernels.game_playouts import evaluate_states
    from jitsearch.mcts.game import analyse_game, tree_keys_for
    from jitsearch.mcts.game_shared import tree_parallel_game

    cores = os.cpu_count() or 1
    out = {"states": a.states, "playouts": a.playouts, "repeats": a.repeats, "cores": cores, "games": {}}
    for name in a.games.split(","):
        game = get(name)
        row: dict = {}
        out["games"][name] = row
        try:
            small = positions(game, 64, 16, 1)
            gpu = evaluate_states_cuda(game, small, 4, 7)
            cpu = evaluate_states(game, small, 4, 7, threads=1)
            row["twin_equal"] = all(np.array_equal(gpu[k], cpu[k]) for k in cpu)
            keys = tree_keys_for(9, 8)
            few = small[:8]
            kw = {"iterations": 40, "playouts": 2, "leaves": 4}
            cpu_r, cpu_t = analyse_game(game, few, tree_keys=keys, backend="cpu", return_trees=True, **kw)
            gpu_r, gpu_t = analyse_game(game, few, tree_keys=keys, backend="cuda", return_trees=True, **kw)
            row["multi_tree_twin_equal"] = bool(cpu_r["positions"] == gpu_r["positions"] and all(
                np.array_equal(getattr(cpu_t, f), getattr(gpu_t, f)) for f in cpu_t.FIELDS))
            kw = {"iterations": 30, "playouts": 2, "tree_keys": keys[:2]}
            cpu_r = tree_parallel_game(game, few[:2], backend="cpu", **kw)
            gpu_r = tree_parallel_game(game, few[:2], backend="cuda", blocks=1, **kw)
            row["tree_parallel_blocks1_twin_equal"] = cpu_r["positions"] == gpu_r["positions"]
            states = positions(game, a.states, 16, 2)
            work = a.states * a.playouts
            row["gpu_playouts_per_s"] = median_rate(lambda: evaluate_states_cuda(game, states, a.playouts, 3), work,
                                                    a.repeats)
            row["cpu_playouts_per_s"] = median_rate(lambda: evaluate_states(game, states, a.playouts, 3,
                                                                            threads=cores), work, a.repeats)
            if name == "kalah":
                from jitsearch.games.kalah.cuda_playouts import CudaEvaluator

                boards = np.array([s.board for s in states], np.int32)
                players = np.array([s.player for s in states], np.int64)
                ev = CudaEvaluator(kernel="registers")
                row["kalah_register_playouts_per_s"] = median_rate(
                    lambda: ev.evaluate(boards, players, a.playouts, 3), work, a.repeats)
            print(name, {k: v for k, v in row.items()}, flush=True)
            start = [game.initial()]
            for backend, extra in (("cuda", {"leaves": 32}), ("cpu", {"threads": cores})):
                analyse_game(game, start, time=a.search_seconds / 4, backend=backend, **extra)
                r = analyse_game(game, start, time=a.search_seconds, backend=backend, **extra)
                row[f"multi_tree_{backend}_iterations_per_s"] = r["iterations"] / r["seconds"]
            tree_parallel_game(game, start, time=a.search_seconds / 4, backend="cuda")
            r = tree_parallel_game(game, start, time=a.search_seconds, backend="cuda")
            row["tree_parallel_cuda_iterations_per_s"] = r["iterations"] / r["seconds"]
        except Exception as exc:  # keep the other games' figures
            row["error"] = f"{type(exc).__name__}: {exc}"
        print(name, row, flush=True)
        a.out.write_text(json.dumps(out, indent=2) + "\n")
    a.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

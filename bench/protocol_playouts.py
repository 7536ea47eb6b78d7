#!/usr/bin/env python
"""The protocol's one generic playout (jitsearch.games.playout) against the existing CPU
playout kernels, one core, paired in one run.

Kalah: :func:`jitsearch.games.kalah.playouts.evaluate_cpu` with its ``generic`` kernel (the same
rule functions, called directly) and with the default (fastest: SIMD or packed boards); Oware:
:func:`jitsearch.kernels.game_playouts.evaluate_states`; Connect Four has no other kernel
(its playouts/s are listed alone). Every repeat runs each kernel once on the same states and
seed, in turn (so load changes hit both), and checks that the results are identical. Figures
are medians of the repeats; ratios are medians of the per-repeat ratios. Writes
bench/results/protocol_playouts.json with the load average before and after.

    python bench/protocol_playouts.py [--repeats 7] [--states 256] [--playouts 64]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

import jitsearch.games as games
from jitsearch._jit import stable_ids
from jitsearch.games.playout import evaluate
from jitsearch.kernels.game_playouts import evaluate_states
from jitsearch import rng
from jitsearch.games.kalah import playouts

GEN = rng.build(stable_ids(njit(cache=True)))
KEYS = ("wins", "draws", "losses", "margin_sum", "plies")


def positions(game, count, seed):
    """The start, then random positions of random games (live), one variant."""
    rnd = random.Random(seed)
    out = [game.initial()]
    while len(out) < count:
        s = game.initial()
        for _ in range(rnd.randrange(0, 30)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def kernels_for(name, states, playouts_per_state, seed):
    """name -> a function running one batch; the protocol's first."""
    game = games.get(name)
    out = {"protocol": lambda: evaluate(game, states, playouts_per_state, seed, gen=GEN)}
    if name == "kalah":
        p = game.pack(states)
        default = playouts.cpu_playout_kind(p.cfg[0])
        out[f"kalah {default}"] = lambda: playouts.evaluate_cpu(p.boards, p.players, playouts_per_state, seed,
                                                                empty_capture=p.cfg[1], kernel=default)
        if default != "generic":
            out["kalah generic"] = lambda: playouts.evaluate_cpu(p.boards, p.players, playouts_per_state, seed,
                                                                 empty_capture=p.cfg[1], kernel="generic")
    elif name == "oware":
        out["oware kernel"] = lambda: evaluate_states("oware", states, playouts_per_state, seed)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="kalah,oware,connect4")
    ap.add_argument("--states", type=int, default=256)
    ap.add_argument("--playouts", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "protocol_playouts.json")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    results = []
    for name in args.games.split(","):
        states = positions(games.get(name), args.states, args.seed)
        runs = kernels_for(name, states, args.playouts, args.seed)
        ref = {k: v for k, v in runs["protocol"]().items()}  # compile everything before the clocks
        identical = all(all(np.array_equal(ref[k], f()[k]) for k in KEYS) for f in runs.values())
        times = {k: [] for k in runs}
        for _ in range(args.repeats):
            for k, f in runs.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        total = args.states * args.playouts
        row = {"game": name, "states": args.states, "playouts_per_state": args.playouts, "identical": identical,
               "plies_per_playout": float(ref["plies"].sum() / total), "kernels": {}}
        for k, ts in times.items():
            row["kernels"][k] = {"playouts_per_second": total / statistics.median(ts),
                                 "protocol_ratio": statistics.median(a / b for a, b in zip(ts, times["protocol"]))}
        results.append(row)
        for k, v in row["kernels"].items():
            print(f"{name:<9} {k:<16} {v['playouts_per_second'] / 1e3:>9.1f} k playouts/s   "
                  f"protocol x{v['protocol_ratio']:.3f}   identical={identical}", flush=True)
    out = {"bench": "protocol_playouts", "repeats": args.repeats, "threads": 1, "load_before": load_before,
           "load_after": os.getloadavg(), "machine": platform.machine(), "cpus": os.cpu_count(),
           "python": sys.version.split()[0], "results": results,
           "note": "protocol_ratio: the kernel's time over the protocol's, per repeat, median (> 1: the protocol "
                   "is faster)"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Random playouts per second from a Kalah start position on a backend.

One launch evaluates ``states`` copies of the start position with
``playouts`` playouts each; the rate is playouts (and plies) per second of
wall time including transfers, median of ``repeats`` runs after a warm-up
launch (which compiles the kernel).
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np


def measure_playouts(backend: str = "cpu", houses: int = 6, seeds: int = 4, states: int = 1024,
                     playouts: int = 64, repeats: int = 5, threads: int = 1, seed: int = 0) -> dict:
    from ..games.kalah import KalahState
    from ..kernels.backend import device_name, evaluate, resolve

    which = resolve(backend)
    start = KalahState.initial(houses, seeds)
    boards = np.repeat(start.board[None, :], states, axis=0)
    players = np.zeros(states, dtype=np.int64)
    evaluate(boards, players, playouts, seed, backend=which, threads=threads)  # warm-up / compile
    rates, ply_rates = [], []
    for r in range(repeats):
        t0 = time.perf_counter()
        out = evaluate(boards, players, playouts, seed + 1 + r, backend=which, threads=threads)
        dt = time.perf_counter() - t0
        rates.append(states * playouts / dt)
        ply_rates.append(int(out["plies"].sum()) / dt)
    return {"backend": which, "device": device_name(which), "houses": houses, "seeds": seeds, "states": states,
            "playouts": playouts, "repeats": repeats, "threads": threads if which == "cpu" else None,
            "playouts_per_second": statistics.median(rates), "plies_per_second": statistics.median(ply_rates),
            "runs_playouts_per_second": rates, "cores": os.cpu_count()}

"""Alpha-beta nodes per second over the game protocol, for any registered game.

The kernel of :mod:`jitsearch.kernels.game_alphabeta` compiled by Numba, timed against the
same source run as plain Python (``jit = lambda f: f``, the game's rules built the same way):
fixed depths from the start of the variant, no table and the rules' move order, so both visit
the same tree and their values, moves and node counts must agree (else ``RuntimeError``). The
search with the game's own hooks (its move order, a table where it has a ``position_key``:
:func:`~jitsearch.kernels.game_alphabeta.alphabeta_game`, iterative deepening) is reported
beside it, in nodes and seconds.
"""

from __future__ import annotations

import platform
import statistics
import time

import numpy as np
from numba import njit

from ..games import get
from ..kernels.game_alphabeta import NODES, alphabeta_game, make_alphabeta, table_for
from ..stop import STOP_SLOT, new_counters


def _no_key(board, cfg, player):
    return np.uint64(0)


def _rules_order(board, cfg, player, move):
    return 0.0


def _median_time(fn, repeats: int):
    seconds, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds), out


def run_alphabeta_bench(game, variant: dict | None = None, depths=(1, 2, 3, 4, 5, 6), python_max_depth: int = 4,
                        repeats: int = 3, progress=None) -> dict:
    """Rows per depth: ``nodes``, ``value`` (the root player's), ``move``, ``numba_seconds`` (median
    of ``repeats``), ``numba_nodes_per_second``; up to ``python_max_depth`` ``python_seconds``,
    ``python_nodes_per_second`` and ``speedup_vs_python``; ``ordered_nodes`` and
    ``ordered_seconds`` of the search with the game's hooks."""
    g = get(game)
    variant = g.check_variant(**(variant or {}))
    state = g.initial(**variant)
    packed = g.pack([state])
    rows0, cols = int(packed.rows[0]), packed.hists.shape[2]
    num_moves = int(g.sizes(packed.cfg).moves)
    inline = njit(inline="always")
    compiled = make_alphabeta(njit(nogil=True), g.build(inline), inline(_no_key), inline(_rules_order), False)
    plain = make_alphabeta(lambda f: f, g.build(lambda f: f), _no_key, _rules_order, False)

    def search(fn, depth):
        counters = new_counters(STOP_SLOT + 1)
        hist = np.zeros((rows0 + depth + 1, cols), packed.hists.dtype)
        hist[:rows0] = packed.hists[0, :rows0]
        value, move, _ = fn(packed.boards[0].copy(), packed.cfg, np.int64(packed.players[0]), hist, packed.cur(0),
                            np.int64(depth), np.int64(-1), np.int64(num_moves), *table_for(g, 0), counters)
        return float(value), int(move), int(counters[NODES])

    search(compiled, 1), alphabeta_game(g, state, depth=1)  # JIT warm-up
    rows = []
    for d in depths:
        if progress:
            progress(f"depth {d}")
        sec, (value, move, nodes) = _median_time(lambda: search(compiled, d), repeats)
        row = {"depth": d, "nodes": nodes, "value": value, "move": move, "numba_seconds": sec,
               "numba_nodes_per_second": nodes / sec}
        ordered = alphabeta_game(g, state, depth=d)
        row.update(ordered_nodes=ordered["nodes"], ordered_seconds=ordered["seconds"])
        if d <= python_max_depth:
            psec, reference = _median_time(lambda: search(plain, d), 1)
            if reference != (value, move, nodes):
                raise RuntimeError(f"plain Python searched another tree at depth {d}: {reference} against "
                                   f"{(value, move, nodes)}")
            row.update(python_seconds=psec, python_nodes_per_second=nodes / psec, speedup_vs_python=psec / sec)
        rows.append(row)
    ratios = [r["speedup_vs_python"] for r in rows if "speedup_vs_python" in r]
    return {"benchmark": "alphabeta", "game": g.name, "variant": variant, "position": state.to_text(),
            "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
            "rows": rows, "speedup_vs_python": statistics.median(ratios) if ratios else None,
            "numba_nodes_per_second": statistics.median(r["numba_nodes_per_second"] for r in rows)}

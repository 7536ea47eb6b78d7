"""Exact solving of small Oware variants (fewer houses or seeds) from any
position, under the full rules: the repetition record, the move limit and
the end by the scores are played exactly along every line.

The search is :mod:`.alphabeta`'s kernel, deepened until no line is cut by
the depth (every frontier position it evaluated was a finished game): the
value is then exact, since alpha-beta's bounds hold for any tree whose
visited leaves carry their true values. Depths double (8, 16, 32, ...) up to
the plies left before the move limit.

Value convention (lexicographic): the result for the player to move first
(win, draw, loss), then the final score difference for that player among
the lines that reach that result -- a finished game is worth
``WIN + difference`` (a loss ``-WIN + difference``) in the kernel.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numpy as np

from ..._checks import check_int
from .alphabeta import NO_DB_BINOM, NO_DB_VALUES, NO_LIMIT, NO_TRACE, STOP_SLOT, WIN, negamax_kernel, search_buffers
from .state import OwareState


@dataclass(frozen=True)
class SolveResult:
    """``result`` ('win', 'draw' or 'loss') and ``margin`` (final score
    difference) for the player to move under perfect play; ``move`` a best
    house (the first found in the search's move order); ``depth`` the depth
    that closed the search; ``nodes`` summed over the iterations."""

    move: int
    result: str
    margin: int
    depth: int
    nodes: int
    seconds: float


def solve(state: OwareState, *, node_limit: int | None = None, progress=None,
          stop: threading.Event | None = None, on_depth=None) -> SolveResult | None:
    """Solve ``state`` exactly (module docstring); None if ``node_limit``
    nodes (over all iterations) were not enough, or once ``stop`` is set
    (from another thread: the kernel sees it within about a thousand nodes).
    ``progress(depth, nodes, seconds)`` is called after every deepening that
    did not close the search (``nodes`` summed so far); each one may take
    far longer than the last. ``on_depth(depth, nodes, seconds)`` is called
    as each deepening starts (``nodes``: of the deepenings before it)."""
    if not isinstance(state, OwareState):
        raise ValueError(f"state must be an OwareState, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over: there is nothing to solve")
    budget = NO_LIMIT if node_limit is None else check_int("node_limit", node_limit, 1)
    left = state.move_limit - state.ply
    t0 = time.perf_counter()
    depth = min(8, left)
    counters = np.zeros(STOP_SLOT + 1, np.int64)
    finished = threading.Event()
    if stop is not None:
        def watch():  # the kernel reads the stop flag from its counters
            while not finished.is_set():
                if stop.wait(0.02):
                    counters[STOP_SLOT] = 1
                    return

        threading.Thread(target=watch, name="jitsearch-oware-solve-stop", daemon=True).start()
    try:
        return _deepen(state, depth, left, budget, counters, progress, t0, on_depth)
    finally:
        finished.set()


def _deepen(state, depth, left, budget, counters, progress, t0, on_depth=None):
    nodes = 0
    while True:
        if on_depth is not None:
            on_depth(depth, nodes, time.perf_counter() - t0)
        boards, hist, moves, keys = search_buffers(state, depth)
        counters[:STOP_SLOT] = 0
        value, move = negamax_kernel(boards, state.houses, state.player, depth, hist, 0, len(state.history), state.ply,
                               state.move_limit, state.grand_slam_illegal, 0.0, moves, keys, counters,
                               budget - nodes, -1, NO_DB_VALUES, NO_DB_BINOM, -1, NO_TRACE)
        nodes += int(counters[0])
        if counters[2]:
            return None
        if counters[3] == 0 or depth == left:  # at the move limit every line ends: exact too
            break
        if progress is not None:
            progress(depth, nodes, time.perf_counter() - t0)
        depth = min(2 * depth, left)
    if value > 0:
        result, margin = "win", value - WIN
    elif value < 0:
        result, margin = "loss", value + WIN
    else:
        result, margin = "draw", 0.0
    assert math.isfinite(margin) and margin == int(margin)
    return SolveResult(int(move), result, int(margin), depth, nodes, time.perf_counter() - t0)

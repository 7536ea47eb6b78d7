"""FSSS-Minimax on Kalah to a fixed depth (Weinstein, Littman & Goschin,
"Rollout-based Game-tree Search Outprunes Traditional Alpha-beta",
Algorithm 2).

Conventions as in :mod:`.alphabeta`: the player to move decides MAX (the
root player) or MIN, values are from the root player's point of view, and
children are ordered as depth-limited alpha-beta orders them without a
table, so the two search the same tree and must agree on its value.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...stop import STOP_SLOT, new_counters, stop_requested, watch
from ...search.fsss_minimax import fsss_combine as combine
from ...search.fsss_minimax import fsss_descend, fsss_open, grown
from .alphabeta import EVAL_HEURISTIC, EVAL_STORE, check_depth, evaluate, order_moves, path_hash, trace_capacity
from .state import KalahState, apply_move, legal_moves

@njit(cache=True, nogil=True)
def kalah_fsss(root_board, m, root_player, depth, eval_kind, empty_capture, counters, trace):
    """FSSS-Minimax (Weinstein, Littman & Goschin, Algorithm 2) to ``depth`` plies on Kalah.

    A preallocated, growing node pool holds each visited state's (L, U)
    bounds; children of an entry are allocated together, in the same order
    alpha-beta uses without a table (:func:`.alphabeta.order_moves`), with the move
    that leads to each. Boards are recomputed along the rollout path. Exact
    epsilon steps as in :mod:`jitsearch.search.fsss_minimax`. ``counters``:
    (node visits, frontier expansions), int64[2], or int64[5] with the stop
    flag ``counters[STOP_SLOT]`` read every 1,024 visits
    (:mod:`jitsearch.stop`); ``trace`` receives frontier path
    hashes. Returns (value, best move); (nan, -2) once the stop flag is seen.
    """
    n = 2 * m + 2
    cap = 1024
    bounds = np.empty((cap, 2), dtype=np.float64)
    first = np.empty(cap, dtype=np.int64)
    move_of = np.empty(cap, dtype=np.int64)
    bounds[0, 0] = -math.inf
    bounds[0, 1] = math.inf
    first[0] = -1
    used = 1
    boards = np.empty((depth + 1, n), dtype=root_board.dtype)
    movers = np.empty(depth + 1, dtype=np.int64)
    path_entry = np.empty(depth + 1, dtype=np.int64)
    path_hash_ = np.empty(depth + 1, dtype=np.uint64)
    path_ax = np.empty(depth + 1, dtype=np.float64)
    path_ak = np.empty(depth + 1, dtype=np.int64)
    path_bx = np.empty(depth + 1, dtype=np.float64)
    path_bk = np.empty(depth + 1, dtype=np.int64)
    nchild = np.empty(depth + 1, dtype=np.int64)
    moves = np.empty(m, dtype=np.int64)
    keys = np.empty(m, dtype=np.float64)
    scratch = np.empty(n, dtype=root_board.dtype)
    record = trace.shape[0] > 0
    boards[0] = root_board
    movers[0] = root_player
    path_entry[0] = 0
    path_hash_[0] = np.uint64(0)
    fsss_open(path_ax, path_ak, path_bx, path_bk)
    while bounds[0, 0] != bounds[0, 1]:
        d = 0
        while True:
            e = path_entry[d]
            mover = movers[d]
            counters[0] += 1
            if stop_requested(counters, counters[0]):
                return math.nan, np.int64(-2)
            if mover < 0 or d == depth:
                v = evaluate(boards[d], m, root_player, eval_kind, mover < 0)
                bounds[e, 0] = v
                bounds[e, 1] = v
                if record and counters[1] < trace.shape[0]:
                    trace[counters[1]] = path_hash_[d]
                counters[1] += 1
                break
            c0 = first[e]
            if c0 < 0:
                count = legal_moves(boards[d], m, mover, moves)
                order_moves(boards[d], m, mover, empty_capture, moves, count, scratch, keys, -1)
                if used + count > bounds.shape[0]:
                    bounds, first, move_of = grown(bounds, used), grown(first, used), grown(move_of, used)
                c0 = used
                for i in range(count):
                    bounds[c0 + i, 0] = -math.inf
                    bounds[c0 + i, 1] = math.inf
                    first[c0 + i] = -1
                    move_of[c0 + i] = moves[i]
                first[e] = c0
                used += count
                nchild[d] = count
            else:
                nchild[d] = legal_count(boards[d], m, mover)
            ce = c0 + fsss_descend(mover == root_player, bounds, c0, nchild[d], path_ax, path_ak, path_bx, path_bk, d)
            boards[d + 1] = boards[d]
            movers[d + 1] = apply_move(boards[d + 1], m, mover, move_of[ce], empty_capture)
            path_hash_[d + 1] = path_hash(path_hash_[d], move_of[ce])
            d += 1
            path_entry[d] = ce
        for level in range(d - 1, -1, -1):
            e = path_entry[level]
            lo, up = combine(movers[level] == root_player, bounds, first[e], nchild[level])
            bounds[e, 0] = lo
            bounds[e, 1] = up
    # best move: the lowest-ordered child proven to attain the value
    c0 = first[0]
    best = np.int64(-1)
    if c0 >= 0:
        for i in range(nchild[0] if depth > 0 else 0):
            if root_player == movers[0] and bounds[c0 + i, 0] == bounds[0, 0]:
                best = move_of[c0 + i]
                break
    return bounds[0, 0], best


@njit(cache=True, inline="always")
def legal_count(board, m, player):
    first = 1 if player == 0 else m + 2
    count = 0
    for i in range(first, first + m):
        if board[i] > 0:
            count += 1
    return count


def fsss_search(state: KalahState, depth: int, *, eval: str = "store", trace: bool = False, stop=None) -> dict:
    """Depth-limited FSSS on ``state``; same value as :func:`search` without a table.
    ``stop`` (a ``threading.Event``) set from another thread ends it within
    1,024 node visits and raises ``KeyboardInterrupt``."""
    check_depth(state, depth, eval)
    counters = new_counters(2)
    buf = np.zeros(trace_capacity(state, depth) if trace else 0, dtype=np.uint64)
    with watch(stop, counters):
        value, move = kalah_fsss(state.board, state.houses, state.player, int(depth),
                                 EVAL_STORE if eval == "store" else EVAL_HEURISTIC, state.empty_capture, counters,
                                 buf)
    if counters[STOP_SLOT]:
        raise KeyboardInterrupt
    out = {"value": float(value), "move": int(move), "nodes": int(counters[0]), "evaluations": int(counters[1]),
           "depth": int(depth), "pv": [int(move)]}
    if trace:
        out["frontier"] = buf[:min(int(counters[1]), buf.size)].copy()
    return out

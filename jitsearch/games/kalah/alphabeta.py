"""Depth-limited alpha-beta on Kalah with a transposition table, and
iterative deepening.

Conventions: a ply is one move (an extra-turn move is a ply too); the
player to move decides whether a node is MAX (the root player) or MIN, never
the depth's parity. Values are from the root player's point of view:
``eval="store"`` is the store difference (its final margin at the end of the
game), ``eval="heuristic"`` the weighted H1..H5 of Siljander's
HMCTS paper computed for the
root player. Finished games are always scored by the store difference.

Move ordering (the textbook chapter "Multiagent Search", section 3.4.1;
the lecture slides "Alpha-Beta Pruning & MCTS"): the transposition table's
move first, then moves that give an extra turn, then by the store difference
one ply later, best first for the mover; ties keep house order.

Transposition table (the textbook chapter "Multiagent Search", section 3.3.1): ``capacity`` slots (a power of
two) indexed by a 64-bit hash of (board, player to move); each slot keeps
the key, the searched depth, the bound type (exact / lower / upper), the
value and the best move. Replacement: a slot is overwritten by a search of
equal or greater depth of any position, or by any search of the same
position (depth-preferred), so deep results survive shallow ones.

The exact solver (MTD(f) to the end of the game) is in :mod:`.solver`,
FSSS-Minimax on Kalah in :mod:`.fsss`.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ...stop import STOP_SLOT, new_counters, stop_requested, watch
from ...rng import GOLDEN, mix64
from ...trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .state import KalahState, apply_move, heuristic_of, legal_moves, margin_of

EVAL_STORE = 0
EVAL_HEURISTIC = 1
EXACT, LOWER, UPPER = 0, 1, 2
ABORTED_MOVE = -2  # kalah_alphabeta's move when its node limit stopped it
NO_LIMIT = np.iinfo(np.int64).max


@njit(cache=True, inline="always")
def board_hash(board, player):
    h = mix64(np.uint64(player + 7))
    for i in range(board.shape[0]):
        h = mix64(h ^ (np.uint64(board[i]) + np.uint64(i + 1) * GOLDEN))
    return h


@njit(cache=True, inline="always")
def path_hash(parent, move):
    """Identity of a node by the moves leading to it (for expansion traces)."""
    return mix64(parent ^ (np.uint64(move + 1) * GOLDEN))


@njit(cache=True, inline="always")
def evaluate(board, m, root_player, eval_kind, over):
    """Value from the root player's point of view (see module docstring)."""
    margin = np.float64(margin_of(board, m))
    if root_player == 1:
        margin = -margin
    if over or eval_kind == EVAL_STORE:
        return margin
    return heuristic_of(board, m, root_player)


@njit(cache=True, inline="always")
def sort_by_key(moves, keys, count):
    """Stable insertion sort of ``moves[:count]`` by descending ``keys``."""
    for j in range(1, count):
        mv = moves[j]
        kv = keys[j]
        i = j - 1
        while i >= 0 and keys[i] < kv:
            moves[i + 1] = moves[i]
            keys[i + 1] = keys[i]
            i -= 1
        moves[i + 1] = mv
        keys[i + 1] = kv


@njit(cache=True, inline="always")
def order_moves(board, m, player, empty_capture, moves, count, scratch, keys, tt_move):
    """Sort ``moves[:count]`` best first (see module docstring)."""
    sign = 1.0 if player == 0 else -1.0
    for j in range(count):
        scratch[:] = board
        nxt = apply_move(scratch, m, player, moves[j], empty_capture)
        key = sign * np.float64(margin_of(scratch, m))
        if nxt == player:
            key += 1e6
        if moves[j] == tt_move:
            key += 1e9
        keys[j] = key
    sort_by_key(moves, keys, count)


@njit(cache=True, nogil=True)
def kalah_alphabeta(root_board, m, root_player, depth, eval_kind, empty_capture, ordering,
                    tt_keys, tt_depth, tt_flag, tt_value, tt_move, counters, trace, node_limit):
    """Depth-limited fail-soft alpha-beta from ``root_board`` (root player to move).

    ``tt_keys`` of size 0 disables the table. ``counters``: int64[2] gets
    (nodes visited, frontier evaluations) added; int64[5] also holds the stop
    flag ``counters[STOP_SLOT]``, which another thread may set to abandon the
    search as the node limit does (read every 1,024 nodes,
    :mod:`jitsearch.stop`). ``trace`` (uint64[K], K > 0
    to record) receives the path hash (:func:`path_hash` of the moves from
    the root) of each frontier state evaluated. Returns (value, best move
    pit, or -1 when the root is decided by the table); (nan,
    ``ABORTED_MOVE``) when ``counters[0]`` would pass ``node_limit`` or the
    stop flag is set (the search is abandoned; the table keeps only sound
    entries).
    """
    n = 2 * m + 2
    cap = tt_keys.shape[0]
    mask = np.uint64(cap - 1) if cap > 0 else np.uint64(0)
    boards = np.empty((depth + 1, n), dtype=root_board.dtype)
    movers = np.empty(depth + 1, dtype=np.int64)
    moves = np.empty((depth + 1, m), dtype=np.int64)
    keys = np.empty(m, dtype=np.float64)
    scratch = np.empty(n, dtype=root_board.dtype)
    nmoves = np.empty(depth + 1, dtype=np.int64)
    kidx = np.empty(depth + 1, dtype=np.int64)
    alpha = np.empty(depth + 1, dtype=np.float64)
    beta = np.empty(depth + 1, dtype=np.float64)
    alpha0 = np.empty(depth + 1, dtype=np.float64)
    beta0 = np.empty(depth + 1, dtype=np.float64)
    value = np.empty(depth + 1, dtype=np.float64)
    best = np.empty(depth + 1, dtype=np.int64)
    hashes = np.empty(depth + 1, dtype=np.uint64)
    paths = np.empty(depth + 1, dtype=np.uint64)
    record = trace.shape[0] > 0
    paths[0] = np.uint64(0)
    boards[0] = root_board
    movers[0] = root_player
    alpha[0] = -math.inf
    beta[0] = math.inf
    sp = 0
    entering = True
    ret = 0.0
    while True:
        if entering:
            if counters[0] >= node_limit or stop_requested(counters, counters[0]):
                return math.nan, np.int64(ABORTED_MOVE)
            counters[0] += 1
            mover = movers[sp]
            board = boards[sp]
            done = False
            if mover < 0 or sp == depth:
                ret = evaluate(board, m, root_player, eval_kind, mover < 0)
                if record and counters[1] < trace.shape[0]:
                    trace[counters[1]] = paths[sp]
                counters[1] += 1
                done = True
            tt_best = -1
            if not done and cap > 0:
                h = board_hash(board, mover)
                hashes[sp] = h
                slot = np.int64(h & mask)
                if tt_keys[slot] == h:
                    tt_best = tt_move[slot]
                    if sp > 0 and tt_depth[slot] >= depth - sp:  # the root is always searched
                        v = tt_value[slot]
                        f = tt_flag[slot]
                        if f == EXACT or (f == LOWER and v >= beta[sp]) or (f == UPPER and v <= alpha[sp]):
                            ret = v
                            done = True
            if done:
                if sp == 0:
                    return ret, np.int64(-1)
                sp -= 1
                entering = False
                continue
            count = legal_moves(board, m, mover, moves[sp])
            if ordering:
                order_moves(board, m, mover, empty_capture, moves[sp], count, scratch, keys, tt_best)
            nmoves[sp] = count
            kidx[sp] = 0
            alpha0[sp] = alpha[sp]
            beta0[sp] = beta[sp]
            value[sp] = -math.inf if mover == root_player else math.inf
            best[sp] = -1
        else:
            # child kidx[sp] returned ret
            mv = moves[sp, kidx[sp]]
            if movers[sp] == root_player:
                if ret > value[sp]:
                    value[sp] = ret
                    best[sp] = mv
                if ret > alpha[sp]:
                    alpha[sp] = ret
            else:
                if ret < value[sp]:
                    value[sp] = ret
                    best[sp] = mv
                if ret < beta[sp]:
                    beta[sp] = ret
            kidx[sp] += 1
        k = kidx[sp]
        if k < nmoves[sp] and alpha[sp] < beta[sp]:
            boards[sp + 1] = boards[sp]
            movers[sp + 1] = apply_move(boards[sp + 1], m, movers[sp], moves[sp, k], empty_capture)
            paths[sp + 1] = path_hash(paths[sp], moves[sp, k])
            alpha[sp + 1] = alpha[sp]
            beta[sp + 1] = beta[sp]
            sp += 1
            entering = True
            continue
        ret = value[sp]
        if cap > 0:
            slot = np.int64(hashes[sp] & mask)
            d = depth - sp
            if tt_keys[slot] == hashes[sp] or d >= tt_depth[slot]:
                tt_keys[slot] = hashes[sp]
                tt_depth[slot] = d
                tt_value[slot] = ret
                tt_move[slot] = best[sp]
                tt_flag[slot] = UPPER if ret <= alpha0[sp] else (LOWER if ret >= beta0[sp] else EXACT)
        if sp == 0:
            return ret, best[0]
        sp -= 1


def new_table(capacity: int):
    """A transposition table of ``capacity`` slots (rounded up to a power of two; 0: none)."""
    if capacity <= 0:
        cap = 0
    else:
        cap = 1 << max(0, int(capacity - 1).bit_length())
    return (np.zeros(cap, dtype=np.uint64), np.full(cap, -1, dtype=np.int64), np.zeros(cap, dtype=np.int8),
            np.zeros(cap, dtype=np.float64), np.full(cap, -1, dtype=np.int64))


TABLE_SLOT_BYTES = 8 + 8 + 1 + 8 + 8


def search(state: KalahState, depth: int, *, eval: str = "store", ordering: bool = True,
           tt_capacity: int = 1 << 16, table=None, trace: bool = False, stop=None) -> dict:
    """Depth-limited alpha-beta from ``state``; returns value, move, nodes, PV.
    ``stop`` (a ``threading.Event``) set from another thread ends the search
    within 1,024 nodes (:mod:`jitsearch.stop`) and raises
    ``KeyboardInterrupt``."""
    check_depth(state, depth, eval)
    table = table if table is not None else new_table(tt_capacity)
    counters = new_counters(2)
    buf = np.zeros(trace_capacity(state, depth) if trace else 0, dtype=np.uint64)
    with watch(stop, counters):
        value, move = kalah_alphabeta(state.board, state.houses, state.player, int(depth),
                                      EVAL_STORE if eval == "store" else EVAL_HEURISTIC, state.empty_capture,
                                      ordering, *table, counters, buf, NO_LIMIT)
    if counters[STOP_SLOT]:
        raise KeyboardInterrupt
    move = int(move)
    out = {"value": float(value), "move": move, "nodes": int(counters[0]), "evaluations": int(counters[1]),
           "depth": int(depth), "pv": principal_variation(state, table, depth, first=move)}
    if trace:
        out["frontier"] = buf[:min(int(counters[1]), buf.size)].copy()
    return out


def trace_capacity(state: KalahState, depth: int) -> int:
    cap = min(state.houses ** depth, 1 << 26)
    check_bytes(cap * 8, DEFAULT_MAX_BYTES, f"a frontier trace of up to {cap} states", "lower the depth")
    return cap


def check_depth(state, depth, evaluation):
    if state.is_over:
        raise ValueError("the game is over: nothing to search")
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    if evaluation not in ("store", "heuristic"):
        raise ValueError(f"eval must be store or heuristic, got {evaluation!r}")


def principal_variation(state: KalahState, table, depth: int, first: int) -> list[int]:
    """Moves from the root following the table's best moves (validated)."""
    keys, _, _, _, moves = table
    pv = [first]
    s = state.play(first)
    cap = keys.shape[0]
    while cap and not s.is_over and len(pv) < depth:
        h = int(_hash(s.board, s.player))
        slot = h & (cap - 1)
        if int(keys[slot]) != h or int(moves[slot]) not in s.legal_moves():
            break
        pv.append(int(moves[slot]))
        s = s.play(int(moves[slot]))
    return pv


@njit(cache=True)
def _hash(board, player):
    return board_hash(board, player)


def iterative_deepening(state: KalahState, *, max_depth: int = 64, time_limit: float | None = None,
                        eval: str = "store", tt_capacity: int = 1 << 18, stop=None) -> dict:
    """Deepen one ply at a time, reusing the table, until ``max_depth`` or the
    time limit; returns the result of the deepest completed iteration.

    The time limit does not interrupt an iteration, so the next iteration is
    started only if its predicted time (the last one's times its growth
    factor) fits the remaining time. ``stop`` (a ``threading.Event``) does:
    set from another thread, it ends the search within 1,024 nodes and
    raises ``KeyboardInterrupt``.
    """
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
    table = new_table(tt_capacity)
    start = time.perf_counter()
    result = None
    last = None
    growth = 4.0
    nodes = 0
    for d in range(1, max_depth + 1):
        t0 = time.perf_counter()
        r = search(state, d, eval=eval, table=table, stop=stop)
        dt = time.perf_counter() - t0
        nodes += r["nodes"]
        result = r
        if last:
            growth = min(max(dt / max(last, 1e-6), 1.5), 20.0)
        last = dt
        if time_limit is not None and (time.perf_counter() - start) + dt * growth > time_limit:
            break
    result = dict(result)
    result["total_nodes"] = nodes
    result["seconds"] = time.perf_counter() - start
    return result

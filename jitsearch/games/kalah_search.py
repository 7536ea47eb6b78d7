"""Depth-limited alpha-beta on Kalah, iterative deepening, and an exact solver.

Conventions: a ply is one move (an extra-turn move is a ply too); the
player to move decides whether a node is MAX (the root player) or MIN, never
the depth's parity. Values are from the root player's point of view:
``eval="store"`` is the store difference (its final margin at the end of the
game), ``eval="heuristic"`` the weighted H1..H5 of seed 003 computed for the
root player. Finished games are always scored by the store difference.

Move ordering (seed 004 section 3.4.1, seed 002): the transposition table's
move first, then moves that give an extra turn, then by the store difference
one ply later, best first for the mover; ties keep house order.

Transposition table (seed 004 section 3.3.1): ``capacity`` slots (a power of
two) indexed by a 64-bit hash of (board, player to move); each slot keeps
the key, the searched depth, the bound type (exact / lower / upper), the
value and the best move. Replacement: a slot is overwritten by a search of
equal or greater depth of any position, or by any search of the same
position (depth-preferred), so deep results survive shallow ones.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ..search.fsss_minimax import _combine as combine
from ..search.fsss_minimax import _select_child as select_child
from ..trees._access import mix64
from .kalah import KalahState, apply_move, heuristic_of, legal_moves, margin_of
from .kalah_endgame import rank_houses

EVAL_STORE = 0
EVAL_HEURISTIC = 1
EXACT, LOWER, UPPER = 0, 1, 2
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def board_hash(board, player):
    h = mix64(np.uint64(player + 7))
    for i in range(board.shape[0]):
        h = mix64(h ^ (np.uint64(board[i]) + np.uint64(i + 1) * _GOLDEN))
    return h


@njit(cache=True, inline="always")
def path_hash(parent, move):
    """Identity of a node by the moves leading to it (for expansion traces)."""
    return mix64(parent ^ (np.uint64(move + 1) * _GOLDEN))


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
def _order_moves(board, m, player, empty_capture, moves, count, scratch, keys, tt_move):
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
                    tt_keys, tt_depth, tt_flag, tt_value, tt_move, counters, trace):
    """Depth-limited fail-soft alpha-beta from ``root_board`` (root player to move).

    ``tt_keys`` of size 0 disables the table. ``counters``: int64[2] gets
    (nodes visited, frontier evaluations) added. ``trace`` (uint64[K], K > 0
    to record) receives the path hash (:func:`path_hash` of the moves from
    the root) of each frontier state evaluated. Returns (value, best move
    pit, or -1 when the root is decided by the table).
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
                _order_moves(board, m, mover, empty_capture, moves[sp], count, scratch, keys, tt_best)
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
           tt_capacity: int = 1 << 16, table=None, trace: bool = False) -> dict:
    """Depth-limited alpha-beta from ``state``; returns value, move, nodes, PV."""
    _check_depth(state, depth, eval)
    table = table if table is not None else new_table(tt_capacity)
    counters = np.zeros(2, dtype=np.int64)
    buf = np.zeros(_trace_capacity(state, depth) if trace else 0, dtype=np.uint64)
    value, move = kalah_alphabeta(state.board, state.houses, state.player, int(depth),
                                  EVAL_STORE if eval == "store" else EVAL_HEURISTIC, state.empty_capture,
                                  ordering, *table, counters, buf)
    move = int(move)
    out = {"value": float(value), "move": move, "nodes": int(counters[0]), "evaluations": int(counters[1]),
           "depth": int(depth), "pv": principal_variation(state, table, depth, first=move)}
    if trace:
        out["frontier"] = buf[:min(int(counters[1]), buf.size)].copy()
    return out


def _trace_capacity(state: KalahState, depth: int) -> int:
    from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

    cap = min(state.houses ** depth, 1 << 26)
    check_bytes(cap * 8, DEFAULT_MAX_BYTES, f"a frontier trace of up to {cap} states", "lower the depth")
    return cap


def _check_depth(state, depth, evaluation):
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


@njit(cache=True)
def _houses_hash(board, m, player):
    return houses_hash(board, m, player)


def iterative_deepening(state: KalahState, *, max_depth: int = 64, time_limit: float | None = None,
                        eval: str = "store", tt_capacity: int = 1 << 18) -> dict:
    """Deepen one ply at a time, reusing the table, until ``max_depth`` or the
    time limit; returns the result of the deepest completed iteration.

    A search cannot be interrupted, so the next iteration is started only if
    its predicted time (the last one's times its growth factor) fits the
    remaining time.
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
        r = search(state, d, eval=eval, table=table)
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


# -- exact solving: MTD(f) with a transposition table of bounds ---------------------

@njit(cache=True, inline="always")
def _order_moves_cheap(board, m, player, moves, count, keys, tt_move, empty_capture):
    """Solver ordering without trying the moves: the table's move, then moves
    whose last seed reaches the store (an extra turn, found arithmetically;
    the one nearest the store first, so it leaves the others' extra turns
    standing), then captures (biggest first), then the rest from the house
    nearest the store."""
    cycle = 2 * m + 1  # pits a sowing visits: all but the opponent's store
    n = 2 * m + 2
    for j in range(count):
        pit = moves[j]
        dist = (m + 1 - pit) if player == 0 else (2 * m + 2 - pit)
        seeds = board[pit]
        key = np.float64(-dist)
        if seeds % cycle == dist % cycle:
            key += 1e3
        elif seeds < dist:
            land = pit + seeds  # an own house, reached without a lap
            if board[land] == 0 and (empty_capture or board[n - land] > 0):
                key += 100.0 + board[n - land]
        elif seeds == cycle:
            key += 100.0 + board[n - pit] + 1  # a full lap ends in the emptied start house
        if pit == tt_move:
            key += 1e6
        keys[j] = key
    sort_by_key(moves, keys, count)


SOLVED, ABORTED, TABLE_FULL = 0, 1, 2


_POLY = np.uint64(0x100000001B3)  # FNV-1a's 64-bit prime


@njit(cache=True, inline="always")
def houses_hash(board, m, player):
    """64-bit key of (the houses, the player to move), stores left out: the
    rest of the game depends on nothing else. A polynomial over the houses
    (one multiply per house) finished by one SplitMix64 round."""
    h = np.uint64(player + 1) * _GOLDEN  # high bits: never confused with a house count
    for i in range(1, m + 1):
        h = (h ^ np.uint64(board[i])) * _POLY
    for i in range(m + 2, 2 * m + 2):
        h = (h ^ np.uint64(board[i])) * _POLY
    return mix64(h)


@njit(cache=True, nogil=True)
def _kalah_mt(root_board, m, root_player, gamma, empty_capture, table, counters, node_limit, etc_min_seeds,
              db_values, db_binom, db_seeds):
    """Null-window test "margin >= gamma?" to the end of the game.

    Values are player 0's final margin; player 0 maximises. Fail-soft:
    returns (status, g, root move) with g >= gamma meaning margin >= g, else
    margin <= g; the root is always expanded (no cutoff from the table or the
    seed counts there) so the move is the one its own search found.

    Two things make it fast (both from the literature on solving Kalah):

    * seed-count bounds: with stores s0, s1 and r seeds left in the houses the
      final margin lies in [s0 - s1 - r, s0 - s1 + r], so a node whose whole
      range is on one side of gamma is answered without a move;
    * the table is keyed on the houses and the player to move only, and keeps
      bounds on the *rest* of the game (final margin minus s0 - s1), so
      positions that differ only in how the stores split share one entry.

    With an endgame database (``db_seeds`` >= 0, see
    :mod:`jitsearch.games.kalah_endgame`) a node with at most ``db_seeds``
    seeds left in the houses takes its exact value from it.

    ``table`` is int64[cap, 4], one row per slot: the 64-bit key, the lower
    and the upper bound on the rest (float64 bit patterns, read through a
    float view) and ``best move + 256 * seeds left in the houses``. Slots
    pair into buckets (two-tier replacement): the even slot keeps the entry
    with the most seeds left (the biggest subtree), the odd one the most
    recent other entry; a new entry that beats the even slot's demotes it.
    """
    n = 2 * m + 2
    total = 0
    for i in range(n):
        total += root_board[i]
    depth_cap = 4 * total + 8  # every ply moves at least one seed forward; a safe bound on game length
    cap = table.shape[0]
    mask = np.uint64(cap - 2)  # buckets of two slots: an even index
    tt_f = table.view(np.float64)
    boards = np.empty((depth_cap + 1, n), dtype=root_board.dtype)
    movers = np.empty(depth_cap + 1, dtype=np.int64)
    moves = np.empty((depth_cap + 1, m), dtype=np.int64)
    keys = np.empty(m, dtype=np.float64)
    child = np.empty(n, dtype=root_board.dtype)
    nmoves = np.empty(depth_cap + 1, dtype=np.int64)
    kidx = np.empty(depth_cap + 1, dtype=np.int64)
    value = np.empty(depth_cap + 1, dtype=np.float64)
    best = np.empty(depth_cap + 1, dtype=np.int64)
    hashes = np.empty(depth_cap + 1, dtype=np.uint64)
    diffs = np.empty(depth_cap + 1, dtype=np.float64)
    seeds_left = np.empty(depth_cap + 1, dtype=np.int64)
    boards[0] = root_board
    movers[0] = root_player
    sp = 0
    entering = True
    ret = 0.0
    while True:
        if entering:
            counters[0] += 1
            if counters[0] > node_limit:
                return ABORTED, 0.0, -1
            mover = movers[sp]
            board = boards[sp]
            done = False
            tt_best = -1
            if mover < 0:
                ret = np.float64(margin_of(board, m))
                done = True
            else:
                d = np.float64(board[m + 1] - board[0])
                r = total - board[m + 1] - board[0]
                if sp > 0 and d + r < gamma:
                    ret = d + r
                    done = True
                elif sp > 0 and d - r >= gamma:
                    ret = d - r
                    done = True
                elif sp > 0 and r <= db_seeds:
                    ret = d + db_values[mover, rank_houses(board, m, db_binom)]
                    done = True
                else:
                    diffs[sp] = d
                    seeds_left[sp] = r
                    h = houses_hash(board, m, mover)
                    hashes[sp] = h
                    slot = np.int64(h & mask)
                    if np.uint64(table[slot, 0]) != h:
                        slot ^= 1
                    if np.uint64(table[slot, 0]) == h:
                        tt_best = table[slot, 3] & 255
                        if sp == 0:
                            pass  # the root is always searched, so that it names its best move
                        elif tt_f[slot, 1] + d >= gamma:
                            ret = tt_f[slot, 1] + d
                            done = True
                        elif tt_f[slot, 2] + d < gamma:
                            ret = tt_f[slot, 2] + d
                            done = True
            count = 0
            if not done:
                count = legal_moves(board, m, mover, moves[sp])
                if sp > 0 and seeds_left[sp] >= etc_min_seeds:
                    # enhanced transposition cutoff: a child whose bounds
                    # (game over, seed counts, table) already decide the test
                    for j in range(count):
                        for i in range(n):
                            child[i] = board[i]
                        cm = apply_move(child, m, mover, moves[sp, j], empty_capture)
                        cd = np.float64(child[m + 1] - child[0])
                        if cm < 0:
                            c_lo = cd
                            c_up = cd
                        else:
                            cr = total - child[m + 1] - child[0]
                            c_lo = cd - cr
                            c_up = cd + cr
                            ch = houses_hash(child, m, cm)
                            cs = np.int64(ch & mask)
                            if np.uint64(table[cs, 0]) != ch:
                                cs ^= 1
                            if np.uint64(table[cs, 0]) == ch:
                                c_lo = max(c_lo, tt_f[cs, 1] + cd)
                                c_up = min(c_up, tt_f[cs, 2] + cd)
                        if mover == 0 and c_lo >= gamma:
                            ret = c_lo
                            done = True
                            break
                        if mover == 1 and c_up < gamma:
                            ret = c_up
                            done = True
                            break
            if done:
                if sp == 0:
                    return SOLVED, ret, -1  # the root is over
                sp -= 1
                entering = False
                continue
            _order_moves_cheap(board, m, mover, moves[sp], count, keys, tt_best, empty_capture)
            nmoves[sp] = count
            kidx[sp] = 0
            value[sp] = -math.inf if mover == 0 else math.inf
            best[sp] = moves[sp, 0]
        else:
            mv = moves[sp, kidx[sp]]
            if movers[sp] == 0:
                if ret > value[sp]:
                    value[sp] = ret
                    best[sp] = mv
            else:
                if ret < value[sp]:
                    value[sp] = ret
                    best[sp] = mv
            kidx[sp] += 1
        k = kidx[sp]
        g = value[sp]
        more = g < gamma if movers[sp] == 0 else g >= gamma
        if k < nmoves[sp] and more:
            if sp + 1 > depth_cap:
                return TABLE_FULL, 0.0, -1
            boards[sp + 1] = boards[sp]
            movers[sp + 1] = apply_move(boards[sp + 1], m, movers[sp], moves[sp, k], empty_capture)
            sp += 1
            entering = True
            continue
        # store the bound learnt (on the rest of the game) and return g
        h = hashes[sp]
        slot = np.int64(h & mask)  # even: the bucket's deep slot
        work = seeds_left[sp]
        fresh = False
        if np.uint64(table[slot, 0]) != h:
            if np.uint64(table[slot + 1, 0]) == h:
                slot += 1
            else:
                fresh = True
                if work >= (table[slot, 3] >> 8):
                    # demote the deep slot's entry to the recent slot
                    for c in range(4):
                        table[slot + 1, c] = table[slot, c]
                else:
                    slot += 1
                table[slot, 0] = np.int64(h)
                tt_f[slot, 1] = -math.inf
                tt_f[slot, 2] = math.inf
        rest = g - diffs[sp]
        if g >= gamma:
            tt_f[slot, 1] = max(tt_f[slot, 1], rest)
        else:
            tt_f[slot, 2] = min(tt_f[slot, 2], rest)
        # the move is kept from a fail-high (the move that proved the
        # lower bound); a fail-low only names one for a fresh entry
        if fresh or g >= gamma:
            table[slot, 3] = best[sp] + 256 * work
        ret = g
        if sp == 0:
            return SOLVED, ret, best[0]
        sp -= 1
        entering = False


def estimate_margin(state: KalahState, node_budget: int = 2_000_000) -> int:
    """MTD(f)'s first guess: depth-limited alpha-beta with the store
    difference, deepened two plies at a time while an iteration takes under
    a quarter of ``node_budget`` nodes (about 16 plies on Kalah(6,4)), as
    player 0's margin with the parity of the seed total (every final margin
    has it). Counted in nodes, not seconds, so the guess (and the solve's
    node count) is the same on every run."""
    table = new_table(1 << 16)
    value = 0.0
    for depth in range(2, 41, 2):
        r = search(state, depth, table=table)
        value = r["value"]
        if r["nodes"] > node_budget // 4:
            break
    guess = int(round(value if state.player == 0 else -value))
    if (guess - int(state.board.sum())) % 2:
        guess += 1
    return guess


def solve_exact(state: KalahState, *, tt_capacity: int = 1 << 24, time_limit: float | None = None,
                first_guess: int | None = None, progress=None, max_bytes: int = 4 * 1024**3,
                etc_min_seeds: int = 1 << 30, endgame_seeds: int = 0, endgame_db: dict | None = None,
                endgame_cache_dir=None) -> dict:
    """Game-theoretic value (player 0's final margin under perfect play) and
    the best move, by MTD(f) with a transposition table.

    Returns a dict: ``margin`` (player 0's view), ``best_move``, ``nodes``,
    ``iterations``, ``seconds``, ``complete`` (False when the time limit
    stopped it: then ``lower``/``upper`` bound the margin).
    """
    from ..trees.memory import check_bytes

    if state.is_over:
        return {"margin": state.margin, "best_move": -1, "nodes": 0, "iterations": 0, "seconds": 0.0,
                "complete": True, "lower": state.margin, "upper": state.margin}
    cap = 1 << max(4, int(tt_capacity - 1).bit_length())
    check_bytes(cap * 32, max_bytes, f"a transposition table of {cap} slots",
                "lower the table size (--table-size) or raise --max-memory")
    table = np.zeros((cap, 4), dtype=np.int64)
    counters = np.zeros(1, dtype=np.int64)
    start = time.perf_counter()
    db_seconds = 0.0
    if endgame_db is None and endgame_seeds > 0:
        from .kalah_endgame import build_endgame_database

        endgame_db = build_endgame_database(state.houses, endgame_seeds, state.empty_capture, max_bytes=max_bytes,
                                            cache_dir=endgame_cache_dir)
        db_seconds = time.perf_counter() - start
    if endgame_db is not None:
        if endgame_db["houses"] != state.houses or endgame_db["empty_capture"] != state.empty_capture:
            raise ValueError("the endgame database is for another board size or rule variant")
        db_values, db_binom, db_seeds = endgame_db["values"], endgame_db["binom"], endgame_db["max_seeds"]
    else:
        db_values, db_binom, db_seeds = np.zeros((2, 1), dtype=np.int8), np.zeros((1, 1), dtype=np.int64), -1
    if first_guess is None:
        first_guess = estimate_margin(state)
    lo, up = -math.inf, math.inf
    g = float(first_guess)
    iterations = 0
    complete = True
    g_new = g
    best = -1
    while lo < up:
        gamma = g + 1 if g == lo else g
        # a test cannot be interrupted from Python: give it a node budget from
        # the measured rate, and when it runs out early retry (the table keeps
        # what was learnt) until the time is really spent
        status = ABORTED
        while True:
            limit = np.iinfo(np.int64).max
            if time_limit is not None:
                elapsed = time.perf_counter() - start
                if elapsed >= time_limit:
                    break
                rate = counters[0] / elapsed if elapsed > 0.5 else 1e6
                limit = int(counters[0] + max(rate * (time_limit - elapsed), 1e5))
            status, g_new, root_move = _kalah_mt(state.board, state.houses, state.player, float(gamma),
                                                 state.empty_capture, table, counters, limit, etc_min_seeds,
                                                 db_values, db_binom, db_seeds)
            if status != ABORTED or time_limit is None:
                break
        iterations += 1
        if status != SOLVED:
            complete = False
            break
        g = g_new
        if g >= gamma:
            lo = g
        else:
            up = g
        # the test that moved the mover's own bound names its best move: a
        # fail-high for player 0 (margin >= g via that move), a fail-low for 1
        if (g >= gamma) == (state.player == 0) and root_move >= 0:
            best = int(root_move)
        if progress:
            progress(iterations, lo, up, int(counters[0]), time.perf_counter() - start)
    if best < 0:  # stopped before the first informative test: the table's move, if any
        h = int(_houses_hash(state.board, state.houses, state.player))
        for slot in ((h & (cap - 2)), (h & (cap - 2)) + 1):
            if int(table[slot, 0]) & ((1 << 64) - 1) == h:
                best = int(table[slot, 3] & 255)
    if best not in state.legal_moves():
        best = -1
    margin = lo if complete else None
    return {"margin": None if margin is None else int(margin), "best_move": best, "nodes": int(counters[0]),
            "iterations": iterations, "seconds": time.perf_counter() - start, "complete": complete,
            "endgame_seeds": max(db_seeds, 0), "endgame_seconds": db_seconds,
            "lower": None if lo == -math.inf else int(lo), "upper": None if up == math.inf else int(up)}


# -- depth-limited FSSS-Minimax on the game --------------------------------------------

@njit(cache=True, nogil=True)
def kalah_fsss(root_board, m, root_player, depth, eval_kind, empty_capture, counters, trace):
    """FSSS-Minimax (seed 000, Algorithm 2) to ``depth`` plies on Kalah.

    A preallocated, growing node pool holds each visited state's (L, U)
    bounds; children of an entry are allocated together, in the same order
    alpha-beta uses without a table (:func:`_order_moves`), with the move
    that leads to each. Boards are recomputed along the rollout path. Exact
    epsilon steps as in :mod:`jitsearch.search.fsss_minimax`. ``counters``:
    (node visits, frontier expansions); ``trace`` receives frontier path
    hashes. Returns (value, best move).
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
    path_ax[0] = -math.inf
    path_ak[0] = 0
    path_bx[0] = math.inf
    path_bk[0] = 0
    while bounds[0, 0] != bounds[0, 1]:
        d = 0
        while True:
            e = path_entry[d]
            mover = movers[d]
            counters[0] += 1
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
                _order_moves(boards[d], m, mover, empty_capture, moves, count, scratch, keys, -1)
                if used + count > bounds.shape[0]:
                    new_cap = bounds.shape[0] * 2
                    nb = np.empty((new_cap, 2), dtype=np.float64)
                    nf = np.empty(new_cap, dtype=np.int64)
                    nm = np.empty(new_cap, dtype=np.int64)
                    nb[:used] = bounds[:used]
                    nf[:used] = first[:used]
                    nm[:used] = move_of[:used]
                    bounds, first, move_of = nb, nf, nm
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
            best_i, nax, nak, nbx, nbk = select_child(
                mover == root_player, bounds, c0, nchild[d], path_ax[d], path_ak[d], path_bx[d], path_bk[d]
            )
            ce = c0 + best_i
            boards[d + 1] = boards[d]
            movers[d + 1] = apply_move(boards[d + 1], m, mover, move_of[ce], empty_capture)
            path_hash_[d + 1] = path_hash(path_hash_[d], move_of[ce])
            d += 1
            path_entry[d] = ce
            path_ax[d] = nax
            path_ak[d] = nak
            path_bx[d] = nbx
            path_bk[d] = nbk
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


def fsss_search(state: KalahState, depth: int, *, eval: str = "store", trace: bool = False) -> dict:
    """Depth-limited FSSS on ``state``; same value as :func:`search` without a table."""
    _check_depth(state, depth, eval)
    counters = np.zeros(2, dtype=np.int64)
    buf = np.zeros(_trace_capacity(state, depth) if trace else 0, dtype=np.uint64)
    value, move = kalah_fsss(state.board, state.houses, state.player, int(depth),
                             EVAL_STORE if eval == "store" else EVAL_HEURISTIC, state.empty_capture, counters, buf)
    out = {"value": float(value), "move": int(move), "nodes": int(counters[0]), "evaluations": int(counters[1]),
           "depth": int(depth), "pv": [int(move)]}
    if trace:
        out["frontier"] = buf[:min(int(counters[1]), buf.size)].copy()
    return out

"""The exact Kalah solver: MTD(f) over resumable null-window alpha-beta
tests to the end of the game, with seed-count bounds, a transposition table
of bounds on the rest of the game, endgame databases and checkpoints.

Values are player 0's final margin (stores plus the seeds each side keeps);
player 0 maximises. See :func:`solve_exact` and the test kernel
:func:`_kalah_mt`.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from typing import NamedTuple

import numpy as np
from numba import njit

from ...rng import GOLDEN, mix64
from ...trees.memory import check_bytes, format_bytes
from ._prefetch import prefetch_item
from .alphabeta import ABORTED_MOVE, EVAL_STORE, kalah_alphabeta, new_table, sort_by_key
from .checkpoint import check_checkpoint_dir, checkpoint_exists, load_solve_state, save_solve_state
from .endgame import build_endgame_database, rank_houses
from .endgame_files import EndgameDatabaseError, mark_damaged
from .state import KalahState, apply_move, legal_moves, margin_of


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


SOLVED, PAUSED, TABLE_FULL, DATABASE_DAMAGED = 0, 1, 2, 3
ABORTED = PAUSED  # the old name: a test stopped by its node limit (now resumable)


class MTStack(NamedTuple):
    """The caller-owned stack and registers of one :func:`_kalah_mt` test
    (:meth:`for_state` builds it).

    One row per ply, ``4 * seeds + 9`` rows (a game cannot last longer):
    ``boards`` (int32[D, 2m+2]), ``movers``, ``moves`` (int64[D, m]),
    ``nmoves``, ``kidx``, ``value``, ``best``, ``hashes``, ``diffs``,
    ``seeds_left``; scratch ``keys`` (float64[m]) and ``child``; registers
    ``regs`` (int64[3]: started, sp, entering) and ``fregs`` (float64[1]:
    the value being returned). ``regs[0] == 0`` (as built, and after a
    finished test) makes the next call start a new test.
    """

    boards: np.ndarray
    movers: np.ndarray
    moves: np.ndarray
    nmoves: np.ndarray
    kidx: np.ndarray
    value: np.ndarray
    best: np.ndarray
    hashes: np.ndarray
    diffs: np.ndarray
    seeds_left: np.ndarray
    keys: np.ndarray
    child: np.ndarray
    regs: np.ndarray
    fregs: np.ndarray

    @classmethod
    def for_state(cls, state: KalahState) -> "MTStack":
        m = state.houses
        n = 2 * m + 2
        rows = 4 * int(state.board.sum()) + 9
        i64 = np.int64
        return cls(boards=np.zeros((rows, n), dtype=state.board.dtype), movers=np.zeros(rows, dtype=i64),
                   moves=np.zeros((rows, m), dtype=i64), nmoves=np.zeros(rows, dtype=i64),
                   kidx=np.zeros(rows, dtype=i64), value=np.zeros(rows, dtype=np.float64),
                   best=np.zeros(rows, dtype=i64), hashes=np.zeros(rows, dtype=np.uint64),
                   diffs=np.zeros(rows, dtype=np.float64), seeds_left=np.zeros(rows, dtype=i64),
                   keys=np.zeros(m, dtype=np.float64), child=np.zeros(n, dtype=state.board.dtype),
                   regs=np.zeros(3, dtype=i64), fregs=np.zeros(1, dtype=np.float64))


class EndgameArrays(NamedTuple):
    """What the test kernel reads of an endgame database: ``values``
    (int8[2, size]), ``binom`` (the ranking's binomial table) and ``seeds``
    (the most seeds in the houses it answers; -1: no database)."""

    values: np.ndarray
    binom: np.ndarray
    seeds: int


#: No database: a placeholder the kernel never reads.
NO_DATABASE = EndgameArrays(np.zeros((2, 1), dtype=np.int8), np.zeros((1, 1), dtype=np.int64), -1)


class SolverOptions(NamedTuple):
    """Options of the test kernel that change the work, never a value (see
    :func:`solve_exact`): ``etc_min_seeds``, ``db_etc_window``, ``prefetch``."""

    etc_min_seeds: int
    db_etc_window: int
    prefetch: bool


_POLY = np.uint64(0x100000001B3)  # FNV-1a's 64-bit prime


@njit(cache=True, inline="always")
def houses_hash(board, m, player):
    """64-bit key of (the houses, the player to move), stores left out: the
    rest of the game depends on nothing else. A polynomial over the houses
    (one multiply per house) finished by one SplitMix64 round."""
    h = np.uint64(player + 1) * GOLDEN  # high bits: never confused with a house count
    for i in range(1, m + 1):
        h = (h ^ np.uint64(board[i])) * _POLY
    for i in range(m + 2, 2 * m + 2):
        h = (h ^ np.uint64(board[i])) * _POLY
    return mix64(h)


@njit(cache=True, nogil=True)
def _kalah_mt(root_board, m, root_player, gamma, empty_capture, table, counters, node_limit, options, db, stack):
    """Null-window test "margin >= gamma?" to the end of the game, resumable.

    Values are player 0's final margin; player 0 maximises. Fail-soft:
    returns (status, g, root move) with g >= gamma meaning margin >= g, else
    margin <= g; the root is always expanded (no cutoff from the table or the
    seed counts there) so the move is the one its own search found.

    ``options`` is a :class:`SolverOptions`, ``db`` an :class:`EndgameArrays`
    (:data:`NO_DATABASE` for none). The stack (``boards`` .. ``seeds_left``,
    one row per ply, at least ``4 * seeds + 9`` rows; ``keys``, ``child``:
    scratch) and the registers (``regs``: int64[3] = started, sp, entering;
    ``fregs``: float64[1] = the value being returned) belong to the caller
    (``stack``, an :class:`MTStack`). When
    ``counters[0]`` reaches ``node_limit`` before a node is entered the
    test stops with status ``PAUSED``; calling again with the same
    arguments (and a higher limit) continues exactly where it stopped, so a
    test run in chunks visits the same nodes and returns the same result as
    one run. ``regs[0] == 0`` starts a new test; SOLVED, TABLE_FULL and
    DATABASE_DAMAGED reset it. DATABASE_DAMAGED: a database value that no
    position can have (the rest of the game splits the ``r`` seeds left in
    the houses, so ``|v| <= r`` and ``v = r`` mod 2); ``g`` is then its
    flat index in ``db_values``.

    Two things make it fast (both from the literature on solving Kalah):

    * seed-count bounds: with stores s0, s1 and r seeds left in the houses the
      final margin lies in [s0 - s1 - r, s0 - s1 + r], so a node whose whole
      range is on one side of gamma is answered without a move;
    * the table is keyed on the houses and the player to move only, and keeps
      bounds on the *rest* of the game (final margin minus s0 - s1), so
      positions that differ only in how the stores split share one entry.

    With an endgame database (``db_seeds`` >= 0, see
    :mod:`jitsearch.games.kalah.endgame`) a node with at most ``db_seeds``
    seeds left in the houses takes its exact value from it. At a node with
    at most ``db_seeds + db_etc_window`` seeds, every child the database (or
    the end of the game) answers is looked up before any is searched (an
    enhanced transposition cutoff from the database): one that decides the
    test cuts at once, the others leave the move list with their best value
    kept, so they are never entered. Near the root (``etc_min_seeds``) the
    children's table entries are looked up the same way.

    Where the time goes (a profile of Kalah(6,4) with a 20-seed database):
    about 40% on the load of the node's table bucket and 20% on the
    database entry, both cache misses. So when a node's first child fails
    to cut (the node is most likely one whose every child is searched),
    ``prefetch`` hints the buckets and database entries of all its other
    children at once and the misses overlap.

    ``table`` is int64[cap, 4], one row per slot: the 64-bit key, the lower
    and the upper bound on the rest (float64 bit patterns, read through a
    float view) and ``best move + 256 * seeds left in the houses``. Slots
    pair into buckets (two-tier replacement): the even slot keeps the entry
    with the most seeds left (the biggest subtree), the odd one the most
    recent other entry; a new entry that beats the even slot's demotes it.
    """
    etc_min_seeds, db_etc_window, prefetch = options.etc_min_seeds, options.db_etc_window, options.prefetch
    db_values, db_binom, db_seeds = db.values, db.binom, db.seeds
    boards, movers, moves, nmoves, kidx, value = stack.boards, stack.movers, stack.moves, stack.nmoves, stack.kidx, \
        stack.value
    best, hashes, diffs, seeds_left, keys, child = stack.best, stack.hashes, stack.diffs, stack.seeds_left, \
        stack.keys, stack.child
    regs, fregs = stack.regs, stack.fregs
    n = 2 * m + 2
    total = 0
    for i in range(n):
        total += root_board[i]
    # every ply moves at least one seed forward: 4 * total + 8 plies is a safe bound on game length
    depth_cap = boards.shape[0] - 1
    cap = table.shape[0]
    mask = np.uint64(cap - 2)  # buckets of two slots: an even index
    tt_f = table.view(np.float64)
    table_flat = table.reshape(-1)
    db_flat = db_values.reshape(-1)
    etc_diff = np.empty(m, dtype=np.float64)
    etc_left = np.empty(m, dtype=np.int64)
    etc_kind = np.empty(m, dtype=np.int64)
    etc_key = np.empty(m, dtype=np.uint64)
    if regs[0] == 0:
        boards[0] = root_board
        movers[0] = root_player
        sp = 0
        entering = True
        ret = 0.0
        regs[0] = 1
    else:
        sp = regs[1]
        entering = regs[2] != 0
        ret = fregs[0]
    while True:
        if entering:
            if counters[0] >= node_limit:
                regs[1] = sp
                regs[2] = 1
                fregs[0] = ret
                return PAUSED, 0.0, -1
            counters[0] += 1
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
                    rank = rank_houses(board, m, db_binom)
                    dv = np.int64(db_values[mover, rank])
                    if dv > r or dv < -r or (dv + r) & 1:  # no position has it: the r seeds split otherwise
                        regs[0] = 0
                        return DATABASE_DAMAGED, np.float64(mover * db_values.shape[1] + rank), -1
                    ret = d + dv
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
            known = math.inf if mover == 1 else -math.inf  # the best exact child value taken out of the search
            known_move = -1
            if not done:
                count = legal_moves(board, m, mover, moves[sp])
                probe_table = seeds_left[sp] >= etc_min_seeds
                if sp > 0 and (probe_table or seeds_left[sp] <= db_seeds + db_etc_window):
                    # enhanced transposition cutoff: a child whose bounds
                    # (game over, seed counts, endgame database, table near
                    # the root) already decide the test. Children of exact
                    # value (over, or in the database) that do not are taken
                    # out of the move list, their best value kept in `known`.
                    # two passes: the children first, then their database and
                    # table entries, so the memory loads overlap
                    for j in range(count):
                        for i in range(n):
                            child[i] = board[i]
                        cm = apply_move(child, m, mover, moves[sp, j], empty_capture)
                        cd = np.float64(child[m + 1] - child[0])
                        cr = total - child[m + 1] - child[0]
                        etc_diff[j] = cd
                        etc_left[j] = cr
                        etc_kind[j] = 0
                        if cm < 0:
                            etc_kind[j] = 1  # over: exact
                        elif cr <= db_seeds:
                            etc_kind[j] = 2  # in the database: exact
                            etc_key[j] = np.uint64(cm * db_values.shape[1] + rank_houses(child, m, db_binom))
                        elif probe_table:
                            etc_kind[j] = 3  # the table may bound it
                            etc_key[j] = houses_hash(child, m, cm)
                    kept = 0
                    for j in range(count):
                        cd = etc_diff[j]
                        kind = etc_kind[j]
                        if kind == 1:
                            c_lo = cd
                            c_up = cd
                        elif kind == 2:
                            dv = np.int64(db_flat[np.int64(etc_key[j])])
                            if dv > etc_left[j] or dv < -etc_left[j] or (dv + etc_left[j]) & 1:
                                regs[0] = 0
                                return DATABASE_DAMAGED, np.float64(etc_key[j]), -1
                            c_lo = cd + dv
                            c_up = c_lo
                        else:
                            c_lo = cd - etc_left[j]
                            c_up = cd + etc_left[j]
                            if kind == 3:
                                ch = etc_key[j]
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
                        if c_lo == c_up:
                            if (mover == 0 and c_lo > known) or (mover == 1 and c_lo < known):
                                known = c_lo
                                known_move = moves[sp, j]
                        else:
                            moves[sp, kept] = moves[sp, j]
                            kept += 1
                    if not done:
                        count = kept
                        if count == 0:
                            ret = known
                            done = True
            if done:
                if sp == 0:
                    regs[0] = 0
                    return SOLVED, ret, -1  # the root is over
                sp -= 1
                entering = False
                continue
            _order_moves_cheap(board, m, mover, moves[sp], count, keys, tt_best, empty_capture)
            nmoves[sp] = count
            kidx[sp] = 0
            value[sp] = known
            best[sp] = moves[sp, 0] if known_move < 0 else known_move
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
                regs[0] = 0
                return TABLE_FULL, 0.0, -1
            if k == 1 and prefetch:
                # the first child did not cut: most likely every child will be
                # searched, so ask for all their table buckets and database
                # entries now and let the memory loads overlap
                mover = movers[sp]
                for j in range(1, nmoves[sp]):
                    for i in range(n):
                        child[i] = boards[sp, i]
                    cm = apply_move(child, m, mover, moves[sp, j], empty_capture)
                    if cm < 0:
                        continue
                    cd = np.float64(child[m + 1] - child[0])
                    cr = total - child[m + 1] - child[0]
                    if cd + cr < gamma or cd - cr >= gamma:
                        continue
                    if cr <= db_seeds:
                        prefetch_item(db_flat, cm * db_values.shape[1] + rank_houses(child, m, db_binom))
                    else:
                        prefetch_item(table_flat, np.int64(houses_hash(child, m, cm) & mask) * 4)
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
            regs[0] = 0
            return SOLVED, ret, best[0]
        sp -= 1
        entering = False


def _database_damaged(endgame_db: dict, what: str):
    """Stop a solve whose endgame database proved damaged: flag its record
    (the next use rebuilds it) and raise :class:`EndgameDatabaseError`."""
    path = endgame_db.get("path")
    if path:
        mark_damaged(path, what)
        where = f"the endgame database {path}"
        fix = "it is flagged and will be rebuilt on its next use (or delete it)"
    else:
        where = "the endgame database given"
        fix = "build it again"
    raise EndgameDatabaseError(f"{where} is damaged ({what}); no exact value can be trusted from it: {fix}")


def _estimate(state: KalahState, node_budget: int, out: dict, deadline: float | None = None) -> dict:
    """The iterations of :func:`estimate_position`, recorded into ``out`` as
    each one finishes (so an interrupted estimate keeps its last result)."""
    table = new_table(1 << 16)
    counters = np.zeros(2, dtype=np.int64)
    no_trace = np.zeros(0, dtype=np.uint64)
    out.setdefault("nodes", 0)
    for depth in range(2, 41, 2):
        counters[:] = 0
        value, move = kalah_alphabeta(state.board, state.houses, state.player, depth, EVAL_STORE,
                                      state.empty_capture, True, *table, counters, no_trace, int(node_budget))
        out["nodes"] += int(counters[0])
        if move == ABORTED_MOVE:
            break
        guess = int(round(value if state.player == 0 else -value))
        if (guess - int(state.board.sum())) % 2:
            guess += 1
        out.update(margin=guess, move=int(move), depth=depth)  # one call: an interrupt sees all or nothing
        if counters[0] > node_budget // 4 or (deadline is not None and time.perf_counter() >= deadline):
            break
    return out


def estimate_position(state: KalahState, node_budget: int = 2_000_000) -> dict:
    """MTD(f)'s first guess and a move: depth-limited alpha-beta with the
    store difference, deepened two plies at a time while an iteration takes
    under a quarter of ``node_budget`` nodes (about 16 plies on Kalah(6,4));
    an iteration that would pass ``node_budget`` nodes is abandoned (so one
    kernel call stays well under a second) and the deepest finished one is
    used. Counted in nodes, not seconds, so the guess is the same on every run.

    Returns ``{"margin": player 0's margin with the parity of the seed total
    (every final margin has it), "move": the best move of the deepest
    finished iteration (-1 if none finished), "depth", "nodes"}``.
    """
    if state.is_over:
        raise ValueError("the game is over: nothing to search")
    _check_int("node_budget", node_budget, 1)
    out = _estimate(state, node_budget, {"nodes": 0})
    margin = out.get("margin")
    if margin is None:
        margin = int(state.board.sum()) % 2
    return {"margin": margin, "move": out.get("move", -1), "depth": out.get("depth", 0), "nodes": out["nodes"]}


def estimate_margin(state: KalahState, node_budget: int = 2_000_000) -> int:
    """MTD(f)'s first guess as player 0's margin (see :func:`estimate_position`)."""
    return estimate_position(state, node_budget)["margin"]


MAX_TIME_LIMIT = 1e7  # seconds (about 116 days)
MIN_TABLE_SLOTS = 1 << 10
MAX_DEFAULT_TABLE_SLOTS = 1 << 24
TABLE_ROW_BYTES = 32
_CHUNK_SECONDS = 0.35  # target length of one kernel call
_FIRST_CHUNK_NODES = 200_000
_PROGRESS_SECONDS = 1.0  # the longest gap between two progress calls (plus one chunk)
_ESTIMATE_NODES = 2_000_000
DB_ETC_WINDOW = -1  # measured: 35-42% fewer nodes but 5-6% slower (bench/kalah_solver_variants.py)
PREFETCH_MIN_BYTES = 64 << 20  # a table and database this big miss the caches (L3: 32 MiB here)


def _check_int(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        where = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise ValueError(f"{name} must be an integer {where}, got {value!r}")


def _check_solve_args(state, tt_capacity, time_limit, first_guess, progress, max_bytes, etc_min_seeds,
                      endgame_seeds, endgame_db, chunk_nodes, endgame_progress):
    if not isinstance(state, KalahState):
        raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
    if tt_capacity is not None:
        _check_int("tt_capacity", tt_capacity, 16, 1 << 40)
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer, np.floating)):
            raise ValueError(f"time_limit must be a number of seconds, got {time_limit!r}")
        if not (math.isfinite(time_limit) and 0 < time_limit <= MAX_TIME_LIMIT):
            raise ValueError(f"time_limit must be a finite number of seconds in (0, {MAX_TIME_LIMIT:g}], "
                             f"got {time_limit!r}")
    if first_guess is not None:
        _check_int("first_guess", first_guess, -(1 << 40), 1 << 40)
    for name, fn in (("progress", progress), ("endgame_progress", endgame_progress)):
        if fn is not None and not callable(fn):
            raise ValueError(f"{name} must be callable or None, got {fn!r}")
    _check_int("max_bytes", max_bytes, 1)
    _check_int("etc_min_seeds", etc_min_seeds, 0)
    _check_int("endgame_seeds", endgame_seeds, 0, 127)
    if chunk_nodes is not None:
        _check_int("chunk_nodes", chunk_nodes, 1)
    if endgame_db is not None:
        if not isinstance(endgame_db, dict) or not {"houses", "empty_capture", "values", "binom",
                                                    "max_seeds"} <= set(endgame_db):
            raise ValueError("endgame_db must be a database from build_endgame_database")
        if endgame_db["houses"] != state.houses or endgame_db["empty_capture"] != state.empty_capture:
            raise ValueError("the endgame database is for another board size or rule variant")


def table_slots_for(state: KalahState, endgame_seeds: int = 0, max_bytes: int = 4 * 1024**3) -> int:
    """The transposition table's size when the caller gives none.

    The table is keyed on (houses, player to move); with r seeds in the
    houses there are at most C(r + 2m - 1, 2m - 1) distributions of them for
    each player, fewer as seeds reach the stores. That count, times two,
    divided by 16 (a search stores far fewer positions than that bound:
    Kalah(4,3) solves in about 21,000 nodes) and rounded down to a power of
    two, clamped to [2**10, 2**24] slots and halved until it fits
    ``max_bytes`` (32 bytes a slot). Positions the endgame database answers
    are never stored. Kalah(3,3): 2**12 slots (128 KiB), Kalah(4,3): 2**18
    (8 MiB), Kalah(4,4): 2**20 (32 MiB), Kalah(5,4) and up: 2**24 (512 MiB).
    """
    m = state.houses
    r = int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])
    count = 2 if r <= endgame_seeds else 2 * math.comb(r + 2 * m - 1, 2 * m - 1) // 16
    cap = 1 << max(count.bit_length() - 1, 0)
    cap = min(max(cap, MIN_TABLE_SLOTS), MAX_DEFAULT_TABLE_SLOTS)
    while cap > MIN_TABLE_SLOTS and cap * TABLE_ROW_BYTES > max_bytes:
        cap >>= 1
    return cap


def _allocate(shape, dtype, what: str, fix: str) -> np.ndarray:
    """``np.zeros`` whose failure is a one-line ValueError saying what to lower."""
    try:
        return np.zeros(shape, dtype=dtype)
    except (MemoryError, ValueError):
        nbytes = float(np.prod(np.asarray(shape, dtype=np.float64))) * np.dtype(dtype).itemsize
        raise ValueError(f"could not allocate {what} ({format_bytes(nbytes)}): {fix}") from None


def _root_table_move(state: KalahState, table) -> int:
    """The move stored in the root's table entry, or -1."""
    cap = table.shape[0]
    h = int(_houses_hash(state.board, state.houses, state.player))
    for slot in ((h & (cap - 2)), (h & (cap - 2)) + 1):
        if int(table[slot, 0]) & ((1 << 64) - 1) == h:
            return int(table[slot, 3] & 255)
    return -1


def solve_exact(state: KalahState, *, tt_capacity: int | None = None, time_limit: float | None = None,
                first_guess: int | None = None, progress=None, max_bytes: int = 4 * 1024**3,
                etc_min_seeds: int = 1 << 30, endgame_seeds: int = 0, endgame_db: dict | None = None,
                endgame_cache_dir=None, chunk_nodes: int | None = None, endgame_progress=None,
                db_etc_window: int = DB_ETC_WINDOW, checkpoint=None, resume: bool = False,
                checkpoint_seconds: float = 600.0, prefetch: bool | None = None) -> dict:
    """Game-theoretic value (player 0's final margin under perfect play) and
    the best move, by MTD(f) with a transposition table.

    Parameters
    ----------
    state : the position (player 0 maximises; values are player 0's margin).
    tt_capacity : table slots (rounded up to a power of two, >= 16); None
        sizes it from the position (:func:`table_slots_for`).
    time_limit : seconds, finite, in (0, 1e7]; None: until solved.
    first_guess : MTD(f)'s first guess; None: :func:`estimate_position`.
    progress : ``progress(iteration, lo, up, nodes, seconds)``, called after
        every finished null-window test (``iteration`` = tests finished so
        far) and, while a test runs, about every second with the same
        ``iteration`` (a heartbeat; the first test gives 0). ``lo``/``up``
        are the current integer bounds on the margin, ``seconds`` the time
        since the start.
    max_bytes : ceiling for the table and the endgame database.
    endgame_seeds, endgame_db, endgame_cache_dir : an endgame database of
        positions with at most ``endgame_seeds`` (0..127) seeds in the
        houses, given or built (and cached in ``endgame_cache_dir``, see
        :func:`jitsearch.games.kalah.endgame.build_endgame_database`).
    endgame_progress : ``endgame_progress(positions_done, positions_total,
        seconds)`` during a database build, about every second.
    chunk_nodes : nodes per kernel call; None sizes the calls from the
        measured node rate to last about 0.35 s. Results never depend on it.
    etc_min_seeds : enhanced transposition cutoffs (every child's table
        entry looked up before the first is searched) at nodes with at least
        this many seeds in the houses: near the root only.
    db_etc_window : at nodes with at most ``endgame seeds + db_etc_window``
        seeds in the houses, every child the endgame database answers is
        looked up first, and one that decides the test cuts at once (-1:
        off). Results never depend on either; node counts do.
    prefetch : prefetch the children's table buckets and database entries
        once a node's first child has failed to cut (never changes a value
        or a node count). None (default): when the table and database
        together exceed :data:`PREFETCH_MIN_BYTES`, so that their loads
        miss the caches; on a board whose table fits them it only costs the
        extra moves (Kalah(4,4): 1.6x slower).
    checkpoint, resume, checkpoint_seconds : a directory where the solve's
        whole state (table, bounds, the test in progress) is saved every
        ``checkpoint_seconds`` and when it stops unfinished (see
        :mod:`jitsearch.games.kalah.checkpoint`); ``resume=True``
        continues from it node for node (a missing checkpoint starts afresh).
        An existing checkpoint without ``resume`` is refused, so that hours
        of work are never overwritten by mistake.

    Returns
    -------
    dict with ``margin`` (None unless complete), ``lower``/``upper`` (integer
    bounds on the margin, never None: they start from the seed counts and
    tighten with every finished test), ``best_move`` (a legal move whenever
    the game is not over) and ``best_move_source``: ``"exact"`` (complete:
    an optimal move), ``"bound"`` (the move proving the mover's current
    bound), ``"heuristic"`` (the first-guess alpha-beta's move) or
    ``"table"`` (the root's table entry); ``complete``, ``interrupted``
    (Ctrl-C stopped it: a KeyboardInterrupt is caught and the partial
    result returned), ``stop_reason`` (None, ``"time_limit"``,
    ``"interrupted"``, ``"table_full"``), ``nodes``, ``iterations``,
    ``seconds`` (this run), ``total_seconds`` (with the runs before a
    resume), ``table_slots``, ``first_guess``, ``estimate_nodes``,
    ``endgame_seeds``, ``endgame_seconds``, ``resumed`` and ``checkpoint``.
    """
    _check_solve_args(state, tt_capacity, time_limit, first_guess, progress, max_bytes, etc_min_seeds,
                      endgame_seeds, endgame_db, chunk_nodes, endgame_progress)
    _check_int("db_etc_window", db_etc_window, -1, 127)
    if prefetch is not None and not isinstance(prefetch, (bool, np.bool_)):
        raise ValueError(f"prefetch must be True, False or None (automatic), got {prefetch!r}")
    if checkpoint is not None:
        if isinstance(checkpoint_seconds, bool) or not isinstance(checkpoint_seconds, (int, float)) or not (
                math.isfinite(checkpoint_seconds) and checkpoint_seconds > 0):
            raise ValueError(f"checkpoint_seconds must be a positive number, got {checkpoint_seconds!r}")
        if os.path.exists(checkpoint) and not os.path.isdir(checkpoint):
            raise ValueError(f"checkpoint {checkpoint} is a file; a solve checkpoint is a directory")
        if checkpoint_exists(checkpoint) and not resume:
            raise ValueError(f"checkpoint {checkpoint} already holds a solve: resume it (resume=True, --resume) "
                             "or remove it")
    elif resume:
        raise ValueError("resume=True needs a checkpoint")
    if state.is_over:
        return {"margin": state.margin, "best_move": -1, "best_move_source": None, "nodes": 0, "iterations": 0,
                "seconds": 0.0, "total_seconds": 0.0, "resumed": False, "checkpoint": None,
                "complete": True, "interrupted": False, "stop_reason": None,
                "lower": state.margin, "upper": state.margin, "endgame_seeds": 0, "endgame_seconds": 0.0,
                "table_slots": 0, "first_guess": None, "estimate_nodes": 0}
    m = state.houses
    db_wanted = endgame_db["max_seeds"] if endgame_db is not None else endgame_seeds
    if tt_capacity is None:
        cap = table_slots_for(state, db_wanted, max_bytes)
    else:
        cap = 1 << max(4, int(tt_capacity - 1).bit_length())
    fix = "lower the table size (tt_capacity, --table-size) or raise max_bytes (--max-memory)"
    check_bytes(cap * TABLE_ROW_BYTES, max_bytes, f"a transposition table of {cap} slots", fix)
    identity = {"position": state.to_text(), "player": int(state.player), "empty_capture": bool(state.empty_capture),
                "table_slots": int(cap), "endgame_seeds": int(db_wanted), "etc_min_seeds": int(etc_min_seeds),
                "db_etc_window": int(db_etc_window)}
    saved = None
    if checkpoint is not None:
        check_checkpoint_dir(checkpoint, cap * TABLE_ROW_BYTES)
    if checkpoint is not None and resume:
        if checkpoint_exists(checkpoint):
            saved = load_solve_state(checkpoint, identity)
    stack = MTStack.for_state(state)
    counters = np.zeros(1, dtype=np.int64)
    if saved is not None:
        table = saved["table"]
        for field, arr in saved["stack"].items():
            mine = getattr(stack, field)
            if mine.shape != arr.shape:
                raise ValueError(f"{checkpoint}: the saved stack's {field} has shape {arr.shape}, not {mine.shape}")
            mine[...] = arr
        counters[0] = int(saved["progress"]["nodes"])
    else:
        table = _allocate((cap, 4), np.int64, f"a transposition table of {cap} slots", fix)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + float(time_limit)
    seeds_in_houses = int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])
    diff = int(state.board[m + 1]) - int(state.board[0])
    # (lo, up, best move proving the mover's bound, tests finished): replaced as one tuple, so an
    # interrupt never sees a bound without its move
    record = (diff - seeds_in_houses, diff + seeds_in_houses, -1, 0)
    estimate = {"nodes": 0}
    gamma = None
    saved_g = None
    before_seconds = 0.0
    if saved is not None:
        p = saved["progress"]
        record = tuple(int(x) for x in p["record"])
        estimate = dict(p["estimate"])
        first_guess = p["first_guess"]
        gamma = p["gamma"]
        saved_g = p["g"]
        before_seconds = float(p["seconds"])
    stop = None
    db_seconds = 0.0
    db_seeds = -1
    last_report = start
    last_save = start
    g = None

    def save_checkpoint():
        progress_fields = {"record": [int(x) for x in record], "gamma": gamma, "g": g, "nodes": int(counters[0]),
                           "first_guess": first_guess, "estimate": estimate,
                           "seconds": before_seconds + time.perf_counter() - start}
        try:
            save_solve_state(checkpoint, identity, progress_fields, table, stack)
        except OSError as exc:  # the solve goes on; the previous checkpoint stays whole
            warnings.warn(f"could not save the checkpoint {checkpoint}: {exc}", stacklevel=2)

    try:
        if endgame_db is None and endgame_seeds > 0:
            endgame_db = build_endgame_database(m, endgame_seeds, state.empty_capture, max_bytes=max_bytes,
                                                cache_dir=endgame_cache_dir, progress=endgame_progress,
                                                deadline=deadline)
            db_seconds = time.perf_counter() - start
            if endgame_db is None:
                stop = "time_limit"
        db = NO_DATABASE
        if endgame_db is not None:
            db = EndgameArrays(endgame_db["values"], endgame_db["binom"], int(endgame_db["max_seeds"]))
            db_seeds = db.seeds
        if prefetch is None:
            prefetch = table.nbytes + db.values.nbytes > PREFETCH_MIN_BYTES
        options = SolverOptions(int(etc_min_seeds), int(db_etc_window), bool(prefetch))
        if stop is None and first_guess is None:
            _estimate(state, _ESTIMATE_NODES, estimate, deadline)
            first_guess = estimate.get("margin", int(state.board.sum()) % 2)
            if deadline is not None and time.perf_counter() >= deadline:
                stop = "time_limit"
        lo, up = record[0], record[1]
        g = min(max(int(first_guess or 0) if saved_g is None else int(saved_g), lo), up)
        chunk = chunk_nodes or _FIRST_CHUNK_NODES
        kernel_nodes, kernel_seconds = 0, 0.0
        while stop is None and lo < up:
            if stack.regs[0] == 0:  # a new test (else the checkpoint's test goes on at its gamma)
                gamma = g + 1 if g == lo else g  # gamma in (lo, up]: every test moves a bound
            while True:
                now = time.perf_counter()
                if deadline is not None and now >= deadline:
                    stop = "time_limit"
                    break
                if progress and now - last_report >= _PROGRESS_SECONDS:
                    progress(record[3], int(lo), int(up), int(counters[0]), now - start)
                    last_report = now
                size = chunk
                if chunk_nodes is None and deadline is not None and kernel_seconds > 0:
                    size = min(size, max(int(kernel_nodes / kernel_seconds * (deadline - now)) + 1, 1000))
                before = int(counters[0])
                status, g_new, root_move = _kalah_mt(
                    state.board, m, state.player, float(gamma), state.empty_capture, table, counters,
                    before + size, options, db, stack)
                dt = time.perf_counter() - now
                kernel_nodes += int(counters[0]) - before
                kernel_seconds += dt
                if chunk_nodes is None and kernel_seconds > 0.02:
                    chunk = int(min(max(kernel_nodes / kernel_seconds * _CHUNK_SECONDS, 10_000), 1 << 40))
                if status != PAUSED:
                    break
                if checkpoint is not None and time.perf_counter() - last_save >= checkpoint_seconds:
                    save_checkpoint()
                    last_save = time.perf_counter()
            if stop is not None:
                break
            if status == TABLE_FULL:
                stop = "table_full"
                break
            if status == DATABASE_DAMAGED:
                _database_damaged(endgame_db, f"entry {int(g_new)} holds an impossible value")
            g_new = int(g_new)
            if (g_new >= gamma and g_new > up) or (g_new < gamma and g_new < lo):
                # a test proved a bound outside the bounds proved before: impossible for a sound search
                what = f"a test at {gamma} returned {g_new}, outside the bounds [{lo}, {up}] proved before"
                if endgame_db is not None:
                    _database_damaged(endgame_db, what)
                raise RuntimeError(f"internal error in the Kalah solver: {what}")
            best = record[2]
            if g_new >= gamma:
                lo = max(lo, g_new)
            else:
                up = min(up, g_new)
            # the test that moved the mover's own bound names its best move: a
            # fail-high for player 0 (margin >= g via that move), a fail-low for 1
            if (g_new >= gamma) == (state.player == 0) and root_move >= 0:
                best = int(root_move)
            record = (lo, up, best, record[3] + 1)
            g = min(max(g_new, lo), up)
            if progress:
                last_report = time.perf_counter()
                progress(record[3], int(lo), int(up), int(counters[0]), last_report - start)
    except KeyboardInterrupt:
        stop = "interrupted"
    if checkpoint is not None and (stop is not None or record[0] >= record[1]):
        save_checkpoint()  # also when complete: a resume then answers at once
    lo, up, best, iterations = record
    complete = lo >= up
    legal = state.legal_moves()
    source = None
    if complete:
        source = "exact"
        if best not in legal:
            # no test moved the mover's own bound: the value is the worst the
            # seed counts allow the mover, so every move attains it
            best = _root_table_move(state, table)
            best = best if best in legal else legal[0]
    elif best in legal:
        source = "bound"
    elif estimate.get("move", -1) in legal:
        best, source = estimate["move"], "heuristic"
    else:
        best, source = _root_table_move(state, table), "table"
        if best not in legal:
            quick = _estimate(state, 20_000, {"nodes": 0})
            best, source = quick.get("move", legal[0]), "heuristic"
            if best not in legal:
                best = legal[0]
    return {"margin": int(lo) if complete else None, "best_move": int(best), "best_move_source": source,
            "nodes": int(counters[0]), "iterations": iterations, "seconds": time.perf_counter() - start,
            "total_seconds": before_seconds + time.perf_counter() - start, "resumed": saved is not None,
            "checkpoint": None if checkpoint is None else str(checkpoint),
            "complete": complete, "interrupted": (not complete) and stop == "interrupted",
            "stop_reason": None if complete else stop, "lower": int(lo), "upper": int(up),
            "endgame_seeds": max(db_seeds, 0), "endgame_seconds": db_seconds, "table_slots": int(cap),
            "first_guess": None if first_guess is None else int(first_guess), "estimate_nodes": estimate["nodes"]}


@njit(cache=True)
def _houses_hash(board, m, player):
    return houses_hash(board, m, player)

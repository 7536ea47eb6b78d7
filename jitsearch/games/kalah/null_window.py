"""The null-window test of the exact Kalah solver: "is player 0's final
margin >= gamma?" searched to the end of the game, resumable node for node
(the kernel :func:`null_window_test`, its caller-owned stack
:class:`MTStack` and its option and database records). MTD(f) around it is
:func:`jitsearch.games.kalah.solver.solve_exact`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ...rng import GOLDEN, mix64
from ._prefetch import (borrowed, data_address, pload_i8, pload_i16, pload_i64, pload_u64, prefetch_addr, prefetch_item,
                        pstore_i16, pstore_i64, pstore_u64, pvload, pvstore, uget, uset)
from ._simd import host_has_simd, lowest_bit, vadd, vand, vget, vmask_positive, vmul, vor, vsplat
from .simd_rules import MAX_SIMD_HOUSES, simd_tables
from .alphabeta import sort_by_key
from .endgame import rank_houses
from .rules import GAME_OVER
from .state import KalahState, apply_move, legal_moves, margin_of


@njit(cache=True, inline="always")
def _order_kids(board, m, player, moves, count, keys, tt_move, kids, kid_movers):
    """Solver ordering by the children already made (:func:`_fill_kids`):
    the table's move, then extra turns (the one nearest the store first),
    then by the seeds the move adds to the mover's store net of the
    opponent's (captures, laps past the store, the end-of-game sweep), ties
    from the house nearest the store.

    The key CMancala (Kurtz, v12.2, ``solver_template.h``) sorts on.
    Measured against the arithmetic ordering it replaces (table move, extra
    turns, captures by the seeds opposite, then the house nearest the store,
    without trying the moves): 4.9x fewer nodes on the Kalah(6,4) suite's
    positions 2 and 4 with a 16-seed database (1,774,496 -> 365,137 and
    23,554,771 -> 4,704,354; bench/kalah_solver_variants.py). The
    arithmetic key ranked a move that passes the store no higher than one
    that stops short and did not see the end-of-game sweep; which of these
    matters most was not measured. The table's move first changes under 0.2% of the nodes but is
    kept, as it is free.
    """
    first = 1 if player == 0 else m + 2
    for j in range(count):
        pit = moves[j]
        child = kids[pit - first]
        cm = kid_movers[pit - first]
        gain = (child[m + 1] - child[0]) - (board[m + 1] - board[0])
        if player == 1:
            gain = -gain
        dist = (m + 1 - pit) if player == 0 else (2 * m + 2 - pit)
        key = np.float64(gain) * 1024.0 - dist  # dist <= m < 1024; |gain| <= the seeds, far below 1e8 / 1024
        if cm == player:
            key += 1e8
        if pit == tt_move:
            key += 1e10
        keys[j] = key
    sort_by_key(moves, keys, count)


@njit(cache=True, inline="always")
def _sow_into(src, so, dst, do, m, player, pit, empty_capture):
    """``dst[do:do + 2m + 2]`` = the board ``src[so:so + 2m + 2]`` after
    ``player`` sows ``pit``; returns the player to move next (GAME_OVER at
    the end). The rules of :func:`.rules._apply_move` (laps, captures,
    ``empty_capture``, the final sweep) with every index known to lie on
    the board, so no access pays Numba's negative-index wraparound, and
    inlined into the kernel (the rules' own build is a call)."""
    n = 2 * m + 2
    for i in range(n):
        uset(dst, do + i, uget(src, so + i))
    own_store = m + 1 if player == 0 else 0
    seeds = np.int64(uget(dst, do + pit))
    uset(dst, do + pit, 0)
    end = pit + seeds
    if end <= n - 1:
        for i in range(do + pit + 1, do + end + 1):
            uset(dst, i, uget(dst, i) + 1)
        pos = end
    else:
        ring = n - 1
        rem = seeds
        if seeds >= ring:
            laps = seeds // ring
            rem = seeds - laps * ring
            for i in range(do, do + n):
                uset(dst, i, uget(dst, i) + laps)
            skip = do + (0 if player == 0 else m + 1)
            uset(dst, skip, uget(dst, skip) - laps)
        pos = pit
        top = min(pit + rem, n - 1)
        for i in range(pit + 1, top + 1):
            uset(dst, do + i, uget(dst, do + i) + 1)
            pos = i
        rest = rem - (top - pit)
        if rest > 0:
            if player == 0:  # skip index 0 (player 1's store)
                for i in range(1, rest + 1):
                    uset(dst, do + i, uget(dst, do + i) + 1)
                pos = rest
            else:  # own store 0 and player 0's houses, skip index m + 1, then own houses
                low = min(rest, m + 1)
                for i in range(low):
                    uset(dst, do + i, uget(dst, do + i) + 1)
                pos = low - 1
                high = rest - low
                for i in range(m + 2, m + 2 + high):
                    uset(dst, do + i, uget(dst, do + i) + 1)
                if high > 0:
                    pos = m + 1 + high
    nxt = 1 - player
    if pos == own_store:
        nxt = player
    else:
        first = 1 if player == 0 else m + 2
        if first <= pos < first + m and uget(dst, do + pos) == 1:
            opposite = n - pos
            if uget(dst, do + opposite) > 0 or empty_capture:
                uset(dst, do + own_store, uget(dst, do + own_store) + uget(dst, do + opposite) + 1)
                uset(dst, do + opposite, 0)
                uset(dst, do + pos, 0)
    s0 = 0
    for i in range(do + 1, do + m + 1):
        s0 += uget(dst, i)
    s1 = 0
    for i in range(do + m + 2, do + n):
        s1 += uget(dst, i)
    if s0 == 0 or s1 == 0:
        for i in range(do + 1, do + m + 1):
            uset(dst, i, 0)
        for i in range(do + m + 2, do + n):
            uset(dst, i, 0)
        uset(dst, do + m + 1, uget(dst, do + m + 1) + s0)
        uset(dst, do, uget(dst, do) + s1)
        return -1
    return nxt


@njit(cache=True, inline="always")
def _fill_kids(board, m, player, moves, count, empty_capture, kids, kid_movers):
    """The children of ``moves[:count]`` into ``kids`` and ``kid_movers``
    (indexed by pit - the mover's first house), each move sown once a node:
    the enhanced transposition cutoffs, the ordering, the prefetches and
    the descent all read them."""
    n = 2 * m + 2
    first = 1 if player == 0 else m + 2
    flat = kids.reshape(-1)
    for j in range(count):
        pit = moves[j]
        kid_movers[pit - first] = _sow_into(board, 0, flat, (pit - first) * n, m, player, pit, empty_capture)


SOLVED, PAUSED, TABLE_FULL, DATABASE_DAMAGED = 0, 1, 2, 3
ABORTED = PAUSED  # the old name: a test stopped by its node limit (now resumable)


class MTStack(NamedTuple):
    """The caller-owned stack and registers of one :func:`null_window_test` test
    (:meth:`for_state` builds it).

    One row per ply, ``4 * seeds + 9`` rows (a game cannot last longer):
    ``boards`` (int32[D, 2m+2]), ``movers``, ``moves`` (int64[D, m]),
    ``nmoves``, ``kidx``, ``value``, ``best``, ``hashes``, ``diffs``,
    ``seeds_left``; scratch ``keys`` (float64[m]) and ``child``; registers
    ``regs`` (int64[3]: started, sp, entering) and ``fregs`` (float64[1]:
    the value being returned). ``regs[0] == 0`` (as built, and after a
    finished test) makes the next call start a new test. The fields after
    ``fregs`` are the kernel's scratch (the children of every ply in
    progress, their keys, the cutoffs' work rows): rebuilt as needed, never
    saved in a checkpoint.
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
    kid_boards: np.ndarray
    kid_movers: np.ndarray
    kid_hash: np.ndarray
    kid_hash_ok: np.ndarray
    pre_hash: np.ndarray
    pre_ok: np.ndarray
    etc_diff: np.ndarray
    etc_left: np.ndarray
    etc_kind: np.ndarray
    etc_key: np.ndarray
    child_mover: np.ndarray

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
                   regs=np.zeros(3, dtype=i64), fregs=np.zeros(1, dtype=np.float64),
                   kid_boards=np.zeros((rows, m, n), dtype=state.board.dtype), kid_movers=np.zeros((rows, m), dtype=i64),
                   kid_hash=np.zeros((rows, m), dtype=np.uint64), kid_hash_ok=np.zeros((rows, m), dtype=np.bool_),
                   pre_hash=np.zeros(rows, dtype=np.uint64), pre_ok=np.zeros(rows, dtype=np.bool_),
                   etc_diff=np.zeros(m, dtype=np.float64), etc_left=np.zeros(m, dtype=i64),
                   etc_kind=np.zeros(m, dtype=i64), etc_key=np.zeros(m, dtype=np.uint64),
                   child_mover=np.zeros(m, dtype=i64))


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
#: A table entry's bounds when it has none (int16): true of the rest of any
#: game (a KalahState holds at most :data:`.state.MAX_SEEDS` = 1000 seeds),
#: so never a cutoff.
NO_LOWER, NO_UPPER = np.int16(-32768), np.int16(32767)


@njit(cache=True, inline="always")
def houses_hash(board, m, player):
    """64-bit key of the houses seen from the player to move (the mover's
    houses, then the opponent's), stores left out: the rest of the game
    depends on nothing else, and a position and its mirror image with the
    other player to move share one key (as CMancala's table and Irving's
    do). A polynomial over the houses (one multiply per house) finished by
    one SplitMix64 round."""
    h = GOLDEN
    a = 1 if player == 0 else m + 2
    b = m + 2 if player == 0 else 1
    for i in range(m):
        h = (h ^ np.uint64(board[a + i])) * _POLY
    for i in range(m):
        h = (h ^ np.uint64(board[b + i])) * _POLY
    return mix64(h)


@njit(cache=True, nogil=True)
def null_window_test(root_board, m, root_player, gamma, empty_capture, table, counters, node_limit, options, db, stack):
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

    What makes it fast (all from the literature on solving Kalah):

    * seed-count bounds: with stores s0, s1 and r seeds left in the houses the
      final margin lies in [s0 - s1 - r, s0 - s1 + r], so a node whose whole
      range is on one side of gamma is answered without a move;
    * the table is keyed on the houses seen from the player to move only,
      and keeps bounds on the *rest* of the game for that player, so
      positions that differ only in how the stores split, or that mirror
      each other with the other player to move, share one entry;
    * the children are made once a node (:func:`_fill_kids`) and ordered by
      what each move gains (:func:`_order_kids`):
      extra turns, then the seeds won.

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
    children at once and the misses overlap. A later profile (the Kalah(6,4)
    suite's positions 4 and 5, 16-seed database, each move sown once a
    node) puts 25-28% of the time on the table probes of the cutoffs near
    the root (``etc_min_seeds``); prefetching those buckets in the
    cutoffs' first pass was no faster (paired runs, 12.4 against 12.8 CPU
    seconds), and turning the cutoffs off saves their probes but costs as
    much in the 34% more nodes it searches.

    ``table`` is int64[cap, 2], one 16-byte row per slot: the 64-bit key
    (:func:`houses_hash`: the houses seen from the player to move), then
    four int16 read through a view: the lower and the upper bound on the
    rest of the game for the player to move (its store gain less the
    opponent's; :data:`NO_LOWER` / :data:`NO_UPPER` for none), the best
    move counted from the mover's first house and the seeds left in the
    houses (int16: a board holds at most 1000 seeds). A position and
    its mirror image with the other player to move share the entry. Slots
    pair into buckets (two-tier replacement): the even slot keeps the entry
    with the most seeds left (the biggest subtree), the odd one the most
    recent other entry; a new entry that beats the even slot's demotes it.
    """
    etc_min_seeds, db_etc_window, prefetch = options.etc_min_seeds, options.db_etc_window, options.prefetch
    # every array without its reference count (borrowed): the caller holds them for the whole call
    db_values, db_binom, db_seeds = borrowed(db.values), borrowed(db.binom), db.seeds
    boards, movers, moves = borrowed(stack.boards), borrowed(stack.movers), borrowed(stack.moves)
    nmoves, kidx, value = borrowed(stack.nmoves), borrowed(stack.kidx), borrowed(stack.value)
    best, hashes, diffs = borrowed(stack.best), borrowed(stack.hashes), borrowed(stack.diffs)
    seeds_left, keys = borrowed(stack.seeds_left), borrowed(stack.keys)
    regs, fregs = borrowed(stack.regs), borrowed(stack.fregs)
    table = borrowed(table)
    counters = borrowed(counters)
    n = 2 * m + 2
    total = 0
    for i in range(n):
        total += root_board[i]
    # every ply moves at least one seed forward: 4 * total + 8 plies is a safe bound on game length
    depth_cap = boards.shape[0] - 1
    cap = table.shape[0]
    mask = np.uint64(cap - 2)  # buckets of two slots: an even index
    t16 = table.view(np.int16)  # [cap, 8]: 4 lower bound, 5 upper bound, 6 move, 7 seeds left
    table_flat = table.reshape(-1)
    db_flat = db_values.reshape(-1)
    etc_diff, etc_left, etc_kind = borrowed(stack.etc_diff), borrowed(stack.etc_left), borrowed(stack.etc_kind)
    etc_key, child_mover = borrowed(stack.etc_key), borrowed(stack.child_mover)
    # the children of every expanded ply, by pit (rebuilt below when a paused test goes on)
    kid_boards, kid_movers = borrowed(stack.kid_boards), borrowed(stack.kid_movers)
    # their table keys once computed (by the cutoffs or the prefetches), handed to the child's own probe
    kid_hash, kid_hash_ok = borrowed(stack.kid_hash), borrowed(stack.kid_hash_ok)
    pre_hash, pre_ok = borrowed(stack.pre_hash), borrowed(stack.pre_ok)
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
        for i in range(sp if entering else sp + 1):  # the plies whose move lists are in progress
            _fill_kids(boards[i], m, movers[i], moves[i], nmoves[i], empty_capture, kid_boards[i], kid_movers[i])
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
                    h = pre_hash[sp] if pre_ok[sp] else houses_hash(board, m, mover)
                    hashes[sp] = h
                    slot = np.int64(h & mask)
                    if np.uint64(table[slot, 0]) != h:
                        slot ^= 1
                    if np.uint64(table[slot, 0]) == h:
                        tt_best = t16[slot, 6] + (1 if mover == 0 else m + 2)
                        if mover == 0:
                            t_lo = np.float64(t16[slot, 4]) + d
                            t_up = np.float64(t16[slot, 5]) + d
                        else:  # the entry is the mover's: player 0's rest is its negation
                            t_lo = d - np.float64(t16[slot, 5])
                            t_up = d - np.float64(t16[slot, 4])
                        if sp == 0:
                            pass  # the root is always searched, so that it names its best move
                        elif t_lo >= gamma:
                            ret = t_lo
                            done = True
                        elif t_up < gamma:
                            ret = t_up
                            done = True
            count = 0
            known = math.inf if mover == 1 else -math.inf  # the best exact child value taken out of the search
            known_move = -1
            if not done:
                count = legal_moves(board, m, mover, moves[sp])
                first = 1 if mover == 0 else m + 2
                _fill_kids(board, m, mover, moves[sp], count, empty_capture, kid_boards[sp], kid_movers[sp])
                for j in range(m):
                    kid_hash_ok[sp, j] = False
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
                        kc = kid_boards[sp, moves[sp, j] - first]
                        cm = kid_movers[sp, moves[sp, j] - first]
                        cd = np.float64(kc[m + 1] - kc[0])
                        cr = total - kc[m + 1] - kc[0]
                        etc_diff[j] = cd
                        etc_left[j] = cr
                        etc_kind[j] = 0
                        if cm < 0:
                            etc_kind[j] = 1  # over: exact
                        elif cr <= db_seeds:
                            etc_kind[j] = 2  # in the database: exact
                            etc_key[j] = np.uint64(cm * db_values.shape[1] + rank_houses(kc, m, db_binom))
                        elif probe_table:
                            etc_kind[j] = 3  # the table may bound it
                            etc_key[j] = houses_hash(kc, m, cm)
                            kid_hash[sp, moves[sp, j] - first] = etc_key[j]
                            kid_hash_ok[sp, moves[sp, j] - first] = True
                            child_mover[j] = cm
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
                                    if child_mover[j] == 0:
                                        c_lo = max(c_lo, np.float64(t16[cs, 4]) + cd)
                                        c_up = min(c_up, np.float64(t16[cs, 5]) + cd)
                                    else:
                                        c_lo = max(c_lo, cd - np.float64(t16[cs, 5]))
                                        c_up = min(c_up, cd - np.float64(t16[cs, 4]))
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
            _order_kids(board, m, mover, moves[sp], count, keys, tt_best, kid_boards[sp], kid_movers[sp])
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
                first = 1 if movers[sp] == 0 else m + 2
                for j in range(1, nmoves[sp]):
                    kb = kid_boards[sp, moves[sp, j] - first]
                    cm = kid_movers[sp, moves[sp, j] - first]
                    if cm < 0:
                        continue
                    cd = np.float64(kb[m + 1] - kb[0])
                    cr = total - kb[m + 1] - kb[0]
                    if cd + cr < gamma or cd - cr >= gamma:
                        continue
                    if cr <= db_seeds:
                        prefetch_item(db_flat, cm * db_values.shape[1] + rank_houses(kb, m, db_binom))
                    else:
                        kh = moves[sp, j] - first
                        if not kid_hash_ok[sp, kh]:
                            kid_hash[sp, kh] = houses_hash(kb, m, cm)
                            kid_hash_ok[sp, kh] = True
                        prefetch_item(table_flat, np.int64(kid_hash[sp, kh] & mask) * 2)
            kid = moves[sp, k] - (1 if movers[sp] == 0 else m + 2)
            boards[sp + 1] = kid_boards[sp, kid]
            movers[sp + 1] = kid_movers[sp, kid]
            pre_ok[sp + 1] = kid_hash_ok[sp, kid]
            pre_hash[sp + 1] = kid_hash[sp, kid]
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
                if work >= t16[slot, 7]:
                    # demote the deep slot's entry to the recent slot
                    table[slot + 1, 0] = table[slot, 0]
                    table[slot + 1, 1] = table[slot, 1]
                else:
                    slot += 1
                table[slot, 0] = np.int64(h)
                t16[slot, 4] = NO_LOWER
                t16[slot, 5] = NO_UPPER
        rest = np.int16(g - diffs[sp])  # player 0's (an integer: |rest| <= the seeds); the entry keeps the mover's
        if movers[sp] == 0:
            if g >= gamma:
                t16[slot, 4] = max(t16[slot, 4], rest)
            else:
                t16[slot, 5] = min(t16[slot, 5], rest)
        else:
            if g >= gamma:
                t16[slot, 5] = min(t16[slot, 5], -rest)
            else:
                t16[slot, 4] = max(t16[slot, 4], -rest)
        # the move (counted from the mover's first house) is kept from a
        # fail-high (the move that proved the lower bound); a fail-low only
        # names one for a fresh entry
        if fresh or g >= gamma:
            t16[slot, 6] = best[sp] - (1 if movers[sp] == 0 else m + 2)
            t16[slot, 7] = work
        ret = g
        if sp == 0:
            regs[0] = 0
            return SOLVED, ret, best[0]
        sp -= 1
        entering = False


# ---------------------------------------------------------------------------------------------------------------
# The vector null-window test: the same search as null_window_test, node for node (the same nodes, table writes and
# result), for a test that runs to the end in one call. Boards are 16-lane int16 vectors (:mod:`._simd`: a child is
# one table-row add, the seeds on each side are carried along), the search recurses (per-node state in registers
# instead of the resumable kernel's per-ply arrays) and every array is reached through one address in a parameter
# block (no array arguments: no reference counts, a short argument list per call). For m <= MAX_SIMD_HOUSES on a
# CPU with AVX2 and BMI2 (:func:`fast_kernel_fits`); elsewhere null_window_test runs.

# the parameter block: int64 words at address P
_P_M, _P_N, _P_LAP, _P_MASK, _P_DBCOLS, _P_BCOLS, _P_DBSEEDS, _P_ETCMIN, _P_DBWIN, _P_PREFETCH, _P_DEPTHCAP, _P_EC = range(12)
_P_TF, _P_DB, _P_BINOM = 12, 13, 14  # addresses: the table, the database values, its binomial table
# addresses of the scratch (int16: the children's board vectors, 16 lanes each, m a ply, then the root's; int64: the
# move lists, ordering keys, children's movers, house seeds on each side, store differences, table keys and whether
# computed, m a ply each; the cutoffs' work row) and of the sowing tables (simd_tables: int16 rows, int64 scalars)
_P_KB, _P_MV, _P_KY, _P_KMV, _P_KS0, _P_KS1, _P_KD, _P_KHASH, _P_KOK, _P_EX = range(15, 25)
_P_INC, _P_KEEP, _P_LAPL, _P_STOREL, _P_CAPKEEP, _P_META, _P_OWN, _P_OPP, _P_HOUSES = range(25, 34)
_P_ROOT = 34  # the root board's lane offset in the int16 scratch
_P_NODES, _P_LIMIT, _P_STATUS, _P_AUX, _P_STOP = 40, 41, 42, 43, 44  # registers
_P_WORDS = 48
_P_OFFSETS = 48  # words 48 + k: the offset (in elements) of address parameter k in its array (set by for_state)
_P_FIRST_ADDRESS, _P_LAST_ADDRESS = _P_KB, _P_HOUSES
_KEY_TT = 10_000_000_000  # the ordering keys of _order_kids, as integers (the same order)
_KEY_EXTRA = 100_000_000
_BIG = 1 << 40  # no exact child known yet (the resumable kernel's infinities)


@njit(cache=True, inline="always")
def _phash(kb, o, m, player):
    """:func:`houses_hash` of the board vector at int16 offset ``o`` of address ``kb``."""
    h = GOLDEN
    x = o + (1 if player == 0 else m + 2)
    y = o + (m + 2 if player == 0 else 1)
    for i in range(m):
        h = (h ^ np.uint64(pload_i16(kb, x + i))) * _POLY
    for i in range(m):
        h = (h ^ np.uint64(pload_i16(kb, y + i))) * _POLY
    return mix64(h)


@njit(cache=True, inline="always")
def _prank(kb, o, m, t, binom, bcols):
    """:func:`.endgame.rank_houses` of the board vector at int16 offset ``o`` of ``kb``, ``t`` seeds in its
    houses (``binom`` the address of the flat binomial table, ``bcols`` its columns)."""
    k = 2 * m
    idx = pload_i64(binom, (t + k - 1) * bcols + k)
    rem = t
    for j in range(k - 1):
        v = pload_i16(kb, o + (j + 1 if j < m else j + 2))
        parts = k - j
        idx += pload_i64(binom, (rem + parts - 1) * bcols + parts - 1) - pload_i64(binom, (rem - v + parts - 1) * bcols + parts - 1)
        rem -= v
    return idx


@njit(cache=True, inline="always")
def _vplay(b, player, pit, side0, side1, empty_capture, m, n, lap, P):
    """:func:`.simd_rules.build_simd`'s ``play`` with its tables at the parameter block's addresses: the board
    vector after ``player`` sows ``pit``, the next player (GAME_OVER: the houses are not swept) and the seeds in
    each side's houses."""
    seeds = vget(b, pit)
    r = seeds
    laps = 0
    if seeds >= lap:
        laps = seeds // lap
        r = seeds - laps * lap
    prow = player * n + pit
    row = prow * lap + r
    b = vadd(vand(b, pvload(pload_i64(P, _P_KEEP), prow * 16)), pvload(pload_i64(P, _P_INC), row * 16))
    meta = pload_i64(pload_i64(P, _P_META), row)
    pos = meta & 255
    to_own = (meta >> 8) & 255
    to_opp = meta >> 16
    if laps > 0:
        b = vadd(b, vmul(vsplat(laps), pvload(pload_i64(P, _P_LAPL), player * 16)))
        to_own += laps * m
        to_opp += laps * m
    own_store = (1 - player) * (m + 1)
    o = vget(b, pload_i64(pload_i64(P, _P_OPP), pos))
    cap = (pload_i64(pload_i64(P, _P_OWN), player * n + pos) & np.int64(vget(b, pos) == 1)
           & np.int64((o > 0) | empty_capture))
    b = vand(b, vor(pvload(pload_i64(P, _P_CAPKEEP), pos * 16), vsplat(cap - 1)))
    b = vadd(b, vand(vsplat(cap * (o + 1)), pvload(pload_i64(P, _P_STOREL), player * 16)))
    side_own = (side1 if player else side0) + to_own - seeds - cap
    side_opp = (side0 if player else side1) + to_opp - cap * o
    nxt = player ^ np.int64(pos != own_store)
    if side_own == 0 or side_opp == 0:
        nxt = GAME_OVER
    if player:
        return b, nxt, side_opp, side_own
    return b, nxt, side_own, side_opp


@njit(cache=True, nogil=True)
def _vsearch(sp, so, s0h, s1h, mover, pre, has_pre, gamma, P):
    """One node of :func:`null_window_fast`: the board vector at int16 offset ``so`` of the scratch, ``s0h`` and
    ``s1h`` seeds in each side's houses, ``mover`` to move (GAME_OVER: the game is over, the houses unswept),
    ``pre`` its table key when ``has_pre``. Returns the node's fail-soft value (player 0's final margin); a
    nonzero status word on return: the test stopped."""
    nodes = pload_i64(P, _P_NODES)
    if nodes >= pload_i64(P, _P_LIMIT) or pload_i64(P, _P_STOP) != 0:
        pstore_i64(P, _P_STATUS, PAUSED)
        return np.int64(0)
    pstore_i64(P, _P_NODES, nodes + 1)
    m = pload_i64(P, _P_M)
    kb = pload_i64(P, _P_KB)
    d = pload_i16(kb, so + m + 1) - pload_i16(kb, so)
    if mover < 0:
        return d + s0h - s1h
    r = s0h + s1h
    db_seeds = pload_i64(P, _P_DBSEEDS)
    if sp > 0:
        if d + r < gamma:
            return d + r
        if d - r >= gamma:
            return d - r
        if r <= db_seeds:
            idx = mover * pload_i64(P, _P_DBCOLS) + _prank(kb, so, m, r, pload_i64(P, _P_BINOM), pload_i64(P, _P_BCOLS))
            dv = pload_i8(pload_i64(P, _P_DB), idx)
            if dv > r or dv < -r or (dv + r) & 1:
                pstore_i64(P, _P_STATUS, DATABASE_DAMAGED)
                pstore_i64(P, _P_AUX, idx)
                return np.int64(0)
            return d + dv
    tf = pload_i64(P, _P_TF)
    mask = pload_u64(P, _P_MASK)
    h = pre if has_pre else _phash(kb, so, m, mover)
    tt_best = -1
    slot = np.int64(h & mask)
    if pload_u64(tf, 2 * slot) != h:
        slot ^= 1
    if pload_u64(tf, 2 * slot) == h:
        tt_best = pload_i16(tf, 8 * slot + 6) + (1 if mover == 0 else m + 2)
        if sp > 0:
            if mover == 0:
                t_lo = pload_i16(tf, 8 * slot + 4) + d
                t_up = pload_i16(tf, 8 * slot + 5) + d
            else:
                t_lo = d - pload_i16(tf, 8 * slot + 5)
                t_up = d - pload_i16(tf, 8 * slot + 4)
            if t_lo >= gamma:
                return t_lo
            if t_up < gamma:
                return t_up
    n = 2 * m + 2
    lap = n - 1
    empty_capture = pload_i64(P, _P_EC) != 0
    first = 1 if mover == 0 else m + 2
    mo = sp * m  # this ply's rows: the move list, the children's data (by pit - first) and the ordering keys
    ko = sp * m * 16  # this ply's children's board vectors
    mv = pload_i64(P, _P_MV)
    kmv = pload_i64(P, _P_KMV)
    ks0 = pload_i64(P, _P_KS0)
    ks1 = pload_i64(P, _P_KS1)
    kd = pload_i64(P, _P_KD)
    khash = pload_i64(P, _P_KHASH)
    kok = pload_i64(P, _P_KOK)
    b = pvload(kb, so)
    legal = vmask_positive(b) & pload_u64(pload_i64(P, _P_HOUSES), mover)
    count = 0
    while legal != 0:
        pit = lowest_bit(legal)
        legal &= legal - np.uint64(1)
        pstore_i64(mv, mo + count, pit)
        count += 1
        c = pit - first
        cb, nxt, c0, c1 = _vplay(b, mover, pit, s0h, s1h, empty_capture, m, n, lap, P)
        pvstore(kb, ko + 16 * c, cb)
        pstore_i64(kmv, mo + c, nxt)
        pstore_i64(ks0, mo + c, c0)
        pstore_i64(ks1, mo + c, c1)
        cdiff = vget(cb, m + 1) - vget(cb, 0)
        if nxt < 0:
            cdiff += c0 - c1  # the final sweep
        pstore_i64(kd, mo + c, cdiff)
        pstore_i64(kok, mo + c, 0)
    known = _BIG if mover == 1 else -_BIG
    known_move = -1
    probe_table = r >= pload_i64(P, _P_ETCMIN)
    etc = sp > 0 and (probe_table or r <= db_seeds + pload_i64(P, _P_DBWIN))
    ex = pload_i64(P, _P_EX)
    if etc:
        # the enhanced transposition cutoffs of null_window_test: here the children's database entries and table
        # buckets are asked for first and read after the ordering below, so the loads overlap it
        db_cols = pload_i64(P, _P_DBCOLS)
        for j in range(count):
            pit = pload_i64(mv, mo + j)
            c = pit - first
            cm = pload_i64(kmv, mo + c)
            cr = pload_i64(ks0, mo + c) + pload_i64(ks1, mo + c)
            pstore_i64(ex, j, pload_i64(kd, mo + c))
            pstore_i64(ex, m + j, cr)
            pstore_i64(ex, 5 * m + j, pit)
            kind = 0
            if cm < 0:
                kind = 1
            elif cr <= db_seeds:
                kind = 2
                key = cm * db_cols + _prank(kb, ko + 16 * c, m, cr, pload_i64(P, _P_BINOM), pload_i64(P, _P_BCOLS))
                pstore_i64(ex, 3 * m + j, key)
                prefetch_addr(pload_i64(P, _P_DB) + key)
            elif probe_table:
                kind = 3
                ch = _phash(kb, ko + 16 * c, m, cm)
                pstore_u64(ex, 3 * m + j, ch)
                pstore_u64(khash, mo + c, ch)
                pstore_i64(kok, mo + c, 1)
                pstore_i64(ex, 4 * m + j, cm)
                prefetch_addr(tf + 16 * np.int64(ch & mask))
            pstore_i64(ex, 2 * m + j, kind)
    # order: the table's move, extra turns (nearest the store first), then the seeds won (see _order_kids); a
    # stable sort, so ordering before the cutoffs take the exact children out leaves the others' order unchanged
    ky = pload_i64(P, _P_KY)
    for j in range(count):
        pit = pload_i64(mv, mo + j)
        gain = pload_i64(kd, mo + pit - first) - d
        if mover == 1:
            gain = -gain
        dist = (m + 1 - pit) if mover == 0 else (2 * m + 2 - pit)
        key = gain * 1024 - dist
        if pload_i64(kmv, mo + pit - first) == mover:
            key += _KEY_EXTRA
        if pit == tt_best:
            key += _KEY_TT
        pstore_i64(ky, mo + j, key)
    for j in range(1, count):
        mj = pload_i64(mv, mo + j)
        kj = pload_i64(ky, mo + j)
        i = j - 1
        while i >= 0 and pload_i64(ky, mo + i) < kj:
            pstore_i64(mv, mo + i + 1, pload_i64(mv, mo + i))
            pstore_i64(ky, mo + i + 1, pload_i64(ky, mo + i))
            i -= 1
        pstore_i64(mv, mo + i + 1, mj)
        pstore_i64(ky, mo + i + 1, kj)
    if etc:
        # the cutoffs' reads, children in house order as null_window_test takes them
        any_exact = False
        for j in range(count):
            cd = pload_i64(ex, j)
            cr = pload_i64(ex, m + j)
            kind = pload_i64(ex, 2 * m + j)
            if kind == 1:
                c_lo = cd
                c_up = cd
            elif kind == 2:
                key = pload_i64(ex, 3 * m + j)
                dv = pload_i8(pload_i64(P, _P_DB), key)
                if dv > cr or dv < -cr or (dv + cr) & 1:
                    pstore_i64(P, _P_STATUS, DATABASE_DAMAGED)
                    pstore_i64(P, _P_AUX, key)
                    return np.int64(0)
                c_lo = cd + dv
                c_up = c_lo
            else:
                c_lo = cd - cr
                c_up = cd + cr
                if kind == 3:
                    ch = pload_u64(ex, 3 * m + j)
                    cs = np.int64(ch & mask)
                    if pload_u64(tf, 2 * cs) != ch:
                        cs ^= 1
                    if pload_u64(tf, 2 * cs) == ch:
                        if pload_i64(ex, 4 * m + j) == 0:
                            c_lo = max(c_lo, pload_i16(tf, 8 * cs + 4) + cd)
                            c_up = min(c_up, pload_i16(tf, 8 * cs + 5) + cd)
                        else:
                            c_lo = max(c_lo, cd - pload_i16(tf, 8 * cs + 5))
                            c_up = min(c_up, cd - pload_i16(tf, 8 * cs + 4))
            if mover == 0 and c_lo >= gamma:
                return c_lo
            if mover == 1 and c_up < gamma:
                return c_up
            pit = pload_i64(ex, 5 * m + j)
            exact = c_lo == c_up
            pstore_i64(ex, 6 * m + pit - first, 1 if exact else 0)
            if exact:
                any_exact = True
                if (mover == 0 and c_lo > known) or (mover == 1 and c_lo < known):
                    known = c_lo
                    known_move = pit
        if any_exact:
            kept = 0
            for j in range(count):
                pit = pload_i64(mv, mo + j)
                if pload_i64(ex, 6 * m + pit - first) == 0:
                    pstore_i64(mv, mo + kept, pit)
                    kept += 1
            count = kept
            if count == 0:
                return known
    g = known
    best = pload_i64(mv, mo) if known_move < 0 else known_move
    for k in range(count):
        if (g >= gamma) if mover == 0 else (g < gamma):
            break
        if sp + 1 > pload_i64(P, _P_DEPTHCAP):
            pstore_i64(P, _P_STATUS, TABLE_FULL)
            return np.int64(0)
        if k == 1 and pload_i64(P, _P_PREFETCH) != 0:
            for j in range(1, count):
                c = pload_i64(mv, mo + j) - first
                cm = pload_i64(kmv, mo + c)
                if cm < 0:
                    continue
                cd = pload_i64(kd, mo + c)
                cr = pload_i64(ks0, mo + c) + pload_i64(ks1, mo + c)
                if cd + cr < gamma or cd - cr >= gamma:
                    continue
                if cr <= db_seeds:
                    prefetch_addr(pload_i64(P, _P_DB) + cm * pload_i64(P, _P_DBCOLS)
                                  + _prank(kb, ko + 16 * c, m, cr, pload_i64(P, _P_BINOM), pload_i64(P, _P_BCOLS)))
                else:
                    if pload_i64(kok, mo + c) == 0:
                        pstore_u64(khash, mo + c, _phash(kb, ko + 16 * c, m, cm))
                        pstore_i64(kok, mo + c, 1)
                    prefetch_addr(tf + 16 * np.int64(pload_u64(khash, mo + c) & mask))
        pit = pload_i64(mv, mo + k)
        c = pit - first
        v = _vsearch(sp + 1, ko + 16 * c, pload_i64(ks0, mo + c), pload_i64(ks1, mo + c), pload_i64(kmv, mo + c),
                     pload_u64(khash, mo + c), pload_i64(kok, mo + c) != 0, gamma, P)
        if pload_i64(P, _P_STATUS) != 0:
            return np.int64(0)
        if mover == 0:
            if v > g:
                g = v
                best = pit
        elif v < g:
            g = v
            best = pit
    # store the bound learnt (on the rest of the game), as null_window_test does
    slot = np.int64(h & mask)
    fresh = False
    if pload_u64(tf, 2 * slot) != h:
        if pload_u64(tf, 2 * slot + 2) == h:
            slot += 1
        else:
            fresh = True
            if r >= pload_i16(tf, 8 * slot + 7):
                pstore_i64(tf, 2 * slot + 2, pload_i64(tf, 2 * slot))
                pstore_i64(tf, 2 * slot + 3, pload_i64(tf, 2 * slot + 1))
            else:
                slot += 1
            pstore_u64(tf, 2 * slot, h)
            pstore_i16(tf, 8 * slot + 4, NO_LOWER)
            pstore_i16(tf, 8 * slot + 5, NO_UPPER)
    rest = g - d
    if mover == 0:
        if g >= gamma:
            pstore_i16(tf, 8 * slot + 4, max(pload_i16(tf, 8 * slot + 4), rest))
        else:
            pstore_i16(tf, 8 * slot + 5, min(pload_i16(tf, 8 * slot + 5), rest))
    else:
        if g >= gamma:
            pstore_i16(tf, 8 * slot + 5, min(pload_i16(tf, 8 * slot + 5), -rest))
        else:
            pstore_i16(tf, 8 * slot + 4, max(pload_i16(tf, 8 * slot + 4), -rest))
    if fresh or g >= gamma:
        pstore_i16(tf, 8 * slot + 6, best - first)
        pstore_i16(tf, 8 * slot + 7, r)
    if sp == 0:
        pstore_i64(P, _P_AUX, best)
    return g


def fast_kernel_fits(m: int) -> bool:
    """Whether :func:`null_window_fast` runs for m houses here (board vectors: m <= MAX_SIMD_HOUSES, a CPU with
    AVX2 and BMI2)."""
    return 1 <= m <= MAX_SIMD_HOUSES and host_has_simd()


class FastStack(NamedTuple):
    """Scratch of :func:`null_window_fast` (:meth:`for_state`): ``kb`` (int16: the children's board vectors, the
    root's, the sowing tables) and ``w`` (int64: the parameter block, the per-ply rows, the sowing tables' scalars).
    ``w[_P_STOP]`` set nonzero (from another thread) stops the test."""

    kb: np.ndarray
    w: np.ndarray

    def nodes(self) -> int:
        """The node count of the test running (read from another thread: a count, not a value)."""
        return int(self.w[_P_NODES])

    @classmethod
    def for_state(cls, state: KalahState) -> "FastStack":
        m = state.houses
        n = 2 * m + 2
        rows = 4 * int(state.board.sum()) + 9  # as MTStack: a game cannot last longer
        t = simd_tables(m)
        off16 = {}
        size16 = 0
        for k, count in ((_P_KB, rows * m * 16), (_P_ROOT, 16), (_P_INC, t.inc.size), (_P_KEEP, t.keep.size),
                         (_P_LAPL, t.lap_lanes.size), (_P_STOREL, t.store_lanes.size),
                         (_P_CAPKEEP, t.cap_keep.size)):
            off16[k] = size16
            size16 += count + 16  # a vector load never reads past the end
        off64 = {}
        size64 = 2 * _P_WORDS
        for k, count in ((_P_MV, rows * m), (_P_KY, rows * m), (_P_KMV, rows * m), (_P_KS0, rows * m),
                         (_P_KS1, rows * m), (_P_KD, rows * m), (_P_KHASH, rows * m), (_P_KOK, rows * m),
                         (_P_EX, 7 * m), (_P_META, t.meta.size), (_P_OWN, t.own_house.size),
                         (_P_OPP, t.opposite.size), (_P_HOUSES, t.houses.size)):
            off64[k] = size64
            size64 += count
        kb = np.zeros(size16, dtype=np.int16)
        w = np.zeros(size64, dtype=np.int64)
        for k, arr in ((_P_INC, t.inc), (_P_KEEP, t.keep), (_P_LAPL, t.lap_lanes), (_P_STOREL, t.store_lanes),
                       (_P_CAPKEEP, t.cap_keep)):
            kb[off16[k]:off16[k] + arr.size] = arr
        for k, arr in ((_P_META, t.meta), (_P_OWN, t.own_house), (_P_OPP, t.opposite),
                       (_P_HOUSES, t.houses.view(np.int64))):
            w[off64[k]:off64[k] + arr.size] = arr
        for k in range(_P_FIRST_ADDRESS, _P_LAST_ADDRESS + 1):
            # an address parameter's offset: int16 elements of kb (negative, less one) or int64 elements of w
            w[_P_OFFSETS + k] = -1 - off16[k] if k in off16 else off64[k]
        w[_P_ROOT] = off16[_P_ROOT]
        w[_P_M], w[_P_N], w[_P_LAP], w[_P_DEPTHCAP] = m, n, n - 1, rows - 1
        return cls(kb=kb, w=w)


def stop_fast(fs: FastStack, flag: bool) -> None:
    """Ask a running :func:`null_window_fast` on ``fs`` to stop (``flag`` True; it stops within a node), or
    clear the request before a test."""
    fs.w[_P_STOP] = 1 if flag else 0


@njit(cache=True, nogil=True)
def null_window_fast(root_board, m, root_player, gamma, empty_capture, table, counters, node_limit, options, db, fs):
    """:func:`null_window_test` run to the end in one call: the same nodes in the same order, the same table
    writes and result, from a recursive search on board vectors (``fs`` a :class:`FastStack` for this board;
    :func:`fast_kernel_fits` must hold). It cannot pause: at ``node_limit`` nodes, or when another thread sets
    ``fs.w[_P_STOP]``, it stops with status ``PAUSED`` and the test is lost (the table keeps what it learnt).
    Returns (status, g, root move) as null_window_test does."""
    w = borrowed(fs.w)
    kb = borrowed(fs.kb)
    P = data_address(w)
    kb_base = data_address(kb)
    for k in range(_P_FIRST_ADDRESS, _P_LAST_ADDRESS + 1):
        off = w[_P_OFFSETS + k]
        w[k] = kb_base + 2 * (-1 - off) if off < 0 else P + 8 * off
    root = w[_P_ROOT]
    n = 2 * m + 2
    for i in range(16):
        kb[root + i] = root_board[i] if i < n else 0
    s0h = np.int64(0)
    s1h = np.int64(0)
    for i in range(m):
        s0h += root_board[1 + i]
        s1h += root_board[m + 2 + i]
    w[_P_MASK] = table.shape[0] - 2
    w[_P_DBCOLS] = db.values.shape[1]
    w[_P_BCOLS] = db.binom.shape[1]
    w[_P_DBSEEDS] = db.seeds
    w[_P_ETCMIN] = options.etc_min_seeds
    w[_P_DBWIN] = options.db_etc_window
    w[_P_PREFETCH] = 1 if options.prefetch else 0
    w[_P_EC] = 1 if empty_capture else 0
    w[_P_TF] = data_address(table)
    w[_P_DB] = data_address(db.values)
    w[_P_BINOM] = data_address(db.binom)
    w[_P_NODES] = counters[0]
    w[_P_LIMIT] = node_limit
    w[_P_STATUS] = 0
    w[_P_AUX] = -1
    # the root's call with the argument types of the recursive ones (no literals): one compiled function, which
    # Numba's cache reloads sound (a second, literal-typed overload calling the first crashed when loaded)
    zero = w[_P_STATUS]
    g = _vsearch(zero, root, s0h, s1h, np.int64(root_player), np.uint64(zero), zero != 0, np.int64(gamma), P)
    counters[0] = w[_P_NODES]
    status = w[_P_STATUS]
    if status == DATABASE_DAMAGED:
        return status, np.float64(w[_P_AUX]), -1
    if status != SOLVED:
        return status, 0.0, -1
    return SOLVED, np.float64(g), w[_P_AUX]


@njit(cache=True)
def root_houses_hash(board, m, player):
    """:func:`houses_hash` callable from Python (the root's table entry)."""
    return houses_hash(board, m, player)

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
from ._prefetch import borrowed, prefetch_item, uget, uset
from .alphabeta import sort_by_key
from .endgame import rank_houses
from .state import KalahState, legal_moves, margin_of


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
    the end). The rules of :func:`.rules.sow` (laps, captures,
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


FNV_PRIME = np.uint64(0x100000001B3)  # FNV-1a's 64-bit prime
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
        h = (h ^ np.uint64(board[a + i])) * FNV_PRIME
    for i in range(m):
        h = (h ^ np.uint64(board[b + i])) * FNV_PRIME
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


@njit(cache=True)
def root_houses_hash(board, m, player):
    """:func:`houses_hash` callable from Python (the root's table entry)."""
    return houses_hash(board, m, player)

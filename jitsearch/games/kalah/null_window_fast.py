"""The vector null-window test of the exact Kalah solver: the same search as
:func:`.null_window.null_window_test`, node for node (the same nodes, table
writes and result), for a test that runs to the end in one call
(:func:`null_window_fast`, its scratch :class:`FastStack`). Used by
:func:`jitsearch.games.kalah.solver.solve_exact` where
:func:`fast_kernel_fits` (m <= MAX_SIMD_HOUSES, a CPU with AVX2 and BMI2).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ...rng import GOLDEN, mix64
from ._prefetch import (borrowed, data_address, pload_i8, pload_i16, pload_i64, pload_u64, prefetch_addr, pstore_i16,
                        pstore_i64, pstore_u64, pvload, pvstore)
from ._simd import host_has_simd, lowest_bit, vadd, vand, vget, vmask_positive, vmul, vor, vsplat
from .simd_rules import MAX_SIMD_HOUSES, simd_tables
from .rules import GAME_OVER
from .state import KalahState
from .null_window import DATABASE_DAMAGED, FNV_PRIME, NO_LOWER, NO_UPPER, PAUSED, SOLVED, TABLE_FULL

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
        h = (h ^ np.uint64(pload_i16(kb, x + i))) * FNV_PRIME
    for i in range(m):
        h = (h ^ np.uint64(pload_i16(kb, y + i))) * FNV_PRIME
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


#: The word of ``FastStack.w`` that stops a running test when nonzero (for :func:`jitsearch.stop.watch`).
FAST_STOP_WORD = _P_STOP


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

"""Kalah(m, n) playout steps on a board held in one 16-lane int16 vector
(:mod:`._simd`), for m <= MAX_SIMD_HOUSES (2m + 2 <= 16 pits).

Lane p holds pit p (the layout of :mod:`.rules`; lanes 2m+2..15 stay 0).
Sowing ``s`` seeds from a house is one vector add of a precomputed row for
(player, house, s mod lap), lap = 2m + 1, plus ``s // lap`` whole laps as a
broadcast multiply-add; the legal houses are one compare + movemask, the
k-th of them one BMI2 ``pdep`` + count-trailing-zeros; a capture and the
extra turn are branch-free. The seeds on each side are carried along, so
the end of the game needs no scan. Same rules and the same move order as
:func:`.rules.build`, so a playout gives bit-identical results. The design
is that of the tuned C reference (``bench/c_reference/kalah_playouts.c``).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ._simd import (LANES, host_has_simd, lowest_bit, pdep, popcount, vadd, vand, vget, vload, vmask_positive, vmul, vor,
                    vset, vsplat, vzero)
from .rules import GAME_OVER

#: The most houses a board vector holds (2m + 2 <= 16 lanes).
MAX_SIMD_HOUSES = (LANES - 2) // 2


def simd_tables(m):
    """The constant tables of :func:`build_simd` for m houses (NumPy, flat).

    Rows of 16 int16 lanes: ``inc[row]`` the increments of sowing r seeds
    (r < lap) from ``pit`` for row = (player * n + pit) * lap + r;
    ``keep[player * n + pit]`` all lanes -1 but the pit's (emptied first);
    ``lap_lanes[player]`` one seed on every pit but the opponent's store;
    ``store_lanes[player]`` -1 on the player's store; ``cap_keep[pos]`` all
    lanes -1 but pos and its opposite house (emptied by a capture ending at
    pos). Scalars: ``meta[row]`` = last pit | seeds landed on the mover's
    houses << 8 | on the opponent's houses << 16 (r = 0: the pit itself);
    ``own_house[player * n + p]`` 1 for the player's houses;
    ``opposite[p]`` the opposite house (a store: itself); ``houses[player]``
    the player's house lanes as a bit mask.
    """
    if not 1 <= m <= MAX_SIMD_HOUSES:
        raise ValueError(f"board vectors take 1..{MAX_SIMD_HOUSES} houses, got {m}")
    n = 2 * m + 2
    lap = 2 * m + 1
    inc = np.zeros((2, n, lap, LANES), np.int16)
    meta = np.zeros((2, n, lap), np.int64)
    keep = np.full((2, n, LANES), -1, np.int16)
    lap_lanes = np.zeros((2, LANES), np.int16)
    store_lanes = np.zeros((2, LANES), np.int16)
    cap_keep = np.full((n, LANES), -1, np.int16)
    own_house = np.zeros((2, n), np.int64)
    opposite = np.array([p if p in (0, m + 1) else n - p for p in range(n)], np.int64)
    houses = np.zeros(2, np.uint64)
    for p in range(n):
        if p not in (0, m + 1):
            cap_keep[p, p] = 0
            cap_keep[p, n - p] = 0
    for player, first in enumerate((1, m + 2)):
        own_store = m + 1 if player == 0 else 0
        opp_store = 0 if player == 0 else m + 1
        own_house[player, first:first + m] = 1
        houses[player] = sum(1 << p for p in range(first, first + m))
        store_lanes[player, own_store] = -1
        lap_lanes[player, :n] = 1
        lap_lanes[player, opp_store] = 0
        for pit in range(first, first + m):
            keep[player, pit, pit] = 0
            pos, on_own, on_opp = pit, 0, 0
            meta[player, pit, 0] = pit
            for r in range(1, lap):
                pos = (pos + 1) % n
                if pos == opp_store:
                    pos = (pos + 1) % n
                inc[player, pit, r] = inc[player, pit, r - 1]
                inc[player, pit, r, pos] += 1
                on_own += int(own_house[player, pos])
                on_opp += int(pos != own_store and not own_house[player, pos])
                meta[player, pit, r] = pos | on_own << 8 | on_opp << 16
    return SimpleNamespace(inc=inc.ravel(), meta=meta.ravel(), keep=keep.ravel(), lap_lanes=lap_lanes.ravel(),
                           store_lanes=store_lanes.ravel(), cap_keep=cap_keep.ravel(), own_house=own_house.ravel(),
                           opposite=opposite, houses=houses)


def build_simd(jit, houses):
    """Compile the board-vector playout functions for ``houses`` m
    (1..MAX_SIMD_HOUSES) with ``jit`` (a Numba CPU decorator; the kernels
    need AVX2 and BMI2: check :func:`._simd.host_has_simd` first).

    Returns ``load(board) -> (vector, side0, side1)`` (``board`` 2m+2 seed
    counts; side0/side1 the seeds in each side's houses), ``step(vector,
    player, side0, side1, x, empty_capture) -> (vector, next player or
    GAME_OVER, side0, side1)`` (plays the ``below(x, count)``-th legal house
    in house order, x a uint64 draw of :func:`jitsearch.rng.build`),
    ``legal_mask(vector, player)`` (bit p set for each legal house p),
    ``play(vector, player, pit, side0, side1, empty_capture)`` (step's move
    from a given legal pit) and ``margin(vector, side0, side1)`` (player
    0's final margin once the game is over: the houses are not swept).
    """
    t = simd_tables(houses)
    m = houses
    n = 2 * m + 2
    lap = 2 * m + 1
    inc, meta_table, keep, lap_lanes = t.inc, t.meta, t.keep, t.lap_lanes
    store_lanes, cap_keep, own_house, opposite_of, house_bits = (t.store_lanes, t.cap_keep, t.own_house,
                                                                 t.opposite, t.houses)
    u = np.uint64

    def load(board):
        v = vzero()
        side0 = 0
        side1 = 0
        for i in range(n):
            v = vset(v, i, board[i])
        for i in range(m):
            side0 += board[1 + i]
            side1 += board[m + 2 + i]
        return v, np.int64(side0), np.int64(side1)

    def legal_mask(b, player):
        return vmask_positive(b) & house_bits[u(player)]

    legal_mask = jit(legal_mask)

    def step(b, player, side0, side1, x, empty_capture):
        mask = legal_mask(b, player)
        count = popcount(mask)
        k = ((u(x) >> u(32)) * u(count)) >> u(32)  # rng.below
        return play(b, player, lowest_bit(pdep(u(1) << k, mask)), side0, side1, empty_capture)

    def play(b, player, pit, side0, side1, empty_capture):
        seeds = vget(b, pit)
        r = seeds
        laps = 0
        if seeds >= lap:
            laps = seeds // lap
            r = seeds - laps * lap
        prow = player * n + pit
        row = prow * lap + r
        b = vadd(vand(b, vload(keep, prow * LANES)), vload(inc, row * LANES))
        meta = meta_table[u(row)]  # unsigned indices: no negative-index wrap-around code
        pos = meta & 255
        to_own = (meta >> 8) & 255
        to_opp = meta >> 16
        if laps > 0:
            b = vadd(b, vmul(vsplat(laps), vload(lap_lanes, player * LANES)))
            to_own += laps * m
            to_opp += laps * m
        own_store = (1 - player) * (m + 1)
        opposite = opposite_of[u(pos)]
        o = vget(b, opposite)
        cap = own_house[u(player * n + pos)] & np.int64(vget(b, pos) == 1) & np.int64((o > 0) | empty_capture)
        # cap = 1: lanes pos and opposite emptied, o + 1 seeds to the store; cap = 0: nothing changes
        b = vand(b, vor(vload(cap_keep, pos * LANES), vsplat(cap - 1)))
        b = vadd(b, vand(vsplat(cap * (o + 1)), vload(store_lanes, player * LANES)))
        side_own = (side1 if player else side0) + to_own - seeds - cap
        side_opp = (side0 if player else side1) + to_opp - cap * o
        nxt = player ^ np.int64(pos != own_store)
        if side_own == 0 or side_opp == 0:
            nxt = GAME_OVER
        if player:
            return b, nxt, side_opp, side_own
        return b, nxt, side_own, side_opp

    def margin(b, side0, side1):
        return vget(b, m + 1) + side0 - vget(b, 0) - side1

    play = jit(play)
    return SimpleNamespace(load=jit(load), legal_mask=legal_mask, play=play, step=jit(step), margin=jit(margin))


__all__ = ["MAX_SIMD_HOUSES", "build_simd", "host_has_simd", "simd_tables", "vget"]

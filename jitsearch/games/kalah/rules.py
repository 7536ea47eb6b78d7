"""Kalah(m, n) rules as allocation-free functions, compiled per target.

Board layout (OpenSpiel's "mancala", generalised to m houses)::

    index:   0 | 1 .. m        | m+1 | m+2 .. 2m+1
    pit:     P1 store | P0 houses | P0 store | P1 houses

        P1:   [2m+1] [2m] ... [m+2]
     [0]                              [m+1]
        P0:   [1]    [2]  ...  [m]

Sowing goes counter-clockwise (increasing index, wrapping), skipping the
opponent's store but not the house it started from. The house opposite pit
``p`` is ``2m + 2 - p``. A last seed in the mover's own store gives another
move (no limit). A last seed in the mover's own house that was empty captures
it together with the opposite house's seeds, into the mover's store: only
when the opposite house is non-empty under the standard rules, always with
``empty_capture`` (the variant used when solving Kalah). As soon as either
side's houses are all empty the game ends and each side's remaining seeds go
to that side's owner's store. Player 0 moves first.

The bodies below are plain Python written for Numba's nopython subset with
no allocation (the caller owns the board), so :func:`build` can compile them
for the CPU (``numba.njit``) and, later, as CUDA device functions
(``numba.cuda.jit(device=True)``) from the same source.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..protocol import Rules

GAME_OVER = -1


def _side_seeds(board, m, player):
    first = 1 if player == 0 else m + 2
    total = 0
    for i in range(first, first + m):
        total += board[i]
    return total


def sow(board, m, player, pit, empty_capture):
    """Sow from ``pit`` (a legal house of ``player``) in place.

    Returns the player to move next, or GAME_OVER (-1) after the final sweep.
    """
    n = 2 * m + 2
    own_store = m + 1 if player == 0 else 0
    opp_store = 0 if player == 0 else m + 1
    seeds = board[pit]
    board[pit] = 0
    end = pit + seeds
    if end <= n - 1:
        # the common case: no wrap past the last index, so no store is skipped
        for i in range(pit + 1, end + 1):
            board[i] += 1
        pos = end
    else:
        # whole laps of the 2m + 1 pits other than the opponent's store first
        # (one seed each, the emptied house included), then the remainder as
        # at most three contiguous ranges: up to the last index, then from
        # index 0 on, around the opponent's store
        ring = n - 1
        rem = seeds
        if seeds >= ring:
            laps = seeds // ring
            rem = seeds - laps * ring
            for i in range(n):
                board[i] += laps
            board[0 if player == 0 else m + 1] -= laps
        pos = pit  # rem == 0: the last seed of the last lap lands in the house sown from
        top = min(pit + rem, n - 1)
        for i in range(pit + 1, top + 1):
            board[i] += 1
            pos = i
        rest = rem - (top - pit)  # seeds past the last index (rem <= 2m never comes back to pit)
        if rest > 0:
            if player == 0:  # skip index 0 (player 1's store)
                for i in range(1, rest + 1):
                    board[i] += 1
                pos = rest
            else:  # own store 0 and player 0's houses, skip index m + 1, then own houses
                low = min(rest, m + 1)
                for i in range(low):
                    board[i] += 1
                pos = low - 1
                high = rest - low
                for i in range(m + 2, m + 2 + high):
                    board[i] += 1
                if high > 0:
                    pos = m + 1 + high
    nxt = 1 - player
    if pos == own_store:
        nxt = player
    else:
        first = 1 if player == 0 else m + 2
        if first <= pos < first + m and board[pos] == 1:
            opposite = n - pos
            if board[opposite] > 0 or empty_capture:
                board[own_store] += board[opposite] + 1
                board[opposite] = 0
                board[pos] = 0
    # end of game: either side empty -> each side's seeds to its owner
    # (checked with early exits: a side usually has a seed in its first house)
    empty0 = True
    for i in range(1, m + 1):
        if board[i] > 0:
            empty0 = False
            break
    empty1 = True
    for i in range(m + 2, n):
        if board[i] > 0:
            empty1 = False
            break
    if empty0 or empty1:
        s0 = 0
        s1 = 0
        for i in range(1, m + 1):
            s0 += board[i]
            board[i] = 0
        for i in range(m + 2, n):
            s1 += board[i]
            board[i] = 0
        board[m + 1] += s0
        board[0] += s1
        return GAME_OVER
    return nxt


def _legal_moves(board, m, player, out):
    """Write ``player``'s legal pits into ``out``; return how many."""
    first = 1 if player == 0 else m + 2
    count = 0
    for i in range(first, first + m):
        out[count] = i  # branch-free: overwritten unless the house has seeds
        if board[i] > 0:
            count += 1
    return count


def _margin(board, m):
    """Player 0's store minus player 1's store."""
    return board[m + 1] - board[0]


# the weights of Siljander, "Heuristic Monte-Carlo Tree Search for Mancala" (from its reference [7])
W1 = 0.198649
W2 = 0.190084
W3 = 0.370793
W4 = 1.0
W5 = 0.565937


def _heuristic(board, m, player):
    """Weighted heuristic H1..H5 of Siljander's HMCTS paper from ``player``'s point of view.

    H1 seeds in the player's leftmost house (the one farthest from its
    store), H2 seeds on its side, H3 its non-empty houses, H4 its store, H5
    the opponent's store (weighted negatively).
    """
    first = 1 if player == 0 else m + 2
    own_store = m + 1 if player == 0 else 0
    opp_store = 0 if player == 0 else m + 1
    h2 = 0
    h3 = 0
    for i in range(first, first + m):
        h2 += board[i]
        if board[i] > 0:
            h3 += 1
    return W1 * board[first] + W2 * h2 + W3 * h3 + W4 * board[own_store] - W5 * board[opp_store]


# -- packed boards: a faster playout step for small boards -----------------------------

#: Houses up to which :func:`build_packed` applies (each side's houses then lie in two words).
MAX_PACKED_HOUSES = 7
_LANE = np.uint64(0xFFFF)
_LOW15 = np.uint64(0x7FFF7FFF7FFF7FFF)
_HIGH = np.uint64(0x8000800080008000)
#: Gathers bits 0-1, 16-17, 32-33, 48-49 of a word into bits 48..55 (no carries).
_PAIR_GATHER = np.uint64((1 << 48) | (1 << 34) | (1 << 20) | (1 << 6))
#: Bit t of a gathered byte is the non-empty flag of lane _PAIR_ORDER[t] of the 8.
_PAIR_ORDER = (0, 4, 1, 5, 2, 6, 3, 7)


def packed_tables(m):
    """The constant tables of :func:`build_packed` for m houses (NumPy, flat).

    For row = (player * n + pit) * lap + r, with lap = 2m + 1 and r < lap
    seeds sown from ``pit``: ``inc[row * words + j]`` the word-j increments,
    ``meta[row]`` = last pit | seeds landed on the mover's houses << 8 |
    seeds landed on the opponent's houses << 16 (r = 0: the sowing pit, after
    whole laps). ``lap_words[player * words + j]`` one seed on every pit but
    the opponent's store; ``own_house[player * n + p]`` 1 for the player's
    houses; ``opposite[p]`` the opposite house (a store: itself). Move
    choice: ``pair_word[player]`` the first of the two words holding its
    houses, ``pair_houses[player]`` its houses' bits in the gathered byte,
    ``pair_pit[(player * 256 + mask) * 8 + k]`` the k-th non-empty house in
    house order, ``popcount[mask]``.
    """
    if not 1 <= m <= MAX_PACKED_HOUSES:
        raise ValueError(f"packed boards take 1..{MAX_PACKED_HOUSES} houses, got {m}")
    n = 2 * m + 2
    lap = 2 * m + 1
    firsts = (1, m + 2)
    words = max((n + 3) // 4, max(f >> 2 for f in firsts) + 2)
    inc = np.zeros((2, n, lap, words), np.uint64)
    meta = np.zeros((2, n, lap), np.int64)
    lap_words = np.zeros((2, words), np.uint64)
    own_house = np.zeros((2, n), np.int64)
    opposite = np.array([p if p in (0, m + 1) else n - p for p in range(n)], np.int64)
    pair_word = np.array([f >> 2 for f in firsts], np.int64)
    pair_houses = np.zeros(2, np.uint64)
    pair_pit = np.zeros((2, 256, 8), np.int64)
    popcount = np.array([bin(x).count("1") for x in range(256)], np.int64)
    for player, first in enumerate(firsts):
        own_store = m + 1 if player == 0 else 0
        opp_store = 0 if player == 0 else m + 1
        own_house[player, first:first + m] = 1
        for p in range(n):
            if p != opp_store:
                lap_words[player, p >> 2] += np.uint64(1 << 16 * (p & 3))
        for pit in range(first, first + m):
            pos, on_own, on_opp = pit, 0, 0
            for r in range(1, lap + 1):
                pos = (pos + 1) % n
                if pos == opp_store:
                    pos = (pos + 1) % n
                if r == lap:
                    meta[player, pit, 0] = pos  # == pit
                    break
                inc[player, pit, r] = inc[player, pit, r - 1]
                inc[player, pit, r, pos >> 2] += np.uint64(1 << 16 * (pos & 3))
                on_own += int(own_house[player, pos])
                on_opp += int(pos != own_store and not own_house[player, pos])
                meta[player, pit, r] = pos | on_own << 8 | on_opp << 16
        lanes = [4 * pair_word[player] + t for t in _PAIR_ORDER]
        pair_houses[player] = sum(1 << t for t in range(8) if first <= lanes[t] < first + m)
        for mask in range(256):
            pits = sorted(lanes[t] for t in range(8) if mask >> t & 1)
            pair_pit[player, mask, :len(pits)] = pits
    return SimpleNamespace(words=words, inc=inc.ravel(), meta=meta.ravel(), lap_words=lap_words.ravel(),
                           own_house=own_house.ravel(), opposite=opposite, pair_word=pair_word,
                           pair_houses=pair_houses, pair_pit=pair_pit.ravel(), popcount=popcount)


def build_packed(jit, houses):
    """Compile the packed-board playout functions for ``houses`` m (1..MAX_PACKED_HOUSES).

    A packed board holds pit p in bits 16(p % 4).. of ``words[p // 4]``
    (uint64; 16-bit lanes never overflow: a board holds at most 1,000
    seeds). Sowing adds one precomputed row of words (plus whole laps);
    captures, extra turns and the legal-move mask are branch-free; the
    seeds on each side are carried along, so the end of the game needs no
    scan. Same rules and the same move order as :func:`build`, so a playout
    gives bit-identical results; the tables are closure constants (Numba
    freezes them at compile time).

    Returns ``load(words, board) -> (side0, side1)`` (the seeds in each
    side's houses), ``legal_count(words, player) -> (count, mask)``,
    ``step(words, player, side0, side1, mask, k, empty_capture) -> (next
    player or GAME_OVER, side0, side1)`` (plays the k-th legal house in
    house order) and ``margin(words, side0, side1)`` (player 0's final
    margin once the game is over: the houses are not swept).
    """
    t = packed_tables(houses)
    m = houses
    n = 2 * m + 2
    lap = 2 * m + 1
    words = t.words
    inc, meta_table, lap_words = t.inc, t.meta, t.lap_words
    own_house, opposite_of = t.own_house, t.opposite
    pair_word, pair_houses, pair_pit, popcount = t.pair_word, t.pair_houses, t.pair_pit, t.popcount
    u = np.uint64

    def get(w, i):
        return np.int64((w[u(i) >> u(2)] >> ((u(i) & u(3)) << u(4))) & _LANE)

    def add(w, i, v):
        w[u(i) >> u(2)] += u(v) << ((u(i) & u(3)) << u(4))

    def sub(w, i, v):
        w[u(i) >> u(2)] -= u(v) << ((u(i) & u(3)) << u(4))

    get, add, sub = jit(get), jit(add), jit(sub)

    def load(w, board):
        for j in range(words):
            w[j] = 0
        for i in range(n):
            add(w, i, board[i])
        side0 = 0
        side1 = 0
        for i in range(m):
            side0 += board[1 + i]
            side1 += board[m + 2 + i]
        return side0, side1

    def legal_count(w, player):
        """(number of legal houses, their mask in the gathered byte)."""
        b = pair_word[player]
        x = (((w[u(b)] + _LOW15) & _HIGH) >> u(15)) | (((w[u(b + 1)] + _LOW15) & _HIGH) >> u(14))
        mask = ((x * _PAIR_GATHER) >> u(48)) & pair_houses[player]
        return popcount[mask], mask

    def step(w, player, side0, side1, mask, k, empty_capture):
        """Play the k-th legal house (of ``legal_count``'s mask) of ``player``."""
        pit = pair_pit[(u(player) * u(256) + mask) * u(8) + u(k)]
        seeds = get(w, pit)
        sub(w, pit, seeds)
        r = seeds
        laps = 0
        if seeds >= lap:
            laps = seeds // lap
            r = seeds - laps * lap
        row = u((player * n + pit) * lap + r)
        for j in range(words):
            w[j] += inc[row * u(words) + u(j)]
        meta = meta_table[row]
        pos = meta & 255
        to_own = (meta >> 8) & 255
        to_opp = meta >> 16
        if laps > 0:
            for j in range(words):
                w[j] += u(laps) * lap_words[u(player * words + j)]
            to_own += laps * m
            to_opp += laps * m
        own_store = (1 - player) * (m + 1)
        side_own = (side1 if player else side0) + to_own - seeds
        side_opp = (side0 if player else side1) + to_opp
        opposite = opposite_of[u(pos)]
        o = get(w, opposite)
        cap = own_house[u(player * n + pos)] & (get(w, pos) == 1) & ((o > 0) | empty_capture)
        sub(w, pos, cap)
        sub(w, opposite, cap * o)
        add(w, own_store, cap * (o + 1))
        side_own -= cap
        side_opp -= cap * o
        nxt = player ^ np.int64(pos != own_store)
        if side_own == 0 or side_opp == 0:
            nxt = GAME_OVER
        if player:
            return nxt, side_opp, side_own
        return nxt, side_own, side_opp

    def margin(w, side0, side1):
        return get(w, m + 1) + side0 - get(w, 0) - side1

    return SimpleNamespace(words=words, load=jit(load), legal_count=jit(legal_count), step=jit(step),
                           margin=jit(margin))


def build(jit):
    """Compile the rule functions with ``jit`` (``numba.njit`` or
    ``numba.cuda.jit(device=True)``); the bodies call no other function, so
    each compiles on its own from this one description of the rules."""
    return SimpleNamespace(
        apply_move=jit(sow),
        legal_moves=jit(_legal_moves),
        margin=jit(_margin),
        heuristic=jit(_heuristic),
        side_seeds=jit(_side_seeds),
    )


def build_protocol(jit):
    """Compile the rules with ``jit`` behind the game protocol's signature
    (:class:`jitsearch.games.protocol.Rules`: ``cfg = (m, empty_capture)``, no record, the cursor's
    ply counting moves; inline adapters: with ``njit(inline='always')`` the playout's code is that
    of the functions above)."""
    base = build(jit)
    apply_move, legal_moves, margin_ = base.apply_move, base.legal_moves, base.margin

    def legal(board, cfg, player, moves, hist, cur):
        return legal_moves(board, cfg[0], player, moves)

    def apply(board, cfg, player, move, hist, cur):
        nxt = apply_move(board, cfg[0], player, move, cfg[1])
        return nxt, (cur[0], cur[1], cur[2] + 1)

    def margin(board, cfg):
        return margin_(board, cfg[0])

    def evaluate(board, cfg, player):
        return float(margin_(board, cfg[0]))

    return Rules(legal=jit(legal), apply=jit(apply), margin=jit(margin), evaluate=jit(evaluate))


def with_int64_arguments(compiled, inline_jit):
    """The compiled rules behind shims inlined at Numba's IR level
    (``inline_jit``: ``numba.njit(inline='always')``) that pass ``m``, the
    player and the pit as int64. Callers hand in int8, int32, int64 or
    literal players; without the shims each type compiles the rules once
    more (four copies of ``apply_move`` in one MCTS tournament's first
    run), with them once. Same values: only the argument types change."""
    am, lm, mg, he, ss = (compiled.apply_move, compiled.legal_moves, compiled.margin, compiled.heuristic,
                          compiled.side_seeds)

    def apply_move(board, m, player, pit, empty_capture):
        return am(board, np.int64(m), np.int64(player), np.int64(pit), empty_capture)

    def legal_moves(board, m, player, out):
        return lm(board, np.int64(m), np.int64(player), out)

    def margin(board, m):
        return mg(board, np.int64(m))

    def heuristic(board, m, player):
        return he(board, np.int64(m), np.int64(player))

    def side_seeds(board, m, player):
        return ss(board, np.int64(m), np.int64(player))

    return SimpleNamespace(apply_move=inline_jit(apply_move), legal_moves=inline_jit(legal_moves),
                           margin=inline_jit(margin), heuristic=inline_jit(heuristic),
                           side_seeds=inline_jit(side_seeds))

"""The exact Connect Four solver: Pascal Pons's negamax, compiled.

After Pons, "Solving Connect 4: how to build a perfect AI" (blog.gamesolver.org, parts 3-10):
negamax with alpha-beta on two bitboards (the stones of the player to move and the mask of all
stones), a transposition table of upper and lower bounds keyed by ``position + mask``, moves in centre-
first order re-sorted by the number of winning cells they create, losing moves pruned before
the search (a move under an opponent's winning cell, or any move when the opponent has two
immediate wins), and the root solved by a sequence of null-window searches that halve the
score interval (iterative null window).

**Score convention (Pons's):** from the view of the player to move, both players perfect, the
winner winning as early as possible: ``score > 0`` wins with its ``k``-th stone, ``score =
cells / 2 + 1 - k`` (7x6: ``22 - k``); ``0`` a draw; ``score < 0`` loses against the
opponent's ``k``-th stone, ``score = k - (cells / 2 + 1)``. So an immediate win with ``n``
stones on the board scores ``(cells + 1 - n) // 2``. This is finer than the protocol's margin
(+1 / 0 / -1, player 0's view): ``sign(score)`` is the mover's outcome.

The table keeps bounds, which stay true whatever the root, so one table serves many
positions (:class:`Connect4Solver` reuses it; a generation stamp empties it in O(1) between
positions when ``fresh``).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit

from ..._checks import check_bool, check_int
from ...stop import STOP_EVERY
from .rules import check_size, popcount, winning_cells
from .state import Connect4State

DEFAULT_TABLE_BITS = 22
#: What a search stopped by its flag returns (far outside every score).
STOPPED = 1 << 20


@njit(cache=True, inline="always")
def _div2(x):
    """``x / 2`` rounded toward zero (C++'s, as in Pons's bounds)."""
    return x // 2 if x >= 0 else -((-x) // 2)


_popcount = njit(cache=True, inline="always")(popcount)
_winning_cells = njit(cache=True, inline="always")(winning_cells)


@njit(cache=True)
def _negamax(cur, mask, ply, alpha, beta, w, h, bottom, full, order, table, shift, gen, sort_moves,
             sort_scores, nodes):
    """The score of the position (``cur`` the mover's stones) if it lies in (alpha, beta);
    else a bound on the side of the window it falls. Pons's ``negamax`` (his final version:
    the table holds upper bounds, stored as ``v - MIN + 1``, and lower bounds, stored as
    ``v + MAX - 2 MIN + 2``, both in the low byte of an entry's second word, the table's
    generation above it). ``nodes[0]`` counts the calls; ``nodes[1]`` set (read every
    :data:`STOP_EVERY` calls) ends the search: the call returns :data:`STOPPED`, and each caller
    seeing it returns it at once, storing nothing, so the table keeps true bounds only."""
    nodes[0] += 1
    if (nodes[0] & (STOP_EVERY - 1)) == 0 and nodes[1] != 0:
        return STOPPED
    cells = w * h
    possible = (mask + bottom) & full
    opp_win = _winning_cells(cur ^ mask, mask, h, full)
    forced = possible & opp_win
    if forced:
        if forced & (forced - 1):
            return -_div2(cells - ply)  # two threats: the opponent wins next move
        possible = forced
    nxt = possible & ~(opp_win >> 1)
    if nxt == 0:
        return -_div2(cells - ply)
    if ply >= cells - 2:
        return 0  # neither side can win: no immediate win, and the opponent cannot either
    lo = -_div2(cells - 2 - ply)
    if alpha < lo:
        alpha = lo
        if alpha >= beta:
            return alpha
    hi = _div2(cells - 1 - ply)
    min_score = -_div2(cells) + 3
    max_score = _div2(cells + 1) - 3
    key = cur + mask
    slot = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
    if table[slot, 0] == key and (table[slot, 1] >> 8) == gen:
        val = table[slot, 1] & 255
        if val > max_score - min_score + 1:  # a lower bound
            low = val + 2 * min_score - max_score - 2
            if alpha < low:
                alpha = low
                if alpha >= beta:
                    return alpha
        else:  # an upper bound
            hi = val + min_score - 1
    if beta > hi:
        beta = hi
        if alpha >= beta:
            return beta
    n = 0
    col_bits = (np.int64(1) << h) - 1
    for i in range(w - 1, -1, -1):
        mv = nxt & (col_bits << (order[i] * (h + 1)))
        if mv:
            score = _popcount(_winning_cells(cur | mv, mask, h, full))
            k = n
            while k > 0 and sort_scores[ply, k - 1] > score:
                sort_moves[ply, k] = sort_moves[ply, k - 1]
                sort_scores[ply, k] = sort_scores[ply, k - 1]
                k -= 1
            sort_moves[ply, k] = mv
            sort_scores[ply, k] = score
            n += 1
    for k in range(n - 1, -1, -1):
        mv = sort_moves[ply, k]
        score = -_negamax(cur ^ mask, mask | mv, ply + 1, -beta, -alpha, w, h, bottom, full, order, table,
                          shift, gen, sort_moves, sort_scores, nodes)
        if score == -STOPPED:
            return STOPPED
        if score >= beta:
            table[slot, 0] = key  # a lower bound
            table[slot, 1] = (gen << 8) | (score + max_score - 2 * min_score + 2)
            return score
        if score > alpha:
            alpha = score
    table[slot, 0] = key  # an upper bound
    table[slot, 1] = (gen << 8) | (alpha - min_score + 1)
    return alpha


@njit(cache=True, inline="always")
def _masks(w, h):
    """The bottom cell of every column, and every playable cell (one spare bit a column)."""
    bottom = np.int64(0)
    for c in range(w):
        bottom |= np.int64(1) << (c * (h + 1))
    return bottom, bottom * ((np.int64(1) << h) - 1)


@njit(cache=True, nogil=True)  # a CLI or GUI thread stays responsive (Ctrl-C) while it runs
def _solve(cur, mask, ply, w, h, weak, order, table, shift, gen, sort_moves, sort_scores, nodes, bounds):
    """Pons's ``solve``: the exact score by null-window searches (``weak``: only its sign, -1/0/1).
    ``bounds`` holds the interval known so far (another thread may read it); a search stopped by
    ``nodes[1]`` leaves the last true interval there and returns its lower end."""
    cells = w * h
    bottom, full = _masks(w, h)
    if _winning_cells(cur, mask, h, full) & (mask + bottom) & full:
        bounds[0] = bounds[1] = _div2(cells + 1 - ply)
        return bounds[0]
    lo = -_div2(cells - ply)
    hi = _div2(cells + 1 - ply)
    if weak:
        lo = -1
        hi = 1
    bounds[0], bounds[1] = lo, hi
    while lo < hi:
        med = lo + (hi - lo) // 2
        if med <= 0 and _div2(lo) < med:
            med = _div2(lo)
        elif med >= 0 and _div2(hi) > med:
            med = _div2(hi)
        r = _negamax(cur, mask, ply, med, med + 1, w, h, bottom, full, order, table, shift, gen, sort_moves,
                     sort_scores, nodes)
        if r == STOPPED:
            break
        if r <= med:
            hi = r
        else:
            lo = r
        bounds[0], bounds[1] = lo, hi
    return lo


@njit(cache=True, nogil=True)
def _best_move(cur, mask, ply, w, h, score, order, table, shift, gen, sort_moves, sort_scores, nodes):
    """A column whose move keeps the mover's exact ``score``: a winning one, else the first in
    centre-first order whose child fails low on the null window at ``-score`` (cheap on the table
    the solve left); -1 when ``nodes[1]`` stopped the search."""
    cells = w * h
    bottom, full = _masks(w, h)
    possible = (mask + bottom) & full
    win = _winning_cells(cur, mask, h, full) & possible
    if win:
        return np.int64(_popcount((win & -win) - 1)) // (h + 1)
    opp_win = _winning_cells(cur ^ mask, mask, h, full)
    forced = possible & opp_win
    if forced:
        possible = forced  # two threats: every move loses; one: the block is the only move that may not
    nxt = possible & ~(opp_win >> 1)
    if forced & (forced - 1) or nxt == 0:
        return np.int64(_popcount((possible & -possible) - 1)) // (h + 1)
    col_bits = (np.int64(1) << h) - 1
    for i in range(w):
        mv = nxt & (col_bits << (order[i] * (h + 1)))
        if mv:
            r = _negamax(cur ^ mask, mask | mv, ply + 1, -score, -score + 1, w, h, bottom, full, order, table,
                         shift, gen, sort_moves, sort_scores, nodes)
            if r == STOPPED:
                return np.int64(-1)
            if r <= -score:
                return order[i]
    return np.int64(-1)


class Solved(NamedTuple):
    """A solved position: ``score`` (Pons's convention, the mover's view; None when stopped first),
    ``nodes`` searched (negamax calls), ``seconds``, and the interval ``[lower, upper]`` the score
    is known to lie in (one point when solved)."""

    score: int | None
    nodes: int
    seconds: float
    lower: int
    upper: int


class Connect4Solver:
    """Solve Connect Four positions of one size exactly.

    ``flag`` (int64[1]) stops a search when another thread sets ``flag[0]`` (:func:`jitsearch.stop.watch`
    with slot 0); ``bounds`` (int64[2]) holds the interval known so far, for progress lines. A stop
    never leaves a wrong entry in the table.

    Parameters
    ----------
    width, height : int
        The board (4..9 by 4..8, ``width * (height + 1) <= 64``).
    table_bits : int
        The transposition table holds 2**table_bits entries (16 bytes each; 22: 64 MB), a position's slot
        the top bits of its key times a 64-bit odd constant (Fibonacci hashing: the key's low bits alone,
        the first columns, left positions that differ in the last columns in one slot and cost Pons's
        opening sets 8-30x more nodes, bench/results/connect4_pons.md).
    """

    def __init__(self, width: int = 7, height: int = 6, *, table_bits: int = DEFAULT_TABLE_BITS):
        self.width, self.height = check_size(width, height)
        self.table_bits = check_int("table_bits", table_bits, 10, 28)
        slots = 1 << self.table_bits
        self.table = np.zeros((slots, 2), np.int64)  # key, then generation << 8 | value: one cache line a probe
        self.gen = 1
        w = self.width
        self.order = np.array([w // 2 + (1 - 2 * (i % 2)) * (i + 1) // 2 for i in range(w)], np.int64)
        self.sort_moves = np.zeros((w * self.height + 1, w), np.int64)
        self.sort_scores = np.zeros((w * self.height + 1, w), np.int64)
        self.nodes = np.zeros(2, np.int64)  # the calls counted, then the stop flag
        self.flag = self.nodes[1:]  # a view: flag[0] is nodes[1]
        self.bounds = np.zeros(2, np.int64)

    def clear(self) -> None:
        """Forget every table entry (O(1): a new generation)."""
        self.gen += 1
        if self.gen >= np.iinfo(np.int32).max:
            self.table[:] = 0
            self.gen = 1

    def _state(self, position) -> Connect4State:
        state = position if isinstance(position, Connect4State) else \
            Connect4State.from_text(position, width=self.width, height=self.height)
        if (state.width, state.height) != (self.width, self.height):
            raise ValueError(f"this solver is for {self.width}x{self.height}, got a {state.width}x{state.height} board")
        if state.is_over:
            raise ValueError("the game is over: nothing to solve")
        return state

    def _args(self, state: Connect4State) -> tuple:
        cur = state.stones[state.player]
        mask = state.stones[0] | state.stones[1]
        return np.int64(cur), np.int64(mask), np.int64(state.ply), np.int64(self.width), np.int64(self.height)

    def solve(self, position, *, weak: bool = False, fresh: bool = False) -> Solved:
        """The exact score of ``position`` (a live :class:`Connect4State` of this size, or its text in
        either form) for the player to move; ``weak``: only win / draw / loss as 1 / 0 / -1;
        ``fresh``: with an empty table (node counts independent of earlier positions). The search
        ends early when ``self.flag[0]`` is set: ``score`` None, the interval found so far."""
        state = self._state(position)
        weak = check_bool("weak", weak)
        if fresh:
            self.clear()
        self.nodes[0] = 0
        t0 = time.perf_counter()
        score = _solve(*self._args(state), weak, self.order, self.table, np.uint64(64 - self.table_bits),
                       np.int64(self.gen), self.sort_moves, self.sort_scores, self.nodes, self.bounds)
        seconds = time.perf_counter() - t0
        lo, hi = int(self.bounds[0]), int(self.bounds[1])
        if lo < hi:  # stopped
            return Solved(None, int(self.nodes[0]), seconds, lo, hi)
        score = int(score)
        if weak:
            score = (score > 0) - (score < 0)  # an immediate win is scored exactly before the weak search
        return Solved(score, int(self.nodes[0]), seconds, score, score)

    def best_move(self, position, score: int) -> int | None:
        """A column (0-based) that keeps ``score``, the position's exact score as :meth:`solve` gave
        it (not weak); None when stopped by ``self.flag``."""
        state = self._state(position)
        move = int(_best_move(*self._args(state), np.int64(score), self.order, self.table,
                              np.uint64(64 - self.table_bits), np.int64(self.gen), self.sort_moves, self.sort_scores,
                              self.nodes))
        return None if move < 0 else move

    def move_scores(self, position) -> dict[int, int]:
        """Each legal move's exact score for the player to move (column, 0-based -> score)."""
        state = self._state(position)
        cells = self.width * self.height
        out = {}
        for c in state.legal_moves():
            child = state.play(c)
            out[c] = (cells + 1 - state.ply) // 2 if child.is_over and child.margin != 0 else \
                0 if child.is_over else -self.solve(child).score
        return out


_SOLVERS: dict = {}


def solve(position, *, weak: bool = False) -> int:
    """The exact score (Pons's convention) of a live position; one solver per size, kept."""
    state = position if isinstance(position, Connect4State) else Connect4State.from_text(position)
    size = (state.width, state.height)
    if size not in _SOLVERS:
        _SOLVERS[size] = Connect4Solver(*size)
    return _SOLVERS[size].solve(state, weak=weak).score

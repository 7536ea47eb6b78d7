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

GAME_OVER = -1


def _side_seeds(board, m, player):
    first = 1 if player == 0 else m + 2
    total = 0
    for i in range(first, first + m):
        total += board[i]
    return total


def _apply_move(board, m, player, pit, empty_capture):
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


# the weights of seed 003 (from its reference [7])
W1 = 0.198649
W2 = 0.190084
W3 = 0.370793
W4 = 1.0
W5 = 0.565937


def _heuristic(board, m, player):
    """Weighted heuristic H1..H5 of seed 003 from ``player``'s point of view.

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


def build(jit):
    """Compile the rule functions with ``jit`` (``numba.njit`` or
    ``numba.cuda.jit(device=True)``); the bodies call no other function, so
    each compiles on its own from this one description of the rules."""
    return SimpleNamespace(
        apply_move=jit(_apply_move),
        legal_moves=jit(_legal_moves),
        margin=jit(_margin),
        heuristic=jit(_heuristic),
        side_seeds=jit(_side_seeds),
    )

"""FSSS-Minimax on Oware to a fixed depth (Weinstein, Littman & Goschin,
"Rollout-based Game-tree Search Outprunes Traditional Alpha-beta", Algorithm 2).

The tree is :mod:`.alphabeta`'s depth-limited tree without a table: the
same moves in the same order (:func:`.alphabeta.order_moves`: the most seeds
captured first, ties in house order, a given root move before all), the
same leaves (a finished game, a position below the root with at most the
endgame database's seeds on the board, the depth limit) and the same leaf
values, so the two agree exactly on the root's value.

Conventions: values are for the **root's player to move** (alpha-beta is
negamax; here a node is MAX when the root's player is to move there, MIN
otherwise; Oware strictly alternates, so MAX and MIN alternate by ply).
A leaf's value is alpha-beta's value for the player who moved into it,
negated when that player is not the root's (negation is exact, so the
values are equal bit for bit).

The repetition rule is exact along every line: a node's record (the
positions since the last capture) depends on its path, so each rollout
replays the moves from the root, each move writing its position on top of
the root state's record (row ``rows + d`` at ply ``d``) and keeping the
``first``/``count`` of each ply on the path, as alpha-beta's depth-first
stack does. The node pool stores only bounds, children and moves.

Counting, as Kalah's :mod:`jitsearch.games.kalah.fsss`: ``nodes`` counts
node visits over all rollouts (the root and every node entered, the leaf
included), ``evaluations`` the frontier expansions (one a rollout: Theorem
1 of the paper). The trace holds each expanded frontier position's path
hash (:func:`jitsearch.games.kalah.alphabeta.path_hash` of the houses from
the root), the hash alpha-beta's trace uses, so the leaves each expanded
can be compared. On a fixed tree with a fixed child order FSSS never
expands a leaf that left-to-right alpha-beta does not (docs/solvers.md);
the tree here is fixed by the root state (its record included) and the
order is static (a function of the node's board, and of the root's given
first move), so that holds here too.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...stop import stop_requested
from ...search.fsss_minimax import fsss_combine as combine
from ...search.fsss_minimax import fsss_descend, fsss_open, grown
from ..kalah.alphabeta import path_hash
from .alphabeta import (DEFAULT_SIDE_WEIGHT, MAX_DEPTH, SearchResult, database_value, deepen, evaluate, final_value,
                        order_moves, run_search, seeds_on_board)
from .endgame import OwareEndgame
from .rules import GAME_OVER
from .state import RULES, OwareState

apply_move = RULES.apply_move

#: Bound rows the node pool starts with (it doubles as needed).
POOL_START = 1024


@njit(cache=True, nogil=True)
def oware_fsss(boards, m, root_player, depth, hist, root_first_row, root_rows, root_ply, move_limit, gsi,
               side_weight, moves, keys, counters, node_limit, root_first, db_values, db_binom, db_seeds, trace):
    """FSSS-Minimax from ``boards[0]`` (``root_player`` to move) to ``depth`` plies.

    Arguments as :func:`.alphabeta.negamax_kernel`'s (the same buffers).
    A growing pool holds each visited node's (L, U) bounds for the root's
    player, its first child's row and child count, and the house that leads
    to it; children are allocated together when their parent is first
    entered, in alpha-beta's order. Exact epsilon steps as in
    :mod:`jitsearch.search.fsss_minimax`. ``counters``: int64[4] = (node
    visits, frontier expansions, aborted flag, evaluations of unfinished
    games), or int64[5] with the stop flag ``counters[STOP_SLOT]`` read every
    1,024 visits (:mod:`jitsearch.stop`); past ``node_limit`` visits,
    or once the stop flag is set, the search stops with the aborted flag set.
    ``trace`` receives frontier path hashes. Returns (value for the root
    player, best house: the lowest-ordered root move proven to attain it).
    """
    cap = POOL_START
    bounds = np.empty((cap, 2), np.float64)
    first_child = np.empty(cap, np.int64)
    num_kids = np.empty(cap, np.int64)
    move_of = np.empty(cap, np.int64)
    bounds[0, 0] = -math.inf
    bounds[0, 1] = math.inf
    first_child[0] = -1
    num_kids[0] = 0
    used = 1
    movers = np.empty(depth + 1, np.int64)
    first = np.empty(depth + 1, np.int64)
    count = np.empty(depth + 1, np.int64)
    path_entry = np.empty(depth + 1, np.int64)
    paths = np.zeros(depth + 1, np.uint64)
    path_ax = np.empty(depth + 1, np.float64)
    path_ak = np.empty(depth + 1, np.int64)
    path_bx = np.empty(depth + 1, np.float64)
    path_bk = np.empty(depth + 1, np.int64)
    record = trace.shape[0] > 0
    movers[0] = root_player
    first[0] = root_first_row
    count[0] = root_rows
    path_entry[0] = 0
    fsss_open(path_ax, path_ak, path_bx, path_bk)
    while bounds[0, 0] != bounds[0, 1]:
        d = 0
        while True:  # one rollout: from the root down to a new frontier position
            e = path_entry[d]
            p = movers[d]
            counters[0] += 1
            if counters[0] > node_limit or stop_requested(counters, counters[0]):
                counters[2] = 1
                return 0.0, -1
            c0 = first_child[e]
            if c0 < 0:  # first entry: allocate the children in alpha-beta's order
                n = order_moves(boards, d, m, p, gsi, moves, keys, root_first if d == 0 else -1)
                if used + n > bounds.shape[0]:
                    bounds, first_child = grown(bounds, used), grown(first_child, used)
                    num_kids, move_of = grown(num_kids, used), grown(move_of, used)
                c0 = used
                for i in range(n):
                    bounds[c0 + i, 0] = -math.inf
                    bounds[c0 + i, 1] = math.inf
                    first_child[c0 + i] = -1
                    num_kids[c0 + i] = 0
                    move_of[c0 + i] = moves[d, i]
                first_child[e] = c0
                num_kids[e] = n
                used += n
            ce = c0 + fsss_descend(p == root_player, bounds, c0, num_kids[e], path_ax, path_ak, path_bx, path_bk, d)
            house = move_of[ce]
            child = boards[d + 1]
            for i in range(2 * m + 2):
                child[i] = boards[d, i]
            nxt, f2, c2 = apply_move(child, m, p, house, gsi, hist, first[d], count[d], root_ply + d, move_limit)
            if record:
                paths[d + 1] = path_hash(paths[d], house)
            d += 1
            path_entry[d] = ce
            leaf = True  # alpha-beta's leaf tests, in its order; v for the mover p
            if nxt == GAME_OVER:
                v = -final_value(child, m, 1 - p)
            elif db_seeds >= 0 and seeds_on_board(child, m) <= db_seeds:
                v = -database_value(child, m, nxt, db_values, db_binom)
            elif d == depth:
                counters[3] += 1
                v = -evaluate(child, m, nxt, side_weight)
            else:
                leaf = False
            if leaf:
                counters[0] += 1
                if counters[0] > node_limit or stop_requested(counters, counters[0]):
                    counters[2] = 1
                    return 0.0, -1
                if record and counters[1] < trace.shape[0]:
                    trace[counters[1]] = paths[d]
                counters[1] += 1
                if p != root_player:
                    v = -v
                bounds[ce, 0] = v
                bounds[ce, 1] = v
                break
            movers[d] = nxt
            first[d] = f2
            count[d] = c2
        for level in range(d - 1, -1, -1):  # backup along the path
            e = path_entry[level]
            lo, up = combine(movers[level] == root_player, bounds, first_child[e], num_kids[e])
            bounds[e, 0] = lo
            bounds[e, 1] = up
    c0 = first_child[0]
    for i in range(num_kids[0]):
        if bounds[c0 + i, 0] == bounds[0, 0]:
            return bounds[0, 0], move_of[c0 + i]
    return bounds[0, 0], np.int64(-1)


def search(state: OwareState, depth: int, *, side_weight: float = DEFAULT_SIDE_WEIGHT, first_move: int = -1,
           node_limit: int | None = None, endgame: OwareEndgame | None = None, trace: bool = False,
           stop=None) -> SearchResult | None:
    """FSSS to ``depth`` plies (1..MAX_DEPTH) from ``state``: the value of
    :func:`.alphabeta.search` with the same arguments (module docstring).
    ``nodes`` counts node visits, ``evaluations`` frontier expansions;
    ``trace`` records their path hashes (``frontier``). Returns None if
    ``node_limit`` node visits stopped it; ``stop`` as :func:`.alphabeta.search`."""
    return run_search(oware_fsss, state, depth, side_weight, first_move, node_limit, endgame, trace, stop)


def iterative_deepening(state: OwareState, *, time_limit: float | None = None, max_depth: int = MAX_DEPTH,
                        side_weight: float = DEFAULT_SIDE_WEIGHT,
                        endgame: OwareEndgame | None = None, stop=None) -> SearchResult:
    """:func:`.alphabeta.iterative_deepening` with FSSS at each depth (the
    previous best move first at the root; node limits in node visits;
    ``stop`` as there)."""
    return deepen(search, state, time_limit, max_depth, side_weight, endgame, stop)

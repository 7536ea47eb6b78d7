"""Games on incremental random trees (Zhang, "Forward Estimation for Game-Tree Search", section 5; Korf & Chickering).

A game is a walk down a fresh incremental random tree of total depth ``D``:
MAX moves at the root, players alternate, and each chooses its move by
searching to its own horizon (``min(horizon, D - depth)``) from the current
node with alpha-beta or forward estimation. The cost of the leaf reached is
the outcome (MAX wants it large).

This module holds only the game, the kernel :func:`play_game`. The players
(``PlayerSpec``), the trees (``GameConfig``), pairs of games with the seats
swapped, tournaments, their record files and the depth-increment protocol
live in :mod:`jitsearch.arena.random_tree_tournament`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..search.forward_estimation import incremental_search
from ..trees.incremental import inc_child_key, inc_edge_cost, inc_root_key

# player parameter vector: [use_fe, bounds_mode, l, u, delta, horizon]
_P_FE, _P_MODE, _P_L, _P_U, _P_DELTA, _P_H = range(6)


@njit(cache=True, nogil=True)
def play_game(branching, random_branching, edge_lo, edge_span, tree_seed, total_depth, max_player, min_player):
    """One game; returns (outcome, generations of MAX, generations of MIN).

    ``max_player`` and ``min_player`` are float64[6] parameter vectors
    ``[use_fe, bounds_mode, l, u, delta, horizon]`` (built by
    :meth:`jitsearch.arena.random_tree_tournament.PlayerSpec.params`).
    """
    key = inc_root_key(tree_seed)
    cost = 0.0
    gens = np.zeros(2, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    for depth in range(total_depth):
        p = max_player if depth % 2 == 0 else min_player
        horizon = min(np.int64(p[_P_H]), total_depth - depth)
        counter[0] = 0
        _, best, _, _ = incremental_search(
            branching, random_branching, edge_lo, edge_span, key, cost, depth % 2 == 0, horizon,
            p[_P_FE] > 0, np.int64(p[_P_MODE]), p[_P_L], p[_P_U], p[_P_DELTA], counter,
        )
        gens[depth % 2] += counter[0]
        key = inc_child_key(key, best)
        cost += inc_edge_cost(key, edge_lo, edge_span)
    return cost, gens[0], gens[1]

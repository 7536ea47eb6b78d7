"""The Kalah engine's evaluation (:mod:`.engine`): the store difference in
centiseeds plus a fitted linear function of features of the houses.

Conventions: the value is from the point of view of the player to move, in
centiseeds (``SCALE`` units a seed); every term but the store difference is
a function of the houses alone (the engine's table relies on it).

The engine's kernel inlines these functions, and Numba's disk cache keys a
kernel on its own source file only: after editing this file, touch
``engine.py`` (or clear its ``__pycache__``), or the cached kernel keeps the
old evaluation."""

from __future__ import annotations

import numpy as np
from numba import njit

#: Evaluation units per seed.
SCALE = 100
#: Features of the evaluation, from the mover's side (all "own minus opponent's" unless named):
#: seeds in the houses, non-empty houses, houses whose seeds end exactly in the own store (an extra turn),
#: the largest capture the mover can make now, the largest the opponent could make, and a constant (tempo).
FEATURES = ("side_seeds", "nonempty", "extra_turns", "capture_now", "capture_threat", "tempo")
#: Fitted weights (centiseeds per unit of each feature): a least-squares fit of the rest-of-game values of an
#: endgame database to the features, on positions from games (see ``bench/kalah_eval_fit.py``).
FITTED_WEIGHTS = np.array([23, 196, 59, 137, -26, 4], dtype=np.int64)
STORE_WEIGHTS = np.zeros(len(FEATURES), dtype=np.int64)
EVALS = ("fitted", "store")


@njit(cache=True, inline="always")
def _side_terms(board, m, side):
    """One side's raw features: (seeds in its houses, non-empty houses, houses whose seeds end in its store,
    the largest capture it could make now: the captured seeds plus the capturing one, 0 for none)."""
    lap = 2 * m + 1
    first = 1 if side == 0 else m + 2
    seeds = 0
    nonempty = 0
    extra = 0
    capture = 0
    for k in range(m):
        i = first + k
        s = board[i]
        seeds += s
        if s == 0:
            continue
        nonempty += 1
        distance = m - k  # from house k of the side (0: the farthest from its store) to its store
        if s == distance or s == distance + lap:
            extra += 1
        elif s < distance:
            land = i + s
            if board[land] == 0:  # lands in an own empty house (no lap)
                gain = board[2 * m + 2 - land]
                if gain > 0 and gain + 1 > capture:
                    capture = gain + 1
    return seeds, nonempty, extra, capture


@njit(cache=True, inline="always")
def features_into(board, m, player, out):
    """Write the :data:`FEATURES` of ``board`` for ``player`` to move into ``out``."""
    s0, n0, e0, c0 = _side_terms(board, m, player)
    s1, n1, e1, c1 = _side_terms(board, m, 1 - player)
    out[0] = s0 - s1
    out[1] = n0 - n1
    out[2] = e0 - e1
    out[3] = c0
    out[4] = c1
    out[5] = 1


@njit(cache=True, inline="always")
def evaluate(board, m, player, weights):
    """Value for ``player`` (to move): SCALE x store difference + weights . features."""
    own = m + 1 if player == 0 else 0
    opp = m + 1 - own
    if m == 6:  # the board of every measurement: its loops unrolled (measured 5% less time a node)
        s0, n0, e0, c0 = _side_terms(board, 6, player)
        s1, n1, e1, c1 = _side_terms(board, 6, 1 - player)
    else:
        s0, n0, e0, c0 = _side_terms(board, m, player)
        s1, n1, e1, c1 = _side_terms(board, m, 1 - player)
    return (np.int64(SCALE) * (board[own] - board[opp]) + weights[0] * (s0 - s1) + weights[1] * (n0 - n1)
            + weights[2] * (e0 - e1) + weights[3] * c0 + weights[4] * c1 + weights[5])

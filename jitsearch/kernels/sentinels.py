"""The sentinels and enums shared by the MCTS kernels (CPU and CUDA) and the
CPU tree of :mod:`jitsearch.mcts`: one definition each.

Node links: :data:`NO_NODE` (a child not created yet; -1), :data:`TERMINAL`
(``to_move`` of a finished game), and in the shared tree :data:`EXPANDING`
(a node another block is expanding) and :data:`POOL_FULL`. Selection
formulas and rewards are small integers in the kernels and names at the
Python boundary (:data:`FORMULAS`, :data:`REWARDS`, :data:`EVALS`).
"""

from __future__ import annotations

from ..games.playout import NO_PLY_CAP  # noqa: F401  (a playout without a ply cap: playout_depth 0)

NO_NODE = -1
TERMINAL = -1
EXPANDING = -2
POOL_FULL = -3

FORMULA_UCB1, FORMULA_SQRT, FORMULA_SQRTLOG = 0, 1, 2
#: How a kernel scores a playout (see :mod:`jitsearch.kernels.evaluation`): the outcome if the game finished, else
#: Siljander's heuristic (win); the heuristic always (heuristic, HMCTS); the outcome if the game finished, else the
#: squashed store difference (store, ``eval=store``).
REWARD_WIN, REWARD_HEURISTIC, REWARD_STORE = 0, 1, 2
#: The implicit minimax value of a node no evaluation has reached yet.
UNEVALUATED = -1
#: Selection formulas by name: w/n + c*sqrt(ln N / n) (ucb1), c*sqrt(N)/n (sqrt), c*sqrt(ln N)/sqrt(n) (sqrtlog).
FORMULAS = {"ucb1": FORMULA_UCB1, "sqrt": FORMULA_SQRT, "sqrtlog": FORMULA_SQRTLOG}
#: Rewards by name: the playout's win/draw/loss, or Siljander's (HMCTS) heuristic of where it stopped.
REWARDS = {"win": REWARD_WIN, "heuristic": REWARD_HEURISTIC}
#: Leaf evaluations by name (``eval=``): the squashed store difference, or Siljander's (HMCTS) heuristic.
EVALS = ("store", "heuristic")

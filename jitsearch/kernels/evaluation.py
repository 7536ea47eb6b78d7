"""Leaf evaluations of the MCTS kernels: a few random plies, then an
evaluation, and the implicit minimax values built from it.

After Lanctot, Winands, Pepels and Sturtevant 2014, "Monte Carlo Tree Search
with Heuristic Evaluations using Implicit Minimax Backups" (CIG 2014;
sections III-IV, Kalah in IV-B: playouts cut after 4 plies and scored by
the store difference, "fet4"). Every backend (the CPU tree of
:mod:`jitsearch.mcts.tree`, the multi-tree kernels of
:mod:`jitsearch.kernels.game_mcts`, the shared-tree kernels of
:mod:`jitsearch.kernels.game_shared_tree`, with Kalah's rewards) follows the same conventions:

* **The leaf's reward** (``eval=``): ``eval_plies`` uniformly random plies
  from the leaf (0: the leaf itself), then, if the game finished, its
  outcome (1 / 0.5 / 0 for a win / draw / loss), else the evaluation:
  ``store``, the store difference d (player's store minus the opponent's)
  squashed into (0, 1) by :func:`store_value`; or ``heuristic``, Siljander's (HMCTS)
  weighted H1..H5 difference mapped linearly into [0, 1] (HMCTS's
  mapping). ``eval=heuristic`` with ``eval_plies = k > 0`` is exactly the
  older ``playout_depth=k``.
* **The squash** ``store_value(d, total) = 0.5 + d / (2 (|d| + s))`` with
  ``s = max(1, total / 8)`` seeds (6 at Kalah(6,4)): a lead of s seeds is
  worth 0.75, of 3s 0.875; odd (``store_value(-d) = 1 - store_value(d)``),
  increasing, never 0 or 1 (those are the outcomes of finished games). It
  uses only additions and divisions of exact values, so every target (CPU,
  GPU, the CUDA simulator, plain Python) computes the same bits.
* **Implicit minimax values** (``imm=`` alpha > 0): besides its mean
  reward, every node keeps ``imm``, in the same units and from the same
  player's view as ``value`` (the player who moved *into* the node):
  ``UNEVALUATED`` (-1) until a backup reaches it; then, for a node with
  evaluated children, the best child value for the player to move at the
  node (the children were all moved into by that player, so the best is
  the largest; flipped, ``1 - best``, when the node's mover is the other
  player; an extra turn keeps it), else the node's own static evaluation
  (the evaluation at ``eval_plies = 0``; a finished game's outcome). Each
  backup recomputes the nodes of its path from the leaf up, so every
  evaluated node holds the minimax value of the evaluations below it.
  Selection replaces the mean ``w / n`` by ``(1 - alpha) w / n + alpha
  imm`` (paper, eq. 2) for children already evaluated.
"""

from __future__ import annotations

from ..games.protocol import STORE_SCALE_DIVISOR, store_value  # noqa: F401  (re-exported)
from .sentinels import NO_PLY_CAP, REWARDS, REWARD_STORE, REWARD_WIN


def kernel_reward(reward: str, playout_depth: int, eval: str | None, eval_plies: int | None) -> tuple[int, int]:
    """The kernels' (reward code, plies before scoring) for checked options:
    without ``eval``, ``reward`` after ``playout_depth`` plies (0: to the
    end, NO_PLY_CAP); with ``eval=store``, REWARD_STORE after ``eval_plies``;
    with ``eval=heuristic``, REWARD_WIN after ``eval_plies`` (the outcome if
    the game finished, else the heuristic)."""
    if eval is None:
        return REWARDS[reward], (playout_depth if playout_depth else NO_PLY_CAP)
    return (REWARD_STORE if eval == "store" else REWARD_WIN), eval_plies

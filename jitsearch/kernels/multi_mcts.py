"""Many Kalah MCTS trees at once: the per-tree step written once over the
game protocol (:mod:`jitsearch.kernels.game_mcts`) with Kalah's reward units
(:func:`game_units`), run on the CPU here (trees split over the shared
thread pool) and on CUDA through :mod:`jitsearch.kernels.cuda_mcts` (one
thread block per tree); this module keeps Kalah's tree batch, units and the
pieces every MCTS kernel shares (selection score, backups, ln table).

Layout: T independent trees of N preallocated nodes each, struct of arrays
with the tree as the leading axis (``[T, N]``, boards ``[T, N, 2m+2]``)::

    parent[T, N]        int32   NO_NODE (-1) at the root
    first_child[T, N]   int32   NO_NODE until expanded; children contiguous
    num_children[T, N]  int32
    move[T, N]          int32   the pit that led to the node (-1 at the root)
    to_move[T, N]       int32   player to move, TERMINAL (-1) once the game is over
    mover_in[T, N]      int32   the player who moved into the node
    visits[T, N]        int64   iterations through the node
    value[T, N]         int64   reward units credited to mover_in
    imm[T, N]           int64   implicit minimax value in reward units for mover_in, UNEVALUATED (-1)
                                before any backup reached the node; [T, 1] and unused without imm=
    boards[T, N, 2m+2]  int16   each node's position
    size[T]             int32   nodes used

Statistics are integers: every playout scores ``REWARD_UNITS`` for a win of
the player credited, half of it for a draw, 0 for a loss, and the heuristic
reward (HMCTS) or the evaluation (``eval=``, :mod:`jitsearch.kernels.evaluation`)
rounded to a multiple of 1/REWARD_UNITS. So the sums are exact
and independent of the order in which a block's threads finish, and the
CPU twin and the GPU kernel grow bit-identical trees for the same keys. The
exploration term reads ln N from a table computed once on the host
(``log_table``), so neither target's ``log`` is used; square roots and
divisions are IEEE-rounded on both, and the selection score is written so
that no multiply feeds an add (CUDA fuses those into fma by default). The
heuristic reward's weighted sum may be fused on the GPU; its rounding to
1/REWARD_UNITS hides that unless a value falls on a rounding boundary.

One step of tree t selects ``leaves_per_step`` (L) leaves, one after
another: from the root by the UCT formula (the first unvisited child in
house order, else the best score; ties to the first), expanding a leaf that
is not over (all its children at once, then taking the first) unless the
pool is full (then the leaf itself is evaluated); each descent leaves a
virtual visit (a visit with no reward) on its path, so the next descent of
the step prefers other branches. Then every leaf gets ``playouts`` random
playouts (leaf j of step s is iteration i = s·L + j; playout k's stream is
``stream_key(tree_keys[t], i, k)``), and leaf by leaf in order the virtual
visits are taken back and the summed reward is backed up to the root, each
node credited for the player who moved into it (so Kalah's extra turns need
no sign flips); with implicit minimax backups (alpha > 0) the backup also
recomputes the minimax values of the leaf's path, and selection mixes them
into the mean. On the GPU the L x playouts playouts of a step run on the
block's threads at once, so a step costs about one playout's latency plus
L serial descents: L multiplies a tree's iterations per second.

MCTS-Solver is not part of this search (proven values would need a second,
serial pass over each tree's nodes per iteration on the device); use
:func:`jitsearch.mcts.search.mcts_search` with ``solver=True``.
"""

from __future__ import annotations

import math

import numpy as np

from ..games.kalah import rules as kalah_rules
from ..games.kalah.game import GAME as KALAH
from ..games.kalah.rules import W1, W2, W3, W4, W5
from .evaluation import store_value
from .game_mcts import GameTrees, cpu_step, grow_trees_cpu as grow_game_trees
from .sentinels import REWARD_HEURISTIC, REWARD_STORE
from .tree_step import (IMM_BYTES, REWARD_UNITS, imm_scales, log_table_for, make_backups,  # noqa: F401  (re-exported)
                        make_imm_backup, make_score, margin_units)

#: Bytes of one node: eight int32/int64 fields and an int16 board of 2m+2 pits.
NODE_FIXED_BYTES = 4 * 6 + 8 * 2


def node_bytes(houses: int, imm: bool = False) -> int:
    return NODE_FIXED_BYTES + 2 * (2 * houses + 2) + (IMM_BYTES if imm else 0)


def make_units(jit, rules):
    """``(outcome_units(board, m), eval_units(board, m, reward_kind,
    total))``: player 0's reward in reward units for a finished game (win,
    draw, loss by the store difference) and by the evaluation of a live one
    (the squashed store difference for REWARD_STORE, else the HMCTS
    heuristic), compiled with ``jit``."""
    heuristic = rules.heuristic
    squash = jit(store_value)

    def heuristic_units(board, m, total):
        """0.5 + 0.5 * (H(0) - H(1)) / bound, in [0, 1], rounded to units."""
        bound = (W1 + W2 + W4 + W5) * total + W3 * m
        d = heuristic(board, m, 0) - heuristic(board, m, 1)
        r = 0.5 + 0.5 * d / bound
        r = min(1.0, max(0.0, r))
        return np.int64(math.floor(r * REWARD_UNITS + 0.5))

    units_of_margin = jit(margin_units)

    def outcome_units(board, m):
        return units_of_margin(board[m + 1] - board[0])

    heuristic_units = jit(heuristic_units)

    def eval_units(board, m, reward_kind, total):
        """The evaluation, rounded to units (REWARD_UNITS is a power of two:
        r * REWARD_UNITS is exact, fused or not)."""
        if reward_kind == REWARD_STORE:
            r = squash(board[m + 1] - board[0], total)
            return np.int64(math.floor(r * REWARD_UNITS + 0.5))
        return heuristic_units(board, m, total)

    return jit(outcome_units), jit(eval_units)


def game_units(jit, rules=None):
    """Kalah's units in the form of :func:`jitsearch.kernels.game_mcts.make_step`'s ``units``:
    ``(outcome_units(board, cfg), eval_units(board, cfg, reward_kind), ended_units(board, cfg,
    reward_kind))`` over :func:`make_units` (``rules``, the protocol's, unused: the heuristic is
    the rule module's), the total the board's seeds (Kalah keeps them all on the board): a
    playout that ended the game scores its outcome, the heuristic reward (HMCTS) its heuristic."""
    outcome, evaluation = make_units(jit, kalah_rules.build(jit))

    def outcome_units(board, cfg):
        return outcome(board, cfg[0])

    def eval_units(board, cfg, reward_kind):
        m = cfg[0]
        total = np.int64(0)
        for i in range(2 * m + 2):
            total += board[i]
        return evaluation(board, m, reward_kind, total)

    eval_units = jit(eval_units)

    def ended_units(board, cfg, reward_kind):
        if reward_kind == REWARD_HEURISTIC:
            return eval_units(board, cfg, reward_kind)
        return outcome(board, cfg[0])

    return jit(outcome_units), eval_units, jit(ended_units)


def no_record(num_trees: int) -> tuple:
    """The roots' (hist, rows, ply) of Kalah's trees for the generic step: no record."""
    zeros = np.zeros(num_trees, dtype=np.int32)
    return np.zeros((num_trees, 1, 1), dtype=np.int32), zeros, zeros.copy()


def grow_trees_cpu(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                   tree_keys, totals, log_table, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
                   alpha, leaves_per_step, first_step, steps, threads=None):
    """Run ``steps`` steps (numbered from ``first_step``) on every tree: the CPU twin of the
    CUDA kernel, the multi-tree step written once over the game protocol
    (:func:`jitsearch.kernels.game_mcts.make_grow`) with Kalah's units (:func:`game_units`).
    A step selects ``leaves_per_step`` leaves one after another, each descent leaving a virtual
    visit on its path so the next one looks elsewhere; evaluates each leaf with ``playouts``
    playouts (leaf j of step s is iteration s * leaves_per_step + j, its playout k has the
    stream ``stream_key(tree_keys[t], iteration, k)``); then, leaf by leaf in order, takes the
    virtual visits back and backs the reward up (and, with ``alpha`` > 0, the leaf's static
    evaluation up the implicit minimax values). A playout plays at most ``max_plies`` plies and
    is scored by ``reward_kind`` (:mod:`jitsearch.kernels.evaluation`). ``totals``: each
    tree's seeds, the sum of its root board (the kernel reads them off the boards). Trees are
    split into contiguous ranges over ``threads`` threads (default: every core, at most one per
    tree) of the process-wide pool; a tree's result does not depend on the split."""
    arrays = (parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size)
    hist, rows, ply = no_record(parent.shape[0])
    grow_game_trees(cpu_step(KALAH, game_units).grow_tree_range, arrays, tree_keys, hist, rows, ply, log_table,
              (int(m), bool(empty_capture)), c, formula, playouts, max_plies, np.int64(reward_kind), alpha, 1,
              leaves_per_step, first_step, steps, threads)


class TreeBatch(GameTrees):
    """T Kalah trees of N nodes (see the module docstring) on the host: int16 boards of 2m+2 pits."""

    def __init__(self, num_trees: int, capacity: int, houses: int, imm: bool = False):
        """``imm``: keep implicit minimax values (``imm[T, N]``; else a
        ``[T, 1]`` placeholder the kernels never touch)."""
        super().__init__(num_trees, capacity, 2 * int(houses) + 2, np.int16, imm)
        self.houses = int(houses)

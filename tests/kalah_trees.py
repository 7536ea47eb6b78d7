"""Kalah's tree kernels driven at the level the tests pin them (for tests only): the multi-tree
and shared-tree steps written once over the game protocol with Kalah's rewards, under the
argument lists of the Kalah kernels they replaced (a reward code of
:mod:`jitsearch.kernels.sentinels`, ``m`` and ``empty_capture``), so the tests that pinned those
kernels keep their assertions."""

from __future__ import annotations

import numpy as np

from jitsearch.games import get
from jitsearch.games.protocol import no_record
from jitsearch.kernels.game_mcts import EVAL_AT_END, GameTrees, cpu_step
from jitsearch.kernels.game_mcts import grow_trees_cpu as grow_game_trees
from jitsearch.kernels.game_shared_tree import SharedTrees as GameSharedTrees
from jitsearch.kernels.game_shared_tree import grow_shared_cpu as grow_game_shared
from jitsearch.kernels.sentinels import REWARD_HEURISTIC, REWARD_STORE

KALAH = get("kalah")


def kalah_param(reward_kind: int) -> np.int64:
    """The kernels' ``param`` of Kalah's evaluation for a reward code (win: the heuristic where a
    playout is cut; heuristic: HMCTS, the heuristic at the end too; store: the store difference)."""
    index = KALAH.search_eval.evals.index("store" if reward_kind == REWARD_STORE else "heuristic")
    return np.int64(index + (EVAL_AT_END if reward_kind == REWARD_HEURISTIC else 0))


class TreeBatch(GameTrees):
    """T Kalah trees of N nodes: int16 boards of 2m+2 pits."""

    def __init__(self, num_trees: int, capacity: int, houses: int, imm: bool = False):
        super().__init__(num_trees, capacity, 2 * int(houses) + 2, np.int16, imm)


def grow_trees_cpu(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                   tree_keys, totals, log_table, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
                   alpha, leaves_per_step, first_step, steps, threads=None):
    """Kalah's multi-tree step over every tree (``totals`` unused: the rewards read the board)."""
    arrays = (parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size)
    t = parent.shape[0]
    zeros = np.zeros(t, np.int32)
    grow_game_trees(cpu_step(KALAH).grow_tree_range, arrays, tree_keys, no_record(t), zeros, zeros.copy(), log_table,
                    (int(m), bool(empty_capture)), c, formula, playouts, max_plies, kalah_param(reward_kind), alpha, 1,
                    leaves_per_step, first_step, steps, threads)


class SharedTrees(GameSharedTrees):
    """T shared Kalah trees of N nodes with their roots (``root_boards``, ``root_players``)."""

    def __init__(self, num_trees: int, capacity: int, boards, players, imm: bool = False):
        super().__init__(num_trees, capacity, imm)
        self.root_boards = np.ascontiguousarray(boards, dtype=np.int32)
        self.root_players = np.ascontiguousarray(players, dtype=np.int32)

    def roots(self) -> tuple:
        """(boards, players, hist, rows, ply) of the generic kernels."""
        t = self.size.shape[0]
        zeros = np.zeros(t, np.int32)
        return self.root_boards, self.root_players, no_record(t), zeros, zeros.copy()


def grow_shared_cpu(first_child, num_children, move, visits, value, imm, size, root_boards, root_players, tree_keys,
                    totals, log_table, capacity, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
                    alpha, first_iteration, iterations, threads=None):
    """Kalah's shared-tree step, one worker per tree (``totals`` unused)."""
    trees = GameSharedTrees.__new__(GameSharedTrees)
    trees.capacity = int(capacity)
    trees.first_child, trees.num_children, trees.move, trees.visits, trees.value, trees.imm, trees.size = (
        first_child, num_children, move, visits, value, imm, size)
    t = size.shape[0]
    zeros = np.zeros(t, np.int32)
    roots = (np.ascontiguousarray(root_boards, dtype=np.int32), np.ascontiguousarray(root_players, dtype=np.int32),
             no_record(t), zeros, zeros.copy())
    grow_game_shared(KALAH, trees, roots, tree_keys, log_table, (int(m), bool(empty_capture)), c, formula,
                     playouts, max_plies, kalah_param(reward_kind), alpha, 1, int(first_iteration), int(iterations),
                     threads)


def __getattr__(name):
    if name == "grow_shared_range":  # Kalah's compiled shared-tree step (compiled on first use)
        from jitsearch.kernels.game_shared_tree import cpu_step as shared_step

        return shared_step(KALAH).grow_shared_range
    raise AttributeError(name)

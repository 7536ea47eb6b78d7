"""The pieces every MCTS tree kernel shares (multi-tree and shared-tree, every game): integer
reward units, the selection score written so that no multiply feeds an add (the CPU and CUDA
twins compute the same bits), the backups with virtual visits, the implicit minimax backup and
the ln table computed on the host. Conventions in :mod:`jitsearch.kernels.game_mcts`."""

from __future__ import annotations

import math

import numpy as np

from .sentinels import FORMULA_SQRT, FORMULA_UCB1, NO_NODE

REWARD_UNITS = 1 << 16
#: Bytes of a node's implicit minimax value (allocated only with imm=).
IMM_BYTES = 8


def imm_scales(units_per_visit, alpha):
    """(mean_scale, imm_scale) of :func:`make_score` for the weight ``alpha``
    (imm_scale 0: no mixing): the mean's units per visit divided by 1 -
    alpha (infinite at alpha = 1), and REWARD_UNITS / alpha."""
    if alpha <= 0.0:
        return units_per_visit, 0.0
    mean_scale = units_per_visit / (1.0 - alpha) if alpha < 1.0 else math.inf
    return mean_scale, REWARD_UNITS / alpha


def make_score(jit):
    """``score(n, w, v, log_parent, parent_visits, c, formula,
    units_per_visit, mean_scale, imm_scale)``: the UCT selection score of a
    child with ``n`` > 0 visits, ``w`` reward units and implicit minimax
    value ``v`` (units, or UNEVALUATED), compiled with ``jit``.

    w/n + exploration; with ``imm_scale`` > 0 (:func:`imm_scales`) and v
    evaluated, (1 - alpha) w/n + alpha v written as w / (n mean_scale) + v /
    imm_scale. Every term added is a quotient or a square root, never a
    product, so no compiler can fuse a multiply into the add (CUDA's NVVM
    contracts a*b + c into one fma by default, which rounds differently from
    the CPU): the twins compute the same bits."""

    def score(n_visits, units, imm_units, log_parent, parent_visits, c, formula, units_per_visit, mean_scale,
              imm_scale):
        n = np.float64(n_visits)
        if imm_scale > 0.0 and imm_units >= 0:
            q = np.float64(units) / (n * mean_scale) + np.float64(imm_units) / imm_scale
        else:
            q = np.float64(units) / (n * units_per_visit)
        if formula == FORMULA_UCB1:  # c * sqrt(ln N / n), as sqrt(c^2 ln N / n)
            u = math.sqrt((c * c) * log_parent / n)
        elif formula == FORMULA_SQRT:  # c * sqrt(N) / n
            u = (c * math.sqrt(parent_visits)) / n
        else:  # c * sqrt(ln N) / sqrt(n)
            u = (c * math.sqrt(log_parent)) / math.sqrt(n)
        return q + u

    return jit(score)


def margin_units(d):
    """Player 0's reward units of a finished game whose final store
    difference (player 0's minus player 1's) is ``d``: a win, a draw or a
    loss. Plain Python for any target."""
    if d > 0:
        return np.int64(REWARD_UNITS)
    if d < 0:
        return np.int64(0)
    return np.int64(REWARD_UNITS // 2)


def make_backups(jit):
    """``(backup, add_virtual_visit)`` compiled with ``jit``: the backup of a
    step's leaf and its virtual visits, shared by every multi-tree kernel
    (Kalah's here, every game's in :mod:`jitsearch.kernels.game_mcts`)."""

    def backup(parent, mover_in, visits, value, t, node, units0, units_all):
        """One visit and the summed reward (player 0's ``units0`` out of
        ``units_all``) to ``node`` and its ancestors, credited to mover_in."""
        while node != NO_NODE:
            visits[t, node] += 1
            if mover_in[t, node] == 0:
                value[t, node] += units0
            else:
                value[t, node] += units_all - units0
            node = parent[t, node]

    backup = jit(backup)

    def add_virtual_visit(parent, visits, t, node, delta):
        """``delta`` visits without reward on ``node`` and its ancestors: a
        virtual loss for every player credited there (taken back before the
        real backup)."""
        while node != NO_NODE:
            visits[t, node] += delta
            node = parent[t, node]

    add_virtual_visit = jit(add_virtual_visit)

    return backup, add_virtual_visit


def make_imm_backup(jit):
    """``imm_backup(parent, first_child, num_children, to_move, mover_in,
    imm, t, leaf, leaf_units0)`` compiled with ``jit``: the implicit minimax
    backup of every multi-tree kernel (Kalah's here, every game's in
    :mod:`jitsearch.kernels.game_mcts`; conventions in
    :mod:`jitsearch.kernels.evaluation`)."""

    def imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, leaf_units0):
        """Implicit minimax backup from ``leaf`` (its static evaluation
        ``leaf_units0`` from player 0's view) to the root of tree ``t``: a
        node with evaluated children gets the best of them for its player to
        move, else (the leaf) its own evaluation; stored for its mover_in."""
        node = leaf
        while node != NO_NODE:
            best = np.int64(-1)
            f = first_child[t, node]
            if f != NO_NODE:
                for ch in range(f, f + num_children[t, node]):
                    best = max(best, imm[t, ch])
            if best >= 0:
                imm[t, node] = best if mover_in[t, node] == to_move[t, node] else REWARD_UNITS - best
            elif node == leaf:
                imm[t, node] = leaf_units0 if mover_in[t, node] == 0 else REWARD_UNITS - leaf_units0
            node = parent[t, node]

    return jit(imm_backup)


def log_table_for(max_visits: int) -> np.ndarray:
    """ln k for k = 0..max_visits (entry 0 unused), the same table on both targets."""
    k = np.arange(max_visits + 1, dtype=np.float64)
    k[0] = 1.0
    return np.log(k)

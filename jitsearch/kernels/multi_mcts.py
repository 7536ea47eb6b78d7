"""Many MCTS trees at once: one description of the per-tree step, compiled
for the CPU here (trees split over the shared thread pool) and for CUDA in
:mod:`jitsearch.kernels.cuda_mcts` (one thread block per tree).

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
from types import SimpleNamespace

import numpy as np
from numba import njit

from .._threads import split_trees

from ..games.kalah.state import RULES
from ..games.kalah.rules import W1, W2, W3, W4, W5
from . import rng
from .playouts import make_playout
from .evaluation import store_value
from .sentinels import FORMULA_SQRT, FORMULA_UCB1, NO_NODE, REWARD_HEURISTIC, REWARD_STORE, TERMINAL, UNEVALUATED

REWARD_UNITS = 1 << 16
#: Bytes of one node: eight int32/int64 fields and an int16 board of 2m+2 pits.
NODE_FIXED_BYTES = 4 * 6 + 8 * 2
#: Bytes of a node's implicit minimax value (allocated only with imm=).
IMM_BYTES = 8


def node_bytes(houses: int, imm: bool = False) -> int:
    return NODE_FIXED_BYTES + 2 * (2 * houses + 2) + (IMM_BYTES if imm else 0)


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


def make_step(jit, rules, gen, playout):
    """Compile the per-tree functions with ``jit``; returns a namespace with
    ``descend``, ``playout_units``, ``terminal_units``, ``static_units``,
    ``backup``, ``imm_backup`` and ``add_virtual_visit``.

    Device code cannot allocate, so every function takes its scratch
    (``work``, ``child``: int32[2m+2]; ``moves``: int64[m]) from the caller.
    """
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    stream_key = gen.stream_key

    score = make_score(jit)
    scales = jit(imm_scales)

    def expand(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t, node,
               m, empty_capture, work, child, moves, alpha):
        """All children of ``node`` (not over); returns how many (0: pool full)."""
        n = 2 * m + 2
        player = to_move[t, node]
        for i in range(n):
            work[i] = boards[t, node, i]
        count = legal_moves(work, m, player, moves)
        start = size[t]
        if start + count > parent.shape[1]:
            return 0
        for j in range(count):
            ch = start + j
            for i in range(n):
                child[i] = work[i]
            nxt = apply_move(child, m, player, moves[j], empty_capture)
            for i in range(n):
                boards[t, ch, i] = child[i]
            to_move[t, ch] = nxt
            parent[t, ch] = node
            first_child[t, ch] = NO_NODE
            num_children[t, ch] = 0
            move[t, ch] = moves[j]
            mover_in[t, ch] = player
            visits[t, ch] = 0
            value[t, ch] = 0
            if alpha > 0.0:
                imm[t, ch] = UNEVALUATED
        first_child[t, node] = start
        num_children[t, node] = count
        size[t] = start + count
        return count

    expand = jit(expand)

    def descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t,
                log_table, m, c, formula, units_per_visit, empty_capture, work, child, moves, alpha):
        """Selection from the root of tree ``t`` to a leaf, then expansion."""
        mean_scale, imm_scale = scales(units_per_visit, alpha)
        node = 0
        while first_child[t, node] != NO_NODE and to_move[t, node] != TERMINAL:
            f = first_child[t, node]
            parent_visits = np.float64(max(visits[t, node], 1))
            log_parent = log_table[max(visits[t, node], 1)]
            best = NO_NODE
            best_score = -math.inf
            for ch in range(f, f + num_children[t, node]):
                if visits[t, ch] == 0:
                    best = ch
                    break
                v = imm[t, ch] if imm_scale > 0.0 else np.int64(UNEVALUATED)
                s = score(visits[t, ch], value[t, ch], v, log_parent, parent_visits, c, formula, units_per_visit,
                          mean_scale, imm_scale)
                if s > best_score:
                    best_score = s
                    best = ch
            node = best
        if to_move[t, node] != TERMINAL and first_child[t, node] == NO_NODE:
            if expand(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t,
                      node, m, empty_capture, work, child, moves, alpha) > 0:
                node = first_child[t, node]
        return node

    descend = jit(descend)

    outcome_units, eval_units = make_units(jit, rules)

    def playout_units(boards, to_move, t, leaf, m, empty_capture, key, max_plies, reward_kind, total, work, moves):
        """One playout from ``leaf`` of tree ``t``: player 0's reward units."""
        n = 2 * m + 2
        for i in range(n):
            work[i] = boards[t, leaf, i]
        _, end_player = playout(work, m, np.int64(to_move[t, leaf]), empty_capture, key, np.int64(max_plies),
                                 moves)
        if reward_kind != REWARD_HEURISTIC and end_player == TERMINAL:
            return outcome_units(work, m)
        return eval_units(work, m, reward_kind, total)

    playout_units = jit(playout_units)

    def terminal_units(boards, t, leaf, m, work):
        n = 2 * m + 2
        for i in range(n):
            work[i] = boards[t, leaf, i]
        return outcome_units(work, m)

    terminal_units = jit(terminal_units)

    def static_units(boards, to_move, t, leaf, m, reward_kind, total, work):
        """Player 0's units of the leaf's own position: its outcome if the
        game is over, else its evaluation (the implicit minimax values' v0)."""
        n = 2 * m + 2
        for i in range(n):
            work[i] = boards[t, leaf, i]
        if to_move[t, leaf] == TERMINAL:
            return outcome_units(work, m)
        return eval_units(work, m, reward_kind, total)

    static_units = jit(static_units)

    imm_backup = make_imm_backup(jit)

    backup, add_virtual_visit = make_backups(jit)

    return SimpleNamespace(descend=descend, expand=expand, playout_units=playout_units,
                           terminal_units=terminal_units, static_units=static_units, backup=backup,
                           imm_backup=imm_backup, add_virtual_visit=add_virtual_visit, stream_key=stream_key)


CPU_RULES = RULES  # the one CPU compilation of the rules
CPU_RNG = rng.build(njit(cache=True))
CPU_STEP = make_step(njit(cache=True), CPU_RULES, CPU_RNG, make_playout(njit(cache=True), CPU_RULES, CPU_RNG))
_descend = CPU_STEP.descend
_playout_units = CPU_STEP.playout_units
_terminal_units = CPU_STEP.terminal_units
_backup = CPU_STEP.backup
_stream_key = CPU_STEP.stream_key


_add_virtual_visit = CPU_STEP.add_virtual_visit
_static_units = CPU_STEP.static_units
_imm_backup = CPU_STEP.imm_backup


@njit(cache=True, nogil=True)
def grow_tree_range(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                    tree_keys, totals, log_table, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
                    alpha, leaves_per_step, first_step, steps, first_tree, last_tree):
    """Run ``steps`` steps (numbered from ``first_step``) on every tree,
    trees in parallel: the CPU twin of the CUDA kernel.

    A step selects ``leaves_per_step`` leaves one after another, each
    descent leaving a virtual visit on its path so the next one looks
    elsewhere; evaluates each leaf with ``playouts`` playouts (leaf j of
    step s is iteration s * leaves_per_step + j, its playout k has the
    stream ``stream_key(tree_keys[t], iteration, k)``); then, leaf by leaf in
    order, takes the virtual visits back and backs the reward up (and, with
    ``alpha`` > 0, the leaf's static evaluation up the implicit minimax
    values). A playout plays at most ``max_plies`` plies and is scored by
    ``reward_kind`` (:mod:`jitsearch.kernels.evaluation`). The playouts'
    reward units are summed exactly, so the result equals the kernel's,
    where they run on the block's threads."""
    n = 2 * m + 2
    units_per_visit = np.float64(playouts * REWARD_UNITS)
    units_all = np.int64(playouts) * REWARD_UNITS
    for t in range(first_tree, last_tree):
        work = np.empty(n, dtype=np.int32)
        child = np.empty(n, dtype=np.int32)
        moves = np.empty(m, dtype=np.int64)
        leaves = np.empty(leaves_per_step, dtype=np.int64)
        for step in range(first_step, first_step + steps):
            for j in range(leaves_per_step):
                leaf = _descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm,
                                boards, size, t, log_table, m, c, formula, units_per_visit, empty_capture, work,
                                child, moves, alpha)
                leaves[j] = leaf
                _add_virtual_visit(parent, visits, t, leaf, 1)
            for j in range(leaves_per_step):
                leaf = leaves[j]
                units0 = np.int64(0)
                if to_move[t, leaf] == TERMINAL:
                    units0 = _terminal_units(boards, t, leaf, m, work) * playouts
                else:
                    it = step * leaves_per_step + j
                    for k in range(playouts):
                        key = _stream_key(tree_keys[t], it, k)
                        units0 += _playout_units(boards, to_move, t, leaf, m, empty_capture, key, max_plies,
                                                 reward_kind, totals[t], work, moves)
                _add_virtual_visit(parent, visits, t, leaf, -1)
                _backup(parent, mover_in, visits, value, t, leaf, units0, units_all)
                if alpha > 0.0:
                    v0 = _static_units(boards, to_move, t, leaf, m, reward_kind, totals[t], work)
                    _imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, v0)


def grow_trees_cpu(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                   tree_keys, totals, log_table, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
                   alpha, leaves_per_step, first_step, steps, threads=None):
    """Run ``steps`` steps (numbered from ``first_step``) on every tree: the
    CPU twin of the CUDA kernel (see :func:`grow_tree_range`). Trees are
    independent, so they are split into contiguous ranges over ``threads``
    threads (default: every core, at most one per tree) of the process-wide
    pool; the kernel is ``nogil`` and serial, which compiles in a fraction
    of the time a ``parallel=True`` kernel takes, and a tree's result does
    not depend on the split."""
    num_trees = parent.shape[0]
    args = (parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
            tree_keys, totals, log_table, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
            alpha, leaves_per_step, first_step, steps)
    split_trees(grow_tree_range, args, num_trees, threads)


class TreeBatch:
    """T trees of N nodes (see the module docstring), on the host."""

    def __init__(self, num_trees: int, capacity: int, houses: int, imm: bool = False):
        """``imm``: keep implicit minimax values (``imm[T, N]``; else a
        ``[T, 1]`` placeholder the kernels never touch)."""
        t, c, n = int(num_trees), int(capacity), 2 * int(houses) + 2
        self.houses = int(houses)
        self.parent = np.full((t, c), NO_NODE, dtype=np.int32)
        self.first_child = np.full((t, c), NO_NODE, dtype=np.int32)
        self.num_children = np.zeros((t, c), dtype=np.int32)
        self.move = np.full((t, c), -1, dtype=np.int32)
        self.to_move = np.zeros((t, c), dtype=np.int32)
        self.mover_in = np.zeros((t, c), dtype=np.int32)
        self.visits = np.zeros((t, c), dtype=np.int64)
        self.value = np.zeros((t, c), dtype=np.int64)
        self.imm = np.full((t, c if imm else 1), UNEVALUATED, dtype=np.int64)
        self.boards = np.zeros((t, c, n), dtype=np.int16)
        self.size = np.ones(t, dtype=np.int32)

    def set_roots(self, boards: np.ndarray, players: np.ndarray) -> None:
        """Root of tree t = (boards[t], players[t]) (players: 0 or 1)."""
        self.boards[:, 0, :] = boards
        self.to_move[:, 0] = players
        self.mover_in[:, 0] = 1 - players

    def arrays(self):
        return (self.parent, self.first_child, self.num_children, self.move, self.to_move, self.mover_in,
                self.visits, self.value, self.imm, self.boards, self.size)


def log_table_for(max_visits: int) -> np.ndarray:
    """ln k for k = 0..max_visits (entry 0 unused), the same table on both targets."""
    k = np.arange(max_visits + 1, dtype=np.float64)
    k[0] = 1.0
    return np.log(k)

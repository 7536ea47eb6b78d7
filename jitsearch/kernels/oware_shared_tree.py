"""Tree-parallel Oware MCTS: many workers growing one shared tree, described
once and compiled for the CPU here (one worker per tree, the twin) and for
CUDA in :mod:`jitsearch.kernels.cuda_oware_shared_tree` (many thread blocks
per tree). The Oware counterpart of :mod:`jitsearch.kernels.shared_tree`,
with its layout (flat ``[T*N]`` node arrays: ``first_child`` with the
NO_NODE / EXPANDING / POOL_FULL sentinels, ``num_children``, ``move``,
``visits``, ``value``; ``size[T]``), its lock-free expansion (one
compare-and-swap claims a node), its virtual loss (visits added on the way
down) and its memory operations (``ops``).

No board is stored: a descent replays the moves from the root board, and
with them the repetition record: it starts from the root state's record
(``root_hist[g, :root_rows[g]]``, ``root_ply[g]``) in the worker's scratch
``hist`` and each move of the path appends its position (a capture restarts
it), exactly as in a game, so the leaf's record is the rows ``first ..
first+count-1`` of ``hist``. The playouts continue from that record. Moves
that end the game make terminal leaves scored by their result.

With one worker per tree (the CPU twin, or one block per tree on the GPU)
iterations run in order and the twins grow bit-identical trees; with several
blocks per tree the interleaving depends on timing (the root's visits still
equal the iterations done).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from numba import njit

from .._threads import split_trees
from . import rng
from ..games.oware.alphabeta import evaluate as _alphabeta_evaluate
from .multi_mcts import REWARD_UNITS, imm_scales, make_score
from .oware_playouts import make_units
from .oware_playouts import INLINE_RULES, capped_playout
from .shared_tree import MAX_PATH, cpu_ops, make_shared_backup, make_shared_imm_backup
from .sentinels import EXPANDING, NO_NODE, POOL_FULL, TERMINAL, UNEVALUATED  # noqa: F401  (the protocol)

#: Bytes of one node: three int32 and two int64 fields (and the int64 imm with imm=).
NODE_BYTES = 4 * 3 + 8 * 2


def make_oware_shared_step(jit, rules, gen, playout, ops, frontier=None):
    """Compile the worker's step with ``jit`` and the target's memory
    ``ops``; returns ``descend``, ``leaf_units``, ``static_units``,
    ``backup``, ``imm_backup``, ``stream_key``. ``playout``: a capped
    playout (:func:`jitsearch.kernels.oware_playouts.make_capped_playout`);
    leaf evaluations and implicit minimax values as
    :func:`jitsearch.kernels.oware_playouts.make_units` (``max_plies``, ``side_weight``,
    ``alpha``). Scratch (board, moves, path, hist) comes from the caller."""
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    load, atomic_add, atomic_cas, exchange, fence = ops.load, ops.atomic_add, ops.atomic_cas, ops.exchange, ops.fence
    score = make_score(jit)
    backup = make_shared_backup(jit, ops)
    imm_backup = make_shared_imm_backup(jit, ops)
    scales = jit(imm_scales)
    outcome_units, eval_units = make_units(jit, frontier)

    def descend(first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards, root_players,
                root_hist, root_rows, root_ply, log_table, m, c, formula, units_per_visit, gsi, move_limit, board,
                moves, path, path_mover, hist, alpha):
        """Selection from the root of tree ``g`` (the first unvisited child
        in house order, else the best UCT score, ties to the first),
        expanding the leaf it reaches (then its first child is the leaf),
        replaying the moves and the repetition record on the way. Adds one
        visit to every node on the path. Leaves the leaf's position in
        ``board`` and its record in ``hist``; returns (path length, player
        to move at the leaf or TERMINAL, record first, record count, ply)."""
        n = 2 * m + 2
        base = g * capacity
        mean_scale, imm_scale = scales(units_per_visit, alpha)
        for i in range(n):
            board[i] = root_boards[g, i]
        count = root_rows[g]
        for r in range(count):
            for j in range(2 * m + 1):
                hist[r, j] = root_hist[g, r, j]
        first = 0
        ply = root_ply[g]
        player = root_players[g]
        node = 0
        depth = 0
        path[0] = 0
        path_mover[0] = 1 - player
        atomic_add(visits, base, np.int64(1))
        last = log_table.shape[0] - 1
        while depth + 1 < path.shape[0] and player != TERMINAL:
            # One apply_move call site for both ways down (expanding, selecting): the rules are
            # inlined where they are called, so a second site doubled this function's compile time.
            fc = load(first_child, base + node)
            expanded = False
            best = 0
            if fc == NO_NODE:
                old = atomic_cas(first_child, base + node, np.int32(NO_NODE), np.int32(EXPANDING))
                if old == NO_NODE:  # this worker expands the node, then steps into its first child
                    num = legal_moves(board, m, player, gsi, moves)
                    start = atomic_add(size, g, np.int32(num))
                    if start + num > capacity:
                        exchange(first_child, base + node, np.int32(POOL_FULL))
                        break
                    for j in range(num):
                        ch = base + start + j
                        first_child[ch] = NO_NODE
                        num_children[ch] = 0
                        move[ch] = moves[j]
                        visits[ch] = 0
                        value[ch] = 0
                        if alpha > 0.0:
                            imm[ch] = UNEVALUATED
                    num_children[base + node] = num
                    fence()  # the children are written before anyone can see them
                    exchange(first_child, base + node, np.int32(start))
                    fc = start
                    expanded = True
                else:
                    fc = old
            if not expanded:
                if fc < 0:  # another worker is expanding it, or the pool is full: evaluate it
                    break
                num = legal_moves(board, m, player, gsi, moves)
                nv = max(load(visits, base + node), 1)
                parent_visits = np.float64(nv)
                log_parent = log_table[min(nv, last)]
                best_score = -math.inf
                for j in range(num):
                    cv = load(visits, base + fc + j)
                    if cv == 0:
                        best = j
                        break
                    v = load(imm, base + fc + j) if imm_scale > 0.0 else np.int64(UNEVALUATED)
                    s = score(cv, load(value, base + fc + j), v, log_parent, parent_visits, c, formula,
                              units_per_visit, mean_scale, imm_scale)
                    if s > best_score:
                        best_score = s
                        best = j
            mover = player
            player, first, count = apply_move(board, m, player, moves[best], gsi, hist, first, count, ply,
                                              move_limit)
            ply += 1
            node = fc + best
            depth += 1
            path[depth] = node
            path_mover[depth] = mover
            atomic_add(visits, base + node, np.int64(1))
            if expanded:
                break
        return depth + 1, player, first, count, ply

    descend = jit(descend)

    def leaf_units(leaf_board, leaf_player, m, gsi, hist, first, count, ply, move_limit, key, max_plies,
                   side_weight, work, moves):
        """Player 0's reward units of one playout of at most ``max_plies``
        plies from the leaf (copied into ``work``; its record
        ``hist[first:first+count]`` is kept): a finished game scores its
        result, else the evaluation."""
        for i in range(2 * m + 2):
            work[i] = leaf_board[i]
        if leaf_player == TERMINAL:
            return outcome_units(work, m)
        _, end = playout(work, m, np.int64(leaf_player), gsi, hist, np.int64(first), count, ply, move_limit, key,
                         np.int64(max_plies), moves)
        if end < 0:
            return outcome_units(work, m)
        return eval_units(work, m, side_weight)

    leaf_units = jit(leaf_units)

    def static_units(leaf_board, leaf_player, m, side_weight, work):
        """Player 0's units of the leaf's own position (the implicit minimax values' v0)."""
        for i in range(2 * m + 2):
            work[i] = leaf_board[i]
        if leaf_player == TERMINAL:
            return outcome_units(work, m)
        return eval_units(work, m, side_weight)

    static_units = jit(static_units)
    return SimpleNamespace(descend=descend, leaf_units=leaf_units, static_units=static_units, backup=backup,
                           imm_backup=imm_backup, stream_key=gen.stream_key)


CPU_RNG = rng.build(njit(cache=True))
CPU_STEP = make_oware_shared_step(njit(cache=True), INLINE_RULES, CPU_RNG,
                                  capped_playout, cpu_ops(),
                                  _alphabeta_evaluate)
_descend = CPU_STEP.descend
_leaf_units = CPU_STEP.leaf_units
_backup = CPU_STEP.backup
_static_units = CPU_STEP.static_units
_imm_backup = CPU_STEP.imm_backup
_stream_key = CPU_STEP.stream_key


@njit(cache=True, nogil=True)
def grow_oware_shared_range(first_child, num_children, move, visits, value, imm, size, root_boards, root_players,
                            root_hist, root_rows, root_ply, tree_keys, log_table, capacity, m, c, formula, playouts,
                            gsi, move_limit, max_plies, side_weight, alpha, rows, first_iteration, iterations,
                            first_tree, last_tree):
    """Iterations ``first_iteration ..`` (``iterations`` of them) of trees
    ``first_tree .. last_tree-1``, one worker per tree: the CPU twin of the
    CUDA kernel run with one block per tree. ``rows``: the record scratch's
    rows (:func:`jitsearch.kernels.game_mcts.scratch_rows`); ``max_plies``,
    ``side_weight``, ``alpha``: the leaf evaluation and implicit minimax
    values (:mod:`jitsearch.kernels.game_mcts`)."""
    n = 2 * m + 2
    units_per_visit = np.float64(playouts) * np.float64(REWARD_UNITS)
    units_all = np.int64(playouts) * np.int64(REWARD_UNITS)
    board = np.empty(n, dtype=np.int32)
    work = np.empty(n, dtype=np.int32)
    moves = np.empty(m, dtype=np.int64)
    path = np.empty(MAX_PATH, dtype=np.int32)
    path_mover = np.empty(MAX_PATH, dtype=np.int32)
    hist = np.empty((rows, 2 * m + 1), dtype=np.int32)
    for g in range(first_tree, last_tree):
        for it in range(first_iteration, first_iteration + iterations):
            length, leaf_player, first, count, ply = _descend(
                first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards, root_players,
                root_hist, root_rows, root_ply, log_table, m, c, formula, units_per_visit, gsi, move_limit, board,
                moves, path, path_mover, hist, alpha)
            units0 = np.int64(0)
            for k in range(playouts):
                units0 += _leaf_units(board, leaf_player, m, gsi, hist, first, count, ply, move_limit,
                                      _stream_key(tree_keys[g], it, k), max_plies, side_weight, work, moves)
            _backup(value, g, capacity, path, path_mover, length, units0, units_all)
            if alpha > 0.0:
                v0 = _static_units(board, leaf_player, m, side_weight, work)
                _imm_backup(first_child, num_children, imm, g, capacity, path, path_mover, length, leaf_player, v0)


class OwareSharedTrees:
    """T shared trees of N nodes (flat arrays, node i of tree g at g*N + i) and their roots' games, on the host."""

    FIELDS = ("first_child", "num_children", "move", "visits", "value", "imm", "size")

    def __init__(self, num_trees: int, capacity: int, imm: bool = False):
        """``imm``: keep implicit minimax values (else a one-entry placeholder)."""
        t, c = int(num_trees), int(capacity)
        self.capacity = c
        self.first_child = np.full(t * c, NO_NODE, dtype=np.int32)
        self.num_children = np.zeros(t * c, dtype=np.int32)
        self.move = np.full(t * c, -1, dtype=np.int32)
        self.visits = np.zeros(t * c, dtype=np.int64)
        self.value = np.zeros(t * c, dtype=np.int64)
        self.imm = np.full(t * c if imm else 1, UNEVALUATED, dtype=np.int64)
        self.size = np.ones(t, dtype=np.int32)

    def arrays(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def root_children(self, g: int) -> list[tuple[int, int, int]]:
        """(move, visits, value units) of tree g's root children."""
        base = g * self.capacity
        f = int(self.first_child[base])
        if f < 0:
            return []
        return [(int(self.move[base + ch]), int(self.visits[base + ch]), int(self.value[base + ch]))
                for ch in range(f, f + int(self.num_children[base]))]


def grow_oware_shared_cpu(trees: OwareSharedTrees, roots: tuple, tree_keys, log_table, m, c, formula, playouts, gsi,
                          move_limit, max_plies, side_weight, alpha, rows, first_iteration, iterations,
                          threads=None):
    """:func:`grow_oware_shared_range` over every tree (``roots``: boards,
    players, hist, rows, ply), trees split over the process-wide pool."""
    args = (*trees.arrays(), *roots, tree_keys, log_table, trees.capacity, m, c, formula, playouts, gsi, move_limit,
            max_plies, side_weight, alpha, rows, first_iteration, iterations)
    split_trees(grow_oware_shared_range, args, trees.size.shape[0], threads)

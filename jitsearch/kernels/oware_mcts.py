"""Many Oware MCTS trees at once: one description of the per-tree step,
compiled for the CPU here (trees split over the shared thread pool) and for
CUDA in :mod:`jitsearch.kernels.cuda_oware_mcts` (one thread block per tree).
The Oware counterpart of :mod:`jitsearch.kernels.multi_mcts`, with the same
conventions (integer reward units, ``log_table`` from the host, no
fma-sensitive expression, ``stream_key`` playout streams, leaves per step
with virtual visits).

Layout: T trees of N preallocated nodes, struct of arrays ``[T, N]``::

    parent[T, N]        int32   NO_NODE (-1) at the root
    first_child[T, N]   int32   NO_NODE until expanded; children contiguous
    num_children[T, N]  int32
    move[T, N]          int32   the house sown into the node (-1 at the root)
    to_move[T, N]       int32   player to move, TERMINAL (-1) once the game is over
    mover_in[T, N]      int32   the player who moved into the node (Oware alternates)
    visits[T, N]        int64   iterations through the node
    value[T, N]         int64   reward units credited to mover_in
    imm[T, N]           int64   implicit minimax value for mover_in, UNEVALUATED (-1) before a backup
                                reached the node; [T, 1] and unused without imm
    boards[T, N, 2m+2]  int16   each node's position (a finished game's with the seeds collected)
    size[T]             int32   nodes used

and per tree the root's game: ``root_hist[T, R, 2m+1]`` (int32; rows
``0 .. root_rows[t]-1`` are the positions since the last capture, as
:attr:`OwareState.history`) and ``root_ply[T]`` (plies played).

**Repetition.** A node's position alone does not define its future (the
repetition rule needs the positions since the last capture), so every
expansion and every playout first rebuilds its node's record into a scratch
array (:func:`make_step`'s ``path_record``): the boards from the node up
its path, stopping after the first node entered by a capture (its scores
grew), else adding the root's record. The rules only ask whether a position
is in the record, so the rows' order does not matter. A node whose move
ends the game (repetition, the move limit, the scores, no legal move) is
terminal with its collected board: its exact result.

**Rewards.** A playout (or a terminal node) scores ``REWARD_UNITS`` for a
win of the player credited, half for a draw, 0 for a loss (OpenSpiel's
returns: the final scores), summed exactly as integers, so the CPU twin and
the GPU kernel grow bit-identical trees for the same keys. Leaf ``j`` of
step ``s`` is iteration ``i = s·L + j``; its playout ``k`` draws from
``stream_key(tree_keys[t], i, k)``.

**Evaluations** (``eval=capture``; conventions of
:mod:`jitsearch.kernels.evaluation`): a playout stops after ``max_plies``
random plies (``NO_PLY_CAP``: to the end); if the game is not over it
scores the squashed evaluation of its position for player 0: the Oware
alpha-beta's frontier value (:func:`jitsearch.games.oware.alphabeta.evaluate`,
captured difference + ``side_weight`` x seeds-on-side difference) through
:func:`~jitsearch.kernels.evaluation.store_value` with the board's seeds as
the total, rounded to units. ``side_weight`` must be a multiple of 1/256
(the wrapper checks), so its product is exact and a fused multiply-add
rounds as the CPU does. With ``alpha`` > 0 the backups also keep implicit
minimax values (:func:`jitsearch.kernels.multi_mcts.make_imm_backup`) of
the leaves' static evaluations, and selection mixes them in.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from numba import njit

from .._threads import split_trees
from . import rng
from ..games.oware.alphabeta import evaluate as _alphabeta_evaluate
from .evaluation import store_value
from .multi_mcts import IMM_BYTES, REWARD_UNITS, imm_scales, make_backups, make_imm_backup, make_score
from .oware_playouts import INLINE_RULES, capped_playout
from .sentinels import NO_NODE, TERMINAL, UNEVALUATED

#: Bytes of one node: six int32 and two int64 fields, then an int16 board of 2m+2 entries.
NODE_FIXED_BYTES = 4 * 6 + 8 * 2
#: Multiples of 1/SIDE_WEIGHT_DENOMINATOR are the side weights the kernels take (exact products).
SIDE_WEIGHT_DENOMINATOR = 256


def node_bytes(houses: int, imm: bool = False) -> int:
    return NODE_FIXED_BYTES + 2 * (2 * houses + 2) + (IMM_BYTES if imm else 0)


def scratch_rows(root_rows, root_ply, move_limit: int) -> int:
    """Rows of a record scratch that no expansion or playout outgrows: a node
    at depth d holds at most root_rows + d rows and a playout from it adds
    at most move_limit - (root_ply + d)."""
    return int(np.max(np.asarray(root_rows, np.int64) + move_limit - np.asarray(root_ply, np.int64)))


def scratch_bytes(houses: int, rows: int) -> int:
    """Bytes of one record scratch (int32 rows of 2m+1)."""
    return 4 * rows * (2 * houses + 1)


def make_units(jit, frontier=None):
    """``(outcome_units(board, m), eval_units(board, m, side_weight))``
    compiled with ``jit``: player 0's reward units of a finished game and
    of the evaluation of a live position (module docstring), shared by the
    multi-tree and shared-tree kernels. ``frontier``: the alpha-beta's
    compiled evaluation on the CPU (default: compiled here from its source)."""
    squash = jit(store_value)
    if frontier is None:
        frontier = jit(_alphabeta_evaluate.py_func)

    def outcome_units(board, m):
        """Player 0's reward units of a finished game (OpenSpiel's returns)."""
        d = board[2 * m] - board[2 * m + 1]
        if d > 0:
            return np.int64(REWARD_UNITS)
        if d < 0:
            return np.int64(0)
        return np.int64(REWARD_UNITS // 2)

    outcome_units = jit(outcome_units)

    def eval_units(board, m, side_weight):
        """Player 0's units of a live position: the alpha-beta's frontier
        value squashed by store_value with the board's seeds as the total
        (REWARD_UNITS is a power of two: the product is exact)."""
        total = 0
        for i in range(2 * m + 2):
            total += board[i]
        r = squash(frontier(board, m, 0, side_weight), np.float64(total))
        return np.int64(math.floor(r * REWARD_UNITS + 0.5))

    return outcome_units, jit(eval_units)


def make_step(jit, rules, gen, playout, frontier=None):
    """Compile the per-tree functions with ``jit``: ``descend``,
    ``playout_units``, ``terminal_units``, ``static_units``, ``backup``,
    ``imm_backup``, ``add_virtual_visit``. ``playout``: a capped playout
    (:func:`jitsearch.kernels.oware_playouts.make_capped_playout`).

    Device code cannot allocate, so every function takes its scratch from
    the caller: ``work``, ``child`` (int32[2m+2]), ``moves`` (ints[m]) and
    ``hist`` (int32[rows, 2m+1], :func:`scratch_rows`).
    """
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    stream_key = gen.stream_key
    score = make_score(jit)
    backup, add_virtual_visit = make_backups(jit)
    imm_backup = make_imm_backup(jit)
    scales = jit(imm_scales)

    def path_record(parent, boards, to_move, t, node, root_hist, root_rows, m, hist):
        """Write the record of live ``node`` (the positions since the last
        capture, in any order) into ``hist[0:count]``; return (count, depth)."""
        n = 2 * m
        count = 0
        depth = 0
        recording = True
        x = node
        while x != 0:
            p = parent[t, x]
            if recording:
                for j in range(n):
                    hist[count, j] = boards[t, x, j]
                hist[count, n] = to_move[t, x]
                count += 1
                if boards[t, x, n] + boards[t, x, n + 1] != boards[t, p, n] + boards[t, p, n + 1]:
                    recording = False  # entered by a capture: the record starts at x
            depth += 1
            x = p
        if recording:
            for r in range(root_rows[t]):
                for j in range(n + 1):
                    hist[count, j] = root_hist[t, r, j]
                count += 1
        return count, depth

    path_record = jit(path_record)

    def expand(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t, node,
               m, gsi, move_limit, ply, hist, count, work, child, moves, alpha):
        """All children of live ``node`` (record ``hist[0:count]``, ``ply``
        plies played); returns how many (0: the pool is full)."""
        n = 2 * m + 2
        player = to_move[t, node]
        for i in range(n):
            work[i] = boards[t, node, i]
        num = legal_moves(work, m, player, gsi, moves)
        start = size[t]
        if start + num > parent.shape[1]:
            return 0
        for j in range(num):
            ch = start + j
            for i in range(n):
                child[i] = work[i]
            nxt, _first, _count = apply_move(child, m, player, moves[j], gsi, hist, 0, count, ply, move_limit)
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
        num_children[t, node] = num
        size[t] = start + num
        return num

    expand = jit(expand)

    def descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t,
                root_hist, root_rows, root_ply, log_table, m, c, formula, units_per_visit, gsi, move_limit, hist,
                work, child, moves, alpha):
        """Selection from the root of tree ``t`` to a leaf (the first
        unvisited child in house order, else the best UCT score, ties to the
        first; with ``alpha`` > 0 the mean mixed with the implicit minimax
        value), then its expansion; returns the leaf."""
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
            count, depth = path_record(parent, boards, to_move, t, node, root_hist, root_rows, m, hist)
            if expand(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                      t, node, m, gsi, move_limit, root_ply[t] + depth, hist, count, work, child, moves, alpha) > 0:
                node = first_child[t, node]
        return node

    descend = jit(descend)

    outcome_units, eval_units = make_units(jit, frontier)

    def playout_units(parent, boards, to_move, t, leaf, root_hist, root_rows, root_ply, m, gsi, move_limit, key,
                      max_plies, side_weight, hist, work, moves):
        """One random playout of at most ``max_plies`` plies from live
        ``leaf`` with its record: player 0's units (the outcome if the game
        ended, else the evaluation)."""
        count, depth = path_record(parent, boards, to_move, t, leaf, root_hist, root_rows, m, hist)
        for i in range(2 * m + 2):
            work[i] = boards[t, leaf, i]
        _, end = playout(work, m, np.int64(to_move[t, leaf]), gsi, hist, np.int64(0), count, root_ply[t] + depth,
                         move_limit, key, np.int64(max_plies), moves)
        if end < 0:
            return outcome_units(work, m)
        return eval_units(work, m, side_weight)

    playout_units = jit(playout_units)

    def terminal_units(boards, t, leaf, m, work):
        for i in range(2 * m + 2):
            work[i] = boards[t, leaf, i]
        return outcome_units(work, m)

    terminal_units = jit(terminal_units)

    def static_units(boards, to_move, t, leaf, m, side_weight, work):
        """Player 0's units of the leaf's own position (the implicit minimax
        values' v0): its outcome if the game is over, else its evaluation."""
        for i in range(2 * m + 2):
            work[i] = boards[t, leaf, i]
        if to_move[t, leaf] == TERMINAL:
            return outcome_units(work, m)
        return eval_units(work, m, side_weight)

    static_units = jit(static_units)

    return SimpleNamespace(path_record=path_record, expand=expand, descend=descend, playout_units=playout_units,
                           terminal_units=terminal_units, static_units=static_units, eval_units=eval_units,
                           backup=backup, imm_backup=imm_backup, add_virtual_visit=add_virtual_visit,
                           stream_key=stream_key)


CPU_RNG = rng.build(njit(cache=True))
CPU_STEP = make_step(njit(cache=True), INLINE_RULES, CPU_RNG, capped_playout, _alphabeta_evaluate)
_descend = CPU_STEP.descend
_playout_units = CPU_STEP.playout_units
_terminal_units = CPU_STEP.terminal_units
_backup = CPU_STEP.backup
_add_virtual_visit = CPU_STEP.add_virtual_visit
_static_units = CPU_STEP.static_units
_imm_backup = CPU_STEP.imm_backup
_stream_key = CPU_STEP.stream_key


@njit(cache=True, nogil=True)
def grow_tree_range(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                    tree_keys, root_hist, root_rows, root_ply, log_table, m, c, formula, playouts, gsi, move_limit,
                    max_plies, side_weight, alpha, rows, leaves_per_step, first_step, steps, first_tree, last_tree):
    """Run ``steps`` steps (numbered from ``first_step``) on trees
    ``first_tree .. last_tree-1``: the CPU twin of the CUDA kernel.

    A step selects ``leaves_per_step`` leaves one after another, each
    descent leaving a virtual visit on its path; evaluates each leaf with
    ``playouts`` playouts (a terminal leaf by its result); then, leaf by leaf
    in order, takes the virtual visits back and backs the summed reward up,
    each node credited for the player who moved into it (and, with
    ``alpha`` > 0, the leaf's static evaluation up the implicit minimax
    values). A playout plays at most ``max_plies`` plies (NO_PLY_CAP: to the
    end), then is scored by the evaluation with ``side_weight``. ``rows``:
    the record scratch's rows (:func:`scratch_rows`)."""
    n = 2 * m + 2
    units_per_visit = np.float64(playouts * REWARD_UNITS)
    units_all = np.int64(playouts) * REWARD_UNITS
    work = np.empty(n, dtype=np.int32)
    child = np.empty(n, dtype=np.int32)
    moves = np.empty(m, dtype=np.int64)
    hist = np.empty((rows, 2 * m + 1), dtype=np.int32)
    leaves = np.empty(leaves_per_step, dtype=np.int64)
    for t in range(first_tree, last_tree):
        for step in range(first_step, first_step + steps):
            for j in range(leaves_per_step):
                leaf = _descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards,
                                size, t, root_hist, root_rows, root_ply, log_table, m, c, formula, units_per_visit,
                                gsi, move_limit, hist, work, child, moves, alpha)
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
                        units0 += _playout_units(parent, boards, to_move, t, leaf, root_hist, root_rows, root_ply,
                                                 m, gsi, move_limit, key, max_plies, side_weight, hist, work, moves)
                _add_virtual_visit(parent, visits, t, leaf, -1)
                _backup(parent, mover_in, visits, value, t, leaf, units0, units_all)
                if alpha > 0.0:
                    v0 = _static_units(boards, to_move, t, leaf, m, side_weight, work)
                    _imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, v0)


def grow_trees_cpu(arrays, tree_keys, root_hist, root_rows, root_ply, log_table, m, c, formula, playouts, gsi,
                   move_limit, max_plies, side_weight, alpha, rows, leaves_per_step, first_step, steps, threads=None):
    """:func:`grow_tree_range` over every tree, contiguous ranges of trees
    on ``threads`` threads of the process-wide pool (default: every core,
    at most one per tree); a tree's result does not depend on the split."""
    args = (*arrays, tree_keys, root_hist, root_rows, root_ply, log_table, m, c, formula, playouts, gsi, move_limit,
            max_plies, side_weight, alpha, rows, leaves_per_step, first_step, steps)
    split_trees(grow_tree_range, args, arrays[0].shape[0], threads)


class OwareTrees:
    """T trees of N nodes (module docstring) and their roots' games, on the host."""

    FIELDS = ("parent", "first_child", "num_children", "move", "to_move", "mover_in", "visits", "value", "imm",
              "boards", "size")

    def __init__(self, num_trees: int, capacity: int, houses: int, imm: bool = False):
        """``imm``: keep implicit minimax values (else a [T, 1] placeholder)."""
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
        """Root of tree t = (boards[t], players[t]) (live positions)."""
        self.boards[:, 0, :] = boards
        self.to_move[:, 0] = players
        self.mover_in[:, 0] = 1 - np.asarray(players)

    def arrays(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)

"""Tree-parallel MCTS: many workers growing one shared tree, described once
and compiled for the CPU (one worker per tree, the twin: the
shared-tree step written once over the game protocol,
:mod:`jitsearch.kernels.game_shared_tree`, with Kalah's units) and for CUDA in
:mod:`jitsearch.kernels.cuda_shared_tree` (many thread blocks per tree; its
step, :func:`make_shared_step`, stays Kalah's own for the register-board playouts).

Why a second layout beside :mod:`jitsearch.kernels.multi_mcts` (one block
per tree): on a GPU one thread descends a tree about 40x slower than a CPU
core, so T small independent trees summed at the root lose to one deep CPU
tree. Here B blocks share each tree (lock-free tree parallelism with virtual
loss, after Chaslot, Winands and van den Herik 2008 and Enzenberger and
Müller 2010): each block claims an iteration number, descends, expands,
evaluates its leaf with ``playouts`` playouts on its threads and backs up,
while the other blocks do the same on the same tree. One tree then grows at
the GPU's whole rate.

Layout: T trees of N nodes each, flat arrays of T*N entries (node ``i`` of
tree ``g`` at ``g*N + i``; node 0 is the root)::

    first_child   int32   NO_NODE (-1) unexpanded, EXPANDING (-2) while a
                          worker writes its children, POOL_FULL (-3) a leaf
                          for good, else the first child (children contiguous)
    num_children  int32   the number of legal moves, once expanded
    move          int32   the pit that led to the node (the root's is unused)
    visits        int64   iterations through the node, in-flight ones included
    value         int64   reward units credited to the player who moved into it
    imm           int64   implicit minimax value in reward units for the same player, UNEVALUATED
                          (-1) before a backup reached it; one entry, unused, without imm=
    size[T]       int32   nodes allocated

No board, parent or player is stored: a descent replays the moves from the
root board (the children of a node are its legal moves in house order), keeps
its path, and backs up along it, so a worker never reads a field that
another worker may still be writing. Visits are added on the way down (a
virtual loss: the visit counts, its reward arrives at the backup), rewards
at the backup; both by atomic adds on the GPU. A node is expanded by the one
worker whose compare-and-swap turns NO_NODE into EXPANDING; it allocates the
children by an atomic add on ``size``, writes them, fences, and publishes
``first_child``. A worker that finds a node EXPANDING evaluates that node
itself. A pool that fills marks the node POOL_FULL and never writes past N.
With implicit minimax backups (alpha > 0) the backup also recomputes the
minimax values along its path, from the leaf up (coherent loads, exchanges);
two blocks backing up through the same node at once may leave it one
backup behind its children until the next backup through it (a benign race
of lock-free tree parallelism, as for the virtual losses).

Iteration ``i`` of tree ``g`` draws playout k from ``stream_key(tree_keys[g],
i, k)``. With one worker per tree (the CPU twin, or one block per tree on the
GPU) iterations run in order and the twins grow bit-identical trees; with
several blocks per tree the interleaving depends on timing, so the GPU's tree
is reproducible only in distribution (and the summed statistics stay exact:
the root's visits equal the iterations done).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .._checks import kernel_array
from .._threads import split_trees

from ..games.kalah.game import GAME as KALAH
from .game_mcts import opts_of
from .game_shared_tree import MAX_PATH, SharedRoots, SharedTree, cpu_step, make_shared_backup, make_shared_imm_backup
from .multi_mcts import game_units, imm_scales, make_score, make_units, margin_units, no_record
from .sentinels import EXPANDING, NO_NODE, NO_PLY_CAP, POOL_FULL, REWARD_HEURISTIC, TERMINAL, UNEVALUATED

#: Bytes of one node: three int32 and two int64 fields (and the implicit minimax value with imm=: IMM_BYTES).
NODE_BYTES = 4 * 3 + 8 * 2
IMM_BYTES = 8


def make_shared_step(jit, rules, gen, playout, ops, margin_playout=None):
    """Compile the worker's step with ``jit``; ``ops`` holds the memory
    operations of the target (``load``, ``atomic_add`` and ``atomic_cas``
    returning the old value, ``exchange``, ``fence``: plain ones on the CPU,
    coherent loads and atomics on the GPU). Returns ``descend``,
    ``leaf_units``, ``static_units``, ``backup`` and ``imm_backup``. Scratch
    (board, moves, path) comes from the caller: device code cannot
    allocate.

    ``margin_playout`` (optional; the GPU's register-board playout of
    :mod:`jitsearch.games.kalah.register` for one m, which the step is then only run
    with): ``(board, mover, empty_capture, key) -> (player 0's final
    margin, plies)``, the same game as ``playout``'s; used for the playouts
    that need nothing but the final margin (no ply cap, an outcome
    reward)."""
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    stream_key = gen.stream_key
    load, atomic_add, atomic_cas, exchange, fence = ops.load, ops.atomic_add, ops.atomic_cas, ops.exchange, ops.fence
    score = make_score(jit)
    scales = jit(imm_scales)
    outcome_units, eval_units = make_units(jit, rules)

    def descend(first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards, root_players,
                log_table, m, c, formula, units_per_visit, empty_capture, board, moves, path, path_mover, alpha):
        """Selection from the root of tree ``g`` (UCT; the first unvisited
        child in house order, else the best score, ties to the first),
        expanding the leaf it reaches (all children, then the first child is
        the leaf). Adds one visit to every node on the path. Leaves the
        leaf's position in ``board``, the path in ``path[:length]`` with the
        player who moved into each node in ``path_mover``; returns (length,
        player to move at the leaf or TERMINAL)."""
        n = 2 * m + 2
        base = g * capacity
        mean_scale, imm_scale = scales(units_per_visit, alpha)
        for i in range(n):
            board[i] = root_boards[g, i]
        player = root_players[g]
        node = 0
        depth = 0
        path[0] = 0
        path_mover[0] = 1 - player
        atomic_add(visits, base, np.int64(1))
        last = log_table.shape[0] - 1
        while depth + 1 < path.shape[0] and player != TERMINAL:
            fc = load(first_child, base + node)
            if fc == NO_NODE:
                old = atomic_cas(first_child, base + node, np.int32(NO_NODE), np.int32(EXPANDING))
                if old == NO_NODE:  # this worker expands the node
                    count = legal_moves(board, m, player, moves)
                    start = atomic_add(size, g, np.int32(count))
                    if start + count > capacity:
                        exchange(first_child, base + node, np.int32(POOL_FULL))
                        break
                    for j in range(count):
                        ch = base + start + j
                        first_child[ch] = NO_NODE
                        num_children[ch] = 0
                        move[ch] = moves[j]
                        visits[ch] = 0
                        value[ch] = 0
                        if alpha > 0.0:
                            imm[ch] = UNEVALUATED
                    num_children[base + node] = count
                    fence()  # the children are written before anyone can see them
                    exchange(first_child, base + node, np.int32(start))
                    mover = player
                    player = apply_move(board, m, player, moves[0], empty_capture)
                    depth += 1
                    path[depth] = start
                    path_mover[depth] = mover
                    atomic_add(visits, base + start, np.int64(1))
                    break
                fc = old
            if fc < 0:  # another worker is expanding it, or the pool is full: evaluate it
                break
            count = legal_moves(board, m, player, moves)
            nv = max(load(visits, base + node), 1)
            parent_visits = np.float64(nv)
            log_parent = log_table[min(nv, last)]
            best = 0
            best_score = -math.inf
            for j in range(count):
                cv = load(visits, base + fc + j)
                if cv == 0:
                    best = j
                    break
                v = load(imm, base + fc + j) if imm_scale > 0.0 else np.int64(UNEVALUATED)
                s = score(cv, load(value, base + fc + j), v, log_parent, parent_visits, c, formula, units_per_visit,
                          mean_scale, imm_scale)
                if s > best_score:
                    best_score = s
                    best = j
            mover = player
            player = apply_move(board, m, player, moves[best], empty_capture)
            node = fc + best
            depth += 1
            path[depth] = node
            path_mover[depth] = mover
            atomic_add(visits, base + node, np.int64(1))
        return depth + 1, player

    descend = jit(descend)

    def leaf_units(leaf_board, leaf_player, m, empty_capture, key, max_plies, reward_kind, total, work, moves):
        """Player 0's reward units of one playout from the leaf (copied into
        ``work``); a finished game scores its outcome."""
        n = 2 * m + 2
        for i in range(n):
            work[i] = leaf_board[i]
        if leaf_player == TERMINAL:
            return outcome_units(work, m)
        _, end_player = playout(work, m, np.int64(leaf_player), empty_capture, key, np.int64(max_plies), moves)
        if reward_kind != REWARD_HEURISTIC and end_player == TERMINAL:
            return outcome_units(work, m)
        return eval_units(work, m, reward_kind, total)

    if margin_playout is not None:
        generic_units = jit(leaf_units)
        units_of_margin = jit(margin_units)

        def leaf_units(leaf_board, leaf_player, m, empty_capture, key, max_plies, reward_kind, total, work,
                       moves):
            """As above; a playout to the end scored by its outcome runs in registers."""
            if leaf_player == TERMINAL or reward_kind == REWARD_HEURISTIC or max_plies < NO_PLY_CAP:
                return generic_units(leaf_board, leaf_player, m, empty_capture, key, max_plies, reward_kind,
                                     total, work, moves)
            margin, _ = margin_playout(leaf_board, leaf_player, empty_capture, key)
            return units_of_margin(margin)

    leaf_units = jit(leaf_units)

    def static_units(leaf_board, leaf_player, m, reward_kind, total, work):
        """Player 0's units of the leaf's own position (its outcome if the
        game is over, else its evaluation): the implicit minimax values' v0."""
        n = 2 * m + 2
        for i in range(n):
            work[i] = leaf_board[i]
        if leaf_player == TERMINAL:
            return outcome_units(work, m)
        return eval_units(work, m, reward_kind, total)

    static_units = jit(static_units)

    imm_backup = make_shared_imm_backup(jit, ops)

    backup = make_shared_backup(jit, ops)
    return SimpleNamespace(descend=descend, leaf_units=leaf_units, static_units=static_units, backup=backup,
                           imm_backup=imm_backup, stream_key=stream_key)


# -- the CPU twin: one worker per tree, trees in parallel ------------------------------


def _kalah_step():
    return cpu_step(KALAH, game_units)


#: The CPU twin: the shared-tree step written once over the game protocol
#: (:func:`jitsearch.kernels.game_shared_tree.make_grow`) with Kalah's units
#: (:func:`jitsearch.kernels.multi_mcts.game_units`); one compilation.
grow_shared_range = _kalah_step().grow_shared_range


def grow_shared_cpu(first_child, num_children, move, visits, value, imm, size, root_boards, root_players,
                    tree_keys, totals, log_table, capacity, m, c, formula, reward_kind, playouts, empty_capture,
                    max_plies, alpha, first_iteration, iterations, threads=None):
    """Iterations ``first_iteration .. first_iteration+iterations-1`` of every
    tree, one worker per tree (the CPU twin of the CUDA kernel run with one
    block per tree), trees split into contiguous ranges over ``threads``
    threads of the process-wide pool (default: every core, at most one per
    tree); a tree's result does not depend on the split. A playout plays at
    most ``max_plies`` plies and is scored by ``reward_kind``
    (:mod:`jitsearch.kernels.evaluation`); ``alpha`` > 0 keeps and mixes in
    the implicit minimax values. ``totals`` (each root's seeds) is what
    Kalah's units read off the board; kept for the GPU's signature."""
    num_trees = size.shape[0]
    hist, rows, plies = no_record(num_trees)
    args = (SharedTree(first_child, num_children, move, visits, value, imm, size),
            SharedRoots(root_boards, root_players, hist, rows, plies, tree_keys), log_table, capacity,
            (int(m), bool(empty_capture)), opts_of(c, formula, playouts, max_plies, np.int64(reward_kind), alpha), 1,
            int(first_iteration), int(iterations))
    split_trees(grow_shared_range, args, num_trees, threads)

class SharedTrees:
    """T shared trees of N nodes (see the module docstring), on the host."""

    def __init__(self, num_trees: int, capacity: int, boards: np.ndarray, players: np.ndarray, imm: bool = False):
        """``imm``: keep implicit minimax values (else ``imm`` is one unused entry)."""
        t, c = int(num_trees), int(capacity)
        self.capacity = c
        self.first_child = np.full(t * c, NO_NODE, dtype=np.int32)
        self.num_children = np.zeros(t * c, dtype=np.int32)
        self.move = np.full(t * c, -1, dtype=np.int32)
        self.visits = np.zeros(t * c, dtype=np.int64)
        self.value = np.zeros(t * c, dtype=np.int64)
        self.imm = np.full(t * c if imm else 1, UNEVALUATED, dtype=np.int64)
        self.size = np.ones(t, dtype=np.int32)
        self.root_boards = kernel_array(boards, np.int32)
        self.root_players = kernel_array(players, np.int32)

    def arrays(self):
        return (self.first_child, self.num_children, self.move, self.visits, self.value, self.imm, self.size)

    def root_children(self, g: int) -> list[tuple[int, int, int]]:
        """(move, visits, value units) of tree g's root children."""
        base = g * self.capacity
        f = int(self.first_child[base])
        if f < 0:
            return []
        n = int(self.num_children[base])
        return [(int(self.move[base + ch]), int(self.visits[base + ch]), int(self.value[base + ch]))
                for ch in range(f, f + n)]

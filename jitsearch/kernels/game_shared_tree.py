"""Tree-parallel MCTS of any game: many workers growing one shared tree, written once over the
game protocol (:mod:`jitsearch.games.protocol`) and compiled for the CPU here (one worker per
tree, the twin) and for CUDA in :mod:`jitsearch.kernels.cuda_game_shared_tree` (many thread
blocks per tree). Why a second layout beside :mod:`jitsearch.kernels.game_mcts` (one block per
tree): on a GPU one thread descends a tree about 40x slower than a CPU core, so T small
independent trees summed at the root lose to one deep CPU tree. Here B blocks share each tree
(lock-free tree parallelism with virtual loss, after Chaslot, Winands and van den Herik 2008 and
Enzenberger and Müller 2010): each block claims an iteration number, descends, expands,
evaluates its leaf with ``playouts`` playouts on its threads and backs up, while the other blocks
do the same on the same tree.

Layout: T trees of N nodes each, flat arrays of T*N entries (node ``i`` of tree ``g`` at
``g*N + i``; node 0 is the root)::

    first_child   int32   NO_NODE (-1) unexpanded, EXPANDING (-2) while a worker writes its
                          children, POOL_FULL (-3) a leaf for good, else the first child
    num_children  int32   the number of legal moves, once expanded
    move          int32   the move that led to the node (the root's is unused)
    visits        int64   iterations through the node, in-flight ones included
    value         int64   reward units credited to the player who moved into it
    imm           int64   implicit minimax value for the same player, UNEVALUATED (-1) before
                          a backup reached it; one entry, unused, without imm=
    size[T]       int32   nodes allocated

Visits are added on the way down (a virtual loss: the visit counts, its reward arrives at the
backup), rewards at the backup; both by atomic adds on the GPU (``ops``: plain loads and stores
on the CPU). A node is expanded by the one worker whose compare-and-swap turns NO_NODE into
EXPANDING; it allocates the children by an atomic add on ``size``, writes them, fences, and
publishes ``first_child``. A worker that finds a node EXPANDING evaluates that node itself. A
pool that fills marks the node POOL_FULL and never writes past N. With implicit minimax backups
two blocks backing up through the same node at once may leave it one backup behind its
children until the next backup through it (a benign race, as for the virtual losses).

No board is stored: a descent replays the moves from the root board through the protocol's
``apply``, and with them the game's record (Oware's repetition): it starts from the root's
record (``root_hist[g, :root_rows[g]]``, ``root_ply[g]``) in the worker's scratch ``hist`` and
the cursor ``(first, count, ply)`` is threaded as a value, exactly as in a game, so the leaf's
record is ``hist[first:first+count]`` and its playouts continue from it. Moves that end the
game make terminal leaves scored by their result. Rewards and evaluations as
:mod:`jitsearch.kernels.game_mcts` (:func:`~jitsearch.kernels.game_mcts.default_units`).

With one worker per tree iterations run in order and the twins grow bit-identical trees; with
several blocks per tree the interleaving depends on timing (the root's visits still equal the
iterations done).
"""

from __future__ import annotations

import math
from collections import namedtuple
from types import SimpleNamespace

import numpy as np
from numba import njit

from .._jit import stable_ids
from .._threads import split_trees
from ..games.playout import make_playout
from .. import rng
from .game_mcts import default_units, named, opts_of
from .tree_step import REWARD_UNITS, imm_scales, make_score, margin_units
from .sentinels import EXPANDING, NO_NODE, NO_PLY_CAP, POOL_FULL, TERMINAL, UNEVALUATED

#: The kernels' arguments: the flat node arrays (node i of tree g at g*N + i) ...
SharedTree = namedtuple("SharedTree", "first_child num_children move visits value imm size")
#: ... and the roots' positions, records (rows, their count, moves played) and stream keys.
SharedRoots = namedtuple("SharedRoots", "boards players hist rows ply tree_keys")

#: Playouts per leaf at most (the GPU kernel keeps one shared slot each).
MAX_PLAYOUTS = 1024
#: Nodes on one descent's path at most (a deeper descent stops and evaluates there).
MAX_PATH = 256
#: Bytes of one node: three int32 and two int64 fields (and the int64 imm with imm=).
NODE_BYTES = 4 * 3 + 8 * 2


def make_shared_backup(jit, ops):
    """``backup(value, g, capacity, path, path_mover, length, units0,
    units_all)`` compiled with ``jit`` and the target's ``ops``: credit the
    summed reward (player 0's ``units0`` of ``units_all``) to every node on
    the path, for the player who moved into it (Kalah's and Oware's shared
    trees)."""
    atomic_add = ops.atomic_add

    def backup(value, g, capacity, path, path_mover, length, units0, units_all):
        base = g * capacity
        for d in range(length):
            if path_mover[d] == 0:
                atomic_add(value, base + path[d], units0)
            else:
                atomic_add(value, base + path[d], units_all - units0)

    return jit(backup)


def make_shared_imm_backup(jit, ops):
    """``imm_backup(first_child, num_children, imm, g, capacity, path,
    path_mover, length, leaf_player, leaf_units0)`` compiled with ``jit``
    and the target's memory ``ops``: the implicit minimax backup along a
    path of a shared tree (Kalah's here, Oware's in
    :mod:`jitsearch.kernels.game_shared_tree`)."""
    load, exchange = ops.load, ops.exchange

    def imm_backup(first_child, num_children, imm, g, capacity, path, path_mover, length, leaf_player,
                   leaf_units0):
        """Implicit minimax backup along the path, from the leaf up: a node
        with evaluated children gets the best of them for its player to move
        (the player who moved into the next node of the path; at the leaf
        ``leaf_player``), else (the leaf) its own evaluation ``leaf_units0``
        (player 0's view); stored for the player who moved into it."""
        base = g * capacity
        for d in range(length - 1, -1, -1):
            node = base + path[d]
            best = np.int64(-1)
            fc = load(first_child, node)
            if fc >= 0:
                for j in range(load(num_children, node)):
                    best = max(best, load(imm, base + fc + j))
            mover = path_mover[d]
            if best >= 0:
                to_move = path_mover[d + 1] if d + 1 < length else leaf_player
                exchange(imm, node, best if mover == to_move else REWARD_UNITS - best)
            elif d == length - 1:
                exchange(imm, node, leaf_units0 if mover == 0 else REWARD_UNITS - leaf_units0)

    return jit(imm_backup)


def cpu_ops():
    """The memory operations of :func:`make_shared_step` on the CPU: plain loads and stores (one worker a tree)."""
    def load(a, i):
        return a[i]

    def atomic_add(a, i, v):
        old = a[i]
        a[i] = old + v
        return old

    def atomic_cas(a, i, old, new):
        cur = a[i]
        if cur == old:
            a[i] = new
        return cur

    def exchange(a, i, v):
        old = a[i]
        a[i] = v
        return old

    def fence():
        return 0

    j = stable_ids(njit(cache=True, inline="always"))  # fixed ids: the kernels that call them load from the cache
    return SimpleNamespace(load=j(load), atomic_add=j(atomic_add), atomic_cas=j(atomic_cas),
                           exchange=j(exchange), fence=j(fence))


def make_shared_step(jit, game, gen, ops, *, inline=None, tag="", margin_playout=None):
    """Compile the worker's step of ``game`` with ``jit`` over ``game.build(inline or jit)`` and
    the target's memory ``ops``: ``descend``, ``leaf_units``, ``static_units``, ``backup``,
    ``imm_backup``, ``stream_key``; the rewards of :func:`jitsearch.kernels.game_mcts.default_units`.
    Scratch (board, moves, path, hist) comes from the caller. ``margin_playout`` (optional: a
    game's fast playout of one variant, Kalah's register board on the GPU): ``(board, cfg,
    player, key) -> player 0's final margin``, the same game as the generic playout's, run for
    the playouts that need nothing but the final margin (no ply cap, scored by the outcome)."""
    rules = game.build(inline or jit)
    legal, apply = rules.legal, rules.apply
    load, atomic_add, atomic_cas, exchange, fence = ops.load, ops.atomic_add, ops.atomic_cas, ops.exchange, ops.fence
    score = make_score(jit)
    backup = make_shared_backup(jit, ops)
    imm_backup = make_shared_imm_backup(jit, ops)
    scales = jit(imm_scales)
    playout = make_playout(jit, rules, gen, tag)
    fns = default_units(jit, rules, game.search_eval)
    outcome_units, eval_units, ended_units = fns[:3]

    def descend(first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards, root_players,
                root_hist, root_rows, root_ply, log_table, cfg, c, formula, units_per_visit, board, moves, path,
                path_mover, hist, alpha):
        """Selection from the root of tree ``g`` (the first unvisited child in the rules' order,
        else the best UCT score, ties to the first), expanding the leaf it reaches (then its
        first child is the leaf), replaying the moves and the record on the way. Adds one visit
        to every node on the path. Leaves the leaf's position in ``board`` and its record in
        ``hist``; returns (path length, player to move at the leaf or TERMINAL, cursor)."""
        base = g * capacity
        mean_scale, imm_scale = scales(units_per_visit, alpha)
        for i in range(root_boards.shape[1]):
            board[i] = root_boards[g, i]
        count = root_rows[g]
        for r in range(count):
            for j in range(root_hist.shape[2]):
                hist[r, j] = root_hist[g, r, j]
        cur = (np.int64(0), np.int64(count), np.int64(root_ply[g]))
        player = np.int64(root_players[g])
        node = 0
        depth = 0
        path[0] = 0
        path_mover[0] = 1 - player
        atomic_add(visits, base, np.int64(1))
        last = log_table.shape[0] - 1
        while depth + 1 < path.shape[0] and player != TERMINAL:
            # One apply call site for both ways down (expanding, selecting): the rules are inlined
            # where they are called, so a second site doubles this function's compile time.
            fc = load(first_child, base + node)
            expanded = False
            best = 0
            if fc == NO_NODE:
                old = atomic_cas(first_child, base + node, np.int32(NO_NODE), np.int32(EXPANDING))
                if old == NO_NODE:  # this worker expands the node, then steps into its first child
                    num = legal(board, cfg, player, moves, hist, cur)
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
                num = legal(board, cfg, player, moves, hist, cur)
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
            player, cur = apply(board, cfg, player, np.int64(moves[best]), hist, cur)
            node = fc + best
            depth += 1
            path[depth] = node
            path_mover[depth] = mover
            atomic_add(visits, base + node, np.int64(1))
            if expanded:
                break
        return depth + 1, player, cur

    descend = named(jit, descend, tag)

    def leaf_units(leaf_board, leaf_player, cfg, hist, cur, key, max_plies, param, work, moves):
        """Player 0's reward units of one playout of at most ``max_plies`` plies from the leaf
        (copied into ``work``; its record ``hist`` at cursor ``cur`` is kept): a finished game
        scores its result, else the evaluation."""
        for i in range(work.shape[0]):
            work[i] = leaf_board[i]
        if leaf_player == TERMINAL:
            return outcome_units(work, cfg)
        _, end, _cur = playout(work, cfg, np.int64(leaf_player), moves, hist, cur, key, np.int64(max_plies))
        if end < 0:
            return ended_units(work, cfg, param)
        return eval_units(work, cfg, param)

    if margin_playout is not None:
        generic_units = named(jit, leaf_units, tag)
        units_of_margin = jit(margin_units)
        outcome_at_end = fns[3]

        def leaf_units(leaf_board, leaf_player, cfg, hist, cur, key, max_plies, param, work, moves):
            """As above; a playout to the end scored by its outcome runs on the fast path."""
            if leaf_player == TERMINAL or max_plies < NO_PLY_CAP or not outcome_at_end(param):
                return generic_units(leaf_board, leaf_player, cfg, hist, cur, key, max_plies, param, work, moves)
            return units_of_margin(margin_playout(leaf_board, cfg, np.int64(leaf_player), key))

    leaf_units = named(jit, leaf_units, tag)

    def static_units(leaf_board, leaf_player, cfg, param, work):
        """Player 0's units of the leaf's own position (the implicit minimax values' v0)."""
        for i in range(work.shape[0]):
            work[i] = leaf_board[i]
        if leaf_player == TERMINAL:
            return outcome_units(work, cfg)
        return eval_units(work, cfg, param)

    static_units = named(jit, static_units, tag)
    return SimpleNamespace(descend=descend, leaf_units=leaf_units, static_units=static_units, backup=backup,
                           imm_backup=imm_backup, stream_key=gen.stream_key)


def make_grow(jit, step, game, tag=""):
    """Compile the CPU twin ``grow_shared_range(tree, roots, log_table, capacity, cfg, opts, rows,
    first_iteration, iterations, first_tree, last_tree)`` (``tree`` a :class:`SharedTree`,
    ``roots`` a :class:`SharedRoots`, ``opts`` a :class:`jitsearch.kernels.game_mcts.Opts`): one
    worker per tree, the CUDA kernel run with one block per tree. ``rows``: the record scratch's
    rows (:func:`jitsearch.kernels.game_mcts.scratch_rows`)."""
    descend, leaf_units, backup = step.descend, step.leaf_units, step.backup
    static_units, imm_backup, stream_key = step.static_units, step.imm_backup, step.stream_key
    cell_type = np.dtype(game.board_dtype).type
    max_moves = int(game.max_moves)

    def grow_shared_range(tree, roots, log_table, capacity, cfg, opts, rows, first_iteration, iterations, first_tree,
                          last_tree):
        first_child, num_children, move, visits, value, imm, size = tree
        root_boards, root_players, root_hist, root_rows, root_ply, tree_keys = roots
        c, formula, playouts, max_plies, param, alpha = opts
        n = root_boards.shape[1]
        units_per_visit = np.float64(playouts) * np.float64(REWARD_UNITS)
        units_all = np.int64(playouts) * np.int64(REWARD_UNITS)
        board = np.empty(n, dtype=cell_type)
        work = np.empty(n, dtype=cell_type)
        moves = np.empty(max_moves, dtype=np.int64)
        path = np.empty(MAX_PATH, dtype=np.int32)
        path_mover = np.empty(MAX_PATH, dtype=np.int32)
        hist = np.empty((rows, root_hist.shape[2]), dtype=root_hist.dtype)
        for g in range(first_tree, last_tree):
            for it in range(first_iteration, first_iteration + iterations):
                length, leaf_player, cur = descend(
                    first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards,
                    root_players, root_hist, root_rows, root_ply, log_table, cfg, c, formula, units_per_visit, board,
                    moves, path, path_mover, hist, alpha)
                units0 = np.int64(0)
                for k in range(playouts):
                    units0 += leaf_units(board, leaf_player, cfg, hist, cur, stream_key(tree_keys[g], it, k),
                                         max_plies, param, work, moves)
                backup(value, g, capacity, path, path_mover, length, units0, units_all)
                if alpha > 0.0:
                    v0 = static_units(board, leaf_player, cfg, param, work)
                    imm_backup(first_child, num_children, imm, g, capacity, path, path_mover, length, leaf_player, v0)

    return named(jit, grow_shared_range, tag)


CPU_RNG = rng.build(stable_ids(njit(cache=True)))  # fixed ids: the grown kernels load from the disk cache
_CPU: dict = {}


def cpu_step(game):
    """The CPU shared-tree step and ``grow_shared_range`` of ``game`` (rules inlined), compiled
    once per game (cached on disk: fixed ids, named for the game)."""
    key = game
    if key not in _CPU:
        tag = "shared_" + game.name
        step = make_shared_step(stable_ids(njit(cache=True)), game, CPU_RNG, cpu_ops(),
                                inline=stable_ids(njit(inline="always")), tag=tag)
        step.grow_shared_range = make_grow(stable_ids(njit(cache=True, nogil=True)), step, game, tag)
        _CPU[key] = step
    return _CPU[key]


class SharedTrees:
    """T shared trees of N nodes (flat arrays, node i of tree g at g*N + i) on the host."""

    FIELDS = SharedTree._fields

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

    def root(self, g: int) -> tuple[int, int]:
        """(visits, value units) of tree g's root."""
        return int(self.visits[g * self.capacity]), int(self.value[g * self.capacity])

    def sizes(self) -> np.ndarray:
        return self.size

    def root_children(self, g: int) -> list[tuple[int, int, int]]:
        """(move, visits, value units) of tree g's root children."""
        base = g * self.capacity
        f = int(self.first_child[base])
        if f < 0:
            return []
        return [(int(self.move[base + ch]), int(self.visits[base + ch]), int(self.value[base + ch]))
                for ch in range(f, f + int(self.num_children[base]))]


def grow_shared_cpu(game, trees: SharedTrees, roots: tuple, tree_keys, log_table, cfg, c, formula, playouts,
                    max_plies, param, alpha, rows, first_iteration, iterations, threads=None):
    """``game``'s ``grow_shared_range`` over every tree (``roots``: boards, players, hist, rows,
    ply), trees split over the process-wide pool."""
    grow = cpu_step(game).grow_shared_range
    args = (SharedTree(*trees.arrays()), SharedRoots(*roots, tree_keys), log_table, trees.capacity, cfg,
            opts_of(c, formula, playouts, max_plies, param, alpha), rows, first_iteration, iterations)
    split_trees(grow, args, trees.size.shape[0], threads)

"""Many MCTS trees at once, written once over the game protocol
(:mod:`jitsearch.games.protocol`): the per-tree step of any :class:`~jitsearch.games.protocol.Game`,
compiled for the CPU here (trees split over the shared thread pool) and for CUDA in
:mod:`jitsearch.kernels.cuda_game_mcts` (one thread block per tree), both closing over the
game's compiled rules (``game.build(jit)``). The pieces every tree kernel shares (integer
reward units, ``log_table`` from the host, the selection score with no fma-sensitive
expression, the backups) are :mod:`jitsearch.kernels.tree_step`'s.

One step of tree t selects ``leaves_per_step`` (L) leaves, one after another: from the root by
the UCT formula (the first unvisited child in the rules' order, else the best score; ties to the
first), expanding a leaf that is not over (all its children at once, then taking the first)
unless the pool is full (then the leaf itself is evaluated); each descent leaves a virtual visit
on its path, so the next descent of the step prefers other branches. Then every leaf gets
``playouts`` random playouts, and leaf by leaf in order the virtual visits are taken back and
the summed reward is backed up to the root, each node credited for the player who moved into it
(so an extra turn needs no sign flip). On the GPU the L x playouts playouts of a step run on the
block's threads at once, so L multiplies a tree's iterations per second. MCTS-Solver is not part
of this search (:func:`jitsearch.mcts.search.mcts_search` with ``solver=True`` has it).

Layout: T trees of N preallocated nodes, struct of arrays ``[T, N]``::

    parent[T, N]        int32   NO_NODE (-1) at the root
    first_child[T, N]   int32   NO_NODE until expanded; children contiguous
    num_children[T, N]  int32
    move[T, N]          int32   the game's move into the node (-1 at the root)
    to_move[T, N]       int32   player to move, TERMINAL (-1) once the game is over
    mover_in[T, N]      int32   the player who moved into the node
    visits[T, N]        int64   iterations through the node
    value[T, N]         int64   reward units credited to mover_in
    imm[T, N]           int64   implicit minimax value for mover_in, UNEVALUATED (-1) before a
                                backup reached the node; [T, 1] and unused without imm
    boards[T, N, cells]         each node's position (a finished game's final board); any
                                integer dtype that holds the game's cells (Oware int16)
    size[T]             int32   nodes used

and per tree the root's game: ``root_hist[T, R, C]`` (rows ``0 .. root_rows[t]-1`` its record,
a dummy ``[T, 1, 1]`` for games without one) and ``root_ply[T]`` (moves played).

**The record.** A node's position alone may not define its future (Oware's repetition rule
needs the positions since the last capture), so every expansion and every playout first
rebuilds its node's record into a scratch array through the game's hook
(:attr:`Game.node_record <jitsearch.games.protocol.Game>`), which also gives the node's depth
(its ply is the root's plus that). A game without the hook has an empty record.

**Rewards.** A playout (or a terminal node) scores ``REWARD_UNITS`` for a win of the player
credited, half for a draw, 0 for a loss (the sign of the game's ``margin``), summed exactly as
integers, so the CPU twin and the GPU kernel grow bit-identical trees for the same keys. Leaf
``j`` of step ``s`` is iteration ``i = s·L + j``; its playout ``k`` draws from
``stream_key(tree_keys[t], i, k)``, the move of each ply picked as the protocol's playout
(:func:`jitsearch.games.playout.make_playout`) picks it.

**Evaluations.** A playout stops after ``max_plies`` random plies (``NO_PLY_CAP``: to the end);
if the game is not over it scores the evaluation units of its position, ``eval_units(board,
cfg, param)``: by default (:func:`default_units`) the game's own evaluation
(:attr:`Game.search_eval <jitsearch.games.protocol.Game>`: Oware's capture evaluation with
``param`` its side weight, squashed as :func:`~jitsearch.games.protocol.store_value`; Kalah's
rewards, the store difference or HMCTS's heuristic, ``param`` the evaluation's index) or its
``evaluate``, squashed. With ``alpha`` > 0 the backups also keep implicit minimax values of the
leaves' static evaluations (:func:`jitsearch.kernels.tree_step.make_imm_backup`; conventions in
:mod:`jitsearch.kernels.evaluation`), and selection mixes them in.
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
from .evaluation import store_value
from .tree_step import IMM_BYTES, REWARD_UNITS, imm_scales, make_backups, make_imm_backup, make_score, margin_units
from .sentinels import NO_NODE, TERMINAL, UNEVALUATED

#: The kernels' arguments (mctx's ``Tree``): a batch's node arrays (module docstring) ...
Tree = namedtuple("Tree", "parent first_child num_children move to_move mover_in visits value imm boards size")
#: ... the roots' stream keys and games (record rows, their count, moves played) ...
Roots = namedtuple("Roots", "tree_keys hist rows ply")
#: ... and the search's options: exploration c, formula code, playouts per leaf, plies before a
#: playout is scored, the evaluation's parameter, the implicit minimax weight alpha.
Opts = namedtuple("Opts", "c formula playouts max_plies param alpha")

#: Bytes of a node without its board: six int32 and two int64 fields.
NODE_FIXED_BYTES = 4 * 6 + 8 * 2


def node_bytes(cells: int, board_dtype, imm: bool = False) -> int:
    return NODE_FIXED_BYTES + np.dtype(board_dtype).itemsize * int(cells) + (IMM_BYTES if imm else 0)


def scratch_rows(game, cfg, root_rows, root_ply) -> int:
    """Rows of a record scratch no expansion or playout outgrows (1 without a record): a node
    at depth d holds at most root_rows + d rows, and a game writes at most ``sizes.record[0]``
    rows from its start (Oware: the move limit), so ``root_rows + record - root_ply``."""
    size = game.sizes(cfg)
    if game.node_record is None or size.record[1] <= 1:
        return 1
    return max(1, int(np.max(np.asarray(root_rows, np.int64) + size.record[0] - np.asarray(root_ply, np.int64))))


def scratch_bytes(rows: int, cols: int, itemsize: int) -> int:
    """Bytes of one record scratch."""
    return int(rows) * int(cols) * int(itemsize)


def named(jit, fn, tag):
    """``jit(fn)`` with ``fn`` renamed for ``tag`` (a game): closures of one
    source over different rules get different fixed ids and cache files."""
    if tag:
        fn.__qualname__ = f"{fn.__qualname__}_{tag}"
        fn.__name__ = f"{fn.__name__}_{tag}"
    return jit(fn)


#: A game with its own rewards (:attr:`SearchEval.rewards <jitsearch.games.protocol.SearchEval>`) takes
#: ``param`` = the index of its evaluation, plus this flag when a finished playout scores it too (HMCTS).
EVAL_AT_END = 1 << 8


def default_units(jit, rules, search_eval=None):
    """``(outcome_units(board, cfg), eval_units(board, cfg, param), ended_units(board, cfg, param),
    outcome_at_end(param))`` of a game: player 0's units of a finished game by the sign of
    ``margin``; of a live one, with the game's ``search_eval``
    (:class:`~jitsearch.games.protocol.SearchEval`) its ``rewards`` of the evaluation ``param``
    (:data:`EVAL_AT_END`: also of a finished playout), else its ``value`` and ``scale``, else
    ``evaluate`` (player 0's) and s = 8 ``param``, squashed as store_value, 0.5 + v / (2 (|v| +
    max(1, s / 8))); each rounded to units (REWARD_UNITS is a power of two: the product is exact,
    fused or not). ``outcome_at_end(param)``: whether a finished playout scores its outcome."""
    of_margin = jit(margin_units)
    margin = rules.margin

    def outcome_units(board, cfg):
        return of_margin(margin(board, cfg))

    outcome_units = jit(outcome_units)
    if search_eval is not None and search_eval.rewards is not None:
        reward = search_eval.rewards(jit)

        def eval_units(board, cfg, param):
            r = reward(board, cfg, np.int64(0), param % EVAL_AT_END)  # player 0's
            return np.int64(math.floor(r * REWARD_UNITS + 0.5))

        eval_units = jit(eval_units)

        def outcome_at_end(param):
            return param < EVAL_AT_END

        outcome_at_end = jit(outcome_at_end)

        def ended_units(board, cfg, param):
            if outcome_at_end(param):
                return outcome_units(board, cfg)
            return eval_units(board, cfg, param)

        return outcome_units, eval_units, jit(ended_units), outcome_at_end
    squash = jit(store_value)
    if search_eval is not None:
        value, scale = search_eval.build(jit)
    else:
        evaluate = rules.evaluate

        def value(board, cfg, param):
            return evaluate(board, cfg, np.int64(0))

        def scale(board, cfg, param):
            return 8.0 * param

        value, scale = jit(value), jit(scale)

    def eval_units(board, cfg, param):
        r = squash(value(board, cfg, param), scale(board, cfg, param))
        return np.int64(math.floor(r * REWARD_UNITS + 0.5))

    def ended_units(board, cfg, param):
        return outcome_units(board, cfg)

    def outcome_at_end(param):
        return True

    return outcome_units, jit(eval_units), jit(ended_units), jit(outcome_at_end)


def make_step(jit, game, gen, *, inline=None, tag=""):
    """Compile the per-tree functions of ``game`` with ``jit`` over ``game.build(inline or
    jit)``: ``descend``, ``playout_units``, ``terminal_units``, ``static_units``, ``backup``,
    ``imm_backup``, ``add_virtual_visit``, ``record``, ``eval_units``, ``stream_key``.
    ``gen``: the RNG compiled for the target; the rewards are :func:`default_units`'s (a playout
    that ended the game scores its outcome, or with HMCTS's reward its evaluation).

    Device code cannot allocate, so every function takes its scratch from the caller:
    ``work``, ``child`` (the game's board dtype, at least its cells), ``moves`` (int64, at least
    its most moves) and ``hist`` (the record's rows, :func:`scratch_rows`)."""
    rules = game.build(inline or jit)
    legal, apply = rules.legal, rules.apply
    stream_key = gen.stream_key
    score = make_score(jit)
    backup, add_virtual_visit = make_backups(jit)
    imm_backup = make_imm_backup(jit)
    scales = jit(imm_scales)
    playout = make_playout(jit, rules, gen, tag)
    outcome_units, eval_units, ended_units = default_units(jit, rules, game.search_eval)[:3]

    if game.node_record is not None:
        record = game.node_record(jit)
    else:
        def depth_only(parent, boards, to_move, t, node, root_hist, root_rows, cfg, hist):
            """No record: (0, the node's depth)."""
            depth = 0
            x = node
            while x != 0:
                depth += 1
                x = parent[t, x]
            return 0, depth

        record = named(jit, depth_only, tag)

    def expand(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t, node,
               cfg, ply, hist, count, work, child, moves, alpha):
        """All children of live ``node`` (record ``hist[0:count]``, ``ply`` moves played);
        returns how many (0: the pool is full)."""
        n = boards.shape[2]
        player = np.int64(to_move[t, node])
        cur = (np.int64(0), np.int64(count), np.int64(ply))
        for i in range(n):
            work[i] = boards[t, node, i]
        num = legal(work, cfg, player, moves, hist, cur)
        start = size[t]
        if start + num > parent.shape[1]:
            return 0
        for j in range(num):
            ch = start + j
            for i in range(n):
                child[i] = work[i]
            nxt, _cur = apply(child, cfg, player, moves[j], hist, cur)
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

    expand = named(jit, expand, tag)

    def descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size, t,
                root_hist, root_rows, root_ply, log_table, cfg, c, formula, units_per_visit, hist, work, child, moves,
                alpha):
        """Selection from the root of tree ``t`` to a leaf (the first unvisited child in the
        rules' order, else the best UCT score, ties to the first; with ``alpha`` > 0 the mean
        mixed with the implicit minimax value), then its expansion; returns the leaf."""
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
            count, depth = record(parent, boards, to_move, t, node, root_hist, root_rows, cfg, hist)
            if expand(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                      t, node, cfg, root_ply[t] + depth, hist, count, work, child, moves, alpha) > 0:
                node = first_child[t, node]
        return node

    descend = named(jit, descend, tag)

    def playout_units(parent, boards, to_move, t, leaf, root_hist, root_rows, root_ply, cfg, key, max_plies, param,
                      hist, work, moves):
        """One random playout of at most ``max_plies`` plies from live ``leaf`` with its record:
        player 0's units (the outcome if the game ended, else the evaluation)."""
        count, depth = record(parent, boards, to_move, t, leaf, root_hist, root_rows, cfg, hist)
        for i in range(boards.shape[2]):
            work[i] = boards[t, leaf, i]
        cur = (np.int64(0), np.int64(count), np.int64(root_ply[t] + depth))
        _, end, _cur = playout(work, cfg, np.int64(to_move[t, leaf]), moves, hist, cur, key, np.int64(max_plies))
        if end < 0:
            return ended_units(work, cfg, param)
        return eval_units(work, cfg, param)

    playout_units = named(jit, playout_units, tag)

    def terminal_units(boards, t, leaf, cfg, work):
        for i in range(boards.shape[2]):
            work[i] = boards[t, leaf, i]
        return outcome_units(work, cfg)

    terminal_units = named(jit, terminal_units, tag)

    def static_units(boards, to_move, t, leaf, cfg, param, work):
        """Player 0's units of the leaf's own position (the implicit minimax values' v0): its
        outcome if the game is over, else its evaluation."""
        for i in range(boards.shape[2]):
            work[i] = boards[t, leaf, i]
        if to_move[t, leaf] == TERMINAL:
            return outcome_units(work, cfg)
        return eval_units(work, cfg, param)

    static_units = named(jit, static_units, tag)

    return SimpleNamespace(record=record, expand=expand, descend=descend, playout_units=playout_units,
                           terminal_units=terminal_units, static_units=static_units, eval_units=eval_units,
                           outcome_units=outcome_units, backup=backup, imm_backup=imm_backup,
                           add_virtual_visit=add_virtual_visit, stream_key=stream_key)


def make_grow(jit, step, game, tag=""):
    """Compile the CPU twin ``grow_tree_range(tree, roots, log_table, cfg, opts, rows,
    leaves_per_step, first_step, steps, first_tree, last_tree)`` with ``jit`` (``tree`` a
    :class:`Tree`, ``roots`` a :class:`Roots`, ``opts`` an :class:`Opts`).

    A step selects ``leaves_per_step`` leaves one after another, each descent leaving a virtual
    visit on its path; evaluates each leaf with ``playouts`` playouts (a terminal leaf by its
    result); then, leaf by leaf in order, takes the virtual visits back and backs the summed
    reward up, each node credited for the player who moved into it (and, with ``alpha`` > 0,
    the leaf's static evaluation up the implicit minimax values). ``rows``: the record
    scratch's rows (:func:`scratch_rows`)."""
    descend, playout_units, terminal_units = step.descend, step.playout_units, step.terminal_units
    backup, add_virtual_visit, static_units, imm_backup = (step.backup, step.add_virtual_visit, step.static_units,
                                                           step.imm_backup)
    stream_key = step.stream_key
    cell_type = np.dtype(game.board_dtype).type
    max_moves = int(game.max_moves)

    def grow_tree_range(tree, roots, log_table, cfg, opts, rows, leaves_per_step, first_step, steps, first_tree,
                        last_tree):
        parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size = tree
        tree_keys, root_hist, root_rows, root_ply = roots
        c, formula, playouts, max_plies, param, alpha = opts
        n = boards.shape[2]
        units_per_visit = np.float64(playouts * REWARD_UNITS)
        units_all = np.int64(playouts) * REWARD_UNITS
        work = np.empty(n, dtype=cell_type)
        child = np.empty(n, dtype=cell_type)
        moves = np.empty(max_moves, dtype=np.int64)
        hist = np.empty((rows, root_hist.shape[2]), dtype=root_hist.dtype)
        leaves = np.empty(leaves_per_step, dtype=np.int64)
        for t in range(first_tree, last_tree):
            for step_ in range(first_step, first_step + steps):
                for j in range(leaves_per_step):
                    leaf = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm,
                                   boards, size, t, root_hist, root_rows, root_ply, log_table, cfg, c, formula,
                                   units_per_visit, hist, work, child, moves, alpha)
                    leaves[j] = leaf
                    add_virtual_visit(parent, visits, t, leaf, 1)
                for j in range(leaves_per_step):
                    leaf = leaves[j]
                    units0 = np.int64(0)
                    if to_move[t, leaf] == TERMINAL:
                        units0 = terminal_units(boards, t, leaf, cfg, work) * playouts
                    else:
                        it = step_ * leaves_per_step + j
                        for k in range(playouts):
                            key = stream_key(tree_keys[t], it, k)
                            units0 += playout_units(parent, boards, to_move, t, leaf, root_hist, root_rows, root_ply,
                                                    cfg, key, max_plies, param, hist, work, moves)
                    add_virtual_visit(parent, visits, t, leaf, -1)
                    backup(parent, mover_in, visits, value, t, leaf, units0, units_all)
                    if alpha > 0.0:
                        v0 = static_units(boards, to_move, t, leaf, cfg, param, work)
                        imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, v0)

    return named(jit, grow_tree_range, tag)


CPU_RNG = rng.build(stable_ids(njit(cache=True)))  # fixed ids: the grown kernels load from the disk cache
_CPU: dict = {}


def cpu_step(game):
    """The CPU step functions and ``grow_tree_range`` of ``game`` (rules inlined), compiled
    once per game (cached on disk: fixed ids, named for the game)."""
    key = game
    if key not in _CPU:
        tag = game.name
        step = make_step(stable_ids(njit(cache=True)), game, CPU_RNG, inline=stable_ids(njit(inline="always")),
                         tag=tag)
        step.grow_tree_range = make_grow(stable_ids(njit(cache=True, nogil=True)), step, game, tag)
        _CPU[key] = step
    return _CPU[key]


def opts_of(c, formula, playouts, max_plies, param, alpha) -> Opts:
    """The kernels' :class:`Opts` with the argument types every call passes (one compilation)."""
    param = param if isinstance(param, np.integer) else float(param)
    return Opts(float(c), int(formula), int(playouts), int(max_plies), param, float(alpha))


def grow_trees_cpu(grow, arrays, tree_keys, root_hist, root_rows, root_ply, log_table, cfg, c, formula, playouts,
                   max_plies, param, alpha, rows, leaves_per_step, first_step, steps, threads=None):
    """``grow`` (a game's ``grow_tree_range``) over every tree, contiguous ranges of trees on
    ``threads`` threads of the process-wide pool (default: every core, at most one per tree);
    a tree's result does not depend on the split."""
    args = (Tree(*arrays), Roots(tree_keys, root_hist, root_rows, root_ply), log_table, cfg,
            opts_of(c, formula, playouts, max_plies, param, alpha), rows, leaves_per_step, first_step, steps)
    split_trees(grow, args, arrays[0].shape[0], threads)


class GameTrees:
    """T trees of N nodes (module docstring) on the host; node boards of ``board_dtype``."""

    FIELDS = Tree._fields

    def __init__(self, num_trees: int, capacity: int, cells: int, board_dtype, imm: bool = False):
        """``imm``: keep implicit minimax values (else a [T, 1] placeholder)."""
        t, c, n = int(num_trees), int(capacity), int(cells)
        self.parent = np.full((t, c), NO_NODE, dtype=np.int32)
        self.first_child = np.full((t, c), NO_NODE, dtype=np.int32)
        self.num_children = np.zeros((t, c), dtype=np.int32)
        self.move = np.full((t, c), -1, dtype=np.int32)
        self.to_move = np.zeros((t, c), dtype=np.int32)
        self.mover_in = np.zeros((t, c), dtype=np.int32)
        self.visits = np.zeros((t, c), dtype=np.int64)
        self.value = np.zeros((t, c), dtype=np.int64)
        self.imm = np.full((t, c if imm else 1), UNEVALUATED, dtype=np.int64)
        self.boards = np.zeros((t, c, n), dtype=board_dtype)
        self.size = np.ones(t, dtype=np.int32)

    def set_roots(self, boards: np.ndarray, players: np.ndarray) -> None:
        """Root of tree t = (boards[t], players[t]) (live positions)."""
        self.boards[:, 0, :] = boards
        self.to_move[:, 0] = players
        self.mover_in[:, 0] = 1 - np.asarray(players)

    def arrays(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def tree(self) -> Tree:
        """The arrays as the kernels take them."""
        return Tree(*self.arrays())

"""Multi-tree MCTS for Oware: T independent trees grown by the kernel written
once over the game protocol (:mod:`jitsearch.mcts.game`), on all CPU cores
(:func:`jitsearch.kernels.game_mcts.grow_trees_cpu`) or on the GPU (one
thread block per tree, :mod:`jitsearch.kernels.cuda_game_mcts`),
bit-identical for the same seed; Oware's repetition record is rebuilt along
each path by the game's ``node_record`` hook.

* :func:`analyse_oware`: many positions in one launch, one tree each
  (``jitsearch analyse --game oware``);
* :func:`search_oware`: one position, one tree (the ``mcts:...`` agent of
  :mod:`jitsearch.arena.oware_arena`).

Conventions as :mod:`jitsearch.mcts.multi`: the root's player to move
chooses; a move's ``value`` is that player's mean reward after it (win 1,
draw 1/2, loss 0 by OpenSpiel's returns: the final scores); the move played
has the most visits (ties to the better value, then house order). Moves are
house indices (:mod:`jitsearch.games.oware.rules`). The repetition rule is
exact: each tree starts from its state's record (:attr:`OwareState.history`)
and move count. An *iteration* expands and evaluates one leaf with
``playouts`` uniformly random playouts; tree t's iteration i draws playout k
from ``stream_key(tree_keys[t], i, k)``.

Leaf evaluations (``eval="capture"``, :func:`jitsearch.kernels.oware_playouts.make_units`):
each playout stops after ``eval_plies`` random plies (default 4) and, if
the game goes on, scores the alpha-beta's evaluation (captured difference +
``side_weight`` x seeds-on-side difference) squashed into (0, 1) as
:func:`jitsearch.kernels.evaluation.store_value`; ``imm`` = alpha > 0 adds
implicit minimax backups of that evaluation (Lanctot et al. 2014).
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from .._checks import check_choice, check_float, check_int, kernel_array
from .._threads import cpu_threads
from ..games.oware import OwareState
from ..games.oware.alphabeta import DEFAULT_SIDE_WEIGHT
from ..games.oware.game import GAME as OWARE
from ..kernels.game_mcts import node_bytes as game_node_bytes
from ..kernels.tree_step import REWARD_UNITS, log_table_for
from ..kernels.oware_playouts import SIDE_WEIGHT_DENOMINATOR, game_units, pack_states
from ..kernels.sentinels import FORMULAS, NO_PLY_CAP
from ..stop import check_stop
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .config import DEFAULT_EVAL_PLIES, MAX_LEAVES, MAX_PLAYOUT_DEPTH, MAX_STEP_PLAYOUTS, MAX_TREES, check_tree_options
from .game import GameGrower, checked_run_options, root_positions
from .multi import DEFAULT_TIME_NODES, MAX_NODES, default_leaves, grow_in_chunks, most_visited

#: The dtype of an Oware tree's node boards (2m+2 cells of at most 4·m·seeds... < 2^15 seeds).
NODE_BOARD_DTYPE = np.int16

#: Default playouts per leaf of :func:`analyse_oware`.
DEFAULT_PLAYOUTS = 8
#: Leaf evaluations of Oware MCTS (``eval=``).
OWARE_EVALS = ("capture",)
#: Largest |side_weight| of the evaluation.
MAX_SIDE_WEIGHT = 16.0


def check_oware_eval(eval, eval_plies, imm, side_weight) -> tuple:
    """(eval, eval_plies, imm, side_weight) checked: ``eval`` None or
    "capture"; ``eval_plies`` (default 4) and ``side_weight`` (default the
    alpha-beta's, a multiple of 1/256 in [-16, 16]) only with it; ``imm`` in
    [0, 1], above 0 only with ``eval``."""
    if eval is not None:
        eval = check_choice("eval", eval, OWARE_EVALS)
        eval_plies = DEFAULT_EVAL_PLIES if eval_plies is None else check_int("eval_plies", eval_plies, 0,
                                                                             MAX_PLAYOUT_DEPTH)
        side_weight = DEFAULT_SIDE_WEIGHT if side_weight is None else check_float(
            "side_weight", side_weight, -MAX_SIDE_WEIGHT, MAX_SIDE_WEIGHT)
        if side_weight * SIDE_WEIGHT_DENOMINATOR != round(side_weight * SIDE_WEIGHT_DENOMINATOR):
            raise ValueError(f"side_weight must be a multiple of 1/{SIDE_WEIGHT_DENOMINATOR} (exact on every "
                             f"backend), got {side_weight!r}")
    elif eval_plies is not None or side_weight is not None:
        raise ValueError("eval_plies= and side_weight= apply to eval=capture (random playouts to the end have no "
                         "evaluation)")
    imm = check_float("imm", imm, 0.0, 1.0)
    if imm and eval is None:
        raise ValueError("imm= (implicit minimax backups) backs up an evaluation: give eval=capture")
    return eval, eval_plies, float(imm), float(DEFAULT_SIDE_WEIGHT if side_weight is None else side_weight)


def _checked_states(states) -> list:
    if isinstance(states, OwareState):
        states = [states]
    if not isinstance(states, (list, tuple)) or not states:
        raise ValueError("states must be a non-empty list of OwareState")
    for i, s in enumerate(states):
        if not isinstance(s, OwareState):
            raise ValueError(f"states must be OwareState, got {type(s).__name__}")
        if s.is_over:
            raise ValueError(f"position {i + 1} is already over: no move to search")
    if len(states) > MAX_TREES:
        raise ValueError(f"{len(states):,} positions are above the limit of {MAX_TREES:,} per launch")
    return list(states)


def _scratch_rows(root_rows, root_ply, move_limit: int) -> int:
    """Rows of a record scratch that no expansion or playout outgrows: a node at depth d holds
    at most root_rows + d rows and a playout from it adds at most move_limit - (root_ply + d)."""
    return int(np.max(np.asarray(root_rows, np.int64) + move_limit - np.asarray(root_ply, np.int64)))


def node_bytes(houses: int, imm: bool = False) -> int:
    """Bytes of one node of an Oware tree (int16 boards of 2m+2 cells)."""
    return game_node_bytes(2 * int(houses) + 2, NODE_BOARD_DTYPE, imm)


class _OwareGrower(GameGrower):
    """The generic grower (:class:`jitsearch.mcts.game.GameGrower`) with Oware's evaluation
    (:func:`jitsearch.kernels.oware_playouts.game_units`) and int16 node boards."""

    def __init__(self, states, tree_keys, *, eval_plies=None, side_weight=DEFAULT_SIDE_WEIGHT, **kw):
        super().__init__(OWARE, states, tree_keys, eval_plies=eval_plies, param=side_weight, units=game_units,
                         node_dtype=NODE_BOARD_DTYPE, label="Oware MCTS trees", **kw)


def analyse_oware(states, *, iterations: int | None = 1000, time: float | None = None, seed: int = 0,
                  tree_keys=None, c: float = math.sqrt(2), formula: str = "ucb1",
                  playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None, leaves: int | None = None,
                  backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, memory_hint: str | None = None,
                  threads: int | None = None, return_trees: bool = False, eval: str | None = None,
                  eval_plies: int | None = None, imm: float = 0.0, side_weight: float | None = None,
                  stop=None):
    """One MCTS tree per Oware position, all grown in one launch (per chunk).

    ``states``: live OwareStates of one board size and rule variant (with
    their records). ``iterations`` per tree, or ``time`` seconds for the
    whole batch; ``playouts`` per leaf; ``leaves`` per step (default 8 on
    cuda, 1 on cpu); ``tree_keys`` (one uint64 per position) fix the
    random streams, else they come from ``seed`` and the position's index.
    ``capacity``: nodes per tree (default: enough for the iterations).
    ``max_bytes``: the trees and the record scratch must fit, checked before
    any allocation. ``threads``: CPU threads (default every core).
    ``eval="capture"``, ``eval_plies``, ``side_weight``, ``imm``: leaf
    evaluations and implicit minimax backups (module docstring). ``stop``
    (a ``threading.Event``): once set, the growth ends after the chunk
    running (a few hundredths of a second) and the trees grown so far are
    returned, ``interrupted`` True (as after Ctrl-C).

    Returns ``positions`` (per position: ``move``, ``children`` = move,
    visits, value; ``value`` the root player's mean reward over all
    iterations; ``nodes``), ``iterations`` (per tree), ``playouts_total``,
    ``seconds``, ``backend``, ``interrupted``, ``trees``, ``playouts``,
    ``leaves``; with ``return_trees``, (that dict, the
    :class:`~jitsearch.kernels.game_mcts.GameTrees` grown).
    """
    states = _checked_states(states)
    opts = check_tree_options(iterations, time, c, formula, "win", playouts, 0, capacity, len(states))
    eval, eval_plies, imm, side_weight = check_oware_eval(eval, eval_plies, imm, side_weight)
    check_stop(stop)
    if len({(s.houses, s.grand_slam_illegal, s.move_limit) for s in states}) > 1:
        raise ValueError("all positions need the same houses, move limit and grand-slam rule")
    from ..kernels.backend import resolve

    resolved = resolve(backend)
    leaves = default_leaves(resolved) if leaves is None else check_int("leaves", leaves, 1, MAX_LEAVES)
    if leaves * opts.playouts > MAX_STEP_PLAYOUTS:
        raise ValueError(f"leaves x playouts = {leaves} x {opts.playouts} is above the limit of "
                         f"{MAX_STEP_PLAYOUTS} playouts per step: lower leaves= or playouts=")
    threads, return_trees, tree_keys = checked_run_options(threads, return_trees, tree_keys, seed, len(states))
    m = states[0].houses
    if opts.capacity is not None:
        capacity = check_int("capacity", opts.capacity, m + 1, MAX_NODES)
    elif opts.iterations is not None:
        capacity = int(min(MAX_NODES, (opts.iterations + leaves) * m + 1))
    else:  # a time budget: as many nodes as max_bytes holds for every tree, at most the default
        capacity = max(m + 1, min(DEFAULT_TIME_NODES,
                                  int(max_bytes) // (2 * len(states) * node_bytes(m, imm > 0))))
    grower = _OwareGrower(states, tree_keys.astype(np.uint64), capacity=capacity, c=opts.c, formula=opts.formula,
                          playouts=opts.playouts, leaves=leaves, backend=resolved, max_bytes=max_bytes,
                          memory_hint=memory_hint, threads=threads, eval_plies=eval_plies,
                          side_weight=side_weight, imm=imm)
    start = _time.perf_counter()
    interrupted = grower.run(opts.iterations, opts.time, stop)
    trees = grower.results()
    seconds = _time.perf_counter() - start
    positions = root_positions(trees, len(states), opts.playouts)
    result = {"positions": positions, "iterations": grower.iterations,
              "playouts_total": grower.iterations * opts.playouts * len(states), "seconds": seconds,
              "backend": resolved, "interrupted": interrupted, "trees": len(states), "playouts": opts.playouts,
              "leaves": leaves}
    return (result, trees) if return_trees else result


def search_oware(state: OwareState, *, iterations: int | None = None, time: float | None = None, seed: int = 0,
                 **options) -> dict:
    """MCTS from one position with one tree: ``iterations`` (default 1000
    when no ``time`` is given) or ``time`` seconds; ``options`` as
    :func:`analyse_oware`. Returns ``move``, ``children``, ``value`` (the
    player to move's mean reward), ``iterations``, ``nodes``, ``seconds``,
    ``backend``, ``interrupted``."""
    if not isinstance(state, OwareState):
        raise ValueError(f"state must be an OwareState, got {type(state).__name__}")
    if iterations is None and time is None:
        iterations = 1000
    r = analyse_oware([state], iterations=iterations, time=time, seed=seed, **options)
    pos = r["positions"][0]
    return {**pos, "iterations": r["iterations"], "seconds": r["seconds"], "backend": r["backend"],
            "interrupted": r["interrupted"], "playouts": r["playouts"], "leaves": r["leaves"]}


# -- tree parallelism: many workers (GPU blocks) on one shared tree per position ---------------------------------

#: Nodes per shared tree for a time budget by default.
DEFAULT_SHARED_TIME_NODES = 1 << 22


class _SharedOwareGrower:
    """Owns T shared trees (:mod:`jitsearch.kernels.game_shared_tree` with Oware's units) and grows them on one
    backend."""

    def __init__(self, states, tree_keys, *, capacity, blocks, c, formula, playouts, backend, max_bytes, threads,
                 eval_plies=None, side_weight=DEFAULT_SIDE_WEIGHT, imm=0.0):
        from ..kernels.tree_step import IMM_BYTES
        from ..kernels.game_shared_tree import NODE_BYTES, SharedTrees

        boards, players, plies, hists, rows, m, gsi, limit = pack_states(states)
        t = len(states)
        self.backend, self.blocks, self.threads = backend, blocks, threads
        self.m, self.gsi, self.limit = m, bool(gsi), int(limit)
        self.rows = _scratch_rows(rows, plies, self.limit)
        self.args = (float(c), FORMULAS[formula], int(playouts))
        self.eval_args = (NO_PLY_CAP if eval_plies is None else int(eval_plies), float(side_weight), float(imm))
        per_scratch = 4 * self.rows * (2 * m + 1)  # one int32 record scratch
        need = t * capacity * (NODE_BYTES + (IMM_BYTES if imm > 0 else 0))
        if backend == "cuda":
            from ..kernels.cuda_game_shared_tree import MAX_SCRATCH_BYTES, threads_for

            if t * blocks * per_scratch > MAX_SCRATCH_BYTES:
                raise ValueError(f"{t * blocks:,} blocks' repetition records need "
                                 f"{t * blocks * per_scratch / 2**20:,.0f} MiB of GPU scratch even with one thread "
                                 f"a block: lower blocks= or the positions")
            self.threads_per_block = threads_for(int(playouts), t * blocks, per_scratch)
            need += t * blocks * self.threads_per_block * per_scratch
        else:
            need += min(t, threads or cpu_threads()) * per_scratch
        check_bytes(need, max_bytes, f"{t:,} shared Oware MCTS trees of {capacity:,} nodes",
                    "lower iterations=, capacity= or blocks= (API: or raise max_bytes)")
        if backend == "cuda":
            from ..kernels.cuda_mcts import free_bytes

            free = free_bytes()
            if need > 0.9 * free:
                raise ValueError(f"{t:,} shared Oware MCTS trees need {need / 2**20:,.0f} MiB of GPU memory, but "
                                 f"{free / 2**20:,.0f} MiB are free: lower capacity=, blocks= or the positions")
        self.trees = SharedTrees(t, capacity, imm > 0)
        self.cfg = OWARE.cfg(states[0])
        self.roots = (kernel_array(boards, np.int32), kernel_array(players, np.int32), kernel_array(hists, np.int32),
                      kernel_array(rows, np.int32), kernel_array(plies, np.int32))
        self.tree_keys = kernel_array(tree_keys, np.uint64)
        self.log_table = log_table_for(1024)
        self.done = 0
        self.device = None
        _warm_shared(backend)
        if backend == "cuda":
            from ..kernels.cuda_game_shared_tree import DeviceSharedTrees

            self.device = DeviceSharedTrees(OWARE, game_units, self.trees, self.roots, self.tree_keys, self.rows,
                                            blocks, self.threads_per_block)

    @property
    def iterations(self) -> int:
        return self.done

    def grow(self, iterations: int) -> None:
        need = self.done + iterations + self.blocks + 2  # visits, in-flight ones included, stay below this
        if self.log_table.shape[0] < need:
            self.log_table = log_table_for(1 << int(need).bit_length())
        c, formula, playouts = self.args
        if self.device is not None:
            self.device.grow(self.log_table, self.cfg, c, formula, playouts, *self.eval_args, self.done, iterations)
        else:
            from ..kernels.game_shared_tree import grow_shared_cpu

            grow_shared_cpu(OWARE, game_units, self.trees, self.roots, self.tree_keys, self.log_table, self.cfg, c,
                            formula, playouts, *self.eval_args, self.rows, self.done, iterations, self.threads)
        self.done += iterations

    def run(self, iterations: int | None, seconds: float | None, stop=None) -> bool:
        return grow_in_chunks(self.grow, lambda: self.done, iterations, seconds, max(1, 2 * self.blocks), stop)

    def results(self):
        if self.device is not None:
            self.device.copy_back(self.trees)
        return self.trees


_WARMED: set = set()


def _warm_shared(backend: str) -> None:
    """Compile (or load) the shared-tree kernel of ``backend`` once per process on Oware(1,1)."""
    key = ("shared", backend)
    if key in _WARMED:
        return
    _WARMED.add(key)
    from ..kernels.game_shared_tree import SharedTrees

    s = OwareState.initial(1, 1)
    trees = SharedTrees(1, 4)
    roots = (np.array(s.board, np.int32)[None, :], np.zeros(1, np.int32), np.array(s.history, np.int32)[None, :, :],
             np.ones(1, np.int32), np.zeros(1, np.int32))
    keys = np.zeros(1, np.uint64)
    if backend == "cuda":
        from ..kernels.cuda_game_shared_tree import DeviceSharedTrees

        DeviceSharedTrees(OWARE, game_units, trees, roots, keys, 8, 1, 1).grow(log_table_for(16), OWARE.cfg(s), 1.0,
                                                                               0, 1, NO_PLY_CAP, 0.25, 0.0, 0, 1)
    else:
        from ..kernels.game_shared_tree import grow_shared_cpu

        grow_shared_cpu(OWARE, game_units, trees, roots, keys, log_table_for(16), OWARE.cfg(s), 1.0, 0, 1, NO_PLY_CAP,
                        0.25, 0.0, 8, 0, 1, 1)


def tree_parallel_oware(states, *, blocks: int | None = None, iterations: int | None = 1000,
                        time: float | None = None, seed: int = 0, tree_keys=None, c: float = math.sqrt(2),
                        formula: str = "ucb1", playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None,
                        backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, threads: int | None = None,
                        return_trees: bool = False, eval: str | None = None, eval_plies: int | None = None,
                        imm: float = 0.0, side_weight: float | None = None, stop=None):
    """Tree-parallel MCTS: one shared tree per position, grown by ``blocks``
    workers at once on the GPU (default: 8 per SM over all trees), by one
    worker per tree on the CPU (the twin: with ``blocks=1`` on the GPU the
    trees are bit-identical). ``iterations`` per tree (all workers
    together) or ``time``; other options and the result as
    :func:`analyse_oware` (``leaves`` is 1; ``blocks`` is added; ``eval``,
    ``eval_plies``, ``side_weight``, ``imm`` and ``stop`` as there)."""
    from .config import MAX_BLOCKS

    states = _checked_states(states)
    opts = check_tree_options(iterations, time, c, formula, "win", playouts, 0, capacity, len(states))
    eval, eval_plies, imm, side_weight = check_oware_eval(eval, eval_plies, imm, side_weight)
    check_stop(stop)
    if len({(s.houses, s.grand_slam_illegal, s.move_limit) for s in states}) > 1:
        raise ValueError("all positions need the same houses, move limit and grand-slam rule")
    from ..kernels.backend import resolve

    resolved = resolve(backend)
    if blocks is not None:
        blocks = check_int("blocks", blocks, 1, MAX_BLOCKS)
        if resolved == "cpu" and blocks != 1:
            raise ValueError("blocks= is the GPU's workers per tree; the CPU twin grows each tree with one worker "
                             "(blocks=1)")
    elif resolved == "cuda":
        from ..kernels.cuda_game_shared_tree import default_blocks_per_tree

        blocks = default_blocks_per_tree(len(states))
    else:
        blocks = 1
    if len(states) * blocks > MAX_BLOCKS:
        raise ValueError(f"{len(states)} trees x {blocks} blocks is above the limit of {MAX_BLOCKS:,} blocks a launch")
    from ..kernels.cuda_shared_tree import MAX_PLAYOUTS as MAX_SHARED_PLAYOUTS

    if opts.playouts > MAX_SHARED_PLAYOUTS:
        raise ValueError(f"playouts must be at most {MAX_SHARED_PLAYOUTS} in a shared tree, got {opts.playouts}")
    threads, return_trees, tree_keys = checked_run_options(threads, return_trees, tree_keys, seed, len(states))
    m = states[0].houses
    if opts.capacity is not None:
        capacity = check_int("capacity", opts.capacity, m + 1, MAX_NODES)
    elif opts.iterations is not None:
        capacity = int(min(MAX_NODES, (opts.iterations + blocks + 1) * m + 1))
    else:
        from ..kernels.game_shared_tree import NODE_BYTES

        capacity = max(m + 1, min(DEFAULT_SHARED_TIME_NODES, int(max_bytes) // (2 * len(states) * NODE_BYTES)))
    grower = _SharedOwareGrower(states, tree_keys.astype(np.uint64), capacity=capacity, blocks=blocks, c=opts.c,
                                formula=opts.formula, playouts=opts.playouts, backend=resolved, max_bytes=max_bytes,
                                threads=threads, eval_plies=eval_plies, side_weight=side_weight, imm=imm)
    start = _time.perf_counter()
    interrupted = grower.run(opts.iterations, opts.time, stop)
    trees = grower.results()
    seconds = _time.perf_counter() - start
    scale = opts.playouts * REWARD_UNITS
    positions = []
    for g in range(len(states)):
        kids = [{"move": mv, "visits": n, "value": v / (n * scale) if n else None}
                for mv, n, v in trees.root_children(g)]
        base = g * trees.capacity
        root_n, root_v = int(trees.visits[base]), int(trees.value[base])
        positions.append({"move": most_visited(kids), "children": kids,
                          "value": (root_n * scale - root_v) / (root_n * scale) if root_n else None,
                          "nodes": int(min(trees.size[g], trees.capacity))})
    result = {"positions": positions, "iterations": grower.iterations,
              "playouts_total": grower.iterations * opts.playouts * len(states), "seconds": seconds,
              "backend": resolved, "interrupted": interrupted, "trees": len(states), "playouts": opts.playouts,
              "leaves": 1, "blocks": blocks}
    return (result, trees) if return_trees else result


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of Oware's multi-tree MCTS kernel (the generic one with Oware's units and int16 node
    boards) for compute capability ``cc`` without a device (needs NVVM only)."""
    from ..kernels.cuda_game_mcts import compile_ptx as game_ptx

    return game_ptx(OWARE, cc, units=game_units, node_dtype=NODE_BOARD_DTYPE)


def compile_shared_ptx(cc=(9, 0)) -> str:
    """PTX of Oware's shared-tree MCTS kernel (the generic one with Oware's units and int32 records)
    for compute capability ``cc`` without a device (needs NVVM only)."""
    from ..kernels.cuda_game_shared_tree import compile_ptx as shared_ptx

    return shared_ptx(OWARE, cc, units=game_units, param=0.25, hist_dtype=np.int32)

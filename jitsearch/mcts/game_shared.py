"""Tree-parallel MCTS of any game of the protocol: one shared tree per position
(:mod:`jitsearch.kernels.game_shared_tree`), grown by ``blocks`` workers at once on the GPU
(:mod:`jitsearch.kernels.cuda_game_shared_tree`) or by one worker per tree on the CPU (the
twin: with ``blocks=1`` on the GPU the trees are bit-identical); the evaluation options as
:mod:`jitsearch.mcts.game`.
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from .._checks import check_int, kernel_array
from ..games import game_of, get as get_game
from ..kernels.game_mcts import scratch_rows
from ..kernels.game_shared_tree import MAX_PLAYOUTS, NODE_BYTES, SharedTrees, grow_shared_cpu
from ..kernels.tree_step import IMM_BYTES, REWARD_UNITS, log_table_for
from ..kernels.sentinels import FORMULAS, NO_PLY_CAP
from .._threads import cpu_threads
from ..stop import check_stop
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .config import MAX_BLOCKS, MAX_TREES
from .game import (DEFAULT_PLAYOUTS, check_variant, checked_options, checked_positions,
                   checked_run_options, checked_states, grow_in_chunks, kernel_param, most_visited,
                   tree_keys_for)

#: Nodes per shared tree at most (int32 indices within a tree).
MAX_NODES = (1 << 31) - 1
#: Nodes per shared tree for a time budget by default (at most what max_bytes holds): 32 Mi, a
#: minute of a GPU's iterations at Kalah(6,4).
DEFAULT_SHARED_TIME_NODES = 1 << 25


class SharedGrower:
    """Owns T shared trees of ``game`` (:class:`~jitsearch.kernels.game_shared_tree.SharedTrees`)
    and grows them on one backend, ``blocks`` workers a tree on the GPU, one on the CPU."""

    def __init__(self, game, states, tree_keys, *, capacity, blocks, c, formula, playouts, backend, max_bytes,
                 threads, eval_plies=None, param=1.0, imm=0.0, warm=True):
        packed = game.pack(list(states))
        t = len(states)
        self.game, self.backend, self.blocks, self.threads = game, backend, int(blocks), threads
        self.cfg = packed.cfg
        self.rows = scratch_rows(game, packed.cfg, packed.rows, packed.plies)
        self.args = (float(c), FORMULAS[formula], int(playouts))
        param = param if isinstance(param, np.integer) else float(param)  # the units' parameter keeps its type
        self.eval_args = (NO_PLY_CAP if eval_plies is None else int(eval_plies), param, float(imm))
        per_scratch = self.rows * packed.hists.shape[2] * packed.hists.dtype.itemsize
        need = t * capacity * (NODE_BYTES + (IMM_BYTES if imm > 0 else 0))
        threads_per_block = 1
        if backend == "cuda":
            from ..kernels.cuda_game_shared_tree import MAX_SCRATCH_BYTES, threads_for

            if t * blocks * per_scratch > MAX_SCRATCH_BYTES:
                raise ValueError(f"{t * blocks:,} blocks' records need {t * blocks * per_scratch / 2**20:,.0f} MiB "
                                 f"of GPU scratch even with one thread a block: lower blocks= or the positions")
            threads_per_block = threads_for(int(playouts), t * blocks, per_scratch)
            need += t * blocks * threads_per_block * per_scratch
        else:
            need += min(t, threads or cpu_threads()) * per_scratch
        check_bytes(need, max_bytes, f"{t:,} shared {game.name} MCTS trees of {capacity:,} nodes",
                    "lower iterations=, capacity= or blocks= (API: or raise max_bytes)")
        if backend == "cuda":
            from ..kernels.cuda_game_shared_tree import free_bytes

            free = free_bytes()
            if need > 0.9 * free:
                raise ValueError(f"{t:,} shared {game.name} MCTS trees need {need / 2**20:,.0f} MiB of GPU memory, "
                                 f"but {free / 2**20:,.0f} MiB are free: lower capacity=, blocks= or the positions")
        self.shape = (t, capacity, imm > 0)
        self.trees = SharedTrees(*self.shape) if backend == "cpu" else None  # on the GPU: on request
        self.roots = (packed.boards, kernel_array(packed.players, np.int32), packed.hists,
                      kernel_array(packed.rows, np.int32), kernel_array(packed.plies, np.int32))
        self.tree_keys = kernel_array(tree_keys, np.uint64)
        self.log_table = log_table_for(1024)
        self.done = 0
        self.device = None
        if warm:
            self._warm(states[0])
        if backend == "cuda":
            from ..kernels.cuda_game_shared_tree import DeviceSharedTrees

            self.device = DeviceSharedTrees(game, *self.shape, self.roots, self.tree_keys, self.rows, blocks,
                                            threads_per_block)

    def _warm(self, state) -> None:
        """Compile (or load) the backend's kernel once per process for this game (one iteration
        of one small tree), so that no time budget pays for the JIT."""
        key = (self.game, self.backend, self.roots[0].dtype, self.roots[2].dtype,
               self.cfg if self.backend == "cuda" else None)  # the GPU's fast path is compiled per variant
        if key in _WARMED:
            return
        _WARMED.add(key)
        small = SharedGrower(self.game, [state], np.zeros(1, np.uint64), capacity=self.game.max_moves + 1, blocks=1,
                             c=1.0, formula="ucb1", playouts=1, backend=self.backend, max_bytes=DEFAULT_MAX_BYTES,
                             threads=1, eval_plies=0, param=self.eval_args[1], warm=False)
        small.grow(1)

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
            grow_shared_cpu(self.game, self.trees, self.roots, self.tree_keys, self.log_table, self.cfg, c,
                            formula, playouts, *self.eval_args, self.rows, self.done, iterations, self.threads)
        self.done += iterations

    def run(self, iterations: int | None, seconds: float | None, stop=None) -> bool:
        return grow_in_chunks(self.grow, lambda: self.done, iterations, seconds, max(1, 2 * self.blocks), stop)

    def results(self, full: bool = True):
        """The trees: every node (``full``: host SharedTrees), else on the GPU the device trees,
        whose roots' statistics are read on demand (``root_children``, ``root``, ``sizes``)."""
        if self.device is not None:
            if not full:
                return self.device
            if self.trees is None:
                self.trees = SharedTrees(*self.shape)
            self.device.copy_back(self.trees)
        return self.trees


_WARMED: set = set()


def tree_parallel_game(game, states, *, blocks: int | None = None, iterations: int | None = 1000,
                       time: float | None = None, seed: int = 0, tree_keys=None, c: float = math.sqrt(2),
                       formula: str = "ucb1", playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None,
                       backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, threads: int | None = None,
                       return_trees: bool = False, eval: str | None = None, eval_plies: int | None = None,
                       imm: float = 0.0, eval_param: float | None = None, reward: str = "win",
                       playout_depth: int = 0, stop=None):
    """Tree-parallel MCTS: one shared tree per position of ``game`` (a registry name or a Game),
    grown by ``blocks`` workers at once on the GPU (default: 8 per SM over all trees), by one
    worker per tree on the CPU (the twin: with ``blocks=1`` on the GPU the trees are
    bit-identical). ``iterations`` per tree (all workers together) or ``time``; other options
    and the result as :func:`jitsearch.mcts.game.analyse_game` (``leaves`` is 1; ``blocks`` is
    added)."""
    from ..kernels.backend import resolve

    game = get_game(game)
    states = checked_states(game, states)
    opts, eval_param = checked_options(game, iterations, time, c, formula, reward, playouts, playout_depth, capacity,
                                       len(states), eval, eval_plies, imm, eval_param)
    check_stop(stop)
    check_variant(game, states)
    resolved = resolve(backend)
    if blocks is not None:
        blocks = check_int("blocks", blocks, 1, MAX_BLOCKS)
    threads, return_trees, tree_keys = checked_run_options(threads, return_trees, tree_keys, seed, len(states))
    result, trees = shared_checked(game, states, tree_keys, opts, blocks, resolved, max_bytes=max_bytes,
                                   threads=threads, eval_param=eval_param, stop=stop, full=return_trees)
    return (result, trees) if return_trees else result


def shared_checked(game, states, tree_keys, opts, blocks, resolved, *, max_bytes=DEFAULT_MAX_BYTES, threads=None,
                   eval_param=None, stop=None, full=False) -> tuple:
    """:func:`tree_parallel_game` with its options checked (``opts`` a :class:`~.config.TreeOptions`,
    one tree per position; ``blocks`` in 1..MAX_BLOCKS or None) and the backend resolved; the
    checks left depend on the launch. Returns (result, trees: every node with ``full``, else
    what reads the roots, :meth:`SharedGrower.results`)."""
    if blocks is None:
        if resolved == "cuda":
            from ..kernels.cuda_game_shared_tree import default_blocks_per_tree

            blocks = default_blocks_per_tree(len(states))
        else:
            blocks = 1
    elif resolved == "cpu" and blocks != 1:
        raise ValueError("blocks= (workers per shared tree) above 1 needs the GPU: the CPU twin grows each "
                         "tree with one worker (use trees= for one tree per core)")
    if len(states) * blocks > MAX_BLOCKS:
        raise ValueError(f"{len(states):,} trees x {blocks} blocks is above the limit of {MAX_BLOCKS:,} blocks per "
                         f"launch: lower blocks= or search fewer positions at once")
    if opts.playouts > MAX_PLAYOUTS:
        raise ValueError(f"playouts must be at most {MAX_PLAYOUTS} in a shared tree, got {opts.playouts}")
    param, max_plies = kernel_param(game, opts, eval_param)
    t, m = len(states), game.sizes(game.cfg(states[0])).moves
    if opts.capacity is not None:
        capacity = check_int("capacity", opts.capacity, m + 1, MAX_NODES)
    elif opts.iterations is not None:
        capacity = int(min(MAX_NODES, (opts.iterations + blocks + 1) * m + 1))
    else:
        capacity = max(m + 1, min(DEFAULT_SHARED_TIME_NODES, int(max_bytes) // (2 * t * NODE_BYTES)))
    grower = SharedGrower(game, states, np.asarray(tree_keys).astype(np.uint64), capacity=capacity, blocks=blocks,
                          c=opts.c, formula=opts.formula, playouts=opts.playouts, backend=resolved,
                          max_bytes=max_bytes, threads=threads, eval_plies=max_plies, param=param, imm=opts.imm)
    start = _time.perf_counter()
    interrupted = grower.run(opts.iterations, opts.time, stop)
    trees = grower.results(full)
    seconds = _time.perf_counter() - start
    scale = opts.playouts * REWARD_UNITS
    positions = []
    sizes = trees.sizes()
    for g in range(t):
        kids = [{"move": mv, "visits": n, "value": v / (n * scale) if n else None}
                for mv, n, v in trees.root_children(g)]
        root_n, root_v = trees.root(g)
        positions.append({"move": most_visited(kids), "children": kids,
                          "value": (root_n * scale - root_v) / (root_n * scale) if root_n else None,
                          "nodes": int(min(sizes[g], capacity))})
    result = {"positions": positions, "iterations": grower.iterations,
              "playouts_total": grower.iterations * opts.playouts * t, "seconds": seconds, "backend": resolved,
              "interrupted": interrupted, "trees": t, "playouts": opts.playouts, "leaves": 1, "blocks": blocks,
              "game": game.name}
    return result, trees


# -- the searches of any state (the game looked up from it): positions at once, trees summed ------

def search_many_shared(states, seeds, *, trees: int = 1, blocks: int | None = None, iterations: int | None = None,
                       time: float | None = None, c: float = math.sqrt(2), formula: str = "ucb1",
                       reward: str = "win", playouts: int = 32, playout_depth: int = 0,
                       capacity: int | None = None, backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES,
                       eval: str | None = None, eval_plies: int | None = None, imm: float = 0.0,
                       eval_param: float | None = None) -> list[dict]:
    """Tree-parallel MCTS of several positions of one game in one launch: position p gets
    ``trees`` shared trees (keys from ``seeds[p]``), each grown by ``blocks`` workers (default
    8 per SM over all trees on a GPU, 1 on the CPU) for ``iterations`` per tree or ``time``
    seconds; the trees' root statistics are summed per position and the move with the most
    visits is played. Returns one result per position: ``move``, ``children`` (move, visits,
    value = the mover's mean reward), ``iterations``, ``simulations``, ``nodes``, ``seconds``,
    ``backend``, ``trees``, ``blocks``, ``parallel``, ``interrupted``. The evaluation options as
    :func:`jitsearch.mcts.game.analyse_game`."""
    from ..kernels.backend import resolve

    game, states, seeds = checked_positions(states, seeds)
    resolved = resolve(backend)
    opts, eval_param = checked_options(game, iterations, time, c, formula, reward, playouts, playout_depth, capacity,
                                       trees, eval, eval_plies, imm, eval_param)
    if blocks is not None:
        blocks = check_int("blocks", blocks, 1, MAX_BLOCKS)
    return search_shared_checked(states, seeds, opts, blocks, resolved, max_bytes=max_bytes, eval_param=eval_param)


def search_shared_checked(states: list, seeds: list, opts, blocks: int | None, resolved: str, *,
                          max_bytes: int = DEFAULT_MAX_BYTES, stop=None, eval_param=None) -> list[dict]:
    """:func:`search_many_shared` with its options already checked (``opts``, ``blocks`` in
    1..MAX_BLOCKS or None) and the backend resolved: what :func:`jitsearch.mcts.search.mcts_search`
    calls after validating its :class:`~jitsearch.mcts.config.MCTSConfig` once. ``stop`` (a
    ``threading.Event``) ends the growth between chunks."""
    trees, playouts = opts.trees, opts.playouts
    if trees * len(states) > MAX_TREES:
        raise ValueError(f"{len(states)} positions x {trees} trees is above the limit of {MAX_TREES:,} trees per "
                         f"launch")
    keys = np.concatenate([tree_keys_for(x, trees) for x in seeds])
    r, grown = shared_checked(game_of(states[0]), [s for s in states for _ in range(trees)], keys, opts, blocks,
                              resolved, max_bytes=max_bytes, eval_param=eval_param, stop=stop)
    scale = playouts * REWARD_UNITS
    out = []
    for p, state in enumerate(states):
        visits = {mv: 0 for mv in state.legal_moves()}
        value = {mv: 0 for mv in visits}
        for g in range(p * trees, (p + 1) * trees):  # integer units summed over the trees, divided once
            for mv, n, v in grown.root_children(g):
                visits[mv] += n
                value[mv] += v
        children = [{"move": mv, "visits": visits[mv],
                     "value": value[mv] / (visits[mv] * scale) if visits[mv] else None, "proven": None}
                    for mv in visits]
        nodes = sum(pos["nodes"] for pos in r["positions"][p * trees:(p + 1) * trees])
        out.append({"move": most_visited(children), "children": children, "iterations": r["iterations"] * trees,
                    "simulations": r["iterations"] * trees * playouts, "nodes": nodes, "seconds": r["seconds"],
                    "backend": resolved, "trees": trees, "blocks": r["blocks"], "parallel": "tree",
                    "interrupted": r["interrupted"], "proven": None})
    return out


def tree_parallel_search(state, *, seed: int = 0, **options) -> dict:
    """Tree-parallel MCTS from one position of any game (:func:`search_many_shared` of one)."""
    game_of(state)
    return search_many_shared([state], [seed], **options)[0]

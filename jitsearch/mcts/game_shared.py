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
from ..games import get as get_game
from ..kernels.game_mcts import scratch_rows
from ..kernels.game_shared_tree import NODE_BYTES, SharedTrees, grow_shared_cpu
from ..kernels.tree_step import IMM_BYTES, REWARD_UNITS, log_table_for
from ..kernels.sentinels import FORMULAS, NO_PLY_CAP
from .._threads import cpu_threads
from ..stop import check_stop
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .config import MAX_BLOCKS, check_tree_options
from .game import DEFAULT_PLAYOUTS, check_eval, checked_run_options, checked_states
from .game import MAX_NODES, grow_in_chunks, most_visited

#: Nodes per shared tree for a time budget by default.
DEFAULT_SHARED_TIME_NODES = 1 << 22


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
        self.eval_args = (NO_PLY_CAP if eval_plies is None else int(eval_plies), float(param), float(imm))
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
            from ..kernels.cuda_game_mcts import free_bytes

            free = free_bytes()
            if need > 0.9 * free:
                raise ValueError(f"{t:,} shared {game.name} MCTS trees need {need / 2**20:,.0f} MiB of GPU memory, "
                                 f"but {free / 2**20:,.0f} MiB are free: lower capacity=, blocks= or the positions")
        self.trees = SharedTrees(t, capacity, imm > 0)
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

            self.device = DeviceSharedTrees(game, None, self.trees, self.roots, self.tree_keys, self.rows, blocks,
                                            threads_per_block)

    def _warm(self, state) -> None:
        """Compile (or load) the backend's kernel once per process for this game (one iteration
        of one small tree), so that no time budget pays for the JIT."""
        key = (self.game, self.backend, self.roots[0].dtype, self.roots[2].dtype)
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
            grow_shared_cpu(self.game, None, self.trees, self.roots, self.tree_keys, self.log_table, self.cfg, c,
                            formula, playouts, *self.eval_args, self.rows, self.done, iterations, self.threads)
        self.done += iterations

    def run(self, iterations: int | None, seconds: float | None, stop=None) -> bool:
        return grow_in_chunks(self.grow, lambda: self.done, iterations, seconds, max(1, 2 * self.blocks), stop)

    def results(self):
        if self.device is not None:
            self.device.copy_back(self.trees)
        return self.trees


_WARMED: set = set()


def tree_parallel_game(game, states, *, blocks: int | None = None, iterations: int | None = 1000,
                       time: float | None = None, seed: int = 0, tree_keys=None, c: float = math.sqrt(2),
                       formula: str = "ucb1", playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None,
                       backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, threads: int | None = None,
                       return_trees: bool = False, eval: str | None = None, eval_plies: int | None = None,
                       imm: float = 0.0, eval_param: float | None = None, stop=None):
    """Tree-parallel MCTS: one shared tree per position of ``game`` (a registry name or a Game),
    grown by ``blocks`` workers at once on the GPU (default: 8 per SM over all trees), by one
    worker per tree on the CPU (the twin: with ``blocks=1`` on the GPU the trees are
    bit-identical). ``iterations`` per tree (all workers together) or ``time``; other options
    and the result as :func:`jitsearch.mcts.game.analyse_game` (``leaves`` is 1; ``blocks`` is
    added)."""
    from ..kernels.backend import resolve
    from ..kernels.cuda_shared_tree import MAX_PLAYOUTS

    game = get_game(game)
    states = checked_states(game, states)
    opts = check_tree_options(iterations, time, c, formula, "win", playouts, 0, capacity, len(states))
    eval, eval_plies, imm, eval_param = check_eval(game, eval, eval_plies, imm, eval_param)
    check_stop(stop)
    cfg = game.cfg(states[0])
    if any(game.cfg(s) != cfg for s in states):
        game.pack(states)  # its one-line error names the options that differ
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
    if opts.playouts > MAX_PLAYOUTS:
        raise ValueError(f"playouts must be at most {MAX_PLAYOUTS} in a shared tree, got {opts.playouts}")
    threads, return_trees, tree_keys = checked_run_options(threads, return_trees, tree_keys, seed, len(states))
    t, m = len(states), game.sizes(cfg).moves
    if opts.capacity is not None:
        capacity = check_int("capacity", opts.capacity, m + 1, MAX_NODES)
    elif opts.iterations is not None:
        capacity = int(min(MAX_NODES, (opts.iterations + blocks + 1) * m + 1))
    else:
        capacity = max(m + 1, min(DEFAULT_SHARED_TIME_NODES, int(max_bytes) // (2 * t * NODE_BYTES)))
    grower = SharedGrower(game, states, tree_keys.astype(np.uint64), capacity=capacity, blocks=blocks, c=opts.c,
                          formula=opts.formula, playouts=opts.playouts, backend=resolved, max_bytes=max_bytes,
                          threads=threads, eval_plies=eval_plies, param=eval_param, imm=imm)
    start = _time.perf_counter()
    interrupted = grower.run(opts.iterations, opts.time, stop)
    trees = grower.results()
    seconds = _time.perf_counter() - start
    scale = opts.playouts * REWARD_UNITS
    positions = []
    for g in range(t):
        kids = [{"move": mv, "visits": n, "value": v / (n * scale) if n else None}
                for mv, n, v in trees.root_children(g)]
        base = g * capacity
        root_n, root_v = int(trees.visits[base]), int(trees.value[base])
        positions.append({"move": most_visited(kids), "children": kids,
                          "value": (root_n * scale - root_v) / (root_n * scale) if root_n else None,
                          "nodes": int(min(trees.size[g], capacity))})
    result = {"positions": positions, "iterations": grower.iterations,
              "playouts_total": grower.iterations * opts.playouts * t, "seconds": seconds, "backend": resolved,
              "interrupted": interrupted, "trees": t, "playouts": opts.playouts, "leaves": 1, "blocks": blocks,
              "game": game.name}
    return (result, trees) if return_trees else result

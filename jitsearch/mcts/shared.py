"""Tree-parallel MCTS: one tree (or a few) grown by many workers at once, on
the GPU (many thread blocks per tree, :mod:`jitsearch.kernels.cuda_shared_tree`)
or, one worker per tree, on the CPU (the twin, for tests and reference).

This is ``mcts:...,backend=cuda,parallel=tree``. Against the block-parallel
search of :mod:`jitsearch.mcts.multi` (many small independent trees, their
roots summed) it puts the whole GPU on one deep tree, which is what measured
stronger at equal time per move (``bench/results/gpu_mcts/``).

Conventions as in :mod:`jitsearch.mcts.search`: the root's player to move
chooses; a child's ``value`` is the root player's mean reward (win 1, draw
1/2, loss 0, the HMCTS heuristic, or an evaluation,
:mod:`jitsearch.kernels.evaluation`) over the playouts through it; an
*iteration* descends once and evaluates one leaf with ``playouts`` playouts;
the root's visits equal the iterations done. With ``blocks`` > 1 the result
depends on the GPU's timing (the same seed gives statistically equal, not
identical, trees); with one block per tree it equals the CPU twin bit for bit.

Budgets: ``iterations`` per tree, or ``time`` in seconds: the host launches
the kernel in chunks of iterations sized from the measured rate (about 20 ms
each after a short first one) until the time is spent; Ctrl-C between chunks,
or ``stop`` (a ``threading.Event`` set from another thread, read between
chunks), returns what the trees hold (``interrupted``).
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from ..games.kalah import KalahState
from .._checks import check_int, check_seed, kernel_array
from ..kernels.multi_mcts import REWARD_UNITS, log_table_for
from ..kernels.shared_tree import IMM_BYTES, NODE_BYTES, SharedTrees, grow_shared_cpu
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes, format_bytes
from ..kernels.sentinels import FORMULAS
from .config import MAX_BLOCKS, MAX_TREES, TreeOptions, check_tree_options
from .game import grow_in_chunks, most_visited, tree_keys_for

#: Nodes per tree at most (int32 indices), and per tree for a time budget by default.
MAX_NODES = (1 << 31) - 1
DEFAULT_TIME_NODES = 1 << 25


def _device_log_table(size: int):
    """ln k for k = 0..size-1 on the GPU, kept for the process and grown by doubling."""
    global _LOG_TABLE
    if _LOG_TABLE is None or _LOG_TABLE[0] < size:
        from numba import cuda

        n = 1 << max(20, int(size - 1).bit_length())
        _LOG_TABLE = (n, cuda.to_device(log_table_for(n - 1)))
    return _LOG_TABLE[1]


_LOG_TABLE = None


class _SharedGrower:
    """Owns T shared trees and grows them on one backend, in chunks."""

    def __init__(self, boards, players, tree_keys, houses, empty_capture, *, capacity, blocks, opts: TreeOptions,
                 backend, max_bytes):
        self.backend = backend
        t = boards.shape[0]
        with_imm = opts.imm > 0.0
        need = t * capacity * _node_bytes(with_imm)
        check_bytes(need, max_bytes, f"{t:,} shared MCTS trees of {capacity:,} nodes",
                    "lower capacity= or iterations= (API: or raise max_bytes)")
        self.trees = SharedTrees(t, capacity, boards, players, imm=with_imm) if backend == "cpu" else None
        self.num_trees = t
        self.capacity = capacity
        self.blocks = blocks
        self.m = houses
        self.tree_keys = kernel_array(tree_keys, np.uint64)
        self.totals = boards.astype(np.int64).sum(axis=1)
        reward_kind, max_plies = opts.kernel_reward()
        self.args = (float(opts.c), FORMULAS[opts.formula], reward_kind, int(opts.playouts), bool(empty_capture),
                     int(max_plies), float(opts.imm))
        self.done = 0
        self.device = None
        if backend == "cuda":
            from ..kernels.cuda_shared_tree import free_bytes, pooled_trees

            free = free_bytes()
            if need > 0.9 * free:
                raise ValueError(f"{t:,} shared MCTS trees of {capacity:,} nodes need {format_bytes(need)} of GPU "
                                 f"memory, but {format_bytes(free)} are free: lower capacity= or the time budget")
            self.device = pooled_trees(t, capacity, with_imm)
            self.device.reset(boards, players, self.tree_keys, self.totals)
            self.log_table = None
        else:
            self.log_table = log_table_for(1024)
        _warm(backend, houses)

    def grow(self, iterations: int):
        c, formula, reward, playouts, empty_capture, max_plies, alpha = self.args
        # a node's visits (in-flight ones included) never exceed the iterations plus the blocks in flight
        need = self.done + iterations + self.blocks + 2
        if self.device is not None:
            self.device.log_table = _device_log_table(need)
            self.device.grow(self.m, c, formula, reward, playouts, empty_capture, max_plies, alpha, self.blocks,
                             self.done, iterations)
        else:
            if self.log_table.shape[0] < need:
                self.log_table = log_table_for(1 << int(need).bit_length())
            tr = self.trees
            grow_shared_cpu(*tr.arrays(), tr.root_boards, tr.root_players, self.tree_keys, self.totals,
                            self.log_table, self.capacity, self.m, c, formula, reward, playouts, empty_capture,
                            max_plies, alpha, self.done, iterations)
        self.done += iterations

    def run(self, iterations: int | None, seconds: float | None, stop=None) -> bool:
        """Grow until ``iterations`` per tree or ``seconds`` are spent; True if Ctrl-C or ``stop`` stopped it."""
        # the first chunk: a few iterations per block, to measure the rate
        return grow_in_chunks(self.grow, lambda: self.done, iterations, seconds, max(1, 2 * self.blocks), stop)

    def root_children(self, g: int):
        if self.device is not None:
            return self.device.root_children(g)
        return self.trees.root_children(g)

    def sizes(self) -> np.ndarray:
        sizes = self.device.sizes() if self.device is not None else self.trees.size
        return np.minimum(sizes, self.capacity)


_WARMED: set = set()


def _warm(backend: str, houses: int) -> None:
    """Compile (or load) the kernel once per process on a tiny tree, so that
    no search's time budget pays for the JIT."""
    if backend in _WARMED:
        return
    _WARMED.add(backend)
    s = KalahState.initial(houses, 1)
    boards = np.asarray(s.board, dtype=np.int32)[None, :]
    players = np.zeros(1, dtype=np.int32)
    keys = np.zeros(1, dtype=np.uint64)
    totals = boards.astype(np.int64).sum(axis=1)
    cap = 4 * houses + 1
    if backend == "cuda":
        from ..kernels.cuda_shared_tree import DeviceSharedTrees

        d = DeviceSharedTrees(1, cap)
        d.reset(boards, players, keys, totals)
        d.log_table = _device_log_table(16)
        d.grow(houses, 1.0, 0, 0, 1, False, 1 << 30, 0.0, 1, 0, 2)
    else:
        tr = SharedTrees(1, cap, boards, players)
        grow_shared_cpu(*tr.arrays(), tr.root_boards, tr.root_players, keys, totals, log_table_for(16), cap, houses,
                        1.0, 0, 0, 1, False, 1 << 30, 0.0, 0, 2)


def _node_bytes(imm: bool) -> int:
    return NODE_BYTES + (IMM_BYTES if imm else 0)


def _capacity(houses: int, iterations: int | None, capacity: int | None, trees: int, blocks: int,
              max_bytes: int, imm: bool = False) -> int:
    if capacity is not None:
        return check_int("capacity", capacity, houses + 1, MAX_NODES)
    if iterations is not None:
        return int(min(MAX_NODES, (iterations + blocks) * houses + 1))
    return int(max(houses + 1, min(DEFAULT_TIME_NODES, int(max_bytes) // (trees * _node_bytes(imm)))))


def search_many_shared(states, seeds, *, trees: int = 1, blocks: int | None = None, iterations: int | None = None,
                       time: float | None = None, c: float = math.sqrt(2), formula: str = "ucb1",
                       reward: str = "win", playouts: int = 32, playout_depth: int = 0,
                       capacity: int | None = None, backend: str = "auto",
                       max_bytes: int = DEFAULT_MAX_BYTES, eval: str | None = None, eval_plies: int | None = None,
                       imm: float = 0.0) -> list[dict]:
    """Tree-parallel MCTS of several positions in one launch: position p gets
    ``trees`` shared trees (keys from ``seeds[p]``), each grown by ``blocks``
    workers (thread blocks; default 8 per SM shared by all trees on a GPU, 1
    on the CPU) for ``iterations`` iterations per tree or ``time`` seconds.
    The trees' root statistics are summed per position; the move with the
    most visits is played. Returns one result per position: ``move``,
    ``children`` (move, visits, value = the mover's mean reward), and
    ``iterations``, ``simulations``, ``nodes``, ``seconds``, ``backend``,
    ``trees``, ``blocks``, ``interrupted``. ``eval``, ``eval_plies`` and
    ``imm``: leaf evaluation and implicit minimax backups, as in
    :func:`jitsearch.mcts.search.mcts_search`."""
    from ..kernels.backend import resolve

    states = list(states)
    seeds = [check_seed("seed", x) for x in seeds]
    if not states or len(seeds) != len(states):
        raise ValueError("give one seed per position (and at least one position)")
    for s in states:
        if not isinstance(s, KalahState):
            raise ValueError(f"state must be a KalahState, got {type(s).__name__}")
        if s.is_over:
            raise ValueError("the game is over: no move to search")
    m, ec = states[0].houses, states[0].empty_capture
    if any(s.houses != m or s.empty_capture != ec for s in states):
        raise ValueError("all positions must have the same number of houses and rule variant")
    resolved = resolve(backend)
    opts = check_tree_options(iterations, time, c, formula, reward, playouts, playout_depth, capacity, trees, eval,
                              eval_plies, imm)
    if blocks is not None:
        blocks = check_int("blocks", blocks, 1, MAX_BLOCKS)
    return search_shared_checked(states, seeds, opts, blocks, resolved, max_bytes=max_bytes)


def search_shared_checked(states: list, seeds: list, opts: TreeOptions, blocks: int | None, resolved: str, *,
                          max_bytes: int = DEFAULT_MAX_BYTES, stop=None) -> list[dict]:
    """:func:`search_many_shared` with its options already checked (``opts``,
    ``blocks`` in 1..MAX_BLOCKS or None) and the backend resolved: what
    :func:`jitsearch.mcts.search.mcts_search` calls after validating its
    :class:`~jitsearch.mcts.config.MCTSConfig` once. The checks left depend
    on the launch (positions x trees x blocks, the board's node limit).
    ``stop`` (a ``threading.Event``) ends the growth between chunks."""
    m, ec = states[0].houses, states[0].empty_capture
    iterations, time, playouts, capacity, trees = opts.iterations, opts.time, opts.playouts, opts.capacity, opts.trees
    if blocks is not None and resolved == "cpu" and blocks != 1:
        raise ValueError("blocks= (workers per shared tree) above 1 needs the GPU: the CPU twin grows each "
                         "tree with one worker (use trees= for one tree per core)")
    total_trees = trees * len(states)
    if total_trees > MAX_TREES:
        raise ValueError(f"{len(states)} positions x {trees} trees is above the limit of {MAX_TREES:,} trees per "
                         f"launch")
    if blocks is None:
        if resolved == "cuda":
            from ..kernels.cuda_shared_tree import default_blocks_per_tree

            blocks = default_blocks_per_tree(total_trees)
        else:
            blocks = 1
    if total_trees * blocks > MAX_BLOCKS:
        raise ValueError(f"{total_trees:,} trees x {blocks} blocks is above the limit of {MAX_BLOCKS:,} blocks per "
                         f"launch: lower blocks= or search fewer positions at once")
    capacity = _capacity(m, iterations, capacity, total_trees, blocks, max_bytes, opts.imm > 0.0)
    keys = np.concatenate([tree_keys_for(x, trees) for x in seeds])
    boards = np.stack([np.asarray(s.board, dtype=np.int32) for s in states for _ in range(trees)])
    players = np.array([s.player for s in states for _ in range(trees)], dtype=np.int32)
    grower = _SharedGrower(boards, players, keys, m, ec, capacity=capacity, blocks=blocks, opts=opts,
                           backend=resolved, max_bytes=max_bytes)
    start = _time.perf_counter()
    interrupted = grower.run(iterations, time, stop)
    seconds = _time.perf_counter() - start
    sizes = grower.sizes()
    scale = playouts * REWARD_UNITS
    out = []
    for p, state in enumerate(states):
        visits = {mv: 0 for mv in state.legal_moves()}
        value = {mv: 0 for mv in visits}
        for g in range(p * trees, (p + 1) * trees):
            for mv, n, v in grower.root_children(g):
                visits[mv] += n
                value[mv] += v
        children = [{"move": mv, "visits": visits[mv],
                     "value": value[mv] / (visits[mv] * scale) if visits[mv] else None, "proven": None}
                    for mv in visits]
        out.append({"move": most_visited(children), "children": children, "iterations": grower.done * trees,
                    "simulations": grower.done * trees * playouts,
                    "nodes": int(sizes[p * trees:(p + 1) * trees].sum()), "seconds": seconds,
                    "backend": resolved, "trees": trees, "blocks": blocks, "parallel": "tree",
                    "interrupted": interrupted, "proven": None})
    return out


def tree_parallel_search(state: KalahState, *, seed: int = 0, **options) -> dict:
    """Tree-parallel MCTS from one position (:func:`search_many_shared` of one)."""
    if not isinstance(state, KalahState):
        raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
    return search_many_shared([state], [seed], **options)[0]

"""Tree-parallel MCTS of any game of the protocol: one shared tree per position
(:mod:`jitsearch.kernels.game_shared_tree`), grown by ``blocks`` workers at once on the GPU
(:mod:`jitsearch.kernels.cuda_game_shared_tree`) or by one worker per tree on the CPU (the
twin: with ``blocks=1`` on the GPU the trees are bit-identical). Oware's driver
(:func:`jitsearch.mcts.oware.tree_parallel_oware`) is this search with its own evaluation and
memory checks; :func:`tree_parallel_game` serves every game with playouts to the end.
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from .._checks import check_int, kernel_array
from ..games import get as get_game
from ..kernels.game_mcts import scratch_rows
from ..kernels.game_shared_tree import NODE_BYTES, SharedTrees, grow_shared_cpu
from ..kernels.tree_step import REWARD_UNITS, log_table_for
from ..kernels.sentinels import FORMULAS, NO_PLY_CAP
from ..stop import check_stop
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .config import MAX_BLOCKS, MAX_TREES, check_tree_options
from .game import DEFAULT_PLAYOUTS, checked_run_options
from .multi import MAX_NODES, grow_in_chunks, most_visited

#: Nodes per shared tree for a time budget by default.
DEFAULT_SHARED_TIME_NODES = 1 << 22


def tree_parallel_game(game, states, *, blocks: int | None = None, iterations: int | None = 1000,
                       time: float | None = None, seed: int = 0, tree_keys=None, c: float = math.sqrt(2),
                       formula: str = "ucb1", playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None,
                       backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, threads: int | None = None,
                       return_trees: bool = False, stop=None):
    """One shared tree per position of ``game`` (a registry name or a Game); options and result
    as :func:`jitsearch.mcts.oware.tree_parallel_oware` without the evaluation options."""
    from ..kernels.backend import resolve
    from ..kernels.cuda_shared_tree import MAX_PLAYOUTS

    game = get_game(game)
    if isinstance(states, game.State):
        states = [states]
    if not isinstance(states, (list, tuple)) or not states:
        raise ValueError(f"states must be a non-empty list of {game.State.__name__}")
    if len(states) > MAX_TREES:
        raise ValueError(f"{len(states):,} positions are above the limit of {MAX_TREES:,} per launch")
    opts = check_tree_options(iterations, time, c, formula, "win", playouts, 0, capacity, len(states))
    check_stop(stop)
    if opts.playouts > MAX_PLAYOUTS:
        raise ValueError(f"playouts must be at most {MAX_PLAYOUTS} in a shared tree, got {opts.playouts}")
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
    threads, return_trees, tree_keys = checked_run_options(threads, return_trees, tree_keys, seed, len(states))
    packed = game.pack(list(states))
    t, m = len(states), game.sizes(packed.cfg).moves
    if opts.capacity is not None:
        capacity = check_int("capacity", opts.capacity, m + 1, MAX_NODES)
    elif opts.iterations is not None:
        capacity = int(min(MAX_NODES, (opts.iterations + blocks + 1) * m + 1))
    else:
        capacity = max(m + 1, min(DEFAULT_SHARED_TIME_NODES, int(max_bytes) // (2 * t * NODE_BYTES)))
    rows = scratch_rows(game, packed.cfg, packed.rows, packed.plies)
    per_scratch = rows * packed.hists.shape[2] * packed.hists.dtype.itemsize
    threads_per_block = 1
    if resolved == "cuda":
        from ..kernels.cuda_game_shared_tree import threads_for

        threads_per_block = threads_for(opts.playouts, t * blocks, per_scratch)
    check_bytes(t * capacity * NODE_BYTES + t * blocks * threads_per_block * per_scratch, max_bytes,
                f"{t:,} shared {game.name} MCTS trees of {capacity:,} nodes",
                "lower iterations=, capacity= or blocks= (API: or raise max_bytes)")
    trees = SharedTrees(t, capacity)
    roots = (packed.boards, kernel_array(packed.players, np.int32), packed.hists, kernel_array(packed.rows, np.int32),
             kernel_array(packed.plies, np.int32))
    keys = kernel_array(tree_keys, np.uint64)
    state = {"done": 0, "log": log_table_for(1024)}
    device = None
    if resolved == "cuda":
        from ..kernels.cuda_game_shared_tree import DeviceSharedTrees

        device = DeviceSharedTrees(game, None, trees, roots, keys, rows, blocks, threads_per_block)

    def grow(n: int) -> None:
        need = state["done"] + n + blocks + 2  # visits, in-flight ones included, stay below this
        if state["log"].shape[0] < need:
            state["log"] = log_table_for(1 << int(need).bit_length())
        args = (opts.c, FORMULAS[opts.formula], opts.playouts, NO_PLY_CAP, 1.0, 0.0)
        if device is not None:
            device.grow(state["log"], packed.cfg, *args, state["done"], n)
        else:
            grow_shared_cpu(game, None, trees, roots, keys, state["log"], packed.cfg, *args, rows, state["done"], n,
                            threads)
        state["done"] += n

    start = _time.perf_counter()
    interrupted = grow_in_chunks(grow, lambda: state["done"], opts.iterations, opts.time, max(1, 2 * blocks), stop)
    if device is not None:
        device.copy_back(trees)
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
    result = {"positions": positions, "iterations": state["done"], "playouts_total": state["done"] * opts.playouts * t,
              "seconds": seconds, "backend": resolved, "interrupted": interrupted, "trees": t,
              "playouts": opts.playouts, "leaves": 1, "blocks": blocks, "game": game.name}
    return (result, trees) if return_trees else result

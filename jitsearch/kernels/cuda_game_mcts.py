"""Multi-tree MCTS of any game on the GPU: the CUDA twin of
:func:`jitsearch.kernels.game_mcts.grow_trees_cpu`, one kernel factory for every game of the
protocol.

Imported lazily (only when the CUDA backend is asked for). Mapping
(block parallelism, Rocki & Suda 2011): thread block ``t``
owns tree ``t``; thread 0 selects and expands the step's leaves with virtual visits, the
block's threads run the step's leaves x ``playouts`` playouts at once (thread j takes jobs j,
j + blockDim, ...; each capped at ``max_plies`` and then scored by the evaluation), each
writing its reward units into shared memory, and thread 0 sums each leaf's playouts in order
and backs the leaves up in order (with ``alpha`` > 0 also the implicit minimax values). Every
thread rebuilds its node's record in its own slice of a global scratch array ``[T * threads,
rows, C]`` (too large for local memory; ``[.., 1, 1]`` for a game without a record). Integer
sums make the result independent of the threads' timing: bit-identical to the CPU twin for
the same keys.

The per-tree functions come from :func:`jitsearch.kernels.game_mcts.make_step` compiled with
``cuda.jit(device=True)`` over the game's rules built for the device, from the same source as
the CPU twin.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, from_dtype, int32, int64

from .. import rng
from .game_mcts import Roots, Tree, make_step, opts_of
from .tree_step import REWARD_UNITS
from .sentinels import TERMINAL

from .._cuda import MAX_SCRATCH_BYTES, MAX_THREADS, KernelCache, free_bytes  # noqa: F401  (re-exported)
from .._cuda import compile_ptx as ptx_of, signature_of, threads_for  # noqa: F401  (re-exported)

#: Leaves per step at most, and leaves x playouts per step at most (shared memory: 8 bytes a playout).
MAX_LEAVES = 64
MAX_JOBS = 1024


def make_kernel(game, device):
    """The kernel's Python function for ``game`` with its step functions compiled by ``device``."""
    gen = rng.build(device)
    step = make_step(device, game, gen)
    descend, playout_units, terminal_units = step.descend, step.playout_units, step.terminal_units
    backup, add_virtual_visit, static_units, imm_backup = (step.backup, step.add_virtual_visit, step.static_units,
                                                           step.imm_backup)
    stream_key = step.stream_key
    cells = int(game.max_cells)
    max_moves = int(game.max_moves)
    cell_type = from_dtype(np.dtype(game.board_dtype))

    def _game_mcts_kernel(tree, roots, log_table, cfg, opts, leaves_per_step, first_step, steps, scratch):
        parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size = tree
        tree_keys, root_hist, root_rows, root_ply = roots
        c, formula, playouts, max_plies, param, alpha = opts
        t = cuda.blockIdx.x
        if t >= parent.shape[0]:
            return
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        shared_leaves = cuda.shared.array(MAX_LEAVES, int32)
        shared_units = cuda.shared.array(MAX_JOBS, int64)
        work = cuda.local.array(cells, cell_type)
        child = cuda.local.array(cells, cell_type)
        moves = cuda.local.array(max_moves, int64)
        hist = scratch[t * nthreads + tid]
        units_per_visit = np.float64(playouts * REWARD_UNITS)
        units_all = np.int64(playouts) * REWARD_UNITS
        jobs = leaves_per_step * playouts
        for step_ in range(first_step, first_step + steps):
            if tid == 0:
                for j in range(leaves_per_step):
                    leaf = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm,
                                   boards, size, t, root_hist, root_rows, root_ply, log_table, cfg, c, formula,
                                   units_per_visit, hist, work, child, moves, alpha)
                    shared_leaves[j] = leaf
                    add_virtual_visit(parent, visits, t, leaf, 1)
            cuda.syncthreads()
            for job in range(tid, jobs, nthreads):
                j = job // playouts
                k = job - j * playouts
                leaf = shared_leaves[j]
                units = np.int64(0)
                if to_move[t, leaf] != TERMINAL:
                    key = stream_key(tree_keys[t], step_ * leaves_per_step + j, k)
                    units = playout_units(parent, boards, to_move, t, leaf, root_hist, root_rows, root_ply, cfg, key,
                                          max_plies, param, hist, work, moves)
                shared_units[job] = units
            cuda.syncthreads()
            if tid == 0:
                for j in range(leaves_per_step):
                    leaf = shared_leaves[j]
                    if to_move[t, leaf] == TERMINAL:
                        units0 = terminal_units(boards, t, leaf, cfg, work) * playouts
                    else:
                        units0 = np.int64(0)
                        for k in range(playouts):
                            units0 += shared_units[j * playouts + k]
                    add_virtual_visit(parent, visits, t, leaf, -1)
                    backup(parent, mover_in, visits, value, t, leaf, units0, units_all)
                    if alpha > 0.0:
                        v0 = static_units(boards, to_move, t, leaf, cfg, param, work)
                        imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, v0)
            cuda.syncthreads()

    _game_mcts_kernel.__qualname__ = _game_mcts_kernel.__name__ = f"_{game.name}_mcts_kernel"
    return _game_mcts_kernel


_KERNELS = KernelCache()


def kernel(game):
    """The compiled kernel of ``game`` (compiled on first launch)."""
    return _KERNELS.get(game, lambda device: make_kernel(game, device))


class DeviceGameTrees:
    """A :class:`~jitsearch.kernels.game_mcts.GameTrees` of ``game`` copied to the GPU, grown
    there by launches of the kernel and copied back on request."""

    def __init__(self, game, trees, tree_keys, root_hist, root_rows, root_ply, log_table, rows,
                 threads_per_block):
        self.game = game
        self.stream = cuda.stream()
        self.arrays = [cuda.to_device(a, stream=self.stream) for a in trees.arrays()]
        self.inputs = [cuda.to_device(np.ascontiguousarray(a), stream=self.stream)
                       for a in (tree_keys, root_hist, root_rows, root_ply)]
        self.log_table = cuda.to_device(log_table, stream=self.stream)
        self.num_trees = trees.parent.shape[0]
        self.threads = int(threads_per_block)
        self.scratch = cuda.device_array((self.num_trees * self.threads, rows, root_hist.shape[2]),
                                         dtype=root_hist.dtype, stream=self.stream)

    def set_log_table(self, log_table):
        self.log_table = cuda.to_device(log_table, stream=self.stream)

    def grow(self, cfg, c, formula, playouts, max_plies, param, alpha, leaves_per_step, first_step, steps):
        kernel(self.game)[self.num_trees, self.threads, self.stream](
            Tree(*self.arrays), Roots(*self.inputs), self.log_table, cfg,
            opts_of(c, formula, playouts, max_plies, param, alpha), int(leaves_per_step), int(first_step), int(steps),
            self.scratch)
        self.stream.synchronize()

    def copy_back(self, trees):
        for name, arr in zip(trees.FIELDS, self.arrays):
            arr.copy_to_host(getattr(trees, name), stream=self.stream)
        self.stream.synchronize()


def compile_ptx(game, cc=(9, 0), node_dtype=None, param=1.0) -> str:
    """PTX of ``game``'s multi-tree MCTS kernel for compute capability ``cc`` without a device
    (needs NVVM only); the argument types
    are those of a search of the game's initial position (``param``: the rewards' parameter,
    its type as the searches pass it)."""
    from .game_mcts import GameTrees

    state = game.initial()
    packed = game.pack([state])
    trees = GameTrees(1, 2, packed.boards.shape[1], node_dtype or game.board_dtype)
    sig = signature_of(trees.tree(), Roots(np.zeros(1, np.uint64), packed.hists, np.zeros(1, np.int32),
                                           np.zeros(1, np.int32)),
                       np.zeros(4), packed.cfg, opts_of(1.0, 0, 1, 1, param, 0.0), 1, 0, 1,
                       np.zeros((1, 1, packed.hists.shape[2]), packed.hists.dtype))
    return ptx_of(make_kernel(game, cuda.jit(device=True)), sig, cc)

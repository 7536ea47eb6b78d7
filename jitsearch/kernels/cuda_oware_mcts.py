"""Oware MCTS on the GPU: the CUDA twin of
:func:`jitsearch.kernels.oware_mcts.grow_trees_cpu`.

Imported lazily (only when the CUDA backend is asked for). As
:mod:`jitsearch.kernels.cuda_mcts` (block parallelism, Rocki & Suda 2011):
thread block ``t`` owns tree ``t``; thread 0 selects and expands the
step's leaves with virtual visits, the block's threads run the step's
leaves x ``playouts`` playouts at once (thread j takes jobs j, j +
blockDim, ...; each capped at ``max_plies`` and then scored by the
evaluation), each writing its reward units into shared memory, and thread
0 sums each leaf's playouts in order and backs the leaves up in order
(with ``alpha`` > 0 also the implicit minimax values). Every thread
rebuilds its node's repetition record in its own slice of a global scratch
array ``int32[T * threads, rows, 2m+1]`` (too large for
local memory), as :mod:`jitsearch.kernels.cuda_oware_playouts` does.
Integer sums make the result independent of the threads' timing:
bit-identical to the CPU twin for the same keys.

The per-tree functions come from :func:`jitsearch.kernels.oware_mcts.make_step`
compiled with ``cuda.jit(device=True)``, from the same rules, generator
and playout source as the CPU twin.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ..games.oware import MAX_HOUSES
from ..games.oware import rules as oware_rules
from . import rng
from .cuda_mcts import MAX_JOBS, MAX_LEAVES, MAX_THREADS, free_bytes  # noqa: F401  (free_bytes: for the wrapper)
from .multi_mcts import REWARD_UNITS
from .oware_mcts import make_step
from .oware_playouts import make_capped_playout
from .sentinels import TERMINAL

#: Cells of a per-thread board (houses and the two scores): a constant, as CUDA local arrays need.
BOARD_CELLS = 2 * MAX_HOUSES + 2

#: The most global memory the record scratch may take.
MAX_SCRATCH_BYTES = 1 << 31


def make_kernel(device):
    """The kernel's Python function with its step functions compiled by ``device``."""
    rules = oware_rules.build(device)
    gen = rng.build(device)
    step = make_step(device, rules, gen, make_capped_playout(device, rules, gen))
    descend = step.descend
    playout_units = step.playout_units
    terminal_units = step.terminal_units
    backup = step.backup
    add_virtual_visit = step.add_virtual_visit
    static_units = step.static_units
    imm_backup = step.imm_backup
    stream_key = step.stream_key

    def _oware_mcts_kernel(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards,
                           size, tree_keys, root_hist, root_rows, root_ply, log_table, m, c, formula, playouts, gsi,
                           move_limit, max_plies, side_weight, alpha, leaves_per_step, first_step, steps, scratch):
        t = cuda.blockIdx.x
        if t >= parent.shape[0]:
            return
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        shared_leaves = cuda.shared.array(MAX_LEAVES, int32)
        shared_units = cuda.shared.array(MAX_JOBS, int64)
        work = cuda.local.array(BOARD_CELLS, int32)
        child = cuda.local.array(BOARD_CELLS, int32)
        moves = cuda.local.array(MAX_HOUSES, int32)
        hist = scratch[t * nthreads + tid]
        units_per_visit = np.float64(playouts * REWARD_UNITS)
        units_all = np.int64(playouts) * REWARD_UNITS
        jobs = leaves_per_step * playouts
        for step_ in range(first_step, first_step + steps):
            if tid == 0:
                for j in range(leaves_per_step):
                    leaf = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm,
                                   boards, size, t, root_hist, root_rows, root_ply, log_table, m, c, formula,
                                   units_per_visit, gsi, move_limit, hist, work, child, moves, alpha)
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
                    units = playout_units(parent, boards, to_move, t, leaf, root_hist, root_rows, root_ply, m, gsi,
                                          move_limit, key, max_plies, side_weight, hist, work, moves)
                shared_units[job] = units
            cuda.syncthreads()
            if tid == 0:
                for j in range(leaves_per_step):
                    leaf = shared_leaves[j]
                    if to_move[t, leaf] == TERMINAL:
                        units0 = terminal_units(boards, t, leaf, m, work) * playouts
                    else:
                        units0 = np.int64(0)
                        for k in range(playouts):
                            units0 += shared_units[j * playouts + k]
                    add_virtual_visit(parent, visits, t, leaf, -1)
                    backup(parent, mover_in, visits, value, t, leaf, units0, units_all)
                    if alpha > 0.0:
                        v0 = static_units(boards, to_move, t, leaf, m, side_weight, work)
                        imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, v0)
            cuda.syncthreads()

    return _oware_mcts_kernel


_KERNEL = []


def kernel():
    """The compiled kernel (compiled on first launch)."""
    if not _KERNEL:
        _KERNEL.append(cuda.jit(make_kernel(cuda.jit(device=True))))
    return _KERNEL[0]


def threads_for(jobs: int, num_trees: int, per_thread_bytes: int) -> int:
    """Threads per block: a step's playouts rounded up to a warp, at most
    MAX_THREADS, fewer where the record scratch of every block's threads
    would pass MAX_SCRATCH_BYTES (at least 1)."""
    want = int(min(MAX_THREADS, max(32, -(-jobs // 32) * 32)))
    fits = MAX_SCRATCH_BYTES // max(1, num_trees * per_thread_bytes)
    return int(max(1, min(want, fits)))


class DeviceOwareTrees:
    """An :class:`~jitsearch.kernels.oware_mcts.OwareTrees` copied to the GPU,
    grown there by launches of the kernel and copied back on request."""

    def __init__(self, trees, tree_keys, root_hist, root_rows, root_ply, log_table, rows, threads_per_block):
        self.stream = cuda.stream()
        self.arrays = [cuda.to_device(a, stream=self.stream) for a in trees.arrays()]
        self.inputs = [cuda.to_device(np.ascontiguousarray(a), stream=self.stream)
                       for a in (tree_keys, root_hist, root_rows, root_ply)]
        self.log_table = cuda.to_device(log_table, stream=self.stream)
        self.num_trees = trees.parent.shape[0]
        self.threads = int(threads_per_block)
        self.scratch = cuda.device_array((self.num_trees * self.threads, rows, 2 * trees.houses + 1), dtype=np.int32,
                                         stream=self.stream)

    def set_log_table(self, log_table):
        self.log_table = cuda.to_device(log_table, stream=self.stream)

    def grow(self, m, c, formula, playouts, gsi, move_limit, max_plies, side_weight, alpha, leaves_per_step,
             first_step, steps):
        kernel()[self.num_trees, self.threads, self.stream](
            *self.arrays, *self.inputs, self.log_table, m, c, formula, playouts, gsi, move_limit, max_plies,
            side_weight, alpha, leaves_per_step, first_step, steps, self.scratch)
        self.stream.synchronize()

    def copy_back(self, trees):
        for name, arr in zip(trees.FIELDS, self.arrays):
            arr.copy_to_host(getattr(trees, name), stream=self.stream)
        self.stream.synchronize()


KERNEL_SIGNATURE = ("void(int32[:, :], int32[:, :], int32[:, :], int32[:, :], int32[:, :], int32[:, :], "
                    "int64[:, :], int64[:, :], int64[:, :], int16[:, :, :], int32[:], uint64[:], int32[:, :, :], "
                    "int32[:], int32[:], float64[:], int64, float64, int64, int64, boolean, int64, int64, float64, "
                    "float64, int64, int64, int64, int32[:, :, :])")


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of the Oware MCTS kernel for compute capability ``cc`` without a
    device (needs NVVM only), as :func:`jitsearch.kernels.cuda_mcts.compile_ptx`."""
    import types
    from unittest import mock

    from numba.cuda import dispatcher

    fake = types.SimpleNamespace(compute_capability=tuple(cc))
    with mock.patch.object(dispatcher, "get_current_device", lambda: fake):
        ptx, _ = cuda.compile_ptx(make_kernel(cuda.jit(device=True)), KERNEL_SIGNATURE, cc=tuple(cc))
    return ptx

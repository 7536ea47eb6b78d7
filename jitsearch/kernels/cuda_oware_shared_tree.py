"""Tree-parallel Oware MCTS on the GPU: the CUDA twin of
:func:`jitsearch.kernels.oware_shared_tree.grow_oware_shared_cpu`.

Imported lazily. As :mod:`jitsearch.kernels.cuda_shared_tree`: ``B`` thread
blocks share each tree; a block claims an iteration number (an atomic add
on ``claims[g]``), thread 0 descends and expands (replaying the moves and
the repetition record in its slice of the global scratch
``int32[blocks * threads, rows, 2m+1]``), then the block's threads copy the
leaf's record into their own slices and run the leaf's playouts, and
thread 0 backs the summed reward up with atomic adds. With one block per
tree the result equals the CPU twin's bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ..games.oware import MAX_HOUSES
from ..games.oware import rules as oware_rules
from . import rng
from .cuda_shared_tree import MAX_PLAYOUTS, MAX_THREADS, gpu_ops
from .multi_mcts import REWARD_UNITS
from .oware_playouts import make_capped_playout
from .oware_shared_tree import MAX_PATH, make_oware_shared_step

#: Cells of a board (houses and the two scores): a constant, as CUDA local and shared arrays need.
BOARD_CELLS = 2 * MAX_HOUSES + 2

#: The most global memory the record scratch may take.
MAX_SCRATCH_BYTES = 1 << 31


def make_kernel(device):
    """The kernel's Python function with its step compiled by ``device``."""
    rules = oware_rules.build(device)
    gen = rng.build(device)
    step = make_oware_shared_step(device, rules, gen, make_capped_playout(device, rules, gen), gpu_ops(device))
    descend = step.descend
    leaf_units = step.leaf_units
    backup = step.backup
    static_units = step.static_units
    imm_backup = step.imm_backup
    stream_key = step.stream_key

    def _oware_shared_tree_kernel(first_child, num_children, move, visits, value, imm, size, claims, root_boards,
                                  root_players, root_hist, root_rows, root_ply, tree_keys, log_table, capacity, m, c,
                                  formula, playouts, gsi, move_limit, max_plies, side_weight, alpha, blocks_per_tree,
                                  first_iteration, iterations, scratch):
        g = cuda.blockIdx.x // blocks_per_tree
        if g >= size.shape[0]:
            return
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        claimed = cuda.shared.array(1, int64)
        leaf = cuda.shared.array(5, int32)  # length, player, first, count, ply
        leaf_board = cuda.shared.array(BOARD_CELLS, int32)
        path = cuda.shared.array(MAX_PATH, int32)
        path_mover = cuda.shared.array(MAX_PATH, int32)
        units = cuda.shared.array(MAX_PLAYOUTS, int64)
        board = cuda.local.array(BOARD_CELLS, int32)
        work = cuda.local.array(BOARD_CELLS, int32)
        moves = cuda.local.array(MAX_HOUSES, int32)
        mine = scratch[cuda.blockIdx.x * nthreads + tid]
        lead = scratch[cuda.blockIdx.x * nthreads]
        units_per_visit = np.float64(playouts) * np.float64(REWARD_UNITS)
        units_all = np.int64(playouts) * np.int64(REWARD_UNITS)
        n = 2 * m + 2
        while True:
            if tid == 0:
                it = cuda.atomic.add(claims, g, 1)
                claimed[0] = it
                if it < iterations:
                    ln, lp, first, count, ply = descend(
                        first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards,
                        root_players, root_hist, root_rows, root_ply, log_table, m, c, formula, units_per_visit, gsi,
                        move_limit, board, moves, path, path_mover, mine, alpha)
                    leaf[0] = ln
                    leaf[1] = lp
                    leaf[2] = first
                    leaf[3] = count
                    leaf[4] = ply
                    for i in range(n):
                        leaf_board[i] = board[i]
            cuda.syncthreads()
            it = claimed[0]
            if it >= iterations:
                return
            first = leaf[2]
            count = leaf[3]
            if tid != 0:  # the leaf's record, from thread 0's slice into this thread's (rows 0..count-1)
                for r in range(count):
                    for j in range(2 * m + 1):
                        mine[r, j] = lead[first + r, j]
                first = 0
            for k in range(tid, playouts, nthreads):
                key = stream_key(tree_keys[g], first_iteration + it, k)
                units[k] = leaf_units(leaf_board, leaf[1], m, gsi, mine, first, count, leaf[4], move_limit, key,
                                      max_plies, side_weight, work, moves)
            cuda.syncthreads()
            if tid == 0:
                units0 = np.int64(0)
                for k in range(playouts):
                    units0 += units[k]
                backup(value, g, capacity, path, path_mover, leaf[0], units0, units_all)
                if alpha > 0.0:
                    v0 = static_units(leaf_board, leaf[1], m, side_weight, work)
                    imm_backup(first_child, num_children, imm, g, capacity, path, path_mover, leaf[0], leaf[1], v0)
            cuda.syncthreads()

    return _oware_shared_tree_kernel


_KERNEL = []


def kernel():
    """The compiled kernel (compiled on first launch)."""
    if not _KERNEL:
        _KERNEL.append(cuda.jit(make_kernel(cuda.jit(device=True))))
    return _KERNEL[0]


def threads_for(playouts: int, blocks: int, per_thread_bytes: int) -> int:
    """Threads per block: the leaf's playouts rounded up to a warp, at most
    MAX_THREADS, fewer where the record scratch of every block's threads
    would pass MAX_SCRATCH_BYTES (at least 1)."""
    want = int(min(MAX_THREADS, max(32, -(-playouts // 32) * 32)))
    return int(max(1, min(want, MAX_SCRATCH_BYTES // max(1, blocks * per_thread_bytes))))


def default_blocks_per_tree(num_trees: int) -> int:
    """8 blocks per SM over all trees, at least one per tree."""
    try:
        sms = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # the simulator
        sms = 1
    return max(1, (8 * sms) // max(1, num_trees))


class DeviceOwareSharedTrees:
    """An :class:`~jitsearch.kernels.oware_shared_tree.OwareSharedTrees` and its
    roots copied to the GPU, grown by launches of the kernel."""

    def __init__(self, trees, roots, tree_keys, rows, houses, blocks_per_tree, threads_per_block):
        s = self.stream = cuda.stream()
        self.arrays = [cuda.to_device(a, stream=s) for a in trees.arrays()]
        self.roots = [cuda.to_device(np.ascontiguousarray(a), stream=s) for a in roots]
        self.tree_keys = cuda.to_device(np.ascontiguousarray(tree_keys, dtype=np.uint64), stream=s)
        self.claims = cuda.device_array(trees.size.shape[0], dtype=np.int64, stream=s)
        self._zeros = np.zeros(trees.size.shape[0], dtype=np.int64)
        self.capacity = trees.capacity
        self.blocks = int(blocks_per_tree)
        self.threads = int(threads_per_block)
        total_blocks = trees.size.shape[0] * self.blocks
        self.scratch = cuda.device_array((total_blocks * self.threads, rows, 2 * houses + 1), dtype=np.int32,
                                         stream=s)
        self.log_table = None

    def grow(self, log_table, m, c, formula, playouts, gsi, move_limit, max_plies, side_weight, alpha, first_iteration,
             iterations):
        if self.log_table is None or self.log_table.shape[0] < log_table.shape[0]:
            self.log_table = cuda.to_device(log_table, stream=self.stream)
        self.claims.copy_to_device(self._zeros, stream=self.stream)
        kernel()[self._zeros.shape[0] * self.blocks, self.threads, self.stream](
            *self.arrays, self.claims, *self.roots, self.tree_keys, self.log_table, self.capacity, m, c, formula,
            playouts, gsi, move_limit, max_plies, side_weight, alpha, self.blocks, first_iteration, iterations,
            self.scratch)
        self.stream.synchronize()

    def copy_back(self, trees):
        for name, arr in zip(trees.FIELDS, self.arrays):
            arr.copy_to_host(getattr(trees, name), stream=self.stream)
        self.stream.synchronize()


KERNEL_SIGNATURE = ("void(int32[:], int32[:], int32[:], int64[:], int64[:], int64[:], int32[:], int64[:], "
                    "int32[:, :], int32[:], int32[:, :, :], int32[:], int32[:], uint64[:], float64[:], int64, int64, "
                    "float64, int64, int64, boolean, int64, int64, float64, float64, int64, int64, int64, "
                    "int32[:, :, :])")


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of the kernel for compute capability ``cc`` without a device (needs NVVM only)."""
    import types
    from unittest import mock

    from numba.cuda import dispatcher

    fake = types.SimpleNamespace(compute_capability=tuple(cc))
    with mock.patch.object(dispatcher, "get_current_device", lambda: fake):
        ptx, _ = cuda.compile_ptx(make_kernel(cuda.jit(device=True)), KERNEL_SIGNATURE, cc=tuple(cc))
    return ptx

"""MCTS that lives on the GPU: the CUDA twin of
:func:`jitsearch.kernels.multi_mcts.grow_trees_cpu`.

Imported lazily (only when the CUDA backend is asked for). Mapping (block
parallelism, Rocki & Suda 2011): thread block ``t`` owns tree ``t`` and runs
every stage of an iteration itself, for ``iterations`` iterations in one
launch, with no host round trip: thread 0 selects and expands (the tree is
in global memory) the step's leaves with virtual visits, then the block's
threads run the step's leaves x ``playouts`` playouts at once (thread j
takes jobs j, j + blockDim, ...), each writing its reward units into its
slot of shared memory, and thread 0 adds each leaf's playouts in order and
backs the leaves up in order (with ``alpha`` > 0 also the implicit minimax
values of each leaf's path). Integer sums make the result independent of the
threads' timing: bit-identical to the CPU twin for the same keys.

The per-tree functions (selection, expansion, playout, backup) come from
:func:`jitsearch.kernels.multi_mcts.make_step` compiled with
``cuda.jit(device=True)``, from the same rules, generator and playout
source as every other engine.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ..games.kalah import rules as kalah_rules
from ..games.kalah import MAX_HOUSES
from .sentinels import MAX_PITS, TERMINAL
from . import rng
from .multi_mcts import REWARD_UNITS, make_step
from .playouts import make_playout

#: Threads per block at most.
MAX_THREADS = 256
#: Leaves per step at most, and leaves x playouts per step at most (shared memory: 8 bytes a playout).
MAX_LEAVES = 64
MAX_JOBS = 1024


def make_kernel(device):
    """The kernel's Python function with its step functions compiled by ``device``."""
    rules = kalah_rules.build(device)
    gen = rng.build(device)
    step = make_step(device, rules, gen, make_playout(device, rules, gen))
    descend = step.descend
    playout_units = step.playout_units
    terminal_units = step.terminal_units
    backup = step.backup
    static_units = step.static_units
    imm_backup = step.imm_backup
    add_virtual_visit = step.add_virtual_visit
    stream_key = step.stream_key

    def _mcts_kernel(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, boards, size,
                     tree_keys, totals, log_table, m, c, formula, reward_kind, playouts, empty_capture, max_plies,
                     alpha, leaves_per_step, first_step, steps):
        t = cuda.blockIdx.x
        if t >= parent.shape[0]:
            return
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        shared_leaves = cuda.shared.array(MAX_LEAVES, int32)
        shared_units = cuda.shared.array(MAX_JOBS, int64)
        work = cuda.local.array(MAX_PITS, int32)
        child = cuda.local.array(MAX_PITS, int32)
        moves = cuda.local.array(MAX_HOUSES, int64)
        units_per_visit = np.float64(playouts * REWARD_UNITS)
        units_all = np.int64(playouts) * REWARD_UNITS
        jobs = leaves_per_step * playouts
        for step in range(first_step, first_step + steps):
            if tid == 0:
                for j in range(leaves_per_step):
                    leaf = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm,
                                   boards, size, t, log_table, m, c, formula, units_per_visit, empty_capture, work,
                                   child, moves, alpha)
                    shared_leaves[j] = leaf
                    add_virtual_visit(parent, visits, t, leaf, 1)
            cuda.syncthreads()
            for job in range(tid, jobs, nthreads):
                j = job // playouts
                k = job - j * playouts
                leaf = shared_leaves[j]
                units = np.int64(0)
                if to_move[t, leaf] != TERMINAL:
                    key = stream_key(tree_keys[t], step * leaves_per_step + j, k)
                    units = playout_units(boards, to_move, t, leaf, m, empty_capture, key, max_plies, reward_kind,
                                          totals[t], work, moves)
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
                        v0 = static_units(boards, to_move, t, leaf, m, reward_kind, totals[t], work)
                        imm_backup(parent, first_child, num_children, to_move, mover_in, imm, t, leaf, v0)
            cuda.syncthreads()

    return _mcts_kernel


mcts_kernel = cuda.jit(make_kernel(cuda.jit(device=True)))


def threads_for(jobs: int) -> int:
    """Threads per block: the playouts of a step rounded up to a warp, at most MAX_THREADS."""
    return int(min(MAX_THREADS, max(32, -(-jobs // 32) * 32)))


class DeviceTrees:
    """A :class:`~jitsearch.kernels.multi_mcts.TreeBatch` copied to the GPU,
    grown there by launches of the kernel and copied back on request."""

    def __init__(self, batch, tree_keys, totals, log_table):
        self.stream = cuda.stream()
        self.arrays = [cuda.to_device(a, stream=self.stream) for a in batch.arrays()]
        self.tree_keys = cuda.to_device(tree_keys, stream=self.stream)
        self.totals = cuda.to_device(totals, stream=self.stream)
        self.log_table = cuda.to_device(log_table, stream=self.stream)
        self.num_trees = batch.parent.shape[0]

    def grow(self, m, c, formula, reward_kind, playouts, empty_capture, max_plies, alpha, leaves_per_step,
             first_step, steps):
        threads = threads_for(leaves_per_step * playouts)
        mcts_kernel[self.num_trees, threads, self.stream](
            *self.arrays, self.tree_keys, self.totals, self.log_table, m, c, formula, reward_kind, playouts,
            empty_capture, max_plies, alpha, leaves_per_step, first_step, steps)
        self.stream.synchronize()

    def copy_back(self, batch, fields=None):
        """Copy the device arrays back into ``batch`` (all, or the named ones)."""
        names = ("parent", "first_child", "num_children", "move", "to_move", "mover_in", "visits", "value", "imm",
                 "boards", "size")
        for name, arr in zip(names, self.arrays):
            if fields is None or name in fields:
                arr.copy_to_host(getattr(batch, name), stream=self.stream)
        self.stream.synchronize()


def free_bytes() -> int:
    """Free memory on the current device, in bytes."""
    free, _total = cuda.current_context().get_memory_info()
    return int(free) if np.isfinite(free) else 1 << 62  # the simulator reports infinity


KERNEL_SIGNATURE = ("void(int32[:, :], int32[:, :], int32[:, :], int32[:, :], int32[:, :], int32[:, :], "
                    "int64[:, :], int64[:, :], int64[:, :], int16[:, :, :], int32[:], uint64[:], int64[:], float64[:], "
                    "int64, float64, int64, int64, int64, boolean, int64, float64, int64, int64, int64)")


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of the MCTS kernel for compute capability ``cc`` without a device
    (needs NVVM only), as :func:`jitsearch.kernels.cuda_playouts.compile_ptx`."""
    import types
    from unittest import mock

    from numba.cuda import dispatcher

    fake = types.SimpleNamespace(compute_capability=tuple(cc))
    with mock.patch.object(dispatcher, "get_current_device", lambda: fake):
        ptx, _ = cuda.compile_ptx(make_kernel(cuda.jit(device=True)), KERNEL_SIGNATURE, cc=tuple(cc))
    return ptx

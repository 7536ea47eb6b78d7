"""Kalah's multi-tree MCTS on the GPU: the CUDA twin of
:func:`jitsearch.kernels.multi_mcts.grow_trees_cpu`, the generic kernel of
:mod:`jitsearch.kernels.cuda_game_mcts` with Kalah's units
(:func:`jitsearch.kernels.multi_mcts.game_units`).

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

The limits every multi-tree kernel shares and :func:`free_bytes` are
:mod:`jitsearch.kernels.cuda_game_mcts`'s, re-exported here.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..games.kalah.game import GAME as KALAH
from .cuda_game_mcts import MAX_JOBS, MAX_LEAVES, MAX_THREADS, DeviceGameTrees, free_bytes  # noqa: F401  (re-exported)
from .cuda_game_mcts import compile_ptx as game_ptx
from .multi_mcts import game_units, no_record


def threads_for(jobs: int) -> int:
    """Threads per block: the playouts of a step rounded up to a warp, at most MAX_THREADS."""
    return int(min(MAX_THREADS, max(32, -(-jobs // 32) * 32)))


class DeviceTrees:
    """A :class:`~jitsearch.kernels.multi_mcts.TreeBatch` copied to the GPU,
    grown there by launches of the generic kernel and copied back on request.
    ``totals`` (each tree's seeds) are read off the boards by the kernel."""

    def __init__(self, batch, tree_keys, totals, log_table):
        hist, rows, ply = no_record(batch.parent.shape[0])
        self.device = DeviceGameTrees(KALAH, game_units, batch, np.asarray(tree_keys, np.uint64), hist, rows, ply,
                                      log_table, 1, 1)
        self.num_trees = batch.parent.shape[0]
        self.arrays = self.device.arrays
        self.stream = self.device.stream

    def grow(self, m, c, formula, reward_kind, playouts, empty_capture, max_plies, alpha, leaves_per_step,
             first_step, steps):
        self.device.threads = threads_for(leaves_per_step * playouts)
        if self.device.scratch.shape[0] < self.num_trees * self.device.threads:
            self.device.scratch = cuda.device_array((self.num_trees * self.device.threads, 1, 1), dtype=np.int32,
                                                    stream=self.stream)
        self.device.grow((int(m), bool(empty_capture)), c, formula, playouts, max_plies, np.int64(reward_kind), alpha,
                         leaves_per_step, first_step, steps)

    @property
    def log_table(self):
        return self.device.log_table

    @log_table.setter
    def log_table(self, device_table):
        self.device.log_table = device_table

    def copy_back(self, batch, fields=None):
        """Copy the device arrays back into ``batch`` (all, or the named ones)."""
        names = ("parent", "first_child", "num_children", "move", "to_move", "mover_in", "visits", "value", "imm",
                 "boards", "size")
        for name, arr in zip(names, self.arrays):
            if fields is None or name in fields:
                arr.copy_to_host(getattr(batch, name), stream=self.stream)
        self.stream.synchronize()


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of Kalah's MCTS kernel for compute capability ``cc`` without a device (needs NVVM
    only), as :func:`jitsearch.kernels.cuda_playouts.compile_ptx`."""
    return game_ptx(KALAH, cc, units=game_units, node_dtype=np.int16, param=np.int64(0))

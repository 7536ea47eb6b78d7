"""Tree-parallel MCTS on the GPU: the CUDA twin of
:func:`jitsearch.kernels.shared_tree.grow_shared_cpu`.

Imported lazily (only when the CUDA backend is asked for). Mapping: tree
``g`` is grown by blocks ``g*B .. g*B+B-1`` of one launch. Each block loops:
thread 0 claims the next iteration number of its tree (an atomic add on a
per-launch counter; the launch ends when the chunk's iterations are all
claimed), descends and expands (coherent ``ld.global.cg`` loads of the
shared statistics, atomics for visits, values, expansion and allocation),
leaves the leaf's board in shared memory; the block's threads run the
leaf's playouts (thread j takes playouts j, j + blockDim, ...) into shared
slots; thread 0 sums them in order and backs up with atomic adds (and, with
``alpha`` > 0, the implicit minimax values along the path). No host
round trip per iteration; the host relaunches in chunks sized from the
measured rate (about 20 ms each), the trees staying in device memory.

The step (descent, expansion, playout, backup) comes from
:func:`jitsearch.kernels.shared_tree.make_shared_step` compiled with
``cuda.jit(device=True)`` and the GPU's memory operations, from the same
rules, generator and playout source as every other engine. With one block
per tree the kernel equals the CPU twin bit for bit.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import cuda, int32, int64

from ..games.kalah import rules as kalah_rules
from ..games.kalah import MAX_HOUSES
from .sentinels import UNEVALUATED
from . import rng
from .cuda_common import KernelCache, compile_ptx as ptx_of, multiprocessors, threads_for as common_threads_for
from .multi_mcts import REWARD_UNITS
from .playouts import make_playout
from .shared_tree import IMM_BYTES, MAX_PATH, NODE_BYTES, make_shared_step

#: Pits of a per-thread Kalah board (a constant, as CUDA local arrays need).
MAX_PITS = 2 * MAX_HOUSES + 2

#: Threads per block at most; playouts per leaf at most (one shared slot each).
MAX_THREADS = 256
MAX_PLAYOUTS = 1024


def gpu_ops(device):
    """The memory operations of :func:`~jitsearch.kernels.shared_tree.make_shared_step` on the GPU: coherent
    loads, atomics and a fence, compiled with ``device``."""
    # ld.global.cg reads L2, where atomics land, instead of an SM's L1 (not
    # coherent across SMs); the simulator has no cache hints, plain loads there
    if hasattr(cuda, "ldcg"):
        def load(a, i):
            return cuda.ldcg(a, i)
    else:
        def load(a, i):
            return a[i]

    def atomic_add(a, i, v):
        return cuda.atomic.add(a, i, v)

    def atomic_cas(a, i, old, new):
        return cuda.atomic.cas(a, i, old, new)

    def exchange(a, i, v):
        return cuda.atomic.exch(a, i, v)

    def fence():
        cuda.threadfence()
        return 0

    return SimpleNamespace(load=device(load), atomic_add=device(atomic_add), atomic_cas=device(atomic_cas),
                           exchange=device(exchange), fence=device(fence))


def make_kernel(device, houses: int | None = None):
    """The kernel's Python function with its step compiled by ``device``;
    with ``houses``, for boards of that m only, whose playouts to the end
    run with the board in registers (:mod:`jitsearch.games.kalah.register`: the same
    games, so the same trees)."""
    rules = kalah_rules.build(device)
    gen = rng.build(device)
    margin_playout = None
    if houses is not None:
        from ..games.kalah import register as register_playout

        margin_playout = register_playout.build_board(device, houses)
    step = make_shared_step(device, rules, gen, make_playout(device, rules, gen), gpu_ops(device), margin_playout)
    descend = step.descend
    leaf_units = step.leaf_units
    backup = step.backup
    static_units = step.static_units
    imm_backup = step.imm_backup
    stream_key = step.stream_key

    def _shared_tree_kernel(first_child, num_children, move, visits, value, imm, size, claims, root_boards,
                            root_players, tree_keys, totals, log_table, capacity, m, c, formula, reward_kind,
                            playouts, empty_capture, max_plies, alpha, blocks_per_tree, first_iteration, iterations):
        g = cuda.blockIdx.x // blocks_per_tree
        if g >= size.shape[0]:
            return
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        claimed = cuda.shared.array(1, int64)
        length = cuda.shared.array(1, int32)
        leaf_player = cuda.shared.array(1, int32)
        leaf_board = cuda.shared.array(MAX_PITS, int32)
        path = cuda.shared.array(MAX_PATH, int32)
        path_mover = cuda.shared.array(MAX_PATH, int32)
        units = cuda.shared.array(MAX_PLAYOUTS, int64)
        board = cuda.local.array(MAX_PITS, int32)
        work = cuda.local.array(MAX_PITS, int32)
        moves = cuda.local.array(MAX_HOUSES, int64)
        units_per_visit = np.float64(playouts) * np.float64(REWARD_UNITS)
        units_all = np.int64(playouts) * np.int64(REWARD_UNITS)
        n = 2 * m + 2
        while True:
            if tid == 0:
                it = cuda.atomic.add(claims, g, 1)
                claimed[0] = it
                if it < iterations:
                    ln, lp = descend(first_child, num_children, move, visits, value, imm, size, g, capacity,
                                     root_boards, root_players, log_table, m, c, formula, units_per_visit,
                                     empty_capture, board, moves, path, path_mover, alpha)
                    length[0] = ln
                    leaf_player[0] = lp
                    for i in range(n):
                        leaf_board[i] = board[i]
            cuda.syncthreads()
            it = claimed[0]
            if it >= iterations:
                return
            for k in range(tid, playouts, nthreads):
                key = stream_key(tree_keys[g], first_iteration + it, k)
                units[k] = leaf_units(leaf_board, leaf_player[0], m, empty_capture, key, max_plies, reward_kind,
                                      totals[g], work, moves)
            cuda.syncthreads()
            if tid == 0:
                units0 = np.int64(0)
                for k in range(playouts):
                    units0 += units[k]
                backup(value, g, capacity, path, path_mover, length[0], units0, units_all)
                if alpha > 0.0:
                    v0 = static_units(leaf_board, leaf_player[0], m, reward_kind, totals[g], work)
                    imm_backup(first_child, num_children, imm, g, capacity, path, path_mover, length[0],
                               leaf_player[0], v0)
            cuda.syncthreads()

    return _shared_tree_kernel


shared_tree_kernel = cuda.jit(make_kernel(cuda.jit(device=True)))

_FOR_HOUSES = KernelCache()


def kernel_for(houses: int, registers: bool = True):
    """The kernel the searches launch for boards of ``houses`` m: with
    ``registers`` (the default) the one with register-board playouts for
    that m (compiled on first launch, cached per m), else the generic one."""
    if not registers:
        return shared_tree_kernel
    return _FOR_HOUSES.get(houses, make_kernel, houses)


def threads_for(playouts: int) -> int:
    """Threads per block: the leaf's playouts rounded up to a warp, at most MAX_THREADS."""
    return common_threads_for(playouts, max_threads=MAX_THREADS)


def default_blocks_per_tree(num_trees: int) -> int:
    """Blocks per tree when none is given: 8 per SM over all trees (leaves in
    flight enough to hide a playout's latency), at least one per tree."""
    return max(1, (8 * multiprocessors()) // max(1, num_trees))


@cuda.jit
def _reset_roots(first_child, num_children, move, visits, value, imm, size, capacity):
    g = cuda.grid(1)
    if g < size.shape[0]:
        base = g * capacity
        first_child[base] = -1
        num_children[base] = 0
        move[base] = -1
        visits[base] = 0
        value[base] = 0
        if imm.shape[0] > 1:
            imm[base] = UNEVALUATED
        size[g] = 1


class DeviceSharedTrees:
    """T shared trees of N nodes in GPU memory (the layout of
    :class:`~jitsearch.kernels.shared_tree.SharedTrees`), allocated once and
    reused: :meth:`reset` writes new roots (the rest of the pool is written
    as nodes are allocated, so nothing else is cleared). ``imm``: keep the
    implicit minimax values (else one unused entry). ``registers``: launch
    :func:`kernel_for`'s register-board kernel (the default; a benchmark
    sets it False on the class to time the generic kernel)."""

    registers = True

    def __init__(self, num_trees: int, capacity: int, imm: bool = False):
        self.stream = cuda.stream()
        self.num_trees = int(num_trees)
        self.capacity = int(capacity)
        self.imm = bool(imm)
        total = self.num_trees * self.capacity
        self.arrays = [cuda.device_array(total, dtype=np.int32), cuda.device_array(total, dtype=np.int32),
                       cuda.device_array(total, dtype=np.int32), cuda.device_array(total, dtype=np.int64),
                       cuda.device_array(total, dtype=np.int64),
                       cuda.device_array(total if self.imm else 1, dtype=np.int64),
                       cuda.device_array(self.num_trees, dtype=np.int32)]
        self.claims = cuda.device_array(self.num_trees, dtype=np.int64)
        self._zeros = np.zeros(self.num_trees, dtype=np.int64)
        self.log_table = None

    def reset(self, root_boards, root_players, tree_keys, totals):
        s = self.stream
        self.root_boards = cuda.to_device(np.ascontiguousarray(root_boards, dtype=np.int32), stream=s)
        self.root_players = cuda.to_device(np.ascontiguousarray(root_players, dtype=np.int32), stream=s)
        self.tree_keys = cuda.to_device(np.ascontiguousarray(tree_keys, dtype=np.uint64), stream=s)
        self.totals = cuda.to_device(np.ascontiguousarray(totals, dtype=np.int64), stream=s)
        _reset_roots[-(-self.num_trees // 128), 128, s](*self.arrays, self.capacity)

    def grow(self, m, c, formula, reward_kind, playouts, empty_capture, max_plies, alpha, blocks_per_tree,
             first_iteration, iterations):
        self.claims.copy_to_device(self._zeros, stream=self.stream)
        kernel_for(m, self.registers)[self.num_trees * blocks_per_tree, threads_for(playouts), self.stream](
            *self.arrays, self.claims, self.root_boards, self.root_players, self.tree_keys, self.totals,
            self.log_table, self.capacity, m, c, formula, reward_kind, playouts, empty_capture, max_plies, alpha,
            blocks_per_tree, first_iteration, iterations)
        self.stream.synchronize()

    def copy_back(self, trees):
        """Copy every node array into a host :class:`SharedTrees` of the same shape."""
        for name, arr in zip(("first_child", "num_children", "move", "visits", "value", "imm", "size"), self.arrays):
            arr.copy_to_host(getattr(trees, name), stream=self.stream)
        self.stream.synchronize()

    def root_children(self, g: int) -> list[tuple[int, int, int]]:
        """(move, visits, value units) of tree g's root children, copying only them."""
        base = g * self.capacity
        first_child, num_children, move, visits, value, _, _ = self.arrays
        f = int(first_child[base:base + 1].copy_to_host()[0])
        if f < 0:
            return []
        count = int(num_children[base:base + 1].copy_to_host()[0])
        lo, hi = base + f, base + f + count
        mv, vs, vl = (a[lo:hi].copy_to_host() for a in (move, visits, value))
        return [(int(a), int(b), int(v)) for a, b, v in zip(mv, vs, vl)]

    def sizes(self) -> np.ndarray:
        return self.arrays[6].copy_to_host()


_POOL: dict = {}


def pooled_trees(num_trees: int, capacity: int, imm: bool = False) -> DeviceSharedTrees:
    """Device trees of this shape, allocated once per process (the last shape only)."""
    key = (int(num_trees), int(capacity), bool(imm))
    if key not in _POOL:
        _POOL.clear()
        _POOL[key] = DeviceSharedTrees(*key)
    return _POOL[key]


def free_bytes() -> int:
    """Free memory on the current device, in bytes (pooled trees not counted as used)."""
    from .cuda_common import free_bytes as free

    pooled = sum(t.num_trees * t.capacity * (NODE_BYTES + (IMM_BYTES if t.imm else 0)) for t in _POOL.values())
    return free() + pooled


KERNEL_SIGNATURE = ("void(int32[:], int32[:], int32[:], int64[:], int64[:], int64[:], int32[:], int64[:], "
                    "int32[:, :], int32[:], uint64[:], int64[:], float64[:], int64, int64, float64, int64, int64, "
                    "int64, boolean, int64, float64, int64, int64, int64)")


def compile_ptx(cc=(9, 0), houses: int | None = None) -> str:
    """PTX of the kernel (with ``houses``: :func:`kernel_for`'s for that m) for compute capability ``cc``
    without a device (needs NVVM only)."""
    return ptx_of(make_kernel(cuda.jit(device=True), houses), KERNEL_SIGNATURE, cc)

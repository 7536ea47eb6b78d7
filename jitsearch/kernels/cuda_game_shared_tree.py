"""Tree-parallel MCTS of any game on the GPU: the CUDA twin of
:func:`jitsearch.kernels.game_shared_tree.grow_shared_cpu`, one kernel factory for every game
of the protocol.

Imported lazily. Mapping (lock-free tree parallelism with virtual loss, after Chaslot, Winands
and van den Herik 2008 and Enzenberger and Müller 2010): ``B`` thread blocks share each tree;
a block claims an iteration number (an atomic add on ``claims[g]``), thread 0 descends and
expands (replaying the moves and the record in its slice of the global scratch ``[blocks *
threads, rows, C]``; ``[.., 1, 1]`` for a game without a record), then the block's threads copy
the leaf's record into their own slices and run the leaf's playouts, and thread 0 backs the
summed reward up with atomic adds. With one block per tree the result equals the CPU
twin's bit for bit. A game whose fast playouts (:attr:`Game.fast_playouts
<jitsearch.games.protocol.Game>`) give ``gpu_margin(device, cfg)`` (Kalah: the board in registers)
gets a kernel per variant whose playouts to the end run
there: the same games, so the same trees.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import cuda, from_dtype, int64

from .. import rng
from .._cuda import MAX_SCRATCH_BYTES, KernelCache, multiprocessors, threads_for  # noqa: F401  (re-exported)
from .._cuda import compile_ptx as ptx_of, signature_of
from .game_mcts import opts_of
from .game_shared_tree import MAX_PATH, MAX_PLAYOUTS, NODE_BYTES, SharedRoots, SharedTree, make_shared_step
from .sentinels import NO_NODE, UNEVALUATED
from .tree_step import REWARD_UNITS



def gpu_ops(device):
    """The memory operations of :func:`~jitsearch.kernels.game_shared_tree.make_shared_step` on the GPU:
    coherent loads, atomics and a fence, compiled with ``device``."""
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


def fast_margin(game, cfg):
    """Whether ``game`` has a GPU fast playout for the variant ``cfg`` (its ``gpu_margin`` hook)."""
    fast = game.fast_playouts
    return fast is not None and getattr(fast, "gpu_margin", None) is not None and fast.gpu_margin(None, cfg)


def make_kernel(game, device, cfg=None):
    """The kernel's Python function for ``game`` with its step compiled by ``device``; with
    ``cfg``, for that variant only, its playouts to the end on the game's fast path."""
    gen = rng.build(device)
    margin = game.fast_playouts.gpu_margin(device, cfg) if cfg is not None else None
    step = make_shared_step(device, game, gen, gpu_ops(device), margin_playout=margin)
    descend, leaf_units, backup = step.descend, step.leaf_units, step.backup
    static_units, imm_backup, stream_key = step.static_units, step.imm_backup, step.stream_key
    cells = int(game.max_cells)
    max_moves = int(game.max_moves)
    cell_type = from_dtype(np.dtype(game.board_dtype))

    def _game_shared_tree_kernel(tree, claims, roots, log_table, capacity, cfg, opts, blocks_per_tree,
                                 first_iteration, iterations, scratch):
        first_child, num_children, move, visits, value, imm, size = tree
        root_boards, root_players, root_hist, root_rows, root_ply, tree_keys = roots
        c, formula, playouts, max_plies, param, alpha = opts
        g = cuda.blockIdx.x // blocks_per_tree
        if g >= size.shape[0]:
            return
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        claimed = cuda.shared.array(1, int64)
        leaf = cuda.shared.array(5, int64)  # length, player, first, count, ply
        leaf_board = cuda.shared.array(cells, cell_type)
        path = cuda.shared.array(MAX_PATH, np.int32)
        path_mover = cuda.shared.array(MAX_PATH, np.int32)
        units = cuda.shared.array(MAX_PLAYOUTS, int64)
        board = cuda.local.array(cells, cell_type)
        work = cuda.local.array(cells, cell_type)
        moves = cuda.local.array(max_moves, int64)
        mine = scratch[cuda.blockIdx.x * nthreads + tid]
        lead = scratch[cuda.blockIdx.x * nthreads]
        units_per_visit = np.float64(playouts) * np.float64(REWARD_UNITS)
        units_all = np.int64(playouts) * np.int64(REWARD_UNITS)
        n = root_boards.shape[1]
        while True:
            if tid == 0:
                it = cuda.atomic.add(claims, g, 1)
                claimed[0] = it
                if it < iterations:
                    ln, lp, cur = descend(
                        first_child, num_children, move, visits, value, imm, size, g, capacity, root_boards,
                        root_players, root_hist, root_rows, root_ply, log_table, cfg, c, formula, units_per_visit,
                        board, moves, path, path_mover, mine, alpha)
                    leaf[0] = ln
                    leaf[1] = lp
                    leaf[2] = cur[0]
                    leaf[3] = cur[1]
                    leaf[4] = cur[2]
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
                    for j in range(scratch.shape[2]):
                        mine[r, j] = lead[first + r, j]
                first = 0
            cur = (np.int64(first), np.int64(count), np.int64(leaf[4]))
            for k in range(tid, playouts, nthreads):
                key = stream_key(tree_keys[g], first_iteration + it, k)
                units[k] = leaf_units(leaf_board[:n], leaf[1], cfg, mine, cur, key, max_plies, param, work[:n], moves)
            cuda.syncthreads()
            if tid == 0:
                units0 = np.int64(0)
                for k in range(playouts):
                    units0 += units[k]
                backup(value, g, capacity, path, path_mover, leaf[0], units0, units_all)
                if alpha > 0.0:
                    v0 = static_units(leaf_board[:n], leaf[1], cfg, param, work[:n])
                    imm_backup(first_child, num_children, imm, g, capacity, path, path_mover, leaf[0], leaf[1], v0)
            cuda.syncthreads()

    _game_shared_tree_kernel.__qualname__ = _game_shared_tree_kernel.__name__ = f"_{game.name}_shared_tree_kernel"
    return _game_shared_tree_kernel


_KERNELS = KernelCache()


def kernel(game, cfg=None):
    """The compiled kernel of ``game`` (compiled on first launch); with ``cfg``, the
    variant's fast-path kernel (:func:`fast_margin`)."""
    return _KERNELS.get((game, cfg), lambda device: make_kernel(game, device, cfg))


def default_blocks_per_tree(num_trees: int) -> int:
    """8 blocks per SM over all trees, at least one per tree."""
    return max(1, (8 * multiprocessors()) // max(1, num_trees))


@cuda.jit
def _clear(first_child, num_children, move, visits, value, imm, size):
    """Every node of a pooled tree array as a fresh SharedTrees has it (only roots in use)."""
    i = cuda.grid(1)
    if i < first_child.shape[0]:
        first_child[i] = NO_NODE
        num_children[i] = 0
        move[i] = -1
        visits[i] = 0
        value[i] = 0
    if i < imm.shape[0]:
        imm[i] = UNEVALUATED
    if i < size.shape[0]:
        size[i] = 1


_POOL: dict = {}


def pooled_arrays(num_trees: int, capacity: int, imm: bool) -> list:
    """The node arrays of T trees of N nodes in GPU memory, allocated once per process for the last
    shape asked (a search per move reuses them: no allocation, no copy of the pool)."""
    key = (int(num_trees), int(capacity), bool(imm))
    if key not in _POOL:
        _POOL.clear()
        total = key[0] * key[1]
        _POOL[key] = [cuda.device_array(total, np.int32), cuda.device_array(total, np.int32),
                      cuda.device_array(total, np.int32), cuda.device_array(total, np.int64),
                      cuda.device_array(total, np.int64), cuda.device_array(total if imm else 1, np.int64),
                      cuda.device_array(key[0], np.int32)]
    return _POOL[key]


def free_bytes() -> int:
    """Free memory on the current device, in bytes (the pooled trees counted as free)."""
    from .._cuda import free_bytes as free

    pooled = sum(t * c * (NODE_BYTES + (8 if imm else 0)) for t, c, imm in _POOL)
    return free() + pooled


class DeviceSharedTrees:
    """T shared trees of N nodes of ``game`` (the layout of
    :class:`~jitsearch.kernels.game_shared_tree.SharedTrees`; ``imm``: with the implicit minimax
    values) in pooled GPU memory (:func:`pooled_arrays`), every node fresh, with their roots
    (boards, players, hist, rows, ply) and keys, grown by launches of the kernel; the host reads
    the roots' statistics (:meth:`root_children`, :meth:`root`, :meth:`sizes`) or every node
    (:meth:`copy_back`). ``registers``: launch the variant's fast-path kernel where the game has
    one (the default; a benchmark sets it False on the class to time the generic kernel)."""

    registers = True

    def __init__(self, game, num_trees, capacity, imm, roots, tree_keys, rows, blocks_per_tree,
                 threads_per_block):
        self.game = game
        s = self.stream = cuda.stream()
        self.arrays = pooled_arrays(num_trees, capacity, imm)
        _clear[-(-self.arrays[0].shape[0] // 256), 256, s](*self.arrays)
        self.roots = [cuda.to_device(np.ascontiguousarray(a), stream=s) for a in roots]
        self.tree_keys = cuda.to_device(np.ascontiguousarray(tree_keys, dtype=np.uint64), stream=s)
        self.claims = cuda.device_array(int(num_trees), dtype=np.int64, stream=s)
        self._zeros = np.zeros(int(num_trees), dtype=np.int64)
        self.capacity = int(capacity)
        self.blocks = int(blocks_per_tree)
        self.threads = int(threads_per_block)
        hist = roots[2]
        self.scratch = cuda.device_array((int(num_trees) * self.blocks * self.threads, rows, hist.shape[2]),
                                         dtype=hist.dtype, stream=s)
        self.log_table = None

    def grow(self, log_table, cfg, c, formula, playouts, max_plies, param, alpha, first_iteration, iterations):
        if self.log_table is None or self.log_table.shape[0] < log_table.shape[0]:
            self.log_table = cuda.to_device(log_table, stream=self.stream)
        self.claims.copy_to_device(self._zeros, stream=self.stream)
        fast = cfg if self.registers and fast_margin(self.game, cfg) else None
        kernel(self.game, fast)[self._zeros.shape[0] * self.blocks, self.threads, self.stream](
            SharedTree(*self.arrays), self.claims, SharedRoots(*self.roots, self.tree_keys), self.log_table,
            self.capacity, cfg, opts_of(c, formula, playouts, max_plies, param, alpha), self.blocks,
            int(first_iteration), int(iterations), self.scratch)
        self.stream.synchronize()

    def copy_back(self, trees):
        """Every node into a host SharedTrees of the same shape."""
        for name, arr in zip(trees.FIELDS, self.arrays):
            arr.copy_to_host(getattr(trees, name), stream=self.stream)
        self.stream.synchronize()

    def root_children(self, g: int) -> list[tuple[int, int, int]]:
        """(move, visits, value units) of tree g's root children, copying only them."""
        base = g * self.capacity
        first_child, num_children, move, visits, value = self.arrays[:5]
        f = int(first_child[base:base + 1].copy_to_host()[0])
        if f < 0:
            return []
        lo, hi = base + f, base + f + int(num_children[base:base + 1].copy_to_host()[0])
        mv, vs, vl = (a[lo:hi].copy_to_host() for a in (move, visits, value))
        return [(int(a), int(b), int(v)) for a, b, v in zip(mv, vs, vl)]

    def root(self, g: int) -> tuple[int, int]:
        """(visits, value units) of tree g's root."""
        base = g * self.capacity
        return (int(self.arrays[3][base:base + 1].copy_to_host()[0]),
                int(self.arrays[4][base:base + 1].copy_to_host()[0]))

    def sizes(self) -> np.ndarray:
        return self.arrays[6].copy_to_host()


def compile_ptx(game, cc=(9, 0), param=1.0, hist_dtype=None, fast=False) -> str:
    """PTX of ``game``'s shared-tree kernel for compute capability ``cc`` without a device (needs
    NVVM only); the argument types are those of a search of the game's initial position
    (``fast``: its variant's fast-path kernel)."""
    from .game_shared_tree import SharedTrees

    packed = game.pack([game.initial()])
    hist = packed.hists.astype(hist_dtype or packed.hists.dtype)
    trees = SharedTrees(1, 2)
    roots = SharedRoots(packed.boards, np.zeros(1, np.int32), hist, np.zeros(1, np.int32), np.zeros(1, np.int32),
                        np.zeros(1, np.uint64))
    sig = signature_of(SharedTree(*trees.arrays()), np.zeros(1, np.int64), roots, np.zeros(4), 2, packed.cfg,
                       opts_of(1.0, 0, 1, 1, param, 0.0), 1, 0, 1, np.zeros((1, 1, hist.shape[2]), hist.dtype))
    return ptx_of(make_kernel(game, cuda.jit(device=True), packed.cfg if fast else None), sig, cc)

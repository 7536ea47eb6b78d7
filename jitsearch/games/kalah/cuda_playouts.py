"""Kalah's CUDA playout kernels: the GPU twin of :mod:`.playouts` (Kalah's array API).

Imported lazily (only when the CUDA backend is asked for). The rules, the
generator and the playout body are compiled from the same source as the CPU
engine (:func:`.rules.build`, :func:`jitsearch.rng.build`, :func:`.fast.make_playout`) with
``numba.cuda.jit(device=True)``.

Mapping: one thread per playout, a grid-stride loop over the N·P (state,
playout) pairs, the board in a per-thread local array; each thread adds its
outcome to its state's counters with integer atomics, so the per-state sums
are exact and independent of the launch shape and of the order in which
threads finish: bit-identical to the CPU twin for the same (seed, state
index, playout index).

:class:`CudaEvaluator` keeps device buffers (grown on demand), pinned host
buffers and a stream between calls; inputs already on the device (CuPy
arrays, anything with ``__cuda_array_interface__``) are used without copies.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ... import rng
from ..._cuda import KernelCache, add_outcome_atomic, in_module, compile_ptx as ptx_of  # noqa: F401  (re-exported)
from ..playout import NO_PLY_CAP
from . import register as register_playout
from . import rules as kalah_rules
from .fast import make_playout, validate_batch
from .state import MAX_HOUSES

#: Pits of a per-thread Kalah board (a constant, as CUDA local arrays need).
MAX_PITS = 2 * MAX_HOUSES + 2


def make_kernel(device):
    """The kernel's Python function, its rules, generator and playout
    compiled with ``device`` (``cuda.jit(device=True)`` on a GPU;
    ``numba.extending.register_jitable`` for a compile check without one)."""
    rules = kalah_rules.build(device)
    gen = rng.build(device)
    playout = make_playout(device, rules, gen)
    stream_key = gen.stream_key
    record = device(in_module(add_outcome_atomic, globals()))

    def _playout_kernel(boards, players, m, empty_capture, playouts_per_state, seed, wins, draws, losses,
                        margin_sum, plies):
        n = 2 * m + 2
        board = cuda.local.array(MAX_PITS, int32)
        moves = cuda.local.array(MAX_HOUSES, int64)
        total = boards.shape[0] * playouts_per_state
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for job in range(start, total, stride):
            s = job // playouts_per_state
            p = job - s * playouts_per_state
            for i in range(n):
                board[i] = boards[s, i]
            mover = players[s]
            key = stream_key(seed, s, p)
            k, _ = playout(board, m, mover, empty_capture, key, NO_PLY_CAP, moves)
            record(wins, draws, losses, margin_sum, plies, s, mover, board[m + 1] - board[0], k)

    return _playout_kernel


playout_kernel = cuda.jit(make_kernel(cuda.jit(device=True)))


def kernel():
    """(numba.cuda, the kernel, compiled on first launch)."""
    return cuda, playout_kernel


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of the kernel for compute capability ``cc`` without a device (needs NVVM only):
    catches code the simulator accepts but a GPU rejects."""
    return ptx_of(make_kernel(cuda.jit(device=True)), KERNEL_SIGNATURE, cc)


KERNEL_SIGNATURE = ("void(int32[:, :], int64[:], int64, boolean, int64, uint64, int64[:], int64[:], int64[:], "
                    "int64[:], int64[:])")

OUTPUTS = ("wins", "draws", "losses", "margin_sum", "plies")


#: The playout kernels :class:`CudaEvaluator` can run (all with bit-identical
#: results): "registers" (the default: :func:`register_kernel`, jobs form),
#: "registers-playout" (its one-playout-per-iteration form), "generic"
#: (:func:`make_kernel`: the board in local memory, any m) and "packed"
#: (:func:`packed_kernel`; the generic kernel above its largest m).
KERNEL_KINDS = ("registers", "registers-playout", "generic", "packed")


class CudaEvaluator:
    """Batched playouts on the GPU with reusable buffers and a stream.

    ``evaluate(boards, players, playouts_per_state, seed)`` returns the same
    dict as :func:`.playouts.evaluate_cpu` (NumPy arrays),
    or device arrays with ``to_host=False``.
    """

    def __init__(self, threads_per_block: int = 128, blocks: int | None = None, kernel: str = "registers"):
        if kernel not in KERNEL_KINDS:
            raise ValueError(f"kernel must be one of {', '.join(KERNEL_KINDS)}, got {kernel!r}")
        self._cuda = cuda
        self._kernel = playout_kernel
        self.kernel = kernel
        if not 1 <= threads_per_block <= 1024:
            raise ValueError(f"threads_per_block must lie in 1..1024, got {threads_per_block}")
        self.threads_per_block = int(threads_per_block)
        self.blocks = blocks
        self.stream = cuda.stream()
        self._cap = 0
        self._dev = {}
        self._host = {}
        self._dev_boards = None
        self._dev_players = None

    def _kernel_for(self, m: int):
        if self.kernel == "registers":
            return register_kernel(m, "jobs")
        if self.kernel == "registers-playout":
            return register_kernel(m, "playout")
        if self.kernel == "packed" and m <= kalah_rules.MAX_PACKED_HOUSES:
            return packed_kernel(m)
        return self._kernel

    def _ensure(self, k: int, n: int):
        cuda = self._cuda
        if k > self._cap or self._dev_boards is None or self._dev_boards.shape[1] != n:
            cap = max(k, 2 * self._cap)
            self._dev = {name: cuda.device_array(cap, dtype=np.int64, stream=self.stream) for name in OUTPUTS}
            self._host = {name: cuda.pinned_array(cap, dtype=np.int64) for name in OUTPUTS}
            self._zeros = cuda.pinned_array(cap, dtype=np.int64)  # the counters' reset, copied asynchronously
            self._zeros[:] = 0
            self._dev_boards = cuda.device_array((cap, n), dtype=np.int32, stream=self.stream)
            self._dev_players = cuda.device_array(cap, dtype=np.int64, stream=self.stream)
            self._cap = cap

    def evaluate(self, boards, players, playouts_per_state: int, seed: int, *, empty_capture: bool = False,
                 to_host: bool = True) -> dict:
        cuda = self._cuda
        on_device = hasattr(boards, "__cuda_array_interface__")
        if on_device:
            d_boards = cuda.as_cuda_array(boards)
            if d_boards.ndim != 2 or d_boards.shape[1] % 2 or d_boards.dtype != np.int32:
                raise ValueError("device boards must be int32[K, 2m+2]")
            k, n = d_boards.shape
            m = n // 2 - 1
            if not 1 <= m <= MAX_HOUSES:
                raise ValueError(f"boards must be [K, 2m+2] with 1 <= m <= {MAX_HOUSES}")
            if hasattr(players, "__cuda_array_interface__"):
                d_players = cuda.as_cuda_array(players)
            else:
                p = np.asarray(players, dtype=np.int64)
                p = np.full(k, int(p)) if p.ndim == 0 else p
                d_players = cuda.to_device(np.ascontiguousarray(p, dtype=np.int64), stream=self.stream)
            if int(playouts_per_state) < 1:
                raise ValueError(f"playouts_per_state must be >= 1, got {playouts_per_state}")
        else:
            b, p, m = validate_batch(boards, players, playouts_per_state, seed)
            k, n = b.shape
        self._ensure(max(k, 1), n)
        if not on_device:
            d_boards = self._dev_boards[:k]
            d_players = self._dev_players[:k]
            d_boards.copy_to_device(b, stream=self.stream)
            d_players.copy_to_device(p, stream=self.stream)
        outs = {name: self._dev[name][:k] for name in OUTPUTS}
        for arr in outs.values():
            arr.copy_to_device(self._zeros[:k], stream=self.stream)
        jobs = k * int(playouts_per_state)
        tpb = self.threads_per_block
        blocks = self.blocks or max(1, min((jobs + tpb - 1) // tpb, 65535))
        if jobs:
            self._kernel_for(m)[blocks, tpb, self.stream](d_boards, d_players, m, bool(empty_capture),
                                                    int(playouts_per_state), np.uint64(seed),
                                                    *(outs[name] for name in OUTPUTS))
        if not to_host:
            return outs
        result = {}
        for name in OUTPUTS:
            host = self._host[name][:k]
            outs[name].copy_to_host(host, stream=self.stream)
            result[name] = host
        self.stream.synchronize()
        return {name: np.array(v) for name, v in result.items()}


# -- packed boards: the CPU's packed playout compiled for the GPU -------------------------------------

def make_packed_kernel(device, houses: int):
    """The kernel on packed boards (:func:`kalah_rules.build_packed`) for
    boards of ``houses`` m: the same arguments and bit-identical results as
    :func:`make_kernel`'s (a measurement; the default kernel stays the
    generic one until the packed one measures faster on a GPU)."""
    from numba import uint64

    rules = kalah_rules.build_packed(device, houses)
    words = rules.words
    load, legal_count, step, final_margin = rules.load, rules.legal_count, rules.step, rules.margin
    gen = rng.build(device)
    draw, below, stream_key = gen.draw, gen.below, gen.stream_key
    record = device(in_module(add_outcome_atomic, globals()))

    def _packed_playout_kernel(boards, players, m, empty_capture, playouts_per_state, seed, wins, draws, losses,
                               margin_sum, plies):
        w = cuda.local.array(words, uint64)
        total = boards.shape[0] * playouts_per_state
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for job in range(start, total, stride):
            s = job // playouts_per_state
            p = job - s * playouts_per_state
            side0, side1 = load(w, boards[s])
            mover = players[s]
            key = stream_key(seed, s, p)
            player = mover
            k = 0
            while player >= 0:
                count, mask = legal_count(w, player)
                player, side0, side1 = step(w, player, side0, side1, mask, below(draw(key, k), count),
                                            empty_capture)
                k += 1
            record(wins, draws, losses, margin_sum, plies, s, mover, final_margin(w, side0, side1), k)

    return _packed_playout_kernel


_KERNELS = KernelCache()


def packed_kernel(houses: int):
    """The packed-board kernel for ``houses`` (compiled on first launch, cached per m)."""
    return _KERNELS.get(("packed", houses), make_packed_kernel, houses)


def compile_packed_ptx(houses: int = 6, cc=(9, 0)) -> str:
    """PTX of the packed-board kernel without a device (as :func:`compile_ptx`)."""
    return ptx_of(make_packed_kernel(cuda.jit(device=True), houses), KERNEL_SIGNATURE, cc)


# -- the board in registers: :mod:`.register` --------------------------------------------------------

#: The register-board kernels: "jobs" (a thread that ends a game starts its
#: next one inside the same loop over plies) and "playout" (one playout per
#: iteration of a grid-stride loop).
REGISTER_FORMS = ("jobs", "playout")


def make_register_kernel(device, houses: int, form: str = "jobs"):
    """The kernel with the board in registers (:mod:`.register`) for
    boards of ``houses`` m, in ``form`` (:data:`REGISTER_FORMS`): the same
    arguments (``m`` must equal ``houses``) and bit-identical results as
    :func:`make_kernel`'s."""
    if form not in REGISTER_FORMS:
        raise ValueError(f"form must be one of {REGISTER_FORMS}, got {form!r}")
    stream_key = rng.build(device).stream_key
    record = device(in_module(add_outcome_atomic, globals()))
    if form == "jobs":
        jobs = register_playout.build_jobs(device, houses, stream_key, record)

        def _register_jobs_kernel(boards, players, m, empty_capture, playouts_per_state, seed, wins, draws, losses,
                                  margin_sum, plies):
            jobs(boards, players, empty_capture, playouts_per_state, seed, cuda.grid(1), cuda.gridsize(1),
                 boards.shape[0] * playouts_per_state, wins, draws, losses, margin_sum, plies)

        return _register_jobs_kernel

    play = register_playout.build(device, houses)

    def _register_playout_kernel(boards, players, m, empty_capture, playouts_per_state, seed, wins, draws, losses,
                                 margin_sum, plies):
        total = boards.shape[0] * playouts_per_state
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for job in range(start, total, stride):
            s = job // playouts_per_state
            p = job - s * playouts_per_state
            mover = players[s]
            margin, k = play(boards, s, mover, empty_capture, stream_key(seed, s, p))
            record(wins, draws, losses, margin_sum, plies, s, mover, margin, k)

    return _register_playout_kernel


def register_kernel(houses: int, form: str = "jobs"):
    """The register-board kernel for ``houses`` in ``form`` (compiled on first launch, cached per (m, form))."""
    return _KERNELS.get(("registers", houses, form), make_register_kernel, houses, form)


def compile_register_ptx(houses: int = 6, cc=(9, 0), form: str = "jobs") -> str:
    """PTX of the register-board kernel without a device (as :func:`compile_ptx`)."""
    return ptx_of(make_register_kernel(cuda.jit(device=True), houses, form), KERNEL_SIGNATURE, cc)

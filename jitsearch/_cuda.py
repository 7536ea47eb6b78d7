"""What every CUDA kernel module shares: lazy per-key kernel caches, PTX without a device,
threads per block, free device memory, the SM count and the exact outcome counters; the
kernels of :mod:`jitsearch.kernels` and the games' own fast paths (Kalah's register boards) alike.

Ground floor (imports nothing of jitsearch); imported lazily (only when the CUDA backend is asked
for, or for a PTX check).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

#: Threads per block at most (every tree kernel).
MAX_THREADS = 256
#: The most global memory a kernel's per-thread record scratch may take.
MAX_SCRATCH_BYTES = 1 << 31


class KernelCache:
    """Kernels compiled on first use, one per key: ``cache.get(key, factory, *args)`` is
    ``cuda.jit(factory(cuda.jit(device=True), *args))`` made once per ``key``."""

    def __init__(self):
        self.kernels: dict = {}

    def get(self, key, factory, *args):
        if key not in self.kernels:
            self.kernels[key] = cuda.jit(factory(cuda.jit(device=True), *args))
        return self.kernels[key]


def compile_ptx(pyfunc, signature, cc=(9, 0)) -> str:
    """PTX of the kernel ``pyfunc`` for ``signature`` (a string or a tuple of Numba types) and
    compute capability ``cc`` without a device (needs NVVM only): catches code the simulator
    accepts but a GPU rejects. numba-cuda asks the current device for its compute capability
    when it compiles a device function; with no driver it is answered ``cc`` for the call."""
    import types
    from unittest import mock

    from numba.cuda import dispatcher

    fake = types.SimpleNamespace(compute_capability=tuple(cc))
    with mock.patch.object(dispatcher, "get_current_device", lambda: fake):
        ptx, _ = cuda.compile_ptx(pyfunc, signature, cc=tuple(cc))
    return ptx


def signature_of(*args) -> tuple:
    """The Numba types of example arguments (for :func:`compile_ptx`)."""
    from numba import typeof

    return tuple(typeof(a) for a in args)


def threads_for(jobs: int, blocks: int = 1, per_thread_bytes: int = 0, max_threads: int = MAX_THREADS) -> int:
    """Threads per block: ``jobs`` rounded up to a warp, at most ``max_threads``, fewer where the
    record scratch of every block's threads (``blocks`` x threads x ``per_thread_bytes``) would
    pass MAX_SCRATCH_BYTES (at least 1)."""
    want = int(min(max_threads, max(32, -(-int(jobs) // 32) * 32)))
    if per_thread_bytes <= 0:
        return want
    fits = MAX_SCRATCH_BYTES // max(1, int(blocks) * int(per_thread_bytes))
    return int(max(1, min(want, fits)))


def free_bytes() -> int:
    """Free memory on the current device, in bytes."""
    free, _total = cuda.current_context().get_memory_info()
    return int(free) if np.isfinite(free) else 1 << 62  # the simulator reports infinity


def multiprocessors() -> int:
    """SMs of the current device (1 under the simulator)."""
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # the simulator
        return 1


def in_module(fn, namespace: dict):
    """``fn`` with the global names of ``namespace`` (a kernel module's ``globals()``).

    The CUDA simulator runs a kernel with the ``cuda`` global of the kernel's module swapped for
    its fake module during the whole launch, but swaps a device function's module only around
    each call: from another module, one simulated thread's return can restore the real module
    while another thread is inside (``numba.cuda`` has no ``atomic`` then). A device function
    that names ``cuda`` is therefore compiled as a copy living in the kernel's module; on a GPU
    this changes nothing (the same source, the same ``cuda``)."""
    import types

    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__
    return copy


def add_outcome_atomic(wins, draws, losses, margin_sum, plies_out, s, mover, margin, plies):
    """One playout's result added to state ``s``'s counters with integer atomics (exact in any
    order): its outcome for ``mover``, player 0's ``margin`` and its ``plies``; every playout
    kernel's, compiled with ``cuda.jit(device=True)`` from the kernel's module (:func:`in_module`)."""
    mine = margin if mover == 0 else -margin
    if mine > 0:
        cuda.atomic.add(wins, s, 1)
    elif mine < 0:
        cuda.atomic.add(losses, s, 1)
    else:
        cuda.atomic.add(draws, s, 1)
    cuda.atomic.add(margin_sum, s, margin)
    cuda.atomic.add(plies_out, s, plies)

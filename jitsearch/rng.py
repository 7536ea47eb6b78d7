"""The one 64-bit mixer of jitsearch: SplitMix64's finaliser, and the
constants that key it.

Every hash and random stream in the package is built on :func:`mix64`
(compiled, ``uint64`` in and out) or its plain-Python twin
:func:`mix64_py` (Python ints, the same values): random-tree leaf values
(:mod:`jitsearch.trees`), the solvers' table keys, the playout streams of
:mod:`jitsearch.kernels.rng` (which compiles :func:`mix64_body` for the CPU
and for CUDA), MCTS and tournament seeds. It is a bijection on 64-bit words
with full avalanche, so ``mix64(key + i * GOLDEN)`` is a counter-based
stream: any element is computed without the ones before it.

Ground floor: imports nothing of jitsearch; every layer may import it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: 2**64 / golden ratio (odd): the stream increment.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
#: Mask of 64 bits for the Python twins.
M64 = (1 << 64) - 1


def mix64_body(z):
    """SplitMix64 finaliser, written for any Numba target (``njit`` or
    ``cuda.jit(device=True)``): compile it with the target's decorator."""
    z = np.uint64(z)
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    return z ^ (z >> np.uint64(31))


#: :func:`mix64_body` compiled for the CPU (inlined into its callers).
mix64 = njit(cache=True, inline="always")(mix64_body)


def mix64_py(z: int) -> int:
    """:func:`mix64` on Python ints (any int; taken modulo 2**64)."""
    z &= M64
    z = ((z ^ (z >> 30)) * int(MIX1)) & M64
    z = ((z ^ (z >> 27)) * int(MIX2)) & M64
    return z ^ (z >> 31)

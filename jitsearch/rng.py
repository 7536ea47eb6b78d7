"""The one 64-bit mixer of jitsearch: SplitMix64's finaliser, and the
constants that key it.

Every hash and random stream in the package is built on :func:`mix64`
(compiled, ``uint64`` in and out) or its plain-Python twin
:func:`mix64_py` (Python ints, the same values): random-tree leaf values
(:mod:`jitsearch.trees`), the solvers' table keys, the playout streams
(:func:`build`, below), MCTS and tournament seeds. It is a bijection on 64-bit words
with full avalanche, so ``mix64(key + i * GOLDEN)`` is a counter-based
stream: any element is computed without the ones before it.

**The playouts' generator** (CPU and GPU): counter-based, so any playout's stream is a pure
function of its identity: ``key = stream_key(seed, state_index, playout_index)`` and the i-th
draw is ``mix64(key + (i + 1) * GOLDEN)`` (a SplitMix64 stream started at ``key``). A draw in
``[0, k)`` takes the top 32 bits times ``k`` shifted right by 32 (Lemire's multiply-shift), so
it never reaches ``k`` and needs no float. Every operation is on ``uint64``, identical on the
CPU and in CUDA. The bodies are plain Python for Numba's nopython subset; :func:`build`
compiles them with ``numba.njit`` or ``numba.cuda.jit(device=True)``.

Ground floor: imports nothing of jitsearch; every layer may import it.
"""

from __future__ import annotations

from types import SimpleNamespace

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


# -- the playouts' generator -----------------------------------------------------------------------

STATE_MUL = np.uint64(0xD1B54A32D192ED03)
PLAYOUT_MUL = np.uint64(0xAEF17502108EF2D9)


def make(jit):
    """Compile the generator with ``jit``; returns (mix64, stream_key, draw, below)."""
    mix = jit(mix64_body)

    def stream_key(seed, state_index, playout_index):
        """Key of the stream of playout ``playout_index`` of state ``state_index``."""
        z = mix(np.uint64(seed) + GOLDEN)
        z = mix(z ^ (np.uint64(state_index) * STATE_MUL))
        return mix(z ^ (np.uint64(playout_index) * PLAYOUT_MUL))

    def draw(key, counter):
        """The ``counter``-th (0-based) uint64 of the stream ``key``."""
        return mix(np.uint64(key) + (np.uint64(counter) + np.uint64(1)) * GOLDEN)

    def below(x, k):
        """Map a uint64 draw to an int in [0, k), k < 2**32; never k."""
        return np.int64(((np.uint64(x) >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))

    return mix, jit(stream_key), jit(draw), jit(below)


def build(jit):
    mix, stream_key, draw, below = make(jit)
    return SimpleNamespace(mix64=mix, stream_key=stream_key, draw=draw, below=below)


def stream_key_py(seed: int, state_index: int, playout_index: int) -> int:
    """:func:`build`'s ``stream_key`` on Python ints (tests, documentation)."""
    z = mix64_py(seed + int(GOLDEN))
    z = mix64_py(z ^ ((state_index * int(STATE_MUL)) & M64))
    return mix64_py(z ^ ((playout_index * int(PLAYOUT_MUL)) & M64))


def draw_py(key: int, counter: int) -> int:
    return mix64_py(key + (counter + 1) * int(GOLDEN))


def below_py(x: int, k: int) -> int:
    return ((x >> 32) * k) >> 32

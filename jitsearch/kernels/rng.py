"""The one random-number generator of the playouts (CPU and GPU).

Counter-based, so any playout's stream is a pure function of its identity:
``key = stream_key(seed, state_index, playout_index)`` and the i-th draw is
``mix64(key + (i + 1) * GOLDEN)`` (a SplitMix64 stream started at ``key``;
the mixer is :mod:`jitsearch.rng`'s).
A draw in ``[0, k)`` takes the top 32 bits times ``k`` shifted right by 32
(Lemire's multiply-shift), so it never reaches ``k`` and needs no float.
Every operation is on ``uint64``, identical on the CPU and in CUDA.

The bodies are plain Python for Numba's nopython subset; :func:`build`
compiles them with ``numba.njit`` or ``numba.cuda.jit(device=True)``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..rng import GOLDEN, M64 as _M, mix64_body, mix64_py

STATE_MUL = np.uint64(0xD1B54A32D192ED03)
PLAYOUT_MUL = np.uint64(0xAEF17502108EF2D9)


def make(jit):
    """Compile the generator with ``jit``; returns (mix64, stream_key, draw, below)."""
    mix64 = jit(mix64_body)

    def stream_key(seed, state_index, playout_index):
        """Key of the stream of playout ``playout_index`` of state ``state_index``."""
        z = mix64(np.uint64(seed) + GOLDEN)
        z = mix64(z ^ (np.uint64(state_index) * STATE_MUL))
        return mix64(z ^ (np.uint64(playout_index) * PLAYOUT_MUL))

    def draw(key, counter):
        """The ``counter``-th (0-based) uint64 of the stream ``key``."""
        return mix64(np.uint64(key) + (np.uint64(counter) + np.uint64(1)) * GOLDEN)

    def below(x, k):
        """Map a uint64 draw to an int in [0, k), k < 2**32; never k."""
        return np.int64(((np.uint64(x) >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32))

    return mix64, jit(stream_key), jit(draw), jit(below)


def build(jit):
    mix64, stream_key, draw, below = make(jit)
    return SimpleNamespace(mix64=mix64, stream_key=stream_key, draw=draw, below=below)


# -- plain-Python twin (tests, documentation) ----------------------------------------

def stream_key_py(seed: int, state_index: int, playout_index: int) -> int:
    z = mix64_py(seed + int(GOLDEN))
    z = mix64_py(z ^ ((state_index * int(STATE_MUL)) & _M))
    return mix64_py(z ^ ((playout_index * int(PLAYOUT_MUL)) & _M))


def draw_py(key: int, counter: int) -> int:
    return mix64_py(key + (counter + 1) * int(GOLDEN))


def below_py(x: int, k: int) -> int:
    return ((x >> 32) * k) >> 32

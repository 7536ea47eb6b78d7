"""House vectors as compositions, the index space of the endgame databases
of every Mancala game here (Kalah's and Oware's).

A level ``t`` holds every vector of ``k`` non-negative house counts that sum
to ``t`` seeds, in lexicographic order; there are C(t + k - 1, k - 1) of
them. ``binom`` is :func:`binomial_table`'s ``C[n, j]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def binomial_table(n_max: int, k_max: int) -> np.ndarray:
    """``C[n, j]`` for n <= n_max, j <= k_max (int64; 0 where j > n)."""
    c = np.zeros((n_max + 1, k_max + 1), dtype=np.int64)
    for n in range(n_max + 1):
        c[n, 0] = 1
        for k in range(1, min(n, k_max) + 1):
            c[n, k] = c[n - 1, k - 1] + (c[n - 1, k] if k <= n - 1 else 0)
    return c


@njit(cache=True, inline="always")
def next_in_level(h, k):
    """Advance the house vector ``h`` (``k`` counts, not the last of its
    level) to its lexicographic successor among vectors with the same seed
    count."""
    j = k - 2
    tail = h[k - 1]
    while tail == 0:
        tail += h[j]
        j -= 1
    # h[j+1..k-1] holds `tail` seeds, at least one
    h[j] += 1
    for q in range(j + 1, k):
        h[q] = 0
    h[k - 1] = tail - 1


@njit(cache=True, inline="always")
def first_in_level(h, k, t):
    """The first vector of level ``t``: every seed in the last house."""
    for j in range(k):
        h[j] = 0
    h[k - 1] = t


@njit(cache=True, inline="always")
def unrank_in_level(t, c, k, binom, h):
    """Write into ``h`` the house vector of index ``c`` within level ``t``
    (lexicographic order; the inverse of a within-level rank)."""
    rem = t
    for j in range(k - 1):
        parts = k - j
        v = 0
        while True:
            with_v = binom[rem - v + parts - 2, parts - 2]  # first part == v: the rest in parts - 1
            if c < with_v:
                break
            c -= with_v
            v += 1
        h[j] = v
        rem -= v
    h[k - 1] = rem

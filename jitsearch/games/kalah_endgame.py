"""Kalah endgame databases by retrograde analysis (seed-count levels).

For Kalah with m houses and a rule variant, the database holds, for every
distribution of at most ``max_seeds`` seeds over the 2m houses and either
player to move, the *rest of the game* under perfect play: player 0's final
margin minus the current store difference (stores do not matter for what
follows, so positions are keyed on the houses only).

Positions with t seeds are ranked in lexicographic order of the house
vector (pits 1..m, then m+2..2m+1) among all compositions of t into 2m parts,
after every position with fewer seeds. A move either lowers the seed count
(a seed reached a store, a capture, the end) or keeps it; in that case the
mover's sowing stayed on its own side, so the first house that changed (the
one sown from) went down and the child comes earlier in the order. Building
each level in rank order therefore finds every child's value already known:
one pass, no iteration to a fixpoint.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .kalah import apply_move


def binomial_table(n_max: int, k_max: int) -> np.ndarray:
    c = np.zeros((n_max + 1, k_max + 1), dtype=np.int64)
    for n in range(n_max + 1):
        c[n, 0] = 1
        for k in range(1, min(n, k_max) + 1):
            c[n, k] = c[n - 1, k - 1] + (c[n - 1, k] if k <= n - 1 else 0)
    return c


def database_size(houses: int, max_seeds: int) -> int:
    """Entries per player: every distribution of 0..max_seeds seeds over 2m houses."""
    k = 2 * houses
    c = binomial_table(max_seeds + k, k)
    return int(c[max_seeds + k, k])  # sum over t <= S of C(t + k - 1, k - 1)


@njit(cache=True, inline="always")
def rank_houses(board, m, binom):
    """Index of the board's house vector among all with the same or fewer seeds."""
    k = 2 * m
    t = 0
    for i in range(1, m + 1):
        t += board[i]
    for i in range(m + 2, 2 * m + 2):
        t += board[i]
    idx = binom[t + k - 1, k]  # positions with fewer seeds: sum_{u < t} C(u + k - 1, k - 1)
    rem = t
    for j in range(k - 1):
        pit = j + 1 if j < m else j + 2
        v = board[pit]
        parts = k - j  # parts left, this one included
        # compositions of rem into `parts` parts whose first part is < v
        idx += binom[rem + parts - 1, parts - 1] - binom[rem - v + parts - 1, parts - 1]
        rem -= v
    return idx


@njit(cache=True)
def _build(m, max_seeds, empty_capture, binom, values):
    k = 2 * m
    n = 2 * m + 2
    h = np.zeros(k, dtype=np.int64)
    board = np.zeros(n, dtype=np.int32)
    child = np.zeros(n, dtype=np.int32)
    for t in range(max_seeds + 1):
        count = binom[t + k - 1, k - 1]
        for j in range(k):
            h[j] = 0
        h[k - 1] = t
        for c in range(count):
            if c > 0:  # lexicographic successor
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
            for j in range(k):
                board[j + 1 if j < m else j + 2] = h[j]
            board[0] = 0
            board[m + 1] = 0
            idx = binom[t + k - 1, k] + c
            for player in range(2):
                first = 1 if player == 0 else m + 2
                best = 127 if player == 1 else -127
                any_move = False
                for pit in range(first, first + m):
                    if board[pit] == 0:
                        continue
                    any_move = True
                    for i in range(n):
                        child[i] = board[i]
                    nxt = apply_move(child, m, player, pit, empty_capture)
                    v = child[m + 1] - child[0]
                    if nxt >= 0:
                        v += values[nxt, rank_houses(child, m, binom)]
                    if player == 0:
                        if v > best:
                            best = v
                    elif v < best:
                        best = v
                if not any_move:
                    best = 0  # not a position of play (a side is empty); never looked up
                values[player, idx] = best


def default_cache_dir():
    """``$XDG_CACHE_HOME/jitsearch/kalah-endgame`` (``~/.cache`` when unset)."""
    import os
    from pathlib import Path

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jitsearch" / "kalah-endgame"


def build_endgame_database(houses: int, max_seeds: int, empty_capture: bool = False, *,
                           max_bytes: int = 1 << 30, cache_dir=None) -> dict:
    """Values (int8[2, size]: player to move, house ranking) of the rest of
    the game for every position with at most ``max_seeds`` seeds in the
    houses; see the module docstring. With ``cache_dir`` the values are
    loaded from there when present (``loaded`` is then True) and saved
    there after a build."""
    from pathlib import Path

    from ..trees.memory import check_bytes

    if houses < 1 or max_seeds < 0:
        raise ValueError("houses must be >= 1 and max_seeds >= 0")
    if max_seeds > 127:
        raise ValueError("max_seeds must be <= 127 (values are int8)")
    size = database_size(houses, max_seeds)
    check_bytes(2 * size, max_bytes, f"an endgame database of {size:,} positions per player",
                "lower the endgame seeds (--endgame-seeds) or raise --max-memory")
    binom = binomial_table(max_seeds + 2 * houses, 2 * houses)
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"kalah-m{houses}-s{max_seeds}-{'empty' if empty_capture else 'standard'}-v1.npy"
        if path.exists():
            try:
                values = np.load(path)
            except (OSError, ValueError):
                values = None  # a damaged file: build again
            if values is not None and values.shape == (2, size) and values.dtype == np.int8:
                return {"houses": houses, "max_seeds": max_seeds, "empty_capture": bool(empty_capture),
                        "binom": binom, "values": values, "loaded": True}
    values = np.zeros((2, size), dtype=np.int8)
    _build(houses, max_seeds, bool(empty_capture), binom, values)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, values)
        tmp.replace(path)  # atomic: an interrupted save leaves no half file
    return {"houses": houses, "max_seeds": max_seeds, "empty_capture": bool(empty_capture), "binom": binom,
            "values": values, "loaded": False}

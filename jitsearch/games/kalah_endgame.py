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
one pass, no iteration to a fixpoint. The build runs in resumable chunks
(:func:`_build_chunk`), so Ctrl-C, a deadline and progress reports are
handled between them.

Cache files (``kalah-m{m}-s{S}-{standard|empty}-v2.npz``) hold the values
and a JSON ``meta`` record (format, parameters, shape, dtype and a blake2b
checksum of the values); a file whose record or checksum does not match is
never trusted but rebuilt, with an :class:`EndgameCacheWarning`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

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
def _build_chunk(m, max_seeds, empty_capture, binom, values, h, regs, budget):
    """Fill ``values`` for up to ``budget`` positions, resumably.

    ``regs`` (int64[2]) is the next position: (seed level t, index c within
    the level, in lexicographic order); ``h`` (int64[2m]) holds the house
    vector of position c - 1 when c > 0. Both belong to the caller and are
    advanced, so repeated calls fill the database exactly as one call does;
    the build is over when ``regs[0] > max_seeds``. Returns the number of
    positions filled.
    """
    k = 2 * m
    n = 2 * m + 2
    board = np.zeros(n, dtype=np.int32)
    child = np.zeros(n, dtype=np.int32)
    t = regs[0]
    c = regs[1]
    done = 0
    while t <= max_seeds and done < budget:
        count = binom[t + k - 1, k - 1]
        if c == 0:
            for j in range(k):
                h[j] = 0
            h[k - 1] = t
        else:  # lexicographic successor of position c - 1
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
        done += 1
        c += 1
        if c == count:
            t += 1
            c = 0
    regs[0] = t
    regs[1] = c
    return done


def default_cache_dir():
    """``$XDG_CACHE_HOME/jitsearch/kalah-endgame`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jitsearch" / "kalah-endgame"


FORMAT_VERSION = 2
_CHUNK_SECONDS = 0.3
_PROGRESS_SECONDS = 1.0
_HASH_BLOCK = 1 << 24


class EndgameCacheWarning(UserWarning):
    """A cached endgame database was unusable (rebuilt) or could not be saved."""


def cache_path(cache_dir, houses: int, max_seeds: int, empty_capture: bool) -> Path:
    """The file a database is cached in: ``kalah-m{m}-s{S}-{standard|empty}-v2.npz``."""
    variant = "empty" if empty_capture else "standard"
    return Path(cache_dir) / f"kalah-m{houses}-s{max_seeds}-{variant}-v{FORMAT_VERSION}.npz"


def values_checksum(values: np.ndarray) -> str:
    """blake2b of the values' bytes (C order), hashed in blocks."""
    digest = hashlib.blake2b(digest_size=32)
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    for i in range(0, flat.size, _HASH_BLOCK):
        digest.update(flat[i:i + _HASH_BLOCK].data)
    return digest.hexdigest()


def _meta(houses, max_seeds, empty_capture, size):
    return {"format": FORMAT_VERSION, "game": "kalah-endgame", "houses": int(houses), "max_seeds": int(max_seeds),
            "empty_capture": bool(empty_capture), "shape": [2, int(size)], "dtype": "int8"}


def _load_cached(path: Path, expected: dict):
    """(values, None) from a verified cache file, else (None, why not)."""
    size = expected["shape"][1]
    try:
        with np.load(path, allow_pickle=False) as f:
            if sorted(f.files) != ["meta", "values"]:
                return None, "unexpected contents"
            meta = json.loads(str(f["meta"][()]))
            if not isinstance(meta, dict) or any(meta.get(k) != v for k, v in expected.items()):
                return None, "made for other parameters or another format"
            if f.zip.getinfo("values.npy").file_size > 2 * size + 4096:
                return None, "values of the wrong size"  # checked before reading them
            values = f["values"]
    except Exception as exc:  # noqa: BLE001 - any unreadable file (EOFError, BadZipFile, ValueError, ...) is rebuilt
        return None, f"unreadable: {type(exc).__name__}: {exc}"
    if values.shape != (2, size) or values.dtype != np.int8:
        return None, "values of the wrong shape or type"
    if values_checksum(values) != meta.get("blake2b"):
        return None, "checksum mismatch (damaged values)"
    return values, None


def _check_cache_dir(directory: Path) -> None:
    """Fail before a long build when ``directory`` cannot hold the cache."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"cannot write the endgame cache directory {directory} "
                         f"({exc.strerror or type(exc).__name__}): choose a writable directory or build without "
                         f"a cache (--no-endgame-cache, endgame_cache_dir=None)") from None


def _save(path: Path, values: np.ndarray, meta: dict) -> None:
    """Write to a unique temporary file in the same directory, then rename
    it over ``path`` (atomic: readers see the old file or the new one, and
    two processes building the same database never share a file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, values=values, meta=np.array(json.dumps(meta)))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def build_endgame_database(houses: int, max_seeds: int, empty_capture: bool = False, *,
                           max_bytes: int = 1 << 30, cache_dir=None, progress=None, deadline: float | None = None,
                           chunk_positions: int | None = None) -> dict | None:
    """Values (int8[2, size]: player to move, house ranking) of the rest of
    the game for every position with at most ``max_seeds`` seeds in the
    houses; see the module docstring.

    With ``cache_dir`` the values are loaded from there when a verified file
    is present (``loaded`` is then True) and saved there after a build. A
    cache file is verified against its parameters and a blake2b checksum of
    the values; a damaged, truncated or empty one gives an
    :class:`EndgameCacheWarning` and is rebuilt. A cache directory that
    cannot be created or written raises ``ValueError`` before the build;
    a save that fails afterwards (disk full) only warns.

    The build runs in chunks of ``chunk_positions`` positions (default: about
    0.3 s each, from the measured rate), so Ctrl-C stops it within a chunk
    (the KeyboardInterrupt propagates; nothing is written). ``progress``, if
    given, is called as ``progress(positions_done, positions_total,
    seconds)`` about every second. ``deadline`` (a ``time.perf_counter()``
    value): when it passes before the build is over, the build stops and
    None is returned (nothing is cached).
    """
    from ..trees.memory import check_bytes
    from .kalah import MAX_HOUSES

    for name, value, lo, hi in (("houses", houses, 1, MAX_HOUSES), ("max_seeds", max_seeds, 0, 127)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    if chunk_positions is not None and (isinstance(chunk_positions, bool) or
                                        not isinstance(chunk_positions, (int, np.integer)) or chunk_positions < 1):
        raise ValueError(f"chunk_positions must be an integer >= 1, got {chunk_positions!r}")
    houses, max_seeds = int(houses), int(max_seeds)
    size = database_size(houses, max_seeds)
    fix = "lower the endgame seeds (--endgame-seeds) or raise --max-memory"
    check_bytes(2 * size, max_bytes, f"an endgame database of {size:,} positions per player", fix)
    binom = binomial_table(max_seeds + 2 * houses, 2 * houses)
    meta = _meta(houses, max_seeds, empty_capture, size)
    path = None
    if cache_dir is not None:
        path = cache_path(cache_dir, houses, max_seeds, empty_capture)
        if path.exists():
            values, why = _load_cached(path, meta)
            if values is not None:
                return {"houses": houses, "max_seeds": max_seeds, "empty_capture": bool(empty_capture),
                        "binom": binom, "values": values, "loaded": True}
            warnings.warn(f"endgame database {path} is not usable ({why}): rebuilding it", EndgameCacheWarning,
                          stacklevel=2)
        _check_cache_dir(path.parent)
    try:
        values = np.zeros((2, size), dtype=np.int8)
    except (MemoryError, ValueError):
        raise ValueError(f"could not allocate an endgame database of {size:,} positions per player: {fix}") from None
    h = np.zeros(2 * houses, dtype=np.int64)
    regs = np.zeros(2, dtype=np.int64)
    start = last = time.perf_counter()
    budget = chunk_positions or 20_000
    done = 0
    while regs[0] <= max_seeds:
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            return None
        if progress is not None and now - last >= _PROGRESS_SECONDS:
            progress(done, size, now - start)
            last = now
        done += int(_build_chunk(houses, max_seeds, bool(empty_capture), binom, values, h, regs, budget))
        elapsed = time.perf_counter() - start
        if chunk_positions is None and elapsed > 0.01:
            budget = int(min(max(done / elapsed * _CHUNK_SECONDS, 1000), 1 << 40))
    if progress is not None:
        progress(done, size, time.perf_counter() - start)
    if path is not None:
        meta["blake2b"] = values_checksum(values)
        try:
            _save(path, values, meta)
        except OSError as exc:
            warnings.warn(f"could not save the endgame database to {path} ({exc.strerror or exc}): not cached",
                          EndgameCacheWarning, stacklevel=2)
    return {"houses": houses, "max_seeds": max_seeds, "empty_capture": bool(empty_capture), "binom": binom,
            "values": values, "loaded": False}

"""Kalah endgame databases by retrograde analysis (seed-count levels).

For Kalah with m houses and a rule variant, the database holds, for every
distribution of at most ``max_seeds`` seeds over the 2m houses and either
player to move, the *rest of the game* under perfect play: player 0's final
margin minus the current store difference (stores do not matter for what
follows, so positions are keyed on the houses only).

Positions with t seeds are ranked in lexicographic order of the house
vector (pits 1..m, then m+2..2m+1) among all compositions of t into 2m parts,
after every position with fewer seeds.

Order of the build
------------------
A move either lowers the seed count in the houses (a seed reached the
mover's store, a capture, the final sweep) or keeps it. It keeps it only
when every seed stayed on the mover's side short of its store: the house
sown from (s seeds, distance d > s to the store) is emptied and the next s
houses towards the store gain one seed each; a lap always passes the
mover's store, and a capture or an end of game removes seeds. Two
consequences:

* the first house that changed (the one sown from) went down, so the child
  ranks *earlier in the same level* -- the serial build, in rank order,
  always finds a child's value already known (:func:`_build_chunk`);
* the *potential* ``P = sum(seeds * distance to the owner's store)`` drops
  by ``s (s + 1) / 2 >= 1``. The parallel build therefore runs each level t
  in waves of equal P (P = 0 .. t m): the children of a wave lie in a
  smaller level or in an earlier wave of the same level, so the positions
  of one wave are independent and are spread over threads with ``prange``
  (:func:`_build_wave_part`). Each entry is computed from the same children
  by the same code, so the values are bit for bit those of the serial build
  (the tests compare them). Ranks within a level are *not* a valid parallel
  order: a child may rank earlier in the same level.

Storage
-------
With a cache directory the values are an ``.npy`` file
(``kalah-m{m}-s{S}-{standard|empty}-v3.npy``), built in place through a
memory map (the file is preallocated first, so a full disk fails before
the build rather than in the middle of it) and opened with
``np.load(mmap_mode="c")``: pages are read on demand, never the whole file
at once, and a stray write by the caller stays private and never reaches
the file. Beside it a JSON record (``.json``) holds the format, the
parameters, the shape, the dtype and a SHA-256 checksum of every 16 MiB
block of the values (``block_sha256``; records of older builds hold one
blake2b of the whole instead).

Every process verifies a file before it trusts it: the blocks are hashed in
parallel threads (about 1.5-2 GB/s a core) the first time the process opens
the file, and again whenever its identity (device, inode, size, mtime and
ctime) changes: ctime cannot be set back from user space, so a file
rewritten in place and its mtime restored (``cp -p``) is hashed again even
within one process. Files up to ``VERIFY_ALWAYS_BYTES`` (64 MiB) are hashed
on every open; ``verify="full"`` hashes on every open whatever the size. A
file or record that does not match is never trusted but rebuilt, with an
:class:`EndgameCacheWarning` naming the first damaged block. The search
itself checks every value it reads (the rest of the game splits the seeds
left in the houses, so a value ``v`` with ``r`` seeds left has ``|v| <= r``
and the parity of ``r``); one that breaks this stops the solve with
:class:`EndgameDatabaseError`, and :func:`mark_damaged` flags the record so
that the next use rebuilds it. Writes are atomic: the values and the record
go to unique temporary files, renamed over the cache (values first; a
reader between the two renames sees a record whose checksums do not
match, and rebuilds). A builder holds an advisory lock (``flock``) on its
temporary file; a temporary left by a builder that died (``kill -9``) holds
no lock and is removed by the next build of the same database.

An interrupted build (a deadline, Ctrl-C) writes nothing, unless
``resumable=True``: its finished part is then kept as
``...-v3.partial.npy`` with a ``.partial.json`` record (the position the
build had reached and a checksum of the whole partial file, taken after it
was flushed); the next resumable build claims it by an atomic rename,
checks the checksum and goes on from there. Positions of a half-done wave
are simply computed again. A partial file is never opened as a database.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

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


@njit(cache=True, inline="always")
def _solve_position(board, child, m, empty_capture, binom, values, idx):
    """Write ``values[:, idx]``: the rest of the game at ``board`` for either
    player to move, from the children's entries (already known)."""
    n = 2 * m + 2
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


@njit(cache=True, inline="always")
def _next_in_level(h, k):
    """Advance the house vector ``h`` (int[2m], not the last of its level)
    to its lexicographic successor among vectors with the same seed count."""
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
def _first_in_level(h, k, t):
    for j in range(k):
        h[j] = 0
    h[k - 1] = t


@njit(cache=True, inline="always")
def _potential(h, m):
    """sum(seeds * distance to the owner's store): drops with every move that
    keeps the seed count (see the module docstring)."""
    p = 0
    for j in range(m):
        p += h[j] * (m - j)
        p += h[m + j] * (m - j)
    return p


@njit(cache=True, inline="always")
def _unrank_in_level(t, c, k, binom, h):
    """The house vector of index ``c`` among level ``t`` (inverse of the
    within-level part of :func:`rank_houses`)."""
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


@njit(cache=True)
def _build_chunk(m, max_seeds, empty_capture, binom, values, h, regs, budget):
    """Fill ``values`` for up to ``budget`` positions in rank order, resumably.

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
            _first_in_level(h, k, t)
        else:
            _next_in_level(h, k)
        for j in range(k):
            board[j + 1 if j < m else j + 2] = h[j]
        _solve_position(board, child, m, empty_capture, binom, values, binom[t + k - 1, k] + c)
        done += 1
        c += 1
        if c == count:
            t += 1
            c = 0
    regs[0] = t
    regs[1] = c
    return done


@njit(cache=True)
def _level_waves(m, t, binom, wave_start, order):
    """Sort level ``t`` by potential: ``order`` (the level's size) gets the
    within-level indices, wave by wave (P = 0, 1, ..., in rank order inside a
    wave); wave P is ``order[wave_start[P]:wave_start[P + 1]]``
    (``wave_start``: int64[t m + 2])."""
    k = 2 * m
    count = binom[t + k - 1, k - 1]
    h = np.zeros(k, dtype=np.int64)
    wave_start[:] = 0
    _first_in_level(h, k, t)
    for c in range(count):
        if c > 0:
            _next_in_level(h, k)
        wave_start[_potential(h, m) + 1] += 1
    for p in range(1, wave_start.size):
        wave_start[p] += wave_start[p - 1]
    cursor = wave_start[:-1].copy()
    _first_in_level(h, k, t)
    for c in range(count):
        if c > 0:
            _next_in_level(h, k)
        p = _potential(h, m)
        order[cursor[p]] = c
        cursor[p] += 1


@njit(cache=True)
def _build_in_order(m, t, empty_capture, binom, values, order, lo, hi):
    """Fill the positions ``order[lo:hi]`` of level ``t`` one after another
    (any run of the wave order: earlier waves first), on one thread."""
    k = 2 * m
    n = 2 * m + 2
    base = binom[t + k - 1, k]
    h = np.zeros(k, dtype=np.int64)
    board = np.zeros(n, dtype=np.int32)
    child = np.zeros(n, dtype=np.int32)
    for i in range(lo, hi):
        c = np.int64(order[i])
        _unrank_in_level(t, c, k, binom, h)
        for j in range(k):
            board[j + 1 if j < m else j + 2] = h[j]
        _solve_position(board, child, m, empty_capture, binom, values, base + c)


@njit(cache=True, parallel=True)
def _build_wave_part(m, t, empty_capture, binom, values, order, lo, hi, num_blocks):
    """Fill the positions ``order[lo:hi]`` of level ``t`` (all of one wave,
    so independent of each other), in ``num_blocks`` blocks over threads."""
    k = 2 * m
    n = 2 * m + 2
    base = binom[t + k - 1, k]
    total = hi - lo
    for b in prange(num_blocks):
        start = lo + total * b // num_blocks
        stop = lo + total * (b + 1) // num_blocks
        h = np.zeros(k, dtype=np.int64)
        board = np.zeros(n, dtype=np.int32)
        child = np.zeros(n, dtype=np.int32)
        for i in range(start, stop):
            c = np.int64(order[i])
            _unrank_in_level(t, c, k, binom, h)
            for j in range(k):
                board[j + 1 if j < m else j + 2] = h[j]
            _solve_position(board, child, m, empty_capture, binom, values, base + c)


def default_cache_dir():
    """``$XDG_CACHE_HOME/jitsearch/kalah-endgame`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jitsearch" / "kalah-endgame"


FORMAT_VERSION = 3
#: Cache files up to this size are hashed on every open; bigger ones once a process (and when they change).
VERIFY_ALWAYS_BYTES = 64 * 1024**2
#: The values are checksummed in blocks of this many bytes, a SHA-256 each, hashed in parallel threads.
BLOCK_BYTES = 1 << 24
#: Threads that hash a big file's blocks at most.
HASH_THREADS = 16
#: Measured serial build rate (positions, both players, per second) at m = 6, S = 12..16,
#: on a shared 2-core x86-64 machine: 2.35-2.7e6; other m scale as 6/m. Only for estimates.
BUILD_RATE_M6 = 2.5e6
#: Past this many positions a build reads its children at random from memory far beyond the caches: measured
#: 1.9-2.1e6 positions/s with 2 threads at S = 20, 22 and 26 (m = 6, 226 M to 2.7 G positions), about half the
#: small-database rate, so the estimate is scaled by BIG_DATABASE_SLOWDOWN there.
BIG_DATABASE_POSITIONS = 10**8
BIG_DATABASE_SLOWDOWN = 0.53
#: Measured: the parallel kernel on one thread runs at 0.78-0.80 of the serial one
#: (unranking, scattered order within a wave).
PARALLEL_ONE_THREAD = 0.8
#: Assumed (not measured: the 2-core machine had one core busy) gain per extra thread.
PARALLEL_EFFICIENCY = 0.9
_CHUNK_SECONDS = 0.3
#: Waves with fewer positions run on one thread (several in a row): a parallel launch costs a barrier.
_PARALLEL_WAVE = 4096
_PROGRESS_SECONDS = 1.0
_HASH_BLOCK = 1 << 24
#: A record holds 65 bytes of JSON per 16 MiB block: 4 MiB covers databases of 1 TiB.
_RECORD_MAX_BYTES = 1 << 22
#: One parallel kernel at a time: not every Numba threading layer allows concurrent launches.
_PARALLEL_LOCK = threading.Lock()


#: Resolved path -> identity of the file (see :func:`_identity`) when this process last verified it.
_VERIFIED: dict = {}
_VERIFIED_LOCK = threading.Lock()


class EndgameCacheWarning(UserWarning):
    """A cached endgame database was unusable (rebuilt) or could not be saved."""


class EndgameDatabaseError(ValueError):
    """A search read a value from an endgame database that no position can
    have: the database is damaged (its record is then flagged, so the next
    use rebuilds it)."""


def cache_path(cache_dir, houses: int, max_seeds: int, empty_capture: bool) -> Path:
    """The values file of a database: ``kalah-m{m}-s{S}-{standard|empty}-v3.npy``
    (its record is the same name with ``.json``, see :func:`record_path`)."""
    variant = "empty" if empty_capture else "standard"
    return Path(cache_dir) / f"kalah-m{houses}-s{max_seeds}-{variant}-v{FORMAT_VERSION}.npy"


def record_path(values_path) -> Path:
    """The JSON record (parameters, checksum, stamp) beside a values file."""
    return Path(values_path).with_suffix(".json")


def partial_path(values_path) -> Path:
    """Where an interrupted resumable build keeps its values (``.partial.npy``)."""
    p = Path(values_path)
    return p.with_name(p.stem + ".partial.npy")


def values_checksum(values: np.ndarray) -> str:
    """blake2b of the values' bytes (C order), hashed in 16 MiB blocks (a
    memory map is read block by block, never copied whole)."""
    digest = hashlib.blake2b(digest_size=32)
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    for i in range(0, flat.size, _HASH_BLOCK):
        digest.update(flat[i:i + _HASH_BLOCK].data)
    return digest.hexdigest()


def _hash_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, HASH_THREADS))


def block_checksums(values: np.ndarray, block_bytes: int | None = None, threads: int | None = None) -> list:
    """SHA-256 (hex) of every ``block_bytes`` block (default
    :data:`BLOCK_BYTES`) of the values' bytes (C order), hashed in parallel
    threads (hashlib releases the GIL); a memory map is read block by block,
    never copied whole."""
    block_bytes = block_bytes or BLOCK_BYTES
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    starts = list(range(0, flat.size, block_bytes))

    def one(i):
        return hashlib.sha256(flat[i:i + block_bytes]).hexdigest()

    n = min(threads or _hash_threads(), len(starts))
    if n <= 1:
        return [one(i) for i in starts]
    pool = ThreadPoolExecutor(n, thread_name_prefix="jitsearch-hash")
    try:
        return list(pool.map(one, starts))
    finally:  # on Ctrl-C: the blocks being hashed finish (milliseconds), the others are dropped
        pool.shutdown(wait=False, cancel_futures=True)


def _verify_values(values: np.ndarray, record: dict):
    """None when the values match the record's checksums, else why not."""
    blocks = record.get("block_sha256")
    if blocks is None:  # a record of an older build: one blake2b of the whole
        if values_checksum(values) != record.get("blake2b"):
            return "checksum mismatch (damaged values)"
        return None
    block = record.get("block_bytes")
    if (isinstance(block, bool) or not isinstance(block, int) or not 4096 <= block <= 1 << 34
            or not isinstance(blocks, list) or len(blocks) != -(-values.nbytes // block)):
        return "bad block checksums in the record"
    for i, (got, want) in enumerate(zip(block_checksums(values, block), blocks)):
        if got != want:
            lo = i * block
            hi = min(lo + block, values.nbytes) - 1
            return (f"checksum mismatch in block {i} of {len(blocks)} (value bytes {lo:,}..{hi:,}): "
                    f"damaged values")
    return None


def _identity(path) -> tuple:
    """(device, inode, size, mtime_ns, ctime_ns): any write to the file
    changes it, even when the mtime is set back (ctime cannot be)."""
    st = os.stat(path)
    return int(st.st_dev), int(st.st_ino), int(st.st_size), int(st.st_mtime_ns), int(st.st_ctime_ns)


def _remember_verified(path: Path, identity) -> None:
    with _VERIFIED_LOCK:
        if identity is None:
            _VERIFIED.pop(str(Path(path).resolve()), None)
        else:
            _VERIFIED[str(Path(path).resolve())] = identity


def needs_verification(path, verify: str = "auto") -> bool:
    """Whether opening the database file at ``path`` will hash it first (for
    a notice before a long verification); False when there is no file."""
    try:
        identity = _identity(path)
    except OSError:
        return False
    with _VERIFIED_LOCK:
        known = _VERIFIED.get(str(Path(path).resolve()))
    return verify == "full" or identity[2] <= VERIFY_ALWAYS_BYTES or known != identity


def mark_damaged(values_path, why: str) -> None:
    """Flag the record of the database at ``values_path`` as damaged (a
    search found an impossible value in it): its next use rebuilds it."""
    path = Path(values_path)
    _remember_verified(path, None)
    with contextlib.suppress(Exception):
        record = _read_record(record_path(path))
        _write_json_atomic(record_path(path), dict(record, damaged=str(why)[:500]))


def _npy_header_bytes(size: int) -> int:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "|i1", "fortran_order": False, "shape": (2, int(size))})
    return buf.tell()


def _check_houses_seeds(houses, max_seeds):
    from .kalah import MAX_HOUSES

    for name, value, lo, hi in (("houses", houses, 1, MAX_HOUSES), ("max_seeds", max_seeds, 0, 127)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise ValueError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return int(houses), int(max_seeds)


def _check_threads(threads):
    most = int(numba.config.NUMBA_NUM_THREADS)
    if threads is None:
        return int(numba.get_num_threads())
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= most:
        raise ValueError(f"threads must be an integer in 1..{most} (NUMBA_NUM_THREADS), got {threads!r}")
    return int(threads)


def estimate_endgame_build(houses: int, max_seeds: int, *, parallel: bool = True, threads: int | None = None) -> dict:
    """Size and time of :func:`build_endgame_database`, before building.

    Returns a dict: ``positions`` (entries per player), ``values_bytes``
    (``2 * positions``, int8), ``file_bytes`` (the exact size of the cached
    ``.npy`` file, header included; the ``.json`` record beside it is under
    1 KiB), ``scratch_bytes`` (the parallel build's wave order of the largest
    level: 4 bytes a position there, 8 past 2**32 positions; 0 serial),
    ``ram_bytes`` (values + scratch: what ``max_bytes`` is checked against),
    ``threads`` and ``seconds`` (from :data:`BUILD_RATE_M6` and
    :data:`PARALLEL_EFFICIENCY`, measured or assumed on one machine: a rough
    guide, not a promise).
    """
    houses, max_seeds = _check_houses_seeds(houses, max_seeds)
    threads = _check_threads(threads) if parallel else 1
    size = database_size(houses, max_seeds)
    k = 2 * houses
    largest = int(binomial_table(max_seeds + k, k)[max_seeds + k - 1, k - 1])
    scratch = (4 if largest < 1 << 32 else 8) * largest if parallel else 0
    rate = BUILD_RATE_M6 * 6 / houses
    if parallel:
        rate *= PARALLEL_ONE_THREAD * (1 + PARALLEL_EFFICIENCY * (threads - 1))
    if size > BIG_DATABASE_POSITIONS:
        rate *= BIG_DATABASE_SLOWDOWN
    return {"positions": size, "values_bytes": 2 * size, "file_bytes": _npy_header_bytes(size) + 2 * size,
            "scratch_bytes": scratch, "ram_bytes": 2 * size + scratch, "threads": threads,
            "seconds": size / rate}


def _meta(houses, max_seeds, empty_capture, size):
    return {"format": FORMAT_VERSION, "game": "kalah-endgame", "houses": int(houses), "max_seeds": int(max_seeds),
            "empty_capture": bool(empty_capture), "shape": [2, int(size)], "dtype": "int8"}


def _read_record(path: Path):
    """The JSON record at ``path`` (a dict), or raise."""
    with open(path, "rb") as fh:
        data = fh.read(_RECORD_MAX_BYTES + 1)
    if len(data) > _RECORD_MAX_BYTES:
        raise ValueError("record too large")
    record = json.loads(data.decode("utf-8"))
    if not isinstance(record, dict):
        raise ValueError("record is not an object")
    return record


def _write_json_atomic(path: Path, record: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".", suffix=".json.tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(record, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _open_values(path, size):
    """The values file mapped copy-on-write, after checking its size, shape and dtype."""
    values = np.load(path, mmap_mode="c", allow_pickle=False)
    if not isinstance(values, np.ndarray) or values.shape != (2, size) or values.dtype != np.int8:
        raise ValueError("values of the wrong shape or type")
    return values


def _load_cached(path: Path, expected: dict, verify: str):
    """(values, None) from a verified cache file (memory-mapped), else (None, why not)."""
    size = expected["shape"][1]
    try:
        record = _read_record(record_path(path))
    except FileNotFoundError:
        return None, "no record (parameters and checksum) beside it"
    except Exception as exc:  # noqa: BLE001 - any unreadable record is rebuilt
        return None, f"unreadable record: {type(exc).__name__}: {exc}"
    if any(record.get(k) != v for k, v in expected.items()):
        return None, "made for other parameters or another format"
    if record.get("complete") is not True:
        return None, "the record of an unfinished build"
    if record.get("damaged"):
        return None, f"a search found an impossible value in it ({record['damaged']})"
    try:
        identity = _identity(path)
        if identity[2] != _npy_header_bytes(size) + 2 * size:
            return None, "values of the wrong size"  # checked before mapping them
        values = _open_values(path, size)
    except Exception as exc:  # noqa: BLE001 - any unreadable file (EOFError, ValueError, OSError, ...) is rebuilt
        return None, f"unreadable: {type(exc).__name__}: {exc}"
    if needs_verification(path, verify):
        why = _verify_values(values, record)
        if why is not None:
            _remember_verified(path, None)
            return None, why
        try:
            if _identity(path) != identity:
                return None, "the file changed while it was being verified"
        except OSError as exc:
            return None, f"unreadable: {exc}"
        if identity[2] > VERIFY_ALWAYS_BYTES:
            _remember_verified(path, identity)
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


def _check_disk(directory: Path, needed: int, what: str, fix: str) -> None:
    from ..trees.memory import format_bytes

    free = shutil.disk_usage(directory).free
    if needed > free:
        raise ValueError(f"{what} needs {format_bytes(needed)} on disk, above the {format_bytes(free)} free "
                         f"in {directory}: {fix}")


#: A temporary file of a build is stale (removable) when no builder holds its lock and it is older than this.
STALE_TEMP_SECONDS = 5.0
#: Temporary values file -> the open descriptor holding its advisory lock, while its build runs.
_TEMP_LOCKS: dict = {}


def _hold(tmp, fd=None) -> None:
    """Take the advisory lock of a build's temporary file (kept until :func:`_release`)."""
    try:
        import fcntl
    except ImportError:  # no flock: stale temporaries are then only removed by age
        if fd is not None:
            os.close(fd)
        return
    if fd is None:
        fd = os.open(tmp, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    _TEMP_LOCKS[str(tmp)] = fd


def _release(tmp) -> None:
    fd = _TEMP_LOCKS.pop(str(tmp), None)
    if fd is not None:
        os.close(fd)


def remove_stale_temporaries(values_path) -> list:
    """Remove the temporary files that builds of the database at
    ``values_path`` left behind when they died (``kill -9``, a crash): a
    ``.npy.tmp`` whose advisory lock no builder holds, or a ``.json.tmp``,
    older than :data:`STALE_TEMP_SECONDS`. Returns the removed paths."""
    path = Path(values_path)
    removed = []
    try:
        import fcntl
    except ImportError:
        fcntl = None
    now = time.time()
    for tmp in list(path.parent.glob(glob_escape(path.stem) + ".*.tmp")):
        if not tmp.name.endswith((".npy.tmp", ".json.tmp")) or str(tmp) in _TEMP_LOCKS:
            continue
        try:
            if now - tmp.stat().st_ctime < STALE_TEMP_SECONDS:
                continue
            if tmp.name.endswith(".npy.tmp") and fcntl is not None:
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while a live builder holds it
                except OSError:
                    continue
                finally:
                    os.close(fd)
            tmp.unlink()
            removed.append(tmp)
        except OSError:
            continue
    return removed


def glob_escape(text: str) -> str:
    import glob

    return glob.escape(text)


def _new_values_file(path: Path, size: int):
    """A unique temporary ``.npy`` beside ``path``, preallocated, mapped for
    writing, its advisory lock held (see :func:`remove_stale_temporaries`)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".", suffix=".npy.tmp")
    try:
        _hold(tmp, fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        values = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.int8, shape=(2, size))
        with open(tmp, "r+b") as fh:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fh.fileno(), 0, _npy_header_bytes(size) + 2 * size)
    except BaseException:
        _release(tmp)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp), values


def _flush(values, file_path) -> None:
    values.flush()
    with open(file_path, "r+b") as fh:
        os.fsync(fh.fileno())


def _claim_partial(path: Path, meta: dict, size: int):
    """Take over a resumable build's partial file: (file, values, regs, mode),
    or None when there is none or it is not usable (then it is removed)."""
    ppath = partial_path(path)
    prec = record_path(ppath)
    try:
        record = _read_record(prec)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001
        warnings.warn(f"partial endgame build {ppath} is not usable (unreadable record: {exc}): starting afresh",
                      EndgameCacheWarning, stacklevel=3)
        with contextlib.suppress(OSError):
            os.unlink(prec)
        return None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".", suffix=".npy.tmp")
    os.close(fd)
    try:
        os.replace(ppath, tmp)  # atomic: of two builders only one gets it
        _hold(tmp)
    except FileNotFoundError:
        os.unlink(tmp)
        return None
    with contextlib.suppress(OSError):
        os.unlink(prec)
    why = None
    values = None
    regs = record.get("regs")
    if any(record.get(k) != v for k, v in meta.items()):
        why = "made for other parameters or another format"
    elif (record.get("complete") is not False or record.get("mode") not in ("serial", "parallel")
          or not isinstance(regs, list) or len(regs) != 2
          or not all(isinstance(r, int) and not isinstance(r, bool) for r in regs)
          or not 0 <= regs[0] <= meta["max_seeds"]
          or not 0 <= regs[1] < math.comb(regs[0] + 2 * meta["houses"] - 1, 2 * meta["houses"] - 1)):
        why = "bad position record"
    else:
        try:
            if os.path.getsize(tmp) != _npy_header_bytes(size) + 2 * size:
                raise ValueError("values of the wrong size")
            values = np.lib.format.open_memmap(tmp, mode="r+")
            if values.shape != (2, size) or values.dtype != np.int8:
                raise ValueError("values of the wrong shape or type")
            if values_checksum(values) != record.get("blake2b"):
                why = "checksum mismatch (damaged values)"
        except Exception as exc:  # noqa: BLE001
            why = f"unreadable: {type(exc).__name__}: {exc}"
    if why is not None:
        warnings.warn(f"partial endgame build {ppath} is not usable ({why}): starting afresh",
                      EndgameCacheWarning, stacklevel=3)
        del values
        _release(tmp)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return None
    return Path(tmp), values, regs, record["mode"]


def _keep_partial(path: Path, tmp: Path, values, meta: dict, regs, mode: str) -> None:
    """Save an interrupted build as ``.partial.npy`` + ``.partial.json``."""
    _flush(values, tmp)
    record = dict(meta, complete=False, regs=[int(regs[0]), int(regs[1])], mode=mode,
                  blake2b=values_checksum(values))
    ppath = partial_path(path)
    os.replace(tmp, ppath)
    _write_json_atomic(record_path(ppath), record)


def _set_threads(n):
    """numba.set_num_threads for this Python thread; returns the previous value."""
    before = numba.get_num_threads()
    numba.set_num_threads(n)
    return before


def build_endgame_database(houses: int, max_seeds: int, empty_capture: bool = False, *,
                           max_bytes: int = 1 << 30, cache_dir=None, progress=None, deadline: float | None = None,
                           chunk_positions: int | None = None, parallel: bool = True, threads: int | None = None,
                           resumable: bool = False, verify: str = "auto") -> dict | None:
    """Values (int8[2, size]: player to move, house ranking) of the rest of
    the game for every position with at most ``max_seeds`` seeds in the
    houses; see the module docstring.

    Parameters
    ----------
    houses, max_seeds, empty_capture : the board size, the largest seed
        count in the houses (0..127) and the rule variant.
    max_bytes : ceiling for the values and the build's scratch
        (``estimate_endgame_build(...)["ram_bytes"]``); a memory-mapped
        database is read at random while it is built and searched, so it
        should fit in memory too. Refused with ``ValueError`` when above.
    cache_dir : when given, the values are loaded from there when a verified
        file is present (``loaded`` is then True, the values a
        copy-on-write memory map) and otherwise built straight into a file
        there. Refused with ``ValueError`` before the build when the
        directory cannot be written or lacks the free space of the file.
        A damaged, truncated or empty file gives an
        :class:`EndgameCacheWarning` and is rebuilt.
    progress : ``progress(positions_done, positions_total, seconds)``,
        about every second and once at the end.
    deadline : a ``time.perf_counter()`` value; when it passes before the
        build is over, the build stops and None is returned.
    chunk_positions : positions per kernel call (default: about 0.3 s each,
        from the measured rate); Ctrl-C and the deadline act between calls.
    parallel, threads : build each level in waves of equal potential spread
        over ``threads`` threads (default: Numba's current count); the
        values are bit for bit those of the serial build (``parallel=False``).
    resumable : with ``cache_dir``, an interrupted build (deadline or
        Ctrl-C) keeps its finished part as ``.partial.npy``/``.partial.json``
        and a later resumable build goes on from it; without it an
        interrupted build leaves nothing behind and starts over.
    verify : ``"auto"`` (hash files up to :data:`VERIFY_ALWAYS_BYTES` on each
        open, bigger ones on the first open in this process and whenever
        the file changed since) or ``"full"`` (hash on every open).

    Returns
    -------
    dict with ``houses``, ``max_seeds``, ``empty_capture``, ``binom``,
    ``values``, ``loaded``, ``path`` (the cache file, None when not cached)
    and ``estimate`` (:func:`estimate_endgame_build`); or None when the
    deadline stopped the build.
    """
    from ..trees.memory import check_bytes

    houses, max_seeds = _check_houses_seeds(houses, max_seeds)
    if chunk_positions is not None and (isinstance(chunk_positions, bool) or
                                        not isinstance(chunk_positions, (int, np.integer)) or chunk_positions < 1):
        raise ValueError(f"chunk_positions must be an integer >= 1, got {chunk_positions!r}")
    if verify not in ("auto", "full"):
        raise ValueError(f"verify must be 'auto' or 'full', got {verify!r}")
    threads = _check_threads(threads)
    estimate = estimate_endgame_build(houses, max_seeds, parallel=parallel, threads=threads)
    size = estimate["positions"]
    fix = "lower the endgame seeds (--endgame-seeds) or raise --max-memory"
    check_bytes(estimate["ram_bytes"], max_bytes, f"an endgame database of {size:,} positions per player", fix)
    binom = binomial_table(max_seeds + 2 * houses, 2 * houses)
    meta = _meta(houses, max_seeds, empty_capture, size)
    result = {"houses": houses, "max_seeds": max_seeds, "empty_capture": bool(empty_capture), "binom": binom,
              "estimate": estimate}
    path = tmp = None
    regs = np.zeros(2, dtype=np.int64)
    mode = "parallel" if parallel else "serial"
    if cache_dir is not None:
        path = cache_path(cache_dir, houses, max_seeds, empty_capture)
        if path.exists() or record_path(path).exists():
            values, why = _load_cached(path, meta, verify)
            if values is not None:
                return dict(result, values=values, loaded=True, path=str(path))
            warnings.warn(f"endgame database {path} is not usable ({why}): rebuilding it", EndgameCacheWarning,
                          stacklevel=2)
        _check_cache_dir(path.parent)
        remove_stale_temporaries(path)  # left by builders that died: they would hold the disk space below
        _check_disk(path.parent, estimate["file_bytes"], f"an endgame database of {size:,} positions per player",
                    "free some space or choose another cache directory (--endgame-cache-dir, or "
                    "endgame_cache_dir= in the API)")
        claimed = _claim_partial(path, meta, size) if resumable else None
        if claimed is not None:
            tmp, values, old_regs, old_mode = claimed
            # levels below the recorded one are complete in either order; inside it, only in the same order
            regs[:] = old_regs if old_mode == mode else (old_regs[0], 0)
        else:
            try:
                tmp, values = _new_values_file(path, size)
            except OSError as exc:
                raise ValueError(f"could not create the endgame database file in {path.parent} "
                                 f"({exc.strerror or exc}): free some space or choose another cache "
                                 f"directory") from None
    else:
        try:
            values = np.zeros((2, size), dtype=np.int8)
        except (MemoryError, ValueError):
            raise ValueError(f"could not allocate an endgame database of {size:,} positions per player: {fix}") \
                from None
    try:
        return _finish_build(result, path, tmp, values, meta, regs, mode, resumable, houses, max_seeds,
                             empty_capture, binom, parallel, threads, chunk_positions, progress, deadline, size)
    finally:
        if tmp is not None:
            _release(tmp)


def _finish_build(result, path, tmp, values, meta, regs, mode, resumable, houses, max_seeds, empty_capture, binom,
                  parallel, threads, chunk_positions, progress, deadline, size):
    """The build itself and its saving (``tmp``: the locked temporary file, or None without a cache)."""
    try:
        finished = _run_build(houses, max_seeds, bool(empty_capture), binom, values, regs, parallel, threads,
                              chunk_positions, progress, deadline, size)
    except BaseException as exc:
        if tmp is not None:
            if resumable and isinstance(exc, KeyboardInterrupt):
                _keep_partial(path, tmp, values, meta, regs, mode)
            else:
                del values
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise
    if not finished:
        if tmp is not None:
            if resumable:
                _keep_partial(path, tmp, values, meta, regs, mode)
            else:
                del values
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        return None
    if tmp is None:
        return dict(result, values=values, loaded=False, path=None)
    try:
        _flush(values, tmp)
        record = dict(meta, complete=True, block_bytes=BLOCK_BYTES, block_sha256=block_checksums(values))
        os.replace(tmp, path)
        _write_json_atomic(record_path(path), record)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)  # the map stays readable: these values are still returned, just not cached
        warnings.warn(f"could not save the endgame database to {path} ({exc.strerror or exc}): not cached",
                      EndgameCacheWarning, stacklevel=3)
        return dict(result, values=values, loaded=False, path=None)
    del values
    with contextlib.suppress(OSError):  # hashed above: trusted in this process until the file changes
        _remember_verified(path, _identity(path))
    return dict(result, values=_open_values(path, size), loaded=False, path=str(path))


def _run_build(m, max_seeds, empty_capture, binom, values, regs, parallel, threads, chunk_positions, progress,
               deadline, size):
    """Fill ``values`` from position ``regs`` (level, index in the mode's
    order) on; ``regs`` always names a position before which everything is
    done. Returns False when the deadline stopped it."""
    k = 2 * m
    start = last = time.perf_counter()
    budget = chunk_positions or 20_000
    first = int(binom[regs[0] + k - 1, k]) + int(regs[1]) if regs[0] <= max_seeds else size
    h = np.zeros(k, dtype=np.int64)
    if not parallel and regs[1] > 0:
        _unrank_in_level(int(regs[0]), int(regs[1]) - 1, k, binom, h)  # the serial kernel's successor state
    wave_start = order = None
    order_level = -1
    while regs[0] <= max_seeds:
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            return False
        t = int(regs[0])
        done = int(binom[t + k - 1, k]) + int(regs[1])
        if progress is not None and now - last >= _PROGRESS_SECONDS:
            progress(done, size, now - start)
            last = now
        if not parallel:
            _build_chunk(m, max_seeds, empty_capture, binom, values, h, regs, budget)
        else:
            count = int(binom[t + k - 1, k - 1])
            if order_level != t:
                wave_start = np.zeros(t * m + 2, dtype=np.int64)
                order = np.empty(count, dtype=np.uint32 if count < 1 << 32 else np.int64)
                _level_waves(m, t, binom, wave_start, order)
                order_level = t
            i = int(regs[1])
            w = int(np.searchsorted(wave_start, i, side="right"))  # wave w - 1 holds i
            if threads > 1 and wave_start[w] - wave_start[w - 1] >= _PARALLEL_WAVE:
                hi = min(int(wave_start[w]), i + budget)
                with _PARALLEL_LOCK:
                    before = _set_threads(threads)
                    try:
                        _build_wave_part(m, t, empty_capture, binom, values, order, i, hi, 4 * threads)
                    finally:
                        numba.set_num_threads(before)
            else:  # small waves one after another on this thread: a barrier each would cost more
                hi = int(wave_start[w])
                while hi < count and hi - i < budget and (
                        threads == 1 or wave_start[w + 1] - wave_start[w] < _PARALLEL_WAVE):
                    w += 1
                    hi = int(wave_start[w])
                hi = min(hi, i + budget)
                _build_in_order(m, t, empty_capture, binom, values, order, i, hi)
            if hi == count:
                regs[0], regs[1] = t + 1, 0
                order = wave_start = None
                order_level = -1
            else:
                regs[1] = hi
        elapsed = time.perf_counter() - start
        if chunk_positions is None and elapsed > 0.01:
            done = (int(binom[regs[0] + k - 1, k]) + int(regs[1]) if regs[0] <= max_seeds else size) - first
            budget = int(min(max(done / elapsed * _CHUNK_SECONDS, 1000), 1 << 40))
    if progress is not None:
        progress(size, size, time.perf_counter() - start)
    return True

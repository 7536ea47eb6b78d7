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
With a cache directory the database is a memory-mapped ``.npy`` file with a
JSON record, verified before it is trusted: see :mod:`.endgame_files`.
"""

from __future__ import annotations

import threading
import time
import warnings

import numba
import numpy as np
from numba import njit, prange

from ...trees.memory import check_bytes
from .endgame_files import (EndgameCacheWarning, cache_path, check_cache_dir, check_disk, claim_partial,
                            database_meta, discard_temporary, keep_partial, load_cached, new_values_file,
                            npy_header_bytes, open_values, record_path, remove_stale_temporaries, save_database)
from ..compositions import binomial_table, first_in_level, next_in_level, unrank_in_level
from .state import MAX_HOUSES, apply_move


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
def _potential(h, m):
    """sum(seeds * distance to the owner's store): drops with every move that
    keeps the seed count (see the module docstring)."""
    p = 0
    for j in range(m):
        p += h[j] * (m - j)
        p += h[m + j] * (m - j)
    return p


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
            first_in_level(h, k, t)
        else:
            next_in_level(h, k)
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
    first_in_level(h, k, t)
    for c in range(count):
        if c > 0:
            next_in_level(h, k)
        wave_start[_potential(h, m) + 1] += 1
    for p in range(1, wave_start.size):
        wave_start[p] += wave_start[p - 1]
    cursor = wave_start[:-1].copy()
    first_in_level(h, k, t)
    for c in range(count):
        if c > 0:
            next_in_level(h, k)
        p = _potential(h, m)
        order[cursor[p]] = c
        cursor[p] += 1


@njit(cache=True, inline="always")
def _solve_run(m, t, empty_capture, binom, values, order, lo, hi, base, h, board, child):
    """Solve the positions ``order[lo:hi]`` of level ``t`` (ranks from ``base``) in order, with the
    scratch ``h`` (2m house counts), ``board`` and ``child``."""
    for i in range(lo, hi):
        c = np.int64(order[i])
        unrank_in_level(t, c, 2 * m, binom, h)
        for j in range(2 * m):
            board[j + 1 if j < m else j + 2] = h[j]
        _solve_position(board, child, m, empty_capture, binom, values, base + c)


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
    _solve_run(m, t, empty_capture, binom, values, order, lo, hi, base, h, board, child)


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
        _solve_run(m, t, empty_capture, binom, values, order, start, stop, base, h, board, child)


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
#: Measured speedup of the parallel build over its own one-thread run (m = 6, S = 14, 9.7 M positions a
#: player; medians of 3) on a 16-core Intel Xeon (the lent H100 machine, Numba's omp layer): 1.52x on 2
#: threads, 2.83x on 4, 4.56x on 8, 6.33x on 16 (bench/results/many_core_scaling_h100.json). It replaced an
#: assumed 0.9 gain per extra thread (14.5x on 16), which was 2.3x too optimistic there: the waves' random
#: reads of children saturate memory, not the cores.
PARALLEL_SPEEDUP = ((1, 1.0), (2, 1.52), (4, 2.83), (8, 4.56), (16, 6.33))
_CHUNK_SECONDS = 0.3
#: Waves with fewer positions run on one thread (several in a row): a parallel launch costs a barrier.
_PARALLEL_WAVE = 4096
_PROGRESS_SECONDS = 1.0
#: One parallel kernel at a time: not every Numba threading layer allows concurrent launches.
_PARALLEL_LOCK = threading.Lock()


def _check_houses_seeds(houses, max_seeds):
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


def parallel_speedup(threads: int) -> float:
    """The parallel build's measured speedup on ``threads`` threads over one
    (:data:`PARALLEL_SPEEDUP`, interpolated linearly between the measured
    counts; no further gain assumed past the largest)."""
    points = PARALLEL_SPEEDUP
    if threads >= points[-1][0]:
        return points[-1][1]
    for (t0, s0), (t1, s1) in zip(points, points[1:]):
        if threads <= t1:
            return s0 + (s1 - s0) * (max(threads, t0) - t0) / (t1 - t0)
    return 1.0


def estimate_endgame_build(houses: int, max_seeds: int, *, parallel: bool = True, threads: int | None = None) -> dict:
    """Size and time of :func:`build_endgame_database`, before building.

    Returns a dict: ``positions`` (entries per player), ``values_bytes``
    (``2 * positions``, int8), ``file_bytes`` (the exact size of the cached
    ``.npy`` file, header included; the ``.json`` record beside it is under
    1 KiB), ``scratch_bytes`` (the parallel build's wave order of the largest
    level: 4 bytes a position there, 8 past 2**32 positions; 0 serial),
    ``ram_bytes`` (values + scratch: what ``max_bytes`` is checked against),
    ``threads`` and ``seconds`` (from :data:`BUILD_RATE_M6` and
    :func:`parallel_speedup`, each measured on one machine: a rough guide,
    not a promise).
    """
    houses, max_seeds = _check_houses_seeds(houses, max_seeds)
    threads = _check_threads(threads) if parallel else 1
    size = database_size(houses, max_seeds)
    k = 2 * houses
    largest = int(binomial_table(max_seeds + k, k)[max_seeds + k - 1, k - 1])
    scratch = (4 if largest < 1 << 32 else 8) * largest if parallel else 0
    rate = BUILD_RATE_M6 * 6 / houses
    if parallel:
        rate *= PARALLEL_ONE_THREAD * parallel_speedup(threads)
    if size > BIG_DATABASE_POSITIONS:
        rate *= BIG_DATABASE_SLOWDOWN
    return {"positions": size, "values_bytes": 2 * size, "file_bytes": npy_header_bytes(size) + 2 * size,
            "scratch_bytes": scratch, "ram_bytes": 2 * size + scratch, "threads": threads,
            "seconds": size / rate}


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
    meta = database_meta(houses, max_seeds, empty_capture, size)
    result = {"houses": houses, "max_seeds": max_seeds, "empty_capture": bool(empty_capture), "binom": binom,
              "estimate": estimate}
    path = tmp = None
    regs = np.zeros(2, dtype=np.int64)
    mode = "parallel" if parallel else "serial"
    if cache_dir is not None:
        path = cache_path(cache_dir, houses, max_seeds, empty_capture)
        if path.exists() or record_path(path).exists():
            values, why = load_cached(path, meta, verify)
            if values is not None:
                return dict(result, values=values, loaded=True, path=str(path))
            warnings.warn(f"endgame database {path} is not usable ({why}): rebuilding it", EndgameCacheWarning,
                          stacklevel=2)
        check_cache_dir(path.parent)
        remove_stale_temporaries(path)  # left by builders that died: they would hold the disk space below
        check_disk(path.parent, estimate["file_bytes"], f"an endgame database of {size:,} positions per player",
                    "free some space or choose another cache directory (--endgame-cache-dir, or "
                    "endgame_cache_dir= in the API)")
        claimed = claim_partial(path, meta, size) if resumable else None
        if claimed is not None:
            tmp, values, old_regs, old_mode = claimed
            # levels below the recorded one are complete in either order; inside it, only in the same order
            regs[:] = old_regs if old_mode == mode else (old_regs[0], 0)
        else:
            try:
                tmp, values = new_values_file(path, size)
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
    finally:  # saved or kept as a partial: renamed, so only its lock is released; else removed
        discard_temporary(tmp)


def _finish_build(result, path, tmp, values, meta, regs, mode, resumable, houses, max_seeds, empty_capture, binom,
                  parallel, threads, chunk_positions, progress, deadline, size):
    """The build itself and its saving (``tmp``: the locked temporary file, or None without a cache)."""
    try:
        finished = _run_build(houses, max_seeds, bool(empty_capture), binom, values, regs, parallel, threads,
                              chunk_positions, progress, deadline, size)
    except BaseException as exc:
        if tmp is not None and resumable and isinstance(exc, KeyboardInterrupt):
            keep_partial(path, tmp, values, meta, regs, mode)
        raise  # the caller's finally removes a temporary not kept
    if not finished:
        if tmp is not None and resumable:
            keep_partial(path, tmp, values, meta, regs, mode)
        return None
    if tmp is None:
        return dict(result, values=values, loaded=False, path=None)
    if not save_database(path, tmp, values, meta):  # the map stays readable: returned, just not cached
        return dict(result, values=values, loaded=False, path=None)
    del values
    return dict(result, values=open_values(path, size), loaded=False, path=str(path))


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
        unrank_in_level(int(regs[0]), int(regs[1]) - 1, k, binom, h)  # the serial kernel's successor state
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

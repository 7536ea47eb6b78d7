"""Uniformly random Kalah playouts: one description, compiled for the CPU
here (the CPU twin) and for CUDA in :mod:`jitsearch.kernels.cuda_playouts`.

A playout from (board, player) plays uniformly random legal moves to the end
of the game; draw ``i`` of its stream (:mod:`jitsearch.kernels.rng`, keyed by
(seed, state index, playout index)) picks the ``i``-th move among the legal
ones in house order. Outcome for the player to move at the start: win, draw
or loss, and player 0's final margin.

The batched leaf evaluation, ``evaluate(boards[K, 2m+2], players[K],
playouts_per_state, seed) -> (wins, draws, losses, margin_sum)`` per state
(counts for each state's player to move, margins from player 0's view), is
the interface MCTS uses; the CPU serves it here, the GPU in the CUDA module.
On the CPU (:func:`cpu_kernels`, one kernel compiled per m, all with
bit-identical results): boards of up to MAX_SIMD_HOUSES = 7 houses run as
one 16-lane int16 vector (:func:`simd_rules.build_simd`, two games in lock
step) where the CPU has AVX2 and BMI2 and $JITSEARCH_SIMD is not 0; else
MIN_PACKED_HOUSES..MAX_PACKED_HOUSES on packed boards
(:func:`kalah_rules.build_packed`), others on the generic rules, which the
GPU runs too.
"""

from __future__ import annotations

import functools
import hashlib
import os

import numpy as np
from numba import njit
from numba.core import serialize

from .._checks import check_bool, check_int, check_seed, kernel_array, max_threads
from .._threads import run_in_pool
from ..games.kalah import rules as kalah_rules
from ..games.kalah import simd_rules
from ..games.kalah.simd_rules import vget
from ..games.kalah.state import MAX_HOUSES, MAX_SEEDS, RULES
from . import rng
from .sentinels import NO_PLY_CAP


def make_playout(jit, rules, gen):
    """Compile one playout with ``jit`` from compiled ``rules`` and ``gen``.

    ``playout(board, m, player, empty_capture, key, max_plies, moves)`` plays
    in place on ``board`` (the caller's buffer), ``moves`` is scratch of at
    least m ints; returns (plies played, player to move at the end or -1).
    """
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    draw = gen.draw
    below = gen.below

    def playout(board, m, player, empty_capture, key, max_plies, moves):
        plies = 0
        while player >= 0 and plies < max_plies:
            count = legal_moves(board, m, player, moves)
            pit = moves[below(draw(key, plies), count)]
            player = apply_move(board, m, player, pit, empty_capture)
            plies += 1
        return plies, player

    return jit(playout)


def stable_jit(jit):
    """``jit`` (a Numba CPU decorator) whose dispatchers get a UUID derived
    from their function's content (code, closure, options) instead of a
    random one. Numba's on-disk cache keys a closure by its pickled cell
    contents, and a pickled dispatcher carries its UUID: a kernel built by a
    factory (closing over dispatchers, e.g. the per-m packed kernels) would
    otherwise miss the cache in every new process and compile again (seconds
    each). Every dispatcher such a kernel closes over, directly or not, must
    come from a ``stable_jit``."""
    def wrap(fn):
        d = jit(fn)
        try:  # private Numba API: without it the kernels still work, they only recompile per process
            blob = serialize.dumps((fn, d.targetoptions, d.locals))
            d._set_uuid("jitsearch-" + hashlib.sha256(blob).hexdigest())
        except Exception:
            pass
        return d

    return wrap


def add_outcome(wins, draws, losses, margin_sum, plies_out, s, mover, margin, plies):
    """Add one playout's result to state ``s``'s counters on the CPU: its
    outcome for ``mover`` (the player to move at the state), player 0's
    final ``margin`` and its ``plies`` (the GPU kernels add the same with
    atomics: :func:`jitsearch.kernels.cuda_playouts.add_outcome_atomic`)."""
    plies_out[s] += plies
    margin_sum[s] += margin
    mine = margin if mover == 0 else -margin
    if mine > 0:
        wins[s] += 1
    elif mine < 0:
        losses[s] += 1
    else:
        draws[s] += 1


CPU_RULES = RULES  # the one CPU compilation of the rules
CPU_RNG = rng.build(njit(cache=True))
#: The rules as the playout compiles them: inlined into it at Numba's IR level
#: (``inline='always'``), which measured 1.08x the playouts/s of calls into
#: separately compiled functions (same results: the same source, only inlined).
INLINE_RULES = kalah_rules.build(njit(cache=True, inline="always"))
INLINE_RNG = rng.build(stable_jit(njit(cache=True, inline="always")))
playout = make_playout(njit(cache=True), INLINE_RULES, CPU_RNG)
stream_key = CPU_RNG.stream_key


@njit(cache=True, nogil=True)
def evaluate_range(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                   wins, draws, losses, margin_sum, plies_out):
    """Playouts of states ``first..last-1`` (the CPU twin of the kernel)."""
    n = 2 * m + 2
    board = np.empty(n, dtype=boards.dtype)
    moves = np.empty(m, dtype=np.int64)
    for s in range(first, last):
        w = 0
        d = 0
        lo = 0
        total = 0
        plies = 0
        mover = players[s]
        for p in range(playouts_per_state):
            for i in range(n):
                board[i] = boards[s, i]
            key = stream_key(seed, s, p)
            k, _ = playout(board, m, np.int64(mover), empty_capture, key, np.int64(NO_PLY_CAP), moves)
            plies += k
            margin = board[m + 1] - board[0]
            total += margin
            mine = margin if mover == 0 else -margin
            if mine > 0:
                w += 1
            elif mine < 0:
                lo += 1
            else:
                d += 1
        wins[s] = w
        draws[s] = d
        losses[s] = lo
        margin_sum[s] = total
        plies_out[s] = plies


def make_packed_margin(jit, houses, gen):
    """One playout to the end on a packed board (:func:`kalah_rules.build_packed`)
    for ``houses`` m (1..MAX_PACKED_HOUSES): returns (``words``,
    ``packed_margin``), where ``packed_margin(w, board, player, empty_capture,
    key) -> (player 0's final margin, plies)`` loads ``board`` (2m+2 seed
    counts, left unchanged) into ``w`` (scratch of ``words`` uint64) and plays
    from it with ``player`` (0 or 1) to move; draw k of ``key``'s stream picks
    the below(draw, count)-th legal house in house order, so the margin is
    bit-identical to :func:`make_playout`'s with no ply cap."""
    rules = kalah_rules.build_packed(stable_jit(njit(cache=True, inline="always")), houses)
    load, legal_count, step, final_margin = rules.load, rules.legal_count, rules.step, rules.margin
    draw, below = gen.draw, gen.below

    def packed_margin(w, board, player, empty_capture, key):
        side0, side1 = load(w, board)
        k = 0
        while player >= 0:
            count, mask = legal_count(w, player)
            player, side0, side1 = step(w, player, side0, side1, mask, below(draw(key, k), count), empty_capture)
            k += 1
        return final_margin(w, side0, side1), k

    return rules.words, jit(packed_margin)


def make_packed_evaluate(jit, houses, gen):
    """``evaluate_range`` for boards of ``houses`` m (1..MAX_PACKED_HOUSES) on
    packed boards (:func:`make_packed_margin`): the same arguments (``m``
    must equal ``houses``) and bit-identical results, about 1.5x faster on
    one core at Kalah(6,4)."""
    words, packed_margin = make_packed_margin(stable_jit(njit(cache=True, inline="always")), houses, gen)
    key_of = gen.stream_key

    def evaluate_packed(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                        wins, draws, losses, margin_sum, plies_out):
        w = np.zeros(words, dtype=np.uint64)
        for s in range(first, last):
            won = 0
            drawn = 0
            lost = 0
            total = 0
            plies = 0
            mover = players[s]
            for p in range(playouts_per_state):
                margin, k = packed_margin(w, boards[s], mover, empty_capture, key_of(seed, s, p))
                plies += k
                total += margin
                mine = margin if mover == 0 else -margin
                if mine > 0:
                    won += 1
                elif mine < 0:
                    lost += 1
                else:
                    drawn += 1
            wins[s] = won
            draws[s] = drawn
            losses[s] = lost
            margin_sum[s] = total
            plies_out[s] = plies

    return jit(evaluate_packed)


def _make_parallel(range_fn):
    """``range_fn`` over ``chunks`` contiguous ranges of the states, run on
    ``threads`` threads of the process-wide pool (the kernels are ``nogil``;
    a serial kernel compiles in a fraction of a ``parallel=True`` one's
    time, and each state's result does not depend on the split)."""

    def evaluate_parallel(boards, players, m, empty_capture, playouts_per_state, seed, chunks,
                          wins, draws, losses, margin_sum, plies_out, threads=None):
        k = boards.shape[0]
        step = (k + chunks - 1) // chunks
        jobs = [(boards, players, m, empty_capture, playouts_per_state, seed, lo, min(k, lo + step),
                 wins, draws, losses, margin_sum, plies_out) for lo in range(0, k, step)]
        run_in_pool(range_fn, jobs, workers=threads)

    return evaluate_parallel


_evaluate_parallel = _make_parallel(evaluate_range)


def make_simd_margin(jit, houses, gen):
    """:func:`make_packed_margin`'s twin on a board vector
    (:func:`simd_rules.build_simd`, m = ``houses`` <= MAX_SIMD_HOUSES, AVX2 and
    BMI2 only): returns (1, ``simd_margin``) with the same signature and
    bit-identical results (``w`` is unused scratch)."""
    rules = simd_rules.build_simd(stable_jit(njit(cache=True, inline="always")), houses)
    load, step, final_margin = rules.load, rules.step, rules.margin
    draw = gen.draw

    def simd_margin(w, board, player, empty_capture, key):
        v, side0, side1 = load(board)
        k = 0
        while player >= 0:
            v, player, side0, side1 = step(v, player, side0, side1, draw(key, k), empty_capture)
            k += 1
        return final_margin(v, side0, side1), k

    return 1, jit(simd_margin)


def make_simd_playout(jit, houses, gen):
    """:func:`make_playout`'s ``playout`` (same signature, same results: the
    board left as the generic rules leave it, swept when the game ended, as
    it stands when ``max_plies`` cut the playout) on a board vector, for m =
    ``houses`` <= MAX_SIMD_HOUSES (AVX2 and BMI2 only); ``moves`` is unused."""
    rules = simd_rules.build_simd(stable_jit(njit(cache=True, inline="always")), houses)
    load, step = rules.load, rules.step
    draw = gen.draw
    m = houses
    n = 2 * m + 2

    def simd_playout(board, m_, player, empty_capture, key, max_plies, moves):
        v, side0, side1 = load(board)
        player = np.int64(player)
        plies = 0
        while player >= 0 and plies < max_plies:
            v, player, side0, side1 = step(v, player, side0, side1, draw(key, plies), empty_capture)
            plies += 1
        for i in range(n):
            board[i] = vget(v, i)
        if player < 0:  # the final sweep: each side's houses to its owner's store
            board[m + 1] += side0
            board[0] += side1
            for i in range(m):
                board[1 + i] = 0
                board[m + 2 + i] = 0
        return plies, player

    return jit(simd_playout)


def make_simd_evaluate(jit, houses, gen):
    """``evaluate_range`` on board vectors (:func:`simd_rules.build_simd`, m =
    ``houses`` <= MAX_SIMD_HOUSES; AVX2 and BMI2 only): the same arguments
    (``m`` must equal ``houses``) and bit-identical results. Two playouts
    run in lock step (their dependency chains overlap); the next playout in
    (state, playout) order takes the place of whichever ends, so per-state
    sums are the same whatever the order the playouts end in."""
    inline = stable_jit(njit(cache=True, inline="always"))
    rules = simd_rules.build_simd(inline, houses)
    load, step, final_margin = rules.load, rules.step, rules.margin
    draw, key_of = gen.draw, gen.stream_key

    def start(boards, players, seed, first, playouts_per_state, job):
        s = first + job // playouts_per_state
        v, side0, side1 = load(boards[s])
        return s, v, players[s], side0, side1, key_of(seed, s, job % playouts_per_state)

    start, record = inline(start), inline(add_outcome)

    def evaluate_simd(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                      wins, draws, losses, margin_sum, plies_out):
        for s in range(first, last):
            wins[s] = 0
            draws[s] = 0
            losses[s] = 0
            margin_sum[s] = 0
            plies_out[s] = 0
        jobs = (last - first) * playouts_per_state
        if jobs <= 0:
            return
        # job j: playout j % playouts_per_state of state first + j // playouts_per_state
        sa, va, pa, a0, a1, ka = start(boards, players, seed, first, playouts_per_state, 0)
        na = 0
        next_job = 1
        if jobs > 1:
            sb, vb, pb, b0, b1, kb = start(boards, players, seed, first, playouts_per_state, 1)
            nb = 0
            next_job = 2
            while True:
                va, pa, a0, a1 = step(va, pa, a0, a1, draw(ka, na), empty_capture)
                vb, pb, b0, b1 = step(vb, pb, b0, b1, draw(kb, nb), empty_capture)
                na += 1
                nb += 1
                if pa >= 0 and pb >= 0:
                    continue
                if pa < 0:
                    record(wins, draws, losses, margin_sum, plies_out, sa, players[sa], final_margin(va, a0, a1), na)
                    if next_job == jobs:  # B goes on alone (as A)
                        sa, va, pa, a0, a1, ka, na = sb, vb, pb, b0, b1, kb, nb
                        break
                    sa, va, pa, a0, a1, ka = start(boards, players, seed, first, playouts_per_state, next_job)
                    na = 0
                    next_job += 1
                if pb < 0:
                    record(wins, draws, losses, margin_sum, plies_out, sb, players[sb], final_margin(vb, b0, b1), nb)
                    if next_job == jobs:  # A goes on alone
                        break
                    sb, vb, pb, b0, b1, kb = start(boards, players, seed, first, playouts_per_state, next_job)
                    nb = 0
                    next_job += 1
        while pa >= 0:
            va, pa, a0, a1 = step(va, pa, a0, a1, draw(ka, na), empty_capture)
            na += 1
        record(wins, draws, losses, margin_sum, plies_out, sa, players[sa], final_margin(va, a0, a1), na)

    return jit(evaluate_simd)


#: The packed kernels from this many houses on (below, the generic ones measured
#: as fast or faster: 0.76x packed/generic at m = 1, 0.97x at 2, 1.06x at 3, 1.32x at 4).
MIN_PACKED_HOUSES = 4
#: Environment variable: ``0`` turns the vector (SIMD) kernels off; unset or
#: ``1``, they run wherever the CPU has AVX2 and BMI2 and m <= MAX_SIMD_HOUSES.
SIMD_ENV = "JITSEARCH_SIMD"


def simd_enabled() -> bool:
    """True when the board-vector kernels may run: the CPU has AVX2 and BMI2
    and $JITSEARCH_SIMD is not ``0`` (any value but 0/1 raises ValueError)."""
    flag = os.environ.get(SIMD_ENV, "1").strip()
    if flag not in ("0", "1", ""):
        raise ValueError(f"{SIMD_ENV} must be 0 (scalar kernels) or 1 (vector kernels where the CPU has them), "
                         f"got {flag!r}")
    return flag != "0" and simd_rules.host_has_simd()


#: The CPU playout kernels, fastest first (every one gives the same results).
KERNEL_KINDS = ("simd", "packed", "generic")


def cpu_playout_kind(m: int, simd: bool | None = None) -> str:
    """Which CPU playout kernel m houses get: ``"simd"`` (board vectors,
    1..MAX_SIMD_HOUSES, when ``simd``, default :func:`simd_enabled`),
    ``"packed"`` (MIN_PACKED_HOUSES..MAX_PACKED_HOUSES) or ``"generic"``."""
    if simd is None:
        simd = simd_enabled()
    if simd and 1 <= m <= simd_rules.MAX_SIMD_HOUSES:
        return "simd"
    if MIN_PACKED_HOUSES <= m <= kalah_rules.MAX_PACKED_HOUSES:
        return "packed"
    return "generic"


def available_kinds(m: int) -> tuple:
    """The kernel kinds that can run m houses on this CPU (``"simd"`` only when
    :func:`simd_enabled`; ``"packed"`` for 1..MAX_PACKED_HOUSES)."""
    kinds = []
    if simd_enabled() and 1 <= m <= simd_rules.MAX_SIMD_HOUSES:
        kinds.append("simd")
    if 1 <= m <= kalah_rules.MAX_PACKED_HOUSES:
        kinds.append("packed")
    return tuple(kinds) + ("generic",)


def check_kernel(m: int, kernel) -> str:
    """``kernel`` (None: :func:`cpu_playout_kind`) checked against
    :func:`available_kinds`; ValueError with the choices otherwise."""
    if kernel is None:
        return cpu_playout_kind(m)
    kinds = available_kinds(m)
    if kernel not in kinds:
        why = "" if kernel not in KERNEL_KINDS else f" for {m} houses on this CPU"
        raise ValueError(f"kernel must be one of {', '.join(kinds)}{why}, got {kernel!r}")
    return kernel


def cpu_kernels(m: int, kind: str | None = None):
    """(evaluate_range, its parallel twin) for m houses, of the ``kind``
    (default :func:`cpu_playout_kind`; all give identical results)."""
    return _cpu_kernels(m, cpu_playout_kind(m) if kind is None else kind)


@functools.lru_cache(maxsize=None)
def _cpu_kernels(m: int, kind: str):
    if kind == "simd":
        range_fn = make_simd_evaluate(stable_jit(njit(cache=True, nogil=True)), m, INLINE_RNG)
        return range_fn, _make_parallel(range_fn)
    if kind == "packed":
        range_fn = make_packed_evaluate(stable_jit(njit(cache=True, nogil=True)), m, INLINE_RNG)
        return range_fn, _make_parallel(range_fn)
    return evaluate_range, _evaluate_parallel


def cpu_cut_playout(m: int, kind: str | None = None):
    """The board-vector :func:`make_simd_playout` for m houses when ``kind``
    (default :func:`cpu_playout_kind`) is ``"simd"``, else None (the generic
    ``playout`` runs)."""
    return _cpu_cut_playout(m, cpu_playout_kind(m) if kind is None else kind)


@functools.lru_cache(maxsize=None)
def _cpu_cut_playout(m: int, kind: str):
    if kind == "simd":
        return make_simd_playout(stable_jit(njit(cache=True, inline="always")), m, INLINE_RNG)
    return None


def cpu_margin_kernel(m: int, kind: str | None = None):
    """(words, playout_margin) for MCTS's random playouts to the end with m
    houses and the kernel ``kind`` (default :func:`cpu_playout_kind`):
    :func:`make_simd_margin` or :func:`make_packed_margin` (same results),
    or None where the generic playout runs."""
    return _cpu_margin_kernel(m, cpu_playout_kind(m) if kind is None else kind)


@functools.lru_cache(maxsize=None)
def _cpu_margin_kernel(m: int, kind: str):
    if kind == "simd":
        return make_simd_margin(stable_jit(njit(cache=True, inline="always")), m, INLINE_RNG)
    if kind == "packed":
        return make_packed_margin(stable_jit(njit(cache=True, inline="always")), m, INLINE_RNG)
    return None


#: Playouts per state in one call: 1..MAX_PLAYOUTS_PER_STATE.
MAX_PLAYOUTS_PER_STATE = 1 << 20
#: States in one call: 1..MAX_STATES (their boards and five int64 counters each).
MAX_STATES = 1 << 24
#: Playouts in one call (states x playouts per state): at most MAX_PLAYOUTS_PER_CALL,
#: about an hour on one CPU core, seconds on a GPU.
MAX_PLAYOUTS_PER_CALL = 1 << 32
#: Bytes allocated per state by a call: a copy of its board (int32[n]), its
#: player (int64) and five int64 counters.
OUTPUT_BYTES_PER_STATE = 8 + 5 * 8


def check_work(states: int, playouts_per_state: int, what: str = "a playout batch") -> None:
    """Refuse a batch above the documented work limits (before anything is allocated)."""
    states = check_int("states", states, 1, MAX_STATES)
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    if states * playouts_per_state > MAX_PLAYOUTS_PER_CALL:
        raise ValueError(f"{what} of {states:,} states x {playouts_per_state:,} playouts = "
                         f"{states * playouts_per_state:,} playouts is above the limit of "
                         f"{MAX_PLAYOUTS_PER_CALL:,} per call: lower the states or the playouts")


def validate_batch(boards, players, playouts_per_state, seed):
    """Check a batch at the Python boundary; returns (boards int32[K, n], players int64[K], m).

    ``boards``: [K, 2m+2] (or one board [2m+2]) of non-negative integers,
    each a live game (both sides with seeds) of at most MAX_SEEDS seeds;
    ``players``: one 0/1 per board, or one for all; ``playouts_per_state``
    and K within :func:`check_work`; ``seed`` in [0, 2**64). The boards come
    back as a writable int32 array (a copy when needed).
    """
    from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    if isinstance(boards, (str, bytes)) or boards is None:
        raise ValueError(f"boards must be an integer array [K, 2m+2], got {type(boards).__name__}")
    try:
        b = np.asarray(boards)
    except Exception:  # noqa: BLE001
        raise ValueError("boards must be an integer array [K, 2m+2]") from None
    if b.ndim == 1:
        b = b[None, :]
    if b.ndim != 2 or b.shape[1] < 4 or b.shape[1] % 2:
        raise ValueError(f"boards must be [K, 2m+2] with m >= 1, got shape {b.shape}")
    if b.dtype.kind not in "iu":
        raise ValueError(f"boards must hold integers, got dtype {b.dtype}")
    m = b.shape[1] // 2 - 1
    if m > MAX_HOUSES:
        raise ValueError(f"at most {MAX_HOUSES} houses, got {m}")
    k = b.shape[0]
    if k > MAX_STATES:
        raise ValueError(f"at most {MAX_STATES:,} states per call, got {k:,}")
    if k:
        check_work(k, playouts_per_state)
    check_bytes(k * (4 * b.shape[1] + OUTPUT_BYTES_PER_STATE), DEFAULT_MAX_BYTES,
                f"a playout batch of {k:,} states", "evaluate fewer states per call")
    if b.size and b.min() < 0:
        raise ValueError("boards hold a negative seed count")
    if b.size and b.max() > MAX_SEEDS:
        raise ValueError(f"a board holds more than {MAX_SEEDS} seeds (the limit of a board)")
    if k and b.sum(axis=1, dtype=np.int64).max() > MAX_SEEDS:
        raise ValueError(f"a board holds more than {MAX_SEEDS} seeds (the limit of a board)")
    if isinstance(players, (str, bytes)) or players is None:
        raise ValueError(f"players must be 0 or 1 per board, got {players!r}")
    p = np.asarray(players)
    if p.dtype.kind not in "iu":
        raise ValueError(f"players must be integers 0 or 1, got dtype {p.dtype}")
    if p.ndim == 0:
        p = np.full(k, int(p))
    if p.shape != (k,):
        raise ValueError(f"players must have one entry per board ({k}), got shape {p.shape}")
    if p.size and not np.isin(p, (0, 1)).all():
        raise ValueError("players must be 0 or 1 (the player to move; finished games cannot be played out)")
    # a side with no seeds left means the game is over: nothing to play out
    side0 = b[:, 1:m + 1].sum(axis=1)
    side1 = b[:, m + 2:].sum(axis=1)
    if k and ((side0 == 0) | (side1 == 0)).any():
        raise ValueError("a board has an empty side: that game is already over")
    return kernel_array(b, np.int32), kernel_array(p, np.int64), m


def evaluate_cpu(boards, players, playouts_per_state: int, seed: int, *, empty_capture: bool = False,
                 threads: int = 1, kernel: str | None = None) -> dict:
    """Batched leaf evaluation on the CPU: per state (wins, draws, losses)
    for its player to move over ``playouts_per_state`` random playouts, the
    sum of player 0's final margins, and the plies played. Arguments are
    checked by :func:`validate_batch` (limits MAX_STATES,
    MAX_PLAYOUTS_PER_STATE, MAX_PLAYOUTS_PER_CALL), ``threads`` in 1..4 per
    core, ``kernel`` (None: the fastest, :func:`cpu_playout_kind`; or one of
    :func:`available_kinds`, for benchmarks: every kernel gives the same
    results); a bad one raises ``ValueError`` before any kernel runs."""
    b, p, m = validate_batch(boards, players, playouts_per_state, seed)
    empty_capture = check_bool("empty_capture", empty_capture)
    threads = check_int("threads", threads, 1, max_threads())
    kernel = check_kernel(m, kernel)
    k = b.shape[0]
    out = {name: np.zeros(k, dtype=np.int64) for name in ("wins", "draws", "losses", "margin_sum", "plies")}
    args = (b, p, m, bool(empty_capture), int(playouts_per_state), np.uint64(seed))
    res = (out["wins"], out["draws"], out["losses"], out["margin_sum"], out["plies"])
    range_fn, parallel_fn = cpu_kernels(m, kernel)
    if threads > 1 and k > 1:
        parallel_fn(*args, min(k, threads * 4), *res, threads)
    else:
        range_fn(*args, 0, k, *res)
    return out

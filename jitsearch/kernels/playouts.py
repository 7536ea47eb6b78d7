"""Kalah's array API of random playouts: ``evaluate_cpu(boards[K, 2m+2], players[K],
playouts_per_state, seed)`` per state (wins, draws, losses for its player to move, player 0's
margins summed, plies), and the Kalah playout its CUDA kernels compile.

A playout from (board, player) plays uniformly random legal moves to the end of the game; draw
``i`` of its stream (:mod:`jitsearch.kernels.rng`, keyed by (seed, state index, playout index))
picks the ``i``-th move among the legal ones in house order. The kernels (:func:`cpu_kernels`,
all bit-identical) are Kalah's fast paths (:mod:`jitsearch.games.kalah.fast`: board vectors
where the CPU has AVX2 and BMI2 and $JITSEARCH_SIMD is not 0, packed boards from
MIN_PACKED_HOUSES houses) and otherwise the protocol's generic playout
(:mod:`jitsearch.kernels.game_playouts`), which the GPU runs too
(:mod:`jitsearch.kernels.cuda_playouts`).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from .._checks import check_bool, check_int, check_seed, kernel_array, max_threads
from .._jit import stable_ids
from .._threads import run_in_pool
from ..games.kalah import register
from ..games.kalah.fast import (KERNEL_KINDS, MIN_PACKED_HOUSES, SIMD_ENV, add_outcome,  # noqa: F401  (re-exported)
                                available_kinds, check_kernel, cpu_playout_kind, cpu_range, make_packed_margin,
                                make_simd_margin, make_simd_playout, simd_enabled, stable_jit)
from ..games.kalah.game import GAME as KALAH
from ..games.kalah.state import MAX_HOUSES, MAX_SEEDS
from . import rng
from .game_playouts import MAX_PLAYOUTS_PER_CALL, MAX_PLAYOUTS_PER_STATE, MAX_STATES, check_work  # noqa: F401
from .game_playouts import INLINE_RNG, cpu_evaluate as cpu_protocol_evaluate
from .sentinels import NO_PLY_CAP  # noqa: F401  (re-exported)

#: The dummy record and the unset stop flag of the protocol's kernel.
NO_RECORD = np.zeros((1, 1, 1), dtype=np.int32)
NO_STOP = np.zeros(1, dtype=np.int64)


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


CPU_RNG = rng.build(stable_ids(njit(cache=True)))  # fixed ids: the kernels over it load from the disk cache


_PROTOCOL_RANGE = cpu_protocol_evaluate(KALAH)


@stable_jit(njit(cache=True, nogil=True))
def evaluate_range(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                   wins, draws, losses, margin_sum, plies_out):
    """Playouts of states ``first..last-1`` on the generic kernel: the protocol's playout
    (:func:`jitsearch.kernels.game_playouts.make_evaluate`) over Kalah's rules (the CPU twin of
    the CUDA kernel)."""
    rows = np.zeros(boards.shape[0], dtype=np.int64)
    _PROTOCOL_RANGE(boards, players, NO_RECORD, rows, rows, (m, empty_capture), m, 0, playouts_per_state, seed,
                    first, last, wins, draws, losses, margin_sum, plies_out, NO_STOP)


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


def cpu_kernels(m: int, kind: str | None = None):
    """(evaluate_range, its parallel twin) for m houses, of the ``kind``
    (default :func:`cpu_playout_kind`; all give identical results)."""
    return _cpu_kernels(m, cpu_playout_kind(m) if kind is None else kind)


@functools.lru_cache(maxsize=None)
def _cpu_kernels(m: int, kind: str):
    if kind in ("simd", "packed"):
        range_fn = cpu_range(m, kind, INLINE_RNG)
        return range_fn, _make_parallel(range_fn)
    return evaluate_range, _evaluate_parallel


#: Bytes allocated per state by a call: a copy of its board (int32[n]), its
#: player (int64) and five int64 counters.
OUTPUT_BYTES_PER_STATE = 8 + 5 * 8


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


_REGISTER_CPU: dict = {}


def register_cpu_functions(houses: int):
    """(``register_playout``, ``register_jobs``) for ``houses`` compiled for
    the CPU (cached per m in this process; not on disk: the source is
    generated)."""
    if houses not in _REGISTER_CPU:
        _REGISTER_CPU[houses] = (register.build(njit, houses),
                                 register.build_jobs(njit, houses, rng.build(njit).stream_key, njit(add_outcome)))
    return _REGISTER_CPU[houses]


def evaluate_register_cpu(boards, players, playouts_per_state: int, seed: int, *, empty_capture: bool = False,
                          lanes: int = 0) -> dict:
    """:func:`evaluate_cpu`'s counters from the register playouts
    (:mod:`jitsearch.games.kalah.register`) on the CPU (one thread), the GPU kernels' code: with
    ``lanes=0`` one ``register_playout`` per (state, playout); with ``lanes
    >= 1``, ``register_jobs`` run for each lane ``0 .. lanes-1`` with stride
    ``lanes`` (as that many GPU threads would share the jobs). Checked
    against the generic playout in the tests; arguments are checked as
    there."""
    b, p, m = validate_batch(boards, players, playouts_per_state, seed)
    empty_capture = bool(check_bool("empty_capture", empty_capture))
    lanes = check_int("lanes", lanes, 0, 1 << 20)
    play, jobs = register_cpu_functions(m)
    k = b.shape[0]
    out = {name: np.zeros(k, dtype=np.int64) for name in ("wins", "draws", "losses", "margin_sum", "plies")}
    counters = tuple(out[name] for name in ("wins", "draws", "losses", "margin_sum", "plies"))
    pps = int(playouts_per_state)
    if lanes:
        for lane in range(lanes):
            jobs(b, p, empty_capture, pps, np.uint64(seed), lane, lanes, k * pps, *counters)
        return out
    for s in range(k):
        mover = int(p[s])
        for j in range(pps):
            margin, plies = play(b, s, mover, empty_capture, np.uint64(rng.stream_key_py(int(seed), s, j)))
            add_outcome(*counters, s, mover, margin, plies)
    return out

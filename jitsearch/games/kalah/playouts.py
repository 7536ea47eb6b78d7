"""Kalah's array API of random playouts: ``evaluate_cpu(boards[K, 2m+2], players[K],
playouts_per_state, seed)`` per state (wins, draws, losses for its player to move, player 0's
margins summed, plies), its GPU twin (:mod:`.cuda_playouts`, ``evaluator``) and the register
playouts on the CPU. This module is Kalah's :attr:`Game.fast_playouts
<jitsearch.games.protocol.Game>` hook: it hands on :mod:`.fast`'s hook functions and adds the
array API, which :mod:`jitsearch.kernels.backend` and the benchmarks reach through the registry.

A playout from (board, player) plays uniformly random legal moves to the end of the game; draw
``i`` of its stream (:func:`jitsearch.rng.build`, keyed by (seed, state index, playout index))
picks the ``i``-th move among the legal ones in house order. The kernels (:func:`cpu_kernels`,
all bit-identical) are Kalah's fast paths (:mod:`.fast`: board vectors where the CPU has AVX2
and BMI2 and $JITSEARCH_SIMD is not 0, packed boards from MIN_PACKED_HOUSES houses) and
otherwise the protocol's generic playout (:mod:`jitsearch.games.playout`), which the GPU runs
too (:mod:`.cuda_playouts`).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from ... import rng
from ..._checks import check_bool, check_int, max_threads
from ..._jit import stable_ids
from ..._threads import run_in_pool
from ..playout import CPU_RNG, INLINE_RNG, NO_PLY_CAP, compiled_evaluate  # noqa: F401  (re-exported)
from ..playout import MAX_PLAYOUTS_PER_CALL, MAX_PLAYOUTS_PER_STATE, MAX_STATES, check_work  # noqa: F401
from . import register
from .fast import (KERNEL_KINDS, MIN_PACKED_HOUSES, SIMD_ENV, OUTPUT_BYTES_PER_STATE, add_outcome,  # noqa: F401
                   available_kinds, check_kernel, cpu_evaluate, cpu_playout_kind, cpu_range, gpu_margin, kinds,
                   make_packed_margin, make_playout, make_simd_margin, make_simd_playout, simd_enabled,
                   tree_key, tree_playouts, validate_batch)  # (the hook's functions and the kernels' makers)
from .rules import build_protocol

#: The dummy record and the unset stop flag of the protocol's kernel.
NO_RECORD = np.zeros((1, 1, 1), dtype=np.int32)
NO_STOP = np.zeros(1, dtype=np.int64)


_PROTOCOL_RANGE = compiled_evaluate(build_protocol, "kalah", CPU_RNG)  # the one kernels.game_playouts runs


@stable_ids(njit(cache=True, nogil=True))
def evaluate_range(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                   wins, draws, losses, margin_sum, plies_out):
    """Playouts of states ``first..last-1`` on the generic kernel: the protocol's playout
    (:func:`jitsearch.games.playout.make_evaluate`) over Kalah's rules (the CPU twin of
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
    (:mod:`.register`) on the CPU (one thread), the GPU kernels' code: with
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


_EVALUATORS: dict = {}


def evaluator(threads_per_block: int = 128):
    """A cached :class:`~.cuda_playouts.CudaEvaluator` (its buffers are reused across calls): the GPU
    twin of :func:`evaluate_cpu` (imported lazily, only when the GPU is asked for)."""
    threads_per_block = check_int("threads_per_block", threads_per_block, 1, 1024)
    from .cuda_playouts import CudaEvaluator

    ev = _EVALUATORS.get(threads_per_block)
    if ev is None:
        ev = _EVALUATORS[threads_per_block] = CudaEvaluator(threads_per_block)
    return ev

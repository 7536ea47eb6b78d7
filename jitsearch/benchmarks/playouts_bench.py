"""Random playouts per second from a Kalah start position on a backend.

One launch evaluates ``states`` copies of the start position with
``playouts`` playouts each; the rate is playouts (and plies) per second of
wall time including transfers, median of ``repeats`` runs after a warm-up
launch (which compiles the kernel).

On the CPU backend, when a C compiler is present, the same launches are
also played by the hand-written C references of ``bench/c_reference/``
(straightforward and tuned, one core each; see
:mod:`jitsearch.benchmarks.c_reference`) right after each jitsearch launch
with the same seed: their per-state outcomes must be identical
(``c_identical``), and jitsearch's ratio to each is the median of the
per-repeat ratios. Without a compiler the C keys are None and ``c_note``
says why.

``kernel`` names the CPU kernel jitsearch ran (Kalah's ``cpu_playout_kind``);
when it is the board-vector one (``"simd"``), the scalar kernel that
JITSEARCH_SIMD=0 would run (``scalar_kernel``) plays the same launches in
the same repeats: ``scalar_playouts_per_second``, ``ratio_to_scalar``
(median of per-repeat ratios) and ``scalar_identical`` (every per-state
result equal).
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes


#: Timed launches of one benchmark.
MAX_REPEATS = 100
#: Playouts of a whole benchmark (the warm-up and every repeat together), per
#: backend: about an hour of all cores of a small CPU, about a minute of a GPU.
MAX_BENCH_PLAYOUTS = {"cpu": 1 << 32, "cuda": 1 << 36}


def measure_playouts(backend: str = "cpu", houses: int = 6, seeds: int = 4, states: int = 1024,
                     playouts: int = 64, repeats: int = 5, threads: int = 1, seed: int = 0, *,
                     max_bytes: int = DEFAULT_MAX_BYTES, c_reference: bool = True) -> dict:
    """Measure (see the module docstring). Every argument is checked, and
    the memory (``states`` boards, players and five counters, twice on a GPU
    for its pinned and device buffers) and the work ((repeats + 1) x states
    x playouts) are estimated and refused above ``max_bytes`` / the limits
    before anything is allocated or run.

    Result keys: see the module docstring; the C reference adds
    ``c_note`` (None, or why the C rows were skipped), ``c_compiler``,
    ``c_plain_playouts_per_second`` / ``c_tuned_playouts_per_second``
    (medians, one core; ``runs_c_*`` every repeat), ``c_identical`` (every
    repeat's per-state wins/draws/losses/margin sums/plies equal to
    jitsearch's for both C variants) and ``ratio_to_c_plain`` /
    ``ratio_to_c_tuned`` (jitsearch / C, median of the per-repeat ratios;
    ``*_range`` their [min, max])."""
    from ..games import get as get_game
    from .._checks import check_int, check_max_bytes, cap_to_physical_memory, check_seed, max_threads
    from ..kernels.backend import device_name, evaluate, resolve
    from ..games.playout import MAX_PLAYOUTS_PER_STATE, MAX_STATES, check_work
    from .c_reference import same_playouts

    states = check_int("states", states, 1, MAX_STATES)
    playouts = check_int("playouts", playouts, 1, MAX_PLAYOUTS_PER_STATE)
    repeats = check_int("repeats", repeats, 1, MAX_REPEATS)
    threads = check_int("threads", threads, 1, max_threads())
    seed = check_seed("seed", seed)
    if seed + repeats >= 1 << 64:
        raise ValueError(f"seed must leave room for the {repeats} repeats' seeds (seed + repeats < 2**64)")
    max_bytes = cap_to_physical_memory(check_max_bytes("max_bytes", max_bytes))
    kalah = get_game("kalah")
    fast = kalah.fast_playouts  # Kalah's array API of batches (its boards, its kernels)
    start = kalah.initial(houses=houses, seeds=seeds)
    check_work(states, playouts, "a launch")
    which = resolve(backend)
    total = (repeats + 1) * states * playouts
    if total > MAX_BENCH_PLAYOUTS[which]:
        raise ValueError(f"the benchmark would play {total:,} playouts ((repeats + 1) x states x playouts), above "
                         f"the limit of {MAX_BENCH_PLAYOUTS[which]:,} on the {which} backend: lower --states, "
                         f"--playouts or --repeats")
    per_state = 4 * start.board.size + fast.OUTPUT_BYTES_PER_STATE
    copies = 2 if which == "cpu" else 3  # the boards, their checked copy; on a GPU pinned + device buffers
    check_bytes(states * per_state * copies, max_bytes, f"{states:,} states of Kalah({houses},{seeds})",
                "lower --states")
    boards = np.repeat(start.board[None, :], states, axis=0)
    players = np.zeros(states, dtype=np.int64)
    if not isinstance(c_reference, bool):
        raise ValueError(f"c_reference must be True or False, got {c_reference!r}")
    c_note = _c_note(which) if c_reference else "C reference not asked for"
    kernel = fast.cpu_playout_kind(houses) if which == "cpu" else None
    scalar_kernel = fast.cpu_playout_kind(houses, simd=False) if kernel == "simd" else None
    evaluate(boards, players, playouts, seed, backend=which, threads=threads)  # warm-up / compile
    if scalar_kernel:
        fast.evaluate_cpu(boards, players, playouts, seed, threads=threads, kernel=scalar_kernel)
    rates, ply_rates, scalar_rates = [], [], []
    c_rates = {"plain": [], "tuned": []}
    c_identical = scalar_identical = None
    for r in range(repeats):
        t0 = time.perf_counter()
        out = evaluate(boards, players, playouts, seed + 1 + r, backend=which, threads=threads)
        dt = time.perf_counter() - t0
        rates.append(states * playouts / dt)
        ply_rates.append(int(out["plies"].sum()) / dt)
        if scalar_kernel:
            t0 = time.perf_counter()
            twin = fast.evaluate_cpu(boards, players, playouts, seed + 1 + r, threads=threads, kernel=scalar_kernel)
            scalar_rates.append(states * playouts / (time.perf_counter() - t0))
            same = same_playouts(out, twin)
            scalar_identical = same if scalar_identical is None else (scalar_identical and same)
        if c_note is None:
            same = _c_round(boards, players, playouts, seed + 1 + r, out, c_rates)
            c_identical = same if c_identical is None else (c_identical and same)
    result = {"backend": which, "device": device_name(which), "houses": houses, "seeds": seeds, "states": states,
            "playouts": playouts, "repeats": repeats, "threads": threads if which == "cpu" else None,
            "playouts_per_second": statistics.median(rates), "plies_per_second": statistics.median(ply_rates),
            "runs_playouts_per_second": rates, "cores": os.cpu_count(), "kernel": kernel,
            "scalar_kernel": scalar_kernel,
            "scalar_playouts_per_second": statistics.median(scalar_rates) if scalar_rates else None,
            "runs_scalar_playouts_per_second": scalar_rates,
            "ratio_to_scalar": (statistics.median(a / b for a, b in zip(rates, scalar_rates))
                                if scalar_rates else None),
            "scalar_identical": scalar_identical}
    result.update(_c_keys(c_note, c_identical, rates, c_rates))
    return result


def _c_note(which: str) -> str | None:
    """None when the C reference rows can run, else why not."""
    from .c_reference import unavailable_reason

    if which != "cpu":
        return "the C reference is measured against the cpu backend only"
    return unavailable_reason()


def _c_round(boards, players, playouts, seed, out, c_rates) -> bool:
    """Play one launch with both C variants; append their rates; True if both equal ``out``."""
    from .c_reference import run_playouts, same_playouts

    same = True
    for variant in ("plain", "tuned"):
        res = run_playouts(variant, boards, players, playouts, [seed])[0]
        c_rates[variant].append(boards.shape[0] * playouts / res["seconds"])
        same = same and same_playouts(out, res)
    return same


def _c_keys(c_note, c_identical, rates, c_rates) -> dict:
    from .c_reference import compile_flags, compiler

    keys = {"c_note": c_note, "c_compiler": None, "c_identical": c_identical}
    for variant in ("plain", "tuned"):
        runs = c_rates[variant]
        keys[f"c_{variant}_playouts_per_second"] = statistics.median(runs) if runs else None
        keys[f"runs_c_{variant}_playouts_per_second"] = runs
        ratios = [a / b for a, b in zip(rates, runs)]
        keys[f"ratio_to_c_{variant}"] = statistics.median(ratios) if ratios else None
        keys[f"ratio_to_c_{variant}_range"] = [min(ratios), max(ratios)] if ratios else None
    if c_note is None:
        keys["c_compiler"] = f"{compiler()} {compile_flags()}"
    return keys

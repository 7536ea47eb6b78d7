"""Backend selection for the batched playouts: ``auto`` | ``cpu`` | ``cuda``.

``auto`` uses CUDA when ``numba.cuda.is_available()`` (a driver and a device,
or the simulator under ``NUMBA_ENABLE_CUDASIM=1``), else the CPU, silently;
results say which backend ran. ``cuda`` fails with one clear line when the
``gpu`` extra is missing or no device is found. The GPU module is imported
only when it is used.
"""

from __future__ import annotations

import functools

from ..games import DEFAULT_GAME

BACKENDS = ("auto", "cpu", "cuda")
GPU_EXTRA_HINT = "install the gpu extra: pip install 'jitsearch[gpu]'"


class BackendError(ValueError):
    """The requested backend cannot run here."""


@functools.lru_cache(maxsize=1)
def cuda_status() -> tuple[bool, str]:
    """(usable, reason if not); asked once a process (a driver or device does
    not come or go while it runs)."""
    import importlib.util
    import os

    try:
        from numba import cuda
    except ImportError:
        return False, f"numba's CUDA target is not installed ({GPU_EXTRA_HINT})"
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1" and importlib.util.find_spec("numba_cuda") is None:
        # numba's own (deprecated) CUDA target compiles none of the generic kernels ("Signature mismatch"
        # on their device-function closures): only numba-cuda is a usable CUDA target
        return False, ("numba-cuda is not installed, and numba's built-in CUDA target is not supported "
                       f"({GPU_EXTRA_HINT})")
    try:
        ok = cuda.is_available()
    except Exception as exc:  # pragma: no cover - driver-specific failures
        return False, f"the CUDA driver failed to load: {exc}"
    if not ok:
        return False, ("no CUDA driver or device found (numba.cuda.is_available() is False); "
                       f"use --backend cpu, or on a GPU machine {GPU_EXTRA_HINT}")
    return True, ""


def resolve(backend: str) -> str:
    """``cpu`` or ``cuda`` for a requested backend (raises BackendError)."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise BackendError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "cpu":
        return "cpu"
    ok, why = cuda_status()
    if backend == "cuda" and not ok:
        raise BackendError(f"CUDA backend requested but {why}")
    return "cuda" if ok else "cpu"


def device_name(backend: str) -> str:
    import os
    import platform

    if backend not in ("cpu", "cuda"):
        raise ValueError(f"backend must be cpu or cuda (a resolved backend), got {backend!r}")

    if backend == "cuda":
        from numba import cuda

        if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
            return "CUDA simulator"
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        return f"{name} (compute capability {dev.compute_capability[0]}.{dev.compute_capability[1]})"
    return f"{platform.processor() or platform.machine()} CPU"


def array_api(game):
    """``game``'s array API of batched playouts (its :attr:`Game.fast_playouts
    <jitsearch.games.protocol.Game>` with ``evaluate_cpu`` and ``evaluator``: Kalah's boards
    ``[K, 2m+2]``); one-line ``ValueError`` for a game without one (``evaluate_states`` takes
    its states)."""
    from ..games import get

    game = get(game)
    fast = game.fast_playouts
    if fast is None or not hasattr(fast, "evaluate_cpu"):
        raise ValueError(f"{game.name} has no array API of batched playouts: use "
                         f"jitsearch.kernels.game_playouts.evaluate_states with its states")
    return fast


def evaluator(threads_per_block: int = 128, *, game: str = DEFAULT_GAME):
    """A cached CUDA evaluator of ``game``'s batches of boards (its buffers are reused across calls)."""
    return array_api(game).evaluator(threads_per_block)


def evaluate(boards, players, playouts_per_state: int, seed: int, *, backend: str = "auto", threads: int = 1,
             threads_per_block: int = 128, game: str = DEFAULT_GAME, **variant) -> dict:
    """Batched leaf evaluation of ``game``'s boards (its array API, :func:`array_api`; Kalah's by
    default) on the chosen backend; the result has ``backend``.

    Arguments as the game's ``evaluate_cpu`` of its array API (Kalah's with ``empty_capture``; the same limits,
    checked here before any backend runs), ``threads`` for the CPU, ``threads_per_block``
    (1..1024) for CUDA.
    """
    from .._checks import check_int, check_seed, max_threads
    from ..games.playout import MAX_PLAYOUTS_PER_STATE, check_work

    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    threads = check_int("threads", threads, 1, max_threads())
    threads_per_block = check_int("threads_per_block", threads_per_block, 1, 1024)
    fast = array_api(game)
    if hasattr(boards, "__cuda_array_interface__"):  # device input: its shape is all that can be checked here
        shape = tuple(boards.__cuda_array_interface__.get("shape", ()))
        if len(shape) == 2 and shape[0]:
            check_work(int(shape[0]), playouts_per_state)
    which = resolve(backend)
    if which == "cuda":
        out = fast.evaluator(threads_per_block).evaluate(boards, players, playouts_per_state, seed, **variant)
    else:
        out = fast.evaluate_cpu(boards, players, playouts_per_state, seed, threads=threads, **variant)
    out["backend"] = which
    return out

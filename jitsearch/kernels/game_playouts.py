"""Flat random playouts of any game of the protocol (:mod:`jitsearch.games.protocol`) on the
CPU, over the shared thread pool, with a stop flag; the CUDA twin is
:mod:`jitsearch.kernels.cuda_game_playouts`.

Playout ``p`` of state ``s`` draws from ``stream_key(seed, s, p)`` and picks ply ``i``'s move as
the protocol's playout (:func:`jitsearch.games.playout.make_playout`) does, from the state's
record and move count (Oware's repetitions and move limit end it as in a real game). Per
state: ``wins``, ``draws``, ``losses`` for its player to move, ``margin_sum`` (player 0's
margins) and ``plies``, int64; the same whatever the threads.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int, check_seed, max_threads
from .._threads import run_in_pool
from ..games import get as get_game
from ..games.playout import (CPU_RNG, INLINE_RNG, MAX_PLAYOUTS_PER_CALL, MAX_PLAYOUTS_PER_STATE,  # noqa: F401
                             MAX_STATES, OUTPUTS, check_work)  # (the limits and RNGs, re-exported)
from ..games.playout import cpu_evaluate as protocol_cpu_evaluate
from ..games.playout import make_evaluate  # noqa: F401  (the batch kernel's factory, with its stop flag)
from ..stop import watch


def cpu_evaluate(game):
    """``game``'s compiled CPU ``evaluate_range`` (:func:`jitsearch.games.playout.make_evaluate`
    over CPU_RNG, rules inlined; cached on disk)."""
    return protocol_cpu_evaluate(game, CPU_RNG)


def cpu_kernel(game, cfg, kernel=None, stop=None):
    """(kind, ``evaluate_range``) for a batch of ``game``'s variant ``cfg``: the game's fast path
    (:attr:`Game.fast_playouts <jitsearch.games.protocol.Game>`) of ``kernel`` (default its
    fastest), else the generic kernel (always with a ``stop``: the fast ones do not read it)."""
    fast = game.fast_playouts
    kinds = ("generic",) if fast is None else fast.kinds(cfg)
    if kernel is None:
        kernel = "generic" if stop is not None else kinds[0]
    elif kernel not in kinds:
        raise ValueError(f"kernel must be one of {', '.join(kinds)}, got {kernel!r}")
    if kernel == "generic":
        return kernel, cpu_evaluate(game)
    return kernel, fast.cpu_evaluate(cfg, kernel, INLINE_RNG)


def evaluate_states(game, states, playouts_per_state: int, seed: int, *, threads: int = 1, stop=None,
                    kernel: str | None = None) -> dict:
    """Random playouts of each live state of ``game`` (a registry name or a Game; states of one
    variant): the module docstring's counters as int64 arrays. ``threads`` in 1..4 per core;
    ``stop`` (a ``threading.Event``) set from another thread ends the playouts within
    STOP_EVERY_PLAYOUTS playouts a thread and raises ``KeyboardInterrupt``. ``kernel``: a kind
    of the game's fast path (:func:`cpu_kernel`; every kind gives the same results)."""
    game = get_game(game)
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    threads = check_int("threads", threads, 1, max_threads())
    packed = game.pack(states)
    size = game.sizes(packed.cfg)
    k = packed.boards.shape[0]
    check_work(k, playouts_per_state)
    out = {name: np.zeros(k, dtype=np.int64) for name in OUTPUTS}
    flag = np.zeros(1, np.int64)
    args = (packed.boards, packed.players, packed.hists, packed.rows, packed.plies, packed.cfg, size.moves,
            max(0, size.record[0]), playouts_per_state, np.uint64(seed))
    res = tuple(out[name] for name in OUTPUTS)
    _, fn = cpu_kernel(game, packed.cfg, kernel, stop)
    with watch(stop, flag, 0):
        if threads > 1 and k > 1:
            chunks = min(k, threads * 4)
            step = (k + chunks - 1) // chunks
            run_in_pool(fn, [(*args, lo, min(k, lo + step), *res, flag) for lo in range(0, k, step)], workers=threads)
        else:
            fn(*args, 0, k, *res, flag)
    if flag[0]:
        raise KeyboardInterrupt
    return out

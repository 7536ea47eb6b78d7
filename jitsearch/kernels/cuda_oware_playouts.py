"""CUDA Oware playouts: the GPU twin of :mod:`jitsearch.kernels.oware_playouts`.

Imported lazily (only when the CUDA backend is asked for). The rules, the
generator and the playout body are compiled from the same source as the CPU
twin (``oware_rules.build``, ``rng.build``, ``make_playout``) with
``numba.cuda.jit(device=True)``.

Mapping: one thread per playout, a grid-stride loop over the K·P (state,
playout) pairs, the board in a per-thread local array. The repetition
record of a playout (up to its state's record plus ``move_limit`` rows of
2m + 1 ints) is too large for registers or local memory, so each thread
owns one slice of a global scratch array ``int32[threads, rows, 2m+1]``
(the launch is sized so that it fits :data:`MAX_SCRATCH_BYTES`). Outcomes
go to per-state counters with integer atomics: exact, and independent of
the launch shape, so the results are bit-identical to the CPU twin for the
same (seed, state index, playout index).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32

from .._checks import check_int, check_seed
from ..games.oware import MAX_HOUSES
from ..games.oware import rules as oware_rules
from . import rng
from .cuda_playouts import add_outcome_atomic
from .oware_playouts import make_playout, pack_states
from .playouts import MAX_PLAYOUTS_PER_STATE, check_work

#: Cells of a per-thread board (houses and the two scores): a constant, as CUDA local arrays need.
BOARD_CELLS = 2 * MAX_HOUSES + 2

#: The most global memory the playouts' repetition records may take.
MAX_SCRATCH_BYTES = 1 << 30
OUTPUTS = ("wins", "draws", "losses", "margin_sum", "plies")


def make_kernel(device):
    """The kernel's Python function, its rules, generator and playout compiled with ``device``."""
    rules = oware_rules.build(device)
    gen = rng.build(device)
    playout = make_playout(device, rules, gen)
    stream_key = gen.stream_key
    record = device(add_outcome_atomic)

    def _oware_playout_kernel(boards, players, plies_done, hists, rows, m, gsi, move_limit, playouts_per_state,
                              seed, scratch, wins, draws, losses, margin_sum, plies):
        n = 2 * m + 2
        board = cuda.local.array(BOARD_CELLS, int32)
        moves = cuda.local.array(MAX_HOUSES, int32)
        start = cuda.grid(1)
        if start >= scratch.shape[0]:
            return
        hist = scratch[start]
        total = boards.shape[0] * playouts_per_state
        for job in range(start, total, cuda.gridsize(1)):
            s = job // playouts_per_state
            p = job - s * playouts_per_state
            for i in range(n):
                board[i] = boards[s, i]
            for r in range(rows[s]):
                for i in range(2 * m + 1):
                    hist[r, i] = hists[s, r, i]
            mover = players[s]
            key = stream_key(seed, s, p)
            k = playout(board, m, mover, gsi, hist, 0, rows[s], plies_done[s], move_limit, key, moves)
            record(wins, draws, losses, margin_sum, plies, s, mover, board[2 * m] - board[2 * m + 1], k)

    return _oware_playout_kernel


_KERNEL = []


def kernel():
    """The compiled kernel (compiled on first launch)."""
    if not _KERNEL:
        _KERNEL.append(cuda.jit(make_kernel(cuda.jit(device=True))))
    return _KERNEL[0]


def evaluate_states_cuda(states, playouts_per_state: int, seed: int, *, threads_per_block: int = 128,
                         blocks: int | None = None) -> dict:
    """The same results as :func:`jitsearch.kernels.oware_playouts.evaluate_states`, on the GPU."""
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    threads_per_block = check_int("threads_per_block", threads_per_block, 1, 1024)
    boards, players, plies, hists, rows, m, gsi, limit = pack_states(states)
    k = boards.shape[0]
    check_work(k, playouts_per_state)
    jobs = k * playouts_per_state
    scratch_rows = hists.shape[1] + limit
    per_thread = scratch_rows * (2 * m + 1) * 4
    most_blocks = max(1, MAX_SCRATCH_BYTES // (per_thread * threads_per_block))
    if blocks is None:
        blocks = min((jobs + threads_per_block - 1) // threads_per_block, most_blocks, 65535)
    blocks = check_int("blocks", blocks, 1, most_blocks)
    threads = blocks * threads_per_block
    scratch = cuda.device_array((threads, scratch_rows, 2 * m + 1), dtype=np.int32)
    outs = {name: cuda.to_device(np.zeros(k, np.int64)) for name in OUTPUTS}
    kernel()[blocks, threads_per_block](cuda.to_device(boards), cuda.to_device(players), cuda.to_device(plies),
                                        cuda.to_device(hists), cuda.to_device(rows), m, bool(gsi), int(limit),
                                        int(playouts_per_state), np.uint64(seed), scratch,
                                        *(outs[name] for name in OUTPUTS))
    return {name: outs[name].copy_to_host() for name in OUTPUTS}

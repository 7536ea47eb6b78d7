"""Flat random playouts of any game on the GPU: the CUDA twin of
:mod:`jitsearch.kernels.game_playouts`, one kernel factory for every game of the protocol.

Imported lazily. One thread per playout, a grid-stride loop over the K·P (state, playout)
pairs, the board in a per-thread local array of the game's ``max_cells``. A playout's record
(its state's record plus the rows a game may still write: Oware's repetition) is too large for
local memory, so each thread owns a slice of a global scratch ``[threads, rows, C]`` (``[..,
1, 1]`` for a game without a record; the launch is sized so that it fits
:data:`MAX_SCRATCH_BYTES`). Outcomes go to per-state counters with integer atomics: exact and
independent of the launch shape, bit-identical to the CPU twin for the same (seed, state,
playout).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, from_dtype, int64

from .._checks import check_int, check_seed
from ..games import get as get_game
from ..games.playout import NO_CAP, make_playout
from .. import rng
from .._cuda import KernelCache, add_outcome_atomic, in_module, compile_ptx as ptx_of, signature_of
from .game_playouts import MAX_PLAYOUTS_PER_STATE, OUTPUTS, check_work

#: The most global memory the playouts' records may take.
MAX_SCRATCH_BYTES = 1 << 30


def make_kernel(device, game):
    """The kernel's Python function for ``game``, its rules, generator and playout compiled with
    ``device``: ``(boards, players, hists, rows, plies_done, cfg, playouts_per_state, seed,
    scratch, wins, draws, losses, margin_sum, plies)``."""
    rules = game.build(device)
    gen = rng.build(device)
    playout = make_playout(device, rules, gen, "flat_" + game.name)
    margin, stream_key = rules.margin, gen.stream_key
    record = device(in_module(add_outcome_atomic, globals()))
    cells, max_moves = int(game.max_cells), int(game.max_moves)
    cell_type = from_dtype(np.dtype(game.board_dtype))

    def _game_playout_kernel(boards, players, hists, rows, plies_done, cfg, playouts_per_state, seed, scratch, wins,
                             draws, losses, margin_sum, plies):
        board = cuda.local.array(cells, cell_type)
        moves = cuda.local.array(max_moves, int64)
        start = cuda.grid(1)
        if start >= scratch.shape[0]:
            return
        hist = scratch[start]
        n = boards.shape[1]
        cols = hists.shape[2]
        total = boards.shape[0] * playouts_per_state
        for job in range(start, total, cuda.gridsize(1)):
            s = job // playouts_per_state
            p = job - s * playouts_per_state
            for i in range(n):
                board[i] = boards[s, i]
            for r in range(rows[s]):
                for i in range(cols):
                    hist[r, i] = hists[s, r, i]
            mover = players[s]
            cur = (np.int64(0), np.int64(rows[s]), np.int64(plies_done[s]))
            k, _, _ = playout(board, cfg, np.int64(mover), moves, hist, cur, stream_key(seed, s, p), NO_CAP)
            record(wins, draws, losses, margin_sum, plies, s, mover, margin(board, cfg), k)

    _game_playout_kernel.__qualname__ = _game_playout_kernel.__name__ = f"_{game.name}_playout_kernel"
    return _game_playout_kernel


_KERNELS = KernelCache()


def kernel(game):
    """``game``'s compiled kernel (compiled on first launch)."""
    return _KERNELS.get(game, make_kernel, game)


def evaluate_states_cuda(game, states, playouts_per_state: int, seed: int, *, threads_per_block: int = 128,
                         blocks: int | None = None) -> dict:
    """The results of :func:`jitsearch.kernels.game_playouts.evaluate_states`, on the GPU."""
    game = get_game(game)
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    threads_per_block = check_int("threads_per_block", threads_per_block, 1, 1024)
    packed = game.pack(states)
    k = packed.boards.shape[0]
    check_work(k, playouts_per_state)
    hists = packed.hists
    rows = hists.shape[1] + max(0, game.sizes(packed.cfg).record[0])
    per_thread = rows * hists.shape[2] * hists.dtype.itemsize
    most_blocks = max(1, MAX_SCRATCH_BYTES // (per_thread * threads_per_block))
    if blocks is None:
        blocks = min((k * playouts_per_state + threads_per_block - 1) // threads_per_block, most_blocks, 65535)
    blocks = check_int("blocks", blocks, 1, most_blocks)
    scratch = cuda.device_array((blocks * threads_per_block, rows, hists.shape[2]), dtype=hists.dtype)
    outs = {name: cuda.to_device(np.zeros(k, np.int64)) for name in OUTPUTS}
    inputs = [cuda.to_device(np.ascontiguousarray(a)) for a in (packed.boards, packed.players, hists, packed.rows,
                                                                 packed.plies)]
    kernel(game)[blocks, threads_per_block](*inputs, packed.cfg, int(playouts_per_state), np.uint64(seed), scratch,
                                            *(outs[name] for name in OUTPUTS))
    return {name: outs[name].copy_to_host() for name in OUTPUTS}


def compile_ptx(game, cc=(9, 0)) -> str:
    """PTX of ``game``'s playout kernel for compute capability ``cc`` without a device; the
    argument types are those of its initial position's batch."""
    game = get_game(game)
    p = game.pack([game.initial()])
    zeros = np.zeros(1, np.int64)
    sig = signature_of(p.boards, p.players, p.hists, p.rows, p.plies, p.cfg, 1, np.uint64(0), p.hists,
                       zeros, zeros, zeros, zeros, zeros)
    return ptx_of(make_kernel(cuda.jit(device=True), game), sig, cc)

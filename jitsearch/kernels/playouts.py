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
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..games import kalah_rules
from . import rng


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


CPU_RULES = kalah_rules.build(njit(cache=True))
CPU_RNG = rng.build(njit(cache=True))
playout = make_playout(njit(cache=True), CPU_RULES, CPU_RNG)
stream_key = CPU_RNG.stream_key
NO_PLY_CAP = 1 << 30


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
            k, _ = playout(board, m, mover, empty_capture, key, NO_PLY_CAP, moves)
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


@njit(cache=True, nogil=True, parallel=True)
def _evaluate_parallel(boards, players, m, empty_capture, playouts_per_state, seed, chunks,
                       wins, draws, losses, margin_sum, plies_out):
    k = boards.shape[0]
    step = (k + chunks - 1) // chunks
    for c in prange(chunks):
        lo = c * step
        hi = min(k, lo + step)
        if lo < hi:
            evaluate_range(boards, players, m, empty_capture, playouts_per_state, seed, lo, hi,
                           wins, draws, losses, margin_sum, plies_out)


def validate_batch(boards, players, playouts_per_state, seed):
    """Check a batch at the Python boundary; returns (boards int32[K, n], players int64[K], m)."""
    b = np.asarray(boards)
    if b.ndim == 1:
        b = b[None, :]
    if b.ndim != 2 or b.shape[1] < 4 or b.shape[1] % 2:
        raise ValueError(f"boards must be [K, 2m+2] with m >= 1, got shape {b.shape}")
    if b.dtype.kind not in "iu":
        raise ValueError(f"boards must hold integers, got dtype {b.dtype}")
    if b.size and b.min() < 0:
        raise ValueError("boards hold a negative seed count")
    m = b.shape[1] // 2 - 1
    if m > kalah_max_houses():
        raise ValueError(f"at most {kalah_max_houses()} houses, got {m}")
    p = np.asarray(players)
    if p.ndim == 0:
        p = np.full(b.shape[0], int(p))
    if p.shape != (b.shape[0],):
        raise ValueError(f"players must have one entry per board ({b.shape[0]}), got shape {p.shape}")
    if p.size and not np.isin(p, (0, 1)).all():
        raise ValueError("players must be 0 or 1 (the player to move; finished games cannot be played out)")
    if int(playouts_per_state) < 1:
        raise ValueError(f"playouts_per_state must be >= 1, got {playouts_per_state}")
    if not 0 <= int(seed) < 1 << 64:
        raise ValueError(f"seed must lie in [0, 2**64), got {seed}")
    # a side with no seeds left means the game is over: nothing to play out
    side0 = b[:, 1:m + 1].sum(axis=1)
    side1 = b[:, m + 2:].sum(axis=1)
    if b.shape[0] and ((side0 == 0) | (side1 == 0)).any():
        raise ValueError("a board has an empty side: that game is already over")
    return np.ascontiguousarray(b, dtype=np.int32), np.ascontiguousarray(p, dtype=np.int64), m


def kalah_max_houses() -> int:
    from ..games.kalah import MAX_HOUSES

    return MAX_HOUSES


def evaluate_cpu(boards, players, playouts_per_state: int, seed: int, *, empty_capture: bool = False,
                 threads: int = 1) -> dict:
    """Batched leaf evaluation on the CPU: per state (wins, draws, losses)
    for its player to move over ``playouts_per_state`` random playouts, the
    sum of player 0's final margins, and the plies played."""
    b, p, m = validate_batch(boards, players, playouts_per_state, seed)
    k = b.shape[0]
    out = {name: np.zeros(k, dtype=np.int64) for name in ("wins", "draws", "losses", "margin_sum", "plies")}
    args = (b, p, m, bool(empty_capture), int(playouts_per_state), np.uint64(seed))
    res = (out["wins"], out["draws"], out["losses"], out["margin_sum"], out["plies"])
    if threads > 1 and k > 1:
        _evaluate_parallel(*args, min(k, threads * 4), *res)
    else:
        evaluate_range(*args, 0, k, *res)
    return out

"""Uniformly random Oware playouts on the CPU, from the rule source of
:mod:`jitsearch.games.oware.rules` and the one playout RNG
(:mod:`jitsearch.kernels.rng`).

A playout from a state plays uniformly random legal moves to the end of the
game, with the state's repetition record and move count (so repetitions and
the move limit end it exactly as in a real game); draw ``i`` of its stream
(keyed by (seed, state index, playout index)) picks the ``i``-th move among
the legal ones in house order. Outcome for the state's player to move: win,
draw or loss, and player 0's final score difference.

``evaluate_states(states, playouts_per_state, seed)`` is the batched
interface (per state: wins, draws, losses, margin_sum, plies), the same
shape as Kalah's :func:`jitsearch.kernels.playouts.evaluate_cpu`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._checks import check_int, check_seed, max_threads
from ..games.oware import rules as oware_rules
from ..games.oware.state import BOARD_DTYPE, OwareState
from . import rng
from .playouts import MAX_PLAYOUTS_PER_STATE, check_work
from .sentinels import NO_PLY_CAP
from ..stop import STOP_EVERY_PLAYOUTS, watch


def make_capped_playout(jit, rules, gen):
    """Compile a playout with a ply cap with ``jit``: ``playout_to(board, m,
    player, gsi, hist, first, count, ply, move_limit, key, max_plies, moves)``
    plays at most ``max_plies`` random plies in place (arguments as
    :func:`make_playout`'s) and returns (plies played, the player to move
    after them: GAME_OVER (-1) if the game ended). Draw ``i`` of ``key``
    picks ply ``i``'s move, so the first plies are those of the uncapped playout."""
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    draw = gen.draw
    below = gen.below

    def playout_to(board, m, player, gsi, hist, first, count, ply, move_limit, key, max_plies, moves):
        plies = 0
        while player >= 0 and plies < max_plies:
            num = legal_moves(board, m, player, gsi, moves)
            house = moves[below(draw(key, plies), num)]
            player, first, count = apply_move(board, m, player, house, gsi, hist, first, count, ply + plies,
                                              move_limit)
            plies += 1
        return plies, player

    return jit(playout_to)


def make_playout(jit, rules, gen):
    """Compile one playout with ``jit`` from compiled ``rules`` and ``gen``.

    ``playout(board, m, player, gsi, hist, first, count, ply, move_limit, key,
    moves)`` plays in place on ``board`` from a live position (``player`` >=
    0) whose record is ``hist[first:first + count]``; ``hist`` needs
    ``first + count + move_limit - ply`` rows and ``moves`` m ints. Returns
    the plies played (:func:`make_capped_playout` without a cap).
    """
    playout_to = make_capped_playout(jit, rules, gen)

    def playout(board, m, player, gsi, hist, first, count, ply, move_limit, key, moves):
        plies, _ = playout_to(board, m, np.int64(player), gsi, hist, np.int64(first), count, ply, move_limit, key,
                              np.int64(NO_PLY_CAP), moves)
        return plies

    return jit(playout)


# inline="always" functions are inlined into their (cached) callers: not cached on their own, since
# their cache entries would clash with the same rule functions compiled for state.RULES
INLINE_RULES = oware_rules.build(njit(inline="always"))
CPU_RNG = rng.build(njit(cache=True))
#: The CPU's capped playout, one dispatcher for every CPU kernel (flat playouts, both MCTS twins).
#: Callers pass int64 player, first and max_plies (never an int32 or a literal), so it compiles once.
capped_playout = make_capped_playout(njit(cache=True), INLINE_RULES, CPU_RNG)
playout = make_playout(njit(cache=True), INLINE_RULES, CPU_RNG)
stream_key = CPU_RNG.stream_key


@njit(cache=True, nogil=True)
def evaluate_range(boards, players, plies_done, hists, rows, m, gsi, move_limit, playouts_per_state, seed,
                   first, last, wins, draws, losses, margin_sum, plies_out, stop):
    """Playouts of states ``first..last-1``; ``hists[s, :rows[s]]`` is state s's record.
    ``stop`` (int64[1]): read every STOP_EVERY_PLAYOUTS playouts; once non-zero the
    kernel returns with the results unfinished (:mod:`jitsearch.stop`)."""
    n = 2 * m + 2
    board = np.empty(n, dtype=boards.dtype)
    hist = np.empty((hists.shape[1] + move_limit, 2 * m + 1), dtype=hists.dtype)
    moves = np.empty(m, dtype=np.int64)
    for s in range(first, last):
        w = 0
        d = 0
        lo = 0
        total = 0
        plies = 0
        mover = players[s]
        for p in range(playouts_per_state):
            if (p & (STOP_EVERY_PLAYOUTS - 1)) == 0 and stop[0] != 0:
                return
            for i in range(n):
                board[i] = boards[s, i]
            for r in range(rows[s]):
                for i in range(2 * m + 1):
                    hist[r, i] = hists[s, r, i]
            key = stream_key(seed, s, p)
            plies += playout(board, m, mover, gsi, hist, 0, rows[s], plies_done[s], move_limit, key, moves)
            margin = board[2 * m] - board[2 * m + 1]
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
def _evaluate_parallel(boards, players, plies_done, hists, rows, m, gsi, move_limit, playouts_per_state, seed,
                       chunks, wins, draws, losses, margin_sum, plies_out, stop):
    k = boards.shape[0]
    step = (k + chunks - 1) // chunks
    for c in prange(chunks):
        lo = c * step
        hi = min(k, lo + step)
        if lo < hi:
            evaluate_range(boards, players, plies_done, hists, rows, m, gsi, move_limit, playouts_per_state,
                           seed, lo, hi, wins, draws, losses, margin_sum, plies_out, stop)


def pack_states(states) -> tuple:
    """(boards int32[K, 2m+2], players, plies, hists int32[K, R, 2m+1], rows, m, grand_slam_illegal,
    move_limit) of live states that share their rules; a bad batch raises ``ValueError``."""
    if isinstance(states, OwareState):
        states = [states]
    states = list(states) if isinstance(states, (list, tuple)) else None
    if not states:
        raise ValueError("states must be a non-empty list of OwareState")
    for s in states:
        if not isinstance(s, OwareState):
            raise ValueError(f"states must be OwareState, got {type(s).__name__}")
        if s.is_over:
            raise ValueError("a state's game is over: nothing to play out")
    first = states[0]
    m, gsi, limit = first.houses, first.grand_slam_illegal, first.move_limit
    if any((s.houses, s.grand_slam_illegal, s.move_limit) != (m, gsi, limit) for s in states):
        raise ValueError("all states of a batch need the same houses, move limit and grand-slam rule")
    k = len(states)
    rows = np.array([len(s.history) for s in states], np.int64)
    hists = np.zeros((k, int(rows.max()), 2 * m + 1), BOARD_DTYPE)
    for i, s in enumerate(states):
        hists[i, :rows[i]] = s.history
    boards = np.stack([np.array(s.board, BOARD_DTYPE) for s in states])
    players = np.array([s.player for s in states], np.int64)
    plies = np.array([s.ply for s in states], np.int64)
    return boards, players, plies, hists, rows, m, gsi, limit


def evaluate_states(states, playouts_per_state: int, seed: int, *, threads: int = 1, stop=None) -> dict:
    """Random playouts of each state: per state (``wins``, ``draws``,
    ``losses``) for its player to move, ``margin_sum`` of player 0's final
    score differences and ``plies`` played, as int64 arrays. ``threads`` in
    1..4 per core; results do not depend on it. ``stop`` (a
    ``threading.Event``) set from another thread ends the playouts within
    STOP_EVERY_PLAYOUTS playouts a thread and raises ``KeyboardInterrupt``."""
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    threads = check_int("threads", threads, 1, max_threads())
    boards, players, plies, hists, rows, m, gsi, limit = pack_states(states)
    k = boards.shape[0]
    check_work(k, playouts_per_state)
    out = {name: np.zeros(k, dtype=np.int64) for name in ("wins", "draws", "losses", "margin_sum", "plies")}
    args = (boards, players, plies, hists, rows, m, bool(gsi), int(limit), int(playouts_per_state), np.uint64(seed))
    res = (out["wins"], out["draws"], out["losses"], out["margin_sum"], out["plies"])
    flag = np.zeros(1, np.int64)
    with watch(stop, flag, 0):
        if threads > 1 and k > 1:
            _evaluate_parallel(*args, min(k, threads * 4), *res, flag)
        else:
            evaluate_range(*args, 0, k, *res, flag)
    if flag[0]:
        raise KeyboardInterrupt
    return out


# -- Oware's reward units of the MCTS kernels (multi-tree: kernels.game_mcts; shared-tree) ----------------------

#: Multiples of 1/SIDE_WEIGHT_DENOMINATOR are the side weights the kernels take (exact products).
SIDE_WEIGHT_DENOMINATOR = 256


def make_units(jit, frontier=None):
    """``(outcome_units(board, m), eval_units(board, m, side_weight))`` compiled with ``jit``:
    player 0's reward units of a finished game (OpenSpiel's returns: win, draw, loss by the
    captured difference) and of the evaluation of a live position: the Oware alpha-beta's
    frontier value (:func:`jitsearch.games.oware.alphabeta.evaluate`, captured difference +
    ``side_weight`` x seeds-on-side difference) squashed by
    :func:`~jitsearch.kernels.evaluation.store_value` with the board's seeds as the total,
    rounded to units. ``side_weight`` a multiple of 1/256: its product is exact and a fused
    multiply-add rounds as the CPU does. Shared by the multi-tree and shared-tree kernels.
    ``frontier``: the alpha-beta's compiled evaluation on the CPU (default: compiled here from
    its source)."""
    import math

    from ..games.oware.alphabeta import evaluate as alphabeta_evaluate
    from .evaluation import store_value
    from .tree_step import REWARD_UNITS

    squash = jit(store_value)
    if frontier is None:
        frontier = jit(alphabeta_evaluate.py_func)

    def outcome_units(board, m):
        d = board[2 * m] - board[2 * m + 1]
        if d > 0:
            return np.int64(REWARD_UNITS)
        if d < 0:
            return np.int64(0)
        return np.int64(REWARD_UNITS // 2)

    outcome_units = jit(outcome_units)

    def eval_units(board, m, side_weight):
        total = 0
        for i in range(2 * m + 2):
            total += board[i]
        r = squash(frontier(board, m, 0, side_weight), np.float64(total))
        return np.int64(math.floor(r * REWARD_UNITS + 0.5))

    return outcome_units, jit(eval_units)


def game_units(jit, rules):
    """Oware's units in the form of :func:`jitsearch.kernels.game_mcts.make_step`'s ``units``:
    ``(outcome_units(board, cfg), eval_units(board, cfg, side_weight))`` over :func:`make_units`
    (``rules``, the protocol's, unused: the evaluation is the alpha-beta's)."""
    outcome, evaluation = make_units(jit)

    def outcome_units(board, cfg):
        return outcome(board, cfg[0])

    def eval_units(board, cfg, side_weight):
        return evaluation(board, cfg[0], side_weight)

    return jit(outcome_units), jit(eval_units)


def _cpu_units():
    from types import SimpleNamespace

    outcome, evaluation = make_units(njit(cache=True))
    return SimpleNamespace(outcome_units=outcome, eval_units=evaluation)


#: Oware's units compiled for the CPU: ``outcome_units(board, m)``, ``eval_units(board, m, side_weight)``.
CPU_UNITS = _cpu_units()

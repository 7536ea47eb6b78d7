"""Depth-limited alpha-beta (negamax) on Oware and iterative deepening.

Conventions: a ply is one move; Oware strictly alternates, so a value is
from the point of view of the player to move at that node and is negated
on the way up; :func:`search` returns values for the root's player to
move. The evaluation of a frontier position is the captured difference
plus ``side_weight`` times the difference of the seeds on each side (they
go to their side's owner when the game ends by repetition, move limit or no
legal move). A finished game is worth ``WIN`` (1,000) with the sign of the
final score difference, plus that difference, so any win beats any
evaluation. The repetition rule is played exactly along each searched line
(the record of positions since the last capture goes down with the search);
there is no transposition table, since a position's value depends on that
record.

With an endgame database (:mod:`.endgame`, ``endgame=`` of :func:`search`
and :func:`iterative_deepening`), a position reached in the search with at
most the database's seeds on the board is a leaf worth its final result
under the database's rule (its value: the seeds each player gets from
there, cycles split evenly), scored as a finished game: ``WIN`` with the
sign of the final difference, plus that difference. It is exact for the
database's rule, not for OpenSpiel's repetition rule (docs/oware.md).

Move ordering: the previous iteration's best move first at the root, then
the moves that capture the most seeds; ties keep house order.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..._checks import check_float, check_int
from ...stop import STOP_SLOT, new_counters, stop_requested, watch
from ...trees.memory import DEFAULT_MAX_BYTES, check_bytes
from ..kalah.alphabeta import path_hash
from .rules import GAME_OVER
from .endgame import OwareEndgame, lookup_half_seeds
from .state import BOARD_DTYPE, RULES, OwareState

apply_move = RULES.apply_move
legal_moves = RULES.legal_moves
sow = RULES.sow
capture = RULES.capture

#: Value of a won game (plus its score difference).
WIN = 1000.0
#: Deepest search :func:`search` accepts.
MAX_DEPTH = 64
DEFAULT_SIDE_WEIGHT = 0.25
NO_LIMIT = np.iinfo(np.int64).max
#: The kernel's database arguments when no database is probed (``db_seeds`` -1).
NO_DB_VALUES = np.zeros(1, np.uint8)
NO_DB_BINOM = np.zeros((1, 1), np.int64)
#: The kernels' ``trace`` argument when no frontier trace is recorded.
NO_TRACE = np.zeros(0, np.uint64)


@njit(cache=True, inline="always")
def evaluate(board, m, view, side_weight):
    """Frontier value for player ``view``: captured difference + side_weight * seeds-on-side difference."""
    cap = np.float64(board[2 * m + view] - board[2 * m + 1 - view])
    own = 0
    opp = 0
    for j in range(m):
        own += board[view * m + j]
        opp += board[(1 - view) * m + j]
    return cap + side_weight * np.float64(own - opp)


@njit(cache=True, inline="always")
def margin_value(margin):
    """The value of a finished game won by ``margin`` (float64) seeds: ``WIN + margin``, a loss
    ``-WIN + margin``, a draw 0."""
    if margin > 0:
        return WIN + margin
    if margin < 0:
        return -WIN + margin
    return 0.0


@njit(cache=True, inline="always")
def final_value(board, m, view):
    return margin_value(np.float64(board[2 * m + view] - board[2 * m + 1 - view]))


@njit(cache=True, inline="always")
def database_value(board, m, view, db_values, db_binom):
    """Final value for player ``view`` to move under the database's rule:
    the scores so far plus the seeds each side gets from here (``WIN``-scaled
    as :func:`final_value`)."""
    on_board = 0
    for j in range(2 * m):
        on_board += board[j]
    v = np.int64(lookup_half_seeds(board, m, view, db_values, db_binom))  # half-seeds for ``view``
    return margin_value(np.float64(board[2 * m + view] - board[2 * m + 1 - view] + v - on_board))


@njit(cache=True, inline="always")
def seeds_on_board(board, m):
    total = 0
    for j in range(2 * m):
        total += board[j]
    return total


@njit(cache=True, inline="always")
def order_moves(boards, k, m, player, gsi, moves, keys, root_first):
    """Legal moves of ``boards[k]`` into ``moves[k]``, best first; returns how many."""
    board = boards[k]
    child = boards[k + 1]
    num = legal_moves(board, m, player, gsi, moves[k])
    for j in range(num):  # captures first, the root's previous best move before all
        for i in range(2 * m + 2):
            child[i] = board[i]
        before = child[2 * m + player]
        capture(child, m, player, sow(child, m, moves[k, j]))
        keys[k, j] = np.float64(child[2 * m + player] - before)
        if k == 0 and moves[k, j] == root_first:
            keys[k, j] += 1e6
    for j in range(1, num):  # stable insertion sort, best first
        mv = moves[k, j]
        kv = keys[k, j]
        i = j - 1
        while i >= 0 and keys[k, i] < kv:
            moves[k, i + 1] = moves[k, i]
            keys[k, i + 1] = keys[k, i]
            i -= 1
        moves[k, i + 1] = mv
        keys[k, i + 1] = kv
    return num



@njit(cache=True, nogil=True)
def negamax_kernel(boards, m, root_player, depth, hist, root_first_row, root_rows, root_ply, move_limit, gsi,
             side_weight, moves, keys, counters, node_limit, root_first, db_values, db_binom, db_seeds, trace):
    """Fail-soft alpha-beta from ``boards[0]`` (``root_player`` to move) to ``depth``
    plies, with explicit per-ply stacks (no recursion). ``counters``: int64[4] =
    (nodes, frontier evaluations, aborted flag, evaluations of unfinished games),
    or int64[5] whose ``counters[STOP_SLOT]`` another thread may set non-zero to
    abort the search (read every 1,024 nodes, :mod:`jitsearch.stop`), as the node limit does. Positions
    below the root with at most ``db_seeds`` seeds on the board (-1: none) are leaves valued by
    the database ``db_values``/``db_binom``. ``trace`` (uint64, length 0: none) receives the
    path hash (:func:`jitsearch.games.kalah.alphabeta.path_hash` of the houses from the root)
    of each frontier position, in order. Returns (value for the root player, best house)."""
    player = np.empty(depth + 1, np.int64)
    first = np.empty(depth + 1, np.int64)
    count = np.empty(depth + 1, np.int64)
    alpha = np.empty(depth + 1, np.float64)
    beta = np.empty(depth + 1, np.float64)
    best = np.empty(depth + 1, np.float64)
    best_move = np.empty(depth + 1, np.int64)
    index = np.empty(depth + 1, np.int64)
    num = np.empty(depth + 1, np.int64)
    current = np.empty(depth + 1, np.int64)
    paths = np.zeros(depth + 1, np.uint64)
    record = trace.shape[0] > 0
    player[0] = root_player
    first[0] = root_first_row
    count[0] = root_rows
    alpha[0] = -math.inf
    beta[0] = math.inf
    counters[0] += 1
    num[0] = order_moves(boards, 0, m, root_player, gsi, moves, keys, root_first)
    index[0] = 0
    best[0] = -math.inf
    best_move[0] = moves[0, 0]
    k = 0
    while True:
        if index[k] < num[k]:
            house = moves[k, index[k]]
            index[k] += 1
            child = boards[k + 1]
            for i in range(2 * m + 2):
                child[i] = boards[k, i]
            nxt, f2, c2 = apply_move(child, m, player[k], house, gsi, hist, first[k], count[k], root_ply + k,
                                     move_limit)
            counters[0] += 1
            if counters[0] > node_limit or stop_requested(counters, counters[0]):
                counters[2] = 1
                return 0.0, -1
            if record:
                paths[k + 1] = path_hash(paths[k], house)
            leaf = True
            if nxt == GAME_OVER:
                v = -final_value(child, m, 1 - player[k])
            elif db_seeds >= 0 and seeds_on_board(child, m) <= db_seeds:
                v = -database_value(child, m, nxt, db_values, db_binom)
            elif k + 1 == depth:
                counters[3] += 1
                v = -evaluate(child, m, nxt, side_weight)
            else:
                leaf = False
            if leaf:
                if record and counters[1] < trace.shape[0]:
                    trace[counters[1]] = paths[k + 1]
                counters[1] += 1
            else:  # go down one ply
                current[k] = house
                k += 1
                player[k] = nxt
                first[k] = f2
                count[k] = c2
                alpha[k] = -beta[k - 1]
                beta[k] = -alpha[k - 1]
                num[k] = order_moves(boards, k, m, nxt, gsi, moves, keys, -1)
                index[k] = 0
                best[k] = -math.inf
                best_move[k] = moves[k, 0]
                continue
        else:  # this ply is done: hand its value up
            if k == 0:
                return best[0], best_move[0]
            v = -best[k]
            k -= 1
            house = current[k]
        if v > best[k]:
            best[k] = v
            best_move[k] = house
        if v > alpha[k]:
            alpha[k] = v
        if alpha[k] >= beta[k]:
            index[k] = num[k]  # cut off the remaining moves


@dataclass(frozen=True)
class SearchResult:
    """``value`` for the root's player to move; ``move`` a house index;
    ``depth`` of the last completed iteration; ``nodes`` and ``evaluations``
    (frontier positions valued) summed over the iterations; ``seconds`` of
    wall time; ``frontier`` the path hashes of the frontier positions in
    the order valued (``trace=True`` of a fixed-depth search), else None.
    FSSS (:mod:`.fsss`) returns the same record, ``nodes`` then counting node
    visits over all its rollouts."""

    move: int
    value: float
    depth: int
    nodes: int
    evaluations: int
    seconds: float
    frontier: np.ndarray | None = None


def search_buffers(state: OwareState, depth: int):
    m = state.houses
    rows = len(state.history)
    hist = np.empty((rows + depth + 1, 2 * m + 1), BOARD_DTYPE)
    hist[:rows] = state.history
    boards = np.empty((depth + 2, 2 * m + 2), BOARD_DTYPE)
    boards[0] = state.board
    return boards, hist, np.empty((depth + 1, m), np.int64), np.empty((depth + 1, m), np.float64)


def trace_buffer(state: OwareState, depth: int, trace: bool) -> np.ndarray:
    """A frontier trace for a ``depth``-ply search (at most m**depth positions), or :data:`NO_TRACE`."""
    if not trace:
        return NO_TRACE
    cap = min(state.houses ** depth, 1 << 26)
    check_bytes(cap * 8, DEFAULT_MAX_BYTES, f"a frontier trace of up to {cap} positions", "lower the depth")
    return np.zeros(cap, np.uint64)


def check_search_args(state, side_weight, endgame=None):
    if not isinstance(state, OwareState):
        raise ValueError(f"state must be an OwareState, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over: there is no move to search")
    if endgame is not None:
        if not isinstance(endgame, OwareEndgame):
            raise ValueError(f"endgame must be an OwareEndgame (endgame.build_database), got "
                             f"{type(endgame).__name__}")
        if endgame.houses != state.houses or endgame.grand_slam_illegal != state.grand_slam_illegal:
            raise ValueError(f"the endgame database is for {endgame.houses} houses"
                             f"{' with grand slams illegal' if endgame.grand_slam_illegal else ''}, not this game")
    return check_float("side_weight", side_weight, -100.0, 100.0)


def database_arguments(endgame):
    if endgame is None:
        return NO_DB_VALUES, NO_DB_BINOM, -1
    return endgame.values, endgame.binom, endgame.max_seeds


def search(state: OwareState, depth: int, *, side_weight: float = DEFAULT_SIDE_WEIGHT,
           first_move: int = -1, node_limit: int | None = None,
           endgame: OwareEndgame | None = None, trace: bool = False, stop=None) -> SearchResult | None:
    """Alpha-beta to ``depth`` plies (1..MAX_DEPTH) from ``state``; ``first_move``
    is tried first at the root; ``endgame`` a database probed at the leaves
    (module docstring); ``trace`` records the frontier's path hashes
    (``frontier``). Returns None if ``node_limit`` stopped it. ``stop`` (a
    ``threading.Event``) set from another thread stops the kernel within
    1,024 nodes (:mod:`jitsearch.stop`) and raises ``KeyboardInterrupt``."""
    return run_search(negamax_kernel, state, depth, side_weight, first_move, node_limit, endgame, trace, stop)


def run_search(kernel, state, depth, side_weight, first_move, node_limit, endgame, trace,
               stop=None) -> SearchResult | None:
    """Validate the arguments of a fixed-depth search, run ``kernel``
    (:func:`negamax_kernel` or FSSS's, same signature) and wrap its result;
    None if ``node_limit`` stopped it; ``KeyboardInterrupt`` if ``stop`` did."""
    side_weight = check_search_args(state, side_weight, endgame)
    depth = check_int("depth", depth, 1, MAX_DEPTH)
    limit = NO_LIMIT if node_limit is None else check_int("node_limit", node_limit, 1)
    buf = trace_buffer(state, depth, trace)
    boards, hist, moves, keys = search_buffers(state, depth)
    counters = new_counters(4)
    t0 = time.perf_counter()
    with watch(stop, counters):
        value, move = kernel(boards, state.houses, state.player, depth, hist, 0, len(state.history), state.ply,
                             state.move_limit, state.grand_slam_illegal, side_weight, moves, keys, counters, limit,
                             int(first_move), *database_arguments(endgame), buf)
    if counters[STOP_SLOT]:
        raise KeyboardInterrupt
    if counters[2]:
        return None
    return SearchResult(int(move), float(value), depth, int(counters[0]), int(counters[1]),
                        time.perf_counter() - t0, buf[:int(counters[1])].copy() if trace else None)


def iterative_deepening(state: OwareState, *, time_limit: float | None = None, max_depth: int = MAX_DEPTH,
                        side_weight: float = DEFAULT_SIDE_WEIGHT,
                        endgame: OwareEndgame | None = None, stop=None) -> SearchResult:
    """Depths 1, 2, ... until ``max_depth`` or ``time_limit`` seconds; each
    iteration searches the previous best move first. An iteration that the
    remaining time cannot finish (judged from the node rate so far) is
    stopped by a node limit; the deepest finished one is returned (depth 1
    always finishes). ``endgame``: as in :func:`search`. ``stop`` (a
    ``threading.Event``) ends the search within 1,024 nodes of being set and
    raises ``KeyboardInterrupt``: no half-searched move is returned."""
    return deepen(search, state, time_limit, max_depth, side_weight, endgame, stop)


def deepen(search_fn, state, time_limit, max_depth, side_weight, endgame, stop=None) -> SearchResult:
    """Iterative deepening over ``search_fn`` (:func:`search` or FSSS's), as
    :func:`iterative_deepening` describes; the node limit of an iteration is
    in ``search_fn``'s own node count."""
    side_weight = check_search_args(state, side_weight, endgame)
    max_depth = check_int("max_depth", max_depth, 1, MAX_DEPTH)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, 86_400.0, lo_open=True)
    t0 = time.perf_counter()
    best = search_fn(state, 1, side_weight=side_weight, endgame=endgame, stop=stop)
    nodes, evals = best.nodes, best.evaluations
    for depth in range(2, max_depth + 1):
        if abs(best.value) >= WIN:  # a forced result: deeper iterations cannot change who wins
            break
        limit = None
        if time_limit is not None:
            elapsed = time.perf_counter() - t0
            left = time_limit - elapsed
            if left <= 0:
                break
            rate = nodes / max(elapsed, 1e-6)
            limit = max(1, int(rate * left))
        r = search_fn(state, depth, side_weight=side_weight, first_move=best.move, node_limit=limit, endgame=endgame,
                      stop=stop)
        if r is None:
            break
        nodes += r.nodes
        evals += r.evaluations
        best = r
    return SearchResult(best.move, best.value, best.depth, nodes, evals, time.perf_counter() - t0)

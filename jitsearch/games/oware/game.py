"""Oware behind the game protocol (:mod:`jitsearch.games.protocol`): the adapter of
:mod:`.rules` to the one compiled signature, and the :data:`GAME` record.

``cfg = (m, grand_slam_illegal, move_limit)``; the repetition record is the rule module's
``hist`` (rows of 2m houses and the player to move), threaded with ``cur = (first, count,
ply)``; a game from a state with ``r`` record rows writes at most ``move_limit - ply`` rows
more. ``margin`` is player 0's captured seeds minus player 1's; ``evaluate`` the same on a live
board.
"""

from __future__ import annotations

import numpy as np

from ..._checks import check_float
from ..protocol import GAME_OVER, Game, Option, Packed, Rules, SearchEval, Sizes, check_states
from . import rules
from .rules import OPENSPIEL_MOVE_LIMIT
from .state import BOARD_DTYPE, MAX_HOUSES, MAX_MOVE_LIMIT, OwareState

__all__ = ["GAME", "build", "node_record"]


def build(jit) -> Rules:
    """Compile Oware's rules with ``jit`` behind the protocol's signature (inline adapters)."""
    base = rules.build(jit)
    apply_move, legal_moves, margin_ = base.apply_move, base.legal_moves, base.margin

    def legal(board, cfg, player, moves, hist, cur):
        return legal_moves(board, cfg[0], player, cfg[1], moves)

    def apply(board, cfg, player, move, hist, cur):
        nxt, first, count = apply_move(board, cfg[0], player, move, cfg[1], hist, cur[0], cur[1], cur[2], cfg[2])
        return nxt, (first, count, cur[2] + 1)

    def margin(board, cfg):
        return margin_(board, cfg[0])

    def evaluate(board, cfg, player):
        return float(margin_(board, cfg[0]))

    return Rules(legal=jit(legal), apply=jit(apply), margin=jit(margin), evaluate=jit(evaluate))


def node_record(jit):
    """Compile Oware's ``record(parent, boards, to_move, t, node, root_hist, root_rows, cfg, hist) ->
    (count, depth)`` (:attr:`jitsearch.games.protocol.Game.node_record`): the positions since the
    last capture, in any order (the rules only ask whether a position is in the record): the
    boards from the node up its path, stopping after the first node entered by a capture (its
    scores grew), else adding the root's record."""

    def record(parent, boards, to_move, t, node, root_hist, root_rows, cfg, hist):
        n = 2 * cfg[0]
        count = 0
        depth = 0
        recording = True
        x = node
        while x != 0:
            p = parent[t, x]
            if recording:
                for j in range(n):
                    hist[count, j] = boards[t, x, j]
                hist[count, n] = to_move[t, x]
                count += 1
                if boards[t, x, n] + boards[t, x, n + 1] != boards[t, p, n] + boards[t, p, n + 1]:
                    recording = False  # entered by a capture: the record starts at x
            depth += 1
            x = p
        if recording:
            for r in range(root_rows[t]):
                for j in range(n + 1):
                    hist[count, j] = root_hist[t, r, j]
                count += 1
        return count, depth

    return jit(record)


#: Multiples of 1/SIDE_WEIGHT_DENOMINATOR are the side weights the kernels take (exact products).
SIDE_WEIGHT_DENOMINATOR = 256
#: Largest |side_weight| of the evaluation.
MAX_SIDE_WEIGHT = 16.0


def search_value(jit):
    """Compile Oware's MCTS evaluation (``eval=capture``, :class:`~..protocol.SearchEval`) with
    ``jit``: ``value`` the alpha-beta's frontier value for player 0 (captured difference +
    ``side_weight`` x seeds-on-side difference, :func:`.alphabeta.evaluate`), ``scale`` the
    board's seeds. ``side_weight`` a multiple of 1/256: its product is exact and a fused
    multiply-add rounds as the CPU does."""
    from .alphabeta import evaluate as frontier_source

    frontier = jit(frontier_source.py_func)

    def value(board, cfg, side_weight):
        return frontier(board, cfg[0], 0, side_weight)

    def scale(board, cfg, side_weight):
        total = 0
        for i in range(2 * cfg[0] + 2):
            total += board[i]
        return np.float64(total)

    return jit(value), jit(scale)


def check_side_weight(side_weight) -> float:
    """``side_weight`` (None: the alpha-beta's default) checked: a multiple of 1/256 in [-16, 16]."""
    from .alphabeta import DEFAULT_SIDE_WEIGHT

    if side_weight is None:
        return float(DEFAULT_SIDE_WEIGHT)
    side_weight = check_float("side_weight", side_weight, -MAX_SIDE_WEIGHT, MAX_SIDE_WEIGHT)
    if side_weight * SIDE_WEIGHT_DENOMINATOR != round(side_weight * SIDE_WEIGHT_DENOMINATOR):
        raise ValueError(f"side_weight must be a multiple of 1/{SIDE_WEIGHT_DENOMINATOR} (exact on every "
                         f"backend), got {side_weight!r}")
    return float(side_weight)


def cfg(state: OwareState) -> tuple:
    return (int(state.houses), bool(state.grand_slam_illegal), int(state.move_limit))


def sizes(cfg: tuple) -> Sizes:
    m, _, limit = cfg
    return Sizes(cells=2 * m + 2, moves=m, plies=int(limit), record=(int(limit), 2 * m + 1))


def pack(states) -> Packed:
    states = check_states(states, OwareState, "oware")
    c = cfg(states[0])
    if any(cfg(s) != c for s in states):
        raise ValueError("all states of a batch need the same houses, move limit and grand-slam rule")
    m = c[0]
    k = len(states)
    rows = np.array([len(s.history) for s in states], np.int64)
    hists = np.zeros((k, int(rows.max()), 2 * m + 1), BOARD_DTYPE)
    for i, s in enumerate(states):
        hists[i, :rows[i]] = s.history
    boards = np.stack([np.array(s.board, BOARD_DTYPE) for s in states])
    players = np.array([s.player for s in states], np.int64)
    plies = np.array([s.ply for s in states], np.int64)
    return Packed(boards, players, hists, rows, plies, c)


def initial(houses: int = 6, seeds: int = 4, move_limit: int = OPENSPIEL_MOVE_LIMIT,
            grand_slam_illegal: bool = False) -> OwareState:
    return OwareState.initial(houses, seeds, move_limit=move_limit, grand_slam_illegal=grand_slam_illegal)


def from_text(text: str, *, houses: int = 6, seeds: int = 4, move_limit: int = OPENSPIEL_MOVE_LIMIT,
              grand_slam_illegal: bool = False) -> OwareState:
    """Parse Oware's text form; ``houses`` and ``seeds`` are read from the text (ignored here)."""
    return OwareState.from_text(text, move_limit=move_limit, grand_slam_illegal=grand_slam_illegal)


def solver(state: OwareState) -> int:
    """Player 0's final margin under perfect play (:func:`.solver.solve`, small variants)."""
    from .solver import solve
    margin = solve(state).margin
    return int(margin if state.player == 0 else -margin)


GAME = Game(
    name="oware",
    State=OwareState,
    variant={"houses": Option(int, 6, "houses a side"),
             "seeds": Option(int, 4, "seeds a house at the start"),
             "move_limit": Option(int, OPENSPIEL_MOVE_LIMIT, "the game ends after this many plies"),
             "grand_slam_illegal": Option(bool, False, "a grand slam is illegal (OpenSpiel: it captures nothing)")},
    initial=initial,
    from_text=from_text,
    cfg=cfg,
    build=build,
    pack=pack,
    sizes=sizes,
    max_cells=2 * MAX_HOUSES + 2,
    max_moves=MAX_HOUSES,
    max_plies=MAX_MOVE_LIMIT,
    board_dtype=np.dtype(BOARD_DTYPE),
    solver=solver,
    node_record=node_record,
    search_eval=SearchEval(build=search_value, evals=("capture",), param="side_weight",
                           check_param=check_side_weight, node_dtype=np.dtype(np.int16)),
)

assert GAME_OVER == rules.GAME_OVER

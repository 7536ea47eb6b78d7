"""Kalah behind the game protocol (:mod:`jitsearch.games.protocol`): the adapter of
:mod:`.rules` to the one compiled signature, and the :data:`GAME` record.

``cfg = (m, empty_capture)``; no record (the cursor passes through, its ply counts moves);
``margin`` is player 0's store minus player 1's; ``evaluate`` the same store difference on a
live board (the ``store`` evaluation of the MCTS kernels, before their squash).
"""

from __future__ import annotations

import numpy as np

from ..protocol import GAME_OVER, Game, Option, Packed, Rules, Sizes, check_states, no_record
from . import fast, rules
from .state import BOARD_DTYPE, MAX_HOUSES, KalahState

__all__ = ["GAME", "build"]


def build(jit) -> Rules:
    """Compile Kalah's rules with ``jit`` behind the protocol's signature (inline adapters:
    with ``njit(inline='always')`` the playout's code is that of the rule module's functions)."""
    base = rules.build(jit)
    apply_move, legal_moves, margin_ = base.apply_move, base.legal_moves, base.margin

    def legal(board, cfg, player, moves, hist, cur):
        return legal_moves(board, cfg[0], player, moves)

    def apply(board, cfg, player, move, hist, cur):
        nxt = apply_move(board, cfg[0], player, move, cfg[1])
        return nxt, (cur[0], cur[1], cur[2] + 1)

    def margin(board, cfg):
        return margin_(board, cfg[0])

    def evaluate(board, cfg, player):
        return float(margin_(board, cfg[0]))

    return Rules(legal=jit(legal), apply=jit(apply), margin=jit(margin), evaluate=jit(evaluate))


def cfg(state: KalahState) -> tuple:
    return (int(state.houses), bool(state.empty_capture))


def sizes(cfg: tuple) -> Sizes:
    m = int(cfg[0])
    return Sizes(cells=2 * m + 2, moves=m, plies=-1, record=(0, 1))


def pack(states) -> Packed:
    states = check_states(states, KalahState, "kalah")
    c = cfg(states[0])
    if any(cfg(s) != c for s in states):
        raise ValueError("all states of a batch need the same houses and empty-capture rule")
    k = len(states)
    boards = np.stack([np.array(s.board, BOARD_DTYPE) for s in states])
    players = np.array([s.player for s in states], np.int64)
    zeros = np.zeros(k, np.int64)
    return Packed(boards, players, no_record(k), zeros, zeros.copy(), c)


def initial(houses: int = 6, seeds: int = 4, empty_capture: bool = False) -> KalahState:
    return KalahState.initial(houses, seeds, empty_capture=empty_capture)


def from_text(text: str, *, houses: int = 6, seeds: int = 4, empty_capture: bool = False) -> KalahState:
    """Parse Kalah's text form; ``houses`` and ``seeds`` are read from the text (ignored here)."""
    return KalahState.from_text(text, empty_capture=empty_capture)


def solver(state: KalahState) -> int:
    """Player 0's final margin under perfect play (:func:`.solver.solve_exact`)."""
    from .solver import solve_exact
    return int(solve_exact(state)["margin"])


GAME = Game(
    name="kalah",
    State=KalahState,
    variant={"houses": Option(int, 6, "houses a side"),
             "seeds": Option(int, 4, "seeds a house at the start"),
             "empty_capture": Option(bool, False, "a last seed in an own empty house captures even when the "
                                                  "opposite house is empty")},
    initial=initial,
    from_text=from_text,
    cfg=cfg,
    build=build,
    pack=pack,
    sizes=sizes,
    max_cells=2 * MAX_HOUSES + 2,
    max_moves=MAX_HOUSES,
    max_plies=-1,
    board_dtype=np.dtype(BOARD_DTYPE),
    solver=solver,
    fast_playouts=fast,
)

assert GAME_OVER == rules.GAME_OVER

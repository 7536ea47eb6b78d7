"""Connect Four behind the game protocol (:mod:`jitsearch.games.protocol`) and its
:data:`GAME` record. ``cfg = (width, height)``; no record; ``margin`` +1 / 0 / -1 for player
0; ``evaluate`` ``d / (|d| + 1)`` of ``d``, player 0's empty winning cells minus player 1's: an
estimate of the margin strictly inside (-1, 1), so that a search never prefers threats to a win."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..protocol import (EngineProtocol, Game, OpenSpielMap, Option, Packed, Rules, Sizes, TextUI, check_states,
                        legal_move, no_record, styled, typed_number)
from . import rules
from .exact import EXACT
from .rules import MAX_HEIGHT, MAX_WIDTH
from .state import Connect4State

__all__ = ["GAME", "build"]

BOARD_DTYPE = np.dtype(np.int64)


def build(jit) -> Rules:
    """Compile Connect Four's rules with ``jit`` behind the protocol's signature."""
    base = rules.build(jit)
    apply_move, legal_moves, margin_, threats = base.apply_move, base.legal_moves, base.margin, base.threats

    def legal(board, cfg, player, moves, hist, cur):
        return legal_moves(board, cfg[0], cfg[1], moves)

    def apply(board, cfg, player, move, hist, cur):
        nxt = apply_move(board, cfg[0], cfg[1], player, move)
        return nxt, (cur[0], cur[1], cur[2] + 1)

    def margin(board, cfg):
        return margin_(board, cfg[1])

    def evaluate(board, cfg, player):  # inside (-1, 1): never worth a win, whose margin is 1
        d = float(threats(board, cfg[0], cfg[1]))
        return d / (abs(d) + 1.0)

    return Rules(legal=jit(legal), apply=jit(apply), margin=jit(margin), evaluate=jit(evaluate))


def position_key(jit):
    """``key(board, cfg, player)``: player 0's stones plus every stone, one bit more per column
    than the stones in it, so unique (Pons, "Solving Connect 4", part 6); the mover follows."""

    def key(board, cfg, player):
        return np.uint64(board[0] + (board[0] | board[1]))

    return jit(key)


def move_order(jit):
    """``score(board, cfg, player, move)``: centre columns first (Pons, part 5)."""

    def score(board, cfg, player, move):
        return -float(abs(2 * move - (cfg[0] - 1)))

    return jit(score)


def cfg(state: Connect4State) -> tuple:
    return (int(state.width), int(state.height))


def sizes(cfg: tuple) -> Sizes:
    w, h = cfg
    return Sizes(cells=2, moves=int(w), plies=int(w * h), record=(0, 1))


def pack(states) -> Packed:
    states = check_states(states, Connect4State, "connect4")
    c = cfg(states[0])
    if any(cfg(s) != c for s in states):
        raise ValueError("all states of a batch need the same width and height")
    k = len(states)
    boards = np.array([s.stones for s in states], BOARD_DTYPE).reshape(k, 2)
    players = np.array([s.player for s in states], np.int64)
    plies = np.array([s.ply for s in states], np.int64)
    return Packed(boards, players, no_record(k), np.zeros(k, np.int64), plies, c)


def initial(width: int = 7, height: int = 6) -> Connect4State:
    return Connect4State.initial(width, height)


def from_text(text: str, *, width: int = 7, height: int = 6) -> Connect4State:
    return Connect4State.from_text(text, width=width, height=height)


def _solver(state: Connect4State) -> int:
    """Pons's score of the position for player 0 (his scores are the mover's)."""
    from .solver import solve  # compiled on first use
    score = solve(state)
    return score if state.player == 0 else -score


#: OpenSpiel's ``connect_four`` with ``columns`` and ``rows``: an action is our column 0..width-1,
#: its ``x`` our player 0. A state reached from a board text does not know its moves.
OPENSPIEL = OpenSpielMap(
    name="connect_four", params=lambda v: {"columns": v["width"], "rows": v["height"]},
    variant=lambda p: {"width": int(p.get("columns", 7)), "height": int(p.get("rows", 6))},
    action=lambda state, move: int(move), move=lambda state, action: int(action),
    replay=lambda state: None if state.moves is None else list(state.moves))


GAME = Game(
    name="connect4",
    State=Connect4State,
    variant={"width": Option(int, 7, "columns (4..9)"), "height": Option(int, 6, "rows (4..8)")},
    initial=initial,
    from_text=from_text,
    cfg=cfg,
    build=build,
    pack=pack,
    sizes=sizes,
    max_cells=2,
    max_moves=MAX_WIDTH,
    max_plies=max(w * h for w in range(4, MAX_WIDTH + 1) for h in range(4, MAX_HEIGHT + 1) if w * (h + 1) <= 64),
    board_dtype=BOARD_DTYPE,
    solver=_solver,
    exact=EXACT,
    position_key=position_key,
    move_order=move_order,
    openspiel=OPENSPIEL,
    engine_protocol=EngineProtocol(variant_of=lambda state: {"width": state.width, "height": state.height}),
)


# -- text and web forms (play, analyse, serve: protocol.TextUI) ------------------------------------

def board_text(state: Connect4State, last: int | None = None, markup: bool = False) -> str:
    """The grid, top row first (``x`` player 0, ``o`` player 1, ``.`` empty), the columns numbered
    from 1 below it; ``last`` (a column) is where the last stone fell."""
    w, h = state.width, state.height
    top = None
    if last is not None:
        top = max((r for r in range(h) if state.cell(last, r) >= 0), default=None)

    def cell(c, r):
        who = state.cell(c, r)
        styles = () if who < 0 else ("last", f"p{who}") if (c, r) == (last, top) else (f"p{who}",)
        return styled(".xo"[who + 1], *styles, markup=markup)

    rows = [" ".join(cell(c, r) for c in range(w)) for r in range(h - 1, -1, -1)]
    labels = styled(" ".join(str(c + 1) for c in range(w)), "dim", markup=markup)
    who = {0: "x (player 0) to move", 1: "o (player 1) to move"}.get(state.player, f"game over: {state.result}")
    return "\n".join(rows + [labels, who])


def parse_move(state: Connect4State, text: str) -> int:
    """A column 1..width typed by the player to move, as the move 0..width-1."""
    column = typed_number(text, state.width, "column")
    return legal_move(state, column - 1, f"column {column} is full")


def board_json(state: Connect4State) -> dict:
    """What the game's drawing script (``board.js``) draws: ``cells[row][column]``, rows top to bottom, -1 empty, else
    the player whose stone it is."""
    w, h = state.width, state.height
    return {"width": w, "height": h, "ply": state.ply,
            "cells": [[state.cell(c, r) for c in range(w)] for r in range(h - 1, -1, -1)]}


GAME = replace(GAME, ui=TextUI(
    board=board_text,
    move_name=lambda state, column: f"drops a stone in column {column + 1}",
    ask=lambda state: f"column 1-{state.width}",
    parse_move=parse_move,
    board_json=board_json,
    script=str(Path(__file__).with_name("board.js"))))


# -- exact move values for analysis (protocol: Game.move_values) ---------------------------------

#: Empty cells up to which an analysis solves every move (Pons's solver: well under a second).
EXACT_EMPTY_CELLS = 16


def move_values(state: Connect4State):
    """Pons's score (the mover's: positive wins, the faster the larger) after each move, when at
    most :data:`EXACT_EMPTY_CELLS` cells are empty; else None."""
    from .solver import solve

    if state.is_over or state.width * state.height - state.ply > EXACT_EMPTY_CELLS:
        return None
    values = {}
    for move in state.legal_moves():
        child = state.play(move)
        if child.is_over:  # a win now scores (cells + 1 - stones played before it) / 2; a full board draws
            values[move] = (state.width * state.height + 1 - state.ply) // 2 if child.margin else 0
        else:
            values[move] = -solve(child)  # Pons's score is the child's mover's
    return {"values": values, "rule": "Pons's score: the mover wins with a positive one, the sooner the larger"}


GAME = replace(GAME, move_values=move_values)

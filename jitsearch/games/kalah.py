"""Kalah(m, n): positions, validation, text/ASCII/JSON forms (rules in kalah_rules).

Position text form (round-trips)::

    4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0

player 0's houses in board order (pits 1..m, the last one next to its
store), player 0's store, player 1's houses in board order (pits
m+2..2m+1), player 1's store, then the player to move: ``p0``, ``p1``, or
``end`` once the game is over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from . import kalah_rules
from .kalah_rules import GAME_OVER

#: Rules compiled for the CPU (cached); the CUDA twin uses kalah_rules.build too.
RULES = kalah_rules.build(njit(cache=True))
# module-level names: Numba resolves compiled callees as globals, not attributes
apply_move = RULES.apply_move
legal_moves = RULES.legal_moves
margin_of = RULES.margin
heuristic_of = RULES.heuristic
MAX_HOUSES = 16
BOARD_DTYPE = np.int32


@dataclass(frozen=True, eq=False)
class KalahState:
    """An immutable Kalah position.

    Attributes: ``board`` (int32[2m+2], layout in :mod:`kalah_rules`),
    ``player`` (0 or 1 to move, or -1 when the game is over), ``houses`` m,
    ``empty_capture`` (the rule variant), ``seeds_total``.
    """

    board: np.ndarray
    player: int
    houses: int
    empty_capture: bool = False
    seeds_total: int = field(default=-1)

    # -- construction -----------------------------------------------------------
    @classmethod
    def initial(cls, houses: int = 6, seeds: int = 4, *, empty_capture: bool = False) -> "KalahState":
        _check_size(houses, seeds)
        board = np.zeros(2 * houses + 2, dtype=BOARD_DTYPE)
        board[1:houses + 1] = seeds
        board[houses + 2:] = seeds
        return cls(board, 0, houses, empty_capture, 2 * houses * seeds)

    @classmethod
    def from_board(cls, board, player: int, *, empty_capture: bool = False, seeds_total: int | None = None):
        """Validate a raw board (length 2m+2, counts >= 0) and the player to move."""
        try:
            arr = np.asarray(board)
        except Exception:  # noqa: BLE001
            raise ValueError("board must be a list of seed counts") from None
        if arr.ndim != 1 or arr.size < 4 or arr.size % 2:
            raise ValueError(f"a board has 2m+2 pits (m >= 1 houses a side), got {arr.size}")
        if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
            raise ValueError("seed counts must be integers")
        arr = arr.astype(np.int64)
        if np.any(arr < 0):
            raise ValueError("seed counts must be >= 0")
        m = arr.size // 2 - 1
        if m > MAX_HOUSES:
            raise ValueError(f"at most {MAX_HOUSES} houses a side, got {m}")
        total = int(arr.sum())
        if seeds_total is not None and total != seeds_total:
            raise ValueError(f"the board holds {total} seeds, expected {seeds_total}")
        if total > 10_000:
            raise ValueError("at most 10000 seeds")
        over = arr[1:m + 1].sum() == 0 or arr[m + 2:].sum() == 0
        if over:
            if arr[1:m + 1].sum() or arr[m + 2:].sum():
                raise ValueError("a finished game has all its seeds in the stores")
            player = -1
        elif player not in (0, 1):
            raise ValueError(f"player to move must be 0 or 1, got {player!r}")
        return cls(arr.astype(BOARD_DTYPE), int(player), m, bool(empty_capture), total)

    @classmethod
    def from_text(cls, text: str, *, empty_capture: bool = False, seeds_total: int | None = None):
        """Parse the text form (see module docstring)."""
        try:
            body, who = text.strip().rsplit(" ", 1)
            parts = body.split("/")
            if len(parts) != 4:
                raise ValueError
            h0 = [int(x) for x in parts[0].split(",")]
            s0 = int(parts[1])
            h1 = [int(x) for x in parts[2].split(",")]
            s1 = int(parts[3])
        except ValueError:
            raise ValueError(
                f"position must look like '4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0', got {text!r}"
            ) from None
        if len(h0) != len(h1):
            raise ValueError(f"both sides need the same number of houses, got {len(h0)} and {len(h1)}")
        if who not in ("p0", "p1", "end"):
            raise ValueError(f"player to move must be p0, p1 or end, got {who!r}")
        board = [s1] + h0 + [s0] + h1
        state = cls.from_board(board, {"p0": 0, "p1": 1, "end": -1}[who], empty_capture=empty_capture,
                               seeds_total=seeds_total)
        if (who == "end") != state.is_over:
            raise ValueError("'end' must be given exactly when one side's houses are empty")
        return state

    # -- queries ---------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self.player == GAME_OVER

    @property
    def margin(self) -> int:
        """Player 0's store minus player 1's store."""
        return int(self.board[self.houses + 1] - self.board[0])

    @property
    def result(self) -> str | None:
        """'p0', 'p1' or 'draw' for a finished game, else None."""
        if not self.is_over:
            return None
        return "draw" if self.margin == 0 else ("p0" if self.margin > 0 else "p1")

    def houses_of(self, player: int) -> range:
        m = self.houses
        return range(1, m + 1) if player == 0 else range(m + 2, 2 * m + 2)

    def legal_moves(self) -> list[int]:
        if self.is_over:
            return []
        return [int(i) for i in self.houses_of(self.player) if self.board[i] > 0]

    def play(self, pit: int) -> "KalahState":
        """The position after ``player`` sows from ``pit`` (a layout index)."""
        if self.is_over:
            raise ValueError("the game is over: no move is legal")
        if isinstance(pit, bool) or not isinstance(pit, (int, np.integer)):
            raise ValueError(f"a move is a pit index, got {pit!r}")
        if pit not in self.houses_of(self.player):
            raise ValueError(f"pit {pit} is not a house of player {self.player}")
        if self.board[pit] == 0:
            raise ValueError(f"house {pit} is empty")
        board = self.board.copy()
        nxt = apply_move(board, self.houses, self.player, int(pit), self.empty_capture)
        return KalahState(board, int(nxt), self.houses, self.empty_capture, self.seeds_total)

    def house_number_to_pit(self, number: int) -> int:
        """Map a player's house number 1..m (counted from its left, away from
        its store) to the pit index."""
        if not 1 <= number <= self.houses:
            raise ValueError(f"house number must be 1..{self.houses}")
        return number if self.player == 0 else self.houses + 1 + number

    # -- forms -----------------------------------------------------------------------
    def to_text(self) -> str:
        m, b = self.houses, self.board
        who = "end" if self.is_over else f"p{self.player}"
        return (f"{','.join(str(int(x)) for x in b[1:m + 1])}/{int(b[m + 1])}/"
                f"{','.join(str(int(x)) for x in b[m + 2:])}/{int(b[0])} {who}")

    def to_json(self) -> dict:
        return {"board": [int(x) for x in self.board], "player": self.player, "houses": self.houses,
                "empty_capture": self.empty_capture, "text": self.to_text()}

    def ascii(self) -> str:
        """The board as players see it: player 1's houses on top, right to left."""
        m, b = self.houses, self.board
        top = " ".join(f"{int(b[i]):>2}" for i in range(2 * m + 1, m + 1, -1))
        bottom = " ".join(f"{int(b[i]):>2}" for i in range(1, m + 1))
        numbers1 = " ".join(f"{i:>2}" for i in range(m, 0, -1))
        numbers0 = " ".join(f"{i:>2}" for i in range(1, m + 1))
        width = 3 * m
        who = "game over" if self.is_over else f"player {self.player} to move"
        return "\n".join([
            f"      {numbers1}      (player 1's houses)",
            f"      {top}",
            f"  {int(b[0]):>2} " + " " * width + f"  {int(b[m + 1]):>2}",
            f"      {bottom}",
            f"      {numbers0}      (player 0's houses)",
            f"  {who}; margin {self.margin:+d}",
        ])

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"KalahState({self.to_text()!r}{', empty_capture' if self.empty_capture else ''})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, KalahState) and self.player == other.player
                and self.empty_capture == other.empty_capture and np.array_equal(self.board, other.board))

    def __hash__(self):
        return hash((self.board.tobytes(), self.player, self.empty_capture))


def _check_size(houses, seeds):
    if isinstance(houses, bool) or not isinstance(houses, (int, np.integer)) or not 1 <= houses <= MAX_HOUSES:
        raise ValueError(f"houses must be an integer in 1..{MAX_HOUSES}, got {houses!r}")
    if isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or not 1 <= seeds <= 100:
        raise ValueError(f"seeds must be an integer in 1..100, got {seeds!r}")


def dumps(state: KalahState) -> str:
    return json.dumps(state.to_json())

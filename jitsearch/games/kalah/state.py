"""Kalah(m, n) positions: validation, text/ASCII/JSON forms (the rules are in :mod:`.rules`).

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

from ..._checks import check_bool, check_int
from ..._jit import stable_ids
from ..protocol import Outcome
from . import rules
from .rules import GAME_OVER

#: The rules compiled for the CPU (cached): the one CPU compilation, used by every
#: CPU kernel; the CUDA kernels compile the same source with ``rules.build``.
# fixed ids (_jit.stable_ids): the shims close over compiled rules, and are cached across processes only so
RULES = rules.with_int64_arguments(rules.build(stable_ids(njit(cache=True))),
                                   stable_ids(njit(cache=True, inline="always")))
# module-level names: Numba resolves compiled callees as globals, not attributes
apply_move = RULES.apply_move
legal_moves = RULES.legal_moves
margin_of = RULES.margin
heuristic_of = RULES.heuristic
#: Houses per side: 1..MAX_HOUSES (the CUDA kernel's per-thread arrays are sized from it).
MAX_HOUSES = 16
#: Seeds on a board (houses and stores together): at most MAX_SEEDS. This keeps
#: every kernel far inside its integer types (int32 boards, the exact search's
#: ``best move + 256 * seeds`` table field), the exact search's stack
#: (``4 * total + 8`` plies) under 4,008 frames, and a random playout short
#: (about 300 plies measured at 1,000 seeds, 44 at Kalah(6,4)), so the work of
#: a search is bounded by its own budget (iterations, playouts, depth, time).
MAX_SEEDS = 1000
#: Seeds per house of a start position: 1..MAX_SEEDS_PER_HOUSE (and 2mn <= MAX_SEEDS).
MAX_SEEDS_PER_HOUSE = 100
#: Characters of a position's text form (a longer string is refused before parsing).
MAX_TEXT = 4096
BOARD_DTYPE = np.int32


@dataclass(frozen=True, eq=False)
class KalahState(Outcome):
    """An immutable Kalah position.

    Attributes: ``board`` (int32[2m+2], read-only, layout in
    :mod:`.rules`), ``player`` (0 or 1 to move, or -1 when the game is
    over), ``houses`` m (1..MAX_HOUSES), ``empty_capture`` (the rule
    variant), ``seeds_total`` (at most MAX_SEEDS). Every constructor
    validates; a bad argument raises ``ValueError``.
    """

    board: np.ndarray
    player: int
    houses: int
    empty_capture: bool = False
    seeds_total: int = field(default=-1)

    def __post_init__(self):
        """Validate and freeze: the board is copied into a read-only int32
        array, so a state cannot be changed after it was checked (``play``
        returns a new state; copy ``board`` to experiment on it)."""
        houses = check_int("houses", self.houses, 1, MAX_HOUSES)
        if not isinstance(self.board, np.ndarray):
            raise ValueError(f"board must be a NumPy array (use KalahState.from_board for lists), "
                             f"got {type(self.board).__name__}")
        if self.board.dtype.kind not in "iu" or self.board.shape != (2 * houses + 2,):
            raise ValueError(f"board must be an integer array of 2m+2 = {2 * houses + 2} pits, "
                             f"got {self.board.dtype} {self.board.shape}")
        if self.board.min() < 0 or self.board.max() > MAX_SEEDS:
            raise ValueError(f"seed counts must lie in 0..{MAX_SEEDS}")
        board = np.array(self.board, dtype=BOARD_DTYPE)  # always a copy the state owns
        total = int(board.sum(dtype=np.int64))
        if total > MAX_SEEDS:
            raise ValueError(f"a board holds at most {MAX_SEEDS} seeds, got {total}")
        seeds_total = check_int("seeds_total", self.seeds_total, -1, MAX_SEEDS)
        if seeds_total not in (-1, total):
            raise ValueError(f"the board holds {total} seeds, expected seeds_total={seeds_total}")
        player = check_int("player", self.player, -1, 1)
        over = not board[1:houses + 1].any() or not board[houses + 2:].any()
        if over and (board[1:houses + 1].any() or board[houses + 2:].any()):
            raise ValueError("a finished game has all its seeds in the stores")
        if over != (player == GAME_OVER):
            raise ValueError(f"player must be -1 exactly when the game is over (one side's houses empty), "
                             f"got {player}")
        board.flags.writeable = False
        board = board.view()  # a view of a read-only base: its flag cannot be set back to writable
        object.__setattr__(self, "board", board)
        object.__setattr__(self, "player", player)
        object.__setattr__(self, "houses", houses)
        object.__setattr__(self, "empty_capture", check_bool("empty_capture", self.empty_capture))
        object.__setattr__(self, "seeds_total", total)

    # -- construction -----------------------------------------------------------
    @classmethod
    def initial(cls, houses: int = 6, seeds: int = 4, *, empty_capture: bool = False) -> "KalahState":
        _check_size(houses, seeds)
        empty_capture = check_bool("empty_capture", empty_capture)
        board = np.zeros(2 * houses + 2, dtype=BOARD_DTYPE)
        board[1:houses + 1] = seeds
        board[houses + 2:] = seeds
        return cls(board, 0, houses, empty_capture, 2 * houses * seeds)

    @classmethod
    def from_board(cls, board, player: int, *, empty_capture: bool = False, seeds_total: int | None = None):
        """Validate a raw board (length 2m+2, counts >= 0, at most MAX_SEEDS
        seeds) and the player to move (ignored, -1, once the game is over)."""
        if isinstance(board, (str, bytes)):
            raise ValueError(f"board must be a list of seed counts, got {type(board).__name__}")
        try:
            arr = np.asarray(board)
        except Exception:  # noqa: BLE001
            raise ValueError("board must be a list of seed counts") from None
        if arr.ndim != 1 or arr.size < 4 or arr.size % 2:
            raise ValueError(f"a board has 2m+2 pits (m >= 1 houses a side), got shape {arr.shape}")
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            if arr.size and (arr.min() < 0 or arr.max() > MAX_SEEDS):
                raise ValueError(f"seed counts must lie in 0..{MAX_SEEDS}")
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise ValueError(f"seed counts must be integers in 0..{MAX_SEEDS}, got {arr.dtype} values")
        if arr.min() < 0:
            raise ValueError("seed counts must be >= 0")
        if arr.max() > MAX_SEEDS:
            raise ValueError(f"seed counts must lie in 0..{MAX_SEEDS}, got {int(arr.max())}")
        m = arr.size // 2 - 1
        if m > MAX_HOUSES:
            raise ValueError(f"at most {MAX_HOUSES} houses a side, got {m}")
        arr = arr.astype(np.int64)
        total = int(arr.sum())
        if seeds_total is not None:
            seeds_total = check_int("seeds_total", seeds_total, 0, MAX_SEEDS)
            if total != seeds_total:
                raise ValueError(f"the board holds {total} seeds, expected {seeds_total}")
        if total > MAX_SEEDS:
            raise ValueError(f"at most {MAX_SEEDS} seeds on a board, got {total}")
        over = arr[1:m + 1].sum() == 0 or arr[m + 2:].sum() == 0
        if over:
            if arr[1:m + 1].sum() or arr[m + 2:].sum():
                raise ValueError("a finished game has all its seeds in the stores")
            player = GAME_OVER
        else:
            player = check_int("player", player, 0, 1, what="player to move")
        return cls(arr.astype(BOARD_DTYPE), player, m, check_bool("empty_capture", empty_capture), total)

    @classmethod
    def from_text(cls, text: str, *, empty_capture: bool = False, seeds_total: int | None = None):
        """Parse the text form (see module docstring)."""
        if not isinstance(text, str):
            raise ValueError(f"position must be a string like '4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0', "
                             f"got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise ValueError(f"a position's text has at most {MAX_TEXT} characters, got {len(text)}")
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
        # 'end' is checked against the board below, once the board is known to be valid
        state = cls.from_board(board, {"p0": 0, "p1": 1, "end": 0}[who], empty_capture=empty_capture,
                               seeds_total=seeds_total)
        if (who == "end") != state.is_over:
            raise ValueError("'end' must be given exactly when one side's houses are empty")
        return state

    # -- queries ---------------------------------------------------------------------
    @property
    def margin(self) -> int:
        """Player 0's store minus player 1's store."""
        return int(self.board[self.houses + 1] - self.board[0])

    def houses_of(self, player: int) -> range:
        """Pit indices of ``player``'s houses (0 or 1)."""
        player = check_int("player", player, 0, 1)
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
        if self.is_over:
            raise ValueError("the game is over: no player to move")
        number = check_int("house number", number, 1, self.houses)
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
    houses = check_int("houses", houses, 1, MAX_HOUSES)
    seeds = check_int("seeds", seeds, 1, MAX_SEEDS_PER_HOUSE, what="seeds per house")
    if 2 * houses * seeds > MAX_SEEDS:
        raise ValueError(f"Kalah({houses},{seeds}) has {2 * houses * seeds} seeds, above the limit of "
                         f"{MAX_SEEDS} seeds on a board: lower --houses or --seeds")


def dumps(state: KalahState) -> str:
    return json.dumps(state.to_json())

"""Oware positions: validation, text/ASCII/JSON forms (the rules are in :mod:`.rules`).

Position text form (round-trips)::

    4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0

player 0's houses (indices 0..m-1, actions A..F), player 1's houses
(indices m..2m-1, actions a..f), the seeds captured by player 0 and by
player 1, then the player to move: ``p0``, ``p1``, or ``end`` once the game
is over. The text holds no history: a position read from text starts a
fresh repetition record and move count (as OpenSpiel's board constructor
does), so a state made by :meth:`OwareState.play` and one read from its
text can differ in when a repetition ends the game.
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
from .rules import GAME_OVER, OPENSPIEL_MOVE_LIMIT

#: The rules compiled for the CPU (cached); the CUDA kernels compile the same
#: source with ``rules.build(cuda.jit(device=True))``.
RULES = rules.build(stable_ids(njit(cache=True)))  # fixed ids: cached across processes (_jit.stable_ids)
apply_move = RULES.apply_move
legal_moves = RULES.legal_moves
margin_of = RULES.margin
#: Houses per side: 1..MAX_HOUSES.
MAX_HOUSES = 12
#: Seeds on a board (houses and captures together).
MAX_SEEDS = 1000
#: Seeds per house of a start position.
MAX_SEEDS_PER_HOUSE = 40
#: The largest move limit (plies); the repetition record needs move_limit + 1 rows.
MAX_MOVE_LIMIT = 100_000
#: Characters of a position's text form.
MAX_TEXT = 4096
BOARD_DTYPE = np.int32


def _frozen(a):
    a = np.array(a, dtype=BOARD_DTYPE)
    a.flags.writeable = False
    return a.view()


@dataclass(frozen=True, eq=False)
class OwareState(Outcome):
    """An immutable Oware position with its repetition record.

    Attributes: ``board`` (int32[2m+2], read-only, layout in :mod:`.rules`),
    ``player`` (0 or 1 to move, or -1 once the game is over), ``houses`` m,
    ``history`` (int32[k, 2m+1], read-only: the houses and player to move of
    every position since the last capture, the current one last; empty once
    the game is over), ``ply`` (moves played), ``move_limit`` (the game ends
    after this many plies; OpenSpiel's 1,000 by default) and
    ``grand_slam_illegal`` (the rule variant; OpenSpiel's grand slam
    captures nothing). Build states with :meth:`initial`,
    :meth:`from_board`, :meth:`from_text` or :meth:`play`; every one
    validates and a bad argument raises ``ValueError``.
    """

    board: np.ndarray
    player: int
    houses: int
    history: np.ndarray = field(default=None)
    ply: int = 0
    move_limit: int = OPENSPIEL_MOVE_LIMIT
    grand_slam_illegal: bool = False

    def __post_init__(self):
        m = check_int("houses", self.houses, 1, MAX_HOUSES)
        if not isinstance(self.board, np.ndarray) or self.board.dtype.kind not in "iu" \
                or self.board.shape != (2 * m + 2,):
            raise ValueError(f"board must be an integer array of 2m+2 = {2 * m + 2} entries (houses, then the "
                             f"two scores)")
        board = np.array(self.board, dtype=np.int64)
        if board.min() < 0:
            raise ValueError("seed counts must be >= 0")
        if board.sum() > MAX_SEEDS:
            raise ValueError(f"a board holds at most {MAX_SEEDS} seeds, got {int(board.sum())}")
        move_limit = check_int("move_limit", self.move_limit, 1, MAX_MOVE_LIMIT)
        ply = check_int("ply", self.ply, 0, move_limit)
        slam = check_bool("grand_slam_illegal", self.grand_slam_illegal)
        player = check_int("player", self.player, -1, 1)
        board = board.astype(BOARD_DTYPE)
        over = not board[:2 * m].any()
        if over != (player == GAME_OVER):
            raise ValueError(f"player must be -1 exactly when the game is over (no seed left in a house), "
                             f"got {player}")
        if not over:
            if RULES.scores_decide(board, m):
                raise ValueError(f"the scores {int(board[2 * m])},{int(board[2 * m + 1])} already end the game "
                                 f"(more than half of the {int(board.sum())} seeds, or half each)")
            if ply >= move_limit:
                raise ValueError(f"ply {ply} is past the move limit {move_limit}: the game is over")
            if not RULES.has_legal_move(board, m, player, slam):
                raise ValueError(f"player {player} has no legal move here (no house to sow, or none that "
                                 f"feeds an opponent without seeds), so the game would be over")
        if self.history is None:
            history = np.zeros((0, 2 * m + 1), BOARD_DTYPE) if over else \
                np.concatenate([board[:2 * m], [player]]).astype(BOARD_DTYPE)[None, :]
        else:
            history = np.asarray(self.history)
            if history.ndim != 2 or history.shape[1] != 2 * m + 1 or history.dtype.kind not in "iu":
                raise ValueError(f"history must be an integer array of rows of 2m+1 = {2 * m + 1}")
            if not over and (len(history) == 0 or not np.array_equal(history[-1, :2 * m], board[:2 * m])
                             or history[-1, 2 * m] != player):
                raise ValueError("the last row of history must be the current position")
            if len(history) > ply + 1:
                raise ValueError(f"history has {len(history)} rows, more than the {ply + 1} positions of "
                                 f"{ply} plies")
        object.__setattr__(self, "board", _frozen(board))
        object.__setattr__(self, "player", player)
        object.__setattr__(self, "houses", m)
        object.__setattr__(self, "history", _frozen(history).reshape(-1, 2 * m + 1))
        object.__setattr__(self, "ply", ply)
        object.__setattr__(self, "move_limit", move_limit)
        object.__setattr__(self, "grand_slam_illegal", slam)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def initial(cls, houses: int = 6, seeds: int = 4, *, move_limit: int = OPENSPIEL_MOVE_LIMIT,
                grand_slam_illegal: bool = False) -> "OwareState":
        """The start position: ``seeds`` in each of the 2 * ``houses`` houses, player 0 to move."""
        houses = check_int("houses", houses, 1, MAX_HOUSES)
        seeds = check_int("seeds", seeds, 1, MAX_SEEDS_PER_HOUSE, what="seeds per house")
        if 2 * houses * seeds > MAX_SEEDS:
            raise ValueError(f"Oware({houses},{seeds}) has {2 * houses * seeds} seeds, above the limit of "
                             f"{MAX_SEEDS}")
        board = np.zeros(2 * houses + 2, BOARD_DTYPE)
        board[:2 * houses] = seeds
        return cls(board, 0, houses, None, 0, move_limit, grand_slam_illegal)

    @classmethod
    def from_board(cls, board, player: int, *, scores=None, move_limit: int = OPENSPIEL_MOVE_LIMIT,
                   grand_slam_illegal: bool = False) -> "OwareState":
        """Validate raw houses (2m counts, OpenSpiel's ``seeds``) or a full board
        (2m + 2: houses then scores, when ``scores`` is None) and the player to
        move (ignored, -1, once the houses are empty)."""
        if isinstance(board, (str, bytes)):
            raise ValueError(f"board must be a list of seed counts, got {type(board).__name__}")
        try:
            arr = np.asarray(board)
        except Exception:  # noqa: BLE001
            raise ValueError("board must be a list of seed counts") from None
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(f"board must be a flat list of integer seed counts, got {arr.dtype} {arr.shape}")
        if scores is not None:
            sc = np.asarray(scores)
            if sc.shape != (2,) or sc.dtype.kind not in "iu":
                raise ValueError(f"scores must be two integers, got {scores!r}")
            arr = np.concatenate([arr, sc])
        if arr.size < 4 or arr.size % 2:
            raise ValueError(f"a board has 2m houses and 2 scores (m >= 1), got {arr.size} entries")
        if arr.min() < 0 or arr.max() > MAX_SEEDS:
            raise ValueError(f"seed counts must lie in 0..{MAX_SEEDS}")
        m = arr.size // 2 - 1
        if m > MAX_HOUSES:
            raise ValueError(f"at most {MAX_HOUSES} houses a side, got {m}")
        if not arr[:2 * m].any():
            player = GAME_OVER
        else:
            player = check_int("player", player, 0, 1, what="player to move")
        return cls(arr.astype(BOARD_DTYPE), player, m, None, 0, move_limit, grand_slam_illegal)

    @classmethod
    def from_text(cls, text: str, *, move_limit: int = OPENSPIEL_MOVE_LIMIT,
                  grand_slam_illegal: bool = False) -> "OwareState":
        """Parse the text form (see the module docstring)."""
        example = "'4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0'"
        if not isinstance(text, str):
            raise ValueError(f"position must be a string like {example}, got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise ValueError(f"a position's text has at most {MAX_TEXT} characters, got {len(text)}")
        try:
            body, who = text.strip().rsplit(" ", 1)
            parts = body.split("/")
            if len(parts) != 3:
                raise ValueError
            h0 = [int(x) for x in parts[0].split(",")]
            h1 = [int(x) for x in parts[1].split(",")]
            s = [int(x) for x in parts[2].split(",")]
            if len(s) != 2:
                raise ValueError
        except ValueError:
            raise ValueError(f"position must look like {example} (houses of player 0 / houses of player 1 / "
                             f"scores, then p0, p1 or end), got {text!r}") from None
        if len(h0) != len(h1):
            raise ValueError(f"both sides need the same number of houses, got {len(h0)} and {len(h1)}")
        if who not in ("p0", "p1", "end"):
            raise ValueError(f"player to move must be p0, p1 or end, got {who!r}")
        state = cls.from_board(h0 + h1 + s, {"p0": 0, "p1": 1, "end": 0}[who], move_limit=move_limit,
                               grand_slam_illegal=grand_slam_illegal)
        if (who == "end") != state.is_over:
            raise ValueError("'end' must be given exactly when every house is empty")
        return state

    # -- queries -----------------------------------------------------------------------
    @property
    def scores(self) -> tuple[int, int]:
        """Seeds captured by player 0 and player 1 (at the end: with the seeds collected)."""
        m = self.houses
        return int(self.board[2 * m]), int(self.board[2 * m + 1])

    @property
    def margin(self) -> int:
        """Player 0's score minus player 1's."""
        s0, s1 = self.scores
        return s0 - s1

    @property
    def returns(self) -> tuple[float, float]:
        """OpenSpiel's returns: (1, -1), (-1, 1) or (0, 0) once over; (0, 0) before."""
        if not self.is_over or self.margin == 0:
            return 0.0, 0.0
        return (1.0, -1.0) if self.margin > 0 else (-1.0, 1.0)

    @property
    def seeds_total(self) -> int:
        return int(self.board.sum())

    def houses_of(self, player: int) -> range:
        player = check_int("player", player, 0, 1)
        return range(player * self.houses, (player + 1) * self.houses)

    def legal_moves(self) -> list[int]:
        """The houses (layout indices) the player to move may sow, increasing."""
        if self.is_over:
            return []
        out = np.empty(self.houses, np.int64)
        count = legal_moves(self.board, self.houses, self.player, self.grand_slam_illegal, out)
        return [int(x) for x in out[:count]]

    def play(self, house: int) -> "OwareState":
        """The position after the player to move sows ``house`` (a layout index)."""
        if self.is_over:
            raise ValueError("the game is over: no move is legal")
        if isinstance(house, bool) or not isinstance(house, (int, np.integer)):
            raise ValueError(f"a move is a house index, got {house!r}")
        if int(house) not in self.houses_of(self.player):
            raise ValueError(f"house {house} is not a house of player {self.player}")
        if int(house) not in self.legal_moves():
            why = "is empty" if self.board[house] == 0 else "does not feed the opponent, who has no seeds" \
                if not self.board[self.houses_of(1 - self.player)].any() else "would be a grand slam"
            raise ValueError(f"house {house} {why}: not a legal move")
        m = self.houses
        board = np.array(self.board, dtype=BOARD_DTYPE)
        rows = len(self.history)
        hist = np.empty((rows + 1, 2 * m + 1), BOARD_DTYPE)
        hist[:rows] = self.history
        nxt, first, count = apply_move(board, m, self.player, int(house), self.grand_slam_illegal, hist, 0, rows,
                                       self.ply, self.move_limit)
        history = hist[:0] if nxt == GAME_OVER else hist[first:first + count]
        return OwareState(board, int(nxt), m, history, self.ply + 1, self.move_limit, self.grand_slam_illegal)

    def end_reason(self, house: int) -> str | None:
        """Why the game ends when the player to move sows ``house`` (a legal move), by the rules' checks
        in their order: ``"repetition"`` (the position since the last capture), ``"move limit"``,
        ``"scores"`` (more than half of the seeds captured, or half each), ``"no move"`` (the next player
        cannot move); None when the game goes on."""
        if self.play(house).player != GAME_OVER:  # validates the move too
            return None
        m, board = self.houses, np.array(self.board, dtype=BOARD_DTYPE)
        last = RULES.sow(board, m, int(house))
        captured = RULES.capture(board, m, self.player, last)
        nxt = 1 - self.player
        if captured == 0 and any(row[2 * m] == nxt and np.array_equal(row[:2 * m], board[:2 * m])
                                 for row in self.history):
            return "repetition"
        if self.ply + 1 >= self.move_limit:
            return "move limit"
        if RULES.scores_decide(board, m):
            return "scores"
        return "no move"

    # -- OpenSpiel actions -------------------------------------------------------------
    def action_of(self, house: int) -> int:
        """OpenSpiel's action (0..m-1, counted from the player's left) of a house."""
        return int(house) % self.houses

    def house_of(self, action: int) -> int:
        """The house index of the player to move's OpenSpiel action 0..m-1."""
        if self.is_over:
            raise ValueError("the game is over: no player to move")
        action = check_int("action", action, 0, self.houses - 1)
        return self.player * self.houses + action

    # -- forms -------------------------------------------------------------------------
    def to_text(self) -> str:
        m, b = self.houses, self.board
        who = "end" if self.is_over else f"p{self.player}"
        return (f"{','.join(str(int(x)) for x in b[:m])}/{','.join(str(int(x)) for x in b[m:2 * m])}/"
                f"{int(b[2 * m])},{int(b[2 * m + 1])} {who}")

    def to_json(self) -> dict:
        return {"board": [int(x) for x in self.board], "player": self.player, "houses": self.houses,
                "ply": self.ply, "move_limit": self.move_limit, "grand_slam_illegal": self.grand_slam_illegal,
                "text": self.to_text()}

    def ascii(self) -> str:
        """The board as OpenSpiel draws it: player 1's houses on top, right to left."""
        m, b = self.houses, self.board
        s0, s1 = self.scores
        top_labels = "".join(f"{chr(ord('a') + a):>3}" for a in range(m - 1, -1, -1))
        top = "".join(f"{int(b[h]):>3}" for h in range(2 * m - 1, m - 1, -1))
        bottom = "".join(f"{int(b[h]):>3}" for h in range(m))
        bottom_labels = "".join(f"{chr(ord('A') + a):>3}" for a in range(m))
        who = "game over" if self.is_over else f"player {self.player} to move"
        return "\n".join([f"Player 1 score = {s1}", top_labels, top, bottom, bottom_labels,
                          f"Player 0 score = {s0}", f"{who}; ply {self.ply}"])

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"OwareState({self.to_text()!r}, ply={self.ply})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, OwareState) and self.player == other.player and self.ply == other.ply
                and self.move_limit == other.move_limit and self.grand_slam_illegal == other.grand_slam_illegal
                and np.array_equal(self.board, other.board) and np.array_equal(self.history, other.history))

    def __hash__(self):
        return hash((self.board.tobytes(), self.player, self.ply, self.history.tobytes(), self.move_limit,
                     self.grand_slam_illegal))


def dumps(state: OwareState) -> str:
    return json.dumps(state.to_json())

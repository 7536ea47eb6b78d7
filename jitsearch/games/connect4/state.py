"""Connect Four positions: :class:`Connect4State` (validated, immutable) and its text forms.

Two text forms, both read by :meth:`Connect4State.from_text`:

* **Moves** (Pascal Pons's notation, as in his test sets): the columns played from the empty
  board, one digit each, 1-based from the left: ``"4455"``. The empty game is ``""``.
* **Board**: the rows from top to bottom, separated by ``/``, ``x`` for player 0 (who moved
  first), ``o`` for player 1, ``.`` empty; then ``p0``, ``p1`` or ``end``::

      ......./......./......./......./...o.../...x... p0

:meth:`~Connect4State.to_text` writes the board form (it holds every position, also one
reached in an unknown order); :attr:`~Connect4State.sequence` the moves form when the state
knows its moves. Conventions: :mod:`jitsearch.games.protocol`; a margin is +1 (player 0 won),
0 or -1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol import Outcome
from .rules import GAME_OVER, aligned, apply_move, full_mask, check_size

MAX_TEXT = 256
_EXAMPLE = "'4455' (columns from 1) or '......./.../...x... p1' (rows top to bottom, x o .)"


def _count(x: int) -> int:
    return bin(x).count("1")


@dataclass(frozen=True, eq=False)
class Connect4State(Outcome):
    """An immutable Connect Four position.

    Attributes: ``width``, ``height`` (4..9 by 4..8, ``width * (height + 1) <= 64``),
    ``stones`` (player 0's and player 1's bitboards, layout in :mod:`.rules`), ``player`` (0 or
    1 to move, -1 once the game is over), ``moves`` (the columns played, 0-based, or None when
    the position came from a board). Every constructor validates; a bad argument raises a
    one-line ``ValueError``.
    """

    width: int
    height: int
    stones: tuple
    player: int
    moves: tuple | None = None

    def __post_init__(self):
        w, h = check_size(self.width, self.height)
        s0, s1 = (int(x) for x in self.stones)
        full = full_mask(w, h)
        if s0 < 0 or s1 < 0 or s0 & ~full or s1 & ~full or s0 & s1:
            raise ValueError("stones must be two disjoint bitboards of the board's cells")
        mask = s0 | s1
        for c in range(w):
            col = (mask >> (c * (h + 1))) & ((1 << h) - 1)
            if col & (col + 1):
                raise ValueError(f"column {c + 1} has a stone above an empty cell")
        n0, n1 = _count(s0), _count(s1)
        if n0 - n1 not in (0, 1):
            raise ValueError(f"player 0 has {n0} stones and player 1 {n1}: player 0 moves first, then they alternate")
        a0, a1 = aligned(s0, h), aligned(s1, h)
        if a0 and a1:
            raise ValueError("both players have four in a row")
        if (a0 and n0 != n1 + 1) or (a1 and n0 != n1):
            raise ValueError("the game went on after four in a row")
        over = a0 or a1 or mask == full
        player = GAME_OVER if over else n0 - n1
        if self.player != player:
            raise ValueError(f"player must be {player} here ({'the game is over' if over else 'by the stone counts'}), "
                             f"got {self.player!r}")
        object.__setattr__(self, "width", w)
        object.__setattr__(self, "height", h)
        object.__setattr__(self, "stones", (s0, s1))
        if self.moves is not None:
            object.__setattr__(self, "moves", tuple(int(c) for c in self.moves))

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def initial(cls, width: int = 7, height: int = 6) -> "Connect4State":
        return cls(width, height, (0, 0), 0, ())

    @classmethod
    def from_moves(cls, moves, width: int = 7, height: int = 6) -> "Connect4State":
        """Play ``moves`` (Pons's digit string, 1-based, or a list of 0-based columns) from the start."""
        state = cls.initial(width, height)
        if isinstance(moves, str):
            if not moves.isdigit() and moves != "":
                raise ValueError(f"moves must be column digits 1..{state.width}, got {moves!r}")
            moves = [int(ch) - 1 for ch in moves]
            for i, c in enumerate(moves):
                if not 0 <= c < state.width:
                    raise ValueError(f"move {i + 1}: column {c + 1} is not on a {state.width}-column board")
        for i, c in enumerate(moves):
            try:
                state = state.play(c)
            except ValueError as e:
                raise ValueError(f"move {i + 1} ({c + 1 if isinstance(c, int) else c!r}): {e}") from None
        return state

    @classmethod
    def from_board_text(cls, text: str) -> "Connect4State":
        try:
            body, who = text.strip().rsplit(" ", 1)
        except ValueError:
            raise ValueError(f"position must look like {_EXAMPLE}, got {text!r}") from None
        rows = body.split("/")
        w, h = len(rows[0]), len(rows)
        if any(len(r) != w for r in rows) or set(body) - set("xo./"):
            raise ValueError(f"a board is rows of equal length of x, o and . separated by /, got {body!r}")
        check_size(w, h)
        s = [0, 0]
        for r, row in enumerate(rows):
            for c, ch in enumerate(row):
                if ch != ".":
                    s["xo".index(ch)] |= 1 << (c * (h + 1) + h - 1 - r)
        if who not in ("p0", "p1", "end"):
            raise ValueError(f"player to move must be p0, p1 or end, got {who!r}")
        return cls(w, h, tuple(s), {"p0": 0, "p1": 1, "end": GAME_OVER}[who])

    @classmethod
    def from_text(cls, text: str, *, width: int = 7, height: int = 6) -> "Connect4State":
        """Either text form (module docstring); ``width`` and ``height`` are for the moves form,
        a board gives its own."""
        if not isinstance(text, str):
            raise ValueError(f"position must be a string like {_EXAMPLE}, got {type(text).__name__}")
        if len(text) > MAX_TEXT:
            raise ValueError(f"a position's text has at most {MAX_TEXT} characters, got {len(text)}")
        t = text.strip()
        if t == "" or t.isdigit():
            return cls.from_moves(t, width, height)
        return cls.from_board_text(t)

    # -- queries ----------------------------------------------------------------------------------
    @property
    def ply(self) -> int:
        return _count(self.stones[0] | self.stones[1])

    @property
    def margin(self) -> int:
        """+1 if player 0 has four in a row, -1 if player 1 has, else 0."""
        h = self.height
        return 1 if aligned(self.stones[0], h) else -1 if aligned(self.stones[1], h) else 0

    @property
    def sequence(self) -> str | None:
        """Pons's moves form ("4455"), or None when the moves are not known."""
        return None if self.moves is None else "".join(str(c + 1) for c in self.moves)

    def cell(self, column: int, row: int) -> int:
        """0 or 1 (whose stone), -1 empty; ``row`` 0 is the bottom."""
        bit = 1 << (column * (self.height + 1) + row)
        return 0 if self.stones[0] & bit else 1 if self.stones[1] & bit else -1

    def legal_moves(self) -> list[int]:
        """The columns that are not full (0-based, increasing)."""
        if self.is_over:
            return []
        mask, h = self.stones[0] | self.stones[1], self.height
        return [c for c in range(self.width) if not (mask >> (c * (h + 1) + h - 1)) & 1]

    def play(self, column: int) -> "Connect4State":
        """The position after the player to move drops a stone into ``column`` (0-based)."""
        if self.is_over:
            raise ValueError("the game is over: no move is legal")
        if isinstance(column, bool) or not isinstance(column, int) or not 0 <= column < self.width:
            raise ValueError(f"a move is a column 0..{self.width - 1}, got {column!r}")
        if column not in self.legal_moves():
            raise ValueError(f"column {column + 1} is full")
        board = list(self.stones)
        nxt = apply_move(board, self.width, self.height, self.player, column)
        moves = None if self.moves is None else self.moves + (column,)
        return Connect4State(self.width, self.height, tuple(board), nxt, moves)

    # -- forms ------------------------------------------------------------------------------------
    def to_text(self) -> str:
        rows = ["".join(".xo"[self.cell(c, r) + 1] for c in range(self.width)) for r in range(self.height - 1, -1, -1)]
        who = "end" if self.is_over else f"p{self.player}"
        return "/".join(rows) + " " + who

    def ascii(self) -> str:
        rows = [" ".join(".xo"[self.cell(c, r) + 1] for c in range(self.width)) for r in range(self.height - 1, -1, -1)]
        who = {0: "x (player 0) to move", 1: "o (player 1) to move"}.get(self.player, f"game over: {self.result}")
        return "\n".join(rows + [" ".join(str(c + 1) for c in range(self.width)), who])

    def to_json(self) -> dict:
        return {"width": self.width, "height": self.height, "player": self.player, "text": self.to_text(),
                "moves": self.sequence}

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        return f"Connect4State({self.sequence if self.moves is not None else self.to_text()!r})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, Connect4State) and (self.width, self.height, self.stones, self.player)
                == (other.width, other.height, other.stones, other.player))

    def __hash__(self):
        return hash((self.width, self.height, self.stones, self.player))

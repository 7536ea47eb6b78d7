"""Tic-tac-toe as a jitsearch game, from outside the package (docs/adding-a-game.md).

Cells, moves and the text form (``x`` moves first and is player 0)::

    0 | 1 | 2
    3 | 4 | 5        text: the nine cells in this order, "x", "o" or ".",
    6 | 7 | 8        e.g. "xx.oo...." (x to move: it plays 2 and wins)

``board`` is int32[9]: 0 empty, 1 x, 2 o. ``cfg = (misere,)``: in misere play three in a
row loses. ``margin`` is +1 / 0 / -1 for player 0; ``evaluate`` ``d / (|d| + 1)`` of ``d``, the lines
still open to x minus those open to o (negated in misere play): inside (-1, 1), so that a search
never prefers open lines to a win. No record.

Run it (``python tictactoe.py``) to register it and search it: the brute force, alpha-beta,
MCTS on the CPU, and with ``--cuda`` the CUDA kernel against its CPU twin (use
``NUMBA_ENABLE_CUDASIM=1`` where there is no GPU).
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from jitsearch.games.protocol import GAME_OVER, Game, Option, Packed, Rules, Sizes, check_states, no_record

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
MARKS = ".xo"


def build(jit) -> Rules:
    """The rules with the protocol's one signature, compiled with ``jit`` (``numba.njit``,
    ``numba.cuda.jit(device=True)``, or ``lambda f: f`` for plain Python)."""

    def three(board, s):
        """Whether the mark ``s`` (1 or 2) holds a line: the eight lines written out (no global tuples on CUDA)."""
        return ((board[0] == s and board[1] == s and board[2] == s) or (board[3] == s and board[4] == s and board[5] == s)
                or (board[6] == s and board[7] == s and board[8] == s) or (board[0] == s and board[3] == s and board[6] == s)
                or (board[1] == s and board[4] == s and board[7] == s) or (board[2] == s and board[5] == s and board[8] == s)
                or (board[0] == s and board[4] == s and board[8] == s) or (board[2] == s and board[4] == s and board[6] == s))

    def open_lines(board, s):
        """Lines without a mark of the other player."""
        o = 3 - s
        n = 0
        for a, b, c in ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)):
            if board[a] != o and board[b] != o and board[c] != o:
                n += 1
        return n

    three, open_lines = jit(three), jit(open_lines)

    def legal(board, cfg, player, moves, hist, cur):
        n = 0
        for i in range(9):
            if board[i] == 0:
                moves[n] = i
                n += 1
        return n

    def apply(board, cfg, player, move, hist, cur):
        board[move] = player + 1
        nxt = 1 - player
        if three(board, player + 1):
            nxt = GAME_OVER
        else:
            full = True
            for i in range(9):
                if board[i] == 0:
                    full = False
            if full:
                nxt = GAME_OVER
        return nxt, (cur[0], cur[1], cur[2] + 1)

    def margin(board, cfg):
        m = 0
        if three(board, 1):
            m = 1
        elif three(board, 2):
            m = -1
        return -m if cfg[0] else m

    def evaluate(board, cfg, player):  # inside (-1, 1): an estimate of a margin of +1 / 0 / -1
        v = float(open_lines(board, 1) - open_lines(board, 2))
        v = v / (abs(v) + 1.0)
        return -v if cfg[0] else v

    return Rules(legal=jit(legal), apply=jit(apply), margin=jit(margin), evaluate=jit(evaluate))


RULES = build(lambda f: f)  # plain Python, for the state class


class TicTacToeState:
    """A position: ``cells`` (nine ints, 0 empty, 1 x, 2 o) and the variant."""

    def __init__(self, cells=(0,) * 9, misere: bool = False):
        self.cells, self.misere = tuple(int(c) for c in cells), bool(misere)
        board = np.array(self.cells, np.int32)
        x, o = self.cells.count(1), self.cells.count(2)
        over = RULES.margin(board, (False,)) != 0 or x + o == 9
        self.player = GAME_OVER if over else (0 if x == o else 1)
        self.ply = x + o

    @classmethod
    def initial(cls, misere: bool = False) -> "TicTacToeState":
        return cls(misere=misere)

    @classmethod
    def from_text(cls, text: str, misere: bool = False) -> "TicTacToeState":
        if not isinstance(text, str) or len(text) != 9 or set(text) - set(MARKS):
            raise ValueError(f"a tic-tac-toe position is nine of '.', 'x', 'o', got {text!r}")
        x, o = text.count("x"), text.count("o")
        if x - o not in (0, 1):
            raise ValueError(f"x moves first: x must have as many marks as o or one more, got {text!r}")
        state = cls([MARKS.index(c) for c in text], misere)
        both = [RULES.margin(np.array([c if c in (0, s) else 0 for c in state.cells], np.int32), (False,))
                for s in (1, 2)]
        if both == [1, -1]:
            raise ValueError(f"both players have three in a row: {text!r}")
        return state

    def to_text(self) -> str:
        return "".join(MARKS[c] for c in self.cells)

    @property
    def is_over(self) -> bool:
        return self.player == GAME_OVER

    def legal_moves(self) -> list:
        return [] if self.is_over else [i for i in range(9) if self.cells[i] == 0]

    def play(self, move) -> "TicTacToeState":
        if move not in self.legal_moves():
            raise ValueError(f"illegal move {move!r} in {self.to_text()} (legal: {self.legal_moves()})")
        board = np.array(self.cells, np.int32)
        RULES.apply(board, (self.misere,), self.player, move, None, (0, 0, self.ply))
        return TicTacToeState(board, self.misere)

    @property
    def margin(self) -> int:
        return int(RULES.margin(np.array(self.cells, np.int32), (self.misere,)))

    @property
    def result(self) -> str:
        return {1: "x wins", -1: "o wins", 0: "draw"}[self.margin] if self.is_over else "in play"

    def __repr__(self) -> str:
        return f"TicTacToeState({self.to_text()!r}{', misere' if self.misere else ''})"


def cfg(state: TicTacToeState) -> tuple:
    return (state.misere,)


def pack(states) -> Packed:
    states = check_states(states, TicTacToeState, "tictactoe")
    if len({s.misere for s in states}) > 1:
        raise ValueError("all states of a batch need the same variant")
    k = len(states)
    boards = np.array([s.cells for s in states], np.int32).reshape(k, 9)
    players = np.array([s.player for s in states], np.int64)
    plies = np.array([s.ply for s in states], np.int64)
    return Packed(boards, players, no_record(k), np.zeros(k, np.int64), plies, cfg(states[0]))


def sizes(cfg: tuple) -> Sizes:
    return Sizes(cells=9, moves=9, plies=9, record=(0, 1))


GAME = Game(
    name="tictactoe",
    State=TicTacToeState,
    variant={"misere": Option(bool, False, "three in a row loses")},
    initial=lambda misere=False: TicTacToeState.initial(misere),
    from_text=lambda text, misere=False: TicTacToeState.from_text(text, misere),
    cfg=cfg,
    build=build,
    pack=pack,
    sizes=sizes,
    max_cells=9,
    max_moves=9,
    max_plies=9,
    board_dtype=np.dtype(np.int32),
)


@functools.lru_cache(maxsize=None)
def _value(text: str, misere: bool) -> int:
    state = TicTacToeState.from_text(text, misere)
    if state.is_over:
        return state.margin
    values = [_value(state.play(m).to_text(), misere) for m in state.legal_moves()]
    return max(values) if state.player == 0 else min(values)


def brute_force(state: TicTacToeState) -> int:
    """Player 0's value under perfect play, by plain minimax over every position (5,478 of them)."""
    return _value(state.to_text(), state.misere)


def main(argv) -> None:
    import jitsearch.games as games
    from jitsearch.kernels.game_alphabeta import alphabeta_game
    from jitsearch.mcts.game import analyse_game, search_game

    game = games.register(GAME, replace=True)
    start = game.initial()
    assert brute_force(start) == 0 and brute_force(game.initial(misere=True)) == 0  # both are draws
    r = alphabeta_game("tictactoe", start)
    assert r["exact"] and r["value"] == 0, r
    win = game.from_text("xx.oo....")
    assert search_game("tictactoe", win, iterations=500, seed=1, backend="cpu")["move"] == 2
    print("brute force, alpha-beta and MCTS agree")
    if "--cuda" in argv:
        from jitsearch.kernels import cuda_game_mcts

        cuda_game_mcts.threads_for = lambda jobs, trees, per_thread: 3  # few threads a block: the simulator is slow
        states = [start, win, game.from_text("x...o....")]
        kw = dict(iterations=8, playouts=2, leaves=2, seed=4)
        cpu = analyse_game("tictactoe", states, backend="cpu", **kw)
        gpu = analyse_game("tictactoe", states, backend="cuda", **kw)
        assert gpu["backend"] == "cuda" and cpu["positions"] == gpu["positions"]
        print("the CUDA kernel equals its CPU twin")


if __name__ == "__main__":
    main(sys.argv[1:])

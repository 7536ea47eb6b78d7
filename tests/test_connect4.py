"""Connect Four: the rules against a naive grid reference, a golden file of recorded games,
the state class's text forms and its one-line errors."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from jitsearch._jit import stable_ids
from jitsearch.games import get
from jitsearch.games.connect4.state import Connect4State
from jitsearch.games.protocol import GAME_OVER

GOLDEN = Path(__file__).parent / "data" / "connect4_golden.txt"
#: (width, height, games) recorded in the golden file.
GOLDEN_SIZES = [(7, 6, 30), (5, 4, 8), (4, 4, 6), (9, 6, 4), (7, 8, 4)]


# -- the naive reference: a grid of columns, every line scanned --------------------------------

def naive_winner(cols, w, h):
    """0 or 1 if that player has four in a row, else None (every cell, every direction)."""
    def at(c, r):
        return cols[c][r] if 0 <= c < w and 0 <= r < len(cols[c]) else None
    for c in range(w):
        for r in range(len(cols[c])):
            for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                if all(at(c + k * dc, r + k * dr) == cols[c][r] for k in range(4)):
                    return cols[c][r]
    return None


def naive_game(moves, w, h):
    """Play 0-based ``moves``; (result 'p0'/'p1'/'draw'/None, board text rows top to bottom)."""
    cols = [[] for _ in range(w)]
    result = None
    for i, c in enumerate(moves):
        assert result is None and len(cols[c]) < h
        cols[c].append(i % 2)
        win = naive_winner(cols, w, h)
        if win is not None:
            result = f"p{win}"
        elif sum(map(len, cols)) == w * h:
            result = "draw"
    rows = ["".join(".xo"[cols[c][r] + 1] if r < len(cols[c]) else "." for c in range(w))
            for r in range(h - 1, -1, -1)]
    return result, "/".join(rows)


def naive_random_games():
    """The golden file's games: random play by the naive reference (fixed seeds)."""
    rnd = random.Random(2026)
    out = []
    for w, h, count in GOLDEN_SIZES:
        for _ in range(count):
            cols, moves, result = [0] * w, [], None
            while result is None:
                c = rnd.choice([c for c in range(w) if cols[c] < h])
                cols[c] += 1
                moves.append(c)
                result, board = naive_game(moves, w, h)
            out.append(f"{w}x{h} {''.join(str(c + 1) for c in moves)} {result} {board}")
    return out


def _golden_lines():
    return [ln for ln in GOLDEN.read_text().splitlines() if ln and not ln.startswith("#")]


def test_golden_file_is_the_naive_references_games():
    assert _golden_lines() == naive_random_games()


def test_state_class_replays_the_golden_games():
    for line in _golden_lines():
        size, moves, result, board = line.split()
        w, h = map(int, size.split("x"))
        s = Connect4State.from_moves(moves, w, h)
        assert s.result == result and s.to_text() == f"{board} end" and s.sequence == moves
        # every prefix is live and agrees with the naive reference's board
        for k in range(len(moves)):
            p = Connect4State.from_text(moves[:k], width=w, height=h)
            assert p.player == k % 2 and p.to_text().split()[0] == naive_game([int(c) - 1 for c in moves[:k]], w, h)[1]


def test_compiled_rules_replay_the_golden_games():
    game = get("connect4")
    rules = game.build(stable_ids(njit(cache=True)))
    hist = np.zeros((1, 1), np.int32)
    moves_buf = np.empty(9, np.int64)
    for line in _golden_lines():
        size, moves, result, _ = line.split()
        w, h = map(int, size.split("x"))
        board = np.zeros(2, np.int64)
        player, cur, cfg = np.int64(0), (np.int64(0), np.int64(0), np.int64(0)), (w, h)
        cols = [0] * w
        for ch in moves:
            n = rules.legal(board, cfg, player, moves_buf, hist, cur)
            assert list(moves_buf[:n]) == [c for c in range(w) if cols[c] < h]
            assert player != GAME_OVER
            player, cur = rules.apply(board, cfg, player, np.int64(int(ch) - 1), hist, cur)
            cols[int(ch) - 1] += 1
        assert player == GAME_OVER and cur[2] == len(moves)
        assert {1: "p0", -1: "p1", 0: "draw"}[int(rules.margin(board, cfg))] == result


def test_text_forms_and_blog_examples():
    s = Connect4State.from_text("4455")
    assert s.to_text() == "......./......./......./......./...oo../...xx.. p0"
    assert Connect4State.from_text(s.to_text()) == s and s.sequence == "4455" and s.ply == 4
    assert Connect4State.from_text(s.to_text()).sequence is None
    assert Connect4State.from_text("").to_text().endswith(" p0")
    assert Connect4State.from_text("4", width=5, height=4).to_text() == "...../...../...../...x. p1"
    assert s.play(3).legal_moves() == list(range(7)) and s.cell(3, 0) == 0 and s.cell(3, 1) == 1
    assert "1 2 3 4 5 6 7" in s.ascii()
    done = Connect4State.from_text("1212121")
    assert done.is_over and done.result == "p0" and done.margin == 1 and done.legal_moves() == []


@pytest.mark.parametrize("text, words", [
    ("12a", "position must look like"),
    ("8", "column 8 is not on a 7-column board"),
    ("11111111", "column 1 is full"),
    ("12121212", "game is over"),
    ("......./......./......./......./......./...o... p0", "player 0 has 0 stones"),
    ("......./......./......./...x.../......./...x... p1", "above an empty cell"),
    ("......./......./......./......./......./...x... p0", "player must be 1"),
    ("......./......./......./......./......./...x... end", "player must be 1"),
    (".../.../.../... p0", "4..9"),
    ("..../..../xxxx/oooo/xxxx/oooo p0", "both players"),
    ("...../...../ooo../xxxxo p1", "went on after four"),
])
def test_bad_texts_are_one_line_errors(text, words):
    with pytest.raises(ValueError) as e:
        Connect4State.from_text(text)
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("size", [(3, 6), (10, 6), (9, 7), (7, 9), (7.0, 6), (True, 6)])
def test_bad_sizes(size):
    with pytest.raises(ValueError, match="width 4..9"):
        Connect4State.initial(*size)


def test_other_sizes_play_to_the_end():
    for w, h in ((4, 4), (9, 6), (8, 7), (7, 8)):
        s = Connect4State.initial(w, h)
        while not s.is_over:
            s = s.play(s.legal_moves()[len(s.moves) * 7 % len(s.legal_moves())])
        assert s.result in ("p0", "p1", "draw")

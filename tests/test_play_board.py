"""``jitsearch play`` draws each game's board (its ``TextUI`` hook) with rich: the layout players see, each
side's colour, the last move; a person types moves as the game names them."""

from __future__ import annotations

import io

from rich.console import Console

import pytest

from jitsearch.cli.play import SIDE_STYLES, render_board
from jitsearch.games import get
from jitsearch.games.kalah import KalahState

KALAH = get("kalah")


def kalah_board(state, last=None):
    return render_board(KALAH, state, last)


def _render(renderable, colour: bool) -> str:
    buf = io.StringIO()
    Console(file=buf, width=80, force_terminal=colour, color_system="standard" if colour else None,
            highlight=False).print(renderable)
    return buf.getvalue()


def test_board_layout_matches_the_position():
    #            p1:  6  5  4  3  2  1  (pits 13..8)
    #   store p1  9                       store p0 7
    #            p0:  1  2  3  4  5  6  (pits 1..6)
    state = KalahState.from_text("0,5,5,5,5,4/7/1,2,3,0,6,1/9 p1")
    rows = [line.split() for line in _render(kalah_board(state, last=6), False).splitlines()]
    assert rows[0] == ["p1", ">", "6", "5", "4", "3", "2", "1"]
    assert rows[1] == ["1", "6", "0", "3", "2", "1"]  # pits 13, 12, ..., 8: player 1's house 6 first
    assert rows[2] == ["9", "7"]  # player 1's store left, player 0's right
    assert rows[3] == ["0", "5", "5", "5", "5", "4"]
    assert rows[4] == ["p0", "1", "2", "3", "4", "5", "6"]
    assert "player 1 to move; margin -2" in rows[5] or " ".join(rows[5]) == "player 1 to move; margin -2"
    over = KalahState.from_text("0,0,0/10/0,0,0/14 end")
    assert "game over; margin -4" in _render(kalah_board(over), False)


def test_board_colours_sides_and_marks_the_last_house():
    state = KalahState.initial(3, 2).play(3)
    text = _render(kalah_board(state, last=3), True)
    assert "\x1b[" in text  # coloured in a terminal
    assert "\x1b[1;7;36m 0" in text  # pit 3 (player 0's, cyan) reversed: the last house sown
    assert text.count(";7;") == 1
    assert SIDE_STYLES == ("bold cyan", "bold magenta")


def test_connect4_board_layout_and_last_stone():
    c4 = get("connect4")
    state = c4.from_text("4455")  # x: columns 4, 5; o: 4, 5 (1-based): the last stone is o's in column 5
    rows = _render(render_board(c4, state, last=4), False).splitlines()

    assert [r.split() for r in rows[:6]] == [["."] * 7] * 4 + [list("...oo.."), list("...xx..")]
    assert rows[6].split() == list("1234567") and rows[7] == "x (player 0) to move"
    text = _render(render_board(c4, state, last=4), True)
    assert text.count("\x1b[1;36mx") == 2 and text.count("\x1b[1;35mo") == 1  # o in column 4: not the last
    assert text.count("\x1b[1;7;35mo") == 1  # o in column 5 is the stone just dropped
    over = c4.from_text("1212121")
    assert _render(render_board(c4, over), False).splitlines()[-1] == "game over: p0"


def test_oware_board_is_openspiel_drawing():
    ow = get("oware")
    state = ow.initial(houses=3, seeds=2).play(1)
    assert _render(render_board(ow, state), False).rstrip("\n") == state.ascii()


@pytest.mark.parametrize("name, text, move, words", [
    ("kalah", "x", None, "type a number from 1 to 6"),
    ("kalah", "9", None, "type a number from 1 to 6"),
    ("kalah", "2", 2, None),
    ("oware", "a", None, "type one of A B C D E F"),
    ("oware", "B", 1, None),
    ("connect4", "0", None, "type a column from 1 to 7"),
    ("connect4", "x", None, "type a column from 1 to 7"),
    ("connect4", "7", 6, None),
])
def test_typed_moves_are_parsed_or_refused_in_one_line(name, text, move, words):
    game = get(name)
    state = game.initial()
    if words is None:
        assert game.ui.parse_move(state, text) == move
        assert game.ui.move_name(state, move)
    else:
        with pytest.raises(ValueError, match=words):
            game.ui.parse_move(state, text)


def test_a_full_column_is_refused():
    c4 = get("connect4")
    state = c4.from_text("111111")
    with pytest.raises(ValueError, match="column 1 is full"):
        c4.ui.parse_move(state, "1")

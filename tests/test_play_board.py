"""``jitsearch play`` draws the board with rich: the layout players see, each side's colour, the last house."""

from __future__ import annotations

import io

from rich.console import Console

from jitsearch.cli.play import SIDE_STYLES, kalah_board
from jitsearch.games.kalah import KalahState


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

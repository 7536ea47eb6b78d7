"""Oware alpha-beta: equal to a plain minimax over OwareState (every line,
no pruning) on random positions, repetition and move limits included;
iterative deepening and validation."""

from __future__ import annotations

import math
import random

import pytest

from jitsearch.games.oware import OwareState
from jitsearch.games.oware.alphabeta import WIN, iterative_deepening, search


def plain_negamax(s: OwareState, depth: int, side_weight: float) -> float:
    """Value for the player to move, by full minimax on the Python states."""
    if depth == 0:
        m, me = s.houses, s.player
        b = s.board
        cap = int(b[2 * m + me]) - int(b[2 * m + 1 - me])
        own = int(b[me * m:(me + 1) * m].sum())
        opp = int(b[(1 - me) * m:(2 - me) * m].sum())
        return cap + side_weight * (own - opp)
    best = -math.inf
    for h in s.legal_moves():
        c = s.play(h)
        if c.is_over:
            margin = c.margin if s.player == 0 else -c.margin
            v = (WIN + margin) if margin > 0 else (-WIN + margin) if margin < 0 else 0.0
        else:
            v = -plain_negamax(c, depth - 1, side_weight)
        best = max(best, v)
    return best


def _positions(seed, count, m, n, **kw):
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = OwareState.initial(m, n, **kw)
        for _ in range(rnd.randrange(0, 60)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


@pytest.mark.parametrize("m, n, depth, kw", [(6, 4, 3, {}), (3, 3, 5, {}), (2, 2, 7, {}), (4, 2, 4, {"move_limit": 30}),
                                             (3, 2, 5, {"grand_slam_illegal": True})])
def test_alphabeta_equals_plain_minimax(m, n, depth, kw):
    for s in _positions(m * 10 + n, 25, m, n, **kw):
        for w in (0.0, 0.25):
            r = search(s, depth, side_weight=w)
            want = plain_negamax(s, depth, w)
            assert r.value == pytest.approx(want), s.to_text()
            assert r.move in s.legal_moves()
            c = s.play(r.move)  # the move returned attains the value
            got = (WIN + (c.margin if s.player == 0 else -c.margin)) if c.is_over and c.margin != 0 else None
            if not c.is_over:
                assert -plain_negamax(c, depth - 1, w) == pytest.approx(want)
            elif got is not None:
                assert abs(want) >= WIN


def test_search_sees_the_repetition_rule_through_the_history():
    # the repetition test of OpenSpiel: after ten plies the board is two plies from a repetition, which
    # ends the game 24-24; a fresh position from the same text would go on instead
    s = OwareState.from_board([1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 23, 23], 0)
    for action in (0, 0, 1, 1, 2, 2, 3, 3, 4, 4):
        s = s.play(s.house_of(action))
    # player 0's only move 5, then player 1's only move 11 repeats the first position: a draw
    assert search(s, 2).value == 0.0
    assert search(s, 6).value == 0.0


def test_iterative_deepening_deepens_and_respects_time():
    s = OwareState.initial()
    r = iterative_deepening(s, max_depth=6)
    assert r.depth == 6 and r.move == search(s, 6).move and r.value == search(s, 6).value
    timed = iterative_deepening(s, time_limit=0.3)
    assert timed.depth >= 4 and timed.seconds < 3.0 and timed.move in s.legal_moves()
    assert search(s, 8, node_limit=10) is None


def test_a_forced_win_is_found():
    # P0 to move: house 2's 8 seeds capture 11 of 18 and end the game (OpenSpiel's test position)
    s = OwareState.from_board([0, 0, 8, 0, 0, 1, 1, 1, 1, 1, 2, 3, 0, 0], 0)
    r = iterative_deepening(s, max_depth=4)
    assert r.move == 2 and r.value == WIN + 12 and r.depth == 1


def test_bad_search_arguments():
    s = OwareState.initial()
    with pytest.raises(ValueError, match="depth"):
        search(s, 0)
    with pytest.raises(ValueError, match="OwareState"):
        search("4,4", 3)
    with pytest.raises(ValueError, match="time_limit"):
        iterative_deepening(s, time_limit=0)
    over = OwareState.from_text("0,0,0,0,0,0/0,0,0,0,0,0/30,18 end")
    with pytest.raises(ValueError, match="game is over"):
        search(over, 2)

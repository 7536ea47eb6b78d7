"""The Oware solver equals brute force (plain minimax over OwareState to the
end of every line, repetition and all) on tiny variants and on positions
of small ones."""

from __future__ import annotations

import random

import pytest

from jitsearch.games.oware import OwareState
from jitsearch.games.oware.solver import solve


class TooBig(Exception):
    pass


def brute(s: OwareState, memo=None, budget=None) -> tuple[int, int]:
    """(result sign, margin) for the player to move, maximised lexicographically,
    by plain minimax over every line; positions are memoised by everything
    that decides their future (board, player, the set of positions since the
    last capture; the move limit is never reached in these small games)."""
    memo = {} if memo is None else memo
    if budget is not None:
        budget[0] -= 1
        if budget[0] < 0:
            raise TooBig
    key = (s.board.tobytes(), s.player, frozenset(map(bytes, s.history)))
    if key in memo:
        return memo[key]
    assert s.ply < s.move_limit - 50
    best = None
    for h in s.legal_moves():
        c = s.play(h)
        if c.is_over:
            margin = c.margin if s.player == 0 else -c.margin
            v = ((margin > 0) - (margin < 0), margin)
        else:
            r, mg = brute(c, memo, budget)
            v = (-r, -mg)
        best = v if best is None or v > best else best
    memo[key] = best
    return best


SIGN = {"win": 1, "draw": 0, "loss": -1}


@pytest.mark.parametrize("m, n", [(1, 1), (1, 3), (2, 1)])
def test_solver_equals_brute_force_from_the_start(m, n):
    s = OwareState.initial(m, n)
    r = solve(s)
    assert (SIGN[r.result], r.margin) == brute(s)
    c = s.play(r.move)  # the move reported attains the value
    want = brute(s)
    got = ((c.margin > 0) - (c.margin < 0), c.margin) if c.is_over else tuple(-x for x in brute(c))
    if s.player == 1 and c.is_over:
        got = (-got[0], -got[1])
    assert got == want


@pytest.mark.parametrize("m, n", [pytest.param(3, 2, marks=pytest.mark.slow), (2, 3),
                                  pytest.param(3, 3, marks=pytest.mark.slow)])
def test_solver_equals_brute_force_on_positions(m, n):
    """Positions of random games once few seeds are left on the board, those whose
    tree brute force finishes within 20,000 positions (non-capturing shuffles of a
    few seeds make some trees far larger: their lines are long before a repetition)."""
    rnd = random.Random(m * 10 + n)
    checked = tried = 0
    while checked < 8 and tried < 60:
        s = OwareState.initial(m, n)
        while not s.is_over and int(s.board[:2 * m].sum()) > 5:
            s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            continue
        tried += 1
        try:
            want = brute(s, budget=[20_000])
        except TooBig:
            continue
        r = solve(s)
        assert (SIGN[r.result], r.margin) == want, s.to_text()
        checked += 1
    assert checked >= 4


def test_known_small_results_and_limits():
    # brute force (about a minute in plain Python, run once) gives (win, 6) for Oware(2,2) too
    assert (solve(OwareState.initial(2, 2)).result, solve(OwareState.initial(2, 2)).margin) == ("win", 6)
    assert solve(OwareState.initial(2, 3)).result == "draw"
    assert solve(OwareState.initial(6, 4), node_limit=1000) is None
    with pytest.raises(ValueError, match="OwareState"):
        solve("x")

"""The single-tree MCTS (:func:`jitsearch.mcts.search.mcts_search`) on every game of the registry
other than Kalah (whose results tests/test_mcts.py pins): MCTS-Solver's proven values against the
game's exact solver, the options (progressive bias, batches with virtual loss, cut playouts,
evaluations, workers, time) on Oware and Connect Four."""

from __future__ import annotations

import random

import pytest

from jitsearch.games import game_of, get
from jitsearch.mcts.search import mcts_search, monte_carlo_search

SIGN = {1: "win", 0: "draw", -1: "loss"}


def positions(game, variant, plies, count, seed):
    """``count`` live positions ``plies`` random moves from the start of ``variant``."""
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = game.initial(**variant)
        for _ in range(plies):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def exact(game, state) -> str:
    """The result for ``state``'s player to move under perfect play (the game's solver)."""
    v = game.solver(state)
    v = v if state.player == 0 else -v
    return SIGN[(v > 0) - (v < 0)]


#: Oware's single-tree kernels take about 45 s each to compile (the slow step runs them; Connect Four's
#: cover the same generic kernel source in the default run).
CASES = [("connect4", {"width": 4, "height": 4}, 7, 6000),
         pytest.param("oware", {"houses": 3, "seeds": 2, "move_limit": 40}, 3, 6000, marks=pytest.mark.slow)]


@pytest.mark.parametrize("name, variant, plies, iterations", CASES)
def test_solver_proves_the_exact_values(name, variant, plies, iterations):
    """MCTS-Solver's proven root values and moves agree with the game's exact solver: a proven
    root is the solver's result for the player to move, a proven win is played with a winning
    move, and a proven child is the solver's value of that move."""
    game = get(name)
    proved = 0
    for s in positions(game, variant, plies, 6, seed=len(name)):
        r = mcts_search(s, seed=3, iterations=iterations, solver=True)
        assert r["move"] in s.legal_moves()
        if r["proven"] is None:
            continue
        proved += 1
        assert r["proven"] == exact(game, s), s.to_text()
        for ch in r["children"]:
            if ch["proven"] is not None:
                after = s.play(ch["move"])
                mine = "draw" if after.is_over and after.margin == 0 else None
                if after.is_over:
                    m = after.margin if s.player == 0 else -after.margin
                    mine = SIGN[(m > 0) - (m < 0)]
                elif after.player == s.player:
                    mine = exact(game, after)
                else:
                    mine = {"win": "loss", "loss": "win", "draw": "draw"}[exact(game, after)]
                assert ch["proven"] == mine, (s.to_text(), ch)
        if r["proven"] == "win":
            assert next(c for c in r["children"] if c["move"] == r["move"])["proven"] == "win"
    assert proved >= 3


@pytest.mark.slow
@pytest.mark.parametrize("name, variant, plies, iterations", CASES)
def test_options_run_and_repeat(name, variant, plies, iterations):
    """Progressive bias, cut playouts, several playouts, value-final, workers and batches with
    virtual loss run on the game and give the same result for the same seed."""
    game = get(name)
    s = positions(game, variant, 2, 1, seed=1)[0]
    assert game_of(s) is game
    for options in ({"pb": 0.5, "formula": "sqrt", "c": 1.0}, {"playout_depth": 3, "playouts": 2, "final": "value"},
                    {"workers": 2}, {"backend": "cpu", "batch": 8, "virtual_loss": 2.0}):
        a = mcts_search(s, seed=5, iterations=200, **options)
        b = mcts_search(s, seed=5, iterations=200, **options)
        assert a["move"] in s.legal_moves() and a["iterations"] == 200, options
        assert a["children"] == b["children"], options
        assert sum(c["visits"] for c in a["children"]) >= 200 * (2 if options.get("playouts") else 1) - 1
    r = mcts_search(s, seed=5, time=0.05)
    assert r["move"] in s.legal_moves() and r["iterations"] > 0
    r = monte_carlo_search(s, playouts=50, seed=2)
    assert r["move"] in s.legal_moves()


@pytest.mark.slow  # Oware's single-tree kernel: about 45 s to compile
def test_owares_evaluation_with_implicit_minimax():
    """Oware's own evaluation (``eval=capture`` with its side weight) with implicit minimax backups."""
    oware = get("oware")
    s = oware.initial(houses=3, seeds=2, move_limit=40)
    r = mcts_search(s, seed=1, iterations=150, eval="capture", eval_plies=2, imm=0.3, eval_param=0.5)
    assert r["move"] in s.legal_moves()


def test_rewards_and_evaluations_a_game_has_not_are_refused():
    """Kalah's rewards and Oware's evaluation are refused for a game that has none, in one line."""
    c4 = get("connect4").initial(width=4, height=4)
    for options, match in (({"reward": "heuristic"}, "reward"), ({"eval": "store"}, "eval"),
                           ({"eval": "capture"}, "eval"), ({"eval_param": 1.0}, "eval_param")):
        with pytest.raises(ValueError, match=match):
            mcts_search(c4, iterations=10, **options)
    with pytest.raises(ValueError, match="registered game"):
        mcts_search(object(), iterations=10)

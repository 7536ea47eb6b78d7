"""OpenSpiel interop (skipped when open-spiel is not installed; CI installs the
extra): our engines as OpenSpiel bots, OpenSpiel's bots in our arena, and
Kalah(m, n) registered as an OpenSpiel game that agrees with OpenSpiel's
own mancala."""

from __future__ import annotations

import json
import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install 'jitsearch[openspiel]')")

from jitsearch.arena.agents import parse_agent  # noqa: E402
from jitsearch.games.kalah import KalahState  # noqa: E402
from jitsearch.interop.openspiel import load_game, make_bot  # noqa: E402


def load_kalah(houses, seeds, empty_capture=False):
    return load_game("kalah", houses=houses, seeds=seeds, empty_capture=empty_capture)


def _mancala_board(state) -> list[int]:
    """Our board layout read off OpenSpiel's mancala text: top row P1's houses from
    index 2m+1 down to m+2, then the stores (P1's, P0's), then P0's houses 1..m."""
    top, stores, bottom = str(state).splitlines()[:3]
    p1 = [int(x) for x in top.strip("-").split("-")]
    p0 = [int(x) for x in bottom.strip("-").split("-")]
    left, right = (int(x) for x in stores.split("-") if x)
    return [left] + p0 + [right] + p1[::-1]


def test_our_bot_plays_openspiel_games_and_matches_our_agent():
    game = pyspiel.load_game("mancala")
    for spec in ("alphabeta:depth=4", "mcts:iterations=300"):
        bot = make_bot(spec, game, seed=7)
        asked = []
        real_step = bot.step

        def step(state, real_step=real_step, asked=asked):
            a = real_step(state)
            assert a in state.legal_actions()
            asked.append(([int(x) for x in state.history()], a))
            return a

        bot.step = step  # noqa: B023
        for seat in (0, 1):
            evaluator = pyspiel.RandomRolloutEvaluator(1, 5)  # kept alive beside the bot that uses it
            opponent = pyspiel.MCTSBot(game, evaluator, 2.0, 200, 50, False, 5, False)
            bots = [bot, opponent] if seat == 0 else [opponent, bot]
            returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 11 + seat)
            assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])
        assert asked
        # the same agent on our side, asked the same states in the same order, chooses the same moves
        ours = parse_agent(spec, seed=7)
        for history, action in asked:
            s = KalahState.initial(6, 4)
            for a in history:
                s = s.play(a)
            assert ours(s) == action, (spec, history)


def test_bot_refuses_a_state_our_engine_cannot_reach():
    game = load_kalah(3, 2)
    bot = make_bot("alphabeta:depth=2", game)
    with pytest.raises(ValueError, match="jitsearch_<game>"):
        make_bot("random", pyspiel.load_game("tic_tac_toe"))
    with pytest.raises(ValueError, match="cannot serve"):
        make_bot("openspiel:random", game)
    state = game.new_initial_state()
    assert bot.step(state) in state.legal_actions()
    policy, move = make_bot("mcts:iterations=50", game, 1).step_with_policy(state)
    assert abs(sum(p for _, p in policy) - 1.0) < 1e-9 and move in state.legal_actions()


def test_registered_kalah_6_4_agrees_with_openspiel_mancala():
    ours_game, theirs_game = load_kalah(6, 4), pyspiel.load_game("mancala")
    rnd = random.Random(3)
    for _ in range(1000):
        ours, theirs = ours_game.new_initial_state(), theirs_game.new_initial_state()
        while not theirs.is_terminal():
            assert not ours.is_terminal()
            assert ours.current_player() == theirs.current_player()
            assert ours.legal_actions() == theirs.legal_actions()
            assert [int(x) for x in ours.ours.board] == _mancala_board(theirs)
            a = rnd.choice(theirs.legal_actions())
            ours.apply_action(a)
            theirs.apply_action(a)
        assert ours.is_terminal() and ours.returns() == theirs.returns()


@pytest.mark.parametrize("houses, seeds, ec", [(3, 3, False), (4, 2, True), (7, 5, False), (1, 1, True)])
def test_registered_kalah_agrees_with_our_engine(houses, seeds, ec):
    game = load_kalah(houses, seeds, ec)
    assert game.num_distinct_actions() == 2 * houses + 2
    rnd = random.Random(houses * 10 + seeds)
    for _ in range(100):
        st, ks = game.new_initial_state(), KalahState.initial(houses, seeds, empty_capture=ec)
        while not ks.is_over:
            assert st.legal_actions() == ks.legal_moves() and st.current_player() == ks.player
            a = rnd.choice(ks.legal_moves())
            st.apply_action(a)
            ks = ks.play(a)
        m = ks.margin
        assert st.is_terminal() and st.returns() == [float((m > 0) - (m < 0)), -float((m > 0) - (m < 0))]


def test_openspiel_bots_run_on_our_registered_boards():
    from open_spiel.python.algorithms import minimax

    game = load_kalah(3, 2)
    value, action = minimax.alpha_beta_search(game, maximum_depth=40)  # solves Kalah(3,2): +4 for player 0
    ks = KalahState.initial(3, 2)
    from jitsearch.games.kalah.solver import solve_exact

    assert (value > 0) == (solve_exact(ks)["margin"] > 0) and action in ks.legal_moves()


def test_openspiel_agents_in_our_arena(tmp_path):
    from jitsearch.cli.app import main

    out = tmp_path / "g.jsonl"
    code = main(["tournament", "--game", "kalah", "--a", "alphabeta:depth=6", "--b",
                 "openspiel:mcts,simulations=1000", "--pairs", "1", "--openings", "2", "--out", str(out), "--json"])
    assert code == 0
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 2 and all(r["b"] == "openspiel:mcts,simulations=1000" for r in recs)
    for spec in ("openspiel:random", "openspiel:alphabeta,depth=2", "openspiel:mcts,time=0.01,rollouts=2"):
        a = parse_agent(spec, seed=3)
        s = KalahState.initial(6, 4)
        for _ in range(3):
            pit = a(s)
            assert pit in s.legal_moves()
            s = s.play(pit)
            a.observe(pit)


@pytest.mark.parametrize("spec, words", [
    ("openspiel:", "names its bot first"),
    ("openspiel:simulations=5", "names its bot first"),
    ("openspiel:mcst", "unknown OpenSpiel bot"),
    ("openspiel:mcts,depth=3", "unknown option"),
    ("openspiel:mcts,simulations=0", "simulations must lie"),
    ("openspiel:alphabeta,depth=x", "bad value"),
])
def test_bad_openspiel_specs(spec, words):
    with pytest.raises(ValueError, match=words):
        parse_agent(spec)


def test_other_boards_and_suites_are_refused(capsys):
    from jitsearch.cli.app import main

    assert main(["tournament", "--game", "kalah", "--houses", "5", "--a", "random", "--b", "openspiel:random",
                 "--pairs", "1"]) == 2
    assert "Kalah(6,4) under the standard rules only" in capsys.readouterr().err
    assert main(["tournament", "--game", "kalah", "--empty-capture", "--a", "random", "--b", "openspiel:random",
                 "--pairs", "1"]) == 2
    a = parse_agent("openspiel:random")
    with pytest.raises(ValueError, match="not shown how the game reached"):
        a(KalahState.initial(6, 4).play(3))

"""Every registered game with an OpenSpiel mapping (``Game.openspiel``), the same checks (skipped without
open-spiel): our rules and OpenSpiel's in lockstep through the mapping (player to move, legal actions, the end
and the returns), our game registered in OpenSpiel (``jitsearch_<name>``) against OpenSpiel's own, OpenSpiel's
bots as our agents and our agents as OpenSpiel bots. The boards are compared per game in
``test_openspiel.py`` (mancala), ``test_oware_openspiel.py`` and ``test_connect4_openspiel.py``."""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install 'jitsearch[openspiel]')")

from jitsearch.arena.engine_protocol import served_agent  # noqa: E402
from jitsearch.arena.openspiel_agents import OpenSpielAgent  # noqa: E402
from jitsearch.games import GAMES, get  # noqa: E402
from jitsearch.interop.openspiel import game_of, load_game, make_bot  # noqa: E402

#: (game, variant) pairs OpenSpiel has: each game's default and a smaller board where there is one.
CASES = [(name, variant) for name in sorted(GAMES) if GAMES[name].openspiel is not None
         for variant in ({}, {"houses": 3, "seeds": 2} if name == "oware" else {"width": 5, "height": 4}
                         if name == "connect4" else None) if variant is not None]


def _has_agents(name: str) -> bool:
    try:
        served_agent(name, "random", seed=0)
    except ValueError:
        return False
    return True


def _pair(name, variant):
    game = get(name)
    variant = game.check_variant(**variant)
    theirs = pyspiel.load_game(game.openspiel.name, game.openspiel.params(variant))
    return game, variant, theirs


def test_every_built_in_game_has_a_mapping():
    assert {n for n, g in GAMES.items() if g.openspiel is not None} >= {"kalah", "oware", "connect4"}


@pytest.mark.parametrize("name, variant", CASES)
def test_rules_in_lockstep_with_openspiel(name, variant):
    game, variant, theirs_game = _pair(name, variant)
    mapping = game.openspiel
    assert game_of(theirs_game)[:2] == (game, variant)
    rnd = random.Random(len(name))
    for _ in range(200):
        ours, theirs = game.initial(**variant), theirs_game.new_initial_state()
        while not theirs.is_terminal():
            assert not ours.is_over and theirs.current_player() == ours.player
            assert sorted(theirs.legal_actions()) == sorted(mapping.action(ours, m) for m in ours.legal_moves())
            move = rnd.choice(ours.legal_moves())
            assert mapping.move(ours, mapping.action(ours, move)) == move
            theirs.apply_action(mapping.action(ours, move))
            ours = ours.play(move)
        assert ours.is_over
        r = float((ours.margin > 0) - (ours.margin < 0))
        assert theirs.returns() == [r, -r]


@pytest.mark.parametrize("name, variant", CASES)
def test_registered_game_agrees_with_openspiels(name, variant):
    game, variant, theirs_game = _pair(name, variant)
    ours_game = load_game(name, **variant)
    assert game_of(ours_game)[:2] == (game, variant)
    rnd = random.Random(7)
    for _ in range(50):
        ours, theirs, state = ours_game.new_initial_state(), theirs_game.new_initial_state(), game.initial(**variant)
        while not theirs.is_terminal():
            assert ours.legal_actions() == state.legal_moves() and ours.current_player() == theirs.current_player()
            move = rnd.choice(state.legal_moves())
            ours.apply_action(move)
            theirs.apply_action(game.openspiel.action(state, move))
            state = state.play(move)
        assert ours.is_terminal() and ours.returns() == theirs.returns()


@pytest.mark.parametrize("name, variant", CASES)
def test_openspiel_bots_play_as_our_agents(name, variant):
    game, variant, _ = _pair(name, variant)
    agent = OpenSpielAgent("mcts", {"simulations": 20}, 1, name)
    agent.start(**variant)
    state, rnd = game.initial(**variant), random.Random(2)
    while not state.is_over:
        move = agent(state) if state.player == 0 else rnd.choice(state.legal_moves())
        assert move in state.legal_moves()
        state = state.play(move)
        agent.observe(move)


@pytest.mark.parametrize("name, variant", CASES)
def test_our_agents_as_openspiel_bots(name, variant):
    if not _has_agents(name):
        pytest.skip(f"the agents cannot parse 'random' for {name} (before the generic arena)")
    game, variant, theirs_game = _pair(name, variant)
    bots = [make_bot("random", theirs_game, seed=3), pyspiel.make_uniform_random_bot(1, 4)]
    returns = pyspiel.evaluate_bots(theirs_game.new_initial_state(), bots, 0)
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def test_a_variant_openspiel_has_not_is_refused_in_one_line():
    for name, variant, words in (("kalah", {"houses": 4}, "mancala"), ("oware", {"grand_slam_illegal": True}, "grand"),
                                 ("kalah", {"empty_capture": True}, "empty capture")):
        agent = OpenSpielAgent("random", {}, 0, name)
        with pytest.raises(ValueError, match=words) as err:
            agent.start(**variant)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="opening suite"):
        OpenSpielAgent("random", {}, 0, "connect4").check_match(width=5, height=4, suite=["x"])

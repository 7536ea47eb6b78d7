"""Oware in lockstep with OpenSpiel's ``oware`` (needs the ``openspiel``
extra): thousands of seeded random games, every position's board, player,
legal actions, terminal test and returns, and at a share of the positions
every legal move's successor. tests/test_oware_rules.py replays a golden
file of OpenSpiel games for CI runs without OpenSpiel."""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install 'jitsearch[openspiel]')")

from jitsearch.games.oware import OPENSPIEL_MOVE_LIMIT, OwareState  # noqa: E402


def their_board(state):
    """OpenSpiel's board in our layout (its seeds, then its scores) and its player field."""
    player, scores, seeds = state.observation_string(0).split(" | ")
    return [int(x) for x in seeds.split()] + [int(x) for x in scores.split()], int(player)


def test_the_game_parameters_we_mirror():
    game = pyspiel.load_game("oware")
    assert game.max_game_length() == OPENSPIEL_MOVE_LIMIT
    assert game.get_parameters() == {"num_houses_per_player": 6, "num_seeds_per_house": 4}


@pytest.mark.parametrize("m, n, games, every_child", [
    (6, 4, 1000, 100), (2, 2, 600, 100), (3, 3, 600, 100), (1, 3, 200, 50), (5, 1, 400, 100), (4, 5, 300, 50),
    (6, 6, 100, 20),
])
def test_random_games_in_lockstep(m, n, games, every_child):
    game = pyspiel.load_game("oware", {"num_houses_per_player": m, "num_seeds_per_house": n})
    rnd = random.Random(1000 * m + n)
    for g in range(games):
        theirs, ours = game.new_initial_state(), OwareState.initial(m, n)
        while True:
            seeds, _ = their_board(theirs)
            assert ours.board.tolist() == seeds, (g, ours.to_text(), seeds)
            assert ours.is_over == theirs.is_terminal()
            if ours.is_over:
                assert list(ours.returns) == theirs.returns()
                break
            assert ours.player == theirs.current_player()
            actions = theirs.legal_actions()
            assert [ours.action_of(h) for h in ours.legal_moves()] == actions
            if g < every_child:
                for a in actions:
                    child = theirs.clone()
                    child.apply_action(a)
                    mine = ours.play(ours.house_of(a))
                    assert mine.board.tolist() == their_board(child)[0] and mine.is_over == child.is_terminal()
            a = rnd.choice(actions)
            theirs.apply_action(a)
            ours = ours.play(ours.house_of(a))


def test_our_bot_plays_openspiel_oware():
    from jitsearch.arena.oware_arena import parse_oware_agent
    from jitsearch.interop.openspiel_oware import make_oware_bot, oware_state_of

    game = pyspiel.load_game("oware")
    ours = make_oware_bot("alphabeta:depth=3", game, seed=1)
    wins = 0
    for g in range(4):
        theirs = pyspiel.make_uniform_random_bot(1 - g % 2, 5 + g)  # OpenSpiel's bot, built for its seat
        bots = [ours, theirs] if g % 2 == 0 else [theirs, ours]
        state = game.new_initial_state()
        while not state.is_terminal():
            bot = bots[state.current_player()]
            if bot is ours:
                a = ours.step(state)
                # the bot's action is our agent's move on the same position
                assert a == oware_state_of(state).action_of(parse_oware_agent("alphabeta:depth=3")(oware_state_of(state)))
            else:
                a = bot.step(state)
            state.apply_action(a)
        wins += state.returns()[g % 2] > 0
    assert wins >= 3
    with pytest.raises(ValueError, match="oware"):
        make_oware_bot("random", pyspiel.load_game("mancala"))

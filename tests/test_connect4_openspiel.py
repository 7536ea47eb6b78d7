"""Connect Four and OpenSpiel's ``connect_four`` (skipped without open-spiel): the two rule sets in lockstep
over random games of several sizes, through the game's OpenSpiel mapping; OpenSpiel's bots as our agents,
our game registered in OpenSpiel, and our agents as OpenSpiel bots (once Connect Four has agents)."""

from __future__ import annotations

import random

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install 'jitsearch[openspiel]')")

from jitsearch.arena.engine_protocol import served_agent  # noqa: E402
from jitsearch.arena.openspiel_agents import OpenSpielAgent  # noqa: E402
from jitsearch.games import get  # noqa: E402
from jitsearch.interop.openspiel import load_game, make_bot  # noqa: E402

C4 = get("connect4")
SIZES = [(7, 6), (4, 4), (5, 4), (6, 7), (9, 5), (8, 6)]


def _their_text(state) -> str:
    """OpenSpiel's board (rows top to bottom, ``x`` ``o`` ``.``) in our text form, without the mover."""
    return "/".join(str(state).splitlines())


@pytest.mark.parametrize("width, height", SIZES)
def test_connect4_in_lockstep_with_openspiel(width, height):
    """Legal actions, the player to move, the board and the returns agree ply by ply over random games."""
    mapping = C4.openspiel
    game = pyspiel.load_game(mapping.name, mapping.params({"width": width, "height": height}))
    assert mapping.variant(game.get_parameters()) == {"width": width, "height": height}
    rnd = random.Random(width * 10 + height)
    ends = set()
    for _ in range(60):
        ours, theirs = C4.initial(width=width, height=height), game.new_initial_state()
        while not theirs.is_terminal():
            assert not ours.is_over
            assert theirs.current_player() == ours.player
            assert theirs.legal_actions() == [mapping.action(ours, m) for m in ours.legal_moves()]
            assert _their_text(theirs) == ours.to_text().rsplit(" ", 1)[0]
            move = rnd.choice(ours.legal_moves())
            theirs.apply_action(mapping.action(ours, move))
            ours = ours.play(move)
        assert ours.is_over and _their_text(theirs) == ours.to_text().rsplit(" ", 1)[0]
        r = float(ours.margin)
        assert theirs.returns() == [r, -r]
        ends.add(ours.result)
    assert ends >= {"p0", "p1"}


def test_registered_connect4_agrees_with_openspiel():
    """``jitsearch_connect4`` (our rules inside OpenSpiel) is OpenSpiel's connect_four, action for action."""
    ours_game, theirs_game = load_game("connect4", width=5, height=4), pyspiel.load_game(
        "connect_four", {"columns": 5, "rows": 4})
    assert ours_game.num_distinct_actions() == 5 and ours_game.max_game_length() == 20
    rnd = random.Random(7)
    for _ in range(100):
        ours, theirs = ours_game.new_initial_state(), theirs_game.new_initial_state()
        while not theirs.is_terminal():
            assert ours.legal_actions() == theirs.legal_actions()
            assert ours.current_player() == theirs.current_player()
            a = rnd.choice(theirs.legal_actions())
            ours.apply_action(a)
            theirs.apply_action(a)
        assert ours.is_terminal() and ours.returns() == theirs.returns()
    with pytest.raises(ValueError, match="width"):
        load_game("connect4", width=20)


def test_openspiel_bots_play_connect4_as_our_agents():
    """OpenSpiel's bots move in our states: followed by observe(), or, for a state that knows its moves,
    by replaying them; a board without its moves is refused in one line."""
    a = OpenSpielAgent("mcts", {"simulations": 200}, 1, "connect4")
    b = OpenSpielAgent("alphabeta", {"depth": 2}, 2, "connect4")
    for x in (a, b):
        x.start(width=5, height=4)
    state = C4.initial(width=5, height=4)
    while not state.is_over:
        move = (a if state.player == 0 else b)(state)
        assert move in state.legal_moves()
        state = state.play(move)
        for x in (a, b):
            x.observe(move)
    fresh = OpenSpielAgent("random", {}, 3, "connect4")
    s = C4.initial()
    for _ in range(6):  # never told a move: it replays the state's moves
        s = s.play(fresh(s))
    assert len(s.moves) == 6
    with pytest.raises(ValueError, match="not shown how"):
        OpenSpielAgent("random", {}, 3, "connect4")(C4.from_text(s.to_text()))
    with pytest.raises(ValueError, match="positions"):
        fresh(get("kalah").initial())


def test_an_openspiel_bot_wins_a_won_position():
    """OpenSpiel's alpha-beta, through the mapping, takes the win in one: x has three in the bottom row."""
    s = C4.from_text("112233")
    agent = OpenSpielAgent("alphabeta", {"depth": 2}, 0, "connect4")
    assert agent(s) == 3 and s.play(3).result == "p0"


def _c4_agents() -> bool:
    try:
        served_agent("connect4", "random", seed=0)
    except ValueError:
        return False
    return True


@pytest.mark.skipif(not _c4_agents(), reason="the agents cannot parse 'random' for connect4 (before the generic arena)")
def test_our_agent_as_an_openspiel_bot_in_connect_four():
    game = pyspiel.load_game("connect_four")
    ours = make_bot("random", game, seed=1)
    theirs = pyspiel.make_uniform_random_bot(1, 5)
    state = game.new_initial_state()
    here = served_agent("connect4", "random", seed=1)
    mine = C4.initial()
    while not state.is_terminal():
        if state.current_player() == 0:
            a = ours.step(state)
            assert a == here(mine)
        else:
            a = theirs.step(state)
        state.apply_action(a)
        mine = mine.play(a)

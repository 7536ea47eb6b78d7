"""Oware in lockstep with OpenSpiel's ``oware`` (needs the ``openspiel``
extra): thousands of seeded random games, every position's board, player,
legal actions, terminal test and returns, and at a share of the positions
every legal move's successor. tests/test_oware_rules.py replays a golden
file of OpenSpiel games for CI runs without OpenSpiel."""

from __future__ import annotations

import json
import random
import re

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
    pytest.param(6, 4, 1000, 100, marks=pytest.mark.slow), (2, 2, 600, 100), (3, 3, 600, 100), (1, 3, 200, 50),
    (5, 1, 400, 100), (4, 5, 300, 50),
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
    from jitsearch.arena.agents import parse_agent
    from jitsearch.interop.openspiel import make_bot as make_oware_bot

    def oware_state_of(state):
        p = state.get_game().get_parameters()
        s = OwareState.initial(int(p["num_houses_per_player"]), int(p["num_seeds_per_house"]))
        for a in state.history():
            s = s.play(s.house_of(int(a)))
        return s

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
                assert a == oware_state_of(state).action_of(parse_agent("alphabeta:depth=3", game="oware")(oware_state_of(state)))
            else:
                a = bot.step(state)
            state.apply_action(a)
        wins += state.returns()[g % 2] > 0
    assert wins >= 3
    with pytest.raises(ValueError, match="oware"):
        make_oware_bot("random", pyspiel.load_game("tic_tac_toe"))


# -- OpenSpiel's bots as agents in our Oware arena ---------------------------------------------------------------

def _their_bot(game, spec_algorithm, seed, player):
    """The bot an openspiel agent of that seed plays, built here as OpenSpiel's docs build it."""
    seed = seed % (2**31 - 1)
    if spec_algorithm == "random":
        return pyspiel.make_uniform_random_bot(player, seed + player), None
    evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
    return pyspiel.MCTSBot(game, evaluator, 2.0, 60, 1000, False, seed, False, pyspiel.ChildSelectionPolicy.UCT,
                           -1.0), evaluator


@pytest.mark.parametrize("algorithm, m, n", [("mcts", 6, 4), ("random", 2, 2), ("random", 3, 2)])
def test_openspiel_agent_moves_as_its_bot_in_lockstep(algorithm, m, n):
    """Each move of ``openspiel:ALG`` in our game loop equals the OpenSpiel bot's ``step`` on an OpenSpiel state
    that only OpenSpiel's rules moved (same seed), and every game ends where OpenSpiel's does: small boards end
    by repetition often, so the repetition record is checked too."""
    from jitsearch.arena.agents import parse_agent, play_game

    spec = "openspiel:mcts,simulations=60" if algorithm == "mcts" else "openspiel:random"
    game = pyspiel.load_game("oware", {"num_houses_per_player": m, "num_seeds_per_house": n})
    endings = set()
    for g in range(2 if algorithm == "mcts" else 40):
        seat, seed = g % 2, 100 + g
        agent = parse_agent(spec, game="oware", seed=seed)
        other = parse_agent("random", game="oware", seed=seed)
        theirs, _keep = _their_bot(game, algorithm, seed, seat)
        state = game.new_initial_state()

        def on_move(before, house, after, who):
            if who is agent:
                assert before.action_of(house) == theirs.step(state)
            state.apply_action(before.action_of(house))
            assert state.is_terminal() == after.is_over

        result = play_game(OwareState.initial(m, n), [agent, other] if seat == 0 else [other, agent],
                                 on_move=on_move)
        assert state.is_terminal() and list(state.returns()) == list(OwareState.from_text(result["final"]).returns)
        endings.add(result["plies"])
    assert len(endings) > 1


def test_openspiel_alphabeta_agent_is_openspiels_search():
    from open_spiel.python.algorithms import minimax

    from jitsearch.arena.agents import parse_agent
    from jitsearch.arena.game_match import GameMatch, opening_line

    game = pyspiel.load_game("oware")
    for index in range(3):
        ours, moves = opening_line(GameMatch.of("oware", {"houses": 6, "seeds": 4}, openings=6, seed=9), index)
        agent = parse_agent("openspiel:alphabeta,depth=3", game="oware", seed=1)
        agent.start(moves, houses=6, seeds=4)
        state = game.new_initial_state()
        for h in moves:
            state.apply_action(h % 6)
        me = state.current_player()

        def captured(s):  # the captured difference for `me`, read off OpenSpiel's board text
            score = {int(p): int(v) for p, v in re.findall(r"Player (\d) score = (\d+)", str(s))}
            return float(score[me] - score[1 - me])

        value, action = minimax.alpha_beta_search(game, state, value_function=captured, maximum_depth=3,
                                                  maximizing_player_id=me)
        assert agent(ours) == ours.house_of(action) and agent.last["value"] == value


def test_tournament_against_openspiel_mcts(tmp_path):
    from jitsearch.arena.game_match import GameMatch
    from jitsearch.arena.matches import run_tournament

    out = tmp_path / "g.jsonl"
    r = run_tournament("alphabeta:depth=2", "openspiel:mcts,simulations=100",
                       GameMatch.of("oware", {"houses": 6, "seeds": 4}, openings=2, seed=3), 2, out=out)
    assert r["games"] == 4 and sum(r["statistics"]["pentanomial"]) == 2
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 4 and all(x["b"] == "openspiel:mcts,simulations=100" for x in recs)
    for rec in recs:  # every game replays under our rules from its opening
        s = OwareState.initial(6, 4)
        for h in _opening_moves(rec["opening"]) + rec["moves"]:
            s = s.play(h)
        assert s.is_over and s.to_text() == rec["final"]


def _opening_moves(text):
    """The moves of a 2-ply opening from the start (found by trying them all)."""
    s = OwareState.initial(6, 4)
    for a in s.legal_moves():
        t = s.play(a)
        for b in t.legal_moves():
            if t.play(b).to_text() == text:
                return [a, b]
    raise AssertionError(text)


def test_tournament_cli_with_an_openspiel_bot(capsys):
    from jitsearch.cli.app import main

    code = main(["tournament", "--game", "oware", "--a", "openspiel:random", "--b", "alphabeta:depth=2", "--pairs",
                 "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    obj = json.loads(out)
    assert obj["games"] == 2 and obj["a"] == "openspiel:random"


def test_openspiel_agent_refuses_what_it_cannot_follow():
    from jitsearch.arena.agents import parse_agent

    a = parse_agent("openspiel:random", game="oware", seed=1)
    with pytest.raises(ValueError, match="not shown how the game reached"):
        a(OwareState.initial().play(3))
    with pytest.raises(ValueError, match="grand slams legal"):
        a(OwareState.initial(grand_slam_illegal=True))
    a = parse_agent("openspiel:random", game="oware", seed=1)
    s = OwareState.initial(4, 3)
    h = a(s)
    with pytest.raises(ValueError, match="every move must reach observe"):
        a(s.play(h).play(s.play(h).legal_moves()[0]))  # two moves it was not told
    with pytest.raises(ValueError, match="unknown option"):
        parse_agent("openspiel:mcts,depth=3", game="oware")

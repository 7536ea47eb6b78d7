"""The engine line protocol over every registered game: ``game NAME KEY=VALUE ...`` and ``position TEXT [moves
...]`` on the server, the ``cmd:`` client for any game, the older Kalah line kept both ways."""

from __future__ import annotations

import os
import random
import shlex
import sys
from pathlib import Path

import pytest

from jitsearch.arena.engine_protocol import EngineServer, parse_game_words, served_agent, split_position
from jitsearch.arena.external_engine import (EngineSettings, ExternalAgent, close_engines, game_words,
                                             running_pids)
from jitsearch.games import GAMES, get

ROOT = Path(__file__).resolve().parents[1]
PY = shlex.quote(sys.executable)
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _has_agents(game: str) -> bool:
    try:
        served_agent(game, "random", seed=0)
    except ValueError:
        return False
    return True


#: the agents cannot parse 'random' for connect4 until the arena's generic agents are merged
needs_c4_agents = pytest.mark.skipif(not _has_agents("connect4"),
                                     reason="the agents cannot parse 'random' for connect4 (before the generic arena)")


@pytest.fixture(autouse=True)
def _no_orphans():
    yield
    close_engines()
    assert running_pids() == []


@pytest.mark.parametrize("name", sorted(GAMES))
def test_game_words_round_trip(name):
    """``game_words`` names every option, and the server reads back the same game and variant."""
    game = get(name)
    variant = game.defaults()
    words = game_words(game, variant)
    assert words.split()[0] == name and len(words.split()) == 1 + len(game.variant)
    assert parse_game_words(words.split(), get("kalah")) == (game, variant)
    assert parse_game_words([name], get("kalah")) == (game, variant)  # options left out: their defaults
    assert game.engine_protocol is not None and game.engine_protocol.variant_of(game.initial()) == variant


def test_game_words_refuse_bad_options():
    kalah = get("kalah")
    for words, why in ((["kalah", "foo=1"], "not an option"), (["kalah", "houses=x"], "int"),
                       (["kalah", "empty_capture=maybe"], "0/1"), (["kalah", "houses=3", "houses=4"], "twice"),
                       (["chess"], "unknown game"), ([], "name")):
        with pytest.raises(ValueError, match=why):
            parse_game_words(words, kalah)
    assert parse_game_words("6 4 empty-capture".split(), kalah)[1]["empty_capture"] is True  # the older line
    with pytest.raises(ValueError, match="name first"):
        parse_game_words("7 6".split(), get("connect4"))  # Connect Four has no older line


def test_split_position():
    assert split_position("4,4/0/4,4/0 p0") == ("4,4/0/4,4/0 p0", [])
    assert split_position("4,4/0/4,4/0 p0 moves 1 2") == ("4,4/0/4,4/0 p0", ["1", "2"])
    assert split_position("moves 3 3") == ("", ["3", "3"])  # Connect Four's empty moves text


def test_server_of_kalah_takes_both_game_lines_and_moves():
    s = EngineServer("alphabeta:depth=3")
    state = get("kalah").initial(houses=4, seeds=3)
    for line in ("game kalah houses=4 seeds=3", "game 4 3 standard"):
        assert s.handle(line) == (["ok"], False)
        assert s.handle(f"position {state.to_text()} moves 2") == (["ok"], False)
        assert s.state == state.play(2)
        assert s.handle("go 1000")[0][-1] == f"move {served_agent('kalah', 'alphabeta:depth=3')(state.play(2))}"
    assert "game is already over" in s.handle("position 0,0,0,0/12/0,0,0,0/12 end moves 1")[0][0]


def test_server_of_oware_switches_game_on_a_game_line():
    """A server answers ``game`` for any game its spec has agents for (here Kalah from an Oware server)."""
    s = EngineServer("alphabeta:depth=2", game="oware")
    assert s.handle("game kalah houses=3 seeds=2") == (["ok"], False)
    assert s.handle("position 2,2,2/0/2,2,2/0 p0") == (["ok"], False)
    assert s.handle("go 100")[0][-1].startswith("move ")
    assert s.handle("game connect4")[0][0].startswith("error") or _has_agents("connect4")


#: A Connect Four engine of the protocol that drops its stone into the leftmost column with room (it reads the
#: board text: the top row's '.' cells).
LEFTMOST = """\
import sys
seen = []
for line in sys.stdin:
    words = line.split()
    if words[0] == "hello":
        print("hello leftmost", flush=True)
    elif words[0] == "game":
        seen.append(line.strip())
        print("ok" if words[1] == "connect4" else "error connect4 only", flush=True)
    elif words[0] in ("seed", "position"):
        board = words[1] if words[0] == "position" else None
        print("ok", flush=True)
    elif words[0] == "go":
        print("info " + seen[-1], flush=True)
        print(f"move {board.split('/')[0].index('.')}", flush=True)
    elif words[0] == "quit":
        break
"""

#: A Kalah engine that speaks only the older line: ``error`` to ``game kalah ...``, then plays its first house.
OLD_KALAH = """\
import sys
for line in sys.stdin:
    words = line.split()
    if words[0] == "hello":
        print("hello old", flush=True)
    elif words[0] == "game":
        print("ok" if words[1].isdigit() else "error usage: game <m> <n> standard|empty-capture", flush=True)
    elif words[0] in ("seed", "position"):
        position = words[1:] if words[0] == "position" else None
        print("ok", flush=True)
    elif words[0] == "go":
        south, _, north, _ = position[0].split("/")
        houses = [int(x) for x in (south if position[1] == "p0" else north).split(",")]
        first = 1 if position[1] == "p0" else len(houses) + 2
        print(f"move {first + next(i for i, x in enumerate(houses) if x)}", flush=True)
    elif words[0] == "quit":
        break
"""


def _engine(tmp_path, name, source) -> str:
    path = tmp_path / name
    path.write_text(source)
    return f"cmd:{PY} {shlex.quote(str(path))}"


def test_cmd_agent_plays_connect4(tmp_path):
    """The client sends ``game connect4 width=5 height=4`` (the variant of the state) and the board text."""
    c4 = get("connect4")
    agent = ExternalAgent(_engine(tmp_path, "leftmost.py", LEFTMOST), seed=3)
    agent.settings = EngineSettings(5000, 1000, str(tmp_path))
    state = c4.initial(width=5, height=4)
    rnd = random.Random(1)
    while not state.is_over:
        if state.player == 0:
            move = agent(state)
            assert move == state.legal_moves()[0]
            assert agent.last["info"] == "game connect4 width=5 height=4"
        else:
            move = rnd.choice(state.legal_moves())
        state = state.play(move)


def test_cmd_agent_falls_back_to_the_older_kalah_line(tmp_path):
    kalah = get("kalah")
    agent = ExternalAgent(_engine(tmp_path, "old.py", OLD_KALAH))
    agent.settings = EngineSettings(5000, 1000, str(tmp_path))
    agent.check_match(4, 3, False)  # the older line answers ok
    state = kalah.initial(houses=4, seeds=3).play(2)
    for seed in (1, 2):  # a new game each: the older line again, remembered for this process
        assert agent.with_seed(seed)(state) == state.legal_moves()[0]


@needs_c4_agents
def test_server_of_connect4_plays_as_the_in_process_agent():
    s = EngineServer("random", game="connect4", seed=5)
    assert s.handle("game connect4 width=5 height=4") == (["ok"], False)
    state, moves = get("connect4").initial(width=5, height=4), []
    agent = served_agent("connect4", "random", seed=5)
    while not state.is_over:
        assert s.handle("position moves " + " ".join(map(str, moves)) if moves else "position ")[0] == ["ok"]
        move = int(s.handle("go 1000")[0][-1].split()[1])
        assert move == agent(state)
        moves.append(move)
        state = state.play(move)


@needs_c4_agents
def test_served_connect4_engine_round_trip(tmp_path):
    """``cmd:jitsearch engine --game connect4`` through the client plays the in-process agent's moves."""
    served = ExternalAgent(f"cmd:{PY} -m jitsearch engine --game connect4 --agent random", seed=7)
    served.settings = EngineSettings(20000, 5000, str(tmp_path), 120.0)
    here = served_agent("connect4", "random", seed=7)
    state = get("connect4").initial()
    while not state.is_over:
        move = served(state)
        assert move == here(state)
        state = state.play(move)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_engine_protocol_round_trip(name):
    """Every game: the client's ``game`` line and ``position START moves ...`` put the server on the client's
    state, ply by ply over random games, and ``go`` answers a legal move."""
    if not _has_agents(name):
        pytest.skip(f"the agents cannot parse 'random' for {name} (before the generic arena)")
    game = get(name)
    server = EngineServer("random", game=name, seed=1)
    assert server.handle(f"game {game_words(game, game.defaults())}") == (["ok"], False)
    rnd = random.Random(5)
    for _ in range(3):
        start = state = game.initial()
        moves = []
        while not state.is_over:
            assert server.handle(f"position {start.to_text()} moves {' '.join(map(str, moves))}") == (["ok"], False)
            assert server.state == state and server.state.to_text() == state.to_text()
            assert int(server.handle("go 1000")[0][-1].split()[1]) in state.legal_moves()
            move = rnd.choice(state.legal_moves())
            moves.append(move)
            state = state.play(move)

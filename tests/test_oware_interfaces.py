"""Oware behind our interfaces: the game-over reason (:meth:`OwareState.end_reason`, against the naive
transcription of OpenSpiel's rules) and the engine line protocol (``jitsearch engine --game oware``)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jitsearch.arena.engine_protocol import EngineServer
from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.games.oware import OwareState
from jitsearch.games.oware.naive import NaiveOware

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
START = "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0"


def naive_reason(n: NaiveOware, house: int) -> str | None:
    """Why the naive game ends after ``house``, by the checks in the order docs/oware.md gives."""
    c = n.copy()
    last = c._distribute(house)
    captured = c._in_opponent_row(last) and not c._is_grand_slam(last) and c._capture_from(last) > 0
    key = (1 - c.player, tuple(c.score), tuple(c.seeds))
    if not captured and key in n.seen:
        return "repetition"
    if n.plies + 1 >= n.move_limit:
        return "move limit"
    if c.is_terminal():
        return "scores"
    c.player = 1 - c.player
    return None if c.legal_houses() else "no move"


@pytest.mark.parametrize("m, n", [(1, 3), (2, 2), (3, 2), (4, 3), (6, 4)])
def test_end_reason_equals_the_naive_rules(m, n):
    rnd = random.Random(m * 10 + n)
    seen = set()
    for g in range(60):
        limit = rnd.choice([1000, 5, 12])
        state, naive = OwareState.initial(m, n, move_limit=limit), NaiveOware([n] * 2 * m, move_limit=limit)
        while not state.is_over:
            for h in state.legal_moves():  # every legal move's reason, not only the one played
                assert state.end_reason(h) == naive_reason(naive, h), (state.to_text(), h)
            h = rnd.choice(state.legal_moves())
            reason = state.end_reason(h)
            state = state.play(h)
            naive.play(h)
        seen.add(reason)
    assert seen == {"repetition"} if m == 1 else seen >= {"scores", "move limit"}
    with pytest.raises(ValueError, match="empty"):
        OwareState.from_text("0,4,4,4,4,4/5,5,5,5,4,4/0,0 p0").end_reason(0)


# -- the engine protocol --------------------------------------------------------------------------------

def test_oware_server_requests_and_errors():
    s = EngineServer("alphabeta:depth=3", game="oware")
    assert s.handle("hello") == (["hello jitsearch oware alphabeta:depth=3"], False)
    for line, words in [("go 100", "no position"), ("position " + START, "no game"),
                        ("game 6 4 empty-capture", "standard|grand-slam-illegal"), ("game 0 4 standard", "houses")]:
        answers, _ = s.handle(line)
        assert len(answers) == 1 and answers[0].startswith("error ") and words in answers[0], (line, answers)
    assert s.handle("game 6 4 standard") == (["ok"], False)
    for line, words in [("position 4,4/4,4/0,0 p0", "houses=2"), ("position 4,4,4,4,4,4/4,4,4,4,4,4/1,0 p0",
                                                                       "seeds=4.08333"),
                        ("position garbage", "position must look like"), (f"position {START} moves 5 5", "move 2"),
                        (f"position {START} moves x", "moves are integers"), (f"position {START} moves 6", "not a house"),
                        ("position 0,0,0,0,0,0/0,0,0,0,0,0/24,24 end", None)]:
        answers, _ = s.handle(line)
        if words is None:
            assert answers == ["ok"] and "over" in s.handle("go 100")[0][0]
        else:
            assert answers[0].startswith("error ") and words in answers[0], (line, answers)
    assert s.handle(f"position {START} moves 5 9") == (["ok"], False)
    # the position the engine holds is the game's, with its repetition record and move count
    assert s.state == OwareState.initial().play(5).play(9) and s.state.ply == 2
    answers, _ = s.handle("go 1000")
    assert answers[-1] == f"move {parse_agent('alphabeta:depth=3', game='oware')(s.state)}"
    assert answers[0].startswith("info depth 3")
    assert s.handle("quit") == ([], True)


@pytest.mark.parametrize("spec", ["openspiel:random", "human", "bogus", "alphabeta:depth=0"])
def test_oware_server_refuses_specs(spec):
    with pytest.raises(ValueError):
        EngineServer(spec, game="oware")


@pytest.mark.parametrize("spec", ["random", "mc:playouts=10"])
def test_served_oware_game_equals_in_process_game(spec):
    """A game through the protocol (the start and the moves so far before every go) plays the moves of the
    in-process agent with the same seed, to the same end."""
    def through_server(seed):
        server = EngineServer(spec, game="oware")
        assert server.handle("game 3 3 standard")[0] == ["ok"] and server.handle(f"seed {seed}")[0] == ["ok"]
        state, moves = OwareState.initial(3, 3), []
        other = parse_agent("alphabeta:depth=2", game="oware", seed=0)
        while not state.is_over:
            if state.player == 0:
                assert server.handle(f"position {OwareState.initial(3, 3).to_text()} moves "
                                     + " ".join(map(str, moves)))[0] == ["ok"]
                house = int(server.handle("go 5000")[0][-1].split()[1])
            else:
                house = other(state)
            moves.append(house)
            state = state.play(house)
        return moves

    reference = play_game(OwareState.initial(3, 3), [parse_agent(spec, game="oware", seed=11),
                                                            parse_agent("alphabeta:depth=2", game="oware", seed=0)])
    assert through_server(11) == reference["moves"]


def test_go_caps_a_timed_oware_agent():
    s = EngineServer("alphabeta:time=30", game="oware")
    s.handle("game 6 4 standard")
    s.handle("position " + START)
    s.handle("go 200")  # (compiles the search)
    t0 = time.monotonic()
    assert s.handle("go 200")[0][-1].startswith("move ")
    assert time.monotonic() - t0 < 5  # the capped time is what the search used, not the spec's 30 s
    assert s.agent.options["time"] == pytest.approx((200 * 0.9 - 20) / 1000)


@pytest.mark.slow
def test_cli_engine_oware_session():
    requests = "hello\ngame 4 3 standard\nseed 3\nposition 3,3,3,3/3,3,3,3/0,0 p0 moves 3\ngo 2000\nquit\n"
    proc = subprocess.run([sys.executable, "-m", "jitsearch", "engine", "--game", "oware", "--agent",
                           "alphabeta:depth=2"], input=requests, capture_output=True, text=True, env=ENV,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:4] == ["hello jitsearch oware alphabeta:depth=2", "ok", "ok", "ok"]
    want = parse_agent("alphabeta:depth=2", game="oware")(OwareState.initial(4, 3).play(3))
    assert lines[-1] == f"move {want}"


def test_cli_engine_oware_errors(capsys):
    from jitsearch.cli.app import main

    assert main(["engine", "--game", "oware", "--agent", "perfect:depth=2"]) == 2  # refused before reading stdin
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "unknown Oware agent" in err
    assert main(["engine", "--game", "go"]) == 2
    assert "unknown game 'go'" in capsys.readouterr().err

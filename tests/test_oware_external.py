"""``cmd:`` external engines in Oware matches (:class:`jitsearch.arena.external_engine.ExternalAgent`)."""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitsearch.arena.external_engine import ExternalAgent, close_engines, running_pids
from jitsearch.arena.agents import parse_agent
from jitsearch.arena.game_match import GameMatch
from jitsearch.arena.matches import run_tournament
from jitsearch.games import get
from jitsearch.games.oware import OwareState

ROOT = Path(__file__).resolve().parents[1]
PY = shlex.quote(sys.executable)
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def served(spec: str) -> str:
    return f"cmd:{PY} -m jitsearch engine --game oware --agent {spec}"


@pytest.fixture(autouse=True)
def _no_orphans():
    yield
    close_engines()
    assert running_pids() == []


def _games(path: Path) -> list[list[int]]:
    return [json.loads(line)["moves"] for line in path.read_text().splitlines()]


def line_from_history(state):
    first, moves = get("oware").engine_protocol.line(state)
    return first.to_text(), moves


def test_line_from_history_replays_the_record():
    """The line read back from a state's repetition record reaches the same record, on random games."""
    rnd = random.Random(3)
    checked = 0
    for houses, seeds in ((2, 2), (3, 3), (6, 4)):
        for _ in range(6):
            s = OwareState.initial(houses, seeds)
            while not s.is_over:
                text, moves = line_from_history(s)
                t = OwareState.from_text(text)
                for h in moves:
                    t = t.play(h)
                assert t.to_text() == s.to_text() and np.array_equal(t.history, s.history)
                checked += 1
                s = s.play(rnd.choice(s.legal_moves()))
    assert checked > 100


def test_parser_accepts_cmd_specs_and_refuses_bad_ones():
    agent = parse_agent("cmd:python 'my engine.py' --opt a,b", game="oware", seed=5)
    assert isinstance(agent, ExternalAgent) and agent.argv == ("python", "my engine.py", "--opt", "a,b")
    assert agent.seed == 5
    for spec in ("cmd:", "cmd:python 'unclosed"):
        with pytest.raises(ValueError) as err:
            parse_agent(spec, game="oware")
        assert "\n" not in str(err.value)


@pytest.mark.slow
def test_served_engine_plays_the_in_process_games(tmp_path):
    """A served agent plays the games the in-process agent plays, seed for seed, from random openings (the
    engine gets the start and every move, so its repetition record and move count are the game's)."""
    for spec, other in (("random", "alphabeta:depth=2"), ("alphabeta:depth=2", "random")):
        ours, theirs = tmp_path / f"in-{spec}.jsonl", tmp_path / f"cmd-{spec}.jsonl"
        a = run_tournament(spec, other, GameMatch.of("oware", {"houses": 3, "seeds": 3}, openings=3, seed=4), 1, out=ours)
        b = run_tournament(served(spec), other, GameMatch.of("oware", {"houses": 3, "seeds": 3}, openings=3, seed=4), 1, out=theirs)
        assert _games(ours) == _games(theirs) and len(_games(ours)) == 2
        assert a["statistics"]["pentanomial"] == b["statistics"]["pentanomial"]


@pytest.mark.slow
def test_cli_tournament_with_a_served_engine(tmp_path):
    """The brief's command: a cmd: engine against random, the same games as the in-process agent."""
    runs = {}
    for name, spec in (("in", "alphabeta:depth=2"), ("cmd", served("alphabeta:depth=2"))):
        out = tmp_path / f"{name}.jsonl"
        r = subprocess.run([sys.executable, "-m", "jitsearch", "tournament", "--game", "oware", "--a", spec, "--b",
                            "random", "--pairs", "1", "--json", "--out", str(out)], capture_output=True, text=True,
                           env=ENV, timeout=300)
        assert r.returncode == 0, r.stderr
        runs[name] = (json.loads(r.stdout), _games(out))
    assert runs["in"][1] == runs["cmd"][1]
    assert runs["in"][0]["statistics"]["pentanomial"] == runs["cmd"][0]["statistics"]["pentanomial"]


@pytest.mark.parametrize("engine, words", [
    ("cmd:/nonexistent/engine", "cannot start"),
    (f"cmd:{PY} -c 'print(\"hello x\", flush=True)'", "exited"),  # while asked game, or its stdin closed
])
def test_broken_engine_is_one_line(tmp_path, engine, words):
    """An engine that cannot start, or dies before it takes the board, is refused before any game."""
    argv = [sys.executable, "-m", "jitsearch", "tournament", "--game", "oware", "--houses", "3", "--seeds", "2",
            "--a", engine, "--b", "random", "--pairs", "1", "--timemargin", "0", "--movetime", "300",
            "--engine-logs", str(tmp_path)]
    r = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300)
    assert r.returncode == 2, r.stderr
    # on an empty Numba cache the rules' first compile may come first, with its notice
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip() and not ln.startswith("compiling (first run only)")]
    assert len(lines) == 1 and lines[0].startswith("error: engine 'cmd:") and words in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_cmd_options_without_an_engine_are_refused():
    r = subprocess.run([sys.executable, "-m", "jitsearch", "tournament", "--game", "oware", "--a", "random", "--b",
                        "random", "--pairs", "1", "--movetime", "100"], capture_output=True, text=True, env=ENV,
                       timeout=120)
    assert r.returncode == 2 and r.stderr == "error: --movetime applies to cmd: engines only\n"


def test_line_limit_is_the_engines():
    from jitsearch.arena import engine_protocol, external_engine

    assert external_engine.MAX_LINE == engine_protocol.MAX_LINE


#: An Oware engine of the line protocol that loses every game at its first move, as argv[1] says: illegal
#: (plays house 99), garbage (answers a word), crash (exits 3) or timeout (sleeps past its time).
BAD_ENGINE = """\
import sys, time
mode = sys.argv[1]
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "quit":
        break
    if words[0] == "hello":
        print("hello bad-oware", flush=True)
    elif words[0] == "go":
        if mode == "crash":
            sys.stderr.write("crashing on purpose\\n")
            sys.exit(3)
        if mode == "timeout":
            time.sleep(30)
        print("move e2e4" if mode == "garbage" else "move 99", flush=True)
    else:
        print("ok", flush=True)
"""


def bad_engine(tmp_path: Path, mode: str) -> str:
    script = tmp_path / "bad_oware_engine.py"
    script.write_text(BAD_ENGINE)
    return f"cmd:{PY} {shlex.quote(str(script))} {mode}"


@pytest.mark.parametrize("mode, termination", [("illegal", "illegal move"), ("garbage", "illegal move"),
                                               ("crash", "crash"), ("timeout", "time forfeit")])
def test_engine_that_forfeits_loses_its_games_and_the_match_goes_on(tmp_path, mode, termination):
    """Every game of a misbehaving engine is its loss, recorded with its termination and detail; the match
    plays all its games, counts the terminations, and resumes from its file (every record replayed)."""
    from jitsearch.arena.external_engine import EngineSettings

    settings = EngineSettings(100 if mode == "timeout" else 2000, 0 if mode == "timeout" else 1000,
                              str(tmp_path / "logs"))
    bad = bad_engine(tmp_path, mode)
    path = tmp_path / "g.jsonl"
    r = run_tournament("random", bad, GameMatch.of("oware", {"houses": 3, "seeds": 2}, openings=2, seed=1), 2, out=path,
                        engine_settings=settings)
    assert r["games"] == 4 and r["a_wins"] == 4 and not r["interrupted"]
    assert r["terminations"] == {termination: {"a": 0, "b": 4}}
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    for rec in recs:
        state = OwareState.initial(3, 2)
        for h in rec["opening_moves"] + rec["moves"]:
            state = state.play(h)
        assert rec["termination"] == termination and rec["detail"] and rec["a_result"] == "win"
        assert not state.is_over and state.player == 1 - rec["seat"]  # B was to move, and lost
        assert rec["final"] == state.to_text() and rec["result"] == f"p{rec['seat']}"
    assert running_pids() == []
    again = run_tournament("random", bad, GameMatch.of("oware", {"houses": 3, "seeds": 2}, openings=2, seed=1), 3, out=path, resume=True,
                            engine_settings=settings)
    assert again["games"] == 6 and again["terminations"] == {termination: {"a": 0, "b": 6}}


def test_cli_match_with_a_forfeiting_engine_reports_and_rates(tmp_path, capsys):
    """The CLI plays on past the forfeits (exit 0), notes them, and 'jitsearch rate' reads the file."""
    from jitsearch.cli.app import main

    out = tmp_path / "m.jsonl"
    bad = bad_engine(tmp_path, "illegal")
    code = main(["tournament", "--game", "oware", "--houses", "3", "--seeds", "2", "--a", "random", "--b", bad,
                 "--pairs", "2", "--json", "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    obj = json.loads(stdout)
    assert obj["games"] == 4 and obj["terminations"] == {"illegal move": {"a": 0, "b": 4}}
    assert "lost 4 games by illegal move" in stderr
    code = main(["rate", str(out), "--json"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    fit = json.loads(stdout)
    assert fit["records"]["kind"] == "oware" and fit["records"]["games"] == 4
    assert {p["name"]: p["points"] for p in fit["players"]} == {"random": 4.0, bad: 0.0}

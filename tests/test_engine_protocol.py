"""The engine line protocol (``jitsearch engine``) and external ``cmd:`` engines in the arena.

The server is tested as a pure state machine and as a process; the arena with
tiny misbehaving engines (tests/data/engines: they play the first legal move,
then time out, print garbage, play an illegal move or crash), which must each
lose their games with the right ``termination`` while everything else in the
match is kept, and with ``jitsearch engine`` itself, which must play exactly
the games of the in-process agent of the same spec and seed.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.arena.engine_protocol import EngineServer, serve
from jitsearch.arena.external_engine import (TERMINATIONS, EngineSettings, ExternalAgent, close_engines,
                                             parse_command, running_pids)
from jitsearch.arena.matches import run_engines, run_kalah_tournament
from conftest import kalah_match as KalahMatch
from jitsearch.arena.game_match import GameRecords
from jitsearch.arena.records import read_records
from jitsearch.arena.records import BadRecord, seal
from jitsearch.cli._game_tournament import _engine_list
from jitsearch.games.kalah import KalahState

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ROOT / "tests" / "data" / "engines"
PY = shlex.quote(sys.executable)
START = "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0"
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def bad(mode: str, after: int = 2, tag: str = "") -> str:
    """A misbehaving engine; ``tag``, an extra argument it ignores, finds its processes (:func:`_tagged`)."""
    return f"cmd:{PY} {shlex.quote(str(ENGINES / (mode + '_engine.py')))} {after} {shlex.quote(tag)}".rstrip()


def good(tag: str = "") -> str:
    return f"cmd:{PY} {shlex.quote(str(ENGINES / 'engine_base.py'))} ok 2 {shlex.quote(tag)}".rstrip()


def _tagged(tag: str, but: int | None = None) -> list[int]:
    """Live processes (not zombies) but ``but`` whose command line holds ``tag``: engines left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != but:
            try:
                if tag.encode() in (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def served(spec: str) -> str:
    return f"cmd:{PY} -m jitsearch engine --agent {spec}"


@pytest.fixture(autouse=True)
def _no_orphans():
    yield
    close_engines()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


# -- the server, in memory -----------------------------------------------------------------------

def test_server_requests_and_errors():
    s = EngineServer("alphabeta:depth=3")
    assert s.handle("hello") == (["hello jitsearch alphabeta:depth=3"], False)
    for line, words in [("", "empty"), ("bestmove e2e4", "unknown request"), ("go 100", "no position"),
                        ("position " + START, "no game"), ("game 6 4", "standard|empty-capture"),
                        ("game 6 x standard", "integers"), ("game 0 4 standard", "houses"), ("hello there", "nothing"),
                        ("seed x", "integer")]:
        answers, done = s.handle(line)
        assert not done and len(answers) == 1 and answers[0].startswith("error ") and words in answers[0], line
    assert s.handle("game 6 4 standard") == (["ok"], False)
    for line, words in [("go 100", "no position"), ("position 1,2/0/3,4/0 p0", "houses=2"),
                        ("position 5,4,4,4,4,4/0/4,4,4,4,4,4/0 p0", "seeds=4.08333"), ("position garbage", "position"),
                        ("position 0,0,0,0,0,0/24/0,0,0,0,0,0/24 end", None)]:
        answers, _ = s.handle(line)
        if words is None:
            assert answers == ["ok"]
            assert "over" in s.handle("go 100")[0][0]
        else:
            assert answers[0].startswith("error ") and words in answers[0], (line, answers)
    assert s.handle("position " + START) == (["ok"], False)
    for line in ("go", "go 0", "go -5", "go 1.5", f"go {10**12}"):
        assert s.handle(line)[0][0].startswith("error "), line
    answers, _ = s.handle("go 1000")
    assert answers[-1] == f"move {parse_agent('alphabeta:depth=3')(KalahState.initial())}"
    assert all(a.startswith("info ") for a in answers[:-1]) and answers[0].startswith("info depth 3")
    assert s.handle("quit") == ([], True)


@pytest.mark.parametrize("spec", ["human", "openspiel:mcts", "cmd:foo", "bogus", "alphabeta:depth=0"])
def test_server_refuses_specs(spec):
    with pytest.raises(ValueError):
        EngineServer(spec)


@pytest.mark.slow
def test_server_refuses_boards_its_agent_cannot_play():
    s = EngineServer("perfect")
    answer = s.handle("game 6 4 standard")[0][0]
    assert answer.startswith("error ") and "perfect" in answer
    assert s.handle("game 3 2 empty-capture") == (["ok"], False)
    assert s.handle("position 2,2,2/0/2,2,2/0 p0") == (["ok"], False)
    assert s.handle("go 1000")[0][-1].startswith("move ")


@pytest.mark.parametrize("spec", ["mcts:iterations=40", "random"])
def test_served_game_equals_in_process_game(spec):
    """A whole game through the protocol, the tester's way (game, seed, position + go every move), plays the
    moves of the in-process agent with that seed; another seed gives another game."""
    def through_server(seed):
        server = EngineServer(spec)
        assert server.handle("game 6 4 empty-capture")[0] == ["ok"]
        assert server.handle(f"seed {seed}")[0] == ["ok"]
        state, moves = KalahState.initial(6, 4, empty_capture=True), []
        other = parse_agent("alphabeta:depth=2")
        while not state.is_over:
            if state.player == 0:
                assert server.handle("position " + state.to_text())[0] == ["ok"]
                pit = int(server.handle("go 5000")[0][-1].split()[1])
            else:
                pit = other(state)
            moves.append(pit)
            state = state.play(pit)
        return moves

    reference = play_game(KalahState.initial(6, 4, empty_capture=True),
                          [parse_agent(spec, seed=11), parse_agent("alphabeta:depth=2")])["moves"]
    assert through_server(11) == reference
    assert through_server(12) != reference


@pytest.mark.slow
def test_go_caps_a_timed_agent():
    s = EngineServer("alphabeta:time=30")
    s.handle("game 6 4 standard")
    s.handle("position " + START)
    t0 = time.perf_counter()
    assert s.handle("go 200")[0][-1].startswith("move ")
    assert time.perf_counter() - t0 < 10.0  # its spec says 30 s
    assert s.agent.time == pytest.approx((200 * 0.9 - 20) / 1000)
    m = EngineServer("mcts:time=30")
    m.handle("game 6 4 standard")
    m.handle("position " + START)
    assert m.handle("go 300")[0][-1].startswith("move ")
    assert m.agent._config.time == pytest.approx((300 * 0.9 - 20) / 1000)
    fixed = EngineServer("mcts:iterations=50")
    fixed.handle("game 6 4 standard")
    fixed.handle("position " + START)
    fixed.handle("go 1")
    assert fixed.agent.options.get("time") is None


def test_serve_streams_stops_at_quit_and_at_end_of_input():
    out = io.StringIO()
    assert serve(EngineServer("random", seed=1), io.StringIO("hello\nfoo\nquit\nhello\n"), out) == 0
    assert out.getvalue().splitlines() == ["hello jitsearch random", "error unknown request 'foo': hello, game, "
                                           "seed, position, go or quit"]
    out = io.StringIO()
    assert serve(EngineServer("random"), io.StringIO("hello"), out) == 0  # no final newline, then EOF
    assert out.getvalue() == "hello jitsearch random\n"


# -- jitsearch engine, the process ------------------------------------------------------------------

def _engine(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "jitsearch", "engine", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, **kw)


def test_cli_engine_session_and_errors():
    requests = f"hello\ngame 6 4 standard\nseed 3\nposition {START}\ngo 2000\nwhat\nquit\nhello\n"
    proc = _engine("--agent", "alphabeta:depth=2", "--name", "two plies")
    out, err = proc.communicate(requests, timeout=120)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[:3] == ["hello two plies", "ok", "ok"] and lines[3] == "ok"
    assert lines[-2] == f"move {parse_agent('alphabeta:depth=2')(KalahState.initial())}"
    assert lines[-1].startswith("error unknown request 'what'")
    bad_spec = subprocess.run([sys.executable, "-m", "jitsearch", "engine", "--agent", "alphabeta:dpth=2"],
                              capture_output=True, text=True, env=ENV, stdin=subprocess.DEVNULL, timeout=60)
    assert bad_spec.returncode == 2 and bad_spec.stdout == ""
    assert bad_spec.stderr.startswith("error: ") and len(bad_spec.stderr.splitlines()) == 1


def test_cli_engine_ctrl_c_exits_130_quietly():
    proc = _engine("--agent", "random")
    proc.stdin.write("hello\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("hello")  # it is serving
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "" and out == ""


# -- external engines in the arena ----------------------------------------------------------------

def test_cmd_specs_and_engine_lists():
    assert parse_command("cmd:python 'my engine.py' --opt a,b") == ("python", "my engine.py", "--opt", "a,b")
    for spec in ("cmd:", "cmd:   ", "cmd:python 'unclosed"):
        with pytest.raises(ValueError):
            parse_agent(spec)
    assert isinstance(parse_agent("cmd:python x.py"), ExternalAgent)
    assert _engine_list(["random alphabeta:depth=3 cmd:python e.py --a b,c", "cmd:./other", "mcts:iterations=9"]) \
        == ["random", "alphabeta:depth=3", "cmd:python e.py --a b,c", "cmd:./other", "mcts:iterations=9"]


def test_served_engine_plays_the_in_process_games(tmp_path):
    """cmd:jitsearch engine --agent SPEC plays the games of SPEC in process, seed for seed (the MCTS agent's
    searches depend on its seed, so the seed request must reach it); the files agree move for move. Kalah(6,4):
    the engines load the kernels the games in this process compiled."""
    match = KalahMatch(houses=6, seeds=4, openings=2, seed=5)
    settings = EngineSettings(60_000, 5_000, str(tmp_path / "logs"))
    a, b = "alphabeta:depth=4", "mcts:iterations=40"
    here = run_kalah_tournament(a, b, match, 3, out=tmp_path / "here.jsonl")
    there = run_kalah_tournament(served(a), served(b), match, 3, out=tmp_path / "there.jsonl",
                                 engine_settings=settings)
    key = ("pair", "seat", "moves", "final", "a_result")
    assert [[r[k] for k in key] for r in read_records(tmp_path / "here.jsonl")] == \
        [[r[k] for k in key] for r in read_records(tmp_path / "there.jsonl")]
    assert (here["a_wins"], here["draws"], here["b_wins"]) == (there["a_wins"], there["draws"], there["b_wins"])
    assert "terminations" not in there
    logs = sorted((tmp_path / "logs").iterdir())
    assert len(logs) == 2  # one per engine, each started once (check, then kept alive across the 6 games)
    assert all(log.read_text().count("started by pid") == 1 for log in logs)
    assert running_pids() == []


def test_only_the_reader_thread_closes_an_engines_output(tmp_path, monkeypatch):
    """An engine's stdout is closed by its reader thread alone, after the end of file that follows the exit:
    closed by the thread that kills the engine, the descriptor's number was free for the next engine's pipe
    while the old reader could still read it, and under load the old reader took the new engine's first
    byte ('ello test-garbage' answered to hello)."""
    import jitsearch.arena.external_engine as ee

    closers = []

    class Output:  # the pipe, with the thread of each close recorded
        def __init__(self, raw):
            self.raw = raw

        def readline(self, n=-1):
            return self.raw.readline(n)

        def close(self):
            closers.append(threading.current_thread().name)
            self.raw.close()

    real_popen = ee.subprocess.Popen

    def popen(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        proc.stdout = Output(proc.stdout)
        return proc

    monkeypatch.setattr(ee.subprocess, "Popen", popen)
    argv = parse_command(bad("garbage", tag=str(tmp_path)))
    for i in range(3):
        eng = ee.EngineProcess(argv, tmp_path / "engine.log")
        eng.start()
        assert eng.name == "test-garbage"
        eng.kill() if i % 2 else eng.close()
        assert not eng.reader.is_alive()
    assert closers == ["jitsearch-engine-reader"] * 3
    assert _tagged(str(tmp_path)) == []


@pytest.mark.slow
@pytest.mark.parametrize("mode, termination", [pytest.param("timeout", "time forfeit", marks=pytest.mark.slow),
                                               ("garbage", "illegal move"),
                                               ("illegal", "illegal move"), ("crash", "crash"),
                                               ("vanish", "crash")])
def test_misbehaving_engine_loses_its_games_and_nothing_else(tmp_path, mode, termination):
    """A round robin of random, a well-behaved engine and a misbehaving one: every game of the bad engine is
    recorded as its loss with the termination, the other games are played as usual, the files resume
    cleanly (every record passes the replay checks), and no engine process is left."""
    settings = EngineSettings(*((600, 400) if mode == "timeout" else (3000, 1000)), str(tmp_path / "logs"))
    match = KalahMatch(houses=4, seeds=3, seed=3)
    engines = ["random", good(str(tmp_path)), bad(mode, tag=str(tmp_path))]
    t0 = time.perf_counter()
    r = run_engines(engines, "round-robin", match, 3, out_dir=tmp_path / "games", engine_settings=settings)
    assert time.perf_counter() - t0 < 60
    assert running_pids() == [] and _tagged(str(tmp_path)) == []
    assert not r["interrupted"]
    for m in r["matches"]:
        assert m["games"] == 6
        recs = read_records(tmp_path / "games" / f"match_{engines.index(m['a'])}_vs_{engines.index(m['b'])}.jsonl")
        assert len(recs) == 6
        if m["b"] != engines[2]:
            assert all("termination" not in x for x in recs) and "terminations" not in m
            continue
        forfeits = [x for x in recs if "termination" in x]
        assert forfeits and m["terminations"] == {termination: {"a": 0, "b": len(forfeits)}}
        for x in forfeits:  # lost by the bad engine (B), in a live position where B was to move, at its 3rd move
            b_player = 1 - x["a_player"]
            state, b_moves = KalahState.initial(4, 3), 0
            for pit in x["moves"]:
                b_moves += state.player == b_player
                state = state.play(pit)
            assert state.player == b_player and not state.is_over and b_moves == 2
            assert x["termination"] == termination and x["a_result"] == "win" and not x["capped"]
            assert isinstance(x["detail"], str) and x["detail"]
        assert m["a_wins"] >= len(forfeits)
    log = next((tmp_path / "logs").glob(f"*{mode}_engine*"))
    starts = log.read_text().count("started by pid")
    lost = sum(m["terminations"][termination]["b"] for m in r["matches"] if "terminations" in m)
    if mode == "illegal":  # it answers the protocol: kept alive across its games
        assert starts == 1
    else:  # killed (or dead) after each forfeit, started again for its next game
        # a start per forfeited game at least; how many more depends on when a vanished process is noticed
        # (14 starts for 12 forfeits were seen once, under load, with pytest-xdist); the upper bound only
        # rules out a restart storm
        assert lost <= starts <= 2 * lost + 1 and starts >= 6
    if mode == "crash":
        assert "crashing on purpose" in log.read_text()
    again = run_engines(engines, "round-robin", match, 3, out_dir=tmp_path / "games", resume=True,
                        engine_settings=settings)
    assert [m["games"] for m in again["matches"]] == [6, 6, 6]
    assert [(m["a_wins"], m["draws"], m["b_wins"]) for m in again["matches"]] == \
        [(m["a_wins"], m["draws"], m["b_wins"]) for m in r["matches"]]


def test_forfeit_records_are_checked(tmp_path):
    match = KalahMatch(houses=4, seeds=3, seed=1)
    settings = EngineSettings(3000, 1000, str(tmp_path / "logs"))
    run_kalah_tournament("random", bad("illegal"), match, 1, out=tmp_path / "g.jsonl", engine_settings=settings)
    recs = read_records(tmp_path / "g.jsonl")
    check = GameRecords("random", bad("illegal"), match)
    for rec in recs:
        assert rec["termination"] == "illegal move" and "not legal" in rec["detail"]
        check(dict(rec))
        for edit in ({"a_result": "loss"}, {"termination": "resigned"}, {"capped": True}):
            changed = seal({**{k: v for k, v in rec.items() if k != "check"}, **edit})
            with pytest.raises(BadRecord):
                check(changed)
    assert set(TERMINATIONS) == {"time forfeit", "illegal move", "crash"}


def test_engine_that_cannot_start_or_play_the_board_is_refused_before_any_game(tmp_path):
    match = KalahMatch(houses=4, seeds=3)
    settings = EngineSettings(3000, 1000, str(tmp_path / "logs"))
    with pytest.raises(ValueError, match="cannot start"):
        run_kalah_tournament("random", "cmd:/nonexistent/engine", match, 1, engine_settings=settings)
    with pytest.raises(ValueError, match="answered 'error"):
        run_kalah_tournament("random", served("perfect"), KalahMatch(houses=6, seeds=6), 1, engine_settings=settings)
    assert running_pids() == []


@pytest.mark.slow
def test_dask_workers_run_their_own_engines(tmp_path):
    settings = EngineSettings(5000, 1000, str(tmp_path / "logs"))
    match = KalahMatch(houses=4, seeds=3, seed=2)
    engine = good(str(tmp_path))
    here = run_kalah_tournament("random", engine, match, 4, out=tmp_path / "here.jsonl", engine_settings=settings)
    there = run_kalah_tournament("random", engine, match, 4, out=tmp_path / "there.jsonl", engine_settings=settings,
                                 workers=2)
    key = ("pair", "seat", "moves", "a_result")
    rows = lambda p: sorted([r[k] for k in key] for r in read_records(p))  # noqa: E731
    assert rows(tmp_path / "here.jsonl") == rows(tmp_path / "there.jsonl")
    assert (here["a_wins"], here["b_wins"]) == (there["a_wins"], there["b_wins"])
    starters = {line.split("started by pid ")[1].split(":")[0]
                for line in next((tmp_path / "logs").iterdir()).read_text().splitlines() if "started by" in line}
    assert len(starters) >= 2  # this process (the check) and the worker(s)
    assert running_pids() == []
    deadline = time.monotonic() + 10  # the workers' engines end with the workers (or before, by close_engines)
    while _tagged(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _tagged(str(tmp_path)) == []


@pytest.mark.slow
def test_cli_tournament_with_cmd_engines(tmp_path):
    out = tmp_path / "games"
    argv = [sys.executable, "-m", "jitsearch", "tournament", "--game", "kalah", "--houses", "4", "--seeds", "3",
            "--pairs", "2", "--engines", f"random {good()}", "--engines", bad("crash"), "--movetime", "3000",
            "--timemargin", "1000", "--out", str(out), "--json"]
    r = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert [m["games"] for m in result["matches"]] == [4, 4, 4]
    assert "lost" in r.stderr and "by crash" in r.stderr
    assert any("crash_engine" in p.name for p in out.iterdir())  # logs next to the games
    refused = subprocess.run([*argv[:argv.index("--engines")], "--a", "random", "--b", "alphabeta:depth=2",
                              "--movetime", "100"], capture_output=True, text=True, env=ENV, timeout=60,
                             stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and refused.stderr == "error: --movetime applies to cmd: engines only\n"


def test_example_engine_of_the_docs_plays(tmp_path):
    example = ROOT / "docs" / "examples" / "example_engine.py"
    assert len(example.read_text().splitlines()) <= 20
    spec = f"cmd:{PY} {shlex.quote(str(example))}"
    r = run_kalah_tournament("random", spec, KalahMatch(), 2,
                             engine_settings=EngineSettings(5000, 1000, str(tmp_path)))
    assert r["games"] == 4 and "terminations" not in r


def test_play_with_an_engine_that_forfeits_is_one_line():
    argv = [sys.executable, "-m", "jitsearch", "play", "--p0", "random", "--p1", bad("illegal", 1), "--houses", "3",
            "--seeds", "2", "--seed", "3", "--json"]
    r = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1
    game = json.loads(r.stdout)
    assert game["termination"] == "illegal move" and not game["finished"]
    lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("compiling (first run only)")]
    assert len(lines) == 1 and lines[0].startswith("error: player 1 (cmd:") and "loses by illegal move" in lines[0]


def test_engines_die_with_a_killed_tester(tmp_path):
    """SIGKILL to the process that runs the match (nothing of it runs after) still ends its engines."""
    tag = str(tmp_path)
    script = (f"from jitsearch.arena.matches import run_kalah_tournament\n"
              f"from jitsearch.arena.matches import match_of\n"
              f"from jitsearch.arena.external_engine import EngineSettings\n"
              f"run_kalah_tournament('random', {bad('timeout', 0, tag)!r}, match_of('kalah', dict(houses=4, seeds=3)), 2,\n"
              f"                     engine_settings=EngineSettings(600_000, 0, {tag!r}))\n")
    tester = subprocess.Popen([sys.executable, "-c", script], env=ENV, stdin=subprocess.DEVNULL)

    def thinking():  # the engine is in its first go (an engine waiting for a request would end at EOF anyway)
        return any("sleeping past its time" in log.read_text() for log in tmp_path.glob("*.stderr.log"))

    deadline = time.monotonic() + 60
    while not thinking() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert thinking() and _tagged(tag, but=tester.pid), "the engine never started its move"
    tester.kill()
    tester.wait(10)
    deadline = time.monotonic() + 10
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tagged(tag) == []


def test_sprt_and_gauntlet_with_cmd_engines(tmp_path):
    """An SPRT stops on a crashing engine's forfeits; a gauntlet plays the first engine against each cmd: one."""
    from jitsearch.arena.stats import SPRT

    settings = EngineSettings(3000, 1000, str(tmp_path / "logs"))
    match = KalahMatch(houses=4, seeds=3, seed=4)
    r = run_kalah_tournament("random", bad("crash", 0), match, 200, sprt=SPRT(0, 300, alpha=0.05, beta=0.05, model="logistic"),
                             out=tmp_path / "sprt.jsonl", engine_settings=settings)
    assert r["sprt"]["decision"] == "H1 accepted" and r["games"] < 40  # stopped early: B forfeits every game
    assert r["terminations"] == {"crash": {"a": 0, "b": r["games"]}}
    g = run_engines([good(), "random", bad("illegal", 1)], "gauntlet", match, 2, engine_settings=settings)
    assert [(m["a"], m["b"]) for m in g["matches"]] == [(good(), "random"), (good(), bad("illegal", 1))]
    assert "terminations" not in g["matches"][0]
    assert g["matches"][1]["terminations"]["illegal move"]["b"] >= 1
    assert running_pids() == []

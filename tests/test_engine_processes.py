"""The processes of ``cmd:`` engines (:mod:`jitsearch.arena.external_engine`): a wrapper's children die with
the engine, a silent engine is given up after the start timeout, and an engine's stderr log is capped.

Engines are the tiny ones of tests/data/engines, some started through a shell script that runs them without
``exec`` (as ``sh -c``, ``uv run`` and ``conda run`` do): the script is the process the arena starts, the
engine its child.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

import jitsearch.arena.external_engine as ee
from jitsearch.arena.external_engine import (EngineSettings, ExternalAgent, close_engines, default_start_timeout,
                                             parse_command, running_pids)
from jitsearch.arena.matches import run_kalah_tournament
from conftest import kalah_match as KalahMatch
from jitsearch.arena.records import read_records

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ROOT / "tests" / "data" / "engines"
PY = shlex.quote(sys.executable)
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


@pytest.fixture(autouse=True)
def _no_orphans():
    yield
    close_engines()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie is dead
    except OSError:
        return False


def _tagged(tag: str) -> list[int]:
    """Live processes but this one whose command line holds ``tag``: engines (and wrappers) left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _gone(tag: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _tagged(tag)


def wrapped(tmp_path: Path, mode: str = "timeout", after: int = 0) -> str:
    """A ``cmd:`` spec of a shell script that runs a test engine as its child (no ``exec``)."""
    script = tmp_path / "wrapper.sh"
    script.write_text(f"#!/bin/sh\n{PY} {shlex.quote(str(ENGINES / (mode + '_engine.py')))} {after} "
                      f"{shlex.quote(str(tmp_path))}\n")
    return f"cmd:/bin/sh {shlex.quote(str(script))}"


# -- process groups -------------------------------------------------------------------------------

@linux_only
def test_killing_a_wrapped_engine_kills_its_child_at_once(tmp_path):
    """The wrapper and the engine it started both end when the engine is killed, without a wait for the
    engine's hold on the output pipe (the reader's join time-out, once 1 s a kill)."""
    eng = ee.EngineProcess(parse_command(wrapped(tmp_path)), tmp_path / "engine.log")
    eng.start(30)
    assert eng.name == "test-timeout" and len(_tagged(str(tmp_path))) == 2  # the shell and its python child
    eng.request("game 4 3 standard")
    eng.request("position 3,3,3,3/0/3,3,3,3/0 p0")
    eng.send("go 100")  # it sleeps (an idle engine would end at the end of its input anyway)
    deadline = time.monotonic() + 30
    while "sleeping past its time" not in (tmp_path / "engine.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    t0 = time.perf_counter()
    eng.kill()
    assert time.perf_counter() - t0 < 0.8
    assert _gone(str(tmp_path), 2) == []
    assert not eng.reader.is_alive() and not eng.logger.is_alive()


@linux_only
def test_quit_also_ends_what_an_engine_left_running(tmp_path):
    """An engine that quits but leaves a child of its own behind (a helper, a stray subprocess): the child is
    in the engine's process group, killed with it."""
    script = tmp_path / "engine.sh"
    script.write_text(f"#!/bin/sh\n{PY} -c 'import time; time.sleep(120)' {shlex.quote(str(tmp_path))} &\n"
                      f"read line; echo hello leaver; read line; exit 0\n")
    eng = ee.EngineProcess(["/bin/sh", str(script)], tmp_path / "engine.log")
    eng.start(30)
    assert eng.name == "leaver"
    eng.close()
    assert _gone(str(tmp_path), 2) == []


@linux_only
def test_time_forfeits_of_a_wrapped_engine_leave_no_process(tmp_path):
    """A shell script runs a python engine that hangs at its first go: each game is a time forfeit, the engine
    is killed and started again for the next; once the match is over no process of it is left (each forfeit
    once left an orphan, the engine, with its parent gone), and a game takes its move time, not the 1 s more
    of waiting for the orphan's end of output."""
    settings = EngineSettings(300, 100, str(tmp_path / "logs"))
    t0 = time.perf_counter()
    r = run_kalah_tournament("random", wrapped(tmp_path), KalahMatch(houses=4, seeds=3, seed=2), 2,
                             out=tmp_path / "games.jsonl", engine_settings=settings)
    seconds = time.perf_counter() - t0
    recs = read_records(tmp_path / "games.jsonl")
    assert len(recs) == 4 and all(x["termination"] == "time forfeit" for x in recs)
    assert r["terminations"] == {"time forfeit": {"a": 0, "b": 4}}
    assert running_pids() == [] and _gone(str(tmp_path)) == []
    assert seconds < 4 * (0.4 + 0.6) + 1.0, seconds  # 0.4 s a move, a start a game, no 1 s join


# -- the start timeout ----------------------------------------------------------------------------

def silent(tmp_path: Path) -> str:
    return f"cmd:{PY} -c 'import time; time.sleep(120)' {shlex.quote(str(tmp_path))}"


def test_start_timeout_defaults_and_checks():
    assert EngineSettings().start_timeout == default_start_timeout() == ee.START_TIMEOUT
    assert EngineSettings(200, 50).start_timeout == ee.START_TIMEOUT
    assert EngineSettings(10_000, 1_000).start_timeout == 110.0  # ten moves of a slow match
    assert EngineSettings(200, 50, start_timeout_s=2.5).start_timeout == 2.5
    for bad in (0, -1, float("nan"), "3"):
        with pytest.raises(ValueError):
            EngineSettings(start_timeout_s=bad).check()


def test_an_engine_that_never_says_hello_is_given_up_after_the_start_timeout(tmp_path, monkeypatch, capsys):
    """Silence at startup ends after the start timeout, with one progress line past PROGRESS_AFTER seconds and
    one error naming what was awaited, not 120 s later; the silent process is ended."""
    monkeypatch.setattr(ee, "PROGRESS_AFTER", 0.3)
    agent = ExternalAgent(silent(tmp_path))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"no answer to hello within 1\.5 s"):
        agent.check_match(3, 2, False, settings=EngineSettings(200, 50, str(tmp_path / "logs"), 1.5))
    assert 1.4 < time.perf_counter() - t0 < 6
    err = capsys.readouterr().err
    assert err.count("waiting for engine") == 1 and "to answer hello (up to 1.5 s" in err
    if Path("/proc").exists():
        assert _gone(str(tmp_path)) == []


def test_an_engine_silent_at_game_is_given_up_too(tmp_path):
    script = tmp_path / "engine.sh"
    script.write_text("read line; echo hello mute; sleep 120\n")
    agent = ExternalAgent(f"cmd:/bin/sh {shlex.quote(str(script))}")
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"no answer to game within 1 s"):
        agent.check_match(3, 2, False, settings=EngineSettings(200, 50, str(tmp_path / "logs"), 1.0))
    assert time.perf_counter() - t0 < 1.9  # killed, not given QUIT_TIMEOUT to answer quit


@pytest.mark.slow
def test_cli_start_timeout(tmp_path):
    """--engine-start-timeout: a silent engine is one error line after that many seconds (exit 2)."""
    argv = [sys.executable, "-m", "jitsearch", "tournament", "--game", "kalah", "--houses", "3", "--seeds", "2",
            "--a", "random", "--b", silent(tmp_path), "--pairs", "1", "--movetime", "200",
            "--engine-start-timeout", "1", "--engine-logs", str(tmp_path / "logs")]
    t0 = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=120, stdin=subprocess.DEVNULL)
    assert time.perf_counter() - t0 < 60
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("compiling (first run only)")]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ") and "no answer to hello within 1 s" in lines[0]
    bad = subprocess.run(argv[:-4] + ["--engine-start-timeout", "0"], capture_output=True, text=True, env=ENV,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --engine-start-timeout") \
        and len(bad.stderr.splitlines()) == 1, bad.stderr
    none = subprocess.run([sys.executable, "-m", "jitsearch", "tournament", "--game", "kalah", "--a", "random",
                           "--b", "random", "--pairs", "1", "--engine-start-timeout", "5"], capture_output=True,
                          text=True, env=ENV, timeout=120, stdin=subprocess.DEVNULL)
    assert none.returncode == 2 and none.stderr == "error: --engine-start-timeout applies to cmd: engines only\n"


# -- the stderr log -------------------------------------------------------------------------------

def test_stderr_log_is_capped(tmp_path, monkeypatch):
    """An engine that writes 1 MB to stderr keeps at most MAX_LOG_BYTES of it, then a line saying so; it is not
    blocked (it answers after writing); a start that finds the log full moves it to .1 first."""
    monkeypatch.setattr(ee, "MAX_LOG_BYTES", 100_000)
    script = tmp_path / "noisy.py"
    script.write_text("import sys\nsys.stderr.write('#' * 1_000_000); sys.stderr.flush()\n"
                      "for line in sys.stdin:\n"
                      "    if line.startswith('quit'):\n"
                      "        break\n"
                      "    print('hello noisy' if line.startswith('hello') else 'ok', flush=True)\n")
    log = tmp_path / "noisy.stderr.log"
    for _ in range(2):
        eng = ee.EngineProcess([sys.executable, str(script)], log)
        eng.start(30)
        assert eng.name == "noisy"
        eng.close()
        lines = log.read_text().splitlines()
        assert lines[0].startswith("# ") and "started by pid" in lines[0]
        assert lines[1] == "#" * (100_000 - len(lines[0]) - 1)  # the cap, less the start line
        assert lines[2].startswith("# stderr truncated here") and len(lines) == 3
    assert (tmp_path / "noisy.stderr.log.1").stat().st_size < 100_000 + 500

"""Limits of the engine side of the protocol (``jitsearch engine``, :mod:`jitsearch.arena.engine_protocol`):
an agent that could never search is refused before serving, an unforeseen failure is one protocol line that
names the request (never a Python message) and leaves the engine serving, and a huge request line costs no
memory.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jitsearch.arena.engine_protocol import MAX_LINE, EngineServer, read_request, serve

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
START = "3,3,3/0/3,3,3/0 p0"


def _engine(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "jitsearch", "engine", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)


# -- agents that could never search ---------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (["--agent", "mcts:iterations=100000000"], "MCTS tree of 600,000,001 nodes"),
    (["--agent", "alphabeta:time=1,tt=65536"], "table of 65,536 MiB"),
    (["--game", "oware", "--agent", "mcts:iterations=10000000"], "on oware houses=6 seeds=4 move_limit=1000 grand_slam_illegal=0, the default board, an MCTS tree of 60,000,007"),
])
def test_cli_refuses_an_agent_that_cannot_search_the_default_board(args, words):
    r = subprocess.run([sys.executable, "-m", "jitsearch", "engine", *args], capture_output=True, text=True,
                       env=ENV, input="hello\n", timeout=120)
    assert r.returncode == 2 and r.stdout == "", r
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("error: cannot serve ") and words in r.stderr
    assert "default board" in r.stderr


def test_game_refuses_a_board_the_agent_cannot_search():
    """Kalah(6,4) fits, Kalah(16,4) does not (Oware: (6,4) and (12,4)): that game is refused, the state is as
    it was."""
    s = EngineServer("mcts:iterations=2000000")
    answer = s.handle("game 16 4 standard")[0][0]
    assert answer.startswith("error an MCTS tree of 32,000,001 nodes needs about")
    assert s.game is None and s.handle(f"position {START}")[0][0].startswith("error no game")
    o = EngineServer("mcts:iterations=4000000", game="oware")
    assert o.handle("game 12 4 standard")[0][0].startswith("error an MCTS tree of 48,000,")
    assert o.game is None


# -- unforeseen failures --------------------------------------------------------------------------

class _Broken:
    """An agent whose search fails as a bug would."""

    last: dict = {}

    def __init__(self, exc):
        self.exc = exc

    def __call__(self, state):
        raise self.exc


@pytest.mark.parametrize("exc, words", [(TypeError("'NoneType' object is not callable"), "internal error (TypeError"),
                                        (MemoryError(), "out of memory"), (KeyError("k"), "internal error (KeyError")])
def test_an_internal_error_is_one_protocol_line_and_the_engine_serves_on(exc, words, capsys):
    s = EngineServer("random")
    assert s.handle("game 3 3 standard") == (["ok"], False)
    assert s.handle(f"position {START}") == (["ok"], False)
    s.agent = _Broken(exc)
    answers, done = s.handle("go 100")
    assert not done and len(answers) == 1
    assert answers[0].startswith("error go failed: ") and words in answers[0] and "send game" in answers[0]
    assert "NoneType" not in answers[0] and "'k'" not in answers[0]
    assert "Traceback" in capsys.readouterr().err  # for the tester's log
    assert s.handle(f"position {START}")[0][0].startswith("error no game")  # the game is dropped
    assert s.handle("game 3 3 standard") == (["ok"], False)  # and the engine serves on
    assert s.handle(f"position {START}") == (["ok"], False)
    assert s.handle("go 100")[0][-1].startswith("move ")


def test_a_game_that_fails_to_start_leaves_no_half_game(monkeypatch):
    """A failure while a game is being set up (here: memory, in the warm-up) leaves no game behind: position
    and go say there is none (the agent was once left unset while position answered ok, and go answered a
    Python message)."""
    s = EngineServer("random")

    def no_memory(*_):
        raise MemoryError

    monkeypatch.setattr(s, "_warm", no_memory)
    answer = s.handle("game 3 3 standard")[0][0]
    assert answer.startswith("error game failed: out of memory")
    assert s.handle(f"position {START}")[0][0].startswith("error no game")
    assert s.handle("go 100")[0][0].startswith("error no position")
    monkeypatch.undo()
    assert s.handle("game 3 3 standard") == (["ok"], False)


# -- long request lines ---------------------------------------------------------------------------

def test_read_request_takes_at_most_the_limit():
    text = "x" * (3 * MAX_LINE + 5) + "\nhello\n" + "y" * MAX_LINE + "\r\n" + "z" * (MAX_LINE + 1) + "\nlast"
    f = io.StringIO(text)
    assert read_request(f) == "x" * (MAX_LINE + 1)  # too long: refused by handle, its rest skipped
    assert read_request(f) == "hello"
    assert read_request(f) == "y" * MAX_LINE  # the longest line taken, with \r\n
    assert read_request(f) == "z" * (MAX_LINE + 1)
    assert read_request(f) == "last" and read_request(f) is None
    out = io.StringIO()
    serve(EngineServer("random"), io.StringIO("x" * (5 * MAX_LINE) + "\nhello\n"), out)
    assert out.getvalue().splitlines() == [f"error a request has at most {MAX_LINE} characters",
                                           "hello jitsearch random"]


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _session(payload: bytes) -> tuple[list[str], int]:
    """A ``jitsearch engine --agent random`` fed ``payload`` then ``hello``: its answers and its peak memory."""
    proc = _engine("--agent", "random")
    writer = threading.Thread(target=lambda: (proc.stdin.write(payload + b"\nhello\n"), proc.stdin.flush()))
    writer.start()
    answers = [proc.stdout.readline().decode() for _ in range(2)]  # (an empty payload: "error empty request")
    writer.join(60)
    peak = _peak_kib(proc.pid)
    proc.stdin.close()
    proc.wait(60)
    proc.stdout.close()
    proc.stderr.close()
    return answers, peak


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc")
def test_a_huge_request_line_costs_no_memory():
    """50 MB without a newline: one error answer, and the engine's peak memory stays that of a session without
    it (the whole line was once read first: 700 MB for a 300 MB line)."""
    t0 = time.perf_counter()
    _, base = _session(b"")
    answers, peak = _session(b"x" * 50_000_000)
    assert answers == [f"error a request has at most {MAX_LINE} characters\n", "hello jitsearch random\n"]
    assert peak - base < 20_000, (base, peak)  # KiB
    assert time.perf_counter() - t0 < 60

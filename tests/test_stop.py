"""Stopping searches: every agent kind of both games ends within about a
second of its stop Event being set (``choose(state, stop)``, the web
server's path) and raises KeyboardInterrupt instead of playing a half
result; a Ctrl-C in ``play`` stops an Oware MCTS search at once. The stop
flag never changes what a search that is not stopped visits.

Each case warms its kernels first (a cold compile cannot be stopped), then
starts a search far too large to finish on a thread and sets the Event
after 0.3 s.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent
from jitsearch.arena.agents import parse_agent
from jitsearch.games.kalah import KalahState
from jitsearch.games.oware import OwareState

#: Seconds a stopped search may take to end (it takes well under one; the rest is a loaded 2-core machine).
STOP_SECONDS = 2.0


def _stops(agent, state, delay: float = 0.3) -> float:
    """Run ``agent.choose(state, stop)`` on a thread, set ``stop`` after ``delay``; the seconds it took to end.
    The search must end with KeyboardInterrupt (never a move)."""
    stop = threading.Event()
    outcome = {}

    def run():
        try:
            outcome["move"] = agent.choose(state, stop)
        except KeyboardInterrupt:
            outcome["stopped"] = True
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    time.sleep(delay)
    assert thread.is_alive(), f"{agent} finished before it was stopped: {outcome}"
    t0 = time.monotonic()
    stop.set()
    thread.join(10)
    took = time.monotonic() - t0
    assert not thread.is_alive(), f"{agent} did not stop"
    assert "error" not in outcome, outcome
    assert outcome == {"stopped": True}, outcome
    return took


def _id(case) -> str:
    return case.values[0] if hasattr(case, "values") else case[0]


#: (spec that cannot finish, warm-up spec with the same kernels, board); the slow-marked ones compile kernels of
#: their own (5-8 s each on a cold cache) for a path another case already stops the same way
KALAH_CASES = [
    ("alphabeta:depth=40", "alphabeta:depth=2", (6, 4)),
    ("alphabeta:time=3600,plain=1", "alphabeta:depth=2", (6, 4)),
    ("alphabeta:time=3600,db=0,book=0", "alphabeta:depth=2,db=0", (6, 4)),  # (the start is in the book)
    ("fsss:depth=40", "fsss:depth=2", (6, 4)),
    # (warmed on Kalah(3,2): the exact solver's kernels)
    pytest.param("mtdf:time=3600", "perfect", (6, 4), marks=pytest.mark.slow),
    ("perfect", "perfect", (4, 6)),
    pytest.param("mcts:time=3600", "mcts:iterations=20", (6, 4), marks=pytest.mark.slow),  # a 35 s compile
    ("mcts:iterations=1000000", "mcts:iterations=20", (6, 4)),
    pytest.param("hmcts:time=3600", "hmcts:iterations=20", (6, 4), marks=pytest.mark.slow),  # mcts's path
    ("mcts:iterations=1000000,workers=2", "mcts:iterations=20,workers=2", (6, 4)),
    pytest.param("mcts:time=3600,backend=cpu", "mcts:iterations=20,backend=cpu", (6, 4), marks=pytest.mark.slow),
    pytest.param("mcts:time=3600,backend=cpu,parallel=tree", "mcts:iterations=20,backend=cpu,parallel=tree", (6, 4),
                 marks=pytest.mark.slow),
    pytest.param("mcts:time=3600,backend=cpu,batch=8", "mcts:iterations=20,backend=cpu,batch=8", (6, 4),
                 marks=pytest.mark.slow),
    ("mc:time=3600", "mc:playouts=60", (6, 4)),
]


@pytest.mark.slow
@pytest.mark.parametrize("spec,warm,board", KALAH_CASES, ids=[_id(c) for c in KALAH_CASES])
def test_every_kalah_agent_kind_stops_within_about_a_second(spec, warm, board):
    state = KalahState.initial(*board)
    parse_agent(warm, seed=1).choose(KalahState.initial(3, 2) if warm == "perfect" else state)
    took = _stops(parse_agent(spec, seed=1), state)
    assert took < STOP_SECONDS, (spec, took)


OWARE_CASES = [
    ("alphabeta:depth=40", "alphabeta:depth=2"),
    ("alphabeta:time=3600", "alphabeta:depth=2"),
    ("fsss:depth=40", "fsss:depth=2"),
    pytest.param("fsss:time=3600", "fsss:depth=2", marks=pytest.mark.slow),  # alphabeta:time's path
    ("mc:playouts=1000000", "mc:playouts=64"),
    pytest.param("mc:playouts=1000000,threads=2", "mc:playouts=64,threads=2", marks=pytest.mark.slow),
    ("mcts:iterations=300000", "mcts:iterations=20"),
    ("mcts:time=3600", "mcts:iterations=20"),
    pytest.param("mcts:time=3600,parallel=tree", "mcts:iterations=20,parallel=tree", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("spec,warm", OWARE_CASES, ids=[_id(c) for c in OWARE_CASES])
def test_every_oware_agent_kind_stops_within_about_a_second(spec, warm):
    state = OwareState.initial()
    parse_agent(warm, game="oware", seed=1).choose(state)
    took = _stops(parse_agent(spec, game="oware", seed=1), state)
    assert took < STOP_SECONDS, (spec, took)


def test_random_agents_take_a_stop_and_move():
    stop = threading.Event()
    assert parse_agent("random", seed=1).choose(KalahState.initial(6, 4), stop) in range(1, 7)
    assert parse_agent("random", game="oware", seed=1).choose(OwareState.initial(), stop) in range(6)


def test_an_oware_mcts_search_that_reports_an_interruption_is_not_played(monkeypatch):
    """The Ctrl-C seen between chunks comes back as ``interrupted``: the agent raises, never plays it."""
    import jitsearch.mcts.game as game_mcts
    import jitsearch.mcts.game_shared as game_shared

    state = OwareState.initial()
    fake = {"move": 0, "value": 0.5, "iterations": 3, "nodes": 4, "interrupted": True, "children": []}
    monkeypatch.setattr(game_mcts, "search_game", lambda *a, **k: dict(fake))
    monkeypatch.setattr(game_shared, "tree_parallel_game",
                        lambda *a, **k: {"positions": [dict(fake)], "iterations": 3, "interrupted": True})
    for spec in ("mcts:iterations=300000", "mcts:iterations=300000,parallel=tree"):
        with pytest.raises(KeyboardInterrupt):
            parse_agent(spec, game="oware", seed=1).choose(state)
        with pytest.raises(KeyboardInterrupt):
            parse_agent(spec, game="oware", seed=1)(state)


def test_a_kalah_mcts_search_that_reports_an_interruption_is_not_played(monkeypatch):
    import jitsearch.mcts.search as search_module

    state = KalahState.initial(6, 4)
    fake = {"move": 1, "children": [], "iterations": 3, "interrupted": True}
    monkeypatch.setattr(search_module, "mcts_search", lambda *a, **k: dict(fake))
    with pytest.raises(KeyboardInterrupt):
        parse_agent("mcts:iterations=100", seed=1).choose(state)


def test_a_stop_set_before_the_search_raises_at_once():
    stop = threading.Event()
    stop.set()
    for agent, state in ((parse_agent("alphabeta:depth=3"), KalahState.initial(6, 4)),
                         (parse_agent("alphabeta:depth=3", game="oware", seed=1), OwareState.initial())):
        with pytest.raises(KeyboardInterrupt):
            agent.choose(state, stop)


def test_a_bad_stop_is_refused_in_one_line():
    with pytest.raises(ValueError, match="threading.Event"):
        parse_agent("alphabeta:depth=2", game="oware", seed=1).choose(OwareState.initial(), "stop")


# -- the flag does not change what a search that is not stopped does ----------------------------------------------

def test_fixed_depth_searches_count_the_same_nodes_with_an_unset_stop():
    from jitsearch.games.kalah.alphabeta import search as kalah_search
    from jitsearch.games.kalah.fsss import fsss_search
    from jitsearch.games.oware.alphabeta import search as oware_search
    from jitsearch.games.oware.fsss import search as oware_fsss

    kalah = KalahState.initial(6, 4).play(3)
    oware = OwareState.initial().play(2)
    for depth in (3, 6):
        idle = threading.Event()
        a, b = kalah_search(kalah, depth), kalah_search(kalah, depth, stop=idle)
        assert (a["nodes"], a["evaluations"], a["value"], a["move"]) == (
            b["nodes"], b["evaluations"], b["value"], b["move"])
        a, b = fsss_search(kalah, depth), fsss_search(kalah, depth, stop=idle)
        assert (a["nodes"], a["evaluations"], a["value"], a["move"]) == (
            b["nodes"], b["evaluations"], b["value"], b["move"])
        for fn in (oware_search, oware_fsss):
            a, b = fn(oware, depth), fn(oware, depth, stop=idle)
            assert (a.nodes, a.evaluations, a.value, a.move) == (b.nodes, b.evaluations, b.value, b.move)


@pytest.mark.parametrize("options", [{}, pytest.param({"solver": True}, marks=pytest.mark.slow),
                                     pytest.param({"eval": "store", "imm": 0.3}, marks=pytest.mark.slow)],
                         ids=["plain", "solver", "eval"])  # (the slow two compile kernels of their own)
def test_kalah_mcts_grown_in_chunks_for_a_stop_is_the_tree_grown_in_one_call(options):
    from jitsearch.mcts.search import mcts_search

    state = KalahState.initial(6, 4)
    a = mcts_search(state, iterations=3000, seed=5, **options)
    b = mcts_search(state, iterations=3000, seed=5, stop=threading.Event(), **options)
    assert a["children"] == b["children"] and a["iterations"] == b["iterations"] and a["nodes"] == b["nodes"]
    assert b["interrupted"] is False


def test_oware_playouts_with_an_unset_stop_give_the_same_counts():
    from oware_calls import evaluate_states

    states = [OwareState.initial().play(h) for h in range(6)]
    a = evaluate_states(states, 50, seed=3)
    b = evaluate_states(states, 50, seed=3, stop=threading.Event(), threads=2)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_one_watcher_sets_the_flags_and_ends_after_the_searches():
    from jitsearch.stop import IDLE_SECONDS, STOP_SLOT, watch

    def watchers():
        return [t for t in threading.enumerate() if t.name == "jitsearch-stop-watch"]

    flag = np.zeros(STOP_SLOT + 1, np.int64)
    stop = threading.Event()
    with watch(stop, flag):
        stop.set()
        deadline = time.monotonic() + 5
        while not flag[STOP_SLOT] and time.monotonic() < deadline:
            time.sleep(0.005)
    assert flag[STOP_SLOT] == 1
    flag[:] = 0
    flags = [np.zeros(STOP_SLOT + 1, np.int64) for _ in range(50)]
    for f in flags:  # many short searches: one watcher
        with watch(threading.Event(), f):
            pass
    assert len(watchers()) <= 1
    deadline = time.monotonic() + IDLE_SECONDS + 5
    while watchers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not watchers()
    assert not any(f[STOP_SLOT] for f in flags)


def test_the_watcher_sets_a_flag_at_its_deadline_and_follows_a_moving_one():
    from jitsearch.stop import STOP_SLOT, watch

    flag = np.zeros(STOP_SLOT + 1, np.int64)
    with watch(None, flag, deadline=time.perf_counter() - 1):  # already past: at once
        assert flag[STOP_SLOT] == 1
    flag[:] = 0
    end = [time.perf_counter() + 0.05]
    with watch(None, flag, deadline=lambda: end[0]):
        time.sleep(0.01)
        end[0] += 60  # moved back before it came (as the solver's deadline moves back by compile time)
        time.sleep(0.2)
        assert flag[STOP_SLOT] == 0
        end[0] = time.perf_counter() + 0.02
        limit = time.monotonic() + 5
        while not flag[STOP_SLOT] and time.monotonic() < limit:
            time.sleep(0.002)
        assert flag[STOP_SLOT] == 1
    flag[:] = 0
    with watch(None, flag, deadline=time.perf_counter() + 60):
        pass
    assert flag[STOP_SLOT] == 0


# -- Ctrl-C in the CLI ------------------------------------------------------------------------------------------

def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


CTRL_C_COMMANDS = [
    ("play", "--game", "oware", "--p0", "mcts:iterations=300000", "--p1", "random", "--seed", "1", "--json"),
    pytest.param(("tournament", "--game", "oware", "--a", "alphabeta:depth=7", "--b", "mcts:iterations=3000",
                  "--pairs", "50", "--json"), marks=pytest.mark.slow),  # the same agent, moves in the main thread
]


@pytest.mark.slow
@pytest.mark.parametrize("command", CTRL_C_COMMANDS, ids=["play", "tournament"])
def test_ctrl_c_stops_oware_mcts_agents_in_the_cli(command):
    """Before, the Oware agent played the tree a Ctrl-C left as a move and the games went on (play: 39 s
    more, tournament: 165 s more, both exit 0)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "jitsearch", *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120  # imports, compiles (or cache loads), then the search: CPU time
        while time.monotonic() < deadline and proc.poll() is None and _cpu_seconds(proc.pid) < 4.0:
            time.sleep(0.2)
        time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()  # never leave a search running after a failed test
            proc.communicate()
    assert proc.returncode == 130, (proc.returncode, err)
    assert took < 5.0, took
    assert "Traceback" not in err
    if command[0] == "play":
        obj = json.loads(out)
        assert obj["interrupted"] is True and obj["plies"] == len(obj["moves"])


def test_an_exact_solve_with_its_stop_set_ends_interrupted():
    """``solve_exact(stop=)`` looks at the Event before every kernel call: set, it returns at once, interrupted,
    without a value."""
    from jitsearch.games.kalah import solve_exact

    stop = threading.Event()
    stop.set()
    solve_exact(KalahState.initial(3, 2), stop=stop)  # the imports and first calls, outside the clock
    t0 = time.monotonic()
    r = solve_exact(KalahState.initial(4, 6), stop=stop)
    assert r["interrupted"] and not r["complete"] and time.monotonic() - t0 < STOP_SECONDS
    with pytest.raises(ValueError, match="stop must be a threading.Event"):
        solve_exact(KalahState.initial(3, 2), stop="soon")

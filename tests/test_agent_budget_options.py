"""Budget options that combine in an agent spec, the same way in Kalah (:func:`parse_agent`) and Oware
(:func:`parse_agent` with ``game="oware"``): ``iterations=`` with ``time=`` is refused in one line, ``depth=`` with ``time=`` is
a depth cap on a timed search, ``mc:playouts=N,time=T`` rounds of N playouts for T seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jitsearch.arena.agents import parse_agent
from jitsearch.arena.agents import parse_agent
from jitsearch.games.kalah import KalahState
from jitsearch.games.oware import OwareState

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.mark.parametrize("spec", ["mcts:iterations=100,time=0.1", "hmcts:time=0.1,iterations=100",
                                  "mcts:iterations=100,time=0.1,backend=cpu"])
def test_iterations_and_time_are_refused_in_both_games(spec):
    with pytest.raises(ValueError, match="give iterations= or time=, not both") as kalah:
        parse_agent(spec)
    assert "\n" not in str(kalah.value) and spec in str(kalah.value)
    if not spec.startswith("hmcts"):
        with pytest.raises(ValueError, match="give iterations= or time=, not both"):
            parse_agent(spec, game="oware", seed=0)


def test_cli_engine_refuses_iterations_and_time():
    r = subprocess.run([sys.executable, "-m", "jitsearch", "engine", "--agent", "mcts:iterations=100,time=0.1"],
                       capture_output=True, text=True, env=ENV, input="", timeout=120)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "not both" in r.stderr, r.stderr


@pytest.mark.parametrize("spec", [pytest.param("alphabeta:depth=2,time=30", marks=pytest.mark.slow),  # the engine
                                  "alphabeta:depth=2,time=30,plain=1"])
def test_depth_caps_a_timed_kalah_search(spec):
    agent = parse_agent(spec, seed=1)
    agent(KalahState.initial(4, 3))  # (30 s would go far deeper: the first call may compile for longer)
    assert 1 <= agent.last["depth"] <= 2


@pytest.mark.parametrize("spec", ["alphabeta:depth=2,time=30", pytest.param("fsss:depth=2,time=30",
                                                                             marks=pytest.mark.slow)])
def test_depth_caps_a_timed_oware_search(spec):
    agent = parse_agent(spec, game="oware", seed=1)
    agent(OwareState.initial(4, 3))
    assert 1 <= agent.last["depth"] <= 2


def test_kalah_mc_playouts_with_time_plays_rounds_until_the_time():
    # Kalah(6,4): the SIMD playout kernel other default tests compile too (Kalah(4,3)'s: for this test only)
    parse_agent("mc:playouts=40", seed=1)(KalahState.initial(6, 4))  # compiled here, not in the timed search
    agent = parse_agent("mc:playouts=40,time=0.3", seed=1)
    agent(KalahState.initial(6, 4))
    assert agent.last["simulations"] > 40 and agent.last["seconds"] >= 0.3

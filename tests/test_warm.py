"""A first run compiles its agents' kernels side by side (jitsearch.arena.warm)."""

import json
import os
import subprocess
import sys

import pytest

from jitsearch.arena.agents import parse_agent
from jitsearch.arena.warm import warm_agents
from jitsearch.games.kalah import KalahState

_CODE = ("import json; from jitsearch.arena.warm import warm_agents; from jitsearch.games.kalah import KalahState; "
         "print(json.dumps(warm_agents(['mcts:iterations=10', 'mcts:iterations=10,backend=cpu', 'random', "
         "'mcts:iterations=10'], KalahState.initial(3, 2))))")


@pytest.mark.slow
def test_a_cold_cache_starts_one_helper_per_other_agent_and_a_warm_one_none(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", _CODE], env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    cold, warm = (json.loads(r.stdout) for r in runs)
    # two distinct MCTS specs: one warmed here, one in a helper (the duplicate once, random not at all)
    assert cold == {"helpers": 1, "compiled": True}, cold
    assert warm == {"helpers": 0, "compiled": False}, warm


def test_warming_leaves_the_games_alone():
    """An agent warmed before its games plays the same moves as one that was not (Kalah(6,4): the kernel
    the other default tests compile)."""
    s = KalahState.initial(6, 4)
    warm_agents(["mcts:iterations=60"], s)
    a, b = parse_agent("mcts:iterations=60", seed=5), parse_agent("mcts:iterations=60", seed=5)
    a.warm(s)
    moves_a, moves_b, x, y = [], [], s, s
    for _ in range(4):
        if x.is_over:
            break
        ma, mb = a(x), b(y)
        moves_a.append(ma)
        moves_b.append(mb)
        x, y = x.play(ma), y.play(mb)
    assert moves_a == moves_b


def test_cmd_and_openspiel_specs_are_skipped():
    assert warm_agents(["cmd:false", "openspiel:mcts"], KalahState.initial(3, 2)) == {"helpers": 0,
                                                                                        "compiled": False}


_RULES_CODE = """
import json
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        compiled.append(getattr(d, "py_func", d).__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
from jitsearch.games.kalah import KalahState
from jitsearch.games.oware import OwareState
k = KalahState.initial(4, 3).play(1)
o = OwareState.initial(6, 4).play(5)
print(json.dumps({"compiled": compiled, "legal": [k.legal_moves(), o.legal_moves()]}))
"""


@pytest.mark.slow
def test_the_rules_called_from_python_load_from_the_cache_in_a_new_process(tmp_path):
    """The rules' closures (Oware's build factory, Kalah's int64 shims) close
    over other compiled functions; with random dispatcher ids Numba's cache
    key changed in every process and they compiled on every run
    (jitsearch._jit.stable_ids). The second process must compile nothing."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", _RULES_CODE], env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    first, second = (json.loads(r.stdout) for r in runs)
    assert first["compiled"], "the first process should have compiled the rules"
    assert second["compiled"] == [], second["compiled"]
    assert first["legal"] == second["legal"]

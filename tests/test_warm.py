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


_IDS_CODE = ("import json; from jitsearch.games.kalah import fast; from jitsearch.games.kalah.playouts import INLINE_RNG; "
             "print(json.dumps([fast.cpu_range(m, 'simd', INLINE_RNG).py_func.__qualname__ for m in (3, 1)]))")


def test_a_factorys_closures_are_named_by_their_content_the_same_in_every_process():
    """Numba names a compiled function's symbol by its qualified name, argument types and a
    per-process counter: closures of one source over different values must differ in name
    (else a caller can link to the wrong one once both load from the disk cache), and the
    names must be the same in every process and every order (else the cache never hits)."""
    from numba import njit

    from jitsearch._jit import stable_ids

    def make(k):
        def add_k(x):
            return x + k
        return stable_ids(njit)(add_k)

    a, b, a2 = make(1), make(2), make(1)
    assert a.py_func.__qualname__ != b.py_func.__qualname__
    assert a.py_func.__qualname__ == a2.py_func.__qualname__
    assert (a(1), b(1)) == (2, 3)
    runs = [subprocess.run([sys.executable, "-c", _IDS_CODE.replace("(3, 1)", order)], capture_output=True,
                           text=True, timeout=300) for order in ("(3, 1)", "(1, 3)")]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    three_one, one_three = (json.loads(r.stdout) for r in runs)
    assert three_one == one_three[::-1] and three_one[0] != three_one[1]


_LINK_CODE = ("import sys, json, numpy as np; from jitsearch.games.kalah import KalahState; "
              "from jitsearch.games.kalah.playouts import evaluate_cpu; "
              "from jitsearch.kernels.game_playouts import evaluate_states; out = []\n"
              "for tag in sys.argv[1:]:\n"
              "    s = KalahState.initial(int(tag.strip('S')), 2)\n"
              "    r = (evaluate_states('kalah', [s], 30, 1) if tag.endswith('S') else "
              "evaluate_cpu(np.stack([s.board]), np.array([s.player]), 30, 1))\n"
              "    out.append([int(r['margin_sum'][0]), int(r['plies'][0])])\n"
              "print(json.dumps(out))")


@pytest.mark.slow
def test_kernels_compiled_in_different_processes_load_side_by_side(tmp_path):
    """Kalah's playout batches for 1 and for 3 houses compiled in two processes, both loaded
    from the disk cache into a third that then compiles the protocol's wrapper around the
    3-house one: the wrapper must run the 3-house batch (with names that differed only by
    Numba's per-process counter it ran the 1-house one: 30 one-ply playouts)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(*tags):
        r = subprocess.run([sys.executable, "-c", _LINK_CODE, *tags], env=env, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        return json.loads(r.stdout)

    three, = run("3")  # each batch compiled in a process of its own
    one, = run("1")
    assert run("3", "1", "3S") == [three, one, three]  # the wrapper compiled here, after both loaded
    assert three[1] > 30


@pytest.mark.slow
@pytest.mark.parametrize("name", ["oware", "connect4"])
def test_helpers_warm_agents_of_every_game(name):
    """A helper process warms an agent on another game's position (its game, text and variant on the
    command line; it took every position for Kalah's and failed on the others' missing fields)."""
    from jitsearch.arena.warm import _helper_argv
    from jitsearch.games import get

    state = get(name).initial()
    r = subprocess.run(_helper_argv("mc:playouts=5", state), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    # (a helper starts only while this process compiles: none once the cache is warm)
    assert warm_agents(["mcts:iterations=10", "mc:playouts=5"], state)["helpers"] in (0, 1)

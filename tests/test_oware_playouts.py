"""Oware playouts: equal to the same random game replayed move by move on
OwareState with the plain-Python twin of the RNG; threads do not change
results; validation."""

from __future__ import annotations

import random

import numpy as np
import pytest

from jitsearch.games.oware import OwareState
from oware_calls import evaluate_states
from jitsearch.rng import below_py, draw_py, stream_key_py


def replay(state, seed, index, playout):
    key = stream_key_py(seed, index, playout)
    plies = 0
    while not state.is_over:
        legal = state.legal_moves()
        state = state.play(legal[below_py(draw_py(key, plies), len(legal))])
        plies += 1
    return state, plies


def _states(seed, count, **kw):
    rnd = random.Random(seed)
    out = []
    s = OwareState.initial(**kw)
    while len(out) < count:
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            s = OwareState.initial(**kw)
        else:
            out.append(s)  # states with their real records (repetitions can end the playouts)
    return out


@pytest.mark.parametrize("kw", [{}, {"houses": 2, "seeds": 2}, {"houses": 3, "seeds": 1, "move_limit": 40},
                                {"houses": 4, "seeds": 3, "grand_slam_illegal": True}])
def test_playouts_equal_replays_on_the_state(kw):
    states = _states(7, 12, **kw)
    out = evaluate_states(states, 5, seed=11)
    for i, s in enumerate(states):
        wins = draws = losses = margin = plies = 0
        for p in range(5):
            end, k = replay(s, 11, i, p)
            plies += k
            margin += end.margin
            mine = end.margin if s.player == 0 else -end.margin
            wins += mine > 0
            draws += mine == 0
            losses += mine < 0
        assert (out["wins"][i], out["draws"][i], out["losses"][i], out["margin_sum"][i], out["plies"][i]) == \
            (wins, draws, losses, margin, plies), s.to_text()


@pytest.mark.slow
def test_threads_do_not_change_results():
    states = _states(3, 40)
    one = evaluate_states(states, 20, seed=5)
    many = evaluate_states(states, 20, seed=5, threads=2)
    for key in one:
        assert np.array_equal(one[key], many[key])
    assert (one["wins"] + one["draws"] + one["losses"] == 20).all()


def test_bad_batches():
    s = OwareState.initial()
    with pytest.raises(ValueError, match="non-empty list"):
        evaluate_states([], 1, 0)
    with pytest.raises(ValueError, match="OwareState"):
        evaluate_states(["x"], 1, 0)
    with pytest.raises(ValueError, match="same houses"):
        evaluate_states([s, OwareState.initial(4, 4)], 1, 0)
    with pytest.raises(ValueError, match="game is over"):
        evaluate_states([OwareState.from_text("0,0,0,0,0,0/0,0,0,0,0,0/30,18 end")], 1, 0)
    with pytest.raises(ValueError, match="playouts_per_state"):
        evaluate_states([s], 0, 0)


_SIM_SCRIPT = r"""
import random, warnings
import numpy as np
warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)
from jitsearch.games.oware import OwareState
from jitsearch.kernels.cuda_game_playouts import evaluate_states_cuda
from jitsearch.kernels.game_playouts import evaluate_states

for kw, count in (({}, 6), ({"houses": 3, "seeds": 2, "move_limit": 60}, 8)):
    rnd = random.Random(2)
    states = []
    s = OwareState.initial(**kw)
    while len(states) < count:
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            s = OwareState.initial(**kw)
        else:
            states.append(s)
    cpu = evaluate_states("oware", states, 3, seed=77)
    gpu = evaluate_states_cuda("oware", states, 3, seed=77, threads_per_block=4, blocks=2)
    for key in cpu:
        assert np.array_equal(cpu[key], gpu[key]), (key, cpu[key], gpu[key])
print("twins agree")
"""


def test_cuda_playouts_equal_the_cpu_twin_under_the_simulator():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(root))
    proc = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree" in proc.stdout

"""Oware MCTS leaf evaluations (``eval=capture``: k random plies, then the
alpha-beta's evaluation squashed into (0, 1)) and implicit minimax backups
(``imm=``): the evaluation against a plain-Python reference, eval_plies=0
scoring every leaf by its static evaluation, an uncapped eval equal to the
random playouts, the implicit minimax values against a minimax recomputed
over the stored trees, determinism, the options' errors, and the CUDA kernel
against its CPU twin under the simulator."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent
from jitsearch.games.oware import OwareState
from jitsearch.kernels.tree_step import REWARD_UNITS
from jitsearch.games import get as get_game
from jitsearch.kernels.game_mcts import cpu_step
from jitsearch.kernels.sentinels import TERMINAL, UNEVALUATED
from oware_calls import analyse_oware, search_oware, tree_parallel_oware

from test_oware_mcts import _states

ROOT = Path(__file__).resolve().parents[1]




def static_units(board, m, over, side_weight=0.25):
    """Player 0's reward units of a position, written out again from the
    docs: a finished game's outcome, else 0.5 + d / (2 (|d| + s)) with d the
    captured difference + side_weight x seeds-on-side difference and s =
    max(1, seeds / 8)."""
    b = [int(x) for x in board]
    cap = b[2 * m] - b[2 * m + 1]
    if over:
        return REWARD_UNITS if cap > 0 else 0 if cap < 0 else REWARD_UNITS // 2
    d = cap + side_weight * (sum(b[:m]) - sum(b[m:2 * m]))
    s = max(1.0, sum(b) / 8.0)
    return math.floor((0.5 + d / (2.0 * (abs(d) + s))) * REWARD_UNITS + 0.5)


def _for_mover(units0, mover):
    return units0 if mover == 0 else REWARD_UNITS - units0


@pytest.mark.slow
def test_the_evaluation_equals_the_reference_on_random_boards():
    eval_units = cpu_step(get_game("oware")).eval_units
    rnd = random.Random(3)
    for _ in range(300):
        m = rnd.choice([2, 3, 6])
        board = np.array([rnd.randrange(0, 9) for _ in range(2 * m)] + [rnd.randrange(0, 30), rnd.randrange(0, 30)],
                         np.int32)
        w = rnd.choice([0.0, 0.25, 0.5, 1.25, -0.5])
        assert eval_units(board, (m, False, 200), w) == static_units(board, m, False, w)
    assert eval_units(np.array([4] * 12 + [0, 0], np.int32), (6, False, 200), 0.25) == REWARD_UNITS // 2


@pytest.mark.parametrize("kw", [{"houses": 3, "seeds": 2, "move_limit": 40}, {"houses": 6, "seeds": 4}])
def test_eval_plies_0_scores_every_leaf_by_its_static_evaluation(kw):
    """Every visited node without children was a leaf of all its visits (an
    expansion evaluates the first child): its value is its static evaluation
    (for its mover) times its visits and the playouts."""
    states = _states(2, 2, **kw)
    r, trees = analyse_oware(states, iterations=300, playouts=3, seed=4, backend="cpu", eval="capture",
                             eval_plies=0, return_trees=True)
    m = states[0].houses
    checked = terminal = 0
    for t in range(len(states)):
        for x in range(1, int(trees.size[t])):
            n = int(trees.visits[t, x])
            if n == 0 or trees.first_child[t, x] >= 0:
                continue
            over = trees.to_move[t, x] == TERMINAL
            want = _for_mover(static_units(trees.boards[t, x], m, over), int(trees.mover_in[t, x]))
            assert trees.value[t, x] == 3 * n * want, (t, x)
            checked += 1
            terminal += bool(over)
    assert checked > 150
    if kw["houses"] == 3:
        assert terminal > 0


def test_an_uncapped_eval_grows_the_same_trees_as_random_playouts():
    """eval_plies above any game's length: every playout ends the game, so
    the scores (and the draws of the stream) are the random playouts'."""
    states = _states(5, 3, houses=3, seeds=2, move_limit=60)
    plain, tp = analyse_oware(states, iterations=200, playouts=2, leaves=2, seed=1, backend="cpu", return_trees=True)
    ev, te = analyse_oware(states, iterations=200, playouts=2, leaves=2, seed=1, backend="cpu", eval="capture",
                           eval_plies=1000, return_trees=True)
    for name in tp.FIELDS:
        assert np.array_equal(getattr(tp, name), getattr(te, name)), name
    short = analyse_oware(states, iterations=200, playouts=2, leaves=2, seed=1, backend="cpu", eval="capture",
                          eval_plies=2)
    assert short["positions"] != plain["positions"]


def minimax(children, evaluate, flip, node):
    """Minimax over the visited children, bottom up (Oware alternates: the
    best child for the player to move, flipped for the node's mover); a node
    without visited children is its own static evaluation."""
    out = {}

    def walk(x):
        kids = children(x)
        out[x] = flip(max(walk(c) for c in kids)) if kids else evaluate(x)
        return out[x]

    walk(node)
    return out


@pytest.mark.parametrize("kw, plies", [({"houses": 3, "seeds": 2, "move_limit": 40}, 2),
                                       ({"houses": 6, "seeds": 4}, 4)])
def test_imm_is_the_minimax_of_the_stored_evaluations(kw, plies):
    """Three leaves per step (virtual visits in between), two positions."""
    states = _states(7, 2, **kw)
    r, b = analyse_oware(states, iterations=240, playouts=2, leaves=3, seed=3, backend="cpu", eval="capture",
                         eval_plies=plies, imm=0.4, return_trees=True)
    m = states[0].houses
    for t in range(len(states)):
        def children(x):
            f = b.first_child[t, x]
            return [c for c in range(f, f + b.num_children[t, x]) if b.visits[t, c] > 0] if f >= 0 else []

        def evaluate(x):
            return _for_mover(static_units(b.boards[t, x], m, b.to_move[t, x] == TERMINAL), int(b.mover_in[t, x]))

        ref = minimax(children, evaluate, lambda v: REWARD_UNITS - v, 0)
        live = [x for x in range(b.size[t]) if b.visits[t, x] > 0]
        assert sorted(ref) == live and b.visits[t, 0] == 240
        assert all(b.imm[t, x] == ref[x] for x in live)
        assert all(b.imm[t, x] == UNEVALUATED for x in range(b.size[t]) if b.visits[t, x] == 0)


@pytest.mark.slow
def test_shared_tree_imm_is_the_minimax_of_the_stored_evaluations():
    """The shared tree stores no boards: the reference replays the moves
    (with the games' records: OwareState.play)."""
    states = _states(11, 2, houses=3, seeds=2, move_limit=40)
    r, tr = tree_parallel_oware(states, iterations=250, playouts=2, seed=5, backend="cpu", eval="capture",
                                eval_plies=2, imm=0.4, return_trees=True)
    for g in range(len(states)):
        base = g * tr.capacity
        pos = {0: states[g]}
        mover = {0: 1 - states[g].player}

        def children(x):
            f = tr.first_child[base + x]
            kids = [c for c in range(f, f + tr.num_children[base + x]) if tr.visits[base + c] > 0] if f >= 0 else []
            for c in kids:
                pos[c] = pos[x].play(int(tr.move[base + c]))
                mover[c] = pos[x].player
            return kids

        def evaluate(x):
            return _for_mover(static_units(pos[x].board, 3, pos[x].is_over), mover[x])

        ref = minimax(children, evaluate, lambda v: REWARD_UNITS - v, 0)
        assert len(ref) > 150 and all(tr.imm[base + x] == v for x, v in ref.items())
        assert any(pos[x].is_over for x in ref)


@pytest.mark.slow
def test_shared_tree_uncapped_eval_equals_random_playouts():
    states = _states(5, 2, houses=3, seeds=2, move_limit=60)
    _, tp = tree_parallel_oware(states, iterations=150, playouts=2, seed=1, backend="cpu", return_trees=True)
    _, te = tree_parallel_oware(states, iterations=150, playouts=2, seed=1, backend="cpu", eval="capture",
                                eval_plies=1000, return_trees=True)
    for name in tp.FIELDS:
        assert np.array_equal(getattr(tp, name), getattr(te, name)), name
    agent = parse_agent("mcts:iterations=100,parallel=tree,eval=capture,imm=0.3", game="oware", seed=2)
    assert agent(OwareState.initial()) in range(6)


def test_eval_and_imm_are_deterministic_and_the_agent_takes_them():
    s = _states(9, 1)[0]
    kw = dict(iterations=400, seed=8, backend="cpu", eval="capture", eval_plies=3, imm=0.3)
    a, b = search_oware(s, **kw), search_oware(s, **kw)
    assert a["children"] == b["children"] and a["move"] == b["move"]
    assert search_oware(s, **{**kw, "imm": 0.0})["children"] != a["children"]
    agent = parse_agent("mcts:iterations=200,eval=capture,eval_plies=2,imm=0.5,backend=cpu", game="oware", seed=1)
    assert agent(OwareState.initial()) in range(6)


@pytest.mark.parametrize("kw, words", [
    ({"imm": 0.3}, "imm= .*eval=capture"),
    ({"eval_plies": 3}, "eval_plies"),
    ({"eval": "store"}, "eval"),
    ({"eval": "capture", "side_weight": 0.1}, "multiple of 1/256"),
    ({"eval": "capture", "imm": 1.5}, "imm"),
    ({"eval": "capture", "eval_plies": -1}, "eval_plies"),
])
def test_bad_eval_options(kw, words):
    with pytest.raises(ValueError, match=words):
        analyse_oware([OwareState.initial()], iterations=10, backend="cpu", **kw)


@pytest.mark.parametrize("spec", ["mcts:imm=0.3", "mcts:eval_plies=2", "mcts:eval=store",
                                  "mcts:eval=capture,imm=2", "mcts:eval=capture,eval_plies=x"])
def test_bad_eval_agent_specs(spec):
    with pytest.raises(ValueError):
        parse_agent(spec, game="oware", seed=0)


_SIM_SCRIPT = r"""
import random, warnings
import numpy as np
warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)
from jitsearch.games.oware import OwareState
from jitsearch.kernels import cuda_game_mcts as cuda_oware_mcts, cuda_game_shared_tree
from oware_calls import analyse_oware, tree_parallel_oware
from jitsearch.mcts.multi import tree_keys_for

cuda_oware_mcts.threads_for = lambda jobs, trees, per_thread: 3  # few threads a block: the simulator is slow
cuda_game_shared_tree.threads_for = lambda playouts, blocks, per_thread: 3
rnd = random.Random(6)
states = [OwareState.initial(3, 2, move_limit=30)]
s = states[0]
while len(states) < 3:
    s = s.play(rnd.choice(s.legal_moves()))
    if s.is_over:
        s = OwareState.initial(3, 2, move_limit=30)
    elif len(s.history) > 2:
        states.append(s)
keys = tree_keys_for(7, len(states))
for kw in ({"iterations": 12, "playouts": 2, "leaves": 2, "eval": "capture", "eval_plies": 2, "imm": 0.4},
           {"iterations": 8, "playouts": 1, "leaves": 3, "eval": "capture", "eval_plies": 0, "imm": 1.0,
            "side_weight": 0.5},
           {"iterations": 6, "playouts": 2, "leaves": 1, "eval": "capture", "capacity": 8, "imm": 0.25},
           {"iterations": 14, "playouts": 3, "leaves": 1, "eval": "capture", "eval_plies": 3, "imm": 0.5}):
    cpu, tc = analyse_oware(states, tree_keys=keys, backend="cpu", return_trees=True, **kw)
    gpu, tg = analyse_oware(states, tree_keys=keys, backend="cuda", return_trees=True, **kw)
    assert gpu["backend"] == "cuda"
    assert (tc.imm >= 0).any()
    for name in tc.FIELDS:
        assert np.array_equal(getattr(tc, name), getattr(tg, name)), name
    assert cpu["positions"] == gpu["positions"]
    if "leaves" in kw and kw["leaves"] == 1:
        kw.pop("leaves")
        cpu, tc = tree_parallel_oware(states, tree_keys=keys, backend="cpu", return_trees=True, **kw)
        gpu, tg = tree_parallel_oware(states, tree_keys=keys, backend="cuda", blocks=1, return_trees=True, **kw)
        assert (tc.imm >= 0).any()
        for name in tc.FIELDS:
            assert np.array_equal(getattr(tc, name), getattr(tg, name)), ("shared", name)
        assert cpu["positions"] == gpu["positions"]
print("twins agree")
"""


@pytest.mark.slow
def test_cuda_kernels_with_eval_and_imm_equal_the_cpu_twins_under_the_simulator():
    """The multi-tree kernel, and the shared-tree kernel with one block a tree."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    proc = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree" in proc.stdout

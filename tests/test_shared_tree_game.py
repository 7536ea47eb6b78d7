"""The shared-tree (tree-parallel) MCTS written once over the game protocol
(kernels.game_shared_tree, kernels.cuda_game_shared_tree): Oware's tree_parallel_oware returns what
the former Oware-only kernels returned (values recorded from kernels/oware_shared_tree.py at commit
a31c395 of main, before it was deleted: root visits, moves and a digest of every tree array); Connect
Four's shared tree (mcts.game_shared.tree_parallel_game) finds a unique winning move for either player,
and its CUDA kernel equals the CPU twin under the simulator; Kalah's shared-tree search returns what
kernels/shared_tree.py returned at commit d598424 (root visits, moves, a digest of the results)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from jitsearch.games import get
from jitsearch.games.kalah import KalahState
from jitsearch.mcts.game_shared import tree_parallel_game

from jitsearch.mcts.multi import tree_keys_for
from oware_calls import tree_parallel_oware
from jitsearch.mcts.shared import search_many_shared

from test_game_mcts import UNIQUE_WINS, _digest, _oware_states

ROOT = Path(__file__).resolve().parents[1]

#: (states: seed, houses, seeds, move limit, count), options, then the old kernels' root visits, moves, digest.
OWARE_SHARED_GOLDEN = [
    ((1, 6, 4, 200, 3), dict(iterations=300, playouts=2),
     [[54, 44, 46, 40, 62, 54], [66, 44, 43, 47, 56, 44], [59, 51, 40, 49, 51, 50]], [4, 6, 0],
     '4ab388ac4b6f1c3d6168c8c369daef2bd83f41d0b773d90ae66367d28d01c7fb'),
    ((2, 3, 2, 30, 4), dict(iterations=200, playouts=1, capacity=40),
     [[10, 34, 156], [49, 97, 54], [131, 69], [49, 95, 56]], [2, 4, 1, 4],
     'ed7c9dd0afec1b22d91d9f4dc7efde666f4b836291424f860c937f3665bd43ee'),
    ((3, 6, 4, 200, 2), dict(iterations=200, playouts=3, eval='capture', eval_plies=3, imm=0.4),
     [[35, 37, 33, 34, 32, 29], [38, 39, 33, 32, 29, 29]], [1, 7],
     'cdd37a52dccf55c4eb2692015ab17e9c70b8f4e1d539cc21f6bc9c47172952b0'),
    ((5, 4, 3, 40, 3), dict(iterations=150, playouts=2, formula='sqrtlog', eval='capture', eval_plies=5, side_weight=0.5, imm=0.3),
     [[41, 37, 36, 36], [52, 35, 33, 30], [63, 46, 41]], [0, 4, 0],
     '1957287853b199056ed1aef7554d5c3d684352e2e8b3274a89fcab06ab39243e'),
    ((6, 2, 2, 12, 3), dict(iterations=120, playouts=2, capacity=25),
     [[102, 18], [120], [120]], [0, 1, 1],
     '60aee2670d93ce8cf35fe8571fccc3434a81a59d25766c2772352356172fe829'),
]


@pytest.mark.slow  # compiles kernels of its own (8-16 s on a cold cache)
@pytest.mark.parametrize("case", range(len(OWARE_SHARED_GOLDEN)))
def test_oware_shared_tree_equals_the_former_kernel(case):
    spec, kw, visits, moves, digest = OWARE_SHARED_GOLDEN[case]
    states = _oware_states(*spec)
    r, trees = tree_parallel_oware(states, tree_keys=tree_keys_for(7, len(states)), backend="cpu",
                                   return_trees=True, threads=1, **kw)
    assert [[c["visits"] for c in p["children"]] for p in r["positions"]] == visits
    assert [p["move"] for p in r["positions"]] == moves
    assert _digest(trees) == digest


@pytest.mark.parametrize("text, player, win", UNIQUE_WINS)
def test_connect_four_shared_tree_finds_the_unique_winning_move(text, player, win):
    state = get("connect4").from_text(text)
    assert state.player == player
    r = tree_parallel_game("connect4", [state], iterations=3000, playouts=2, seed=3, backend="cpu")
    pos = r["positions"][0]
    assert pos["move"] == win, pos["children"]
    assert max(pos["children"], key=lambda ch: ch["visits"])["value"] > 0.9
    assert sum(ch["visits"] for ch in pos["children"]) == r["iterations"] == 3000


_C4_SIM_SCRIPT = r"""
import numpy as np
from jitsearch.games import get
from jitsearch.games.kalah import KalahState
from jitsearch.kernels import cuda_game_shared_tree
from jitsearch.mcts.game_shared import tree_parallel_game
from jitsearch.mcts.multi import tree_keys_for

cuda_game_shared_tree.threads_for = lambda playouts, blocks, per_thread: 2  # few threads: the simulator is slow
game = get("connect4")
states = [game.from_text(t, width=5, height=4) for t in ("", "3", "1122", "2211")]
keys = tree_keys_for(9, len(states))
for kw in ({"iterations": 10, "playouts": 2}, {"iterations": 8, "playouts": 1, "capacity": 9}):
    cpu, tc = tree_parallel_game(game, states, tree_keys=keys, backend="cpu", return_trees=True, **kw)
    gpu, tg = tree_parallel_game(game, states, tree_keys=keys, backend="cuda", blocks=1, return_trees=True, **kw)
    assert gpu["backend"] == "cuda"
    for name in tc.FIELDS:
        assert np.array_equal(getattr(tc, name), getattr(tg, name)), name
    assert cpu["positions"] == gpu["positions"]
print("twins agree")
"""


@pytest.mark.slow  # compiles kernels of its own (8-16 s on a cold cache)
def test_connect_four_shared_tree_cuda_kernel_equals_the_cpu_twin_under_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _C4_SIM_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree" in proc.stdout


def _kalah_states(seed, m, seeds, k):
    rnd = random.Random(seed)
    s = KalahState.initial(m, seeds)
    out = [s]
    while len(out) < k:
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            s = KalahState.initial(m, seeds)
        else:
            out.append(s)
    return out


#: (states: seed, houses, seeds, count), options, then the former kernel's visits, moves and results' digest.
KALAH_SHARED_GOLDEN = [
    ((1, 6, 4, 3), dict(trees=2, iterations=300, playouts=3),
     [[94, 95, 93, 89, 103, 126], [106, 91, 101, 101, 106, 95], [72, 119, 113, 109, 99, 88]], [6, 12, 2],
     'ef76d2681db4812f78d52412ec62d259bf73c0712948206ef72d9d0637dbbf05'),
    ((2, 4, 3, 2), dict(trees=1, iterations=200, playouts=2, capacity=30, formula='sqrtlog'),
     [[30, 65, 47, 58], [54, 65, 53, 28]], [2, 7],
     'aef5949b2d2843b045cda97d48098bb4a778a307d45a06f07954c87c84a8254a'),
    ((3, 6, 4, 2), dict(trees=2, iterations=200, playouts=2, reward='heuristic', playout_depth=6),
     [[66, 64, 68, 66, 66, 70], [66, 64, 68, 68, 66, 68]], [6, 13],
     '81049a5835aa2686a47fe9456ea2244329244aafaae90acbe88ea0c212509c02'),
    ((4, 6, 4, 2), dict(trees=1, iterations=200, playouts=2, eval='heuristic', eval_plies=4, imm=0.3),
     [[33, 32, 34, 33, 33, 35], [33, 33, 34, 33, 33, 34]], [6, 13],
     'fbe69c899f0788ee77285fc68c8e2e6a08c56e4c2af47360faec323f210c8c2f'),
]


@pytest.mark.slow  # compiles kernels of its own (8-16 s on a cold cache)
@pytest.mark.parametrize("case", range(len(KALAH_SHARED_GOLDEN)))
def test_kalah_shared_tree_equals_the_former_kernel(case):
    spec, kw, visits, moves, digest = KALAH_SHARED_GOLDEN[case]
    states = _kalah_states(*spec)
    res = search_many_shared(states, list(range(len(states))), backend="cpu", **kw)
    assert [[c["visits"] for c in r["children"]] for r in res] == visits
    assert [r["move"] for r in res] == moves
    text = json.dumps([[(c["move"], c["visits"], c["value"]) for c in r["children"]] + [r["nodes"]] for r in res])
    assert hashlib.sha256(text.encode()).hexdigest() == digest

"""The multi-tree MCTS written once over the game protocol (kernels.game_mcts, kernels.cuda_game_mcts,
mcts.game): Oware's searches return what the former Oware-only kernels returned (values recorded from
kernels/oware_mcts.py at commit 25d35f4 of branch protocol, before it was deleted: root visits, moves and a
digest of every tree array), Kalah's multi-tree search what its former kernel returned (multi_mcts.py at
25d35f4), Connect Four found by name in the registry finds a unique winning move for either player, and the
CUDA kernel equals its CPU twin under the simulator."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitsearch.games import get
from jitsearch.games.oware import OwareState
from jitsearch.mcts.game import analyse_game, search_game
from jitsearch.mcts.multi import tree_keys_for
from oware_calls import analyse_oware

ROOT = Path(__file__).resolve().parents[1]


def _oware_states(seed, m, seeds, limit, k):
    rnd = random.Random(seed)
    out = [OwareState.initial(m, seeds, move_limit=limit)]
    s = out[0]
    while len(out) < k:
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            s = OwareState.initial(m, seeds, move_limit=limit)
        elif len(s.history) > 1:
            out.append(s)
    return out


def _digest(trees):
    h = hashlib.sha256()
    for name in trees.FIELDS:
        h.update(name.encode())
        h.update(np.ascontiguousarray(np.asarray(getattr(trees, name)).astype(np.int64)).tobytes())
    return h.hexdigest()


#: (states: seed, houses, seeds, move limit, count), options, then the old kernels' root visits, moves, digest.
OWARE_GOLDEN = [
    ((1, 6, 4, 200, 3), dict(iterations=300, playouts=2, leaves=1),
     [[54, 59, 49, 40, 50, 48], [50, 33, 71, 42, 60, 44], [49, 57, 46, 39, 54, 55]], [1, 8, 1],
     "7f6545daeba7bf29baafe9bad209f99e56bf28d77d333c9289bcc7f1ee6b4fe3"),
    ((2, 3, 2, 30, 4), dict(iterations=200, playouts=1, leaves=3, capacity=60),
     [[16, 37, 148], [38, 61, 102], [156, 45], [55, 86, 60]], [2, 5, 1, 4],
     "3ea26bcc13d12f7071c287ee332e43089554df292af13f85865066126eb9925c"),
    ((3, 6, 4, 200, 2), dict(iterations=200, playouts=2, leaves=2, eval="capture", eval_plies=3, imm=0.4),
     [[34, 37, 34, 32, 33, 30], [42, 39, 31, 30, 30, 28]], [1, 6],
     "2606860e07201443b690cec1cccf069e58085a96ccd8184fb57c72fe52a57864"),
    ((4, 4, 3, 60, 3), dict(iterations=150, playouts=3, leaves=1, eval="capture", eval_plies=0, imm=1.0,
                            side_weight=0.5, formula="sqrt"),
     [[39, 38, 38, 35], [47, 47, 31, 25], [36, 50, 30, 34]], [0, 4, 1],
     "9c94f998921f16965f9d2f00db9c08ca5f4d52eb7dfc1b85b1b8d55c461b4883"),
    ((5, 6, 4, 200, 2), dict(iterations=120, playouts=1, leaves=4, formula="sqrtlog"),
     [[21, 14, 32, 15, 20, 18], [21, 14, 22, 23, 17, 23]], [2, 9],
     "f3a40901a31cc544cc7d48deaf10c010f59dcfc5ce92af6299467f4280a8b2de"),
]


@pytest.mark.parametrize("spec, kw, visits, moves, digest", OWARE_GOLDEN)
def test_oware_search_returns_what_the_former_oware_kernels_returned(spec, kw, visits, moves, digest):
    seed, m, seeds, limit, k = spec
    r, trees = analyse_oware(_oware_states(seed, m, seeds, limit, k), tree_keys=tree_keys_for(seed, k),
                             backend="cpu", return_trees=True, threads=1, **kw)
    assert [[c["visits"] for c in p["children"]] for p in r["positions"]] == visits
    assert [p["move"] for p in r["positions"]] == moves
    assert _digest(trees) == digest


#: Connect Four positions (Pons's move text) with one winning move for the player to move, found by the
#: solver: (text, player to move, the move).
UNIQUE_WINS = [("111651462461527445", 0, 2), ("2743147561266731636654572", 1, 1)]


@pytest.mark.parametrize("text, player, win", UNIQUE_WINS)
def test_connect_four_mcts_finds_the_unique_winning_move(text, player, win):
    game = get("connect4")
    state = game.from_text(text)
    assert state.player == player
    wins = [c for c in state.legal_moves() if state.play(c).is_over and state.play(c).margin == (1 - 2 * player)]
    assert wins == [win]
    r = search_game("connect4", state, iterations=3000, playouts=2, seed=3, backend="cpu")
    assert r["move"] == win, r["children"]
    best = max(r["children"], key=lambda ch: ch["visits"])
    assert best["value"] > 0.9
    assert sum(ch["visits"] for ch in r["children"]) == r["iterations"]


def test_connect_four_search_is_deterministic_and_independent_of_threads():
    game = get("connect4")
    states = [game.from_text(t) for t in ("", "4455", "33", "111651462461527445")]
    a = analyse_game("connect4", states, iterations=200, seed=5, backend="cpu", threads=1)
    b = analyse_game(game, states, iterations=200, seed=5, backend="cpu", threads=2)
    assert a["positions"] == b["positions"]
    assert a["game"] == "connect4" and a["iterations"] == 200


def test_game_search_errors_are_one_line():
    game = get("connect4")
    over = game.from_text("1212121")
    assert over.is_over
    for call, words in ((lambda: analyse_game("chess", []), "unknown game"),
                        (lambda: analyse_game("connect4", []), "non-empty"),
                        (lambda: search_game("connect4", OwareState.initial()), "Connect4State"),
                        (lambda: analyse_game("connect4", [over]), "over"),
                        (lambda: analyse_game("connect4", [game.initial()], playouts=0), "playouts")):
        with pytest.raises(ValueError) as exc:
            call()
        assert words in str(exc.value) and "\n" not in str(exc.value)


_SIM_SCRIPT = r"""
import numpy as np
from jitsearch.games import get
from jitsearch.kernels import cuda_game_mcts
from jitsearch.mcts.game import analyse_game
from jitsearch.mcts.multi import tree_keys_for

cuda_game_mcts.threads_for = lambda jobs, trees, per_thread: 3  # few threads a block: the simulator is slow
game = get("connect4")
states = [game.from_text(t, width=5, height=4) for t in ("", "3", "1122", "2211")]
keys = tree_keys_for(9, len(states))
for kw in ({"iterations": 10, "playouts": 2, "leaves": 2}, {"iterations": 6, "playouts": 1, "leaves": 3, "capacity": 9}):
    cpu, tc = analyse_game(game, states, tree_keys=keys, backend="cpu", return_trees=True, **kw)
    gpu, tg = analyse_game(game, states, tree_keys=keys, backend="cuda", return_trees=True, **kw)
    assert gpu["backend"] == "cuda"
    for name in tc.FIELDS:
        assert np.array_equal(getattr(tc, name), getattr(tg, name)), name
    assert cpu["positions"] == gpu["positions"]
print("twins agree")
"""


@pytest.mark.slow  # compiles kernels of its own (8-16 s on a cold cache)
def test_connect_four_cuda_kernel_equals_the_cpu_twin_under_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree" in proc.stdout


def _kalah_states(seed, m, seeds, k, empty_capture=False):
    from jitsearch.games.kalah import KalahState

    rnd = random.Random(seed)
    out = []
    s = KalahState.initial(m, seeds, empty_capture=empty_capture)
    while len(out) < k:
        nxt = s.play(rnd.choice(s.legal_moves()))
        if nxt.is_over:
            s = KalahState.initial(m, seeds, empty_capture=empty_capture)
            continue
        s = nxt
        out.append(s)
    return out


#: (states: seed, houses, seeds, count, empty capture), options, then Kalah's former kernel's (multi_mcts.py at
#: 25d35f4) root visits, moves and node counts.
KALAH_GOLDEN = [
    ((1, 6, 4, 3, False), dict(iterations=300, playouts=2),
     [[55, 39, 66, 54, 41, 45], [52, 51, 44, 55, 52, 46], [62, 57, 50, 70, 61]], [10, 4, 11], [1493, 1473, 1494]),
    ((2, 4, 3, 3, True), dict(iterations=200, playouts=1, leaves=3, formula="sqrt"),
     [[39, 60, 46, 56], [58, 77, 66], [65, 43, 50, 43]], [7, 3, 6], [664, 673, 620]),
    ((3, 6, 4, 2, False), dict(iterations=200, playouts=2, reward="heuristic", playout_depth=6),
     [[33, 33, 34, 33, 33, 34], [32, 33, 34, 34, 34, 33]], [13, 3], [1011, 1006]),
    ((4, 5, 4, 2, False), dict(iterations=200, playouts=2, eval="store", eval_plies=3, imm=0.4),
     [[35, 53, 54, 58], [54, 33, 36, 35, 42]], [5, 7], [808, 806]),
    ((5, 6, 4, 2, False), dict(iterations=150, playouts=1, eval="heuristic", eval_plies=2, imm=1.0, formula="sqrtlog",
                               leaves=2),
     [[22, 26, 27, 25, 25, 25], [26, 32, 30, 31, 31]], [10, 9], [747, 735]),
    ((6, 3, 2, 3, False), dict(iterations=300, playouts=2, capacity=20),
     [[74, 210, 16], [32, 268], [60, 240]], [6, 7, 2], [20, 20, 20]),
]


@pytest.mark.parametrize("spec, kw, visits, moves, nodes", KALAH_GOLDEN)
def test_kalah_multi_tree_search_returns_what_its_former_kernel_returned(spec, kw, visits, moves, nodes):
    from jitsearch.mcts.multi import analyse_positions

    seed, m, seeds, k, ec = spec
    r = analyse_positions(_kalah_states(seed, m, seeds, k, ec), tree_keys=tree_keys_for(seed, k), backend="cpu", **kw)
    assert [[c["visits"] for c in p["children"]] for p in r["positions"]] == visits
    assert [p["move"] for p in r["positions"]] == moves
    assert [p["nodes"] for p in r["positions"]] == nodes


@pytest.mark.slow
def test_the_searches_of_any_state_find_its_game_and_sum_its_trees():
    """multi_tree_search / search_many / tree_parallel_search (the older names) take a state of any
    game: an Oware search sums its trees' root statistics (every iteration of every tree passes
    the root), equals the same trees grown by analyse_game, and a Connect Four shared tree
    answers; a state of no registered game is a one-line error."""
    from jitsearch.games import game_of
    from jitsearch.mcts.multi import multi_tree_search, search_many
    from jitsearch.mcts.shared import tree_parallel_search

    s = _oware_states(4, 6, 4, 200, 2)[1]
    assert game_of(s) is get("oware")
    r = multi_tree_search(s, trees=3, iterations=40, playouts=2, backend="cpu", seed=7)
    assert sum(c["visits"] for c in r["children"]) == r["iterations"] == 120 and r["move"] in s.legal_moves()
    alone = analyse_game("oware", [s] * 3, iterations=40, playouts=2, backend="cpu", tree_keys=tree_keys_for(7, 3))
    summed = {c["move"]: 0 for c in r["children"]}
    for p in alone["positions"]:
        for c in p["children"]:
            summed[c["move"]] += c["visits"]
    assert summed == {c["move"]: c["visits"] for c in r["children"]}
    assert search_many([s], [7], trees=3, iterations=40, playouts=2, backend="cpu")[0]["children"] == r["children"]
    c4 = get("connect4").initial()
    t = tree_parallel_search(c4, iterations=30, playouts=2, backend="cpu", seed=1)
    assert sum(c["visits"] for c in t["children"]) == 30 and t["parallel"] == "tree"
    with pytest.raises(ValueError, match="registered game") as err:
        multi_tree_search("3 3 3", trees=1, iterations=5)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name, options, words", [
    ("oware", dict(reward="heuristic"), "oware has no heuristic reward"),
    ("oware", dict(playout_depth=3), "oware has no heuristic reward .* eval=capture"),
    ("connect4", dict(eval="store"), "connect4 has no MCTS evaluation"),
    ("kalah", dict(eval="store", reward="heuristic"), "eval= replaces reward=heuristic"),
    ("kalah", dict(eval="heuristic", playout_depth=2), "eval_plies=, not playout_depth="),
    ("kalah", dict(eval="store", eval_param=0.5), "take no eval_param"),
    ("kalah", dict(imm=0.3), "imm= .* give eval=heuristic"),
])
def test_reward_options_apply_where_the_game_has_them(name, options, words):
    game = get(name)
    with pytest.raises(ValueError, match=words) as err:
        analyse_game(game, [game.initial()], iterations=5, backend="cpu", **options)
    assert "\n" not in str(err.value)


def test_kalah_rewards_through_the_generic_search_equal_its_older_entry_points():
    """analyse_game of Kalah with reward=heuristic / eval=store is analyse_positions with them (one
    path: the game's SearchEval.rewards), and the HMCTS reward changes the trees."""
    from jitsearch.mcts.multi import analyse_positions

    states = _kalah_states(8, 4, 3, 2, False)
    keys = tree_keys_for(8, 2)
    for kw in (dict(reward="heuristic", playout_depth=4), dict(eval="store", eval_plies=2, imm=0.5)):
        a = analyse_game("kalah", states, iterations=60, playouts=2, backend="cpu", tree_keys=keys, **kw)
        b = analyse_positions(states, iterations=60, playouts=2, backend="cpu", tree_keys=keys, **kw)
        assert a["positions"] == b["positions"]
    win = analyse_game("kalah", states, iterations=60, playouts=2, backend="cpu", tree_keys=keys)
    hmcts = analyse_game("kalah", states, iterations=60, playouts=2, backend="cpu", tree_keys=keys, reward="heuristic")
    assert win["positions"] != hmcts["positions"]

"""Leaf evaluations (a few random plies, then the store difference or the
heuristic) and implicit minimax backups (Lanctot et al. 2014) on every
backend: the squash, the options and their errors, the implicit minimax
values against a plain minimax recomputed in Python over the stored trees,
and the CUDA kernels against their CPU twins under the simulator (the
twin tests live in test_gpu.py; run here in a child process with
NUMBA_ENABLE_CUDASIM=1 when this one has no CUDA)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.games import get as get_game
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.rules import W1, W2, W3, W4, W5, _heuristic
from jitsearch.kernels.backend import cuda_status
from jitsearch.kernels.evaluation import kernel_reward, store_value
from jitsearch.kernels.tree_step import REWARD_UNITS, log_table_for
from jitsearch.kernels.sentinels import NO_PLY_CAP, REWARD_HEURISTIC, REWARD_STORE, REWARD_WIN, UNEVALUATED
from jitsearch.mcts import tree as T
from jitsearch.mcts.config import DEFAULT_EVAL_PLIES, MCTSConfig
from jitsearch.mcts.multi import multi_tree_search, tree_keys_for
from jitsearch.mcts.search import mcts_search
from jitsearch.mcts.shared import tree_parallel_search

from kalah_trees import SharedTrees, TreeBatch, grow_shared_cpu, grow_trees_cpu

ROOT = Path(__file__).resolve().parents[1]


# -- the naive reference: static evaluations and minimax in plain Python --------------

def static_value(board, m, player, over, kind, total):
    """The reward of a position for ``player`` in [0, 1]: the outcome of a
    finished game, else the squashed store difference or Siljander's
    heuristic (linear), written out again from the documentation."""
    d = int(board[m + 1]) - int(board[0])
    d = -d if player == 1 else d
    if over:
        return 1.0 if d > 0 else (0.0 if d < 0 else 0.5)
    if kind == "store":
        s = max(1.0, total / 8.0)
        return 0.5 + d / (2.0 * (abs(d) + s))
    bound = (W1 + W2 + W4 + W5) * total + W3 * m
    b = [int(x) for x in board]
    return min(1.0, max(0.0, 0.5 + 0.5 * (_heuristic(b, m, player) - _heuristic(b, m, 1 - player)) / bound))


def units(r):
    return math.floor(r * REWARD_UNITS + 0.5)


def minimax(children, evaluate, flip, node):
    """Minimax over the evaluated (visited) children, bottom up: the best
    child for the player to move, flipped (``flip(x)``) when the node's mover
    is the other player; a node without evaluated children is its own
    static evaluation. Returns {node: value} for every evaluated node."""
    out = {}

    def walk(x):
        kids, same_player = children(x)
        if kids:
            best = max(walk(c) for c in kids)
            out[x] = best if same_player else flip(best)
        else:
            out[x] = evaluate(x)
        return out[x]

    walk(node)
    return out


# -- the squash and the options ---------------------------------------------------------

def test_store_value_squash():
    for total in (6, 18, 48, 1000):
        ds = range(-total, total + 1)
        vals = [store_value(d, total) for d in ds]
        assert all(0.0 < v < 1.0 for v in vals) and all(a < b for a, b in zip(vals, vals[1:]))
        assert store_value(0, total) == 0.5
        assert all(abs(store_value(-d, total) - (1.0 - store_value(d, total))) < 1e-15 for d in ds)
    assert store_value(6, 48) == 0.75 and store_value(18, 48) == 0.875  # a lead of s (3s) seeds at Kalah(6,4)
    assert store_value(1, 6) == 0.75  # small boards: s = 1 seed at least


def test_kernel_reward_codes():
    assert kernel_reward("win", 0, None, None) == (REWARD_WIN, NO_PLY_CAP)
    assert kernel_reward("heuristic", 5, None, None) == (REWARD_HEURISTIC, 5)
    assert kernel_reward("win", 0, "store", 0) == (REWARD_STORE, 0)
    assert kernel_reward("win", 0, "heuristic", 4) == (REWARD_WIN, 4)


BAD_OPTIONS = [
    (dict(eval="margin"), "eval must be one of"),
    (dict(eval_plies=2), "eval_plies= .* applies to eval="),
    (dict(imm=0.3), "imm= .* give eval=store or eval=heuristic"),
    (dict(eval="store", imm=1.5), "imm must be a finite number >= 0, <= 1"),
    (dict(eval="store", imm=-0.1), "imm must be"),
    (dict(eval="store", eval_plies=-1), "eval_plies must be"),
    (dict(eval="store", eval_plies=10_001), "eval_plies must be"),
    (dict(eval="store", eval_plies=2.5), "eval_plies must be an integer"),
    (dict(eval="store", reward="heuristic"), "eval= replaces reward=heuristic"),
    (dict(eval="heuristic", playout_depth=3), "eval_plies=, not playout_depth="),
    (dict(eval="store", backend="cpu", batch=8), "batched leaf evaluation plays random playouts to the end"),
]


@pytest.mark.parametrize("options, words", BAD_OPTIONS)
def test_bad_evaluation_options_are_one_line_errors(options, words):
    with pytest.raises(ValueError, match=words) as err:
        MCTSConfig.from_options(iterations=10, **options).validate()
    assert "\n" not in str(err.value)


def test_option_defaults_and_the_apis_checks():
    cfg = MCTSConfig.from_options(iterations=10, eval="store")
    cfg.validate()
    assert (cfg.eval_plies, cfg.imm) == (DEFAULT_EVAL_PLIES, 0.0)
    assert MCTSConfig().eval is None and MCTSConfig().imm == 0.0  # the default search is unchanged
    s = KalahState.initial(6, 4)  # the board the other default tests compile the single-tree kernel for
    with pytest.raises(ValueError, match="imm= .* give eval="):
        multi_tree_search(s, trees=1, iterations=5, imm=0.2, backend="cpu")
    with pytest.raises(ValueError, match="eval must be one of"):
        tree_parallel_search(s, iterations=5, eval="x", backend="cpu")
    with pytest.raises(ValueError, match="eval= replaces reward=heuristic"):
        parse_agent("hmcts:iterations=10,eval=store")
    with pytest.raises(ValueError, match="imm must be .*agent spec"):
        parse_agent("mcts:iterations=10,eval=store,imm=2")
    a = parse_agent("mcts:iterations=30,eval=store,eval_plies=2,imm=0.3", seed=1)
    assert a.options == {"iterations": 30, "eval": "store", "eval_plies": 2, "imm": 0.3}
    assert str(a) == "mcts:iterations=30,eval=store,eval_plies=2,imm=0.3"
    game = play_game(s, [a, parse_agent("mcts:iterations=30,backend=cpu,eval=heuristic,imm=0.5")])
    assert game["moves"]


# -- the same searches under two names ------------------------------------------------

def test_eval_heuristic_is_the_cut_playout_and_imm_zero_changes_nothing():
    s = KalahState.initial(6, 4)
    a = mcts_search(s, iterations=400, playouts=2, seed=3, playout_depth=3)
    b = mcts_search(s, iterations=400, playouts=2, seed=3, eval="heuristic", eval_plies=3)
    c = mcts_search(s, iterations=400, playouts=2, seed=3, eval="heuristic", eval_plies=3, imm=0.0)
    assert a["children"] == b["children"] == c["children"]
    kw = dict(trees=2, iterations=60, playouts=2, seed=3, backend="cpu", leaves=2)
    assert (multi_tree_search(s, playout_depth=3, **kw)["children"]
            == multi_tree_search(s, eval="heuristic", eval_plies=3, **kw)["children"])
    d = mcts_search(s, iterations=400, playouts=2, seed=3, eval="store", eval_plies=0)
    assert d["children"] != a["children"] and sum(ch["visits"] for ch in d["children"]) == 800


# -- implicit minimax values against a plain minimax over the stored tree --------------

def test_imm_backup_on_a_hand_built_chain_keeps_the_sign_on_the_extra_turn():
    """root (p0 to move) -> A (p0 moved, extra turn) -> B (p0 moved) -> C (p1
    moved): C's value 0.8 for p1 is 0.2 for p0 at B and A (no flip on the
    extra turn), and 0.8 at the root (moved into by p1)."""
    t = T.MCTSTree(8, 6)
    t.set_root(np.array([0, 2, 2, 0, 2, 2]), 0)
    for node, par, mover, to_move in ((1, 0, 0, 0), (2, 1, 0, 1), (3, 2, 1, 0)):
        t.parent[node], t.mover_in[node], t.to_move[node] = par, mover, to_move
        t.first_child[par], t.num_children[par] = node, 1
        t.imm[node] = UNEVALUATED
    T.imm_backup(t.parent, t.first_child, t.num_children, t.to_move, t.mover_in, t.imm, 3, 0.8)
    assert t.imm[3] == 0.8 and t.imm[2] == pytest.approx(0.2) and t.imm[1] == t.imm[2]
    assert t.imm[0] == pytest.approx(0.8)


@pytest.mark.parametrize("kind", ["store", "heuristic"])
def test_single_tree_imm_is_the_minimax_of_the_stored_evaluations(kind):
    s = KalahState.initial(6, 4)
    total = int(sum(s.board))
    cfg = MCTSConfig(iterations=300, eval=kind, eval_plies=2, imm=0.4, solver=kind == "heuristic")
    cfg.validate()
    t = T.MCTSTree(300 * 6 + 1, 14)
    t.set_root(s.board, s.player)
    T.kernels(get_game("kalah"), (6, False)).iterate(*t.arrays(), (6, False), cfg.params(), np.uint64(3), 0, 300,
                                                     np.zeros((1, 1), np.int32), (0, 0, 0), 6)

    def children(x):
        return [c for c in t.children(x) if t.visits[c] > 0], t.mover_in[x] == t.to_move[x]

    def evaluate(x):
        return static_value(t.boards[x], 6, int(t.mover_in[x]), t.to_move[x] == T.TERMINAL, kind, total)

    ref = minimax(children, evaluate, lambda v: 1.0 - v, 0)
    visited = [x for x in range(int(t.size[0])) if t.visits[x] > 0]
    assert len(ref) == len(visited) > 300
    for x in visited:
        assert t.imm[x] == pytest.approx(ref[x], abs=1e-12 if kind == "heuristic" else 0.0), x


def test_multi_tree_imm_is_the_minimax_of_the_stored_evaluations():
    """Three leaves per step (virtual visits in between), two positions."""
    s = KalahState.initial(4, 3)
    states = [s, s.play(2)]
    boards = np.stack([x.board for x in states]).astype(np.int32)
    players = np.array([x.player for x in states], np.int32)
    b = TreeBatch(2, 2000, 4, imm=True)
    b.set_roots(boards, players)
    grow_trees_cpu(*b.arrays(), tree_keys_for(1, 2), boards.astype(np.int64).sum(1), log_table_for(1024), 4, 1.4, 0,
                   REWARD_STORE, 2, False, 3, 0.4, 3, 0, 60)
    for tt in range(2):
        def children(x):
            f = b.first_child[tt, x]
            kids = [c for c in range(f, f + b.num_children[tt, x]) if b.visits[tt, c] > 0] if f >= 0 else []
            return kids, b.mover_in[tt, x] == b.to_move[tt, x]

        def evaluate(x):
            return units(static_value(b.boards[tt, x], 4, int(b.mover_in[tt, x]), b.to_move[tt, x] == -1, "store",
                                      24))

        ref = minimax(children, evaluate, lambda v: REWARD_UNITS - v, 0)
        live = [x for x in range(b.size[tt]) if b.visits[tt, x] > 0]
        assert sorted(ref) == live and b.visits[tt, 0] == 180
        assert all(b.imm[tt, x] == ref[x] for x in live)
        assert all(b.imm[tt, x] == UNEVALUATED for x in range(b.size[tt]) if b.visits[tt, x] == 0)


@pytest.mark.slow
def test_shared_tree_imm_is_the_minimax_of_the_stored_evaluations():
    """The shared tree stores no boards: the reference replays the moves."""
    s = KalahState.initial(4, 3)
    states = [s, s.play(3)]
    boards = np.stack([x.board for x in states]).astype(np.int32)
    players = np.array([x.player for x in states], np.int32)
    cap = 3000
    tr = SharedTrees(2, cap, boards, players, imm=True)
    grow_shared_cpu(*tr.arrays(), tr.root_boards, tr.root_players, tree_keys_for(2, 2), boards.astype(np.int64).sum(1),
                    log_table_for(2000), cap, 4, 1.4, 0, REWARD_STORE, 2, False, 3, 0.4, 0, 200)
    for g in range(2):
        base = g * cap
        pos = {0: states[g]}
        mover = {0: 1 - states[g].player}

        def children(x):
            f = tr.first_child[base + x]
            kids = [c for c in range(f, f + tr.num_children[base + x]) if tr.visits[base + c] > 0] if f >= 0 else []
            for c in kids:
                pos[c] = pos[x].play(int(tr.move[base + c]))
                mover[c] = pos[x].player
            return kids, mover[x] == pos[x].player

        def evaluate(x):
            return units(static_value(pos[x].board, 4, mover[x], pos[x].is_over, "store", 24))

        ref = minimax(children, evaluate, lambda v: REWARD_UNITS - v, 0)
        assert len(ref) > 200 and all(tr.imm[base + x] == v for x, v in ref.items())


# -- the CUDA kernels against their CPU twins, under the simulator ----------------------

@pytest.mark.slow
def test_cuda_twins_with_evaluations_and_imm_under_the_simulator():
    """test_gpu.py's evaluation and implicit-minimax twin tests, in a child
    process with NUMBA_ENABLE_CUDASIM=1 (where this one has no CUDA; with a
    device or the simulator here, test_gpu.py runs them itself)."""
    if cuda_status()[0]:
        pytest.skip("CUDA (or the simulator) is present: test_gpu.py runs the twin tests in this process")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           str(ROOT / "tests" / "test_gpu.py"), "-k", "evaluations"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], proc.stdout[-500:]

"""Oware multi-tree MCTS: every node of a grown tree equals the rules replayed
along its path (repetition with the game's record, the move limit, captures);
a repeated position is a terminal node with the rules' result; the search
finds the solver's unique winning move; visits add up; determinism; the
CUDA kernel equals its CPU twin bit for bit under the simulator; the agent
and ``jitsearch analyse --game oware``."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.cli.app import main
from jitsearch.games.oware import OwareState
from jitsearch.games.oware.solver import solve
from jitsearch.kernels.sentinels import NO_NODE, TERMINAL
from jitsearch.mcts.multi import tree_keys_for
from oware_calls import analyse_oware, search_oware, tree_parallel_oware


def _states(seed, count, min_rows=1, **kw):
    """Live states of seeded random games, with their real records."""
    rnd = random.Random(seed)
    out = []
    s = OwareState.initial(**kw)
    while len(out) < count:
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            s = OwareState.initial(**kw)
        elif len(s.history) >= min_rows:
            out.append(s)
    return out


def _path(trees, t, node):
    moves = []
    while node != 0:
        moves.append(int(trees.move[t, node]))
        node = int(trees.parent[t, node])
    return moves[::-1]


REPLAY_RULES = [{"houses": 3, "seeds": 2, "move_limit": 40}, {"houses": 2, "seeds": 2},
                {"houses": 4, "seeds": 2, "grand_slam_illegal": True}]


@pytest.mark.slow
def test_every_node_equals_the_rules_replayed_along_its_path():
    repeated = 0
    for kw in REPLAY_RULES:
        repeated += _check_replay(kw)
    assert repeated > 0  # the trees did meet positions that only the game's record ends


def _check_replay(kw) -> int:
    """Check every node of trees grown from states with long records; return how many ended by the record only."""
    states = _states(1, 4, min_rows=8, **kw)
    r, trees = analyse_oware(states, iterations=300, playouts=1, seed=2, backend="cpu", return_trees=True)
    repeated = 0
    for t, root in enumerate(states):
        assert sum(ch["visits"] for ch in r["positions"][t]["children"]) == r["iterations"] == 300
        for node in range(1, int(trees.size[t])):
            s = root
            for house in _path(trees, t, node):
                parent = s
                s = s.play(house)
            assert np.array_equal(trees.boards[t, node], s.board), (root.to_text(), _path(trees, t, node))
            assert int(trees.to_move[t, node]) == (TERMINAL if s.is_over else s.player)
            assert int(trees.mover_in[t, node]) == parent.player
            if s.is_over and not parent.is_over:
                fresh = OwareState.from_text(parent.to_text(), move_limit=1000,
                                             grand_slam_illegal=root.grand_slam_illegal)
                repeated += not fresh.play(int(trees.move[t, node])).is_over  # ended by the record only
            f = int(trees.first_child[t, node])
            if f != NO_NODE:  # an expanded node: its own evaluation at most once, the rest its children's
                kids = int(trees.visits[t, f:f + int(trees.num_children[t, node])].sum())
                assert int(trees.visits[t, node]) - kids in (0, 1)
    return repeated


@pytest.mark.slow
def test_a_repeated_position_is_terminal_with_the_rules_result():
    # player 0 to move on 1,0,1 / 0,0,1 with scores 6,3, legal houses 0 and 2. Sowing house 2 gives
    # 1,0,0 / 1,0,1 with player 1 to move, a position of the record: the game ends, each side collects its
    # seeds, 7-5 for player 0. Without the record, the same move does not end the game.
    board = np.array([1, 0, 1, 0, 0, 1, 6, 3], np.int32)
    history = np.array([[1, 0, 0, 1, 0, 1, 1], [1, 0, 1, 0, 0, 1, 0]], np.int32)
    s = OwareState(board, 0, 3, history, ply=10)
    assert s.legal_moves() == [0, 2] and s.play(2).to_text() == "0,0,0/0,0,0/7,5 end"
    r, trees = analyse_oware([s], iterations=40, playouts=3, seed=1, backend="cpu", return_trees=True)
    kids = {ch["move"]: ch for ch in r["positions"][0]["children"]}
    assert kids[2]["visits"] > 0 and kids[2]["value"] == 1.0  # every visit scored the exact result
    node = next(ch for ch in range(1, int(trees.size[0])) if trees.move[0, ch] == 2)
    assert trees.to_move[0, node] == TERMINAL and np.array_equal(trees.boards[0, node], s.play(2).board)
    # without the record the same move does not end the game
    _, fresh = analyse_oware([OwareState.from_text(s.to_text())], iterations=40, playouts=3, seed=1,
                             backend="cpu", return_trees=True)
    node = next(ch for ch in range(1, int(fresh.size[0])) if fresh.move[0, ch] == 2)
    assert fresh.to_move[0, node] == 1


def _solved_positions(count):
    """Oware(3,2) positions (with records) where the solver proves exactly one move wins, not at once."""
    rnd = random.Random(3)
    found = []
    while len(found) < count:
        s = OwareState.initial(3, 2)
        for _ in range(rnd.randrange(2, 10)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            continue
        wins = []
        for h in s.legal_moves():
            c = s.play(h)
            mine = (c.margin if s.player == 0 else -c.margin) if c.is_over else None
            if (mine is not None and mine > 0) or (mine is None and solve(c).result == "loss"):
                wins.append(h)
        if len(wins) == 1 and not s.play(wins[0]).is_over:
            found.append((s, wins[0]))
    return found


@pytest.mark.slow
def test_finds_the_solvers_unique_winning_move():
    for s, best in _solved_positions(3):
        r = search_oware(s, iterations=3000, playouts=4, seed=1, backend="cpu")
        assert r["move"] == best, (s.to_text(), r["children"])


@pytest.mark.slow
def test_determinism_threads_batches_and_leaves():
    states = _states(5, 5)
    a = analyse_oware(states, iterations=64, playouts=2, seed=9, backend="cpu", threads=1)
    b = analyse_oware(states, iterations=64, playouts=2, seed=9, backend="cpu", threads=2)
    assert a["positions"] == b["positions"]
    alone = analyse_oware(states[2:3], iterations=64, playouts=2, tree_keys=tree_keys_for(9, 5)[2:3],
                          backend="cpu")
    assert alone["positions"][0] == a["positions"][2]  # a tree does not depend on the others in its launch
    assert analyse_oware(states, iterations=64, playouts=2, seed=10, backend="cpu")["positions"] != a["positions"]
    r = analyse_oware(states[:1], iterations=10, playouts=1, leaves=4, backend="cpu")
    assert r["iterations"] == 12 and sum(ch["visits"] for ch in r["positions"][0]["children"]) == 12


def test_time_limited_search_stops_on_time():
    s = OwareState.initial()
    search_oware(s, iterations=1, backend="cpu")  # compiled before the clock
    t0 = time.perf_counter()
    r = search_oware(s, time=0.2, playouts=1, backend="cpu")
    assert time.perf_counter() - t0 < 1.5 and r["iterations"] > 0 and r["move"] in s.legal_moves()
    assert sum(ch["visits"] for ch in r["children"]) == r["iterations"]


@pytest.mark.parametrize("call, words", [
    (lambda: analyse_oware([]), "non-empty list"),
    (lambda: analyse_oware(["x"]), "OwareState"),
    (lambda: analyse_oware([OwareState.from_text("0,0,0,0,0,0/0,0,0,0,0,0/30,18 end")]), "already over"),
    (lambda: analyse_oware([OwareState.initial(), OwareState.initial(4, 4)]), "same houses"),
    (lambda: analyse_oware([OwareState.initial()], leaves=64, playouts=32), "leaves x playouts"),
    (lambda: analyse_oware([OwareState.initial()], iterations=0), "iterations"),
    (lambda: analyse_oware([OwareState.initial()], backend="tpu"), "backend"),
    (lambda: analyse_oware([OwareState.initial()], iterations=100_000, max_bytes=1 << 20), "max_bytes"),
    (lambda: search_oware("4,4/4,4/0,0 p0"), "OwareState"),
])
def test_bad_arguments_are_one_line_value_errors(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_mcts_agent_plays_legal_moves_and_replays_exactly():
    start = OwareState.initial(3, 3)
    games = [play_game(start, [parse_agent("mcts:iterations=60,playouts=2", game="oware", seed=1),
                                     parse_agent("random", game="oware", seed=2)]) for _ in range(2)]
    assert games[0] == games[1]
    agent = parse_agent("mcts:time=0.05,c=1.0,leaves=2,backend=cpu", game="oware", seed=3)
    assert agent(OwareState.initial()) in range(6)
    assert agent.last["iterations"] > 0


@pytest.mark.parametrize("spec, words", [
    ("mcts:iterations=10,time=1", "not both"),
    ("mcts:leaves=0", "leaves"),
    ("mcts:iterations=0", "iterations"),
    ("mcts:depth=3", "unknown option"),
    ("mcts:backend=tpu", "backend"),
])
def test_bad_mcts_agent_specs(spec, words):
    with pytest.raises(ValueError, match=words):
        parse_agent(spec, game="oware", seed=0)


_SIM_SCRIPT = r"""
import random, warnings
import numpy as np
warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)
from jitsearch.games.oware import OwareState
from jitsearch.kernels import cuda_game_mcts as cuda_oware_mcts
from oware_calls import analyse_oware
from jitsearch.mcts.multi import tree_keys_for

cuda_oware_mcts.threads_for = lambda jobs, trees, per_thread: 3  # few threads a block: the simulator is slow
rnd = random.Random(4)
states = [OwareState.initial(3, 2, move_limit=30)]
s = states[0]
while len(states) < 3:
    s = s.play(rnd.choice(s.legal_moves()))
    if s.is_over:
        s = OwareState.initial(3, 2, move_limit=30)
    elif len(s.history) > 2:
        states.append(s)
keys = tree_keys_for(5, len(states))
for kw in ({"iterations": 10, "playouts": 2, "leaves": 2}, {"iterations": 6, "playouts": 1, "leaves": 3, "capacity": 8}):
    cpu, tc = analyse_oware(states, tree_keys=keys, backend="cpu", return_trees=True, **kw)
    gpu, tg = analyse_oware(states, tree_keys=keys, backend="cuda", return_trees=True, **kw)
    assert gpu["backend"] == "cuda"
    for name in tc.FIELDS:
        assert np.array_equal(getattr(tc, name), getattr(tg, name)), name
    assert cpu["positions"] == gpu["positions"]
print("twins agree")
"""


@pytest.mark.slow
def test_cuda_kernel_equals_the_cpu_twin_under_the_simulator():
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(root), str(root / "tests")]))
    proc = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree" in proc.stdout


# -- tree parallelism: one shared tree per position ----------------------------------------

@pytest.mark.slow
def test_shared_tree_children_are_the_rules_legal_moves_along_every_path():
    """No boards are stored in a shared tree: replay every expanded node's path and check its children are the
    legal moves of that position (with the game's record), and that no finished game was expanded."""
    for kw in REPLAY_RULES:
        states = _states(1, 3, min_rows=8, **kw)
        r, trees = tree_parallel_oware(states, iterations=200, playouts=2, seed=2, backend="cpu", return_trees=True)
        for g, root in enumerate(states):
            base = g * trees.capacity
            assert int(trees.visits[base]) == r["iterations"] == 200
            assert sum(ch["visits"] for ch in r["positions"][g]["children"]) == 200
            todo = [(0, root)]
            while todo:
                node, s = todo.pop()
                f = int(trees.first_child[base + node])
                if f < 0:
                    continue
                assert not s.is_over
                kids = [int(trees.move[base + f + j]) for j in range(int(trees.num_children[base + node]))]
                assert kids == s.legal_moves(), (root.to_text(), s.to_text())
                todo.extend((f + j, s.play(h)) for j, h in enumerate(kids))


@pytest.mark.slow
def test_shared_tree_finds_the_solvers_winning_move_and_refuses_bad_options():
    for s, best in _solved_positions(2):
        r = tree_parallel_oware([s], iterations=3000, playouts=4, seed=1, backend="cpu")
        assert r["positions"][0]["move"] == best
    with pytest.raises(ValueError, match="blocks"):
        tree_parallel_oware([OwareState.initial()], blocks=4, backend="cpu")
    with pytest.raises(ValueError, match="already over"):
        tree_parallel_oware([OwareState.from_text("0,0,0,0,0,0/0,0,0,0,0,0/30,18 end")])
    agent = parse_agent("mcts:iterations=50,parallel=tree", game="oware", seed=1)
    assert agent(OwareState.initial()) in range(6)
    for spec in ("mcts:blocks=4", "mcts:parallel=tree,leaves=2", "mcts:parallel=both"):
        with pytest.raises(ValueError):
            parse_agent(spec, game="oware", seed=0)


_SHARED_SIM_SCRIPT = r"""
import random, warnings
import numpy as np
warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)
from jitsearch.games.oware import OwareState
from jitsearch.kernels import cuda_game_shared_tree
from oware_calls import tree_parallel_oware
from jitsearch.mcts.multi import tree_keys_for

cuda_game_shared_tree.threads_for = lambda playouts, blocks, per_thread: 3  # few threads: the simulator is slow
rnd = random.Random(4)
states = [OwareState.initial(3, 2, move_limit=30)]
s = states[0]
while len(states) < 3:
    s = s.play(rnd.choice(s.legal_moves()))
    if s.is_over:
        s = OwareState.initial(3, 2, move_limit=30)
    elif len(s.history) > 2:
        states.append(s)
keys = tree_keys_for(5, len(states))
for kw in ({"iterations": 12, "playouts": 4}, {"iterations": 8, "playouts": 1, "capacity": 9}):
    cpu, tc = tree_parallel_oware(states, tree_keys=keys, backend="cpu", return_trees=True, **kw)
    gpu, tg = tree_parallel_oware(states, tree_keys=keys, backend="cuda", blocks=1, return_trees=True, **kw)
    assert gpu["backend"] == "cuda"
    for name in tc.FIELDS:
        assert np.array_equal(getattr(tc, name), getattr(tg, name)), name
    assert cpu["positions"] == gpu["positions"]
many, tm = tree_parallel_oware(states, tree_keys=keys, backend="cuda", blocks=3, iterations=12, playouts=2,
                               return_trees=True)
for g in range(len(states)):
    assert int(tm.visits[g * tm.capacity]) == 12
    assert sum(ch["visits"] for ch in many["positions"][g]["children"]) <= 12
print("twins agree")
"""


@pytest.mark.slow
def test_shared_tree_cuda_kernel_equals_the_cpu_twin_under_the_simulator():
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join([str(root), str(root / "tests")]))
    proc = subprocess.run([sys.executable, "-c", _SHARED_SIM_SCRIPT], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree" in proc.stdout


# -- jitsearch analyse --game oware ---------------------------------------------------------

OWARE_POSITIONS = ["0,0,8,0,0,1/1,1,1,1,2,3/0,0 p0", "4,4,4,4,4,0/5,5,5,5,4,4/0,0 p1"]


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_analyse_oware_json_file_and_start_position(capsys, tmp_path):
    path = tmp_path / "ow.txt"
    path.write_text("# Oware\n" + OWARE_POSITIONS[0] + "\n\n" + OWARE_POSITIONS[1] + "\n")
    code, out, err = run(capsys, "analyse", "--game", "oware", path, "--iterations", "60", "--playouts", "2",
                         "--backend", "cpu", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["game"] == "oware" and obj["iterations"] == 60 and obj["playouts_total"] == 60 * 2 * 2
    assert [p["line"] for p in obj["positions"]] == [2, 4]
    for pos in obj["positions"]:
        s = OwareState.from_text(pos["position"])
        assert sorted(ch["move"] for ch in pos["children"]) == s.legal_moves() and pos["move"] in s.legal_moves()
        assert sum(ch["visits"] for ch in pos["children"]) == 60 and 0.0 <= pos["value"] <= 1.0
    assert obj["positions"][0]["move"] == 2  # the capture that wins at once
    lib = analyse_oware([OwareState.from_text(p) for p in OWARE_POSITIONS], iterations=60, playouts=2, seed=0,
                        backend="cpu")
    assert [p["children"] for p in obj["positions"]] == [p["children"] for p in lib["positions"]]
    code, out, err = run(capsys, "analyse", "--game", "oware", "--houses", "3", "--seeds", "2", "--iterations",
                         "20", "--backend", "cpu", "--json")
    assert code == 0, err
    assert json.loads(out)["positions"][0]["position"] == "2,2,2/2,2,2/0,0 p0"
    code, out, err = run(capsys, "analyse", "--game", "oware", "--houses", "3", "--seeds", "2", "--iterations",
                         "20", "--backend", "cpu")
    assert code == 0 and "Oware, 3 houses" in out, err


@pytest.mark.parametrize("content, args, words", [
    ("1,2/3 p0\n", (), ":1: position must look like"),
    ("0,0,0,0,0,0/0,0,0,0,0,0/30,18 end\n", (), "game is over"),
    ("0,0,0/4,4,4/0,0 p0\n", (), "no legal move"),
    (OWARE_POSITIONS[0] + "\n4,4,4/4,4,4/0,0 p0\n", (), "analyse one board size"),
    (OWARE_POSITIONS[0], ("--reward", "heuristic"), "--reward does not apply to --game oware"),
    (OWARE_POSITIONS[0], ("--empty-capture",), "--empty-capture does not apply"),
    (OWARE_POSITIONS[0], ("--houses", "4"), "--houses gives the start position"),
    (OWARE_POSITIONS[0], ("--leaves", "64", "--playouts", "32"), "leaves x playouts"),
    (OWARE_POSITIONS[0], ("--iterations", "4", "--time", "1"), "not both"),
])
def test_analyse_oware_errors_exit_2_with_one_line(capsys, tmp_path, content, args, words):
    path = tmp_path / "p.txt"
    path.write_text(content)
    code, out, err = run(capsys, "analyse", "--game", "oware", path, "--backend", "cpu", "--iterations", "4", *args)
    assert code == 2 and out == "", (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err


def test_analyse_options_of_the_other_game_are_refused(capsys, tmp_path):
    code, out, err = run(capsys, "analyse", "--game", "oware", "--houses", "20")
    assert code == 2 and "houses" in err and len(err.strip().splitlines()) == 1
    path = tmp_path / "k.txt"
    path.write_text("3,3,3/0/3,3,3/0 p0\n")
    code, out, err = run(capsys, "analyse", path, "--houses", "3")
    assert code == 2 and "--houses gives the start position when no POSITIONS_FILE is given" in err
    code, out, err = run(capsys, "analyse", "--game", "kalah", "--houses", "99")
    assert code == 2 and "houses" in err and len(err.strip().splitlines()) == 1


def test_mcts_agent_as_an_openspiel_bot():
    pyspiel = pytest.importorskip("pyspiel")
    from jitsearch.interop.openspiel import make_bot as make_oware_bot

    game = pyspiel.load_game("oware", {"num_houses_per_player": 3, "num_seeds_per_house": 2})
    ours = make_oware_bot("mcts:iterations=40", game, seed=1)
    theirs = pyspiel.make_uniform_random_bot(1, 5)
    state = game.new_initial_state()
    while not state.is_terminal():
        bot = ours if state.current_player() == 0 else theirs
        a = bot.step(state)
        assert a in state.legal_actions()
        state.apply_action(a)


def test_a_stop_event_ends_the_growth_between_chunks():
    import threading

    from oware_calls import analyse_oware

    class StopAfter:
        """An event that reads as set from its ``n``-th look on (the driver looks once per chunk)."""

        def __init__(self, n):
            self.n, self.looks = n, 0

        def is_set(self):
            self.looks += 1
            return self.looks >= self.n

    stop = StopAfter(4)
    r = analyse_oware([OwareState.initial()], time=60.0, backend="cpu", stop=stop, seed=3)
    assert r["interrupted"] and stop.looks == 4  # three chunks grown, stopped before the fourth
    pos = r["positions"][0]
    assert r["iterations"] > 0 and sum(ch["visits"] for ch in pos["children"]) == r["iterations"]
    done = threading.Event()
    done.set()
    r = analyse_oware([OwareState.initial()], iterations=500, backend="cpu", stop=done)
    assert r["interrupted"] and r["iterations"] == 0
    full = analyse_oware([OwareState.initial()], iterations=500, backend="cpu", stop=threading.Event())
    assert not full["interrupted"] and full["iterations"] == 500
    with pytest.raises(ValueError, match="stop"):
        analyse_oware([OwareState.initial()], iterations=10, backend="cpu", stop=True)

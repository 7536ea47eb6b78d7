"""MCTS on Kalah: the RNG and playouts, the tree's selection / expansion /
backup on hand-built trees, MCTS-Solver and UCT against the exact solver,
determinism, pure Monte Carlo, and Kalah tournaments."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.solver import solve_exact
from jitsearch.arena.matches import run_kalah_tournament
from conftest import kalah_match as KalahMatch
from jitsearch.arena.game_match import summarize
from jitsearch import rng
from jitsearch.games.kalah.playouts import CPU_RNG, evaluate_cpu
from jitsearch.games import get as get_game
from jitsearch.mcts import tree as T
from jitsearch.mcts.search import mcts_search, monte_carlo_search


# -- RNG and playouts ------------------------------------------------------------------

def test_rng_matches_its_python_twin_and_never_reaches_the_bound():
    for seed, s, p in [(0, 0, 0), (1, 2, 3), (2**63 + 5, 10**6, 77), (2**64 - 1, 1, 1)]:
        key = np.uint64(CPU_RNG.stream_key(np.uint64(seed), s, p))
        assert int(key) == rng.stream_key_py(seed, s, p)
        for c in (0, 1, 99):
            assert int(CPU_RNG.draw(key, c)) == rng.draw_py(int(key), c)
    top = np.uint64(2**64 - 1)
    for k in (1, 2, 6, 13, 2**31):
        assert CPU_RNG.below(top, k) == k - 1 and rng.below_py(2**64 - 1, k) == k - 1
        assert CPU_RNG.below(np.uint64(0), k) == 0


def _python_playout(state: KalahState, seed: int, index: int, p: int) -> int:
    """A playout replayed with the plain-Python RNG and the state API."""
    key = rng.stream_key_py(seed, index, p)
    ply = 0
    while not state.is_over:
        moves = state.legal_moves()
        state = state.play(moves[rng.below_py(rng.draw_py(key, ply), len(moves))])
        ply += 1
    return state.margin


@pytest.mark.slow
@pytest.mark.parametrize("m, n, ec", [(6, 4, False), pytest.param(3, 3, True, marks=pytest.mark.slow), (8, 5, False),
                                      pytest.param(1, 2, False, marks=pytest.mark.slow)])
def test_playouts_follow_the_documented_streams(m, n, ec):
    rnd = random.Random(m * n)
    states = []
    for _ in range(5):
        s = KalahState.initial(m, n, empty_capture=ec)
        for _ in range(rnd.randrange(6)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            states.append(s)
    boards = np.stack([s.board for s in states])
    players = np.array([s.player for s in states])
    r = evaluate_cpu(boards, players, 7, 12345, empty_capture=ec)
    assert (r["wins"] + r["draws"] + r["losses"] == 7).all()
    for i, s in enumerate(states):
        margins = [_python_playout(s, 12345, i, p) for p in range(7)]
        assert r["margin_sum"][i] == sum(margins)
        mine = [x if s.player == 0 else -x for x in margins]
        assert r["wins"][i] == sum(x > 0 for x in mine) and r["losses"][i] == sum(x < 0 for x in mine)
    r2 = evaluate_cpu(boards, players, 7, 12345, empty_capture=ec, threads=2)
    for k in r:
        assert (r[k] == r2[k]).all()


def test_evaluate_rejects_bad_batches():
    s = KalahState.initial(6, 4)
    with pytest.raises(ValueError, match="2m\\+2"):
        evaluate_cpu(np.zeros((2, 5), dtype=np.int32), 0, 1, 0)
    with pytest.raises(ValueError, match="players"):
        evaluate_cpu(s.board[None, :], np.array([2]), 1, 0)
    with pytest.raises(ValueError, match="empty side"):
        evaluate_cpu(np.array([[0, 0, 0, 10, 1, 1]]), 0, 1, 0)
    with pytest.raises(ValueError, match="playouts_per_state"):
        evaluate_cpu(s.board, 0, 0, 0)


# -- the tree on hand-built examples ---------------------------------------------------

def _chain_tree():
    """root (p0 to move) -> A: p0 moved and keeps the turn (extra turn) ->
    B: p0 moved again, p1 to move -> C: p1 moved."""
    t = T.MCTSTree(8, 6)
    t.set_root(np.array([0, 2, 2, 0, 2, 2]), 0)
    for node, par, mover, to_move in ((1, 0, 0, 0), (2, 1, 0, 1), (3, 2, 1, 0)):
        t.parent[node], t.mover_in[node], t.to_move[node] = par, mover, to_move
        t.first_child[par], t.num_children[par] = node, 1
    t.size[0] = 4
    return t


def test_backup_credits_the_player_who_moved_in_extra_turns_without_sign_flips():
    t = _chain_tree()
    T.backup(t.parent, t.mover_in, t.visits, t.value, 3, 1.0, 1.0)  # player 0 won one playout
    assert list(t.visits[:4]) == [1, 1, 1, 1]
    # A and B were moved into by player 0 (A is the extra-turn edge): both +1
    assert t.value[1] == 1.0 and t.value[2] == 1.0
    assert t.value[3] == 0.0 and t.value[0] == 0.0  # moved into by player 1
    T.backup(t.parent, t.mover_in, t.visits, t.value, 3, 4.0, 1.5)  # 4 playouts, player 0 scored 1.5
    assert t.value[2] == 2.5 and t.value[3] == 2.5 and t.visits[3] == 5


def _star(values, visits, proven=None):
    k = len(values)
    t = T.MCTSTree(k + 1, 6)
    t.set_root(np.array([0, 2, 2, 0, 2, 2]), 0)
    t.first_child[0], t.num_children[0] = 1, k
    for i in range(k):
        t.parent[i + 1], t.mover_in[i + 1], t.to_move[i + 1] = 0, 0, 1
        t.visits[i + 1], t.value[i + 1] = visits[i], values[i]
        t.proven[i + 1] = (proven or [0] * k)[i]
    t.visits[0] = sum(visits)
    t.size[0] = k + 1
    return t


def _select(t, c=1.0, formula=T.FORMULA_UCB1, pb=0.0, solver=False):
    return T.select_child(t.first_child, t.num_children, t.visits, t.value, t.imm, t.prior, t.proven, 0, c, formula,
                          pb, solver, 0.0)


def test_selection_unvisited_first_then_the_formula():
    assert _select(_star([1.0, 0.0, 0.0], [2, 0, 3])) == 2
    # w/n: 0.5, 0.6, 0.45; n: 10, 5, 20; N = 35
    t = _star([5.0, 3.0, 9.0], [10, 5, 20])
    scores = {
        T.FORMULA_UCB1: [q + math.sqrt(math.log(35) / n) for q, n in ((0.5, 10), (0.6, 5), (0.45, 20))],
        T.FORMULA_SQRT: [q + math.sqrt(35) / n for q, n in ((0.5, 10), (0.6, 5), (0.45, 20))],
    }
    for formula, sc in scores.items():
        assert _select(t, formula=formula) == 1 + int(np.argmax(sc))
    assert _select(t, c=0.0) == 2  # pure exploitation: the best mean
    t.prior[1:4] = [0.0, 0.0, 1.0]  # progressive bias pulls towards the prior's favourite
    assert _select(t, c=0.0, pb=10.0) == 3
    t.proven[2] = T.LOSS
    assert _select(t, c=0.0, solver=True) == 1  # a proven child is never chosen again


def test_expansion_creates_every_child_with_its_position_and_movers():
    # player 0 to move: pit 3 (1 seed, straight into the store) is an extra turn
    s = KalahState.from_text("1,1,1/0/3,0,1/1 p0")
    t = T.MCTSTree(16, 8)
    t.set_root(s.board, s.player)
    moves = np.empty(3, dtype=np.int64)
    expand = T.kernels(KALAH).expand
    count = expand(t.first_child, t.num_children, t.parent, t.move, t.to_move, t.mover_in, t.visits, t.value,
                   t.imm, t.prior, t.proven, t.boards, t.size, 0, (3, False), 1.0, moves, NO_HIST, (0, 0, 0))
    assert count == len(s.legal_moves()) == 3 and t.size[0] == 4
    for ch in t.children(0):
        after = s.play(int(t.move[ch]))
        assert list(t.boards[ch]) == list(after.board)
        assert t.mover_in[ch] == 0 and t.to_move[ch] == after.player and t.parent[ch] == 0
    extra = [ch for ch in t.children(0) if t.move[ch] == 3]
    assert t.to_move[extra[0]] == 0  # the extra turn keeps player 0 to move
    assert abs(t.prior[1:4].sum() - 1.0) < 1e-12  # the progressive-bias priors are a softmax
    full = T.MCTSTree(3, 8)
    full.set_root(s.board, s.player)
    assert expand(full.first_child, full.num_children, full.parent, full.move, full.to_move, full.mover_in,
                  full.visits, full.value, full.imm, full.prior, full.proven, full.boards, full.size, 0, (3, False),
                  0.0, moves, NO_HIST, (0, 0, 0)) == 0  # a full pool refuses instead of writing past its end


def test_solver_update_proves_parents_from_the_right_side():
    # a WIN for the player to move in one child proves the parent; the parent
    # was moved into by the opponent (mover_in 1), so it is a LOSS for it
    t = _star([0, 0], [1, 1], proven=[T.UNKNOWN, T.WIN])
    T.solver_update(t.parent, t.first_child, t.num_children, t.to_move, t.mover_in, t.proven, 2)
    assert t.proven[0] == T.LOSS
    # the same with an extra turn into the parent: same player, same status
    t = _star([0, 0], [1, 1], proven=[T.UNKNOWN, T.WIN])
    t.mover_in[0] = 0
    T.solver_update(t.parent, t.first_child, t.num_children, t.to_move, t.mover_in, t.proven, 2)
    assert t.proven[0] == T.WIN
    # undecided while a child is open; the best of all proven children after
    t = _star([0, 0, 0], [1, 1, 1], proven=[T.LOSS, T.UNKNOWN, T.DRAW])
    T.solver_update(t.parent, t.first_child, t.num_children, t.to_move, t.mover_in, t.proven, 1)
    assert t.proven[0] == T.UNKNOWN
    t.proven[2] = T.LOSS
    T.solver_update(t.parent, t.first_child, t.num_children, t.to_move, t.mover_in, t.proven, 2)
    assert t.proven[0] == T.DRAW


# -- against the exact solver ----------------------------------------------------------

def _positions(count, m, n, seed, min_plies=0, max_plies=10):
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(m, n)
        for _ in range(rnd.randrange(min_plies, max_plies)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def _sign_for_mover(state, margin):
    mine = margin if state.player == 0 else -margin
    return (mine > 0) - (mine < 0)


@pytest.mark.slow
def test_mcts_solver_proves_small_endgames():
    proved = 0
    for s in _positions(25, 3, 2, seed=3, min_plies=3, max_plies=12):
        exact = _sign_for_mover(s, solve_exact(s, tt_capacity=1 << 10)["margin"])
        r = mcts_search(s, iterations=20000, solver=True, seed=1)
        assert r["proven"] is not None, s.to_text()
        proved += 1
        assert {"win": 1, "draw": 0, "loss": -1}[r["proven"]] == exact, s.to_text()
        if exact == 1:  # a proven win plays a winning move
            assert _sign_for_mover(s, solve_exact(s.play(r["move"]), tt_capacity=1 << 10)["margin"]) == 1
    assert proved == 25


@pytest.mark.slow
def test_uct_finds_the_winning_move_on_small_boards():
    checked = 0
    for s in _positions(60, 3, 3, seed=11, min_plies=2, max_plies=10):
        outcomes = {mv: _sign_for_mover(s, solve_exact(s.play(mv), tt_capacity=1 << 10)["margin"])
                    for mv in s.legal_moves()}
        if sorted(outcomes.values()).count(1) != 1 or min(outcomes.values()) == 1:
            continue  # keep positions with exactly one winning move
        r = mcts_search(s, iterations=5000, seed=2)
        assert outcomes[r["move"]] == 1, (s.to_text(), r["children"])
        checked += 1
    assert checked >= 5


@pytest.mark.slow
def test_same_seed_same_search_and_workers_merge_their_roots():
    s = KalahState.initial(6, 4)
    a = mcts_search(s, iterations=3000, seed=9, c=2.0, pb=0.5, reward="heuristic", playouts=2)
    b = mcts_search(s, iterations=3000, seed=9, c=2.0, pb=0.5, reward="heuristic", playouts=2)
    assert a["children"] == b["children"] and a["move"] == b["move"]
    assert sum(c["visits"] for c in a["children"]) == 2 * 3000  # root children share every playout
    c = mcts_search(s, iterations=3000, seed=10, c=2.0, pb=0.5, reward="heuristic", playouts=2)
    assert c["children"] != a["children"]
    w = mcts_search(s, iterations=2000, seed=9, workers=2)
    w2 = mcts_search(s, iterations=2000, seed=9, workers=2)
    assert w["children"] == w2["children"] and w["iterations"] == 2000
    assert sum(ch["visits"] for ch in w["children"]) == 2000


@pytest.mark.slow
def test_batched_leaf_evaluation_on_the_cpu_backend():
    """Virtual losses are all taken back: every visit is a real playout, and
    the search is a pure function of its seed."""
    s = KalahState.initial(5, 3)
    a = mcts_search(s, iterations=600, backend="cpu", batch=16, playouts=4, seed=2)
    b = mcts_search(s, iterations=600, backend="cpu", batch=16, playouts=4, seed=2)
    assert a["children"] == b["children"] and a["backend"] == "cpu"
    assert sum(c["visits"] for c in a["children"]) == 600 * 4 and a["simulations"] == 2400
    assert all(0.0 <= c["value"] <= 1.0 for c in a["children"] if c["value"] is not None)
    with pytest.raises(ValueError, match="solver"):
        mcts_search(s, iterations=10, backend="cpu", solver=True)


@pytest.mark.slow
def test_time_budget_and_options_are_validated():
    s = KalahState.initial(6, 4)  # the board the other default tests compile the kernel for
    r = mcts_search(s, time=0.2, seed=1)
    # stops on time and searched (how many iterations fit is bench/'s business: a loaded box gave 32)
    assert r["iterations"] >= 1 and r["seconds"] < 2.0
    for bad in ({"formula": "x"}, {"iterations": 0}, {"reward": "y"}, {"c": -1.0}, {"playouts": 0},
                {"final": "z"}, {"playout_depth": -1}):
        with pytest.raises(ValueError):
            mcts_search(s, **bad)
    with pytest.raises(ValueError, match="over"):
        mcts_search(KalahState.from_text("0,0/3/0,0/5 end"), iterations=10)


@pytest.mark.slow
def test_formulas_cut_playouts_and_final_choice_run():
    s = KalahState.initial(6, 4)
    for formula in ("ucb1", "sqrt", "sqrtlog"):
        r = mcts_search(s, iterations=500, formula=formula, seed=1, playout_depth=8, final="value")
        assert r["move"] in s.legal_moves() and r["simulations"] == 500


def test_pure_monte_carlo_expected_outcome():
    s = KalahState.initial(6, 4)
    r = monte_carlo_search(s, playouts=600, seed=4)
    assert r["simulations"] == 600 and all(-1 <= c["expected"] <= 1 for c in r["children"])
    assert r == {**monte_carlo_search(s, playouts=600, seed=4), "seconds": r["seconds"]}
    best = max(r["children"], key=lambda c: c["expected"])
    assert r["move"] == best["move"]


# -- agents, games and tournaments ----------------------------------------------------

def test_mcts_agents_replay_a_game_exactly():
    def game():
        agents = [parse_agent("mcts:iterations=150,c=1.4", seed=5), parse_agent("hmcts:iterations=80", seed=6)]
        return play_game(KalahState.initial(6, 4), agents)

    assert game()["moves"] == game()["moves"]


@pytest.mark.slow
def test_kalah_tournament_is_reproducible_resumable_and_parallel(tmp_path):
    match = KalahMatch(houses=4, seeds=3, openings=2, seed=3)
    a, b = "alphabeta:depth=2", "mcts:iterations=60"
    full = run_kalah_tournament(a, b, match, 3, out=tmp_path / "full.jsonl")
    par = run_kalah_tournament(a, b, match, 3, out=tmp_path / "par.jsonl", workers=2)
    part = run_kalah_tournament(a, b, match, 2, out=tmp_path / "part.jsonl")
    resumed = run_kalah_tournament(a, b, match, 3, out=tmp_path / "part.jsonl", resume=True)
    for r in (par, resumed):
        assert {k: r[k] for k in ("a_wins", "draws", "b_wins", "mean_plies")} == \
               {k: full[k] for k in ("a_wins", "draws", "b_wins", "mean_plies")}

    def games(path):
        return sorted((r["pair"], r["seat"], r["moves"]) for r in map(json.loads, open(path)))

    assert games(tmp_path / "full.jsonl") == games(tmp_path / "par.jsonl") == games(tmp_path / "part.jsonl")
    assert part["games"] == 4 and len(games(tmp_path / "part.jsonl")) == 6
    recs = [json.loads(x) for x in open(tmp_path / "full.jsonl")]
    for p in range(3):  # both seats of a pair share the opening
        assert recs[2 * p]["opening_moves"] == recs[2 * p + 1]["opening_moves"]
        assert recs[2 * p]["opening"] == recs[2 * p + 1]["opening"] and len(recs[2 * p]["opening_moves"]) == 2
    with pytest.raises(ValueError, match="resume"):
        run_kalah_tournament(a, b, match, 3, out=tmp_path / "full.jsonl")


def test_tournament_summary_numbers():
    recs = [{"a_result": r, "plies": 10, "capped": False} for r in ["win"] * 6 + ["draw"] * 2 + ["loss"] * 2]
    s = summarize(recs)
    assert s["a_score"] == pytest.approx(0.7)
    assert s["elo_diff"] == pytest.approx(400 * math.log10(0.7 / 0.3))
    lo, hi = s["a_score_ci95"]
    assert lo < 0.7 < hi and s["elo_ci95"][0] < s["elo_diff"] < s["elo_ci95"][1]
    assert s["mean_plies"] == 10 and s["games"] == 10


# -- command line ------------------------------------------------------------------------

def _cli(capsys, *args):
    from jitsearch.cli.app import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_cli_kalah_tournament_json_and_errors(capsys, tmp_path):
    code, out, _ = _cli(capsys, "tournament", "--game", "kalah", "--houses", "4", "--seeds", "3", "--a",
                        "alphabeta:depth=2", "--b", "mcts:iterations=50", "--pairs", "2", "--openings", "1",
                        "--out", str(tmp_path / "g.jsonl"), "--json")
    assert code == 0
    r = json.loads(out)
    for key in ("games", "a_wins", "draws", "b_wins", "a_score", "a_score_ci95", "elo_diff", "elo_ci95",
                "mean_plies"):
        assert key in r
    assert r["games"] == 4 == r["a_wins"] + r["draws"] + r["b_wins"]
    for bad in (["--b", "mcts:iterations=0"], ["--b", "mcts:bogus=1"], ["--a", "human"], ["--pairs", "0"],
                ["--houses", "0"]):
        args = ["tournament", "--game", "kalah", "--a", "alphabeta:depth=2", "--b", "random", "--pairs", "1"]
        code, out, err = _cli(capsys, *args, *bad)
        assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1, (bad, err)


@pytest.mark.slow
def test_cli_play_with_mcts_agents(capsys):
    code, out, _ = _cli(capsys, "play", "--houses", "3", "--seeds", "2", "--p0", "mcts:iterations=40,solver=1",
                        "--p1", "mc:playouts=30", "--seed", "3", "--json")
    assert code == 0
    r = json.loads(out)
    assert r["moves"] and isinstance(r["margin"], int)


# -- the packed-board kernels and lazy expansion -------------------------------------------

def _grown(kernel, state, seed, iterations=1500, **options):
    from jitsearch.mcts.config import MCTSConfig

    t = T.MCTSTree(iterations * state.houses + 1, 2 * state.houses + 2)
    t.set_root(state.board, state.player)
    cfg = MCTSConfig(**options)
    cfg.validate()
    done = kernel(*t.arrays(), (state.houses, state.empty_capture), cfg.params(), np.uint64(seed), 0, iterations,
                  NO_HIST, (0, 0, 0), state.houses)
    return t, done


KALAH = get_game("kalah")
NO_HIST = np.zeros((1, 1), np.int32)
#: The generic kernel (no fast playouts) of Kalah.
GENERIC = T.kernels(KALAH).iterate


def _kernel(m, to_the_end=False, empty_capture=False):
    """Kalah's kernel for trees of m houses (its fast playouts where the CPU has them)."""
    return T.kernels(KALAH, (m, empty_capture), to_the_end).iterate


@pytest.mark.parametrize("empty_capture, m, kind", [  # the slow step (test_mcts_games runs the generic source)
    pytest.param(ec, m, kind, marks=pytest.mark.slow)  # Kalah's generic single-tree kernel: a 40 s compile
    for ec in (False, True)
    for m, kind in [(4, "packed"), (6, "packed"), (7, "packed"), (3, "simd"), (6, "simd"), (7, "simd")]])
def test_packed_mcts_kernel_grows_the_generic_kernels_tree(m, kind, empty_capture, monkeypatch):
    """Random playouts to the end on packed boards or board vectors: the
    same trees (every array, node for node) as the generic kernel, for a
    few seeds and positions, one or several playouts per leaf."""
    from jitsearch.games.kalah.playouts import cpu_playout_kind

    monkeypatch.setenv("JITSEARCH_SIMD", "1" if kind == "simd" else "0")
    if cpu_playout_kind(m) != kind:
        pytest.skip(f"no {kind} kernel on this CPU")
    packed = _kernel(m)
    assert packed is not GENERIC and _kernel(m) is packed
    rnd = random.Random(m)
    s = KalahState.initial(m, 4, empty_capture=empty_capture)
    for seed in range(3):
        for playouts in (1, 3):
            a, done_a = _grown(packed, s, seed, c=2.0, playouts=playouts)
            b, done_b = _grown(GENERIC, s, seed, c=2.0, playouts=playouts)
            assert done_a == done_b == 1500
            for x, y in zip(a.arrays(), b.arrays()):
                assert np.array_equal(x, y)
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            break


def test_the_to_the_end_kernel_grows_the_full_kernels_tree(monkeypatch):
    """``kernels(game, cfg, to_the_end=True)`` (the default search's smaller
    kernel) grows the full kernel's trees, node for node, refuses playouts
    it does not play, and the search picks it only for playouts to the end."""
    from jitsearch.games.kalah.playouts import cpu_playout_kind
    from jitsearch.mcts.config import MCTSConfig

    monkeypatch.delenv("JITSEARCH_SIMD", raising=False)
    if cpu_playout_kind(6) == "generic":
        pytest.skip("no packed or vector kernel on this CPU")
    end, full = _kernel(6, to_the_end=True), _kernel(6)
    assert end is not full and _kernel(6, True) is end
    s = KalahState.initial(6, 4, empty_capture=True)
    for seed, options in ((0, {}), (1, {"playouts": 3, "solver": True}),
                          (2, {"formula": "sqrt", "c": 1.0, "pb": 0.5})):
        a, done_a = _grown(end, s, seed, iterations=700, **options)
        b, done_b = _grown(full, s, seed, iterations=700, **options)
        assert done_a == done_b
        for x, y in zip(a.arrays(), b.arrays()):
            assert np.array_equal(x, y)
    with pytest.raises(ValueError, match="to the end only"):
        _grown(end, s, 0, iterations=5, playout_depth=4)
    assert MCTSConfig().plays_to_the_end()
    for options in ({"playout_depth": 8}, {"reward": "heuristic"}, {"eval": "store"}):
        assert not MCTSConfig.from_options(**options).plays_to_the_end(), options


@pytest.mark.slow
def test_generic_kernel_outside_the_packed_range_and_other_options(monkeypatch):
    assert _kernel(8) is GENERIC
    monkeypatch.setenv("JITSEARCH_SIMD", "0")  # the scalar kernels: packed boards from m = 4 only
    assert _kernel(3) is GENERIC
    monkeypatch.delenv("JITSEARCH_SIMD")
    s = KalahState.initial(6, 3)
    for options in ({"reward": "heuristic"}, {"playout_depth": 4}, {"solver": True}, {"pb": 0.5}):
        a, _ = _grown(_kernel(6), s, 4, iterations=800, **options)
        b, _ = _grown(GENERIC, s, 4, iterations=800, **options)
        for x, y in zip(a.arrays(), b.arrays()):
            assert np.array_equal(x, y)


@pytest.mark.parametrize("pb", [0.0, 0.5])
@pytest.mark.slow
def test_lazily_expanded_children_are_built_from_their_parents(pb):
    """Every built child holds its parent's position played with its move
    (eager with progressive bias, lazy without: unvisited children UNBUILT)."""
    s = KalahState.initial(5, 3)
    t, _ = _grown(_kernel(5), s, 1, iterations=600, pb=pb)
    states = {0: s}
    unbuilt = 0
    for node in range(1, int(t.size[0])):
        par = int(t.parent[node])
        if t.to_move[node] == T.UNBUILT:
            assert pb == 0.0 and t.visits[node] == 0.0 and t.first_child[node] == T.NO_NODE
            unbuilt += 1
            continue
        child = states[par].play(int(t.move[node]))
        states[node] = child
        assert np.array_equal(t.boards[node], child.board)
        assert int(t.to_move[node]) == (child.player if not child.is_over else T.TERMINAL)
    assert (unbuilt > 0) == (pb == 0.0)

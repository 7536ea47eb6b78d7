"""The multi-tree MCTS (CPU twin of the device-resident search): root
statistics, the unique winning move, a full node pool, the agent spec, and
lockstep tournaments equal to games played one at a time. The GPU kernel
against this twin is in test_gpu.py."""

from __future__ import annotations

import random

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.solver import solve_exact
from jitsearch.arena.matches import run_kalah_tournament
from conftest import kalah_match as KalahMatch
from jitsearch.arena.game_match import play_one
from jitsearch.kernels.tree_step import log_table_for
from jitsearch.mcts.multi import analyse_positions, multi_tree_search, search_many, tree_keys_for
from jitsearch.mcts.search import mcts_search

from kalah_trees import TreeBatch, grow_trees_cpu


def _value(state):
    return solve_exact(state)["margin"] if not state.is_over else state.margin


def _unique_winning_positions(count, seed=3):
    """Live positions where exactly one move wins for the player to move
    (by the exact solver) and every other move loses."""
    rnd = random.Random(seed)
    found = []
    while len(found) < count:
        s = KalahState.initial(3, 3)
        for _ in range(rnd.randrange(4, 14)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over or len(s.legal_moves()) < 2:
            continue
        sign = 1 if s.player == 0 else -1
        outcomes = {mv: sign * _value(s.play(mv)) for mv in s.legal_moves()}
        wins = [mv for mv, v in outcomes.items() if v > 0]
        if len(wins) == 1 and all(v < 0 for mv, v in outcomes.items() if mv != wins[0]):
            found.append((s, wins[0]))
    return found


def test_picks_the_unique_winning_move():
    for s, winner in _unique_winning_positions(6):
        r = multi_tree_search(s, trees=4, iterations=400, playouts=4, backend="cpu", seed=1)
        assert r["move"] == winner, (s.to_text(), r["children"])


def test_summed_root_visits_equal_the_iterations_done():
    s = KalahState.initial(4, 3)
    r = multi_tree_search(s, trees=3, iterations=50, playouts=2, leaves=4, backend="cpu", seed=2)
    assert r["iterations"] == 3 * 52  # 50 rounded up to whole steps of 4 leaves, times 3 trees
    assert sum(c["visits"] for c in r["children"]) == r["iterations"]
    assert r["simulations"] == r["iterations"] * 2
    t = multi_tree_search(s, trees=2, time=0.2, playouts=1, backend="cpu", seed=2)
    assert t["iterations"] > 0 and sum(c["visits"] for c in t["children"]) == t["iterations"]
    assert not t["interrupted"]


def test_a_full_pool_stops_expanding_and_writes_nothing_past_its_end():
    m = 3
    s = KalahState.initial(m, 3)
    batch = TreeBatch(2, m + 1 + 3, m)  # the root, its children and one more level's worth at most
    boards = np.stack([np.asarray(s.board, np.int32)] * 2)
    batch.set_roots(boards, np.zeros(2, np.int32))
    guard = batch.parent.copy()
    grow_trees_cpu(*batch.arrays(), tree_keys_for(1, 2), boards.astype(np.int64).sum(1), log_table_for(1024), m,
                   1.4, 0, 0, 2, False, 1 << 30, 0.0, 1, 0, 200)
    assert (batch.size <= batch.parent.shape[1]).all()
    assert (batch.visits[:, 0] == 200).all()
    assert guard.shape == batch.parent.shape
    r = analyse_positions([s], iterations=300, playouts=2, capacity=m + 1, backend="cpu")
    assert r["positions"][0]["nodes"] <= m + 1
    assert sum(c["visits"] for c in r["positions"][0]["children"]) == 300


def test_one_position_in_a_batch_equals_it_alone():
    s = KalahState.initial(3, 3)
    others = [s.play(1), s.play(3)]
    alone = multi_tree_search(s, trees=3, iterations=30, playouts=3, backend="cpu", seed=11)
    together = search_many([others[0], s, others[1]], [5, 11, 6], trees=3, iterations=30, playouts=3,
                           backend="cpu")
    assert together[1]["children"] == alone["children"] and together[1]["move"] == alone["move"]


def test_mcts_search_and_agent_specs_use_the_multi_tree_search():
    from jitsearch.arena.agents import parse_agent

    s = KalahState.initial(3, 3)
    r = mcts_search(s, iterations=60, backend="cpu", trees=3, leaves=2, playouts=2, seed=4)
    assert r["trees"] == 3 and r["leaves"] == 2 and r["backend"] == "cpu"
    agent = parse_agent("mcts:iterations=60,backend=cpu,trees=3,leaves=2,playouts=2", seed=1)
    assert agent.lockstep and agent(s) in s.legal_moves()
    assert not parse_agent("mcts:time=0.1,backend=cpu,trees=2").lockstep
    for bad, words in [(dict(trees=2), "backend"), (dict(leaves=2), "backend"),
                       (dict(backend="cpu", leaves=64, playouts=32), "per step"),
                       (dict(backend="cpu", batch=4, trees=2), "exclude"),
                       (dict(backend="cpu", workers=2), "trees="), (dict(backend="cpu", pb=1.0), "pb")]:
        with pytest.raises(ValueError, match=words):
            mcts_search(s, iterations=10, **bad)


def test_lockstep_tournament_equals_games_played_one_at_a_time(tmp_path):
    a = "mcts:iterations=48,backend=cpu,trees=2,leaves=2,playouts=2"
    b = "alphabeta:depth=2"
    match = KalahMatch(3, 3, False, 300, 2, seed=5)
    one_by_one = [play_one(a, b, match, p, seat) for p in range(3) for seat in (0, 1)]
    r = run_kalah_tournament(a, b, match, 3, lockstep=True, out=tmp_path / "g.jsonl")
    assert r["games"] == 6 and not r["interrupted"]
    import json

    records = {(x["pair"], x["seat"]): x for x in map(json.loads, (tmp_path / "g.jsonl").read_text().splitlines())}
    for rec in one_by_one:
        got = records[(rec["pair"], rec["seat"])]
        assert {k: got[k] for k in rec} == rec
    seq = run_kalah_tournament(a, b, match, 3)
    assert {k: seq[k] for k in ("a_wins", "draws", "b_wins")} == {k: r[k] for k in ("a_wins", "draws", "b_wins")}
    with pytest.raises(ValueError, match="lockstep needs"):
        run_kalah_tournament(b, b, match, 1, lockstep=True)

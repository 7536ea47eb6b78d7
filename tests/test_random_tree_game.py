"""Random-tree games: the engine, pair bookkeeping, tournaments and resume."""

from __future__ import annotations

import json

import pytest
from conftest import incremental_costs_py

from jitsearch import IncrementalTree, naive
from jitsearch.arena.random_tree_tournament import (
    GameConfig,
    PlayerSpec,
    depth_increment_protocol,
    more_less_points,
    pair_winner,
    play_pair,
    run_tournament,
    tally,
)
from jitsearch.arena.records import wilson


def test_pair_winner_and_tally_on_hand_made_outcomes():
    # a played MAX in game 1 and reached 7; b played MAX in game 2 and reached 3: a wins
    assert pair_winner(7, 3) == "a"
    assert pair_winner(3, 7) == "b"
    assert pair_winner(5, 5) == "tie"
    records = [
        {"winner": "a", "nodes_a": 10, "nodes_b": 20},
        {"winner": "a", "nodes_a": 10, "nodes_b": 20},
        {"winner": "tie", "nodes_a": 5, "nodes_b": 5},
        {"winner": "b", "nodes_a": 1, "nodes_b": 2},
    ]
    t = tally(records)
    assert (t["pairs"], t["a_wins"], t["ties"], t["b_wins"]) == (4, 2, 1, 1)
    assert t["a_score"] == pytest.approx(2.5 / 4) and t["nodes_a"] == 26 and t["nodes_b"] == 47
    lo, hi = wilson(2, 4)
    assert 0 < lo < 0.5 < hi < 1


def test_engine_matches_a_plain_python_walk():
    for s in range(15):
        tree = IncrementalTree(3, 5, seed=s, random_branching=True)
        e = tree.to_explicit()
        costs = incremental_costs_py(tree)
        for ha, hb in ((1, 1), (2, 1), (1, 3), (3, 2)):
            a, b = PlayerSpec("alphabeta", ha), PlayerSpec("alphabeta", hb)
            expected = (_naive_game(e, costs, tree.depth, ha, hb), _naive_game(e, costs, tree.depth, hb, ha))
            assert _play_on(tree, a, b) == expected
            # forward estimation with exact bounds and delta 1 picks the same moves
            fa, fb = PlayerSpec("fe", ha, 1.0, "exact"), PlayerSpec("fe", hb, 1.0, "exact")
            assert _play_on(tree, fa, fb) == expected


def _play_on(tree, a, b):
    import numpy as np

    from jitsearch.search.forward_estimation import play_game

    args = (tree.branching, tree.random_branching, tree.edge_lo, np.uint64(tree.edge_span), np.uint64(tree.seed),
            tree.depth)
    return play_game(*args, a.params(tree), b.params(tree))[0], play_game(*args, b.params(tree), a.params(tree))[0]


def _naive_game(e, costs, depth_total, max_h, min_h):
    """Walk down with plain-Python depth-limited minimax; values are node costs."""
    from jitsearch import ExplicitTree

    node, depth = 0, 0
    while e.num_children[node]:
        h = min(max_h if depth % 2 == 0 else min_h, depth_total - depth)

        def build(n, left):
            if left == 0 or e.num_children[n] == 0:
                return costs[n]
            f = e.first_child[n]
            return [build(c, left - 1) for c in range(f, f + e.num_children[n])]

        sub = ExplicitTree.from_nested(build(node, h), root="max" if depth % 2 == 0 else "min")
        _, move = naive.minimax(sub)
        node = e.first_child[node] + move
        depth += 1
    return costs[node]


def test_equal_players_tie_every_pair():
    config = GameConfig(branching=4, random_branching=True, depth=6, seed=5)
    spec = PlayerSpec("alphabeta", 2)
    r = run_tournament(spec, spec, config, 20)
    assert r["ties"] == 20 and r["a_wins"] == r["b_wins"] == 0 and r["nodes_a"] == r["nodes_b"]


def test_depth_one_game_ties():
    # total depth 1: whoever is MAX takes the largest child, whatever its horizon
    config = GameConfig(branching=5, random_branching=False, depth=1, seed=2)
    r = run_tournament(PlayerSpec("alphabeta", 1), PlayerSpec.parse("fe:depth=3,delta=0.3"), config, 10)
    assert r["ties"] == 10


def test_deeper_search_wins_more():
    config = GameConfig(branching=4, random_branching=True, depth=8, seed=11)
    r = run_tournament(PlayerSpec("alphabeta", 4), PlayerSpec("alphabeta", 1), config, 60)
    assert r["a_wins"] > 3 * r["b_wins"]


def test_resume_after_interruption_gives_the_same_totals(tmp_path):
    config = GameConfig(branching=3, random_branching=True, depth=6, seed=4)
    a, b = PlayerSpec.parse("fe:depth=2,delta=0.5"), PlayerSpec.parse("alphabeta:depth=2")
    full = run_tournament(a, b, config, 30, out=tmp_path / "full.jsonl")
    # an interrupted run: the first 12 pairs and half a line on disk
    part = tmp_path / "part.jsonl"
    lines = (tmp_path / "full.jsonl").read_text().splitlines()
    part.write_text("\n".join(lines[:12]) + "\n" + lines[12][:20])
    resumed = run_tournament(a, b, config, 30, out=part, resume=True)
    assert {k: full[k] for k in ("a_wins", "b_wins", "ties", "nodes_a", "nodes_b")} == \
        {k: resumed[k] for k in ("a_wins", "b_wins", "ties", "nodes_a", "nodes_b")}
    records = [json.loads(x) for x in part.read_text().splitlines()]  # every line parses
    assert sorted(r["pair"] for r in records) == list(range(30))
    with pytest.raises(ValueError, match="--resume"):
        run_tournament(a, b, config, 30, out=part)


def test_depth_increment_protocol():
    config = GameConfig(branching=3, random_branching=True, depth=6, seed=8)
    rounds = depth_increment_protocol(PlayerSpec.parse("fe:delta=0.5"), PlayerSpec("alphabeta"), config, 10,
                                      max_horizon=3)
    assert rounds[0]["horizon_a"] == rounds[0]["horizon_b"] == 1
    for prev, nxt in zip(rounds, rounds[1:]):
        key = "horizon_a" if prev["incremented"] == "a" else "horizon_b"
        assert nxt[key] == prev[key] + 1
        assert (prev["nodes_a"] < prev["nodes_b"]) == (prev["incremented"] == "a") or prev["nodes_a"] == prev["nodes_b"]
    points = more_less_points(rounds)
    assert all(p["more"] is None or p["more"]["nodes_a"] > p["more"]["nodes_b"] for p in points)


def test_player_spec_parsing():
    s = PlayerSpec.parse("fe:depth=4,delta=0.5,bounds=exact")
    assert (s.kind, s.horizon, s.delta, s.bounds) == ("fe", 4, 0.5, "exact")
    assert PlayerSpec.parse(str(s)) == s
    for bad in ("mcts", "fe:depth=0", "fe:delta=2", "alphabeta:delta=0.5", "fe:depth", "fe:bounds=weird"):
        with pytest.raises(ValueError):
            PlayerSpec.parse(bad)
    r = play_pair(PlayerSpec("alphabeta", 2), PlayerSpec("alphabeta", 1), GameConfig(depth=4), 0)
    assert r["winner"] in ("a", "b", "tie") and r["nodes_a"] > 0

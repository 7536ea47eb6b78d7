"""Tree-parallel MCTS (the CPU twin of the shared-tree GPU search): tree
invariants, the unique winning move, a full pool, the search options and the
agent spec. The GPU kernel against this twin is in test_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.kernels.sentinels import NO_NODE, POOL_FULL
from jitsearch.kernels.tree_step import REWARD_UNITS, log_table_for
from jitsearch.mcts.multi import tree_keys_for
from jitsearch.mcts.search import mcts_search
from jitsearch.mcts.shared import search_many_shared, tree_parallel_search

import kalah_trees
from kalah_trees import SharedTrees, grow_shared_cpu
from test_multi_mcts import _unique_winning_positions


def grow(state, trees=2, capacity=4000, iterations=300, playouts=3, reward=0, formula=0, chunks=1, seed=5):
    m = state.houses
    boards = np.stack([np.asarray(state.board, np.int32)] * trees)
    players = np.full(trees, state.player, np.int32)
    tr = SharedTrees(trees, capacity, boards, players)
    keys = tree_keys_for(seed, trees)
    totals = boards.astype(np.int64).sum(1)
    done = 0
    for k in range(chunks):
        todo = iterations // chunks + (iterations % chunks if k == chunks - 1 else 0)
        grow_shared_cpu(*tr.arrays(), tr.root_boards, tr.root_players, keys, totals, log_table_for(iterations + 4),
                        capacity, m, 1.4, formula, reward, playouts, state.empty_capture, 1 << 30, 0.0, done, todo)
        done += todo
    return tr


def _walk(tr, g, state):
    """Yield (node, KalahState) for every node reachable from tree g's root, by replaying moves."""
    base = g * tr.capacity
    stack = [(0, state)]
    while stack:
        node, s = stack.pop()
        yield node, s
        f = int(tr.first_child[base + node])
        if f >= 0:
            for j in range(int(tr.num_children[base + node])):
                ch = f + j
                stack.append((ch, s.play(int(tr.move[base + ch]))))


@pytest.mark.slow
@pytest.mark.parametrize("houses,seeds,empty_capture,reward", [(3, 3, False, 0), (4, 2, True, 1), (6, 4, False, 0)])
def test_tree_invariants(houses, seeds, empty_capture, reward):
    """Children are the legal moves in house order; every iteration ends at
    exactly one node (a node's visits minus its children's count the
    descents that ended there: at most one for an expanded node, the visit
    that took it as the first child of its parent's expansion); values lie
    within their visits' bounds; the root's visits equal the iterations."""
    s = KalahState.initial(houses, seeds, empty_capture=empty_capture)
    tr = grow(s, iterations=400, reward=reward, chunks=3)
    units_all = 3 * REWARD_UNITS
    for g in range(2):
        base = g * tr.capacity
        assert tr.visits[base] == 400
        seen = ends = 0
        for node, st in _walk(tr, g, s):
            seen += 1
            i = base + node
            assert 0 <= tr.value[i] <= tr.visits[i] * units_all
            f = int(tr.first_child[i])
            if f >= 0:
                n = int(tr.num_children[i])
                assert [int(tr.move[base + f + j]) for j in range(n)] == st.legal_moves()
                end = tr.visits[i] - tr.visits[base + f:base + f + n].sum()
                assert end in (0, 1) or (node == 0 and end == 0)
            else:
                assert f == NO_NODE
                end = tr.visits[i]
                assert end <= 1 or st.is_over
            ends += end
        assert ends == 400
        assert seen == tr.size[g]


def test_chunks_do_not_change_the_tree():
    s = KalahState.initial(4, 3)
    a = grow(s, iterations=250, chunks=1)
    b = grow(s, iterations=250, chunks=4)
    for x, y in zip(a.arrays(), b.arrays()):
        assert np.array_equal(x, y)


@pytest.mark.slow
def test_picks_the_unique_winning_move():
    for s, winner in _unique_winning_positions(6):
        r = tree_parallel_search(s, iterations=600, playouts=4, backend="cpu", seed=1)
        assert r["move"] == winner, (s.to_text(), r["children"])


def test_the_warm_up_and_every_search_share_one_compiled_signature():
    """A read-only root board (a state's, as the warm-up passes it) and a writable stack (the searches') reach the
    kernel as the same type: one compile, not one per caller (the warm-up used to compile a variant no search
    used)."""
    s = KalahState.initial(4, 3)
    assert not s.board.flags.writeable
    tree_parallel_search(s, iterations=20, playouts=1, trees=2, backend="cpu", seed=1)
    grow(s, iterations=20)
    grow_shared_range = kalah_trees.grow_shared_range
    assert len(grow_shared_range.signatures) == 1, grow_shared_range.signatures


def test_root_visits_equal_the_iterations_and_values_are_the_movers():
    s = KalahState.initial(4, 3).play(2)  # player 1 to move
    r = tree_parallel_search(s, iterations=120, playouts=2, trees=3, backend="cpu", seed=2)
    assert r["iterations"] == 360 and r["simulations"] == 720
    assert sum(c["visits"] for c in r["children"]) == 360
    assert {c["move"] for c in r["children"]} == set(s.legal_moves())
    # against brute force: a child's value is the mean of the mover's rewards, so in [0, 1]
    assert all(0.0 <= c["value"] <= 1.0 for c in r["children"] if c["visits"])
    t = tree_parallel_search(s, time=0.2, playouts=1, backend="cpu", seed=2)
    assert t["iterations"] > 0 and sum(c["visits"] for c in t["children"]) == t["iterations"]


def test_a_full_pool_stops_expanding_and_writes_nothing_past_its_end():
    m = 3
    s = KalahState.initial(m, 3)
    cap = 1 + 3 + 3  # the root, its children, one more expansion
    tr = SharedTrees(2, cap + 5, np.stack([np.asarray(s.board, np.int32)] * 2), np.zeros(2, np.int32))
    sentinel = tr.move.copy()
    grow_shared_cpu(*tr.arrays(), tr.root_boards, tr.root_players, tree_keys_for(1, 2),
                    tr.root_boards.astype(np.int64).sum(1), log_table_for(1024), cap, m, 1.4, 0, 0, 2, False,
                    1 << 30, 0.0, 0, 200)
    # tree 0 lives in [0, cap), tree 1 in [cap, 2 cap): nothing written at or beyond 2 * cap
    assert np.array_equal(tr.move[2 * cap:], sentinel[2 * cap:])
    assert (tr.visits[[0, cap]] == 200).all()
    assert (tr.first_child[:2 * cap] == POOL_FULL).any()
    r = tree_parallel_search(s, iterations=300, playouts=2, capacity=m + 1, backend="cpu")
    assert r["nodes"] <= m + 1 and sum(c["visits"] for c in r["children"]) == 300


def test_many_positions_equal_each_alone():
    s = KalahState.initial(3, 3)
    states = [s, s.play(1), s.play(3)]
    together = search_many_shared(states, [4, 5, 6], trees=2, iterations=40, playouts=2, backend="cpu")
    for st, seed, r in zip(states, [4, 5, 6], together):
        alone = tree_parallel_search(st, seed=seed, trees=2, iterations=40, playouts=2, backend="cpu")
        assert alone["children"] == r["children"] and alone["move"] == r["move"]


def test_mcts_search_and_agent_specs_reach_the_tree_parallel_search():
    from jitsearch.arena.agents import parse_agent

    s = KalahState.initial(3, 3)
    a = mcts_search(s, iterations=60, playouts=2, backend="cpu", parallel="tree", seed=3)
    b = tree_parallel_search(s, iterations=60, playouts=2, backend="cpu", seed=3)
    assert a["children"] == b["children"] and a["parallel"] == "tree"
    agent = parse_agent("mcts:iterations=60,playouts=2,backend=cpu,parallel=tree", seed=3)
    assert agent.lockstep and agent(s) in s.legal_moves()


def test_lockstep_games_equal_games_played_one_at_a_time(tmp_path):
    import json

    from jitsearch.arena.matches import run_kalah_tournament
    from conftest import kalah_match as KalahMatch
    from jitsearch.arena.game_match import play_one

    spec = "mcts:iterations=40,playouts=2,backend=cpu,parallel=tree,trees=2"
    match = KalahMatch(3, 3, False, 300, 2, seed=5)
    one_by_one = [play_one(spec, "alphabeta:depth=2", match, p, seat) for p in range(2) for seat in (0, 1)]
    r = run_kalah_tournament(spec, "alphabeta:depth=2", match, 2, lockstep=True, out=tmp_path / "g.jsonl")
    assert r["games"] == 4
    records = {(x["pair"], x["seat"]): x for x in map(json.loads, (tmp_path / "g.jsonl").read_text().splitlines())}
    for rec in one_by_one:
        got = records[(rec["pair"], rec["seat"])]
        assert {k: got[k] for k in rec} == rec


@pytest.mark.parametrize("options,fragment", [
    (dict(parallel="tree"), "give backend="),
    (dict(backend="cpu", parallel="leaf"), "parallel"),
    (dict(backend="cpu", blocks=4), "parallel=tree"),
    (dict(backend="cpu", parallel="tree", blocks=4), "needs the GPU"),
    (dict(backend="cpu", parallel="tree", leaves=4), "leaves= applies to parallel=root"),
    (dict(backend="cpu", parallel="tree", blocks=0), "blocks"),
])
def test_bad_options_are_one_clear_error(options, fragment):
    s = KalahState.initial(3, 3)
    with pytest.raises(ValueError, match=fragment):
        mcts_search(s, iterations=10, **options)

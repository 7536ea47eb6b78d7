"""Incremental random trees, forward estimation, and the perfect-ordering count."""

from __future__ import annotations

import numpy as np
import pytest

from jitsearch import EdgeBounds, IncrementalTree, alphabeta, forward_estimation, naive, perfect_ordering_generations, solve
from jitsearch.search import incremental_alphabeta

from conftest import incremental_costs_py


def _trees(count, b=3, d=5, seed0=0):
    for s in range(count):
        yield IncrementalTree(b, d, seed=seed0 + s, random_branching=bool(s % 2))


@pytest.mark.slow
def test_tree_matches_its_pure_python_twin():
    for tree in _trees(20, b=3, d=4):
        e = tree.to_explicit()
        costs = incremental_costs_py(tree)
        assert e.num_nodes == len(costs)
        leaves = e.is_leaf
        assert np.array_equal(e.leaf_value[leaves], np.array(costs)[leaves])
        nc = e.num_children[~leaves]
        assert nc.min() >= 1 and nc.max() <= tree.max_branching


@pytest.mark.slow
def test_edge_costs_cover_the_range():
    edges = IncrementalTree(10, 4, seed=1).edge_costs()
    assert edges.min() >= -(2**15) + 1 and edges.max() <= 2**15
    assert edges.min() < -(2**15) * 0.99 and edges.max() > 2**15 * 0.99
    counts = np.bincount([IncrementalTree(5, 1, seed=s, random_branching=True).to_explicit().num_children[0]
                          for s in range(2000)], minlength=10)
    assert counts[0] == 0 and counts[10:].sum() == 0 and counts[1:10].min() > 150  # uniform on 1..9


@pytest.mark.slow
@pytest.mark.parametrize("b, d", [(1, 4), (2, 8), (3, 5), (5, 4)])
def test_fe_with_exact_bounds_is_exact_and_never_generates_more(b, d):
    for tree in _trees(120, b, d):
        value, _ = naive.minimax(tree.to_explicit())
        ab = incremental_alphabeta(tree)
        fe = forward_estimation(tree, bounds="exact", delta=1.0)
        assert ab.value == fe.value == value
        assert fe.extra["node_generations"] <= ab.extra["node_generations"]
        # alpha-beta on the implicit tree counts like alpha-beta on the explicit copy
        ex = alphabeta(tree.to_explicit())
        assert ab.best_move == ex.best_move and ab.extra["node_generations"] == ex.nodes_visited - 1


def test_fe_at_every_search_depth_matches_depth_limited_minimax():
    for tree in _trees(40, b=3, d=6):
        for k in range(0, 7):
            ref = alphabeta(tree.to_explicit(depth=k)) if k else None
            fe = forward_estimation(tree, depth=k)
            if ref is None:
                assert fe.value == 0 and fe.best_move == -1
            else:
                assert fe.value == ref.value


def test_online_bounds_are_never_wider_than_exact():
    for tree in _trees(100, b=4, d=5):
        r = forward_estimation(tree, bounds="online")
        assert tree.edge_lo <= r.extra["edge_lo"] <= r.extra["edge_hi"] <= tree.edge_hi
        assert r.extra["node_generations"] <= incremental_alphabeta(tree).extra["node_generations"]


def test_delta_below_one_can_change_the_value():
    changed = [s for s in range(200)
               if forward_estimation(IncrementalTree(3, 6, seed=s), delta=0.2).value
               != incremental_alphabeta(IncrementalTree(3, 6, seed=s)).value]
    assert changed, "delta = 0.2 never changed the value on 200 trees"
    s = changed[0]
    tree = IncrementalTree(3, 6, seed=s)
    fe = forward_estimation(tree, delta=0.2)
    assert fe.extra["node_generations"] < incremental_alphabeta(tree).extra["node_generations"]


@pytest.mark.parametrize("b, d", [(2, 1), (2, 6), (3, 5), (4, 4), (1, 5)])
def test_perfect_ordering_formula_equals_the_critical_tree(b, d):
    tree = IncrementalTree(b, d, seed=3)
    formula = perfect_ordering_generations(tree)
    # the same count from the critical-tree walk, forced by using random branching's code path on the
    # materialised tree: alpha-beta on the perfectly ordered copy generates exactly the critical tree
    ordered = tree.to_explicit().perfectly_ordered()
    assert alphabeta(ordered).nodes_visited - 1 == formula


def test_perfect_ordering_is_alphabeta_on_the_best_first_copy():
    for s in range(60):
        for rb in (False, True):
            tree = IncrementalTree(3, 6, seed=s, random_branching=rb)
            lb = perfect_ordering_generations(tree)
            ordered = tree.to_explicit().perfectly_ordered()
            assert alphabeta(ordered).nodes_visited - 1 == lb
            if not rb:  # Knuth-Moore: a lower bound for every order on uniform trees
                assert lb <= incremental_alphabeta(tree).extra["node_generations"]
    with pytest.raises(ValueError, match="full pass"):
        perfect_ordering_generations(IncrementalTree(10, 20, random_branching=True))


def test_best_first_is_not_a_lower_bound_with_random_branching():
    """Counterexample: with random branching, best-first order is not the cheapest.

    A CUT node needs one refuting child; best-first order refutes with the
    best child, whose subtree can be bushier than another child's that
    refutes too. On this tree LB (best-first alpha-beta) generates 72 nodes
    and alpha-beta in natural order 71.
    """
    tree = IncrementalTree(3, 6, seed=28, random_branching=True)
    assert perfect_ordering_generations(tree) == 72
    assert incremental_alphabeta(tree).extra["node_generations"] == 71


def test_edge_bounds_learned_offline_save_and_load(tmp_path):
    learned = EdgeBounds.learn(5, trees=5, depth=3)
    assert -(2**15) + 1 <= learned.lo < learned.hi <= 2**15
    lo, hi = learned.likely(0.9)
    assert learned.lo < lo < hi < learned.hi
    learned.save(tmp_path / "b.json")
    assert EdgeBounds.load(tmp_path / "b.json") == learned
    tree = IncrementalTree(5, 6, seed=9)
    r = forward_estimation(tree, bounds=learned)
    assert r.extra["bounds"] == "offline"
    assert forward_estimation(tree, bounds=(lo, hi)).extra["node_generations"] <= \
        incremental_alphabeta(tree).extra["node_generations"]
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not an edge-bounds file"):
        EdgeBounds.load(tmp_path / "bad.json")


def test_solve_dispatch_and_errors():
    tree = IncrementalTree(3, 4, seed=1)
    assert solve(tree, "fe").value == solve(tree, "alphabeta").value == solve(tree, "fsss").value
    with pytest.raises(ValueError, match="incremental tree"):
        from jitsearch import UniformTree
        solve(UniformTree(2, 3), "fe")
    with pytest.raises(ValueError, match="delta"):
        forward_estimation(tree, delta=0)
    with pytest.raises(ValueError, match="search depth"):
        forward_estimation(tree, depth=9)
    with pytest.raises(ValueError, match="bounds"):
        forward_estimation(tree, bounds="psychic")
    with pytest.raises(ValueError, match="branching"):
        IncrementalTree(0, 3)
    with pytest.raises(ValueError, match="edge costs"):
        IncrementalTree(2, 3, edge_lo=5, edge_hi=1)

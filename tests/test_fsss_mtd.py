"""FSSS-Minimax, MTD(+inf) and MTD(f): exactness, the dominance theorem, refinements."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitsearch import ExplicitTree, UniformTree, alphabeta, fsss, mtd_inf, mtdf
from jitsearch import naive

from conftest import VALUE_KINDS, random_nested


def _trees(count, max_depth=6, kinds=VALUE_KINDS, seed0=0):
    for i in range(count):
        rng = np.random.default_rng(seed0 + i)
        yield ExplicitTree.from_nested(
            random_nested(rng, int(rng.integers(0, max_depth + 1)), kinds[i % len(kinds)]),
            root="max" if i % 3 else "min",
        )


def _tiny_gap_trees(count):
    eps = np.finfo(float).eps
    for s in range(count):
        rng = np.random.default_rng(s)
        leaves = 1.0 + rng.integers(0, 6, size=16) * eps  # neighbours 1 ulp apart
        yield ExplicitTree.from_uniform_leaves(2, 4, leaves)
        yield ExplicitTree.from_uniform_leaves(3, 3, -(2.0**-1074) * rng.integers(0, 4, size=27))


def _optimal_move(tree, move, value):
    return move >= 0 and tree.node_values()[tree.first_child[0] + move] == value


@pytest.mark.slow
@pytest.mark.parametrize("solver", [fsss, pytest.param(mtd_inf, marks=pytest.mark.slow), mtdf])
def test_exact_on_random_and_tiny_gap_trees(solver):
    trees = list(_trees(300)) + list(_tiny_gap_trees(30))
    for tree in trees:
        value, _ = naive.minimax(tree)
        r = solver(tree)
        assert r.value == value
        if tree.num_children[0]:
            assert _optimal_move(tree, r.best_move, value)


@pytest.mark.parametrize("guess", [-1e9, -1.0, 0.0, 0.5, 2.0, 1e9, float("inf"), float("-inf")])
def test_mtdf_any_first_guess(guess):
    for tree in _trees(60, kinds=("ties", "float")):
        assert mtdf(tree, first_guess=guess).value == naive.minimax(tree)[0]


@pytest.mark.slow
@pytest.mark.parametrize("values", [pytest.param("int", marks=pytest.mark.slow),
                                    pytest.param("binary", marks=pytest.mark.slow), "float"])
def test_uniform_trees_all_storages(values):
    for seed in range(6):
        u = UniformTree(2, 9, seed=seed, values=values, root="min" if seed % 2 else "max")
        v = naive.minimax(u)[0]
        ref = fsss(u, trace=True)
        assert ref.value == v and ref.extra["storage"] == "pool"
        for storage in ("dense", "hash", "auto"):
            r = fsss(u, storage=storage, trace=True)
            assert np.array_equal(r.trace, ref.trace) and r.nodes_visited == ref.nodes_visited
        assert fsss(u.to_explicit(), trace=True).trace.tolist() == ref.trace.tolist()
        for storage in ("dense", "hash"):
            m = mtd_inf(u, storage=storage, trace=True)
            assert m.value == v and m.extra["storage"] == storage


@pytest.mark.slow
def test_hash_tables_grow():
    # a tree big enough that the hash tables start small and double many times
    u = UniformTree(2, 14, seed=3)
    a = fsss(u, storage="hash", trace=True, restart_deepest=True)
    b = fsss(u, trace=True)
    assert np.array_equal(a.trace, b.trace)
    assert a.extra["peak_bytes"] > 24 * 4096 * 2
    assert mtd_inf(u, storage="hash").value == mtd_inf(u, storage="dense").value


# -- the theorem (Weinstein, Littman & Goschin, section 5) ---------------------------------------------

def test_fsss_leaves_subset_of_alphabeta_leaves():
    for tree in _trees(400):
        ab = set(alphabeta(tree, trace=True).trace.tolist())
        f = fsss(tree, trace=True)
        assert set(f.trace.tolist()) <= ab
        assert len(set(f.trace.tolist())) == f.leaves_expanded == f.extra["rollouts"]
        m = mtd_inf(tree, trace=True)
        assert set(m.trace.tolist()) <= ab and m.leaves_expanded <= len(ab)


leaf_values = st.one_of(
    st.integers(0, 1),
    st.integers(0, 3),
    st.integers(-(2**31), 2**31),
    st.floats(-1.0, 1.0, allow_nan=False),
)
nested = st.recursive(leaf_values, lambda kids: st.lists(kids, min_size=1, max_size=4), max_leaves=80)


@settings(max_examples=400, deadline=None)
@given(nested, st.sampled_from(["max", "min"]))
@pytest.mark.slow
def test_dominance_property(obj, root):
    tree = ExplicitTree.from_nested(obj, root=root)
    value = naive.minimax(tree)[0]
    ab = alphabeta(tree, trace=True)
    ab_set = set(ab.trace.tolist())
    f = fsss(tree, trace=True)
    assert f.value == value
    assert set(f.trace.tolist()) <= ab_set
    m = mtd_inf(tree, trace=True)
    assert m.value == value and m.leaves_expanded <= ab.leaves_expanded and set(m.trace.tolist()) <= ab_set
    lv = tree.leaf_value[tree.is_leaf]
    fd = fsss(tree, value_range=(lv.min(), lv.max()), trace=True)
    assert fd.value == value and set(fd.trace.tolist()) <= ab_set


# -- refinements -----------------------------------------------------------------

def test_restart_deepest_expands_the_same_leaf_sequence():
    trees = list(_trees(300)) + [UniformTree(3, 7, seed=s) for s in range(5)]
    for tree in trees:
        plain = fsss(tree, trace=True)
        fast = fsss(tree, trace=True, restart_deepest=True)
        assert np.array_equal(plain.trace, fast.trace)
        assert fast.value == plain.value and fast.best_move == plain.best_move
        assert fast.nodes_visited <= plain.nodes_visited


def test_stop_when_proven_returns_the_full_solve_move():
    for i, tree in enumerate(_trees(300, kinds=("float", "wide"))):
        full = fsss(tree)
        early = fsss(tree, stop_when_proven=True, restart_deepest=bool(i % 2))
        if tree.num_children[0] == 0:
            continue
        assert early.best_move == full.best_move  # distinct leaf values: one best move
        assert early.leaves_expanded <= full.leaves_expanded
        lo, up = early.extra["lower"], early.extra["upper"]
        assert lo <= full.value <= up
    # with ties the move is still an optimal one
    for tree in _trees(200, kinds=("ties", "binary")):
        if tree.num_children[0]:
            early = fsss(tree, stop_when_proven=True)
            assert _optimal_move(tree, early.best_move, naive.minimax(tree)[0])


def test_value_range_is_exact_and_within_alphabeta():
    more = fewer = 0
    for tree in _trees(400, kinds=("ties", "binary", "wide")):
        lv = tree.leaf_value[tree.is_leaf]
        plain = fsss(tree)
        ranged = fsss(tree, value_range=(lv.min(), lv.max()), trace=True)
        assert ranged.value == plain.value
        assert set(ranged.trace.tolist()) <= set(alphabeta(tree, trace=True).trace.tolist())
        more += ranged.leaves_expanded > plain.leaves_expanded
        fewer += ranged.leaves_expanded < plain.leaves_expanded
    assert fewer > 5 * more  # tighter initial bounds usually prune more ...


def test_value_range_counterexample():
    """... but not always: FSSS is not monotone in its initial bounds.

    Root MAX with one MIN child over A = MAX[2, 3] and B = MAX[2]. With
    (-inf, inf) bounds, after leaf 0 (2) A is [2, inf] and B [-inf, inf]: the
    MIN node picks argmin L' = B, expands leaf 2 (2) and is closed at 2.
    With the admissible range [2, 3], B starts at [2, 3], ties A's L = 2,
    and the tie goes to the left: A's leaf 1 is expanded too (alpha-beta
    expands all three as well, so dominance still holds).
    """
    tree = ExplicitTree.from_nested([[[2, 3], [2]]])
    assert fsss(tree, trace=True).trace.tolist() == [0, 2]
    ranged = fsss(tree, value_range=(2, 3), trace=True)
    assert ranged.trace.tolist() == [0, 1, 2] and ranged.value == 2
    assert alphabeta(tree).leaves_expanded == 3


@pytest.mark.slow
def test_value_range_must_be_admissible():
    tree = ExplicitTree.from_nested([[1, 5], [2, 3]])
    with pytest.raises(ValueError, match="not admissible"):
        fsss(tree, value_range=(2, 5))
    with pytest.raises(ValueError, match="not admissible"):
        fsss(UniformTree(2, 4), value_range=(0, 1))
    with pytest.raises(ValueError, match="lo <= hi"):
        fsss(tree, value_range=(5, 1))
    assert fsss(UniformTree(2, 8, seed=1, values="binary"), value_range=(0, 1)).value == naive.minimax(
        UniformTree(2, 8, seed=1, values="binary"))[0]


@pytest.mark.slow
def test_anytime_budget():
    u = UniformTree(2, 12, seed=5)
    v = naive.minimax(u)[0]
    full = fsss(u, trace=True)
    for k in (0, 1, 10, 100):
        r = fsss(u, max_leaves=k, trace=True)
        assert r.leaves_expanded == k and r.extra["stopped"] == "max_leaves" and not r.extra["exact"]
        assert r.trace.tolist() == full.trace[:k].tolist()
        assert r.extra["lower"] <= v <= r.extra["upper"]
        assert 0 <= r.best_move < 2
    r = fsss(u, max_leaves=10**9)
    assert r.extra["exact"] and r.value == v
    # far too big to solve in 0.2 s on any machine (about 10**9 leaves to expand)
    t = fsss(UniformTree(2, 40, seed=1), max_seconds=0.2, restart_deepest=True)
    assert t.extra["stopped"] == "max_seconds" and t.extra["lower"] <= t.extra["upper"]
    with pytest.raises(ValueError, match="max_leaves"):
        fsss(u, max_leaves=-1)
    with pytest.raises(ValueError, match="max_seconds"):
        fsss(u, max_seconds=0)


def test_memory_limits_are_enforced():
    u = UniformTree(2, 16, seed=1)
    for storage in ("pool", "hash"):
        with pytest.raises(ValueError, match="memory limit"):
            fsss(u, storage=storage, max_bytes=200_000)
    with pytest.raises(ValueError, match="memory limit"):
        mtd_inf(u, storage="hash", max_bytes=200_000)
    with pytest.raises(ValueError, match="dense bound storage"):
        fsss(UniformTree(2, 30), storage="dense")
    with pytest.raises(ValueError, match="storage must be"):
        fsss(u, storage="disk")


def test_peak_bytes_reported():
    u = UniformTree(2, 10, seed=2)
    for r in (fsss(u), mtd_inf(u), mtdf(u)):
        assert r.extra["peak_bytes"] > 0

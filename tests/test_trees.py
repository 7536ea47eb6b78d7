"""Tree construction, formats, validation and the leaf hash."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jitsearch import ExplicitTree, UniformTree, load_tree
from jitsearch.trees import leaf_hash_py
from jitsearch.trees.explicit import tree_from_json_obj

from conftest import random_nested


def test_nested_layout_is_breadth_first_csr():
    #        MAX
    #       /    \
    #     MIN     MIN
    #    /  \    /   \
    #   3    5  2    MAX
    #               /   \
    #              9     1
    t = ExplicitTree.from_nested([[3, 5], [2, [9, 1]]])
    assert t.num_nodes == 9 and t.num_leaves == 5 and t.height == 3
    assert t.first_child.tolist()[:3] == [1, 3, 5]
    assert t.num_children.tolist() == [2, 2, 2, 0, 0, 0, 2, 0, 0]
    assert t.to_move.tolist() == [1, -1, -1, 1, 1, 1, 1, -1, -1]
    assert t.leaf_values().tolist() == [3, 5, 2, 9, 1]
    assert t.leaf_number[t.leaves_in_order()].tolist() == [0, 1, 2, 3, 4]
    assert t.integral


def test_node_objects_override_mover_and_carry_losses():
    obj = {"children": [{"value": 1, "loss_a": 2, "loss_b": 3}, {"to_move": "max", "children": [4, 5]}]}
    t = ExplicitTree.from_nested(obj)
    assert t.to_move.tolist() == [1, -1, 1, -1, -1]
    assert t.loss_a[1] == 2 and t.loss_b[1] == 3 and np.isnan(t.loss_a[2])
    assert tree_from_json_obj(t.to_nested()).to_nested() == t.to_nested()


@pytest.mark.parametrize("seed", range(20))
def test_json_and_npz_round_trip(tmp_path, seed):
    rng = np.random.default_rng(seed)
    t = ExplicitTree.from_nested(random_nested(rng, 5, "float" if seed % 2 else "ties"))
    t.save_json(tmp_path / "t.json")
    t.save_npz(tmp_path / "t.npz")
    for back in (load_tree(tmp_path / "t.json"), load_tree(tmp_path / "t.npz")):
        assert np.array_equal(back.first_child, t.first_child)
        assert np.array_equal(back.num_children, t.num_children)
        assert np.array_equal(back.to_move, t.to_move)
        assert np.array_equal(back.leaf_value, t.leaf_value)
        assert np.array_equal(back.leaf_number, t.leaf_number)


def test_uniform_json_form_round_trip(tmp_path):
    u = UniformTree(3, 3, seed=7, values="int", lo=-5, hi=5).to_explicit()
    u.save_json(tmp_path / "u.json", uniform=True)
    obj = json.loads((tmp_path / "u.json").read_text())
    assert obj["branching"] == 3 and obj["height"] == 3 and len(obj["leaves"]) == 27
    back = load_tree(tmp_path / "u.json")
    assert np.array_equal(back.leaf_values(), u.leaf_values())
    with pytest.raises(ValueError, match="not uniform"):
        ExplicitTree.from_nested([[1, 2], 3]).to_json_obj(uniform=True)


@pytest.mark.parametrize("values", ["int", "binary", "float"])
def test_kernel_hash_matches_pure_python_twin(values):
    u = UniformTree(3, 5, seed=99, values=values)
    kernel = u.leaf_values()
    python = np.array([u.leaf_value(j) for j in range(u.num_leaves)])
    assert np.array_equal(kernel, python)
    lo, hi = u.value_range
    assert kernel.min() >= lo and kernel.max() <= hi
    if values == "float":
        assert kernel.max() < hi
    if values == "binary":
        assert set(np.unique(kernel)) == {0.0, 1.0}


def test_hash_depends_on_seed_and_leaf():
    assert leaf_hash_py(1, 0) != leaf_hash_py(2, 0)
    assert leaf_hash_py(1, 0) != leaf_hash_py(1, 1)
    a = UniformTree(2, 10, seed=1).leaf_values()
    b = UniformTree(2, 10, seed=2).leaf_values()
    assert not np.array_equal(a, b)


def test_int_values_cover_the_range_evenly():
    v = UniformTree(2, 16, seed=3, values="int", lo=0, hi=9).leaf_values()
    counts = np.bincount(v.astype(int), minlength=10)
    assert counts.min() > 0.08 * v.size and counts.max() < 0.12 * v.size


def test_uniform_to_explicit_same_numbering():
    u = UniformTree(3, 4, seed=5, root="min")
    e = u.to_explicit()
    assert e.num_nodes == u.num_nodes and e.num_leaves == u.num_leaves
    assert e.to_move[0] == -1 and e.to_move[1] == 1
    assert np.array_equal(e.leaf_values(), u.leaf_values())


def test_perfectly_ordered_keeps_values_and_sorts_children():
    rng = np.random.default_rng(0)
    t = ExplicitTree.from_nested(random_nested(rng, 5, "float"))
    p = t.perfectly_ordered()
    vals = p.node_values()
    assert vals[0] == t.node_values()[0]
    for i in range(p.num_nodes):
        k = p.num_children[i]
        if k > 1:
            kids = vals[p.first_child[i] : p.first_child[i] + k]
            step = np.diff(kids) * p.to_move[i]
            assert np.all(step <= 0)


# -- bad input ---------------------------------------------------------------

@pytest.mark.parametrize(
    "obj, words",
    [
        ([[1, 2], []], "no children"),
        ([[1, "x"], [3, 4]], "must be a number"),
        ([[1, float("nan")], [3, 4]], "finite"),
        ([[1, float("inf")], [3, 4]], "finite"),
        ([[1, True], [3, 4]], "must be a number"),
        ([[1, 2**60], [3, 4]], "2\\*\\*53"),
        ({"children": [1], "value": 2}, "exactly one"),
        ({"kids": [1]}, "unknown key"),
        ({"children": [1, 2], "to_move": "red"}, "to_move"),
        ({"branching": 2, "height": 2, "leaves": [1, 2, 3]}, "need 4 leaves"),
        ({"branching": 0, "height": 2, "leaves": [1]}, "branching"),
        ({"branching": 2, "height": -1, "leaves": [1]}, "height"),
        ({"branching": 10, "height": 100, "leaves": [1]}, "need 10\\*\\*100 leaves"),
        ({"branching": 2, "leaves": [1]}, "needs 'height'"),
    ],
)
def test_bad_trees_raise_value_error(obj, words):
    with pytest.raises(ValueError, match=words):
        tree_from_json_obj(obj)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(branching=0, height=3), "branching"),
        (dict(branching=2, height=-1), "height"),
        (dict(branching=10, height=30), "64 bits"),
        (dict(branching=2, height=3, values="gauss"), "values must be"),
        (dict(branching=2, height=3, values="int", lo=5, hi=1), "lo must be <= hi"),
        (dict(branching=2, height=3, values="float", lo=1.0, hi=1.0), "lo < hi"),
        (dict(branching=2, height=3, root="both"), "root"),
        (dict(branching=2, height=3, seed=-1), "seed"),
    ],
)
def test_bad_uniform_trees(kwargs, words):
    with pytest.raises(ValueError, match=words):
        UniformTree(**kwargs)


def test_memory_is_estimated_before_allocating():
    u = UniformTree(2, 40)
    with pytest.raises(ValueError, match="needs about 8.0 TiB.*lower the height"):
        u.leaf_values()
    with pytest.raises(ValueError, match="above the limit"):
        UniformTree(2, 20).to_explicit(max_bytes=1024)


def test_load_tree_errors(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_tree(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("[[1, 2], [3")
    with pytest.raises(ValueError, match="malformed JSON"):
        load_tree(tmp_path / "bad.json")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="npz"):
        load_tree(tmp_path / "bad.npz")
    np.savez(tmp_path / "part.npz", first_child=np.zeros(1))
    with pytest.raises(ValueError, match="lacks"):
        load_tree(tmp_path / "part.npz")


@pytest.mark.parametrize(
    "arrays, words",
    [
        (([1, 0, 0], [2, 0, 0], [1, -1, -1], [0, 1, 2]), None),
        (([1, 0, 0], [3, 0, 0], [1, -1, -1], [0, 1, 2]), "inside"),
        (([0, 0, 0], [2, 0, 0], [1, -1, -1], [0, 1, 2]), "after the node"),
        (([1, 1, 0], [1, 1, 0], [1, -1, -1], [0, 1, 2]), "after the node"),
        (([1, 0, 0], [1, 0, 0], [1, -1, -1], [0, 1, 2]), "exactly one"),
        (([1, 0, 0], [2, 0, 0], [1, 0, -1], [0, 1, 2]), "to_move"),
        (([1, 0, 0], [2, 0, 0], [1, -1, -1], [0, 1, np.nan]), "finite"),
        (([1, 0], [2, 0, 0], [1, -1, -1], [0, 1, 2]), "shape"),
    ],
)
def test_from_arrays_validates_structure(arrays, words):
    if words is None:
        t = ExplicitTree.from_arrays(*arrays)
        assert t.num_leaves == 2
    else:
        with pytest.raises(ValueError, match=words):
            ExplicitTree.from_arrays(*arrays)


def test_deep_chain_does_not_overflow():
    # 20000 nested single-child lists: built iteratively, solved with an
    # explicit stack
    from jitsearch import alphabeta

    n = 20000
    first = np.arange(1, n + 2)
    num = np.ones(n + 1, dtype=np.int64)
    num[-1] = 0
    first[-1] = 0
    to_move = np.where(np.arange(n + 1) % 2 == 0, 1, -1)
    values = np.zeros(n + 1)
    values[-1] = 7
    t = ExplicitTree.from_arrays(first, num, to_move, values)
    assert t.height == n
    r = alphabeta(t)
    assert r.value == 7 and r.leaves_expanded == 1 and r.nodes_visited == n + 1

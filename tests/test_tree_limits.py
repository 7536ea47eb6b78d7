"""Hostile input for trees and tree solvers (issue 11): only ValueError, limits
checked before allocating, linear and cycle-safe parsing, resumable kernels."""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile

import numpy as np
import pytest

from jitsearch import ExplicitTree, UniformTree, alphabeta, fsss, minimax, mtd_inf, mtdf, solve, two_agent
from jitsearch.search import EdgeBounds, _limits, forward_estimation, incremental_alphabeta, \
    perfect_ordering_generations
from jitsearch.trees import IncrementalTree, load_tree, tree_from_json_obj
from jitsearch.trees.memory import check_bytes, format_bytes, machine_bytes, memory_guard

MIB = 1024**2


# -- constructors: types and ranges --------------------------------------------------

@pytest.mark.parametrize("kwargs, words", [
    (dict(branching=2.0, height=3), "branching must be an integer.*float"),
    (dict(branching=True, height=3), "branching must be an integer.*bool"),
    (dict(branching="2", height=3), "branching must be an integer.*str"),
    (dict(branching=2, height=3.0), "height must be an integer"),
    (dict(branching=2, height=3, seed=1.5), "seed"),
    (dict(branching=2, height=3, seed=2**64), "seed"),
    (dict(branching=2, height=3, values=["int"]), "values must be one of"),
    (dict(branching=2, height=3, root=True), "root"),
    (dict(branching=2, height=3, root=1.0), "root"),
    (dict(branching=2, height=3, lo="a", hi=3), "lo must be a number"),
    (dict(branching=2, height=3, values="float", lo=0.0, hi=float("inf")), "hi must be finite"),
    (dict(branching=2, height=3, leaf_cost=1.5), "leaf_cost"),
    (dict(branching=2**70, height=1), "branching"),
])
def test_uniform_tree_rejects_wrong_types(kwargs, words):
    with pytest.raises(ValueError, match=words):
        UniformTree(**kwargs)


def test_uniform_tree_accepts_numpy_integers_and_normalises_them():
    u = UniformTree(np.int64(2), np.int32(3), seed=np.uint64(5))
    assert type(u.branching) is int and type(u.height) is int and type(u.seed) is int
    assert u == UniformTree(2, 3, seed=5)
    json.dumps(u.describe())  # plain ints: JSON-serialisable


@pytest.mark.parametrize("b, h", [(2, 1100), (2, 10**23), (10**6, 10**20), (1, 2**62), (1, 10**30), (3, 63)])
def test_huge_heights_are_refused_fast_without_overflow(b, h):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="64 bits"):
        UniformTree(b, h)
    assert time.perf_counter() - t0 < 0.1


def test_branching_one_height_is_the_only_limit():
    # b = 1: 2**62 - 1 is the tallest tree an int64 node index allows
    assert UniformTree(1, 2**62 - 1).num_nodes == 2**62
    assert UniformTree(1, 10**8).num_leaves == 1


def test_tall_chain_stack_is_counted_and_refused_before_allocating():
    u = UniformTree(1, 100_000_000)
    small = 100 * MIB
    for run in (lambda: alphabeta(u, max_bytes=small), lambda: minimax(u, max_bytes=small),
                lambda: fsss(u, max_bytes=small), lambda: fsss(u, storage="hash", max_bytes=small),
                lambda: mtd_inf(u, max_bytes=small), lambda: mtdf(u, storage="hash", max_bytes=small),
                lambda: two_agent(u, max_bytes=small)):
        t0 = time.perf_counter()
        with pytest.raises(ValueError, match=r"height 100000000.*stack.*above the limit of 100\.0 MiB"):
            run()
        assert time.perf_counter() - t0 < 0.5
    # the same tree with room for its stack is solved (its one leaf)
    r = alphabeta(UniformTree(1, 1000, seed=3))
    assert r.leaves_expanded == 1 and r.nodes_visited == 1001


def test_explicit_tree_constructors_reject_wrong_types():
    with pytest.raises(ValueError, match="branching"):
        ExplicitTree.from_uniform_leaves(2.0, 1, [1, 2])
    with pytest.raises(ValueError, match="leaves must be a list"):
        ExplicitTree.from_uniform_leaves(2, 1, "12")
    with pytest.raises(ValueError, match="leaves must hold numbers"):
        ExplicitTree.from_uniform_leaves(2, 1, np.array(["a", "b"]))
    with pytest.raises(ValueError, match="integral"):
        ExplicitTree.from_uniform_leaves(2, 1, [1, 2], integral="yes")
    with pytest.raises(ValueError, match="max_bytes"):
        ExplicitTree.from_uniform_leaves(2, 1, [1, 2], max_bytes="1GiB")
    with pytest.raises(ValueError, match="loss_a must hold numbers"):
        ExplicitTree.from_arrays([1, 0, 0], [2, 0, 0], [1, -1, -1], [0, 1, 2], loss_a=[None, 1, 2])
    with pytest.raises(ValueError, match="worst_first"):
        ExplicitTree.from_nested([1, 2]).perfectly_ordered(worst_first="no")
    with pytest.raises(ValueError, match="to_move"):
        ExplicitTree.from_nested([1, 2], root=True)
    # a chain of 10**9 nodes from one leaf: refused by its size, not built
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="above the limit"):
        ExplicitTree.from_uniform_leaves(1, 10**9, [1.0])
    assert time.perf_counter() - t0 < 0.1


def test_incremental_tree_rejects_wrong_types():
    for kwargs, words in [
        (dict(branching=2.5, depth=3), "branching"),
        (dict(branching=2**40, depth=3), "branching"),
        (dict(branching=2, depth="3"), "depth"),
        (dict(branching=2, depth=3, random_branching=1), "random_branching"),
        (dict(branching=2, depth=3, edge_lo=0.5), "edge_lo"),
    ]:
        with pytest.raises(ValueError, match=words):
            IncrementalTree(**kwargs)
    tree = IncrementalTree(2, 3, seed=1)
    with pytest.raises(ValueError, match="depth"):
        tree.to_explicit("2")
    with pytest.raises(ValueError, match="max_bytes"):
        tree.to_explicit(max_bytes=1.5)
    with pytest.raises(ValueError, match="depth"):
        tree.edge_costs(depth=9)


# -- nested lists: linear time, cycles and sharing -------------------------------------

def _comb(levels):
    node = 0
    for i in range(levels):
        node = [node, i] if i % 2 else [i, node]
    return node


def test_from_nested_is_linear_on_deep_combs():
    comb = _comb(20_000)
    t0 = time.perf_counter()
    t = ExplicitTree.from_nested(comb)
    elapsed = time.perf_counter() - t0
    assert t.height == 20_000 and t.num_leaves == 20_001
    assert elapsed < 0.5, f"20,000-level comb took {elapsed:.2f} s"
    # an error deep in the comb still names its location
    bad = _comb(3)
    bad[1][0][0] = "x"
    with pytest.raises(ValueError, match=r"at root\[1\]\[0\]\[0\]"):
        ExplicitTree.from_nested(bad)


def test_from_nested_refuses_cycles_and_shared_sublists():
    loop = [1, 2]
    loop.append(loop)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"root\[2\] appears more than once.*contains itself"):
        ExplicitTree.from_nested(loop)
    assert time.perf_counter() - t0 < 0.1
    shared = [3, 4]
    with pytest.raises(ValueError, match="appears more than once"):
        ExplicitTree.from_nested([shared, [5, shared]])
    # a DAG that would unfold into 2**60 nodes is refused at once
    dag = [1, 2]
    for _ in range(60):
        dag = [dag, dag]
    with pytest.raises(ValueError, match="appears more than once"):
        ExplicitTree.from_nested(dag)
    node = {"children": [1, 2]}
    node["children"].append(node)
    with pytest.raises(ValueError, match="appears more than once"):
        ExplicitTree.from_nested(node)
    # equal but distinct lists are fine
    assert ExplicitTree.from_nested([[1, 2], [1, 2]]).num_leaves == 4


# -- loaders -------------------------------------------------------------------------------

def _npy_header_only(shape, dtype="<i8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_npz_with_huge_declared_arrays_is_refused_before_reading(tmp_path):
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w") as zf:
        for key in ("first_child", "num_children", "to_move", "leaf_value"):
            zf.writestr(key + ".npy", _npy_header_only((10**12,)))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"bomb\.npz.*declared.*above the limit"):
        load_tree(path)
    assert time.perf_counter() - t0 < 0.5
    with zipfile.ZipFile(tmp_path / "obj.npz", "w") as zf:
        zf.writestr("num_children.npy", _npy_header_only((3,), "|O"))
    with pytest.raises(ValueError, match="Python objects"):
        load_tree(tmp_path / "obj.npz")


def test_loaders_reject_wrong_types(tmp_path):
    with pytest.raises(ValueError, match="file path"):
        load_tree(None)
    good = tmp_path / "t.json"
    good.write_text("[[1, 2], [3, 4]]")
    with pytest.raises(ValueError, match="max_bytes must be an integer"):
        load_tree(good, max_bytes="1GiB")
    with pytest.raises(ValueError, match="above the limit"):
        load_tree(good, max_bytes=100)
    digits = tmp_path / "digits.json"
    digits.write_text("[1, " + "9" * 5000 + "]")
    with pytest.raises(ValueError, match="digits.json"):
        load_tree(digits)
    with pytest.raises(ValueError, match="to_move"):
        tree_from_json_obj({"branching": 2, "height": 1, "leaves": [1, 2], "root": [1]})
    with pytest.raises(ValueError, match="height must be an integer"):
        tree_from_json_obj({"branching": 2, "height": 1.5, "leaves": [1, 2]})
    t = ExplicitTree.from_nested([1, 2])
    with pytest.raises(ValueError, match="cannot write"):
        t.save_json(tmp_path / "missing_dir" / "t.json")
    with pytest.raises(ValueError, match="cannot write"):
        t.save_npz(tmp_path / "missing_dir" / "t.npz")


# -- memory checks --------------------------------------------------------------------------

def test_check_bytes_refuses_more_than_the_machine_holds():
    have, how = machine_bytes()
    if have is None:
        pytest.skip("this platform reports no memory size")
    with pytest.raises(ValueError, match=f"more than this machine's {how}"):
        check_bytes(2 * have, 10 * have, "a test allocation", "lower it")
    check_bytes(1024, 10 * have, "a test allocation", "lower it")  # small: fine


def test_check_bytes_never_overflows():
    huge = 2**5000
    assert format_bytes(huge) == "about 2**5000 B"
    with pytest.raises(ValueError, match=r"about 2\*\*5000 B"):
        check_bytes(huge, 2**30, "a huge thing", "lower it")
    with pytest.raises(ValueError, match="above the limit"):
        check_bytes(float("inf"), 2**30, "an infinite thing", "lower it")
    for bad in ("1GiB", 1.5, True, 0, -1):
        with pytest.raises(ValueError, match="max_bytes"):
            check_bytes(10, bad, "x", "y")


def test_memory_error_becomes_value_error():
    with pytest.raises(ValueError, match="not enough memory for the table: lower the size"):
        with memory_guard("the table", "lower the size"):
            raise MemoryError


# -- solvers: types and ranges ----------------------------------------------------------------

U = UniformTree(2, 6, seed=4)


@pytest.mark.parametrize("run, words", [
    (lambda: fsss(U, max_bytes="1GiB"), "max_bytes must be an integer.*str"),
    (lambda: fsss(U, max_bytes=2.0**30), "max_bytes must be an integer.*float"),
    (lambda: fsss(U, max_leaves=2**70), "max_leaves"),
    (lambda: fsss(U, max_leaves=10.0), "max_leaves.*float"),
    (lambda: fsss(U, max_leaves=True), "max_leaves.*bool"),
    (lambda: fsss(U, max_seconds=True), "max_seconds.*bool"),
    (lambda: fsss(U, max_seconds=float("nan")), "max_seconds.*NaN"),
    (lambda: fsss(U, max_seconds=float("inf")), "max_seconds must be finite"),
    (lambda: fsss(U, max_seconds="1"), "max_seconds.*str"),
    (lambda: fsss(U, restart_deepest=1), "restart_deepest must be True or False"),
    (lambda: fsss(U, stop_when_proven="yes"), "stop_when_proven"),
    (lambda: fsss(U, storage=None), "storage must be one of"),
    (lambda: fsss(U, value_range="ab"), "value_range must be a pair"),
    (lambda: fsss(U, value_range=("0", "1")), r"value_range\[0\] must be a number"),
    (lambda: fsss(U, dense_max_bytes=-1), "dense_max_bytes"),
    (lambda: fsss(U, cancel=True), "cancel"),
    (lambda: fsss(U, trace="yes"), "trace must be True or False"),
    (lambda: mtd_inf(U, max_bytes=0), "max_bytes must be > 0"),
    (lambda: mtd_inf(U, storage=["hash"]), "storage"),
    (lambda: mtdf(U, first_guess="1"), "first_guess must be a number.*str"),
    (lambda: mtdf(U, first_guess=float("nan")), "first_guess.*NaN"),
    (lambda: alphabeta(U, window=("1", "2")), r"window\[0\] must be a number"),
    (lambda: alphabeta(U, window=(1, 2, 3)), "window must be a pair"),
    (lambda: alphabeta(U, max_bytes=np.float64(1e9)), "max_bytes"),
    (lambda: minimax(U, trace=1), "trace"),
    (lambda: minimax("tree"), "ExplicitTree or UniformTree"),
    (lambda: two_agent(U, depth="2"), "depth must be an integer.*str"),
    (lambda: two_agent(U, depth=6.0), "depth must be an integer.*float"),
    (lambda: two_agent(ExplicitTree.from_nested([1, 2]), loss_threshold=float("nan")), "loss_threshold"),
    (lambda: solve(U, "alphabeta", bogus=1), "does not take the option.*bogus"),
    (lambda: solve(IncrementalTree(2, 3), "alphabeta", window=(0, 1)), "does not take the option.*window"),
    (lambda: solve(U, ["fsss"]), "unknown algorithm"),
    (lambda: forward_estimation(IncrementalTree(2, 3), delta="0.5"), "delta.*str"),
    (lambda: forward_estimation(IncrementalTree(2, 3), bounds=("0", "1")), "bounds"),
    (lambda: forward_estimation(IncrementalTree(2, 3), trace=1), "trace"),
    (lambda: incremental_alphabeta(IncrementalTree(2, 3), depth=2.0), "search depth"),
    (lambda: incremental_alphabeta(IncrementalTree(2, 3), max_bytes="x"), "max_bytes"),
    (lambda: perfect_ordering_generations(IncrementalTree(2, 3), depth="2"), "depth"),
    (lambda: perfect_ordering_generations(U), "IncrementalTree"),
    (lambda: EdgeBounds.learn(2, trees=1.5), "trees"),
    (lambda: EdgeBounds.learn(2, trees=10**9), "trees"),
])
def test_solvers_reject_wrong_types_with_value_error(run, words):
    with pytest.raises(ValueError, match=words):
        run()


@pytest.mark.slow
def test_numpy_scalars_are_accepted_by_solvers():
    r = fsss(U, max_leaves=np.int64(5), max_bytes=np.int64(2**30), max_seconds=np.float64(10.0))
    assert r.leaves_expanded == 5
    assert two_agent(U, depth=np.int32(6)).best_move == minimax(U).best_move


# -- chunked kernels: same search, interruptible -------------------------------------------------

def _tiny_chunks(monkeypatch):
    class Tiny(_limits.ChunkClock):
        def __init__(self, first=1, target=0.2, cap=1):
            super().__init__(first=1, target=target, cap=1)

        def done(self):
            pass

    monkeypatch.setattr("jitsearch.search.fsss_minimax.ChunkClock", Tiny)
    monkeypatch.setattr("jitsearch.search.mtd.ChunkClock", Tiny)


@pytest.mark.parametrize("storage", ["pool", pytest.param("hash", marks=pytest.mark.slow)])
def test_fsss_in_one_leaf_chunks_is_the_same_search(monkeypatch, storage):
    tree = UniformTree(3, 6, seed=11)
    whole = [fsss(tree, storage=storage, trace=True, restart_deepest=rd) for rd in (False, True)]
    _tiny_chunks(monkeypatch)
    for rd, ref in zip((False, True), whole):
        r = fsss(tree, storage=storage, trace=True, restart_deepest=rd)
        assert r.trace.tolist() == ref.trace.tolist()
        assert (r.value, r.best_move, r.nodes_visited, r.extra["rollouts"]) == \
            (ref.value, ref.best_move, ref.nodes_visited, ref.extra["rollouts"])


@pytest.mark.slow
def test_mtd_in_one_node_chunks_is_the_same_search(monkeypatch):
    tree = UniformTree(3, 7, seed=5)  # 2187 leaves: the hash table grows mid-test
    whole = [mtd_inf(tree, storage="hash", trace=True), mtdf(tree, storage="hash", trace=True)]
    _tiny_chunks(monkeypatch)
    for run, ref in zip((mtd_inf, mtdf), whole):
        r = run(tree, storage="hash", trace=True)
        assert r.trace.tolist() == ref.trace.tolist()
        assert (r.value, r.best_move, r.nodes_visited, r.extra["iterations"]) == \
            (ref.value, ref.best_move, ref.nodes_visited, ref.extra["iterations"])
        assert r.value == minimax(tree).value


@pytest.mark.slow
def test_cancel_event_stops_with_valid_bounds():
    tree = UniformTree(2, 40, seed=1)  # far too big to finish
    stop = threading.Event()
    stop.set()
    for r in (fsss(tree, cancel=stop), mtd_inf(tree, storage="hash", cancel=stop)):
        assert r.extra["interrupted"] is True and r.extra["stopped"] == "interrupted"
        assert r.extra["exact"] is False and r.extra["lower"] <= r.extra["upper"]
    small = UniformTree(2, 8, seed=2)
    v = minimax(small).value
    r = fsss(small, cancel=stop, max_leaves=20)
    assert r.extra["lower"] <= v <= r.extra["upper"]


@pytest.mark.slow
def test_keyboard_interrupt_between_chunks_returns_bounds(monkeypatch):
    tree = UniformTree(2, 12, seed=9)
    v = minimax(tree).value
    calls = {"n": 0}

    class Interrupting(_limits.ChunkClock):
        def __init__(self, first=1, target=0.2, cap=1):
            super().__init__(first=8, target=target, cap=8)

        def done(self):
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt

    monkeypatch.setattr("jitsearch.search.fsss_minimax.ChunkClock", Interrupting)
    monkeypatch.setattr("jitsearch.search.mtd.ChunkClock", Interrupting)
    r = fsss(tree)
    assert r.extra["interrupted"] and r.leaves_expanded == 24
    assert r.extra["lower"] <= v <= r.extra["upper"]
    calls["n"] = 0
    r = mtdf(tree, storage="hash")
    assert r.extra["interrupted"] and r.extra["lower"] <= v <= r.extra["upper"]


@pytest.mark.slow
def test_partial_fsss_bounds_are_valid_at_every_budget():
    for seed in range(5):
        tree = UniformTree(3, 5, seed=seed, values="float")
        v = minimax(tree).value
        for k in (0, 1, 7, 40):
            r = fsss(tree, max_leaves=k)
            assert r.extra["lower"] <= v <= r.extra["upper"]
            if not r.extra["exact"]:
                assert r.value == r.extra["lower"]  # MAX root: the guaranteed bound

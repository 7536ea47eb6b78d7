"""Specialised depth-first kernels (issue 13) equal the generic kernel and the naive reference.

Every key that ``depth_first.kernel_key`` can produce is compiled and run on
small trees; value, best child, leaves expanded, nodes visited and (where the
key records one) the trace must equal the unspecialised ``_search_core`` bit
for bit, and the plain-Python alpha-beta of ``jitsearch.naive``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from jitsearch import ExplicitTree, UniformTree, alphabeta, and_or, minimax, naive
from jitsearch.search import depth_first as df
from jitsearch.trees._access import KIND_EXPLICIT, VALUES_BINARY, VALUES_FLOAT, VALUES_INT

from conftest import random_nested

NO_TRACE = np.zeros(0, dtype=np.int64)
VALUES = {VALUES_INT: "int", VALUES_BINARY: "binary", VALUES_FLOAT: "float"}
# root windows: the full one, narrow ones (fail-soft bounds), one around 0/1 leaves
WINDOWS = [(-math.inf, math.inf), (-1e9, 1e9), (0.0, 1.0), (0.25, 0.75), (-5.0, 3.0)]


@njit(cache=True)
def _reverse(t, node, depth, children):
    n = children.shape[0]
    for i in range(n // 2):
        children[i], children[n - 1 - i] = children[n - 1 - i], children[i]


def _explicit_trees(count, seed0=0):
    for i in range(count):
        rng = np.random.default_rng(seed0 + i)
        kind = ("ties", "binary", "float", "wide")[i % 4]
        nested = random_nested(rng, int(rng.integers(0, 6)), kind)
        yield ExplicitTree.from_nested(nested, root="max" if i % 3 else "min")


def _uniform_trees(value_kind, span, b, leaf_cost=0):
    """Small uniform trees whose data() lands on a key with this mode."""
    values = VALUES[value_kind]
    kw = {}
    if value_kind == VALUES_INT and span == 0:
        kw = {"lo": -3, "hi": 4}  # a span read at run time (ties too)
    branchings = [b] if b else [1, 3, 4]
    for bb in branchings:
        for h in (0, 1, 2, 3, 5, 7 if bb <= 2 else 4):
            for seed in range(3):
                yield UniformTree(bb, h, seed=seed, values=values, root="min" if seed == 1 else "max",
                                  leaf_cost=leaf_cost, **kw)


def _trace_buffer(tree):
    return np.zeros(tree.num_leaves, dtype=np.int64)


def _check_against_core(t, tree, prune, perspective, record, order_fn=None):
    """One kernel call for every window: dispatcher result == _search_core's."""
    for alpha, beta in WINDOWS:
        buf_a = _trace_buffer(tree) if record else NO_TRACE
        buf_b = _trace_buffer(tree) if record else NO_TRACE
        got = df.search_kernel(t, alpha, beta, prune, perspective, buf_a, order_fn)
        want = df._search_core(t, alpha, beta, prune, perspective, buf_b, order_fn)
        assert tuple(got) == tuple(want), (tree, alpha, beta, prune, perspective, record)
        if record:
            leaves = int(got[2])
            assert buf_a[:leaves].tolist() == buf_b[:leaves].tolist()


#: kernel keys whose comparison runs in the slow step only (each compiles two kernels of its own)
SLOW_KEYS = {"('uniform', 0, 0, 0, False)", "('uniform', 0, 0, 0, True)", "('uniform', 0, 0, 2, False)",
             "('uniform', 0, 0, 2, True)", "('uniform', 2, 0, 2, False)", "('walk', 0, False, False)",
             "('walk', 0, False, True)", "('walk', 0, True, False)", "('walk', 0, True, True)",
             "('walk', 1, False, False)", "('walk', 1, True, False)", "('walk', 1, True, True)"}


@pytest.mark.slow
@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.slow) if str(k) in SLOW_KEYS else k
                                 for k in df.all_kernel_keys()], ids=str)
def test_every_specialisation_equals_the_generic_kernel(key):
    used = set()
    if key[0] == "uniform":
        _, vk, span, b, prune = key
        cases = [(u, False, None) for u in _uniform_trees(vk, span, b)]
    else:
        _, kind, prune, record = key
        if kind == KIND_EXPLICIT:
            trees = list(_explicit_trees(40))
        else:
            trees = [u for vk in VALUES for u in _uniform_trees(vk, 0, 0)][::3]
            trees += [UniformTree(2, 4, seed=s, leaf_cost=2) for s in range(3)]
        cases = [(tr, record, None) for tr in trees]
        if prune:
            cases += [(tr, record, _reverse) for tr in trees[:10]]
    for tree, record, order_fn in cases:
        t = tree.data()
        for perspective in (1, -1):
            k = df.kernel_key(t, prune, record, order_fn is not None)
            used.add(k)
            _check_against_core(t, tree, prune, perspective, record, order_fn)
    assert key in used


def test_keys_route_as_documented():
    u = UniformTree(2, 6, seed=1).data()
    span = int(df._DEFAULT_INT_SPAN)
    assert df.kernel_key(u, True, False, False) == ("uniform", VALUES_INT, span, 2, True)
    assert df.kernel_key(UniformTree(3, 4, seed=1).data(), False, False, False) == ("uniform", VALUES_INT, span, 0, False)
    assert df.kernel_key(UniformTree(2, 4, seed=1, lo=0, hi=9).data(), True, False, False)[2] == 0
    assert df.kernel_key(UniformTree(2, 4, seed=1, values="float").data(), True, False, False)[1] == VALUES_FLOAT
    assert df.kernel_key(u, True, True, False)[0] == "walk"  # traces
    assert df.kernel_key(u, True, False, True)[0] == "walk"  # ordering
    assert df.kernel_key(UniformTree(2, 4, seed=1, leaf_cost=1).data(), True, False, False)[0] == "walk"
    assert set(df._KERNELS) <= set(df.all_kernel_keys())


@pytest.mark.slow
def test_public_api_matches_naive_reference_with_traces_and_counts():
    trees = list(_explicit_trees(60, seed0=100))
    trees += [UniformTree(b, h, seed=s, values=v, root=r) for s, (b, h, v, r) in enumerate(
        [(2, 8, "int", "max"), (2, 7, "float", "min"), (3, 5, "binary", "max"), (2, 6, "int", "min"),
         (1, 4, "int", "max"), (2, 0, "float", "max")])]
    trees += [UniformTree(2, 6, seed=4, lo=-2, hi=2), UniformTree(2, 5, seed=5, leaf_cost=1)]
    for tree in trees:
        value, best, trace, nodes = naive.alphabeta(tree)
        for with_trace in (False, True):
            r = alphabeta(tree, trace=with_trace)
            assert (r.value, r.best_move, r.leaves_expanded, r.nodes_visited) == (value, best, len(trace), nodes)
            if with_trace:
                assert r.trace.tolist() == trace
        mm_value, mm_best = naive.minimax(tree)
        r = minimax(tree)
        assert (r.value, r.best_move) == (mm_value, mm_best)
        assert r.leaves_expanded == tree.num_leaves


def test_windows_and_and_or_match_naive():
    for s in range(6):
        u = UniformTree(2, 7, seed=s, lo=-10, hi=10, root="min" if s % 2 else "max")
        for window in [(-3.0, 4.0), (0.0, 1.0), (-math.inf, -5.0)]:
            value, best, trace, nodes = naive.alphabeta(u, *window)
            r = alphabeta(u, window=window)
            assert (r.value, r.best_move, r.leaves_expanded, r.nodes_visited) == (value, best, len(trace), nodes)
        b = UniformTree(2, 6, seed=s, values="binary", root="min" if s % 2 else "max")
        fast, traced = and_or(b), and_or(b, trace=True)
        assert (fast.value, fast.best_move, fast.leaves_expanded, fast.nodes_visited) == \
            (traced.value, traced.best_move, traced.leaves_expanded, traced.nodes_visited)
        explicit = and_or(b.to_explicit(), trace=True)
        assert explicit.trace.tolist() == traced.trace.tolist()


@njit(cache=True)
def _search_generic(t, alpha0, beta0, prune, perspective, trace):
    """The reference the specialised kernels are checked against: the generic
    kernel in natural order (moved here from the package, where only the
    tests used it)."""
    return df._search_core(t, alpha0, beta0, prune, perspective, trace, None)


def test_benchmark_entry_point_keeps_its_arguments():
    # jitsearch/benchmarks/throughput.py calls search_kernel(t, alpha, beta, prune, perspective, buf)
    t = UniformTree(2, 10, seed=3).data()
    got = df.search_kernel(t, -math.inf, math.inf, True, 1, NO_TRACE)
    assert tuple(got) == tuple(_search_generic(t, -math.inf, math.inf, True, 1, NO_TRACE))


@pytest.mark.slow
def test_forward_estimation_specialisations_equal_the_generic_kernel():
    import importlib
    import itertools

    from jitsearch.trees.incremental import IncrementalTree

    fe = importlib.import_module("jitsearch.search.forward_estimation")
    flags = [(True, fe.BOUNDS_FIXED, 1.0), (True, fe.BOUNDS_ONLINE, 0.5), (False, fe.BOUNDS_FIXED, 1.0),
             (False, fe.BOUNDS_ONLINE, 1.0), (True, fe.BOUNDS_FIXED, 0.3)]
    for s, (b, d, rb) in itertools.product(range(3), [(2, 6, False), (3, 4, True), (1, 3, False)]):
        tree = IncrementalTree(b, d, seed=s, random_branching=rb)
        _, lo, hi = fe.resolve_bounds(tree, "exact")
        for (use_fe, mode, delta), h in itertools.product(flags, range(d + 1)):
            args = (tree.branching, tree.random_branching, tree.edge_lo, np.uint64(tree.edge_span),
                    np.uint64(tree.root_key), 0.0, s % 2 == 0, h, use_fe, mode, lo, hi, delta)
            c1, c2 = np.zeros(1, np.int64), np.zeros(1, np.int64)
            got = fe._specialised_search(use_fe, mode)(*args, c1)
            assert tuple(got) == tuple(fe.incremental_search(*args, c2)) and c1[0] == c2[0]

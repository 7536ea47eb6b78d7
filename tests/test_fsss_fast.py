"""FSSS's specialised kernel for integer uniform trees (issue 24) equals the general kernels.

The specialised pool kernel carries ``x + k*eps`` as one scaled int64; it
must expand the same leaves in the same order, visit the same nodes and
return the same value, best move, bounds and stop reason as the general
float-pair kernel (``_fsss(..., specialise=False)``), whatever the
refinements, budget, chunking, branching, root player and value range.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from jitsearch import UniformTree, alphabeta, fsss, naive
from jitsearch.search import fsss_fast as ff
from jitsearch.search import fsss_minimax as fm
from jitsearch.trees.memory import DEFAULT_MAX_BYTES


def _run(tree, specialise, *, restart_deepest=False, stop_when_proven=False, max_leaves=None, value_range=None,
         trace=True, storage="pool"):
    return fm._fsss(tree, restart_deepest, stop_when_proven, max_leaves, None, value_range, storage, trace,
                    DEFAULT_MAX_BYTES, fm.DEFAULT_DENSE_MAX_BYTES, None, specialise)


def _same(a, b):
    assert (a.value, a.best_move, a.leaves_expanded, a.nodes_visited) == (
        b.value, b.best_move, b.leaves_expanded, b.nodes_visited)
    assert (a.trace is None) == (b.trace is None)
    if a.trace is not None:
        assert np.array_equal(a.trace, b.trace)
    ea, eb = dict(a.extra), dict(b.extra)
    ea.pop("peak_bytes")
    eb.pop("peak_bytes")
    assert ea == eb


def _takes_fast_path(tree, value_range=None):
    lo0, hi0 = fm._value_range(tree, value_range)
    return ff.fast_key(tree, tree.data(), lo0, hi0, "pool", False) is not None


TREES = [
    UniformTree(b, h, seed=s, values=v, root=r, **kw)
    for (b, h), s, v, r, kw in itertools.product(
        [(2, 1), (2, 2), (2, 7), (2, 13), (3, 6), (4, 4), (1, 5), (5, 3)],
        range(3),
        ["int", "binary"],
        ["max", "min"],
        [{}, {"lo": -3, "hi": 4}],
    )
    if not (v == "binary" and kw)
]


@pytest.mark.parametrize("restart_deepest,stop_when_proven", list(itertools.product([False, True], repeat=2)))
@pytest.mark.slow
def test_fast_path_equals_general_path(restart_deepest, stop_when_proven):
    for tree in TREES:
        assert _takes_fast_path(tree) == (tree.height >= 2)
        for max_leaves in (None, 0, 5):
            kw = dict(restart_deepest=restart_deepest, stop_when_proven=stop_when_proven, max_leaves=max_leaves)
            _same(_run(tree, True, **kw), _run(tree, False, **kw))


@pytest.mark.slow
def test_fast_path_on_the_benchmark_shape():
    # the shape of the per-leaf benchmark (b=2), tall enough that the pool grows
    for seed, h in ((0, 16), (1, 17), (2, 18)):
        u = UniformTree(2, h, seed=seed)
        for rd, sp in ((True, False), (False, True)):
            fast = _run(u, True, restart_deepest=rd, stop_when_proven=sp)
            _same(fast, _run(u, False, restart_deepest=rd, stop_when_proven=sp))
            if not sp:
                assert fast.value == alphabeta(u).value
    # and through the public function (the default path)
    u = UniformTree(2, 15, seed=4)
    _same(fsss(u, restart_deepest=True, trace=True), _run(u, False, restart_deepest=True))


def test_value_ranges():
    u = UniformTree(2, 9, seed=3, lo=-5, hi=5)
    v = naive.minimax(u)[0]
    for vr in [(-5, 5), (-5.0, 7.0), (-2**53, 2**53), (-math.inf, 5), (-6, math.inf)]:
        assert _takes_fast_path(u, vr)
        for rd in (False, True):
            fast = _run(u, True, value_range=vr, restart_deepest=rd)
            assert fast.value == v
            _same(fast, _run(u, False, value_range=vr, restart_deepest=rd))
    # non-integral initial bounds keep to the general kernel
    assert not _takes_fast_path(u, (-5.5, 5))
    assert fsss(u, value_range=(-5.5, 5.5)).value == v


@pytest.mark.slow
def test_chunked_search_equals_one_chunk(monkeypatch):
    # tiny chunks: BUDGET returns every few leaves, NEED_ROOM returns mid-descent
    u = UniformTree(2, 14, seed=7)
    whole = fsss(u, restart_deepest=True, trace=True)

    class TinyClock(fm.ChunkClock):
        def __init__(self, **_):
            super().__init__(first=3, target=1e9, cap=3)

    monkeypatch.setattr(fm, "ChunkClock", TinyClock)
    for specialise in (True, False):
        _same(_run(u, specialise, restart_deepest=True), whole)


def test_fast_key_conditions():
    u = UniformTree(2, 6, seed=1)
    d = u.data()
    assert ff.fast_key(u, d, -math.inf, math.inf, "pool", True) == (0, int(d.int_span), 2, True)
    assert ff.fast_key(u, d, -math.inf, math.inf, "hash", False) is None
    assert ff.fast_key(u.to_explicit(), u.to_explicit().data(), -math.inf, math.inf, "pool", False) is None
    for other in (UniformTree(2, 6, values="float"), UniformTree(2, 6, leaf_cost=1), UniformTree(2, 0), UniformTree(2, 1),
                  UniformTree(1, ff.FAST_MAX_HEIGHT + 1)):
        assert ff.fast_key(other, other.data(), -math.inf, math.inf, "pool", False) is None
    tall = UniformTree(1, ff.FAST_MAX_HEIGHT, seed=2)
    assert _takes_fast_path(tall)
    _same(_run(tall, True, restart_deepest=True), _run(tall, False, restart_deepest=True))


def test_scaled_bounds_round_trip():
    xs = np.array([-math.inf, -(2.0**53), -3.0, 0.0, 1.0, 2.0**31, 2.0**53, math.inf])
    s = np.array([ff.scaled_bound(x) for x in xs], dtype=np.int64)
    assert np.all(np.diff(s) > 0)
    assert np.array_equal(ff.unscaled_bounds(s), xs)
    # |k| <= FAST_MAX_HEIGHT keeps every pair between its neighbours
    k = ff.FAST_MAX_HEIGHT
    assert s[-2] + k < s[-1] - k and s[0] + k < s[1] - k
    assert ff.scaled_bound(-3.0) + k < ff.scaled_bound(-2.0) - k


def test_memory_guard_counts_the_fast_path():
    u = UniformTree(2, 16, seed=1)
    with pytest.raises(ValueError, match="memory limit"):
        fsss(u, max_bytes=200_000)
    r = fsss(u)
    # the pool (24 bytes an entry) and the 32-byte path levels are all counted
    assert r.extra["peak_bytes"] >= 24 * ff.FAST_POOL_START + 17 * ff.FAST_PATH_BYTES
    small = fsss(UniformTree(2, 5, seed=1))  # the first pool never exceeds the tree
    assert small.extra["peak_bytes"] <= 24 * 1024 + 6 * ff.FAST_PATH_BYTES

"""Hypothesis property tests over tree shapes and value distributions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jitsearch import ExplicitTree, alphabeta, minimax, two_agent
from jitsearch import naive

leaf_values = st.one_of(
    st.integers(0, 2),  # many ties
    st.integers(-(2**40), 2**40),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)
nested = st.recursive(leaf_values, lambda kids: st.lists(kids, min_size=1, max_size=4), max_leaves=60)


@settings(max_examples=300, deadline=None)
@given(nested, st.sampled_from(["max", "min"]))
def test_alphabeta_is_exact_and_matches_the_reference_trace(obj, root):
    tree = ExplicitTree.from_nested(obj, root=root)
    value, best = naive.minimax(tree)
    r = alphabeta(tree, trace=True)
    assert r.value == value
    ref_value, ref_best, ref_trace, ref_nodes = naive.alphabeta(tree)
    assert r.trace.tolist() == ref_trace and r.nodes_visited == ref_nodes and r.best_move == ref_best
    assert set(r.trace.tolist()) <= set(range(tree.num_leaves))
    m = minimax(tree)
    assert m.value == value and m.best_move == best
    assert two_agent(tree).value == -value * tree.root_to_move

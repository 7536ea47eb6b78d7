"""Exact solvers against brute force, traces, Knuth-Moore, implicit = explicit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from jitsearch import ExplicitTree, UniformTree, alphabeta, and_or, minimax, solve, two_agent
from jitsearch import naive

from conftest import VALUE_KINDS, random_nested


def _random_trees(count, max_depth=5, kinds=VALUE_KINDS, seed0=0):
    for i in range(count):
        rng = np.random.default_rng(seed0 + i)
        kind = kinds[i % len(kinds)]
        yield ExplicitTree.from_nested(random_nested(rng, int(rng.integers(0, max_depth + 1)), kind),
                                       root="max" if i % 3 else "min")


@pytest.mark.parametrize("algorithm", ["minimax", "alphabeta"])
def test_exact_solvers_equal_brute_force_on_ragged_trees(algorithm):
    for tree in _random_trees(400):
        value, best = naive.minimax(tree)
        r = solve(tree, algorithm)
        assert r.value == value
        if algorithm == "minimax":
            assert r.best_move == best  # lowest index among equals
        if r.best_move >= 0:
            # the move chosen leads to a child whose minimax value is the root's
            child = tree.first_child[0] + r.best_move
            assert tree.node_values()[child] == value


#: (b, h, values) of test_exact_solvers_on_uniform_trees that run in the slow step only
SLOW_UNIFORM = {(1, 0, "binary"), (1, 0, "float"), (1, 0, "int"), (1, 3, "float"), (1, 3, "int"), (2, 0, "binary"),
                (2, 0, "float"), (2, 1, "float"), (2, 7, "float"), (3, 5, "int")}


@pytest.mark.slow
@pytest.mark.parametrize("b, h, values", [
    pytest.param(b, h, values, marks=pytest.mark.slow if (b, h, values) in SLOW_UNIFORM else ())
    for b, h in [(1, 0), (1, 3), (2, 0), (2, 1), (2, 7), (3, 5), (5, 3)] for values in ["int", "binary", "float"]])
def test_exact_solvers_on_uniform_trees(values, b, h):
    for seed in range(8):
        u = UniformTree(b, h, seed=seed, values=values, root="min" if seed % 2 else "max")
        value, best = naive.minimax(u)
        assert minimax(u).value == value
        assert minimax(u).best_move == best
        assert alphabeta(u).value == value


def test_trace_matches_plain_python_alphabeta():
    trees = list(_random_trees(300, max_depth=6))
    trees += [UniformTree(b, h, seed=s, values=v) for s, (b, h, v) in enumerate(
        [(2, 8, "int"), (3, 5, "binary"), (4, 4, "float"), (2, 10, "binary"), (3, 6, "int")])]
    for tree in trees:
        value, best, trace, nodes = naive.alphabeta(tree)
        r = alphabeta(tree, trace=True)
        assert r.value == value
        assert r.best_move == best
        assert r.trace.tolist() == trace
        assert r.leaves_expanded == len(trace)
        assert r.nodes_visited == nodes


def test_minimax_counts_every_node_and_leaf():
    for tree in _random_trees(50):
        r = minimax(tree, trace=True)
        assert r.leaves_expanded == tree.num_leaves
        assert r.nodes_visited == tree.num_nodes
        assert r.trace.tolist() == list(range(tree.num_leaves))


def test_alphabeta_window_fail_soft_bounds():
    for tree in _random_trees(200, kinds=("ties", "wide")):
        v = naive.minimax(tree)[0]
        for lo, hi in [(0.5, 2.5), (-1e12, 0.0), (1.0, 1.5)]:
            r = alphabeta(tree, window=(lo, hi))
            if lo < v < hi:
                assert r.value == v
            elif v <= lo:
                assert r.value <= lo and r.value >= v
            else:
                assert r.value >= hi and r.value <= v
    with pytest.raises(ValueError, match="alpha < beta"):
        alphabeta(UniformTree(2, 2), window=(1, 1))


@pytest.mark.parametrize("b, h", [(2, h) for h in range(0, 11)] + [(3, 5), (3, 6), (4, 4), (5, 3)])
def test_knuth_moore_perfect_ordering(b, h):
    for seed in range(3):
        tree = UniformTree(b, h, seed=seed, values="float").to_explicit().perfectly_ordered()
        r = alphabeta(tree)
        assert r.leaves_expanded == b ** math.ceil(h / 2) + b ** (h // 2) - 1


def test_knuth_moore_is_a_lower_bound_for_any_order():
    for seed in range(20):
        u = UniformTree(3, 5, seed=seed, values="float").to_explicit()
        bound = 3**3 + 3**2 - 1
        for tree in (u, u.perfectly_ordered(worst_first=True)):
            assert alphabeta(tree).leaves_expanded >= bound
        assert u.perfectly_ordered(worst_first=True).node_values()[0] == u.node_values()[0]


@pytest.mark.parametrize("values", ["int", "binary", "float"])
def test_implicit_and_explicit_give_identical_results(values):
    for seed in range(10):
        u = UniformTree(3, 6, seed=seed, values=values, root="min" if seed % 2 else "max")
        e = u.to_explicit()
        for fn in (minimax, alphabeta):
            ru, re = fn(u, trace=True), fn(e, trace=True)
            assert (ru.value, ru.best_move, ru.leaves_expanded, ru.nodes_visited) == (
                re.value, re.best_move, re.leaves_expanded, re.nodes_visited)
            assert np.array_equal(ru.trace, re.trace)


@njit
def _reverse(t, node, depth, children):
    n = children.shape[0]
    for i in range(n // 2):
        tmp = children[i]
        children[i] = children[n - 1 - i]
        children[n - 1 - i] = tmp


def _mirror(obj):
    return [_mirror(c) for c in reversed(obj)] if isinstance(obj, list) else obj


def test_ordering_callback_equals_searching_the_mirrored_tree():
    for i in range(100):
        rng = np.random.default_rng(i)
        nested = random_nested(rng, 5, "ties")
        tree = ExplicitTree.from_nested(nested)
        mirrored = ExplicitTree.from_nested(_mirror(nested))
        a = alphabeta(tree, order_fn=_reverse)
        b = alphabeta(mirrored)
        assert a.value == b.value and a.leaves_expanded == b.leaves_expanded
        if a.best_move >= 0:
            assert a.best_move == tree.num_children[0] - 1 - b.best_move
    with pytest.raises(ValueError, match="njit"):
        alphabeta(tree, order_fn=lambda *a: None)


# -- AND-OR ----------------------------------------------------------------------

def test_and_or_hand_tree():
    # OR root: move 0 leads to an AND node with a non-goal; move 1 to an AND
    # node whose replies all reach goals
    tree = ExplicitTree.from_nested([[1, 0], [1, [0, 1]]])
    r = and_or(tree, trace=True)
    assert r.extra["goal_reachable"] and r.value == 1.0 and r.best_move == 1
    assert r.trace.tolist() == [0, 1, 2, 3, 4]
    lost = and_or(ExplicitTree.from_nested([[1, 0], [0, 1]]))
    assert not lost.extra["goal_reachable"] and lost.best_move == -1


def test_and_or_agrees_with_minimax_on_binary_trees():
    for tree in _random_trees(300, kinds=("binary",)):
        r = and_or(tree)
        v = naive.minimax(tree)[0]
        # the primary agent is the root's player: a goal (1) is good for it
        expect = v == 1 if tree.root_to_move > 0 else min(
            naive.minimax(ExplicitTree.from_arrays(tree.first_child, tree.num_children,
                                                   -tree.to_move, tree.leaf_value))[0], 1) == 1
        assert r.extra["goal_reachable"] == expect
        if r.best_move >= 0:
            assert and_or_subtree_wins(tree, r.best_move)
    for seed in range(20):
        u = UniformTree(3, 5, seed=seed, values="binary")
        assert and_or(u).value == naive.minimax(u)[0]
        assert and_or(u).leaves_expanded <= alphabeta(u).leaves_expanded


def and_or_subtree_wins(tree, move):
    """Minimax of the chosen child, with the root's player as MAX, is a goal."""
    child = tree.first_child[0] + move
    flip = tree.root_to_move
    vals = ExplicitTree.from_arrays(tree.first_child, tree.num_children, tree.to_move * flip,
                                    tree.leaf_value).node_values()
    return vals[child] == 1


def test_and_or_refuses_non_binary_leaves():
    with pytest.raises(ValueError, match="0 \\(not goal\\) or 1"):
        and_or(ExplicitTree.from_nested([[1, 2], [0, 1]]))
    with pytest.raises(ValueError, match="binary"):
        and_or(UniformTree(2, 3))


# -- two-agent search --------------------------------------------------------------

def test_two_agent_zero_sum_is_minimax():
    for tree in _random_trees(300):
        v = naive.minimax(tree)[0]
        r = two_agent(tree)
        # A is the root's player: its loss is minus the value seen from its side
        assert r.value == -v * tree.root_to_move
        assert r.extra["loss_b"] == v * tree.root_to_move
        assert r.leaves_expanded == tree.num_leaves
    for seed in range(10):
        u = UniformTree(2, 6, seed=seed, root="min" if seed % 2 else "max")
        assert two_agent(u).value == -naive.minimax(u)[0] * u.root_to_move


def test_two_agent_non_zero_sum_hand_tree():
    # A moves at the root, B below. Losses (A, B) at the leaves:
    #            A
    #         /     \
    #        B       B
    #      /  \     /  \
    #  (1,5) (0,9) (4,1) (3,2)
    # B picks its smallest B-loss: left -> (1,5), right -> (4,1).
    # A then picks its smallest A-loss among those: (1,5) by move 0.
    leaf = lambda a, b: {"value": 0, "loss_a": a, "loss_b": b}  # noqa: E731
    tree = ExplicitTree.from_nested([[leaf(1, 5), leaf(0, 9)], [leaf(4, 1), leaf(3, 2)]])
    r = two_agent(tree)
    assert (r.value, r.best_move, r.extra["loss_b"], r.extra["best_state_leaf"]) == (1, 0, 5, 0)
    # depth 1: A judges the B nodes by their own losses
    inner = lambda a, b, kids: {"children": kids, "loss_a": a, "loss_b": b}  # noqa: E731
    tree = ExplicitTree.from_nested(
        [inner(7, 0, [leaf(1, 5), leaf(0, 9)]), inner(2, 0, [leaf(4, 1), leaf(3, 2)])]
    )
    r1 = two_agent(tree, depth=1)
    assert r1.best_move == 1 and r1.value == 2 and r1.extra["best_state_leaf"] is None
    assert r1.leaves_expanded == 0 and r1.extra["states_evaluated"] == 2
    # loss threshold 5: A does not explore the left B node (A-loss 7 > 5)
    r2 = two_agent(tree, loss_threshold=5)
    assert r2.best_move == 1 and r2.value == 4 and r2.leaves_expanded == 2
    assert r2.extra["states_evaluated"] == 3
    # threshold above every loss: same as the plain search
    assert two_agent(tree, loss_threshold=100).value == two_agent(tree).value


def test_two_agent_needs_losses_where_it_stops():
    tree = ExplicitTree.from_nested([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="needs loss_a and loss_b"):
        two_agent(tree, depth=1)
    with pytest.raises(ValueError, match="needs loss_a and loss_b"):
        two_agent(tree, loss_threshold=0)
    with pytest.raises(ValueError, match="uniform tree"):
        two_agent(UniformTree(2, 3), depth=2)
    with pytest.raises(ValueError, match="uniform tree"):
        two_agent(UniformTree(2, 3), loss_threshold=1.0)


def test_solve_by_name_and_unknown_names():
    u = UniformTree(2, 5, seed=1)
    assert solve(u, "alphabeta").value == alphabeta(u).value
    with pytest.raises(ValueError, match="unknown algorithm 'nope'; choose one of"):
        solve(u, "nope")
    with pytest.raises(ValueError, match="ExplicitTree or UniformTree"):
        alphabeta([[1, 2]])


def test_trace_memory_is_checked():
    with pytest.raises(ValueError, match="trace of up to"):
        alphabeta(UniformTree(2, 40), trace=True)

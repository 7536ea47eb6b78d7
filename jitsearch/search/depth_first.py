"""Minimax, alpha-beta and AND-OR search as one explicit-stack Numba kernel.

Alpha-beta is the textbook MAX-VALUE / MIN-VALUE pair (seed 002; seed 004
section 3.4; Algorithm 1 of seed 000): children strictly left to right (or in
the order an ordering function gives), fail-soft values, and a node stops
searching its children as soon as ``alpha >= beta`` after a child returns.
Minimax is the same walk with pruning switched off. AND-OR search (seed 004
section 3.2) is alpha-beta on 0/1 leaves with the window (0, 1).

The kernel walks the tree with an explicit stack sized by the tree's height,
so deep trees cannot overflow the C stack.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..trees import ExplicitTree, UniformTree
from ..trees._access import (
    child,
    child_position,
    is_leaf,
    leaf_number,
    leaf_value,
    num_children,
    player_to_move,
)
from ..trees._validate import check_pair
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes, memory_guard
from ._limits import check_common, check_search_bytes, trace_bytes, tree_max_branching
from .result import SearchResult

NO_MOVE = -1


@njit(cache=True, nogil=True)
def _search_core(t, alpha0, beta0, prune, perspective, trace, order_fn):
    """Depth-first minimax / alpha-beta over ``t`` (a TreeData).

    Parameters
    ----------
    alpha0, beta0 : float64 -- the root window.
    prune : bool -- stop a node's children once ``alpha >= beta``.
    perspective : +1 or -1 -- multiplies every node's ``to_move``; -1 swaps
        MAX and MIN (AND-OR search from a MIN root uses it).
    trace : int64[K] -- receives expanded leaf numbers if K > 0.
    order_fn : None (natural left-to-right order) or an ``@njit`` function
        ``order_fn(t, node, depth, children)`` that may permute
        ``children`` (child node ids) in place. Numba prunes the ordering
        branches away when it is None, so the natural kernel pays nothing.

    Returns
    -------
    (value, best_child_node, leaves_expanded, nodes_visited); best_child_node
    is -1 when the root is a leaf.
    """
    height = t.height
    use_order = order_fn is not None
    width = t.max_branching if use_order else 1
    stack_node = np.empty(height + 1, dtype=np.int64)
    stack_k = np.empty(height + 1, dtype=np.int64)
    stack_n = np.empty(height + 1, dtype=np.int64)
    stack_mover = np.empty(height + 1, dtype=np.int64)
    stack_alpha = np.empty(height + 1, dtype=np.float64)
    stack_beta = np.empty(height + 1, dtype=np.float64)
    stack_value = np.empty(height + 1, dtype=np.float64)
    order = np.empty((height + 1, max(width, 1)), dtype=np.int64)
    record = trace.shape[0] > 0
    leaves = 0
    nodes = 0
    best_child = np.int64(-1)
    sp = 0
    stack_node[0] = 0
    stack_alpha[0] = alpha0
    stack_beta[0] = beta0
    entering = True
    ret = 0.0
    while True:
        if entering:
            node = stack_node[sp]
            nodes += 1
            if is_leaf(t, node, sp):
                ret = leaf_value(t, node)
                if record:
                    trace[leaves] = leaf_number(t, node)
                leaves += 1
                if sp == 0:
                    return ret, best_child, leaves, nodes
                sp -= 1
                entering = False
            else:
                n = num_children(t, node, sp)
                mover = player_to_move(t, node, sp) * perspective
                stack_n[sp] = n
                stack_k[sp] = 0
                stack_mover[sp] = mover
                stack_value[sp] = -math.inf if mover > 0 else math.inf
                if order_fn is not None:
                    kids = order[sp, :n]
                    for j in range(n):
                        kids[j] = child(t, node, j)
                    order_fn(t, node, sp, kids)
                    first = kids[0]
                else:
                    first = child(t, node, 0)
                stack_node[sp + 1] = first
                if is_leaf(t, first, sp + 1):
                    # read a leaf child in place: no frame is pushed for it
                    nodes += 1
                    ret = leaf_value(t, first)
                    if record:
                        trace[leaves] = leaf_number(t, first)
                    leaves += 1
                    entering = False
                    continue
                stack_alpha[sp + 1] = stack_alpha[sp]
                stack_beta[sp + 1] = stack_beta[sp]
                sp += 1
                continue
        # a child of the node at ``sp`` returned ``ret``
        # branch-free updates (selects); the best child is tracked at the root only
        value = stack_value[sp]
        if stack_mover[sp] > 0:
            if sp == 0 and ret > value:
                best_child = stack_node[1]
            stack_value[sp] = ret if ret > value else value
            a = stack_alpha[sp]
            stack_alpha[sp] = ret if ret > a else a
        else:
            if sp == 0 and ret < value:
                best_child = stack_node[1]
            stack_value[sp] = ret if ret < value else value
            b = stack_beta[sp]
            stack_beta[sp] = ret if ret < b else b
        k = stack_k[sp] + 1
        stack_k[sp] = k
        if k < stack_n[sp] and not (prune and stack_alpha[sp] >= stack_beta[sp]):
            if order_fn is not None:
                nxt = order[sp, k]
            else:
                nxt = child(t, stack_node[sp], k)
            stack_node[sp + 1] = nxt
            if is_leaf(t, nxt, sp + 1):
                nodes += 1
                ret = leaf_value(t, nxt)
                if record:
                    trace[leaves] = leaf_number(t, nxt)
                leaves += 1
                continue
            stack_alpha[sp + 1] = stack_alpha[sp]
            stack_beta[sp + 1] = stack_beta[sp]
            sp += 1
            entering = True
            continue
        ret = stack_value[sp]
        if sp == 0:
            return ret, best_child, leaves, nodes
        sp -= 1


@njit(cache=True, nogil=True)
def _search_kernel(t, alpha0, beta0, prune, perspective, trace):
    """Cached natural-order entry point of :func:`_search_core`."""
    return _search_core(t, alpha0, beta0, prune, perspective, trace, None)


@njit(cache=True, nogil=True)
def _root_child_position(t, best_child):
    if best_child < 0:
        return np.int64(-1)
    return child_position(t, 0, best_child)


# -- Python boundary --------------------------------------------------------

def tree_data(tree):
    """Validate that ``tree`` is a tree and return its kernel view."""
    if isinstance(tree, (ExplicitTree, UniformTree)):
        return tree.data()
    raise ValueError(f"expected an ExplicitTree or UniformTree, got {type(tree).__name__}")


def trace_buffer(tree, trace: bool, max_bytes: int) -> np.ndarray:
    """Allocate the trace buffer (one int64 per leaf) after a memory check."""
    if not trace:
        return np.zeros(0, dtype=np.int64)
    n = tree.num_leaves
    check_bytes(n * 8, max_bytes, f"a trace of up to {n} leaves", "drop trace or use a smaller tree")
    with memory_guard(f"a trace of up to {n} leaves", "drop trace or use a smaller tree"):
        return np.empty(n, dtype=np.int64)


#: Per level of height: the seven stack arrays of ``_search_core``.
STACK_BYTES = 7 * 8


def _window(window) -> tuple[float, float]:
    alpha, beta = check_pair(window, "window")
    if not alpha < beta:
        raise ValueError(f"window needs alpha < beta, got ({alpha}, {beta})")
    return alpha, beta


def _run(name, tree, alpha, beta, prune, perspective, trace, max_bytes, order_fn=None):
    trace, max_bytes = check_common(tree, trace, max_bytes)
    if order_fn is not None and not hasattr(order_fn, "py_func"):
        raise ValueError("order_fn must be a numba @njit function (t, node, depth, children) -> None")
    t = tree_data(tree)
    # the explicit stack, the ordering buffer and the trace, all counted first
    levels = int(tree.height) + 1
    width = max(tree_max_branching(tree), 1) if order_fn is not None else 1
    check_search_bytes(
        name, tree,
        {"stack": levels * STACK_BYTES, "ordering": levels * width * 8, "trace": trace_bytes(tree, trace)},
        max_bytes,
    )
    buf = trace_buffer(tree, trace, max_bytes)
    with memory_guard(f"{name}'s search stack ({levels} levels)", "lower the height"):
        if order_fn is None:
            value, best, leaves, nodes = _search_kernel(t, alpha, beta, prune, perspective, buf)
        else:
            value, best, leaves, nodes = _search_core(t, alpha, beta, prune, perspective, buf, order_fn)
    return SearchResult(
        algorithm=name,
        value=float(value),
        best_move=int(_root_child_position(t, best)),
        leaves_expanded=int(leaves),
        nodes_visited=int(nodes),
        trace=buf[:leaves].copy() if trace else None,
    )


def minimax(tree, *, trace: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> SearchResult:
    """Full-width minimax: reads every leaf once.

    Returns the root value for MAX, the best root move (lowest index among
    equals), leaves expanded (= all leaves) and nodes visited (= all nodes).
    """
    return _run("minimax", tree, -math.inf, math.inf, False, 1, trace, max_bytes)


def alphabeta(
    tree,
    *,
    window=(-math.inf, math.inf),
    trace: bool = False,
    order_fn=None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> SearchResult:
    """Textbook alpha-beta (fail-soft), children left to right.

    Parameters
    ----------
    window : (alpha, beta)
        Root window; the value is exact when it lies strictly inside, else it
        is a bound (fail-soft).
    trace : record leaf numbers in expansion order.
    order_fn : optional ``@njit`` function ``(t, node, depth, children)``
        permuting the child node ids ``children`` in place; it is compiled
        for each function passed (not cached). ``best_move`` is still given
        in natural order.

    Notes
    -----
    A node stops after a child returns once ``alpha >= beta`` (seed 002's
    MAX-VALUE/MIN-VALUE, seed 000's Algorithm 1). ``leaves_expanded`` counts
    leaves whose value was read, ``nodes_visited`` every node entered.
    """
    alpha, beta = _window(window)
    return _run("alphabeta", tree, alpha, beta, True, 1, trace, max_bytes, order_fn)


def and_or(tree, *, trace: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> SearchResult:
    """AND-OR search (seed 004, Figure 3.1): can the root's player force a goal?

    Leaves are goals when their value is 1 and non-goals when 0 (other values
    are refused). Nodes where the root's player moves are OR nodes, the
    others AND nodes; children are tried left to right and each node stops
    at the first child that decides it (True at OR, False at AND).

    Returns ``value`` 1.0 (goal reachable) or 0.0, ``best_move`` the first
    winning root action (-1 when there is none), ``extra["goal_reachable"]``.

    Notes
    -----
    This is alpha-beta with the window (0, 1) on 0/1 values and the same
    expansions as Figure 3.1. One deliberate difference: Figure 3.1 makes a
    non-goal leaf at an AND level vacuously True (its loop over no children
    leaves ``resultB = True``); here a leaf is a goal exactly when its value
    is 1, whatever its level.
    """
    check_common(tree, trace, max_bytes)
    t = tree_data(tree)
    if isinstance(tree, ExplicitTree):
        lv = tree.leaf_value[tree.is_leaf]
        if not np.all((lv == 0) | (lv == 1)):
            raise ValueError("AND-OR search needs leaves valued 0 (not goal) or 1 (goal)")
    elif tree.values != "binary":
        raise ValueError("AND-OR search needs 0/1 leaves: use values='binary'")
    res = _run("andor", tree, 0.0, 1.0, True, int(t.root_to_move), trace, max_bytes)
    reachable = res.value >= 1.0
    return SearchResult(
        algorithm="andor",
        value=1.0 if reachable else 0.0,
        best_move=res.best_move if reachable else NO_MOVE,
        leaves_expanded=res.leaves_expanded,
        nodes_visited=res.nodes_visited,
        trace=res.trace,
        extra={"goal_reachable": bool(reachable)},
    )

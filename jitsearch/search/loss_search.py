"""Two-agent search with separate loss functions (the textbook chapter "Multiagent Search", section 3.3).

Agent A is the player to move at the root (the primary agent), agent B the
other. Every state ``i`` carries two losses, ``L(i, A)`` and ``L(i, B)``;
smaller is better for that agent and no relation between them is assumed.
``SearchAgentA`` / ``SearchAgentB`` of Figure 3.3 return the best *state*
``d`` moves down: at a node where agent X moves, the state returned by the
child whose state has the smallest ``L(., X)`` (ties: the leftmost child).

Section 3.3.1's heuristic variant adds a loss threshold ``l``: when agent X
considers a child ``j`` with ``L(j, X) > l``, ``j`` is not explored and is
itself the state that branch returns.
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
    node_loss,
    num_children,
    player_to_move,
)
from .._checks import check_int, check_float
from ..trees.memory import DEFAULT_MAX_BYTES, memory_guard
from ._limits import check_common, check_search_bytes, trace_bytes
from .depth_first import trace_buffer, tree_data

#: Per level: the seven stack arrays of ``_two_agent_kernel`` (6 x 8 + 1 bytes).
STACK_BYTES = 49
from .result import SearchResult


@njit(cache=True, nogil=True)
def _two_agent_kernel(t, depth_limit, use_threshold, threshold, trace):
    """Figure 3.3 with an explicit stack.

    Returns (best_state_node, best_root_child_node, leaves_expanded,
    states_evaluated, nodes_visited). ``states_evaluated`` counts every state
    returned as a search result: leaves, nodes at the depth limit and nodes
    cut off by the threshold. ``leaves_expanded`` counts the leaves among them.
    """
    height = min(t.height, depth_limit)
    stack_node = np.empty(height + 1, dtype=np.int64)
    stack_k = np.empty(height + 1, dtype=np.int64)
    stack_n = np.empty(height + 1, dtype=np.int64)
    stack_is_a = np.empty(height + 1, dtype=np.bool_)
    stack_best_state = np.empty(height + 1, dtype=np.int64)
    stack_best_child = np.empty(height + 1, dtype=np.int64)
    stack_best_loss = np.empty(height + 1, dtype=np.float64)
    root_player = player_to_move(t, 0, 0)
    record = trace.shape[0] > 0
    leaves = 0
    evaluated = 0
    nodes = 0
    sp = 0
    stack_node[0] = 0
    entering = True
    state = np.int64(0)
    while True:
        if entering:
            node = stack_node[sp]
            nodes += 1
            leaf = is_leaf(t, node, sp)
            cut = sp == depth_limit
            if not leaf and not cut and use_threshold and sp > 0:
                cut = node_loss(t, node, stack_is_a[sp - 1]) > threshold
            if leaf or cut:
                state = node
                evaluated += 1
                if leaf:
                    if record:
                        trace[leaves] = leaf_number(t, node)
                    leaves += 1
                if sp == 0:
                    return state, np.int64(-1), leaves, evaluated, nodes
                sp -= 1
                entering = False
            else:
                stack_n[sp] = num_children(t, node, sp)
                stack_k[sp] = 0
                stack_is_a[sp] = player_to_move(t, node, sp) == root_player
                stack_best_loss[sp] = math.inf
                stack_best_state[sp] = -1
                stack_best_child[sp] = -1
                stack_node[sp + 1] = child(t, node, 0)
                sp += 1
                continue
        k = stack_k[sp]
        loss = node_loss(t, state, stack_is_a[sp])
        if loss < stack_best_loss[sp] or stack_best_state[sp] < 0:
            stack_best_loss[sp] = loss
            stack_best_state[sp] = state
            stack_best_child[sp] = child(t, stack_node[sp], k)
        k += 1
        stack_k[sp] = k
        if k < stack_n[sp]:
            stack_node[sp + 1] = child(t, stack_node[sp], k)
            sp += 1
            entering = True
            continue
        state = stack_best_state[sp]
        if sp == 0:
            return state, stack_best_child[0], leaves, evaluated, nodes
        sp -= 1


@njit(cache=True, nogil=True)
def _root_position(t, best_child):
    if best_child < 0:
        return np.int64(-1)
    return child_position(t, 0, best_child)


def _with_zero_sum_leaves(tree: ExplicitTree) -> ExplicitTree:
    """Fill absent leaf losses with the zero-sum default from ``leaf_value``."""
    sign = tree.root_to_move
    leaf = tree.is_leaf
    la = np.where(np.isnan(tree.loss_a) & leaf, -sign * tree.leaf_value + 0.0, tree.loss_a)
    lb = np.where(np.isnan(tree.loss_b) & leaf, sign * tree.leaf_value + 0.0, tree.loss_b)
    return ExplicitTree(
        tree.first_child, tree.num_children, tree.to_move, tree.leaf_value,
        tree.leaf_number, tree.depth, la, lb, tree.integral,
    )


def two_agent(
    tree,
    *,
    depth: int | None = None,
    loss_threshold: float | None = None,
    trace: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> SearchResult:
    """Figure 3.3 of the textbook chapter "Multiagent Search": each agent minimises its own loss.

    Parameters
    ----------
    depth : search depth ``d`` in moves (None: to the leaves). Nodes at depth
        ``d`` are returned as states and need both losses.
    loss_threshold : section 3.3.1's ``l``; needs losses on every node that
        may be considered (depth 1 .. d).
    trace : record the leaf numbers of expanded leaves in order.

    Notes
    -----
    Losses: ``tree.loss_a`` / ``tree.loss_b``; a leaf without them gets the
    zero-sum default ``L(A) = -v``, ``L(B) = v`` where ``v`` is the leaf's
    value seen from A's side (so zero-sum two-agent search is minimax).

    Returns
    -------
    SearchResult with ``value = L(best state, A)``, ``best_move`` the root
    child leading to it, and ``extra``: ``best_state`` (node index),
    ``best_state_leaf`` (its leaf number, or None for an inner node),
    ``loss_a``, ``loss_b``, ``states_evaluated``.
    """
    trace, max_bytes = check_common(tree, trace, max_bytes)
    if depth is not None:
        depth = check_int("depth", depth, 0)
    if loss_threshold is not None:
        loss_threshold = check_float("loss_threshold", loss_threshold, allow_inf=True)
    levels = min(int(tree.height), tree.height if depth is None else depth) + 1
    parts = {"stack": levels * STACK_BYTES, "trace": trace_bytes(tree, trace)}
    if isinstance(tree, ExplicitTree):
        parts["losses"] = 2 * 8 * tree.num_nodes  # the zero-sum copies of loss_a / loss_b
    check_search_bytes("two-agent search", tree, parts, max_bytes)
    if isinstance(tree, UniformTree):
        if loss_threshold is not None:
            raise ValueError("a uniform tree has losses only at its leaves: loss_threshold needs an explicit tree")
        if depth is not None and depth < tree.height:
            raise ValueError(
                f"a uniform tree has losses only at its leaves: depth must be >= its height {tree.height}"
            )
    elif isinstance(tree, ExplicitTree):
        with memory_guard("the two-agent losses", "use a smaller tree"):
            tree = _with_zero_sum_leaves(tree)
    tree_data(tree)  # type check with the standard message
    if depth is None:
        depth = tree.height
    use_threshold = loss_threshold is not None
    threshold = float(loss_threshold) if use_threshold else 0.0
    if isinstance(tree, ExplicitTree):
        d = tree.depth
        internal = ~tree.is_leaf
        need = (d == depth) & internal
        if use_threshold:
            need |= (d >= 1) & (d <= depth)
        missing = need & (np.isnan(tree.loss_a) | np.isnan(tree.loss_b))
        if np.any(missing):
            node = int(np.flatnonzero(missing)[0])
            why = "the loss threshold" if use_threshold else f"the depth limit {depth}"
            raise ValueError(f"node {node} needs loss_a and loss_b for {why}")
    t = tree.data()
    buf = trace_buffer(tree, trace, max_bytes)
    with memory_guard("the two-agent search stack", "lower the depth"):
        state, best_child, leaves, evaluated, nodes = _two_agent_kernel(
            t, int(min(depth, tree.height)), use_threshold, threshold, buf
        )
    state = int(state)
    if isinstance(tree, ExplicitTree):
        la, lb = float(tree.loss_a[state]), float(tree.loss_b[state])
        leaf_no = int(tree.leaf_number[state])
    else:
        v = tree.leaf_value(state - tree.first_leaf_node) * tree.root_to_move
        la, lb = -v + 0.0, v + 0.0
        leaf_no = state - tree.first_leaf_node
    return SearchResult(
        algorithm="two-agent",
        value=la,
        best_move=int(_root_position(t, best_child)),
        leaves_expanded=int(leaves),
        nodes_visited=int(nodes),
        trace=buf[:leaves].copy() if trace else None,
        extra={
            "best_state": state,
            "best_state_leaf": leaf_no if leaf_no >= 0 else None,
            "loss_a": la,
            "loss_b": lb,
            "states_evaluated": int(evaluated),
        },
    )

"""Minimax, alpha-beta and AND-OR search as one explicit-stack Numba kernel.

Alpha-beta is the textbook MAX-VALUE / MIN-VALUE pair (the lecture slides
"Alpha-Beta Pruning & MCTS"; the textbook chapter "Multiagent Search",
section 3.4; Algorithm 1 of Weinstein, Littman & Goschin,
"Rollout-based Game-tree Search Outprunes Traditional Alpha-beta"):
children strictly left to right (or in
the order an ordering function gives), fail-soft values, and a node stops
searching its children as soon as ``alpha >= beta`` after a child returns.
Minimax is the same walk with pruning switched off. AND-OR search (the
textbook chapter "Multiagent Search", section 3.2) is alpha-beta on 0/1 leaves with the window (0, 1).

The kernels walk the tree with an explicit stack sized by the tree's height,
so deep trees cannot overflow the C stack. Searches run on kernels compiled
per combination of tree kind, value kind and options (``kernel_key``), so
the hot loop tests no flags; ``_search_core`` is the one generic kernel they
are checked against (``tests/test_specialised_kernels.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..trees import ExplicitTree, UniformTree
from ..trees._access import (
    KIND_EXPLICIT,
    KIND_UNIFORM,
    VALUES_BINARY,
    VALUES_FLOAT,
    VALUES_INT,
    child,
    child_position,
    hashed_leaf_value,
    is_leaf,
    leaf_number,
    leaf_value,
    num_children,
    player_to_move,
    uniform_leaf_int,
    uniform_leaf_value,
)
from .._checks import check_pair
from ..trees.uniform import DEFAULT_INT_RANGE
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


# -- specialised kernels ------------------------------------------------------
#
# ``_search_core`` tests the tree kind, the value kind, the prune / trace flags
# and the ordering at every node. The kernels below are built per combination
# actually used, by factories whose arguments become compile-time constants
# of the closure (Numba freezes free variables), so those tests fold away.
# Each closure is ``cache=True``: Numba keys its disk cache on the closure's
# constants, so every specialisation is compiled once per machine, not once
# per process. They walk exactly like ``_search_core``: same child order,
# same fail-soft updates, same cut test after every child, same counts.

#: Integer span of the default value range (2**32 + 1); known at compile time
#: so ``hash % span`` compiles to a multiply, not a 64-bit division.
_DEFAULT_INT_SPAN = np.uint64(DEFAULT_INT_RANGE[1] - DEFAULT_INT_RANGE[0] + 1)
#: Branching factors compiled in as constants (uniform trees); others are read.
_CONST_BRANCHING = (2,)

_KERNELS: dict = {}

#: Integer kernels' infinities: beyond every leaf value (|v| <= 2**53) and
#: safe to negate.
_INT_NEG_INF = -(2**62)


@njit(cache=True, inline="always")
def _int_alpha(alpha):
    """The int64 lower bound that cuts exactly where the float one does.

    Against integers ``v``: ``alpha >= v`` iff ``floor(alpha) >= v``; clamped
    to [-2**62, 2**61] (beyond every leaf), while :func:`_int_beta` clamps to
    [-2**61, 2**62], so ``alpha < beta`` stays true and every comparison the
    search makes (alpha or a leaf against beta or a leaf) keeps its outcome.
    """
    if alpha <= -4611686018427387904.0:
        return np.int64(-4611686018427387904)
    if alpha >= 2305843009213693952.0:
        return np.int64(2305843009213693952)
    return np.int64(math.floor(alpha))


@njit(cache=True, inline="always")
def _int_beta(beta):
    """The int64 upper bound: ``v >= beta`` iff ``v >= ceil(beta)``."""
    if beta >= 4611686018427387904.0:
        return np.int64(4611686018427387904)
    if beta <= -2305843009213693952.0:
        return np.int64(-2305843009213693952)
    return np.int64(math.ceil(beta))


def _build_uniform(value_kind, int_span, branching, prune):
    """Natural-order kernel for uniform trees (no trace, ``leaf_cost == 0``).

    ``int_span`` is a ``uint64`` constant or 0 (read ``t.int_span``);
    ``branching`` a constant or 0 (read ``t.branching``).

    Same walk, values and counts as ``_search_core``, written as negamax:
    each frame keeps its value and window from its own mover's point of view
    (MIN levels negated), so every level runs the same max-update with no
    test of who moves. Negation is exact on floats (infinities included) and
    ``ret < value`` at a MIN node is exactly ``-ret > -value``, so values,
    ties, cuts and counts are bit-identical. Nodes one level above the leaves
    scan their leaf children in one tight loop (``_search_core`` reads leaf
    children in place, without a frame, too).
    """
    VK = value_kind
    SPAN = np.uint64(int_span)
    BC = branching
    PRUNE = prune
    # integer and binary leaves are searched as int64 (exact, see _int_alpha)
    INTV = value_kind != VALUES_FLOAT
    ONE = 1 if INTV else 1.0
    NEG = _INT_NEG_INF if INTV else -math.inf
    VDT = np.int64 if INTV else np.float64

    @njit(cache=True, nogil=True)
    def kernel(t, alpha0, beta0, perspective):
        height = t.height
        b = BC if BC > 0 else t.branching
        span = SPAN if SPAN > 0 else t.int_span
        first_leaf = t.first_leaf_node
        # +1.0 when MAX (after ``perspective``) moves at the root
        root_sign = ONE if t.root_to_move * perspective > 0 else -ONE
        leaves = 0
        best_child = np.int64(-1)
        if height == 0:
            return uniform_leaf_value(t, 0, VK, span), best_child, 1, 1
        if INTV:
            lo, hi = _int_alpha(alpha0), _int_beta(beta0)
        else:
            lo, hi = alpha0, beta0
        # the window from the root mover's point of view
        if root_sign > 0:
            alpha, beta = lo, hi
        else:
            alpha, beta = -hi, -lo
        if height == 1:
            value = NEG
            for k in range(b):
                if INTV:
                    x = uniform_leaf_int(t, k, VK, span) * root_sign
                else:
                    x = uniform_leaf_value(t, k, VK, span) * root_sign
                leaves += 1
                if x > value:
                    best_child = 1 + k
                    value = x
                alpha = x if x > alpha else alpha
                if PRUNE and alpha >= beta:
                    break
            return np.float64(value * root_sign), best_child, leaves, leaves + 1
        stack_node = np.empty(height + 1, dtype=np.int64)
        stack_k = np.empty(height + 1, dtype=np.int64)
        stack_alpha = np.empty(height + 1, dtype=VDT)
        stack_beta = np.empty(height + 1, dtype=VDT)
        stack_value = np.empty(height + 1, dtype=VDT)
        # nodes three levels above the leaves search their subtree in place
        upper = height - 3
        # leaf values as the mover one level above the leaves sees them
        bottom_sign = root_sign if ((height - 1) & 1) == 0 else -root_sign
        nodes = 1
        sp = 0
        node = np.int64(0)
        while True:
            # enter internal node ``node`` at depth ``sp`` with its (alpha, beta)
            if sp > upper:
                # two levels above the leaves (only when height == 2, sp == 0)
                value = NEG
                for j in range(b):
                    child_node = node * b + 1 + j
                    leaf = child_node * b + 1 - first_leaf
                    ca, cb = -beta, -alpha
                    cv = NEG
                    for k in range(b):
                        if INTV:
                            x = uniform_leaf_int(t, leaf + k, VK, span) * bottom_sign
                        else:
                            x = uniform_leaf_value(t, leaf + k, VK, span) * bottom_sign
                        cv = x if x > cv else cv
                        ca = x if x > ca else ca
                        if PRUNE and ca >= cb:
                            break
                    leaves += k + 1
                    nodes += k + 2
                    r = -cv
                    if r > value:
                        best_child = child_node
                    value = r if r > value else value
                    alpha = r if r > alpha else alpha
                    if PRUNE and alpha >= beta:
                        break
            elif sp == upper:
                # three levels above the leaves: search the whole subtree here,
                # the windows and values below in registers, each level from
                # its own mover's view (child of a node with window (a, b):
                # window (-b, -a), value returned negated)
                value = NEG
                for i in range(b):
                    mid_node = node * b + 1 + i
                    nodes += 1
                    ma, mb = -beta, -alpha
                    mv = NEG
                    for j in range(b):
                        child_node = mid_node * b + 1 + j
                        leaf = child_node * b + 1 - first_leaf
                        ca, cb = -mb, -ma
                        cv = NEG
                        for k in range(b):
                            if INTV:
                                x = uniform_leaf_int(t, leaf + k, VK, span) * bottom_sign
                            else:
                                x = uniform_leaf_value(t, leaf + k, VK, span) * bottom_sign
                            cv = x if x > cv else cv
                            ca = x if x > ca else ca
                            if PRUNE and ca >= cb:
                                break
                        leaves += k + 1
                        nodes += k + 2
                        r = -cv
                        mv = r if r > mv else mv
                        ma = r if r > ma else ma
                        if PRUNE and ma >= mb:
                            break
                    r = -mv
                    if sp == 0 and r > value:
                        best_child = mid_node
                    value = r if r > value else value
                    alpha = r if r > alpha else alpha
                    if PRUNE and alpha >= beta:
                        break
            else:
                # push the node and enter its first child
                stack_node[sp] = node
                stack_k[sp] = 0
                stack_value[sp] = NEG
                stack_alpha[sp] = alpha
                stack_beta[sp] = beta
                node = node * b + 1
                sp += 1
                stack_node[sp] = node
                nodes += 1
                alpha, beta = -beta, -alpha
                continue
            ret = value
            # hand ``ret`` up until a node has a child left to search
            while True:
                if sp == 0:
                    return np.float64(ret * root_sign), best_child, leaves, nodes
                sp -= 1
                ret = -ret
                value = stack_value[sp]
                alpha = stack_alpha[sp]
                beta = stack_beta[sp]
                if sp == 0 and ret > value:
                    best_child = stack_node[1]
                value = ret if ret > value else value
                alpha = ret if ret > alpha else alpha
                k = stack_k[sp] + 1
                if k < b and not (PRUNE and alpha >= beta):
                    break
                ret = value
            stack_value[sp] = value
            stack_alpha[sp] = alpha
            stack_beta[sp] = beta
            stack_k[sp] = k
            node = stack_node[sp] * b + 1 + k
            sp += 1
            stack_node[sp] = node
            nodes += 1
            alpha, beta = -beta, -alpha

    return kernel


def _build_walk(kind, prune, record):
    """``_search_core``'s walk with the tree kind and the flags fixed.

    Serves explicit trees, and uniform trees searched with a trace, an
    ordering function or a ``leaf_cost`` (their value kind is read at run
    time: these searches are not the hot path).
    """
    EXPLICIT = kind == KIND_EXPLICIT
    PRUNE = prune
    RECORD = record

    @njit(cache=True, nogil=True)
    def kernel(t, alpha0, beta0, perspective, trace, order_fn):
        height = t.height
        b = t.branching
        first_leaf = t.first_leaf_node
        root_even = 0 if t.root_to_move * perspective > 0 else 1
        t_first = t.first_child
        t_num = t.num_children
        t_move = t.to_move
        t_value = t.leaf_value
        t_number = t.leaf_number
        width = t.max_branching if order_fn is not None else 1
        stack_node = np.empty(height + 1, dtype=np.int64)
        stack_k = np.empty(height + 1, dtype=np.int64)
        stack_n = np.empty(height + 1, dtype=np.int64)
        stack_max = np.empty(height + 1, dtype=np.bool_)
        stack_alpha = np.empty(height + 1, dtype=np.float64)
        stack_beta = np.empty(height + 1, dtype=np.float64)
        stack_value = np.empty(height + 1, dtype=np.float64)
        order = np.empty((height + 1, max(width, 1)), dtype=np.int64)
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
                if (t_num[node] == 0) if EXPLICIT else (sp == height):
                    if EXPLICIT:
                        ret = t_value[node]
                    else:
                        ret = hashed_leaf_value(t, node - first_leaf)
                    if RECORD:
                        trace[leaves] = t_number[node] if EXPLICIT else node - first_leaf
                    leaves += 1
                    if sp == 0:
                        return ret, best_child, leaves, nodes
                    sp -= 1
                    entering = False
                else:
                    if EXPLICIT:
                        n = t_num[node]
                        is_max = t_move[node] * perspective > 0
                        c0 = t_first[node]
                    else:
                        n = b
                        is_max = (sp & 1) == root_even
                        c0 = node * b + 1
                    stack_n[sp] = n
                    stack_k[sp] = 0
                    stack_max[sp] = is_max
                    stack_value[sp] = -math.inf if is_max else math.inf
                    if order_fn is not None:
                        kids = order[sp, :n]
                        for j in range(n):
                            kids[j] = c0 + j
                        order_fn(t, node, sp, kids)
                        first = kids[0]
                    else:
                        first = c0
                    stack_node[sp + 1] = first
                    if (t_num[first] == 0) if EXPLICIT else (sp + 1 == height):
                        nodes += 1
                        if EXPLICIT:
                            ret = t_value[first]
                        else:
                            ret = hashed_leaf_value(t, first - first_leaf)
                        if RECORD:
                            trace[leaves] = t_number[first] if EXPLICIT else first - first_leaf
                        leaves += 1
                        entering = False
                        continue
                    stack_alpha[sp + 1] = stack_alpha[sp]
                    stack_beta[sp + 1] = stack_beta[sp]
                    sp += 1
                    continue
            value = stack_value[sp]
            if stack_max[sp]:
                if sp == 0 and ret > value:
                    best_child = stack_node[1]
                stack_value[sp] = ret if ret > value else value
                a = stack_alpha[sp]
                stack_alpha[sp] = ret if ret > a else a
            else:
                if sp == 0 and ret < value:
                    best_child = stack_node[1]
                stack_value[sp] = ret if ret < value else value
                bb = stack_beta[sp]
                stack_beta[sp] = ret if ret < bb else bb
            k = stack_k[sp] + 1
            stack_k[sp] = k
            if k < stack_n[sp] and not (PRUNE and stack_alpha[sp] >= stack_beta[sp]):
                if order_fn is not None:
                    nxt = order[sp, k]
                elif EXPLICIT:
                    nxt = t_first[stack_node[sp]] + k
                else:
                    nxt = stack_node[sp] * b + 1 + k
                stack_node[sp + 1] = nxt
                if (t_num[nxt] == 0) if EXPLICIT else (sp + 1 == height):
                    nodes += 1
                    if EXPLICIT:
                        ret = t_value[nxt]
                    else:
                        ret = hashed_leaf_value(t, nxt - first_leaf)
                    if RECORD:
                        trace[leaves] = t_number[nxt] if EXPLICIT else nxt - first_leaf
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

    return kernel


def kernel_key(t, prune, record, ordered) -> tuple:
    """The specialisation a search over ``t`` (a TreeData) runs on.

    ``("uniform", value_kind, int_span, branching, prune)``: the natural-order
    kernel for uniform trees without trace or leaf cost (a 0 span or
    branching means "read at run time"); ``("walk", kind, prune, record)``:
    everything else.
    """
    prune, record = bool(prune), bool(record)
    if t.kind == KIND_EXPLICIT or record or ordered or t.leaf_cost > 0:
        return ("walk", int(t.kind), prune, record)
    vk = int(t.value_kind)
    span = int(t.int_span) if vk == VALUES_INT and t.int_span == _DEFAULT_INT_SPAN else 0
    b = int(t.branching) if int(t.branching) in _CONST_BRANCHING else 0
    return ("uniform", vk, span, b, prune)


def all_kernel_keys() -> list:
    """Every key :func:`kernel_key` can return (the tests run each one)."""
    keys = [("walk", kind, prune, record)
            for kind in (KIND_EXPLICIT, KIND_UNIFORM) for prune in (False, True) for record in (False, True)]
    modes = [(VALUES_INT, int(_DEFAULT_INT_SPAN)), (VALUES_INT, 0), (VALUES_BINARY, 0), (VALUES_FLOAT, 0)]
    keys += [("uniform", vk, span, b, prune)
             for vk, span in modes for b in (*_CONST_BRANCHING, 0) for prune in (False, True)]
    return keys


def specialised_kernel(key):
    """The compiled kernel for ``key`` (see :func:`kernel_key`), built once.

    ``("uniform", ...)`` kernels take ``(t, alpha0, beta0, perspective)``,
    ``("walk", ...)`` kernels ``(t, alpha0, beta0, perspective, trace,
    order_fn)`` with ``order_fn`` None or an ``@njit`` function. Both return
    ``(value, best_child_node, leaves_expanded, nodes_visited)``.
    """
    fn = _KERNELS.get(key)
    if fn is None:
        if key[0] == "uniform":
            fn = _build_uniform(*key[1:])
        else:
            fn = _build_walk(*key[1:])
        _KERNELS[key] = fn
    return fn


def search_kernel(t, alpha0, beta0, prune, perspective, trace, order_fn=None):
    """Run the specialised kernel for ``t`` and these options.

    Same arguments and result as ``_search_core`` (``perspective`` is +1 or
    -1; ``trace`` an int64 buffer, empty for no trace): (value,
    best_child_node, leaves_expanded, nodes_visited).
    """
    key = kernel_key(t, prune, trace.shape[0] > 0, order_fn is not None)
    fn = _KERNELS.get(key)
    if fn is None:
        fn = specialised_kernel(key)
    if key[0] == "uniform":
        return fn(t, alpha0, beta0, perspective)
    return fn(t, alpha0, beta0, perspective, trace, order_fn)


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
    alpha, beta = check_pair("window", window)
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
        value, best, leaves, nodes = search_kernel(t, alpha, beta, prune, perspective, buf, order_fn)
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
    A node stops after a child returns once ``alpha >= beta`` (MAX-VALUE/MIN-VALUE of
    the lecture slides, Algorithm 1 of Weinstein, Littman & Goschin). ``leaves_expanded`` counts
    leaves whose value was read, ``nodes_visited`` every node entered.
    """
    alpha, beta = _window(window)
    return _run("alphabeta", tree, alpha, beta, True, 1, trace, max_bytes, order_fn)


def and_or(tree, *, trace: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> SearchResult:
    """AND-OR search (the textbook chapter "Multiagent Search", Figure 3.1): can the root's player force a goal?

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

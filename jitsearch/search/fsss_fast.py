"""FSSS-Minimax's specialised pool kernel: uniform trees with integer leaves (the time per leaf measured by
``bench/fsss_per_leaf.py``).

Integer leaves make the exact epsilon of :mod:`.fsss_minimax` an integer
too: the pair ``x + k*eps`` is the single int64 ``x * 2**_SHIFT + k``
(``|k|`` never exceeds the depth, below ``2**(_SHIFT-1)``; infinities are
``+-_INF_S``, beyond every scaled leaf, as ``|x| <= 2**53``). The map keeps
the lexicographic order and equality, so every comparison, select and
epsilon step gives what the float pairs give: same leaves, same order, same
counts. The pool keeps its layout (int64[cap, 3], children contiguous) with
the scaled bounds, whose ``k`` is 0, in columns 0-1. Kernels are built per
combination of value kind, span, branching and trace (as in
``depth_first._build_uniform``), so the hot loop tests none of them. With
two children the leaves get no pool entries: the node above them keeps
its expanded leaf in its first-child field (see :func:`_build_fast`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..trees import UniformTree
from ..trees._access import VALUES_FLOAT, uniform_leaf_int
from ._limits import NEED_ROOM
from .depth_first import kernel_key
from ._pool import (
    BUDGET,
    COL_FIRST,
    COL_LO,
    COL_UP,
    PROVEN,
    SOLVED,
    ST_DESCENDING,
    ST_LEAVES,
    ST_NODES,
    ST_ROLLOUTS,
    ST_START,
    ST_USED,
    UNEXPANDED,
)

_SHIFT = 8
_SCALE = 1 << _SHIFT
#: Scaled +inf (a scaled leaf is at most 2**61 in size).
_INF_S = 1 << 62
#: Deepest tree the scaled pairs serve (|k| <= depth < 2**(_SHIFT-1)).
FAST_MAX_HEIGHT = (1 << (_SHIFT - 1)) - 1
#: Per level of height: the path array of the specialised kernel (4 x 8 bytes).
FAST_PATH_BYTES = 32
#: The specialised kernel's first pool (entries) and first chunk (leaves):
#: about 0.4 MiB and 1 ms, so that small searches need few kernel calls.
FAST_POOL_START = 1 << 14
FAST_FIRST_CHUNK = 1 << 14

_FAST_KERNELS: dict = {}


def scaled_bound(x: float) -> int:
    """A bound (a leaf value or +-inf) as a scaled int64 pair with k = 0."""
    if x == math.inf:
        return _INF_S
    if x == -math.inf:
        return -_INF_S
    return int(x) << _SHIFT


def unscaled_bounds(s: np.ndarray) -> np.ndarray:
    """Inverse of :func:`scaled_bound` on an array of bounds (k = 0)."""
    out = (s >> _SHIFT).astype(np.float64)
    out[s >= _INF_S] = math.inf
    out[s <= -_INF_S] = -math.inf
    return out


def fast_paths(height: int) -> np.ndarray:
    """Path of the specialised kernel: per level (pool entry, node, scaled alpha, scaled beta), flat."""
    return np.zeros(4 * (height + 1), dtype=np.int64)


def _integral_bound(x: float) -> bool:
    return math.isinf(x) or (float(x).is_integer() and abs(x) <= 2.0**53)


def fast_key(tree, t, lo0, hi0, storage, trace):
    """The specialised kernel a search runs on, or None for the general kernels.

    Uniform trees with integer or binary leaves, no ``leaf_cost``, the pool
    storage, 2 to ``FAST_MAX_HEIGHT`` levels and integral (or infinite)
    initial bounds.
    """
    if not isinstance(tree, UniformTree) or storage != "pool" or t.leaf_cost > 0:
        return None
    if int(t.value_kind) == VALUES_FLOAT or tree.height > FAST_MAX_HEIGHT or tree.height < 2:
        return None
    if not (_integral_bound(lo0) and _integral_bound(hi0)):
        return None
    # the value kind, compiled-in span and branching alpha-beta's kernels use
    _, vk, span, b, _ = kernel_key(t, True, False, False)
    return (vk, span, b, bool(trace))


def fast_kernel(key):
    """The compiled kernel for ``key`` (see :func:`fast_key`), built once."""
    fn = _FAST_KERNELS.get(key)
    if fn is None:
        fn = _FAST_KERNELS[key] = _build_fast(*key)
    return fn


@njit(cache=True, inline="always")
def _ix(i):
    """An index known to be >= 0, as uint64: Numba then skips the negative-index wraparound."""
    return np.uint64(i)


def _build_fast(value_kind, int_span, branching, record):
    """``fsss_minimax._fsss_pool_kernel`` for uniform trees with integer leaves.

    Same arguments (paths from :func:`fast_paths`, ``lo0``/``hi0`` scaled),
    statuses and ``state``; the pool holds scaled bounds. It reads the pool
    as a flat array (row ``e`` at ``3*e``, unsigned indices). With two
    children (``BC == 2``) Traverse is a handful of selects, the next node's
    first-child index is loaded with its bounds, the backup carries the
    child's new bounds in registers (only the sibling is read), and leaves
    have no entries (their parent's first-child field holds the one
    expanded leaf's value; a parent of two expanded leaves is solved and
    never entered again, Theorem 1), all giving what the loops give.
    """
    VK = value_kind
    SPAN = np.uint64(int_span)
    BC = branching
    RECORD = record
    SCALE = np.int64(_SCALE)
    INF_S = np.int64(_INF_S)

    @njit(cache=True, nogil=True)
    def kernel(t, pool, state, paths, lo0, hi0, restart_deepest, stop_when_proven, leaf_budget, trace):
        path = paths
        P = pool.reshape(pool.size)
        height = t.height
        b = BC if BC > 0 else t.branching
        bottom = height - 1 if BC == 2 else height
        span = SPAN if SPAN > 0 else t.int_span
        first_leaf = t.first_leaf_node
        # parity of the depths where MAX moves
        max_parity = 0 if t.root_to_move > 0 else 1
        cap = pool.shape[0]
        used = state[ST_USED]
        leaves = state[ST_LEAVES]
        nodes = state[ST_NODES]
        rollouts = state[ST_ROLLOUTS]
        path[_ix(0)] = 0
        path[_ix(1)] = 0
        path[_ix(2)] = -INF_S
        path[_ix(3)] = INF_S
        start = state[ST_START]
        resume = state[ST_DESCENDING] == 1
        expanded = 0
        status = BUDGET
        while True:
            if resume:
                resume = False
            else:
                if start == 0 and P[_ix(COL_LO)] == P[_ix(COL_UP)]:
                    status = SOLVED
                    break
                if expanded >= leaf_budget:
                    break
            d = start
            e = path[_ix(4 * d)]
            node = path[_ix(4 * d + 1)]
            alpha = path[_ix(4 * d + 2)]
            beta = path[_ix(4 * d + 3)]
            c0 = P[_ix(3 * e + COL_FIRST)]
            # ---- descend from ``d`` to an unexpanded leaf (BC == 2: to the node above it) ----
            while d < bottom:
                if c0 == UNEXPANDED:
                    if used + b > cap:
                        status = NEED_ROOM
                        break
                    c0 = used
                    for i in range(c0, c0 + b):
                        P[_ix(3 * i + COL_LO)] = lo0
                        P[_ix(3 * i + COL_UP)] = hi0
                        P[_ix(3 * i + COL_FIRST)] = UNEXPANDED
                    P[_ix(3 * e + COL_FIRST)] = c0
                    used = c0 + b
                nodes += 1
                r = 3 * c0
                if BC == 2:
                    f0 = P[_ix(r + COL_FIRST)]
                    f1 = P[_ix(r + 3 + COL_FIRST)]
                    if (d & 1) == max_parity:
                        u0 = min(P[_ix(r + COL_UP)], beta)
                        u1 = min(P[_ix(r + 3 + COL_UP)], beta)
                        take1 = u1 > u0
                        best = max(u0, u1)
                        alpha = max(alpha, max(min(u0, u1), -INF_S))
                        alpha -= np.int64(alpha == best)
                    else:
                        l0 = max(P[_ix(r + COL_LO)], alpha)
                        l1 = max(P[_ix(r + 3 + COL_LO)], alpha)
                        take1 = l1 < l0
                        best = min(l0, l1)
                        beta = min(beta, min(max(l0, l1), INF_S))
                        beta += np.int64(beta == best)
                    best_i = np.int64(take1)
                    c_next = f1 if take1 else f0
                else:
                    if (d & 1) == max_parity:
                        # i* = argmax min(beta, U); alpha' = max(alpha, second), eps step on a tie
                        best = min(P[_ix(r + COL_UP)], beta)
                        best_i = 0
                        sec = -INF_S
                        for i in range(1, b):
                            u = min(P[_ix(r + 3 * i + COL_UP)], beta)
                            if u > best:
                                sec = best if best > sec else sec
                                best = u
                                best_i = i
                            elif u > sec:
                                sec = u
                        alpha = sec if sec > alpha else alpha
                        if alpha == best:
                            alpha -= 1
                    else:
                        # i* = argmin max(alpha, L); beta' = min(beta, second), eps step on a tie
                        best = max(P[_ix(r + COL_LO)], alpha)
                        best_i = 0
                        sec = INF_S
                        for i in range(1, b):
                            lv = max(P[_ix(r + 3 * i + COL_LO)], alpha)
                            if lv < best:
                                sec = best if best < sec else sec
                                best = lv
                                best_i = i
                            elif lv < sec:
                                sec = lv
                        beta = sec if sec < beta else beta
                        if beta == best:
                            beta += 1
                    c_next = P[_ix(r + 3 * best_i + COL_FIRST)]
                d += 1
                e = c0 + best_i
                c0 = c_next
                node = node * b + 1 + best_i
                path[_ix(4 * d)] = e
                path[_ix(4 * d + 1)] = node
                path[_ix(4 * d + 2)] = alpha
                path[_ix(4 * d + 3)] = beta
            if status == NEED_ROOM:
                start = d
                state[ST_DESCENDING] = 1
                break
            if BC == 2:
                # ---- the node above the leaves (at depth ``bottom``) and its new leaf ----
                # its leaf children have no entries: its first-child field holds
                # UNEXPANDED or a code, the scaled value of its expanded leaf + 1
                # (child 0) or + 2 (child 1); + 3 once both are (it is then solved)
                nodes += 1
                code = c0
                lo_a = lo0
                up_a = hi0
                lo_b = lo0
                up_b = hi0
                if code != UNEXPANDED:
                    tag = code & 3
                    w = code - tag
                    if tag != 2:
                        lo_a = w
                        up_a = w
                    if tag != 1:
                        lo_b = w
                        up_b = w
                # Traverse's choice (the leaf's window is never used)
                is_max = (d & 1) == max_parity
                if is_max:
                    take1 = min(up_b, beta) > min(up_a, beta)
                else:
                    take1 = max(lo_b, alpha) < max(lo_a, alpha)
                best_i = np.int64(take1)
                leaf = node * 2 + 1 + best_i - first_leaf
                nodes += 1
                v = uniform_leaf_int(t, leaf, VK, span) * SCALE
                if RECORD:
                    trace[_ix(leaves)] = leaf
                leaves += 1
                expanded += 1
                rollouts += 1
                # back up into this node: the new leaf and its sibling
                s_lo = lo_a if take1 else lo_b
                s_up = up_a if take1 else up_b
                if is_max:
                    lo = max(v, s_lo)
                    up = max(v, s_up)
                else:
                    lo = min(v, s_lo)
                    up = min(v, s_up)
                P[_ix(3 * e + COL_FIRST)] = v + 1 + best_i if code == UNEXPANDED else lo + 3
                start = 0
                if restart_deepest and P[_ix(3 * e + COL_LO)] == lo and P[_ix(3 * e + COL_UP)] == up:
                    start = d
                    top = 0
                else:
                    P[_ix(3 * e + COL_LO)] = lo
                    P[_ix(3 * e + COL_UP)] = up
                    top = d
            else:
                # ---- the leaf ----
                nodes += 1
                v = uniform_leaf_int(t, node - first_leaf, VK, span) * SCALE
                P[_ix(3 * e + COL_LO)] = v
                P[_ix(3 * e + COL_UP)] = v
                if RECORD:
                    trace[_ix(leaves)] = node - first_leaf
                leaves += 1
                expanded += 1
                rollouts += 1
                start = 0
                lo = v
                up = v
                top = d
            # ---- back the bounds up the path, from level top - 1 ----
            for level in range(top - 1, -1, -1):
                ec = e
                e = path[_ix(4 * level)]
                if BC == 2:
                    # (lo, up) are the child's new bounds; fold in its sibling's,
                    # found from the child's entry and node id (node = 2*parent + 1 + i)
                    s = 3 * (ec + 1 - 2 * ((node - 1) & 1))
                    node = (node - 1) >> 1
                    if (level & 1) == max_parity:
                        lo = max(lo, P[_ix(s + COL_LO)])
                        up = max(up, P[_ix(s + COL_UP)])
                    else:
                        lo = min(lo, P[_ix(s + COL_LO)])
                        up = min(up, P[_ix(s + COL_UP)])
                else:
                    c0 = P[_ix(3 * e + COL_FIRST)]
                    lo = P[_ix(3 * c0 + COL_LO)]
                    up = P[_ix(3 * c0 + COL_UP)]
                    if (level & 1) == max_parity:
                        for i in range(c0 + 1, c0 + b):
                            lo = max(lo, P[_ix(3 * i + COL_LO)])
                            up = max(up, P[_ix(3 * i + COL_UP)])
                    else:
                        for i in range(c0 + 1, c0 + b):
                            lo = min(lo, P[_ix(3 * i + COL_LO)])
                            up = min(up, P[_ix(3 * i + COL_UP)])
                if restart_deepest and P[_ix(3 * e + COL_LO)] == lo and P[_ix(3 * e + COL_UP)] == up:
                    start = level
                    break
                P[_ix(3 * e + COL_LO)] = lo
                P[_ix(3 * e + COL_UP)] = up
            if stop_when_proven and start == 0:
                if _proven_scaled(max_parity == 0, P, P[_ix(COL_FIRST)], b) >= 0:
                    status = PROVEN
                    break
        if status != NEED_ROOM:
            state[ST_DESCENDING] = 0
        state[ST_START] = start
        state[ST_USED] = used
        state[ST_LEAVES] = leaves
        state[ST_NODES] = nodes
        state[ST_ROLLOUTS] = rollouts
        return status

    return kernel


@njit(cache=True, inline="always")
def _proven_scaled(maximize, P, c0, n):
    """:func:`proven_child` on the scaled bounds of pool rows ``[c0, c0+n)`` (``P`` flat)."""
    top1 = np.int64(0)
    top1_i = -1
    top2 = -_INF_S - 1
    for i in range(n):
        key = P[_ix(3 * (c0 + i) + COL_UP)] if maximize else -P[_ix(3 * (c0 + i) + COL_LO)]
        if top1_i < 0 or key > top1:
            top2 = top1 if top1_i >= 0 else top2
            top1 = key
            top1_i = i
        elif key > top2:
            top2 = key
    for i in range(n):
        others = top2 if i == top1_i else top1
        mine = P[_ix(3 * (c0 + i) + COL_LO)] if maximize else -P[_ix(3 * (c0 + i) + COL_UP)]
        if mine >= others:
            return i
    return -1

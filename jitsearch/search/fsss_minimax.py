"""FSSS-Minimax (Weinstein, Littman & Goschin, seed 000, Algorithm 2).

Rollouts go from the root to an unexpanded leaf while ``L(root) != U(root)``.
At a node with window (alpha, beta), Traverse clips the children's bounds,
``U'_i = min(beta, U_i)`` and ``L'_i = max(alpha, L_i)``, and picks
``i* = argmax U'`` at MAX nodes (``argmin L'`` at MIN nodes), ties to the
lowest index. The child gets ``alpha' = max(alpha, max_{i != i*} U'_i)`` at
MAX nodes (``beta' = min(beta, min_{i != i*} L'_i)`` at MIN nodes), and when
``alpha' == U'_{i*}`` the paper lowers alpha' by an epsilon "smaller than
the possible differences in leaf values" (raises beta' at MIN nodes).

Exact epsilon
-------------
No fixed epsilon is used. alpha and beta are carried as pairs ``(x, k)``
meaning ``x + k*eps`` for an infinitesimal ``eps > 0`` and compared
lexicographically; node bounds L, U are always leaf values, the initial
bounds or +-inf (k = 0). The epsilon step is then ``k -= 1`` (or ``+= 1``),
which is below every real value above ``x`` however close, so the search is
exact for any float64 leaves, ties included; ``nextafter`` would not be,
since two epsilon steps can meet when two leaves are two ulps apart.

Counting: each rollout expands exactly one new leaf (Theorem 1), so
``leaves_expanded`` = rollouts; ``nodes_visited`` counts node entries over
all rollouts (a node is counted once per rollout through it).

Refinements (section 6 and 7 of the paper), each optional:
(a) ``restart_deepest``: backups stop at, and the next rollout starts from,
    the deepest node of the last trajectory whose (L, U) did not change, with
    the (alpha, beta) it had; the root-to-node path would be the same, so
    the same leaves are expanded in the same order.
(b) ``stop_when_proven``: stop once a root child's L is >= every other
    child's U (<= every other L at a MIN root) and return it.
(c) ``max_leaves`` / ``max_seconds``: anytime budget; returns the current
    root bounds and the best action by lower bound (by upper bound at a MIN
    root).
(d) ``value_range=(lo, hi)``: admissible initial bounds instead of +-inf.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from ..trees import ExplicitTree, UniformTree
from ..trees._access import (
    VALUES_FLOAT,
    VALUES_INT,
    child,
    is_leaf,
    leaf_number,
    leaf_value,
    num_children,
    player_to_move,
    uniform_leaf_int,
)
from .._checks import INT64_MAX, check_bool, check_choice, check_float, check_int, check_max_bytes, check_pair
from ..trees.memory import DEFAULT_MAX_BYTES, memory_guard
from ._limits import (
    NEED_ROOM,
    ChunkClock,
    cancelled,
    check_cancel,
    check_common,
    check_search_bytes,
    trace_bytes,
    tree_max_branching,
)
from ._table import (
    DEFAULT_DENSE_MAX_BYTES,
    grow_table,
    make_table,
    out_of_memory_message,
    table_bounds,
    table_insert,
    table_needs_room,
)
from .depth_first import _CONST_BRANCHING, _DEFAULT_INT_SPAN, trace_buffer, tree_data
from .result import SearchResult

SOLVED = 0
PROVEN = 1
BUDGET = 2
OUT_OF_MEMORY = 3

# state array fields (persist across kernel calls): pool entries / table
# slots used, leaves expanded, node visits, rollouts, the level the next
# rollout starts from, and 1 while a descent waits for room (pool kernel).
_USED, _LEAVES, _NODES, _ROLLOUTS, _START, _DESCENDING = 0, 1, 2, 3, 4, 5
_STATE_SIZE = 6


@njit(cache=True, inline="always")
def _gt(x1, k1, x2, k2):
    """(x1 + k1*eps) > (x2 + k2*eps) for an infinitesimal eps.

    Bitwise operators instead of ``or``/``and`` keep it branch-free.
    """
    return (x1 > x2) | ((x1 == x2) & (k1 > k2))


@njit(cache=True, inline="always")
def fsss_select_child(maximize, bounds, c0, n, ax, ak, bx, bk):
    """Traverse of Algorithm 2 at one node.

    ``bounds[c0:c0+n, 0]`` and ``bounds[c0:c0+n, 1]`` are the children's L
    and U (an offset, not a slice: a slice inside a Numba loop costs
    reference counting); the window is
    (ax + ak*eps, bx + bk*eps). Returns (i*, alpha', beta') as
    (i, ax', ak', bx', bk').
    """
    best_i = -1
    if maximize:
        # i* = argmax U' with U' = min(beta, U); second = max over the others
        best_x = -math.inf
        best_k = 0
        sec_x = -math.inf
        sec_k = 0
        for i in range(n):
            ux = bounds[c0 + i, 1]
            uk = 0
            if _gt(ux, uk, bx, bk):
                ux = bx
                uk = bk
            if best_i < 0 or _gt(ux, uk, best_x, best_k):
                if best_i >= 0 and _gt(best_x, best_k, sec_x, sec_k):
                    sec_x = best_x
                    sec_k = best_k
                best_x = ux
                best_k = uk
                best_i = i
            elif _gt(ux, uk, sec_x, sec_k):
                sec_x = ux
                sec_k = uk
        # alpha' = max(alpha, second); the epsilon step when it meets U'(i*)
        nax = ax
        nak = ak
        if _gt(sec_x, sec_k, nax, nak):
            nax = sec_x
            nak = sec_k
        if nax == best_x and nak == best_k:
            nak -= 1
        return best_i, nax, nak, bx, bk
    # i* = argmin L' with L' = max(alpha, L); second = min over the others
    best_x = math.inf
    best_k = 0
    sec_x = math.inf
    sec_k = 0
    for i in range(n):
        lx = bounds[c0 + i, 0]
        lk = 0
        if _gt(ax, ak, lx, lk):
            lx = ax
            lk = ak
        if best_i < 0 or _gt(best_x, best_k, lx, lk):
            if best_i >= 0 and _gt(sec_x, sec_k, best_x, best_k):
                sec_x = best_x
                sec_k = best_k
            best_x = lx
            best_k = lk
            best_i = i
        elif _gt(sec_x, sec_k, lx, lk):
            sec_x = lx
            sec_k = lk
    nbx = bx
    nbk = bk
    if _gt(nbx, nbk, sec_x, sec_k):
        nbx = sec_x
        nbk = sec_k
    if nbx == best_x and nbk == best_k:
        nbk += 1
    return best_i, ax, ak, nbx, nbk


@njit(cache=True, inline="always")
def fsss_combine(maximize, bounds, c0, n):
    """Backup of Algorithm 2: (L, U) = (f_i L_i, f_i U_i) over rows ``[c0, c0+n)``."""
    lo = bounds[c0, 0]
    up = bounds[c0, 1]
    for i in range(c0 + 1, c0 + n):
        if maximize:
            lo = max(lo, bounds[i, 0])
            up = max(up, bounds[i, 1])
        else:
            lo = min(lo, bounds[i, 0])
            up = min(up, bounds[i, 1])
    return lo, up


@njit(cache=True, nogil=True)
def proven_child(maximize, child_lo, child_up):
    """Lowest child whose L >= every other U (MAX; MIN: U <= every other L), else -1."""
    n = child_lo.shape[0]
    top1 = -math.inf
    top1_i = -1
    top2 = -math.inf
    for i in range(n):
        key = child_up[i] if maximize else -child_lo[i]
        if top1_i < 0 or key > top1:
            top2 = top1
            top1 = key
            top1_i = i
        elif key > top2:
            top2 = key
    for i in range(n):
        others = top2 if i == top1_i else top1
        mine = child_lo[i] if maximize else -child_up[i]
        if mine >= others:
            return i
    return -1


# -- storage 1: a pool of node entries, children allocated together ---------------
# ``pool``: int64[cap, 3], one row per entry: (L, U) stored as float64 bit
# patterns in columns 0-1 (read through ``pool.view(float64)``) and the index
# of the first child entry in column 2 (UNEXPANDED until the node is first
# traversed). Entry 0 is the root. Children of an entry are contiguous rows,
# so Traverse reads them from one or two cache lines, one row holds all of
# an entry, and the pool only grows with the visited nodes and their
# siblings (node ids are recomputed along the path, not stored).

UNEXPANDED = -1
POOL_ENTRY_BYTES = 24
_LO, _UP, _FIRST = 0, 1, 2


def new_pool(capacity: int, lo0: float, hi0: float) -> np.ndarray:
    """A pool of ``capacity`` unexpanded entries with bounds (lo0, hi0)."""
    pool = np.empty((capacity, 3), dtype=np.int64)
    bounds = pool.view(np.float64)
    bounds[:, _LO] = lo0
    bounds[:, _UP] = hi0
    pool[:, _FIRST] = UNEXPANDED
    return pool


def pool_grow(pool: np.ndarray, cap: int) -> np.ndarray:
    """``pool`` grown to ``cap`` rows in place, and returned (done in Python: the kernel never reallocates).

    A ``realloc`` (``ndarray.resize``): large pools are remapped, not
    copied. The caller must hold no view of ``pool``; rows past the old end
    are zeros until the kernel allocates them.
    """
    pool.resize((cap, 3), refcheck=False)
    return pool


#: Per level of height: the path arrays of the pool kernel (7 x 8 bytes + 1).
POOL_PATH_BYTES = 57
#: Per level of height: the path arrays of the table kernel (5 x 8 bytes).
TABLE_PATH_BYTES = 40


def pool_paths(height: int):
    """Caller-owned path arrays of :func:`_fsss_pool_kernel` (they persist across chunks)."""
    h = height + 1
    return (np.zeros(h, dtype=np.int64), np.zeros(h, dtype=np.int64), np.zeros(h, dtype=np.int64),
            np.zeros(h, dtype=np.bool_), np.zeros(h, dtype=np.float64), np.zeros(h, dtype=np.int64),
            np.zeros(h, dtype=np.float64), np.zeros(h, dtype=np.int64))


def table_paths(height: int, width: int):
    """Caller-owned path arrays and child-bounds scratch of :func:`_fsss_table_kernel`."""
    h = height + 1
    return (np.zeros(h, dtype=np.int64), np.zeros(h, dtype=np.float64), np.zeros(h, dtype=np.int64),
            np.zeros(h, dtype=np.float64), np.zeros(h, dtype=np.int64),
            np.empty((max(width, 1), 2), dtype=np.float64))


@njit(cache=True, nogil=True)
def _fsss_pool_kernel(t, pool, state, paths, lo0, hi0, restart_deepest, stop_when_proven, leaf_budget, trace):
    """FSSS rollouts over a node pool, in place; returns a status.

    ``state`` (int64[6], see ``_USED`` ...), the pool and the path arrays
    ``paths`` persist across calls, so a search split into chunks expands
    the same leaves and visits the same nodes as one call. A call stops when
    the root is solved (SOLVED), the best root move is proven (PROVEN),
    ``leaf_budget`` new leaves were expanded (BUDGET) or a node's children
    do not fit in the pool (NEED_ROOM: the caller grows the pool and calls
    again; the descent resumes where it stopped).
    """
    path_entry, path_node, path_n, path_max, path_ax, path_ak, path_bx, path_bk = paths
    bounds = pool.view(np.float64)
    record = trace.shape[0] > 0
    path_entry[0] = 0
    path_node[0] = 0
    path_ax[0] = -math.inf
    path_ak[0] = 0
    path_bx[0] = math.inf
    path_bk[0] = 0
    start = state[_START]
    resume = state[_DESCENDING] == 1
    expanded = 0
    while True:
        if resume:
            d = start
            resume = False
        else:
            if start == 0 and bounds[0, _LO] == bounds[0, _UP]:
                return SOLVED
            if expanded >= leaf_budget:
                state[_START] = start
                return BUDGET
            d = start
        # ---- descend from ``d`` to an unexpanded leaf ----
        while True:
            e = path_entry[d]
            node = path_node[d]
            if not is_leaf(t, node, d) and pool[e, _FIRST] == UNEXPANDED and \
                    state[_USED] + num_children(t, node, d) > pool.shape[0]:
                state[_START] = d
                state[_DESCENDING] = 1
                return NEED_ROOM
            state[_DESCENDING] = 0
            state[_NODES] += 1
            if is_leaf(t, node, d):
                v = leaf_value(t, node)
                bounds[e, _LO] = v
                bounds[e, _UP] = v
                if record:
                    trace[state[_LEAVES]] = leaf_number(t, node)
                state[_LEAVES] += 1
                expanded += 1
                break
            n = num_children(t, node, d)
            c0 = pool[e, _FIRST]
            if c0 == UNEXPANDED:
                c0 = state[_USED]
                for i in range(c0, c0 + n):
                    bounds[i, _LO] = lo0
                    bounds[i, _UP] = hi0
                    pool[i, _FIRST] = UNEXPANDED
                pool[e, _FIRST] = c0
                state[_USED] = c0 + n
            maximize = player_to_move(t, node, d) > 0
            path_n[d] = n
            path_max[d] = maximize
            best_i, nax, nak, nbx, nbk = fsss_select_child(
                maximize, bounds, c0, n,
                path_ax[d], path_ak[d], path_bx[d], path_bk[d],
            )
            d += 1
            path_entry[d] = c0 + best_i
            path_node[d] = child(t, node, best_i)
            path_ax[d] = nax
            path_ak[d] = nak
            path_bx[d] = nbx
            path_bk[d] = nbk
        state[_ROLLOUTS] += 1
        # ---- back the bounds up the path ----
        start = 0
        for level in range(d - 1, -1, -1):
            e = path_entry[level]
            c0 = pool[e, _FIRST]
            lo, up = fsss_combine(path_max[level], bounds, c0, path_n[level])
            if restart_deepest and bounds[e, _LO] == lo and bounds[e, _UP] == up:
                start = level
                break
            bounds[e, _LO] = lo
            bounds[e, _UP] = up
        if stop_when_proven and start == 0:
            c0 = pool[0, _FIRST]
            n = path_n[0]
            if proven_child(path_max[0], bounds[c0:c0 + n, _LO], bounds[c0:c0 + n, _UP]) >= 0:
                return PROVEN



# -- specialised pool kernel: uniform trees with integer leaves (issue 24) -----------
#
# Integer leaves make the exact epsilon an integer too: the pair ``x + k*eps``
# is the single int64 ``x * 2**_SHIFT + k`` (``|k|`` never exceeds the depth,
# below ``2**(_SHIFT-1)``; infinities are ``+-_INF_S``, beyond every scaled
# leaf, as ``|x| <= 2**53``). The map keeps the lexicographic order and
# equality, so every comparison, select and epsilon step gives what the
# float pairs give: same leaves, same order, same counts. The pool keeps its
# layout (int64[cap, 3], children contiguous, same growth) with the scaled
# bounds, whose ``k`` is 0, in columns 0-1. Kernels are built per
# combination of flags, value kind, span and branching (as in
# ``depth_first._build_uniform``), so the hot loop tests none of them.

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
    vk = int(t.value_kind)
    span = int(t.int_span) if vk == VALUES_INT and t.int_span == _DEFAULT_INT_SPAN else 0
    b = int(t.branching) if int(t.branching) in _CONST_BRANCHING else 0
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
    """:func:`_fsss_pool_kernel` for uniform trees with integer leaves.

    Same arguments (paths from :func:`fast_paths`, ``lo0``/``hi0`` scaled),
    statuses and ``state``; the pool holds scaled bounds. It reads the pool
    as a flat array (row ``e`` at ``3*e``). With two children (``BC == 2``)
    Traverse is a handful of selects, the next node's first-child index is
    loaded with its bounds, and the backup carries the child's new bounds in
    registers (only the sibling is read), all giving what the loops give.
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
        used = state[_USED]
        leaves = state[_LEAVES]
        nodes = state[_NODES]
        rollouts = state[_ROLLOUTS]
        path[_ix(0)] = 0
        path[_ix(1)] = 0
        path[_ix(2)] = -INF_S
        path[_ix(3)] = INF_S
        start = state[_START]
        resume = state[_DESCENDING] == 1
        expanded = 0
        status = BUDGET
        while True:
            if resume:
                resume = False
            else:
                if start == 0 and P[_ix(_LO)] == P[_ix(_UP)]:
                    status = SOLVED
                    break
                if expanded >= leaf_budget:
                    break
            d = start
            e = path[_ix(4 * d)]
            node = path[_ix(4 * d + 1)]
            alpha = path[_ix(4 * d + 2)]
            beta = path[_ix(4 * d + 3)]
            c0 = P[_ix(3 * e + _FIRST)]
            # ---- descend from ``d`` to an unexpanded leaf (BC == 2: to the node above it) ----
            while d < bottom:
                if c0 == UNEXPANDED:
                    if used + b > cap:
                        status = NEED_ROOM
                        break
                    c0 = used
                    for i in range(c0, c0 + b):
                        P[_ix(3 * i + _LO)] = lo0
                        P[_ix(3 * i + _UP)] = hi0
                        P[_ix(3 * i + _FIRST)] = UNEXPANDED
                    P[_ix(3 * e + _FIRST)] = c0
                    used = c0 + b
                nodes += 1
                r = 3 * c0
                if BC == 2:
                    f0 = P[_ix(r + _FIRST)]
                    f1 = P[_ix(r + 3 + _FIRST)]
                    if (d & 1) == max_parity:
                        u0 = min(P[_ix(r + _UP)], beta)
                        u1 = min(P[_ix(r + 3 + _UP)], beta)
                        take1 = u1 > u0
                        best = max(u0, u1)
                        alpha = max(alpha, max(min(u0, u1), -INF_S))
                        alpha -= np.int64(alpha == best)
                    else:
                        l0 = max(P[_ix(r + _LO)], alpha)
                        l1 = max(P[_ix(r + 3 + _LO)], alpha)
                        take1 = l1 < l0
                        best = min(l0, l1)
                        beta = min(beta, min(max(l0, l1), INF_S))
                        beta += np.int64(beta == best)
                    best_i = np.int64(take1)
                    c_next = f1 if take1 else f0
                else:
                    if (d & 1) == max_parity:
                        # i* = argmax min(beta, U); alpha' = max(alpha, second), eps step on a tie
                        best = min(P[_ix(r + _UP)], beta)
                        best_i = 0
                        sec = -INF_S
                        for i in range(1, b):
                            u = min(P[_ix(r + 3 * i + _UP)], beta)
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
                        best = max(P[_ix(r + _LO)], alpha)
                        best_i = 0
                        sec = INF_S
                        for i in range(1, b):
                            lv = max(P[_ix(r + 3 * i + _LO)], alpha)
                            if lv < best:
                                sec = best if best < sec else sec
                                best = lv
                                best_i = i
                            elif lv < sec:
                                sec = lv
                        beta = sec if sec < beta else beta
                        if beta == best:
                            beta += 1
                    c_next = P[_ix(r + 3 * best_i + _FIRST)]
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
                state[_DESCENDING] = 1
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
                P[_ix(3 * e + _FIRST)] = v + 1 + best_i if code == UNEXPANDED else lo + 3
                start = 0
                if restart_deepest and P[_ix(3 * e + _LO)] == lo and P[_ix(3 * e + _UP)] == up:
                    start = d
                    top = 0
                else:
                    P[_ix(3 * e + _LO)] = lo
                    P[_ix(3 * e + _UP)] = up
                    top = d
            else:
                # ---- the leaf ----
                nodes += 1
                v = uniform_leaf_int(t, node - first_leaf, VK, span) * SCALE
                P[_ix(3 * e + _LO)] = v
                P[_ix(3 * e + _UP)] = v
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
                c0 = P[_ix(3 * e + _FIRST)]
                if BC == 2:
                    # (lo, up) are the child's new bounds; fold in its sibling's
                    s = 3 * (2 * c0 + 1 - ec)
                    if (level & 1) == max_parity:
                        lo = max(lo, P[_ix(s + _LO)])
                        up = max(up, P[_ix(s + _UP)])
                    else:
                        lo = min(lo, P[_ix(s + _LO)])
                        up = min(up, P[_ix(s + _UP)])
                else:
                    lo = P[_ix(3 * c0 + _LO)]
                    up = P[_ix(3 * c0 + _UP)]
                    if (level & 1) == max_parity:
                        for i in range(c0 + 1, c0 + b):
                            lo = max(lo, P[_ix(3 * i + _LO)])
                            up = max(up, P[_ix(3 * i + _UP)])
                    else:
                        for i in range(c0 + 1, c0 + b):
                            lo = min(lo, P[_ix(3 * i + _LO)])
                            up = min(up, P[_ix(3 * i + _UP)])
                if restart_deepest and P[_ix(3 * e + _LO)] == lo and P[_ix(3 * e + _UP)] == up:
                    start = level
                    break
                P[_ix(3 * e + _LO)] = lo
                P[_ix(3 * e + _UP)] = up
            if stop_when_proven and start == 0:
                if _proven_scaled(max_parity == 0, P, P[_ix(_FIRST)], b) >= 0:
                    status = PROVEN
                    break
        if status != NEED_ROOM:
            state[_DESCENDING] = 0
        state[_START] = start
        state[_USED] = used
        state[_LEAVES] = leaves
        state[_NODES] = nodes
        state[_ROLLOUTS] = rollouts
        return status

    return kernel


@njit(cache=True, inline="always")
def _proven_scaled(maximize, P, c0, n):
    """:func:`proven_child` on the scaled bounds of pool rows ``[c0, c0+n)`` (``P`` flat)."""
    top1 = np.int64(0)
    top1_i = -1
    top2 = -_INF_S - 1
    for i in range(n):
        key = P[_ix(3 * (c0 + i) + _UP)] if maximize else -P[_ix(3 * (c0 + i) + _LO)]
        if top1_i < 0 or key > top1:
            top2 = top1 if top1_i >= 0 else top2
            top1 = key
            top1_i = i
        elif key > top2:
            top2 = key
    for i in range(n):
        others = top2 if i == top1_i else top1
        mine = P[_ix(3 * (c0 + i) + _LO)] if maximize else -P[_ix(3 * (c0 + i) + _UP)]
        if mine >= others:
            return i
    return -1


# -- storage 2: per-node bounds in a dense array or a hash table (see _table) -----

@njit(cache=True, nogil=True)
def _fsss_table_kernel(t, keys, lower, upper, state, paths, lo0, hi0, restart_deepest, stop_when_proven,
                       leaf_budget, trace):
    """FSSS rollouts with bounds keyed by node index, in place; returns a status.

    Same policy, statuses and ``state`` layout as :func:`_fsss_pool_kernel`
    (``state[0]`` counts table slots); NEED_ROOM comes before a rollout
    when the hash table could pass half full during it (the caller grows it
    with ``table_grow`` and calls again).
    """
    height = t.height
    path_node, path_ax, path_ak, path_bx, path_bk, child_bounds = paths
    used = state[_USED:_USED + 1]
    record = trace.shape[0] > 0
    path_node[0] = 0
    path_ax[0] = -math.inf
    path_ak[0] = 0
    path_bx[0] = math.inf
    path_bk[0] = 0
    start = state[_START]
    expanded = 0
    while True:
        if start == 0:
            root_lo, root_up = table_bounds(keys, lower, upper, 0, lo0, hi0)
            if root_lo == root_up:
                return SOLVED
        if expanded >= leaf_budget:
            state[_START] = start
            return BUDGET
        if table_needs_room(keys, used, height + 1):
            state[_START] = start
            return NEED_ROOM
        d = start
        while True:
            node = path_node[d]
            state[_NODES] += 1
            if is_leaf(t, node, d):
                v = leaf_value(t, node)
                slot = table_insert(keys, lower, upper, node, used, lo0, hi0)
                lower[slot] = v
                upper[slot] = v
                if record:
                    trace[state[_LEAVES]] = leaf_number(t, node)
                state[_LEAVES] += 1
                expanded += 1
                break
            n = num_children(t, node, d)
            for i in range(n):
                child_bounds[i, 0], child_bounds[i, 1] = table_bounds(
                    keys, lower, upper, child(t, node, i), lo0, hi0
                )
            best_i, nax, nak, nbx, nbk = fsss_select_child(
                player_to_move(t, node, d) > 0, child_bounds, 0, n,
                path_ax[d], path_ak[d], path_bx[d], path_bk[d],
            )
            d += 1
            path_node[d] = child(t, node, best_i)
            path_ax[d] = nax
            path_ak[d] = nak
            path_bx[d] = nbx
            path_bk[d] = nbk
        state[_ROLLOUTS] += 1
        start = 0
        for level in range(d - 1, -1, -1):
            node = path_node[level]
            n = num_children(t, node, level)
            for i in range(n):
                child_bounds[i, 0], child_bounds[i, 1] = table_bounds(
                    keys, lower, upper, child(t, node, i), lo0, hi0
                )
            lo, up = fsss_combine(player_to_move(t, node, level) > 0, child_bounds, 0, n)
            slot = table_insert(keys, lower, upper, node, used, lo0, hi0)
            if restart_deepest and lower[slot] == lo and upper[slot] == up:
                start = level
                break
            lower[slot] = lo
            upper[slot] = up
        if stop_when_proven and start == 0:
            n = num_children(t, 0, 0)
            for i in range(n):
                child_bounds[i, 0], child_bounds[i, 1] = table_bounds(keys, lower, upper, child(t, 0, i), lo0, hi0)
            if proven_child(player_to_move(t, 0, 0) > 0, child_bounds[:n, 0], child_bounds[:n, 1]) >= 0:
                return PROVEN


def _value_range(tree, value_range):
    if value_range is None:
        return -math.inf, math.inf
    lo, hi = check_pair("value_range", value_range)
    if lo > hi:
        raise ValueError(f"value_range needs lo <= hi, got ({lo}, {hi})")
    if isinstance(tree, ExplicitTree):
        lv = tree.leaf_value[tree.is_leaf]
        if lv.min() < lo or lv.max() > hi:
            raise ValueError(
                f"value_range ({lo}, {hi}) is not admissible: leaf values span [{lv.min()}, {lv.max()}]"
            )
    else:
        tlo, thi = tree.value_range
        if tlo < lo or thi > hi:
            raise ValueError(
                f"value_range ({lo}, {hi}) is not admissible: this tree's leaves lie in [{tlo}, {thi}]"
            )
    return lo, hi


def _root_num_children(tree) -> int:
    if isinstance(tree, ExplicitTree):
        return int(tree.num_children[0])
    return tree.branching if tree.height > 0 else 0


def fsss(
    tree,
    *,
    restart_deepest: bool = False,
    stop_when_proven: bool = False,
    max_leaves: int | None = None,
    max_seconds: float | None = None,
    value_range=None,
    storage: str = "pool",
    trace: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    dense_max_bytes: int = DEFAULT_DENSE_MAX_BYTES,
    cancel=None,
) -> SearchResult:
    """FSSS-Minimax over an explicit or uniform tree (see module docstring).

    Uniform trees with integer or binary leaves run on a specialised kernel
    (scaled int64 pairs, flags compiled in); it expands the same leaves in
    the same order, with the same counts and result, as the general one.

    Parameters
    ----------
    restart_deepest, stop_when_proven, max_leaves, max_seconds, value_range :
        refinements (a)-(d) of the module docstring. ``max_leaves``: an
        integer in [0, 2**63); ``max_seconds``: a finite number > 0.
    storage : "pool" (default), "auto", "dense" or "hash"
        Where the per-node (L, U) bounds live. ``pool``: entries for the
        visited nodes and their siblings, children contiguous (fastest, and
        memory grows with the search, not the tree). ``dense``: one entry per
        tree node, indexed by node. ``hash``: a hash table keyed by node
        index. ``auto``: dense for explicit trees and implicit trees whose
        dense table fits ``dense_max_bytes``, else hash. All expand the same
        leaves in the same order.
    trace : record leaf numbers in expansion order.
    max_bytes : everything the search allocates (path arrays of height + 1
        levels, trace, bound storage, including the old and new copies
        while the storage grows) must fit; refused (ValueError) otherwise,
        before allocating.
    cancel : None or an object with ``is_set()`` (a ``threading.Event``):
        checked between chunks of the search (a chunk runs about 0.2 s);
        when set the search stops as if interrupted.

    Returns
    -------
    SearchResult. When the root is solved, ``value`` is its minimax value and
    ``best_move`` the lowest root child whose bounds prove it attains that
    value. When stopped early (refinements b and c, or an interrupt),
    ``value`` is the bound the root's player is guaranteed (L at a MAX root,
    U at a MIN root) and ``extra["exact"]`` is False; ``lower <= V <=
    upper`` always holds. ``extra`` also holds ``lower``, ``upper`` (root
    bounds), ``rollouts``, ``stopped`` ("solved", "proven", "max_leaves",
    "max_seconds" or "interrupted"), ``interrupted`` (True when a
    ``KeyboardInterrupt`` or ``cancel`` stopped it between chunks),
    ``storage`` and ``peak_bytes`` (everything allocated, at its largest).
    """
    return _fsss(tree, restart_deepest, stop_when_proven, max_leaves, max_seconds, value_range, storage, trace,
                 max_bytes, dense_max_bytes, cancel, True)


def _fsss(tree, restart_deepest, stop_when_proven, max_leaves, max_seconds, value_range, storage, trace,
          max_bytes, dense_max_bytes, cancel, specialise):
    """:func:`fsss`; ``specialise=False`` keeps to the general kernels (the tests' reference)."""
    trace, max_bytes = check_common(tree, trace, max_bytes)
    restart_deepest = check_bool("restart_deepest", restart_deepest)
    stop_when_proven = check_bool("stop_when_proven", stop_when_proven)
    if max_leaves is not None:
        max_leaves = check_int("max_leaves", max_leaves, 0, INT64_MAX)
    if max_seconds is not None:
        max_seconds = check_float("max_seconds", max_seconds, lo=0.0, lo_open=True)
    check_choice("storage", storage, ("pool", "auto", "dense", "hash"))
    dense_max_bytes = check_max_bytes("dense_max_bytes", dense_max_bytes)
    cancel = check_cancel(cancel)
    t = tree_data(tree)
    lo0, hi0 = _value_range(tree, value_range)
    height = int(tree.height)
    width = tree_max_branching(tree)
    name = "FSSS"
    key = fast_key(tree, t, lo0, hi0, storage, trace) if specialise else None
    if storage == "pool":
        path_bytes = POOL_PATH_BYTES if key is None else FAST_PATH_BYTES
        pool_start = 1024
        if key is not None and 3 * FAST_POOL_START * POOL_ENTRY_BYTES <= max_bytes:
            # the specialised kernel starts larger (fewer grow round trips)
            # where that pool and its first growth fit easily, never above the tree
            pool_start = max(1024, min(FAST_POOL_START, tree.num_nodes))
        parts = {"stack": (height + 1) * path_bytes, "trace": trace_bytes(tree, trace),
                 "pool": pool_start * POOL_ENTRY_BYTES}
    else:
        parts = {"stack": (height + 1) * TABLE_PATH_BYTES + max(width, 1) * 16,
                 "trace": trace_bytes(tree, trace)}
    scratch = check_search_bytes(name, tree, parts, max_bytes)
    with memory_guard(f"{name}'s search arrays", "lower the height or drop trace"):
        buf = trace_buffer(tree, trace, max_bytes)
        state = np.zeros(_STATE_SIZE, dtype=np.int64)
        if storage == "pool":
            scratch -= parts["pool"]
            arrays = [new_pool(pool_start, lo0, hi0)]
            state[_USED] = 1  # entry 0: the root, node 0
            kind = "pool"
            if key is None:
                paths = pool_paths(height)
                kernel = _fsss_pool_kernel
            else:
                lo0, hi0 = scaled_bound(lo0), scaled_bound(hi0)
                arrays[0][0, _LO], arrays[0][0, _UP] = lo0, hi0
                paths = fast_paths(height)
                kernel = fast_kernel(key)
        else:
            keys, lower, upper, kind = make_table(tree, storage, lo0, hi0, max_bytes, dense_max_bytes,
                                                  scratch, f"{name} on this tree")
            arrays = [keys, lower, upper]
            paths = table_paths(height, width)
            kernel = _fsss_table_kernel
    peak = scratch + sum(a.nbytes for a in arrays)
    t0 = time.perf_counter()
    clock = ChunkClock() if key is None else ChunkClock(first=FAST_FIRST_CHUNK)
    stopped = None
    status = BUDGET
    try:
        while True:
            budget = clock.start()
            if max_leaves is not None:
                budget = min(budget, max_leaves - int(state[_LEAVES]))
            status = kernel(t, *arrays, state, paths, lo0, hi0, restart_deepest, stop_when_proven, budget, buf)
            clock.done()
            if status == NEED_ROOM:
                old = sum(a.nbytes for a in arrays)
                arrays = _grow(kind, arrays, state, t, max_bytes, scratch, name)
                peak = max(peak, scratch + old + sum(a.nbytes for a in arrays))
                continue
            if status == SOLVED:
                stopped = "solved"
                break
            if status == PROVEN:
                stopped = "proven"
                break
            if max_leaves is not None and state[_LEAVES] >= max_leaves:
                stopped = "max_leaves"
                break
            if max_seconds is not None and time.perf_counter() - t0 >= max_seconds:
                stopped = "max_seconds"
                break
            if cancelled(cancel):
                stopped = "interrupted"
                break
    except KeyboardInterrupt:
        # raised between chunks: the arrays and ``state`` are consistent
        # (kernels work in place; storage grows only in Python)
        stopped = "interrupted"
    n = _root_num_children(tree)
    if kind == "pool":
        pool = arrays[0]
        c0 = int(pool[0, _FIRST])
        rows = np.concatenate((pool[:1], pool[c0:c0 + n] if c0 != UNEXPANDED else pool[:0]))
        bounds = rows.view(np.float64) if key is None else unscaled_bounds(rows)
        root_lo, root_up = float(bounds[0, _LO]), float(bounds[0, _UP])
        if c0 == UNEXPANDED:
            lo_f, hi_f = (lo0, hi0) if key is None else unscaled_bounds(np.array([lo0, hi0]))
            los, ups = np.full(n, lo_f, dtype=np.float64), np.full(n, hi_f, dtype=np.float64)
        else:
            los, ups = bounds[1:, _LO].copy(), bounds[1:, _UP].copy()
    else:
        root_lo, root_up, los, ups = _table_root_bounds(t, *arrays, lo0, hi0)
    maximize = tree.root_to_move > 0
    exact = root_lo == root_up
    if stopped == "interrupted" and exact:
        stopped = "solved"
    if n == 0:
        best = -1
    elif exact:
        best = int(np.flatnonzero(los == root_lo)[0] if maximize else np.flatnonzero(ups == root_up)[0])
    elif stopped == "proven":
        best = int(proven_child(maximize, los, ups))
    else:  # anytime: the best action by the bound its mover is guaranteed
        best = int(np.argmax(los)) if maximize else int(np.argmin(ups))
    leaves = int(state[_LEAVES])
    value = root_lo if (exact or maximize) else root_up
    return SearchResult(
        algorithm="fsss",
        value=float(value),
        best_move=best,
        leaves_expanded=leaves,
        nodes_visited=int(state[_NODES]),
        trace=buf[:leaves].copy() if trace else None,
        extra={
            "exact": bool(exact),
            "lower": float(root_lo),
            "upper": float(root_up),
            "rollouts": int(state[_ROLLOUTS]),
            "stopped": stopped,
            "storage": kind,
            "peak_bytes": int(peak),
            **({"interrupted": True} if stopped == "interrupted" else {}),
        },
    )


def _grow(kind, arrays, state, t, max_bytes, scratch, name):
    """Grow the pool or hash table between chunks, within ``max_bytes``."""
    what = f"{name} on this tree"
    if kind == "pool":
        pool = arrays[0]
        cap = pool.shape[0]
        need = int(state[_USED]) + max(int(t.max_branching), 1)
        new_cap = cap * 2
        while new_cap < need:
            new_cap *= 2
        # old and new pools may both be alive while realloc copies
        if scratch + (cap + new_cap) * POOL_ENTRY_BYTES > max_bytes:
            raise ValueError(out_of_memory_message(what, max_bytes))
        with memory_guard(f"a pool of {new_cap} entries for {what}", "use a smaller tree or lower max_bytes"):
            return [pool_grow(pool, new_cap)]
    return list(grow_table(*arrays, max_bytes, scratch, what))


@njit(cache=True, nogil=True)
def _table_root_bounds(t, keys, lower, upper, lo0, hi0):
    """Root (L, U) and the root children's (L, U) arrays from a table."""
    root_lo, root_up = table_bounds(keys, lower, upper, 0, lo0, hi0)
    n = num_children(t, 0, 0)
    los = np.empty(n, dtype=np.float64)
    ups = np.empty(n, dtype=np.float64)
    for i in range(n):
        los[i], ups[i] = table_bounds(keys, lower, upper, child(t, 0, i), lo0, hi0)
    return root_lo, root_up, los, ups

"""FSSS-Minimax (Weinstein, Littman & Goschin,
"Rollout-based Game-tree Search Outprunes Traditional Alpha-beta", Algorithm 2).

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
Uniform trees with integer leaves run on :mod:`.fsss_fast`'s kernel, which
carries each pair as one scaled int64 and expands the same leaves.

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

from ..trees import ExplicitTree
from ..trees._access import child, is_leaf, leaf_number, leaf_value, num_children, player_to_move
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
from ._pool import (
    BUDGET,
    COL_FIRST,
    COL_LO,
    COL_UP,
    POOL_ENTRY_BYTES,
    PROVEN,
    SOLVED,
    ST_DESCENDING,
    ST_LEAVES,
    ST_NODES,
    ST_ROLLOUTS,
    ST_START,
    ST_USED,
    STATE_SIZE,
    UNEXPANDED,
    new_pool,
    pool_grow,
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
from .depth_first import trace_buffer, tree_data
from .fsss_fast import (
    FAST_FIRST_CHUNK,
    FAST_PATH_BYTES,
    FAST_POOL_START,
    fast_kernel,
    fast_key,
    fast_paths,
    scaled_bound,
    unscaled_bounds,
)
from .result import SearchResult


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
    # MIN is MAX on negated pairs (-x, -k): i* = argmax -L' with -L' = min(-alpha, -L), then
    # -beta' = max(-beta, second), negated back; negation is exact, so are the results
    s = 1.0 if maximize else -1.0
    col = 1 if maximize else 0
    cx, ck = (bx, bk) if maximize else (-ax, -ak)  # the cap of the children's bounds
    nax, nak = (ax, ak) if maximize else (-bx, -bk)  # the window's other end
    best_i = -1
    # i* = argmax U' with U' = min(beta, U); second = max over the others
    best_x = -math.inf
    best_k = 0
    sec_x = -math.inf
    sec_k = 0
    for i in range(n):
        ux = s * bounds[c0 + i, col]
        uk = 0
        if _gt(ux, uk, cx, ck):
            ux = cx
            uk = ck
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
    if _gt(sec_x, sec_k, nax, nak):
        nax = sec_x
        nak = sec_k
    if nax == best_x and nak == best_k:
        nak -= 1
    if maximize:
        return best_i, nax, nak, bx, bk
    return best_i, ax, ak, -nax, -nak


@njit(cache=True, inline="always")
def fsss_open(path_ax, path_ak, path_bx, path_bk):
    """The root's window (-inf, +inf) at level 0 of a rollout path's window arrays."""
    path_ax[0] = -math.inf
    path_ak[0] = 0
    path_bx[0] = math.inf
    path_bk[0] = 0


@njit(cache=True, inline="always")
def fsss_descend(maximize, bounds, c0, n, path_ax, path_ak, path_bx, path_bk, d):
    """:func:`fsss_select_child` at level ``d`` of a rollout path, the chosen child's window
    written at level ``d + 1``; returns the child's index i*."""
    best_i, path_ax[d + 1], path_ak[d + 1], path_bx[d + 1], path_bk[d + 1] = fsss_select_child(
        maximize, bounds, c0, n, path_ax[d], path_ak[d], path_bx[d], path_bk[d])
    return best_i


@njit(cache=True, inline="always")
def grown(a, used):
    """``a`` (a pool's column) with twice the rows, its first ``used`` rows copied."""
    out = np.empty((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
    out[:used] = a[:used]
    return out


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


# -- storage 1: the pool (layout in ._pool) -------------------------------------

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

    ``state`` (int64[6], see ``ST_USED`` ...), the pool and the path arrays
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
    fsss_open(path_ax, path_ak, path_bx, path_bk)
    start = state[ST_START]
    resume = state[ST_DESCENDING] == 1
    expanded = 0
    while True:
        if resume:
            d = start
            resume = False
        else:
            if start == 0 and bounds[0, COL_LO] == bounds[0, COL_UP]:
                return SOLVED
            if expanded >= leaf_budget:
                state[ST_START] = start
                return BUDGET
            d = start
        # ---- descend from ``d`` to an unexpanded leaf ----
        while True:
            e = path_entry[d]
            node = path_node[d]
            if not is_leaf(t, node, d) and pool[e, COL_FIRST] == UNEXPANDED and \
                    state[ST_USED] + num_children(t, node, d) > pool.shape[0]:
                state[ST_START] = d
                state[ST_DESCENDING] = 1
                return NEED_ROOM
            state[ST_DESCENDING] = 0
            state[ST_NODES] += 1
            if is_leaf(t, node, d):
                v = leaf_value(t, node)
                bounds[e, COL_LO] = v
                bounds[e, COL_UP] = v
                if record:
                    trace[state[ST_LEAVES]] = leaf_number(t, node)
                state[ST_LEAVES] += 1
                expanded += 1
                break
            n = num_children(t, node, d)
            c0 = pool[e, COL_FIRST]
            if c0 == UNEXPANDED:
                c0 = state[ST_USED]
                for i in range(c0, c0 + n):
                    bounds[i, COL_LO] = lo0
                    bounds[i, COL_UP] = hi0
                    pool[i, COL_FIRST] = UNEXPANDED
                pool[e, COL_FIRST] = c0
                state[ST_USED] = c0 + n
            maximize = player_to_move(t, node, d) > 0
            path_n[d] = n
            path_max[d] = maximize
            best_i = fsss_descend(maximize, bounds, c0, n, path_ax, path_ak, path_bx, path_bk, d)
            d += 1
            path_entry[d] = c0 + best_i
            path_node[d] = child(t, node, best_i)
        state[ST_ROLLOUTS] += 1
        # ---- back the bounds up the path ----
        start = 0
        for level in range(d - 1, -1, -1):
            e = path_entry[level]
            c0 = pool[e, COL_FIRST]
            lo, up = fsss_combine(path_max[level], bounds, c0, path_n[level])
            if restart_deepest and bounds[e, COL_LO] == lo and bounds[e, COL_UP] == up:
                start = level
                break
            bounds[e, COL_LO] = lo
            bounds[e, COL_UP] = up
        if stop_when_proven and start == 0:
            c0 = pool[0, COL_FIRST]
            n = path_n[0]
            if proven_child(path_max[0], bounds[c0:c0 + n, COL_LO], bounds[c0:c0 + n, COL_UP]) >= 0:
                return PROVEN


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
    used = state[ST_USED:ST_USED + 1]
    record = trace.shape[0] > 0
    path_node[0] = 0
    fsss_open(path_ax, path_ak, path_bx, path_bk)
    start = state[ST_START]
    expanded = 0
    while True:
        if start == 0:
            root_lo, root_up = table_bounds(keys, lower, upper, 0, lo0, hi0)
            if root_lo == root_up:
                return SOLVED
        if expanded >= leaf_budget:
            state[ST_START] = start
            return BUDGET
        if table_needs_room(keys, used, height + 1):
            state[ST_START] = start
            return NEED_ROOM
        d = start
        while True:
            node = path_node[d]
            state[ST_NODES] += 1
            if is_leaf(t, node, d):
                v = leaf_value(t, node)
                slot = table_insert(keys, lower, upper, node, used, lo0, hi0)
                lower[slot] = v
                upper[slot] = v
                if record:
                    trace[state[ST_LEAVES]] = leaf_number(t, node)
                state[ST_LEAVES] += 1
                expanded += 1
                break
            n = num_children(t, node, d)
            for i in range(n):
                child_bounds[i, 0], child_bounds[i, 1] = table_bounds(
                    keys, lower, upper, child(t, node, i), lo0, hi0
                )
            best_i = fsss_descend(player_to_move(t, node, d) > 0, child_bounds, 0, n, path_ax, path_ak, path_bx,
                                  path_bk, d)
            d += 1
            path_node[d] = child(t, node, best_i)
        state[ST_ROLLOUTS] += 1
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
        state = np.zeros(STATE_SIZE, dtype=np.int64)
        if storage == "pool":
            scratch -= parts["pool"]
            state[ST_USED] = 1  # entry 0: the root, node 0
            kind = "pool"
            if key is None:
                arrays = [new_pool(pool_start, lo0, hi0)]
                paths = pool_paths(height)
                kernel = _fsss_pool_kernel
            else:
                lo0, hi0 = scaled_bound(lo0), scaled_bound(hi0)
                # only the root's row: the kernel fills each row it allocates
                pool = np.empty((pool_start, 3), dtype=np.int64)
                pool[0] = (lo0, hi0, UNEXPANDED)
                arrays = [pool]
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
                budget = min(budget, max_leaves - int(state[ST_LEAVES]))
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
            if max_leaves is not None and state[ST_LEAVES] >= max_leaves:
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
        c0 = int(pool[0, COL_FIRST])
        rows = np.concatenate((pool[:1], pool[c0:c0 + n] if c0 != UNEXPANDED else pool[:0]))
        bounds = rows.view(np.float64) if key is None else unscaled_bounds(rows)
        root_lo, root_up = float(bounds[0, COL_LO]), float(bounds[0, COL_UP])
        if c0 == UNEXPANDED:
            lo_f, hi_f = (lo0, hi0) if key is None else unscaled_bounds(np.array([lo0, hi0]))
            los, ups = np.full(n, lo_f, dtype=np.float64), np.full(n, hi_f, dtype=np.float64)
        else:
            los, ups = bounds[1:, COL_LO].copy(), bounds[1:, COL_UP].copy()
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
    leaves = int(state[ST_LEAVES])
    value = root_lo if (exact or maximize) else root_up
    return SearchResult(
        algorithm="fsss",
        value=float(value),
        best_move=best,
        leaves_expanded=leaves,
        nodes_visited=int(state[ST_NODES]),
        trace=buf[:leaves].copy() if trace else None,
        extra={
            "exact": bool(exact),
            "lower": float(root_lo),
            "upper": float(root_up),
            "rollouts": int(state[ST_ROLLOUTS]),
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
        need = int(state[ST_USED]) + max(int(t.max_branching), 1)
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

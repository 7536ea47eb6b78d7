"""MTD(+inf) (= SSS*) and MTD(f): null-window alpha-beta with memory.

Plaat, Schaeffer, Pijls & de Bruin (1996), "Best-first fixed-depth minimax
algorithms", the baseline of seed 000. ``MT(n, gamma)`` is alpha-beta with
memory and a null window: it answers "is V(n) >= gamma?" and returns a
fail-soft bound ``g`` (``g >= gamma`` means ``V >= g``; ``g < gamma``
means ``V <= g``), storing per node the lower/upper bounds it learns.

MTD(f) starts from a first guess ``f`` and repeatedly tests the current
guess, moving the lower or upper bound, until they meet. MTD(+inf) is
MTD(f) with ``f = +inf``: every test before the last fails and lowers the
upper bound, which makes it SSS* (a max-expansion first).

Exactness for real values: a test "V >= gamma" needs no epsilon; when the
guess equals the current lower bound the next test is "V > gamma", encoded as
the threshold pair (gamma, +1) as in :mod:`jitsearch.search.fsss_minimax`.

Counting: ``leaves_expanded`` counts distinct leaves (a leaf's value is
stored after its first read, so later tests use the stored value);
``nodes_visited`` counts node entries over all tests; ``extra["iterations"]``
is the number of MT calls.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..trees._access import child, is_leaf, leaf_number, leaf_value, num_children, player_to_move
from ..trees.memory import DEFAULT_MAX_BYTES
from ._table import (
    DEFAULT_DENSE_MAX_BYTES,
    make_table,
    max_hash_slots,
    out_of_memory_message,
    table_bytes,
    table_find,
    table_grow,
    table_insert,
    table_needs_room,
)
from .depth_first import trace_buffer, tree_data
from .fsss_minimax import OUT_OF_MEMORY, SOLVED
from .result import SearchResult

_USED, _LEAVES, _NODES, _ITERATIONS = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _ge(x, tx, tk):
    """x >= tx + tk*eps (x has no epsilon part)."""
    return x > tx or (x == tx and tk <= 0)


@njit(cache=True)
def _mt(t, keys, lower, upper, state, tx, tk, max_slots, trace):
    """One null-window test with memory. Returns (status, g, keys, lower, upper)."""
    height = t.height
    stack_node = np.empty(height + 1, dtype=np.int64)
    stack_k = np.empty(height + 1, dtype=np.int64)
    stack_n = np.empty(height + 1, dtype=np.int64)
    stack_max = np.empty(height + 1, dtype=np.bool_)
    stack_g = np.empty(height + 1, dtype=np.float64)
    used = state[_USED:_USED + 1]
    record = trace.shape[0] > 0
    sp = 0
    stack_node[0] = 0
    entering = True
    ret = 0.0
    while True:
        if entering:
            node = stack_node[sp]
            state[_NODES] += 1
            done = False
            slot = table_find(keys, node)
            if slot >= 0:
                lo = lower[slot]
                up = upper[slot]
                if _ge(lo, tx, tk):
                    ret = lo
                    done = True
                elif not _ge(up, tx, tk):
                    ret = up
                    done = True
            if not done and is_leaf(t, node, sp):
                ret = leaf_value(t, node)
                if table_needs_room(keys, used, 1):
                    if 2 * keys.shape[0] > max_slots:
                        return OUT_OF_MEMORY, 0.0, keys, lower, upper
                    keys, lower, upper = table_grow(keys, lower, upper)
                s = table_insert(keys, lower, upper, node, used, -math.inf, math.inf)
                lower[s] = ret
                upper[s] = ret
                if record:
                    trace[state[_LEAVES]] = leaf_number(t, node)
                state[_LEAVES] += 1
                done = True
            if done:
                if sp == 0:
                    return SOLVED, ret, keys, lower, upper
                sp -= 1
                entering = False
                continue
            else:
                maximize = player_to_move(t, node, sp) > 0
                stack_max[sp] = maximize
                stack_n[sp] = num_children(t, node, sp)
                stack_k[sp] = 0
                stack_g[sp] = -math.inf if maximize else math.inf
                stack_node[sp + 1] = child(t, node, 0)
                sp += 1
                continue
        else:
            # child stack_k[sp] returned ret
            if stack_max[sp]:
                stack_g[sp] = max(stack_g[sp], ret)
            else:
                stack_g[sp] = min(stack_g[sp], ret)
            stack_k[sp] += 1
        k = stack_k[sp]
        g = stack_g[sp]
        more = _ge(g, tx, tk) if not stack_max[sp] else not _ge(g, tx, tk)
        if k < stack_n[sp] and more:
            stack_node[sp + 1] = child(t, stack_node[sp], k)
            sp += 1
            entering = True
            continue
        # store what this test learnt about the node and return g
        node = stack_node[sp]
        if table_needs_room(keys, used, 1):
            if 2 * keys.shape[0] > max_slots:
                return OUT_OF_MEMORY, 0.0, keys, lower, upper
            keys, lower, upper = table_grow(keys, lower, upper)
        s = table_insert(keys, lower, upper, node, used, -math.inf, math.inf)
        if _ge(g, tx, tk):
            lower[s] = max(lower[s], g)
        else:
            upper[s] = min(upper[s], g)
        ret = g
        if sp == 0:
            return SOLVED, ret, keys, lower, upper
        sp -= 1
        entering = False


@njit(cache=True, nogil=True)
def _mtd_kernel(t, keys, lower, upper, state, first_guess, max_slots, trace):
    """MTD driver; returns (status, value, keys, lower, upper)."""
    g = first_guess
    lo = -math.inf
    up = math.inf
    while lo < up:
        tx = g
        tk = 1 if g == lo else 0  # test V > g when g is already a lower bound
        status, g, keys, lower, upper = _mt(t, keys, lower, upper, state, tx, tk, max_slots, trace)
        state[_ITERATIONS] += 1
        if status != SOLVED:
            return status, g, keys, lower, upper
        if _ge(g, tx, tk):
            lo = g
        else:
            up = g
    return SOLVED, g, keys, lower, upper


@njit(cache=True)
def _best_root_move(t, keys, lower, upper, value):
    """Lowest root child proven to attain ``value`` by the stored bounds."""
    if is_leaf(t, 0, 0):
        return np.int64(-1)
    maximize = player_to_move(t, 0, 0) > 0
    for i in range(num_children(t, 0, 0)):
        slot = table_find(keys, child(t, 0, i))
        if slot < 0:
            continue
        if maximize and lower[slot] == value:
            return np.int64(i)
        if not maximize and upper[slot] == value:
            return np.int64(i)
    return np.int64(-1)


def _run_mtd(name, tree, first_guess, storage, trace, max_bytes, dense_max_bytes):
    t = tree_data(tree)
    buf = trace_buffer(tree, trace, max_bytes)
    keys, lower, upper, kind = make_table(tree, storage, -math.inf, math.inf, max_bytes, dense_max_bytes)
    state = np.zeros(4, dtype=np.int64)
    status, value, keys, lower, upper = _mtd_kernel(
        t, keys, lower, upper, state, float(first_guess), max_hash_slots(max_bytes), buf
    )
    if status == OUT_OF_MEMORY:
        raise ValueError(out_of_memory_message(f"{name} on this tree", max_bytes))
    leaves = int(state[_LEAVES])
    return SearchResult(
        algorithm=name,
        value=float(value),
        best_move=int(_best_root_move(t, keys, lower, upper, value)),
        leaves_expanded=leaves,
        nodes_visited=int(state[_NODES]),
        trace=buf[:leaves].copy() if trace else None,
        extra={
            "iterations": int(state[_ITERATIONS]),
            "storage": kind,
            "peak_bytes": int(table_bytes(keys, lower, upper) + 5 * 8 * (tree.height + 1)),
        },
    )


def mtd_inf(tree, *, storage: str = "auto", trace: bool = False, max_bytes: int = DEFAULT_MAX_BYTES,
            dense_max_bytes: int = DEFAULT_DENSE_MAX_BYTES) -> SearchResult:
    """MTD(+inf), equivalent to SSS*: exact value, children left to right.

    ``best_move`` is the lowest root child whose stored bound proves it
    attains the value. See the module docstring for what is counted.
    """
    return _run_mtd("mtd-inf", tree, math.inf, storage, trace, max_bytes, dense_max_bytes)


def mtdf(tree, *, first_guess: float = 0.0, storage: str = "auto", trace: bool = False,
         max_bytes: int = DEFAULT_MAX_BYTES, dense_max_bytes: int = DEFAULT_DENSE_MAX_BYTES) -> SearchResult:
    """MTD(f) from ``first_guess`` (default 0; e.g. a shallower search's value)."""
    try:
        f = float(first_guess)
    except (TypeError, ValueError):
        raise ValueError(f"first_guess must be a number, got {first_guess!r}") from None
    if math.isnan(f):
        raise ValueError("first_guess must be a number, not NaN")
    return _run_mtd("mtdf", tree, f, storage, trace, max_bytes, dense_max_bytes)

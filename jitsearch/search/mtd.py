"""MTD(+inf) (= SSS*) and MTD(f): null-window alpha-beta with memory.

Plaat, Schaeffer, Pijls & de Bruin (1996), "Best-first fixed-depth minimax
algorithms", the baseline of Weinstein, Littman & Goschin. ``MT(n, gamma)`` is alpha-beta with
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
from .._checks import check_choice, check_float, check_max_bytes
from ..trees.memory import DEFAULT_MAX_BYTES, memory_guard
from ._limits import NEED_ROOM, ChunkClock, cancelled, check_cancel, check_common, check_search_bytes, trace_bytes
from ._table import (
    DEFAULT_DENSE_MAX_BYTES,
    grow_table,
    make_table,
    table_bytes,
    table_find,
    table_insert,
    table_needs_room,
)
from .depth_first import trace_buffer, tree_data
from .fsss_minimax import SOLVED
from .result import SearchResult

# int64 state (persists across kernel calls): table slots used, leaves
# expanded, node visits, MT calls finished, then the paused test's stack
# pointer, whether it was entering a node, the threshold's epsilon part and
# whether a test is under way.
_USED, _LEAVES, _NODES, _ITERATIONS, _SP, _ENTERING, _TK, _IN_TEST = 0, 1, 2, 3, 4, 5, 6, 7
_STATE_SIZE = 8
# float64 state: current guess, lower and upper bound on the root's value,
# the threshold of the test under way, the value a paused test carries.
_G, _LO, _UP, _TX, _RET = 0, 1, 2, 3, 4
_FSTATE_SIZE = 5
#: Per level of height: the stack arrays of one MT call (4 x 8 bytes + 1).
STACK_BYTES = 33
BUDGET = 2


@njit(cache=True, inline="always")
def _ge(x, tx, tk):
    """x >= tx + tk*eps (x has no epsilon part)."""
    return x > tx or (x == tx and tk <= 0)


def mt_stacks(height: int):
    """Caller-owned stack arrays of :func:`_mt` (they persist across chunks)."""
    h = height + 1
    return (np.zeros(h, dtype=np.int64), np.zeros(h, dtype=np.int64), np.zeros(h, dtype=np.int64),
            np.zeros(h, dtype=np.bool_), np.zeros(h, dtype=np.float64))


@njit(cache=True, nogil=True)
def _mt(t, keys, lower, upper, state, fstate, stacks, node_limit, trace):
    """One null-window test with memory, resumable; returns a status.

    The test is "V >= tx + tk*eps" with ``tx = fstate[_TX]``, ``tk =
    state[_TK]``. SOLVED: the test finished and returned ``g`` in
    ``fstate[_RET]``. BUDGET: ``state[_NODES]`` reached ``node_limit``;
    NEED_ROOM: the hash table is half full (the caller grows it). Both
    pause before any side effect of the step, saving the stack pointer and
    phase in ``state``, so the next call continues exactly.
    """
    stack_node, stack_k, stack_n, stack_max, stack_g = stacks
    used = state[_USED:_USED + 1]
    record = trace.shape[0] > 0
    tx = fstate[_TX]
    tk = state[_TK]
    sp = state[_SP]
    entering = state[_ENTERING] == 1
    ret = fstate[_RET]
    while True:
        if state[_NODES] >= node_limit or table_needs_room(keys, used, 1):
            state[_SP] = sp
            state[_ENTERING] = 1 if entering else 0
            fstate[_RET] = ret
            return BUDGET if state[_NODES] >= node_limit else NEED_ROOM
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
                s = table_insert(keys, lower, upper, node, used, -math.inf, math.inf)
                lower[s] = ret
                upper[s] = ret
                if record:
                    trace[state[_LEAVES]] = leaf_number(t, node)
                state[_LEAVES] += 1
                done = True
            if done:
                if sp == 0:
                    fstate[_RET] = ret
                    return SOLVED
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
        s = table_insert(keys, lower, upper, node, used, -math.inf, math.inf)
        if _ge(g, tx, tk):
            lower[s] = max(lower[s], g)
        else:
            upper[s] = min(upper[s], g)
        ret = g
        if sp == 0:
            fstate[_RET] = ret
            return SOLVED
        sp -= 1
        entering = False  # the parent's update runs on the next pass


@njit(cache=True, nogil=True)
def _mtd_kernel(t, keys, lower, upper, state, fstate, stacks, node_limit, trace):
    """MTD driver, resumable; returns SOLVED (``fstate[_LO] == fstate[_UP]``), BUDGET or NEED_ROOM."""
    while True:
        if state[_IN_TEST] == 0:
            if not fstate[_LO] < fstate[_UP]:
                return SOLVED
            g = fstate[_G]
            fstate[_TX] = g
            state[_TK] = 1 if g == fstate[_LO] else 0  # test V > g when g is already a lower bound
            state[_SP] = 0
            state[_ENTERING] = 1
            stacks[0][0] = 0
            state[_IN_TEST] = 1
        status = _mt(t, keys, lower, upper, state, fstate, stacks, node_limit, trace)
        if status != SOLVED:
            return status
        state[_IN_TEST] = 0
        state[_ITERATIONS] += 1
        g = fstate[_RET]
        fstate[_G] = g
        if _ge(g, fstate[_TX], state[_TK]):
            fstate[_LO] = g
        else:
            fstate[_UP] = g


@njit(cache=True, nogil=True)
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


def _run_mtd(name, tree, first_guess, storage, trace, max_bytes, dense_max_bytes, cancel):
    trace, max_bytes = check_common(tree, trace, max_bytes)
    check_choice("storage", storage, ("auto", "dense", "hash"))
    dense_max_bytes = check_max_bytes("dense_max_bytes", dense_max_bytes)
    cancel = check_cancel(cancel)
    t = tree_data(tree)
    height = int(tree.height)
    parts = {"stack": (height + 1) * STACK_BYTES, "trace": trace_bytes(tree, trace)}
    scratch = check_search_bytes(name, tree, parts, max_bytes)
    with memory_guard(f"{name}'s search arrays", "lower the height or drop trace"):
        buf = trace_buffer(tree, trace, max_bytes)
        stacks = mt_stacks(height)
        keys, lower, upper, kind = make_table(tree, storage, -math.inf, math.inf, max_bytes, dense_max_bytes,
                                              scratch, f"{name} on this tree")
    state = np.zeros(_STATE_SIZE, dtype=np.int64)
    fstate = np.array([first_guess, -math.inf, math.inf, 0.0, 0.0], dtype=np.float64)
    peak = scratch + table_bytes(keys, lower, upper)
    clock = ChunkClock(first=1 << 16)
    interrupted = False
    try:
        while True:
            status = _mtd_kernel(t, keys, lower, upper, state, fstate, stacks,
                                 int(state[_NODES]) + clock.start(), buf)
            clock.done()
            if status == SOLVED:
                break
            if status == NEED_ROOM:
                old = table_bytes(keys, lower, upper)
                keys, lower, upper = grow_table(keys, lower, upper, max_bytes, scratch, f"{name} on this tree")
                peak = max(peak, scratch + old + table_bytes(keys, lower, upper))
            elif cancelled(cancel):
                interrupted = True
                break
    except KeyboardInterrupt:
        # raised between chunks: kernels work in place and the table grows
        # only in Python, so the bounds in ``fstate`` are consistent
        interrupted = True
    lo, up = float(fstate[_LO]), float(fstate[_UP])
    exact = lo == up
    leaves = int(state[_LEAVES])
    maximize = tree.root_to_move > 0
    value = lo if (exact or maximize) else up
    extra = {
        "iterations": int(state[_ITERATIONS]),
        "storage": kind,
        "peak_bytes": int(peak),
    }
    if not exact:
        extra.update(exact=False, lower=lo, upper=up, stopped="interrupted", interrupted=True)
    return SearchResult(
        algorithm=name,
        value=float(value),
        best_move=int(_best_root_move(t, keys, lower, upper, value)) if math.isfinite(value) or exact else -1,
        leaves_expanded=leaves,
        nodes_visited=int(state[_NODES]),
        trace=buf[:leaves].copy() if trace else None,
        extra=extra,
    )


def mtd_inf(tree, *, storage: str = "auto", trace: bool = False, max_bytes: int = DEFAULT_MAX_BYTES,
            dense_max_bytes: int = DEFAULT_DENSE_MAX_BYTES, cancel=None) -> SearchResult:
    """MTD(+inf), equivalent to SSS*: exact value, children left to right.

    ``best_move`` is the lowest root child whose stored bound proves it
    attains the value. See the module docstring for what is counted, and
    :func:`mtdf` for ``max_bytes``, ``cancel`` and interrupts.
    """
    return _run_mtd("mtd-inf", tree, math.inf, storage, trace, max_bytes, dense_max_bytes, cancel)


def mtdf(tree, *, first_guess: float = 0.0, storage: str = "auto", trace: bool = False,
         max_bytes: int = DEFAULT_MAX_BYTES, dense_max_bytes: int = DEFAULT_DENSE_MAX_BYTES,
         cancel=None) -> SearchResult:
    """MTD(f) from ``first_guess`` (default 0; e.g. a shallower search's value).

    ``max_bytes`` bounds everything allocated (stack of height + 1 levels,
    trace, bound table including both copies while it grows). The kernel
    runs in chunks of node visits (about 0.2 s each); a ``KeyboardInterrupt``
    between chunks, or ``cancel`` (an object with ``is_set()``, e.g. a
    ``threading.Event``) found set, stops the search and returns the bounds
    proven so far: ``extra`` then has ``exact`` False, ``lower``, ``upper``
    (``lower <= V <= upper``), ``stopped`` "interrupted" and ``interrupted``
    True; ``value`` is the bound the root's player is guaranteed.
    """
    f = check_float("first_guess", first_guess, allow_inf=True)
    return _run_mtd("mtdf", tree, f, storage, trace, max_bytes, dense_max_bytes, cancel)

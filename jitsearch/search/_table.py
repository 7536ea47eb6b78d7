"""Per-node (lower, upper) bound storage shared by FSSS and MTD.

Two layouts behind the same three functions:

* **dense**: ``keys`` is an empty array and the slot of node ``i`` is ``i``;
  ``lower``/``upper`` hold one entry per node of the tree, pre-filled with
  the default bounds. Used for explicit trees and small implicit ones.
* **hash**: open addressing with linear probing, ``keys[slot]`` = node index
  or ``EMPTY``; capacity a power of two, kept at most half full by
  :func:`table_grow` (called by the kernels, which then return the new
  arrays). Used for implicit trees too large for dense storage.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import mix64
from .._checks import check_choice
from ..trees.memory import check_bytes, format_bytes, memory_guard

EMPTY = -1
#: Bytes per slot of a hash table: key + lower + upper.
HASH_SLOT_BYTES = 24
#: Bytes per node of dense storage: lower + upper.
DENSE_NODE_BYTES = 16
#: Default ceiling for dense storage of an implicit tree; above it: hash.
DEFAULT_DENSE_MAX_BYTES = 64 * 1024**2
INITIAL_HASH_CAPACITY = 1 << 12


@njit(cache=True, inline="always")
def _probe(keys, node):
    """The slot of ``node`` in a hash table (``keys`` not empty), or the empty slot where its
    linear probe ends."""
    cap = keys.shape[0]
    slot = np.int64(mix64(np.uint64(node)) & np.uint64(cap - 1))
    while keys[slot] != node and keys[slot] != EMPTY:
        slot = (slot + 1) & (cap - 1)
    return slot


@njit(cache=True, inline="always")
def table_find(keys, node):
    """Slot of ``node``, or -1 when it has no entry (dense: always ``node``)."""
    if keys.shape[0] == 0:
        return node
    slot = _probe(keys, node)
    return slot if keys[slot] == node else np.int64(-1)


@njit(cache=True, inline="always")
def table_insert(keys, lower, upper, node, used, default_lower, default_upper):
    """Slot of ``node``, creating an entry with the default bounds if absent.

    ``used`` is an int64[1] counter of occupied slots. The caller keeps the
    table at most half full (see :func:`table_needs_room`).
    """
    if keys.shape[0] == 0:
        return node
    slot = _probe(keys, node)
    if keys[slot] == EMPTY:
        keys[slot] = node
        lower[slot] = default_lower
        upper[slot] = default_upper
        used[0] += 1
    return slot


@njit(cache=True, inline="always")
def table_needs_room(keys, used, extra):
    """True when inserting ``extra`` more entries would pass half capacity."""
    cap = keys.shape[0]
    return cap > 0 and 2 * (used[0] + extra) > cap


@njit(cache=True, nogil=True)
def table_grow(keys, lower, upper):
    """Double the capacity of a hash table and re-insert every entry."""
    cap = keys.shape[0] * 2
    new_keys = np.full(cap, EMPTY, dtype=np.int64)
    new_lower = np.empty(cap, dtype=np.float64)
    new_upper = np.empty(cap, dtype=np.float64)
    mask = np.uint64(cap - 1)
    for i in range(keys.shape[0]):
        node = keys[i]
        if node != EMPTY:
            slot = np.int64(mix64(np.uint64(node)) & mask)
            while new_keys[slot] != EMPTY:
                slot = (slot + 1) & (cap - 1)
            new_keys[slot] = node
            new_lower[slot] = lower[i]
            new_upper[slot] = upper[i]
    return new_keys, new_lower, new_upper


@njit(cache=True, inline="always")
def table_bounds(keys, lower, upper, node, default_lower, default_upper):
    """(lower, upper) of ``node``, the defaults when it has no entry."""
    slot = table_find(keys, node)
    if slot < 0:
        return default_lower, default_upper
    return lower[slot], upper[slot]


def make_table(tree, storage: str, default_lower: float, default_upper: float,
               max_bytes: int, dense_max_bytes: int = DEFAULT_DENSE_MAX_BYTES, scratch_bytes: int = 0,
               name: str = "the search"):
    """Allocate bound storage for ``tree``; returns (keys, lower, upper, kind).

    ``storage`` is "auto" (dense for explicit trees and implicit trees whose
    dense table fits ``dense_max_bytes``, hash otherwise), "dense" or "hash".
    Refuses, before allocating, storage that with the search's other
    scratch (``scratch_bytes``: stack, trace) would pass ``max_bytes``.
    """
    from ..trees import ExplicitTree

    check_choice("storage", storage, ("auto", "dense", "hash"))
    n = tree.num_nodes
    if storage == "auto":
        dense = isinstance(tree, ExplicitTree) or n * DENSE_NODE_BYTES <= dense_max_bytes
        storage = "dense" if dense else "hash"
    if storage == "dense":
        check_bytes(
            n * DENSE_NODE_BYTES + scratch_bytes,
            max_bytes,
            f"dense bound storage for {n} nodes (with {format_bytes(scratch_bytes)} of search scratch)",
            "use storage='hash' (--storage hash), a smaller tree, or raise the memory limit",
        )
        with memory_guard(f"dense bound storage for {n} nodes", "use storage='hash' or a smaller tree"):
            return (
                np.zeros(0, dtype=np.int64),
                np.full(n, default_lower, dtype=np.float64),
                np.full(n, default_upper, dtype=np.float64),
                "dense",
            )
    cap = INITIAL_HASH_CAPACITY
    if cap * HASH_SLOT_BYTES + scratch_bytes > max_bytes:
        raise ValueError(out_of_memory_message(name, max_bytes))
    return (
        np.full(cap, EMPTY, dtype=np.int64),
        np.empty(cap, dtype=np.float64),
        np.empty(cap, dtype=np.float64),
        "hash",
    )


def grow_table(keys, lower, upper, max_bytes: int, scratch_bytes: int, name: str):
    """Double a hash table (in Python, between kernel calls), within ``max_bytes``.

    While it grows the old and the new table are both alive: 3x the old
    table's bytes, plus the search's scratch, must fit.
    """
    cap = keys.shape[0]
    peak = 3 * cap * HASH_SLOT_BYTES + scratch_bytes
    if peak > max_bytes:
        raise ValueError(out_of_memory_message(name, max_bytes))
    check_bytes(peak, max_bytes, f"a bound table of {2 * cap} slots for {name}", "use a smaller tree")
    with memory_guard(f"a bound table of {2 * cap} slots for {name}", "use a smaller tree or lower max_bytes"):
        return table_grow(keys, lower, upper)


def table_bytes(keys, lower, upper) -> int:
    return int(keys.nbytes + lower.nbytes + upper.nbytes)


def out_of_memory_message(what: str, max_bytes: int) -> str:
    return (
        f"{what} needs a bound table above the memory limit of {format_bytes(max_bytes)}: "
        "raise max_bytes (--max-memory) or use a smaller tree"
    )

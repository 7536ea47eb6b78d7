"""FSSS-Minimax's node pool: layout, kernel statuses and state fields.

Shared by the general kernels (:mod:`.fsss_minimax`) and the specialised
one (:mod:`.fsss_fast`).
"""

from __future__ import annotations

import numpy as np

SOLVED = 0
PROVEN = 1
BUDGET = 2
OUT_OF_MEMORY = 3

# state array fields (persist across kernel calls): pool entries / table
# slots used, leaves expanded, node visits, rollouts, the level the next
# rollout starts from, and 1 while a descent waits for room (pool kernel).
ST_USED, ST_LEAVES, ST_NODES, ST_ROLLOUTS, ST_START, ST_DESCENDING = 0, 1, 2, 3, 4, 5
STATE_SIZE = 6


# -- storage 1: a pool of node entries, children allocated together ---------------
# ``pool``: int64[cap, 3], one row per entry: (L, U) stored as float64 bit
# patterns in columns 0-1 (read through ``pool.view(float64)``) and the index
# of the first child entry in column 2 (UNEXPANDED until the node is first
# traversed). Entry 0 is the root. Children of an entry are contiguous rows,
# so Traverse reads them from one or two cache lines, one row holds all of
# an entry, and the pool only grows with the visited nodes and their
# siblings (node ids are recomputed along the path, not stored). The
# specialised kernel (fsss_fast) keeps the layout with scaled int64 bounds.

UNEXPANDED = -1
POOL_ENTRY_BYTES = 24
COL_LO, COL_UP, COL_FIRST = 0, 1, 2


def new_pool(capacity: int, lo0: float, hi0: float) -> np.ndarray:
    """A pool of ``capacity`` unexpanded entries with bounds (lo0, hi0)."""
    pool = np.empty((capacity, 3), dtype=np.int64)
    bounds = pool.view(np.float64)
    bounds[:, COL_LO] = lo0
    bounds[:, COL_UP] = hi0
    pool[:, COL_FIRST] = UNEXPANDED
    return pool


def pool_grow(pool: np.ndarray, cap: int) -> np.ndarray:
    """``pool`` grown to ``cap`` rows in place, and returned (done in Python: the kernel never reallocates).

    A ``realloc`` (``ndarray.resize``): large pools are remapped, not
    copied. The caller must hold no view of ``pool``; rows past the old end
    are zeros until the kernel allocates them.
    """
    pool.resize((cap, 3), refcheck=False)
    return pool

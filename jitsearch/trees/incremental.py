"""Incremental random trees (Zhang, "Forward Estimation for Game-Tree Search"; Korf, Pemberton & Zhang 1994).

A tree of depth ``d`` whose edges carry integer costs; a node's cost is the
sum of the edge costs from the root (the root costs 0) and a frontier
node's static value is its cost, from MAX's point of view. The root is MAX
and levels alternate.

Everything is computed from ``(seed, path)``, nothing is stored: a node is
identified by a 64-bit key, ``key(root) = mix64(seed + golden)`` and
``key(child i) = mix64(key(parent) + (i + 1) * golden2)``. From its key a
node derives

* its number of children: ``branching`` (fixed), or with
  ``random_branching`` uniform on ``1 .. 2*branching - 1`` (mean
  ``branching``), ``1 + mix64(key ^ C_BRANCH) % (2b - 1)``;
* the cost of the edge into it: ``edge_lo + mix64(key ^ C_EDGE) % span``,
  uniform on ``edge_lo .. edge_hi`` (default ``-2**15 + 1 .. 2**15`` as in
  the paper).

So depth 12 with b = 10 is as cheap to define as depth 2, every search sees
the same tree, and :func:`IncrementalTree.to_explicit` materialises small
ones for the generic solvers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..rng import M64, mix64, mix64_py
from .._checks import check_bool, check_int
from .memory import DEFAULT_MAX_BYTES, check_bytes, memory_guard

#: Largest branching accepted (children are enumerated one by one).
MAX_INCREMENTAL_BRANCHING = 2**31

DEFAULT_EDGE_RANGE = (-(2**15) + 1, 2**15)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_GOLDEN2 = np.uint64(0xD1B54A32D192ED03)
_C_BRANCH = np.uint64(0xA0761D6478BD642F)
_C_EDGE = np.uint64(0xE7037ED1A0B428DB)


@njit(cache=True, inline="always")
def inc_root_key(seed):
    return mix64(np.uint64(seed) + _GOLDEN)


@njit(cache=True, inline="always")
def inc_child_key(key, i):
    return mix64(key + np.uint64(i + 1) * _GOLDEN2)


@njit(cache=True, inline="always")
def inc_num_children(key, branching, random_branching):
    if not random_branching:
        return np.int64(branching)
    return np.int64(1 + mix64(key ^ _C_BRANCH) % np.uint64(2 * branching - 1))


@njit(cache=True, inline="always")
def inc_edge_cost(key, edge_lo, edge_span):
    return np.float64(edge_lo + np.int64(mix64(key ^ _C_EDGE) % np.uint64(edge_span)))


# -- pure-Python twins (tests and references) ------------------------------------

def root_key_py(seed: int) -> int:
    return mix64_py((seed + 0x9E3779B97F4A7C15) & M64)


def child_key_py(key: int, i: int) -> int:
    return mix64_py((key + (i + 1) * 0xD1B54A32D192ED03) & M64)


@dataclass(frozen=True)
class IncrementalTree:
    """Implicit incremental random tree (see the module docstring).

    Parameters
    ----------
    branching : int >= 1 -- fixed branching, or the mean with random branching.
    depth : int >= 0 -- depth of the frontier.
    seed : int in [0, 2**64).
    random_branching : bool -- uniform on 1 .. 2*branching - 1.
    edge_lo, edge_hi : inclusive integer range of edge costs.
    """

    branching: int
    depth: int
    seed: int = 0
    random_branching: bool = False
    edge_lo: int = DEFAULT_EDGE_RANGE[0]
    edge_hi: int = DEFAULT_EDGE_RANGE[1]

    def __post_init__(self):
        fix = object.__setattr__  # normalise NumPy scalars to Python ints (frozen dataclass)
        fix(self, "branching", check_int("branching", self.branching, 1, MAX_INCREMENTAL_BRANCHING))
        fix(self, "depth", check_int("depth", self.depth, 0, 64))
        fix(self, "seed", check_int("seed", self.seed, 0, 2**64 - 1))
        fix(self, "random_branching", check_bool("random_branching", self.random_branching))
        fix(self, "edge_lo", check_int("edge_lo", self.edge_lo, -(2**52), 2**52))
        fix(self, "edge_hi", check_int("edge_hi", self.edge_hi, -(2**52), 2**52))
        if self.edge_lo > self.edge_hi:
            raise ValueError(f"edge costs need integers edge_lo <= edge_hi, got {self.edge_lo}, {self.edge_hi}")
        if max(abs(self.edge_lo), abs(self.edge_hi)) * max(self.depth, 1) > 2**52:
            raise ValueError("edge costs times depth must stay within 2**52 (exact in float64)")

    # -- derived ---------------------------------------------------------------
    @property
    def max_branching(self) -> int:
        return 2 * self.branching - 1 if self.random_branching else self.branching

    @property
    def edge_span(self) -> int:
        return self.edge_hi - self.edge_lo + 1

    @property
    def root_key(self) -> int:
        return root_key_py(self.seed)

    @property
    def root_to_move(self) -> int:
        return 1

    @property
    def integral(self) -> bool:
        return True

    @property
    def height(self) -> int:
        return self.depth

    def expected_nodes(self, depth: int | None = None) -> float:
        """Expected number of nodes down to ``depth`` (default: the frontier)."""
        d = self._depth_arg(depth)
        b = self.branching
        return float(d + 1) if b == 1 else (b ** (d + 1) - 1) / (b - 1)

    def _depth_arg(self, depth) -> int:
        if depth is None:
            return self.depth
        return check_int("depth", depth, 0, self.depth)

    def _worst_nodes(self, d: int) -> int:
        m = self.max_branching
        return (m ** (d + 1) - 1) // (m - 1) if m > 1 else d + 1

    def describe(self) -> dict:
        return {
            "kind": "incremental",
            "branching": self.branching,
            "random_branching": self.random_branching,
            "depth": self.depth,
            "seed": self.seed,
            "edge_lo": self.edge_lo,
            "edge_hi": self.edge_hi,
        }

    # -- pure-Python twins -----------------------------------------------------
    def num_children_py(self, key: int) -> int:
        if not self.random_branching:
            return self.branching
        return 1 + mix64_py(key ^ 0xA0761D6478BD642F) % (2 * self.branching - 1)

    def edge_cost_py(self, key: int) -> float:
        return float(self.edge_lo + mix64_py(key ^ 0xE7037ED1A0B428DB) % self.edge_span)

    # -- materialising ---------------------------------------------------------
    def to_explicit(self, depth: int | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES):
        """The tree down to ``depth`` as an :class:`ExplicitTree` (costs at its leaves)."""
        from .explicit import BYTES_PER_NODE, ExplicitTree

        d = self._depth_arg(depth)
        worst = self._worst_nodes(d)
        check_bytes(
            worst * (BYTES_PER_NODE * 2 + _EXPAND_BYTES_PER_NODE),
            max_bytes,
            f"an explicit copy of an incremental tree (up to {worst} nodes)",
            "lower the depth or raise max_bytes",
        )
        with memory_guard(f"an explicit copy of an incremental tree (up to {worst} nodes)", "lower the depth"):
            first, num, costs, movers, _ = self._expand(d, worst)
            values = np.where(num == 0, costs, 0.0)
        return ExplicitTree.from_arrays(first, num, movers, values)

    def edge_costs(self, depth: int | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> np.ndarray:
        """Costs of every edge down to ``depth``, breadth first (for learning bounds)."""
        d = self._depth_arg(depth)
        worst = self._worst_nodes(d)
        check_bytes(worst * _EXPAND_BYTES_PER_NODE, max_bytes, f"the edges of {worst} nodes", "lower the depth")
        with memory_guard(f"the edges of {worst} nodes", "lower the depth"):
            return self._expand(d, worst)[4][1:]

    def _expand(self, depth, capacity):
        return _materialise(np.uint64(self.root_key), depth, self.branching, self.random_branching,
                            self.edge_lo, np.uint64(self.edge_span), int(capacity))


#: Bytes per node of the scratch arrays of ``_materialise`` and its results.
_EXPAND_BYTES_PER_NODE = 96


@njit(cache=True, nogil=True)
def _materialise(root_key, depth, branching, random_branching, edge_lo, edge_span, capacity):
    """Breadth-first expansion: (first_child, num_children, cost, to_move, edge_cost)."""
    keys = np.empty(capacity, dtype=np.uint64)
    cost = np.empty(capacity, dtype=np.float64)
    edge = np.zeros(capacity, dtype=np.float64)
    level = np.empty(capacity, dtype=np.int64)
    first = np.zeros(capacity, dtype=np.int64)
    num = np.zeros(capacity, dtype=np.int64)
    keys[0] = root_key
    cost[0] = 0.0
    level[0] = 0
    count = 1
    i = 0
    while i < count:
        if level[i] < depth:
            n = inc_num_children(keys[i], branching, random_branching)
            first[i] = count
            num[i] = n
            for j in range(n):
                ck = inc_child_key(keys[i], j)
                keys[count] = ck
                edge[count] = inc_edge_cost(ck, edge_lo, edge_span)
                cost[count] = cost[i] + edge[count]
                level[count] = level[i] + 1
                count += 1
        i += 1
    movers = np.where(level[:count] % 2 == 0, 1, -1).astype(np.int8)
    return first[:count].copy(), num[:count].copy(), cost[:count].copy(), movers, edge[:count].copy()

"""Implicit uniform trees: branching ``b``, height ``h``, hashed leaves.

Node ``i``'s children are ``i*b + 1 .. i*b + b`` (heap order), so a tree of
height 30 costs no memory. Leaf ``j`` (numbered left to right from 0) has the
value ``f(hash(seed, j))``, the same for every algorithm, on the CPU, in the
plain-Python reference and in materialised copies.

Conventions: the root is MAX unless ``root="min"``; levels alternate; values
are from MAX's point of view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._access import (
    KIND_UNIFORM,
    MAX_IMPLICIT_NODES,
    MAX_PLAYER,
    MIN_PLAYER,
    VALUE_KIND_NAMES,
    VALUES_BINARY,
    VALUES_FLOAT,
    VALUES_INT,
    TreeData,
    fill_leaf_values,
    uniform_num_nodes,
)
from .._checks import check_choice, check_float, check_int, check_max_bytes, is_int
from .memory import DEFAULT_MAX_BYTES, check_bytes, memory_guard
from ..rng import M64, mix64_py

#: Default integer leaf range, about +-2**31 as in Weinstein, Littman & Goschin,
#: "Rollout-based Game-tree Search Outprunes Traditional Alpha-beta".
DEFAULT_INT_RANGE = (-(2**31), 2**31)
#: Default float leaf range.
DEFAULT_FLOAT_RANGE = (0.0, 1.0)

_EMPTY_I64 = np.zeros(0, dtype=np.int64)
_EMPTY_I8 = np.zeros(0, dtype=np.int8)
_EMPTY_F64 = np.zeros(0, dtype=np.float64)



def hash_key_py(seed: int) -> int:
    """Pure-Python twin of the kernels' ``hash_key``."""
    return mix64_py((seed + 0x9E3779B97F4A7C15) & M64)


def leaf_hash_py(seed: int, leaf: int) -> int:
    """Pure-Python twin of the kernels' leaf hash for ``seed`` (references/tests)."""
    return mix64_py((hash_key_py(seed) + leaf * 0x9E3779B97F4A7C15) & M64)


def _parse_root(root) -> int:
    if isinstance(root, str) or _is_int(root):
        if root in ("max", MAX_PLAYER):
            return MAX_PLAYER
        if root in ("min", MIN_PLAYER):
            return MIN_PLAYER
    raise ValueError(f"root must be 'max' or 'min', got {root!r}")


_is_int = is_int


def check_uniform_size(branching: int, height: int) -> int:
    """Refuse a uniform shape with more than ``MAX_IMPLICIT_NODES`` nodes; return its size.

    Works in O(1) for any height: with ``branching >= 2`` a height above 62
    already means more than 2**62 nodes, so ``b**(h+1)`` is never computed
    for huge heights; with ``branching == 1`` the height itself is bounded.
    """
    b, h = int(branching), int(height)
    if b >= 2 and h > 62:
        approx = f"about 10**{h * math.log10(b):.0f}"
    else:
        n = uniform_num_nodes(b, h)
        if n <= MAX_IMPLICIT_NODES:
            return n
        approx = f"{float(n):.3g}" if n.bit_length() < 1000 else f"about 2**{n.bit_length() - 1}"
    raise ValueError(
        f"a uniform tree with branching {b} and height {h} has {approx} nodes; "
        f"node indices must fit in 64 bits (at most 2**62 nodes): lower the height or the branching"
    )


@dataclass(frozen=True)
class UniformTree:
    """Uniform tree of branching ``branching`` and height ``height``.

    Parameters
    ----------
    branching : int >= 1
    height : int >= 0 (height 0 is a single leaf).
    seed : int in [0, 2**64) -- key of the leaf hash.
    values : "int" | "binary" | "float"
        ``int``: uniform integers in [lo, hi] (default [-2**31, 2**31]);
        ``binary``: 0 or 1 with probability 1/2; ``float``: uniform in
        [lo, hi) (default [0, 1)).
    lo, hi : bounds of the value range (ignored for binary).
    root : "max" | "min" -- who moves at the root; levels alternate.
    leaf_cost : int >= 0 -- extra hash rounds each time a kernel reads a
        leaf: a benchmark knob for expensive leaf evaluations. It does not
        change the leaves (see ``_access.hashed_leaf_value``).
    """

    branching: int
    height: int
    seed: int = 0
    values: str = "int"
    lo: float | None = None
    hi: float | None = None
    root: str = "max"
    leaf_cost: int = 0

    def __post_init__(self):
        b = check_int("branching", self.branching, 1, MAX_IMPLICIT_NODES)
        h = check_int("height", self.height, 0)
        object.__setattr__(self, "branching", b)
        object.__setattr__(self, "height", h)
        object.__setattr__(self, "seed", check_int("seed", self.seed, 0, 2**64 - 1))
        check_choice("values", self.values, tuple(VALUE_KIND_NAMES))
        _parse_root(self.root)
        object.__setattr__(self, "leaf_cost", check_int("leaf_cost", self.leaf_cost, 0, 10**7))
        check_uniform_size(b, h)
        for name in ("lo", "hi"):
            x = getattr(self, name)
            if x is not None:
                check_float(name, x)
        lo, hi = self.value_range
        if self.values == "int":
            if not (_is_int(lo) and _is_int(hi)):
                raise ValueError(f"integer leaves need integer lo and hi, got {lo!r}, {hi!r}")
            if lo > hi:
                raise ValueError(f"lo must be <= hi, got lo={lo} hi={hi}")
            if not (-(2**53) <= lo and hi <= 2**53):
                raise ValueError("integer leaf range must lie within +-2**53 (exact in float64)")
        elif self.values == "float":
            if not lo < hi or not math.isfinite(float(hi) - float(lo)):
                raise ValueError(f"float leaves need finite lo < hi, got lo={lo} hi={hi}")

    # -- shape -------------------------------------------------------------
    @property
    def value_range(self):
        """(lo, hi) actually used: int range inclusive, float range [lo, hi)."""
        if self.values == "binary":
            return (0, 1)
        default = DEFAULT_INT_RANGE if self.values == "int" else DEFAULT_FLOAT_RANGE
        lo = default[0] if self.lo is None else self.lo
        hi = default[1] if self.hi is None else self.hi
        if self.values == "int":
            # accept integral floats like 3.0 from JSON/CLI
            if isinstance(lo, float) and lo.is_integer():
                lo = int(lo)
            if isinstance(hi, float) and hi.is_integer():
                hi = int(hi)
        return (lo, hi)

    @property
    def num_nodes(self) -> int:
        return uniform_num_nodes(self.branching, self.height)

    @property
    def num_leaves(self) -> int:
        return self.branching**self.height

    @property
    def first_leaf_node(self) -> int:
        return self.num_nodes - self.num_leaves

    @property
    def root_to_move(self) -> int:
        return _parse_root(self.root)

    @property
    def integral(self) -> bool:
        """True when every leaf value is an integer."""
        return self.values != "float"

    def describe(self) -> dict:
        lo, hi = self.value_range
        return {
            "kind": "uniform",
            "branching": self.branching,
            "height": self.height,
            "seed": self.seed,
            "values": self.values,
            "lo": lo,
            "hi": hi,
            "root": "max" if self.root_to_move == MAX_PLAYER else "min",
            "num_leaves": self.num_leaves,
        }

    # -- kernels' view -------------------------------------------------------
    def data(self) -> TreeData:
        lo, hi = self.value_range
        kind = VALUE_KIND_NAMES[self.values]
        int_lo, int_span, float_lo, float_width = 0, 1, 0.0, 1.0
        if kind == VALUES_INT:
            int_lo, int_span = int(lo), int(hi) - int(lo) + 1
        elif kind == VALUES_FLOAT:
            float_lo, float_width = float(lo), float(hi) - float(lo)
        elif kind == VALUES_BINARY:
            int_lo, int_span = 0, 2
        return TreeData(
            KIND_UNIFORM,
            _EMPTY_I64,
            _EMPTY_I64,
            _EMPTY_I8,
            _EMPTY_F64,
            _EMPTY_I64,
            _EMPTY_F64,
            _EMPTY_F64,
            int(self.branching),
            int(self.height),
            int(self.branching) if self.height > 0 else 0,
            np.uint64(hash_key_py(self.seed)),
            int(kind),
            int(int_lo),
            np.uint64(int_span),
            float(float_lo),
            float(float_width),
            int(self.root_to_move),
            int(self.first_leaf_node),
            int(self.leaf_cost),
        )

    # -- materialising -------------------------------------------------------
    def leaf_values(self, *, max_bytes: int = DEFAULT_MAX_BYTES) -> np.ndarray:
        """All leaf values, left to right, as float64 (refuses huge trees)."""
        n = self.num_leaves
        check_bytes(
            n * 8,
            max_bytes,
            f"the {n} leaf values of a uniform tree (branching {self.branching}, "
            f"height {self.height})",
            "lower the height or raise max_bytes",
        )
        with memory_guard(f"the {n} leaf values of a uniform tree", "lower the height"):
            out = np.empty(n, dtype=np.float64)
            fill_leaf_values(self.data(), out)
        return out

    def leaf_value(self, leaf: int) -> float:
        """Value of one leaf, computed in pure Python (reference twin)."""
        leaf = check_int("leaf", leaf, 0, self.num_leaves - 1)
        h = leaf_hash_py(self.seed, leaf)
        lo, hi = self.value_range
        if self.values == "int":
            return float(lo + h % (hi - lo + 1))
        if self.values == "binary":
            return float(h >> 63)
        return lo + float(h >> 11) * (1.0 / 2**53) * (hi - lo)

    def to_explicit(self, *, max_bytes: int = DEFAULT_MAX_BYTES):
        """The same tree as an :class:`ExplicitTree` (same node numbering)."""
        from .explicit import BUILD_BYTES_PER_NODE, ExplicitTree

        max_bytes = check_max_bytes("max_bytes", max_bytes)
        n = self.num_nodes
        check_bytes(
            n * BUILD_BYTES_PER_NODE + self.num_leaves * 8,
            max_bytes,
            f"an explicit copy of a uniform tree with {n} nodes",
            "lower the height or raise max_bytes",
        )
        values = self.leaf_values(max_bytes=max_bytes)
        return ExplicitTree.from_uniform_leaves(
            self.branching, self.height, values, root=self.root, integral=self.integral,
            max_bytes=max_bytes,
        )

    def __repr__(self):  # pragma: no cover - cosmetic
        lo, hi = self.value_range
        return (
            f"UniformTree(branching={self.branching}, height={self.height}, seed={self.seed}, "
            f"values={self.values!r}, lo={lo}, hi={hi}, root={self.root!r})"
        )


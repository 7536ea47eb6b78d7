"""Explicit trees of any shape as a struct of arrays (CSR children).

Layout
------
Node ``i``'s children are ``first_child[i] : first_child[i] + num_children[i]``
(contiguous, left to right); a node with no children is a leaf. The root is
node 0 and every child has a larger index than its parent (trees built here
are numbered breadth first). ``to_move[i]`` is +1 where MAX moves, -1 where MIN
moves; it is stored per node, not derived from depth, so games with extra
turns fit. ``leaf_value`` holds values from MAX's point of view (0 at internal
nodes). Leaves are numbered left to right from 0 in ``leaf_number`` (-1 at
internal nodes). ``loss_a`` / ``loss_b`` are the optional two-agent losses
(the textbook chapter "Multiagent Search", section 3.3), NaN where absent.

Formats
-------
Nested lists: a number is a leaf, a list is a node whose elements are its
children: ``[[3, 5], [2, [9, 1]]]``. The root moves as MAX unless stated and
levels alternate. A node may also be a JSON object with the keys
``children`` (list) or ``value`` (number), and optionally ``to_move``
("max"/"min", overriding the alternation for that node; its children
alternate from it), ``loss_a`` and ``loss_b``.

Uniform JSON: ``{"branching": b, "height": h, "leaves": [...]}`` with b**h
leaf values, left to right, and optionally ``"root": "max"|"min"``.

``.npz``: the arrays ``first_child``, ``num_children``, ``to_move``,
``leaf_value`` and optionally ``loss_a``, ``loss_b``.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from dataclasses import dataclass

import numpy as np
from numba import njit

from ._access import KIND_EXPLICIT, MAX_IMPLICIT_NODES, MAX_PLAYER, MIN_PLAYER, TreeData, uniform_num_nodes
from .._checks import check_bool, check_int, check_max_bytes, is_int
from .memory import DEFAULT_MAX_BYTES, check_bytes, memory_guard

#: Bytes of arrays held per node by an ExplicitTree (an upper estimate).
BYTES_PER_NODE = 64
#: Peak bytes per node while an ExplicitTree is built from arrays (the tree,
#: the validation scratch of ``_structure`` and NumPy temporaries).
BUILD_BYTES_PER_NODE = 128
#: Peak bytes per byte of JSON text while a JSON tree is parsed and built
#: (Python objects of ``json.load`` and of ``from_nested``, then the arrays).
JSON_BYTES_PER_TEXT_BYTE = 80
_NPZ_ARRAYS = ("first_child", "num_children", "to_move", "leaf_value", "loss_a", "loss_b")
_EXACT_INT = 2**53
_NODE_KEYS = {"children", "value", "to_move", "loss_a", "loss_b"}


def _loc(where) -> str:
    """``where`` is a location string or a function building one (only on error)."""
    return where() if callable(where) else where


def _player(name, where) -> int:
    if isinstance(name, str) or is_int(name):
        if name in ("max", "MAX", 1):
            return MAX_PLAYER
        if name in ("min", "MIN", -1):
            return MIN_PLAYER
    raise ValueError(f"to_move must be 'max' or 'min', got {_short(name)} at {_loc(where)}")


def _short(x) -> str:
    try:
        text = repr(x)
    except RecursionError:  # pragma: no cover - a self-containing object
        text = f"<{type(x).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def _number(x, what, where) -> tuple[float, bool]:
    """Validate one number; return (float value, is_integer).

    ``where`` may be a function: the location string is built only when an
    error is reported, so validating N leaves costs O(N), whatever the depth.
    """
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ValueError(f"{what} must be a number, got {_short(x)} at {_loc(where)}")
    if isinstance(x, (int, np.integer)):
        if abs(int(x)) > _EXACT_INT:
            raise ValueError(f"{what} {_short(x)} at {_loc(where)} is beyond +-2**53 and cannot be held exactly")
        return float(x), True
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v} at {_loc(where)}")
    return v, v.is_integer() and abs(v) <= _EXACT_INT


@njit(cache=True, nogil=True)
def _structure(first_child, num_children):
    """Check CSR consistency; return (status, bad_node, depth, leaf_number).

    status: 0 ok, 1 child range out of bounds or not after its parent,
    2 a node is nobody's child or several nodes' child.
    """
    n = num_children.shape[0]
    depth = np.zeros(n, dtype=np.int64)
    leaf_number = np.full(n, -1, dtype=np.int64)
    cover = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        k = num_children[i]
        if k < 0:
            return 1, i, depth, leaf_number
        if k > 0:
            f = first_child[i]
            if f <= i or f + k > n:
                return 1, i, depth, leaf_number
            cover[f] += 1
            cover[f + k] -= 1
    run = 0
    for i in range(n):
        run += cover[i]
        if (i == 0 and run != 0) or (i > 0 and run != 1):
            return 2, i, depth, leaf_number
    for i in range(n):
        f = first_child[i]
        for c in range(f, f + num_children[i]):
            depth[c] = depth[i] + 1
    # left-to-right leaf numbering by an explicit-stack depth-first walk
    stack = np.empty(n, dtype=np.int64)
    sp = 0
    stack[0] = 0
    sp = 1
    count = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        k = num_children[node]
        if k == 0:
            leaf_number[node] = count
            count += 1
        else:
            f = first_child[node]
            for c in range(f + k - 1, f - 1, -1):
                stack[sp] = c
                sp += 1
    return 0, -1, depth, leaf_number


@njit(cache=True, nogil=True)
def _minimax_values(first_child, num_children, to_move, leaf_value):
    """Minimax value of every node (children have larger indices)."""
    n = num_children.shape[0]
    val = leaf_value.copy()
    for i in range(n - 1, -1, -1):
        k = num_children[i]
        if k > 0:
            f = first_child[i]
            best = val[f]
            for c in range(f + 1, f + k):
                if to_move[i] > 0:
                    if val[c] > best:
                        best = val[c]
                elif val[c] < best:
                    best = val[c]
            val[i] = best
    return val


@dataclass(frozen=True, eq=False)
class ExplicitTree:
    """A finite tree stored as parallel arrays; see the module docstring.

    Build one with :meth:`from_nested`, :meth:`from_uniform_leaves`,
    :func:`load_tree` or :meth:`from_arrays`; they validate everything.
    """

    first_child: np.ndarray  # int64[N]
    num_children: np.ndarray  # int64[N]
    to_move: np.ndarray  # int8[N], +1 MAX / -1 MIN
    leaf_value: np.ndarray  # float64[N], MAX's view, 0 at internal nodes
    leaf_number: np.ndarray  # int64[N], -1 at internal nodes
    depth: np.ndarray  # int64[N]
    loss_a: np.ndarray  # float64[N], NaN where absent
    loss_b: np.ndarray  # float64[N], NaN where absent
    integral: bool  # every leaf value is an integer

    # -- derived sizes -------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return int(self.num_children.shape[0])

    @property
    def num_leaves(self) -> int:
        return int(np.count_nonzero(self.num_children == 0))

    @property
    def height(self) -> int:
        return int(self.depth.max())

    @property
    def max_branching(self) -> int:
        return int(self.num_children.max())

    @property
    def root_to_move(self) -> int:
        return int(self.to_move[0])

    @property
    def is_leaf(self) -> np.ndarray:
        return self.num_children == 0

    def leaves_in_order(self) -> np.ndarray:
        """Node indices of the leaves, left to right."""
        leaves = np.flatnonzero(self.num_children == 0)
        out = np.empty_like(leaves)
        out[self.leaf_number[leaves]] = leaves
        return out

    def leaf_values(self) -> np.ndarray:
        """Leaf values left to right (float64)."""
        return self.leaf_value[self.leaves_in_order()]

    def describe(self) -> dict:
        return {
            "kind": "explicit",
            "num_nodes": self.num_nodes,
            "num_leaves": self.num_leaves,
            "height": self.height,
            "max_branching": self.max_branching,
            "root": "max" if self.root_to_move == MAX_PLAYER else "min",
        }

    def node_values(self) -> np.ndarray:
        """Minimax value of every node (float64[N])."""
        return _minimax_values(self.first_child, self.num_children, self.to_move, self.leaf_value)

    def data(self) -> TreeData:
        return TreeData(
            KIND_EXPLICIT,
            self.first_child,
            self.num_children,
            self.to_move,
            self.leaf_value,
            self.leaf_number,
            self.loss_a,
            self.loss_b,
            0,
            self.height,
            self.max_branching,
            np.uint64(0),
            0,
            0,
            np.uint64(1),
            0.0,
            1.0,
            self.root_to_move,
            0,
            0,
        )

    # -- constructors ---------------------------------------------------------
    @classmethod
    def from_arrays(
        cls,
        first_child,
        num_children,
        to_move,
        leaf_value,
        loss_a=None,
        loss_b=None,
    ) -> "ExplicitTree":
        """Validate CSR arrays and build a tree (see module docstring)."""
        try:
            num_children = np.asarray(num_children)
            first_child = np.asarray(first_child)
            to_move = np.asarray(to_move)
            leaf_value = np.asarray(leaf_value)
            if loss_a is not None:
                loss_a = np.asarray(loss_a)
            if loss_b is not None:
                loss_b = np.asarray(loss_b)
        except Exception as exc:  # noqa: BLE001 - ragged input and the like
            raise ValueError(f"tree arrays could not be read: {exc}") from None
        n = num_children.shape[0] if num_children.ndim == 1 else -1
        if n < 1:
            raise ValueError("num_children must be a non-empty 1-D array")
        arrays = {"first_child": first_child, "to_move": to_move, "leaf_value": leaf_value}
        if loss_a is not None:
            arrays["loss_a"] = loss_a
        if loss_b is not None:
            arrays["loss_b"] = loss_b
        for name in ("loss_a", "loss_b"):
            arr = arrays.get(name)
            if arr is not None and not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
                raise ValueError(f"{name} must hold numbers (NaN where absent), got dtype {arr.dtype}")
        for name, arr in arrays.items():
            if arr.shape != (n,):
                raise ValueError(f"{name} has shape {arr.shape}, expected ({n},) like num_children")
        for name, arr in (("first_child", first_child), ("num_children", num_children), ("to_move", to_move)):
            if not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
        if not (np.issubdtype(leaf_value.dtype, np.integer) or np.issubdtype(leaf_value.dtype, np.floating)):
            raise ValueError(f"leaf_value must hold numbers, got dtype {leaf_value.dtype}")
        if np.any(num_children < 0):
            raise ValueError("num_children must be >= 0")
        if not np.all((to_move == 1) | (to_move == -1)):
            raise ValueError("to_move must hold +1 (MAX) or -1 (MIN)")
        for name, arr in (("first_child", first_child), ("num_children", num_children)):
            if arr.dtype == np.uint64 and np.any(arr > np.iinfo(np.int64).max):
                raise ValueError(f"{name} must hold node indices below 2**63")
        with memory_guard(f"a tree of {n} nodes", "use a smaller tree"):
            return cls._from_checked_arrays(n, first_child, num_children, to_move, leaf_value, loss_a, loss_b)

    @classmethod
    def _from_checked_arrays(cls, n, first_child, num_children, to_move, leaf_value, loss_a, loss_b):
        fc = first_child.astype(np.int64)
        nc = num_children.astype(np.int64)
        status, bad, depth, leaf_number = _structure(fc, nc)
        if status == 1:
            raise ValueError(
                f"node {bad}: children range [{fc[bad]}, {fc[bad] + nc[bad]}) must lie after the node "
                f"and inside the {n} nodes"
            )
        if status == 2:
            raise ValueError(f"node {bad} must be the child of exactly one node (and node 0 of none)")
        is_leaf = nc == 0
        lv = leaf_value.astype(np.float64)
        lv = np.where(is_leaf, lv, 0.0)
        if not np.all(np.isfinite(lv)):
            bad = int(np.flatnonzero(~np.isfinite(lv))[0])
            raise ValueError(f"leaf values must be finite (NaN or infinity at node {bad})")
        if np.any(np.abs(lv) > _EXACT_INT) and np.issubdtype(leaf_value.dtype, np.integer):
            raise ValueError("integer leaf values must lie within +-2**53")
        la = np.full(n, np.nan) if loss_a is None else loss_a.astype(np.float64)
        lb = np.full(n, np.nan) if loss_b is None else loss_b.astype(np.float64)
        if np.any(np.isinf(la)) or np.any(np.isinf(lb)):
            raise ValueError("losses must be finite (use NaN for an absent loss)")
        integral = bool(np.all(lv[is_leaf] == np.round(lv[is_leaf])))
        return cls(fc, nc, to_move.astype(np.int8), lv, leaf_number, depth, la, lb, integral)

    @classmethod
    def from_nested(cls, obj, *, root: str = "max") -> "ExplicitTree":
        """Build from nested lists (and node objects); see module docstring.

        Linear in the number of nodes whatever the shape (a node's location
        string, ``root[1][0]...``, is built only to report an error). A list
        or node object that appears twice -- one that contains itself, or a
        sub-list shared by two parents -- is refused with a ``ValueError``:
        a tree's nodes are distinct.
        """
        root_tm = _player(root, "the root")
        nodes = [obj]
        parent = [-1]
        default_tm = [root_tm]
        first_child: list[int] = []
        num_children: list[int] = []
        to_move: list[int] = []
        values: list[float] = []
        loss_a: list[float] = []
        loss_b: list[float] = []
        seen: set[int] = set()  # ids of the containers met (obj keeps them all alive)
        integral = True
        i = 0

        def where_of(j: int):
            def where() -> str:
                path = []
                k = j
                while parent[k] >= 0:
                    p = parent[k]
                    path.append(k - first_child[p])
                    k = p
                return "root" + "".join(f"[{x}]" for x in reversed(path))

            return where

        while i < len(nodes):
            node = nodes[i]
            tm = default_tm[i]
            la = lb = math.nan
            children = None
            value = None
            if isinstance(node, (list, dict)):
                key = id(node)
                if key in seen:
                    raise ValueError(
                        f"the {type(node).__name__} at {where_of(i)()} appears more than once in the tree "
                        "(it contains itself or is shared by two parents): every node must be its own object"
                    )
                seen.add(key)
            if isinstance(node, dict):
                unknown = set(node) - _NODE_KEYS
                if unknown:
                    raise ValueError(f"unknown key(s) {sorted(map(str, unknown))} in the node at {where_of(i)()}")
                if "to_move" in node:
                    tm = _player(node["to_move"], where_of(i))
                if "loss_a" in node:
                    la = _number(node["loss_a"], "loss_a", where_of(i))[0]
                if "loss_b" in node:
                    lb = _number(node["loss_b"], "loss_b", where_of(i))[0]
                if ("children" in node) == ("value" in node):
                    raise ValueError(f"the node at {where_of(i)()} needs exactly one of 'children' or 'value'")
                if "children" in node:
                    children = node["children"]
                    if not isinstance(children, list):
                        raise ValueError(f"'children' must be a list at {where_of(i)()}")
                    key = id(children)
                    if key in seen:
                        raise ValueError(
                            f"the children list at {where_of(i)()} appears more than once in the tree "
                            "(it contains itself or is shared): every node must be its own object"
                        )
                    seen.add(key)
                else:
                    value = node["value"]
            elif isinstance(node, list):
                children = node
            else:
                value = node
            to_move.append(tm)
            loss_a.append(la)
            loss_b.append(lb)
            if children is None:
                v, is_int = _number(value, "a leaf value", where_of(i))
                integral &= is_int
                values.append(v)
                first_child.append(0)
                num_children.append(0)
            else:
                if len(children) == 0:
                    raise ValueError(f"the node at {where_of(i)()} has no children: a leaf must be a number")
                values.append(0.0)
                first_child.append(len(nodes))
                num_children.append(len(children))
                nodes.extend(children)
                parent.extend([i] * len(children))
                default_tm.extend([-tm] * len(children))
            nodes[i] = None  # drop our reference as we go (obj still holds the objects)
            i += 1
        with memory_guard(f"a tree of {len(values)} nodes", "use a smaller tree"):
            arrays = (
                np.array(first_child, dtype=np.int64),
                np.array(num_children, dtype=np.int64),
                np.array(to_move, dtype=np.int8),
                np.array(values, dtype=np.float64),
                np.array(loss_a, dtype=np.float64),
                np.array(loss_b, dtype=np.float64),
            )
        return cls.from_arrays(*arrays)

    @classmethod
    def from_uniform_leaves(
        cls, branching: int, height: int, leaves, *, root: str = "max", integral: bool | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> "ExplicitTree":
        """Uniform tree in heap order (node i's children are i*b+1..i*b+b).

        ``leaves``: a list, tuple or 1-D array of the ``branching**height``
        leaf values, left to right. The arrays built are checked against
        ``max_bytes`` first.
        """

        b = check_int("branching", branching, 1, MAX_IMPLICIT_NODES)
        h = check_int("height", height, 0)
        max_bytes = check_max_bytes("max_bytes", max_bytes)
        root_tm = _player(root, "the root")
        if integral is not None:
            integral = check_bool("integral", integral)
        if not isinstance(leaves, (list, tuple, np.ndarray)):
            raise ValueError(f"leaves must be a list or 1-D array of numbers, got {type(leaves).__name__}")
        num_leaves = len(leaves)
        if b > 1 and h * math.log2(b) > 62:
            raise ValueError(f"branching {b} and height {h} need {b}**{h} leaves, got {num_leaves}")
        if b == 1 and num_leaves != 1:
            raise ValueError(f"branching 1 and height {h} need 1 leaf, got {num_leaves}")
        if b > 1 and b**h != num_leaves:
            raise ValueError(f"branching {b} and height {h} need {b**h} leaves, got {num_leaves}")
        n = h + 1 if b == 1 else uniform_num_nodes(b, h)
        check_bytes(
            n * BUILD_BYTES_PER_NODE,
            max_bytes,
            f"an explicit uniform tree of {n} nodes (branching {b}, height {h})",
            "lower the height or raise max_bytes",
        )
        if isinstance(leaves, np.ndarray):
            if leaves.ndim != 1:
                raise ValueError(f"leaves must be a flat list, got an array of shape {leaves.shape}")
            if not (np.issubdtype(leaves.dtype, np.integer) or np.issubdtype(leaves.dtype, np.floating)):
                raise ValueError(f"leaves must hold numbers, got dtype {leaves.dtype}")
            vals = leaves.astype(np.float64)
            if not np.all(np.isfinite(vals)):
                raise ValueError("leaf values must be finite (NaN or infinity found)")
            is_int = bool(np.all(vals == np.round(vals))) if integral is None else integral
        else:
            vals = np.empty(num_leaves, dtype=np.float64)
            is_int = True
            for j, x in enumerate(leaves):
                vals[j], ok = _number(x, "a leaf value", f"leaves[{j}]")
                is_int &= ok
        with memory_guard(f"an explicit uniform tree of {n} nodes", "lower the height"):
            return cls._uniform_arrays(b, h, n, num_leaves, vals, root_tm, is_int)

    @classmethod
    def _uniform_arrays(cls, b, h, n, num_leaves, vals, root_tm, is_int):
        num_internal = n - num_leaves
        idx = np.arange(n, dtype=np.int64)
        first_child = np.where(idx < num_internal, idx * b + 1, 0)
        num_children = np.where(idx < num_internal, b, 0).astype(np.int64)
        if b == 1:
            depth = idx.copy()
        else:
            depth = np.zeros(n, dtype=np.int64)
            start, width = 0, 1
            for d in range(h + 1):
                depth[start : start + width] = d
                start, width = start + width, width * b
        to_move = np.where(depth % 2 == 0, root_tm, -root_tm).astype(np.int8)
        leaf_value = np.zeros(n, dtype=np.float64)
        leaf_value[num_internal:] = vals
        leaf_number = np.where(idx >= num_internal, idx - num_internal, -1)
        nan = np.full(n, np.nan)
        return cls(first_child, num_children, to_move, leaf_value, leaf_number, depth, nan, nan.copy(), is_int)

    # -- export -----------------------------------------------------------------
    def to_nested(self):
        """Nested lists, with node objects only where to_move or losses need saying."""
        return _nested(self)

    def to_json_obj(self, *, uniform: bool = False):
        """JSON-ready object: nested form, or the uniform form when asked."""
        if check_bool("uniform", uniform):
            b = self.max_branching
            h = self.height
            leaves = self.leaf_values()
            # shape first: b**h is then at most the number of leaves, never huge
            if not np.all((self.num_children == 0) | (self.num_children == b)) or \
                    not np.all(self.depth[self.num_children == 0] == h) or b ** h != leaves.size:
                raise ValueError("this tree is not uniform: save it in the nested form")
            alt = np.where(self.depth % 2 == 0, self.root_to_move, -self.root_to_move)
            if not np.array_equal(alt, self.to_move):
                raise ValueError("levels do not alternate: save it in the nested form")
            return {
                "branching": b,
                "height": h,
                "root": "max" if self.root_to_move == MAX_PLAYER else "min",
                "leaves": [_json_number(v, self.integral) for v in leaves],
            }
        return self.to_nested()

    def save_json(self, path, *, uniform: bool = False) -> None:
        """Write the JSON form (nested, or uniform when asked) to ``path``."""
        obj = self.to_json_obj(uniform=uniform)
        path = _path_arg(path)
        try:
            with open(path, "w") as fh:
                json.dump(obj, fh)
        except OSError as exc:
            raise ValueError(f"cannot write the tree to {path}: {exc.strerror or exc}") from None

    def save_npz(self, path) -> None:
        """Write the arrays to ``path`` (``.npz``, compressed)."""
        path = _path_arg(path)
        try:
            np.savez_compressed(
                path,
                first_child=self.first_child,
                num_children=self.num_children,
                to_move=self.to_move,
                leaf_value=self.leaf_value,
                loss_a=self.loss_a,
                loss_b=self.loss_b,
            )
        except OSError as exc:
            raise ValueError(f"cannot write the tree to {path}: {exc.strerror or exc}") from None

    def perfectly_ordered(self, *, worst_first: bool = False) -> "ExplicitTree":
        """A copy whose children are sorted best first for the mover.

        At MAX nodes children are sorted by decreasing minimax value, at MIN
        nodes by increasing value (stable: ties keep their order). With
        ``worst_first`` the order is reversed. Alpha-beta on a perfectly
        ordered uniform tree expands b**ceil(h/2) + b**floor(h/2) - 1 leaves
        (Knuth & Moore 1975).
        """
        worst_first = check_bool("worst_first", worst_first)
        vals = self.node_values()
        n = self.num_nodes
        new_index = np.empty(n, dtype=np.int64)
        order = [0]
        new_first = np.zeros(n, dtype=np.int64)
        new_num = np.zeros(n, dtype=np.int64)
        old_of_new = []
        i = 0
        while i < len(order):
            old = order[i]
            old_of_new.append(old)
            new_index[old] = i
            k = int(self.num_children[old])
            if k:
                f = int(self.first_child[old])
                kids = np.arange(f, f + k)
                key = -vals[kids] * self.to_move[old]
                if worst_first:
                    key = -key
                kids = kids[np.argsort(key, kind="stable")]
                new_first[i] = len(order)
                new_num[i] = k
                order.extend(int(c) for c in kids)
            i += 1
        old_of_new = np.array(old_of_new, dtype=np.int64)
        return ExplicitTree.from_arrays(
            new_first,
            new_num,
            self.to_move[old_of_new],
            self.leaf_value[old_of_new],
            self.loss_a[old_of_new],
            self.loss_b[old_of_new],
        )


def _json_number(v, integral: bool | None = None):
    """int when the value is integral (or the tree says so), else float."""
    v = float(v)
    if integral or (integral is None and v.is_integer() and abs(v) <= _EXACT_INT):
        return int(v)
    return v


def _nested(tree: ExplicitTree):
    """Assemble the nested form bottom-up (children follow their parents)."""
    n = tree.num_nodes
    expected = np.zeros(n, dtype=np.int64)
    expected[0] = MAX_PLAYER
    for i in range(n):
        k = int(tree.num_children[i])
        if k:
            f = int(tree.first_child[i])
            expected[f : f + k] = -int(tree.to_move[i])
    result: list = [None] * n
    for i in range(n - 1, -1, -1):
        k = int(tree.num_children[i])
        if k:
            f = int(tree.first_child[i])
            item = result[f : f + k]
            result[f : f + k] = [None] * k
        else:
            item = _json_number(tree.leaf_value[i], tree.integral)
        extra = {}
        if int(tree.to_move[i]) != expected[i]:
            extra["to_move"] = "max" if tree.to_move[i] == MAX_PLAYER else "min"
        if not math.isnan(tree.loss_a[i]):
            extra["loss_a"] = _json_number(tree.loss_a[i])
        if not math.isnan(tree.loss_b[i]):
            extra["loss_b"] = _json_number(tree.loss_b[i])
        if extra:
            node = {"children": item} if k else {"value": item}
            node.update(extra)
            item = node
        result[i] = item
    return result[0]


def _path_arg(path) -> str:
    try:
        return os.fspath(path)
    except TypeError:
        raise ValueError(f"a file path must be a string or path, got {type(path).__name__}") from None


def _npz_check(path: str, max_bytes: int) -> None:
    """Read the .npy headers inside ``path`` and refuse huge declared arrays before loading them."""
    total = 0
    n = None
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            for key in _NPZ_ARRAYS:
                if key + ".npy" not in names:
                    continue
                with zf.open(key + ".npy") as fh:
                    version = np.lib.format.read_magic(fh)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
                    else:
                        raise ValueError(f"unsupported .npy format version {version} for {key}")
                if len(shape) != 1:
                    raise ValueError(f"array {key} has shape {shape}, expected a 1-D array")
                if dtype.hasobject:
                    raise ValueError(f"array {key} holds Python objects, not numbers")
                total += int(shape[0]) * dtype.itemsize
                if key == "num_children":
                    n = int(shape[0])
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, TypeError, SyntaxError) as exc:
        raise ValueError(f"{path}: not a readable .npz tree ({exc})") from None
    check_bytes(
        total + (n or 0) * BUILD_BYTES_PER_NODE,
        max_bytes,
        f"the tree in {path} ({n if n is not None else '?'} nodes declared)",
        "use a smaller tree or raise max_bytes (--max-memory)",
    )


def load_tree(path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> ExplicitTree:
    """Load an explicit tree from ``.json`` (nested or uniform form) or ``.npz``.

    Sizes are checked against ``max_bytes`` before anything is read: the
    shapes declared in an ``.npz`` file's array headers, the length of a
    JSON file.
    """
    path = _path_arg(path)
    max_bytes = check_max_bytes("max_bytes", max_bytes)
    if not os.path.exists(path):
        raise ValueError(f"tree file not found: {path}")
    if os.path.isdir(path):
        raise ValueError(f"tree file is a directory: {path}")
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise ValueError(f"cannot read the tree file {path}: {exc.strerror or exc}") from None
    if path.endswith(".npz"):
        _npz_check(path, max_bytes)
        try:
            with memory_guard(f"the tree in {path}", "use a smaller tree"), np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in _NPZ_ARRAYS if k in z.files}
        except ValueError as exc:
            if str(exc).startswith("not enough memory"):
                raise
            raise ValueError(f"{path}: not a readable .npz tree ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - zip, format and pickle errors
            raise ValueError(f"{path}: not a readable .npz tree ({exc})") from None
        missing = {"first_child", "num_children", "to_move", "leaf_value"} - set(arrays)
        if missing:
            raise ValueError(f"{path}: .npz tree lacks the array(s) {sorted(missing)}")
        try:
            return ExplicitTree.from_arrays(
                arrays["first_child"],
                arrays["num_children"],
                arrays["to_move"],
                arrays["leaf_value"],
                arrays.get("loss_a"),
                arrays.get("loss_b"),
            )
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    # JSON text: bound the Python objects parsing it creates by its length
    check_bytes(
        size * JSON_BYTES_PER_TEXT_BYTE,
        max_bytes,
        f"the tree in {path} ({size} bytes of JSON)",
        "use a smaller tree, the .npz form, or raise max_bytes (--max-memory)",
    )
    try:
        with memory_guard(f"the tree in {path}", "use a smaller tree"), open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError(f"{path}: the JSON nests too deeply to parse; use the .npz form for deep trees") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text JSON file (invalid UTF-8)") from None
    except OSError as exc:
        raise ValueError(f"cannot read the tree file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # e.g. an integer with too many digits
        if str(exc).startswith("not enough memory"):
            raise
        raise ValueError(f"{path}: malformed JSON: {exc}") from None
    return tree_from_json_obj(obj, source=path, max_bytes=max_bytes)


def tree_from_json_obj(obj, *, source: str = "tree", max_bytes: int = DEFAULT_MAX_BYTES) -> ExplicitTree:
    """Build a tree from a parsed JSON object (nested or uniform form)."""
    if isinstance(obj, dict) and "leaves" in obj:
        unknown = set(obj) - {"branching", "height", "leaves", "root"}
        if unknown:
            raise ValueError(f"{source}: unknown key(s) {sorted(map(str, unknown))} in a uniform tree")
        for key in ("branching", "height"):
            if key not in obj:
                raise ValueError(f"{source}: a uniform tree needs '{key}'")
        if not isinstance(obj["leaves"], list):
            raise ValueError(f"{source}: 'leaves' must be a list")
        return ExplicitTree.from_uniform_leaves(
            obj["branching"], obj["height"], obj["leaves"], root=obj.get("root", "max"), max_bytes=max_bytes
        )
    return ExplicitTree.from_nested(obj)

"""One view of a game tree that every Numba kernel reads.

Kernels never see Python objects: they take a :class:`TreeData` named tuple
of arrays and scalars, built by ``ExplicitTree.data()`` or
``UniformTree.data()``, and query it through the small ``@njit`` functions
below. The ``kind`` field selects the representation; the branch on it is
perfectly predictable, so one compiled kernel serves both kinds of tree.

Conventions
-----------
* Nodes are ``int64`` indices; the root is node 0.
* ``to_move`` is +1 where MAX moves and -1 where MIN moves.
* Leaf values are ``float64`` from MAX's point of view (integers up to 2**53
  are exact).
* Leaves are numbered left to right from 0 (``leaf_number``).
* ``depth`` is the number of edges from the root; kernels track it on their
  stack, and implicit trees need it to know who moves and where leaves are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..rng import GOLDEN, mix64

KIND_EXPLICIT = 0
KIND_UNIFORM = 1

VALUES_INT = 0
VALUES_BINARY = 1
VALUES_FLOAT = 2
VALUE_KIND_NAMES = {"int": VALUES_INT, "binary": VALUES_BINARY, "float": VALUES_FLOAT}

MAX_PLAYER = 1
MIN_PLAYER = -1


_INV_2_53 = 1.0 / 9007199254740992.0


#: Node indices are int64: a tree may hold at most this many nodes.
MAX_IMPLICIT_NODES = 2**62


def uniform_num_nodes(branching: int, height: int) -> int:
    """Exact number of nodes of a uniform tree (Python int).

    Call :func:`check_uniform_size` first: it refuses, without computing
    ``b**(h+1)``, shapes whose node count would not fit in 64 bits.
    """
    if branching == 1:
        return height + 1
    return (branching ** (height + 1) - 1) // (branching - 1)


class TreeData(NamedTuple):
    """Arrays and scalars describing a tree, as the kernels see it.

    Fields unused by a kind are empty arrays or zeros.

    kind : int -- ``KIND_EXPLICIT`` or ``KIND_UNIFORM``.
    first_child, num_children : int64[N] -- CSR children (explicit).
    to_move : int8[N] -- +1 MAX, -1 MIN (explicit).
    leaf_value : float64[N] -- value for MAX at leaves, 0 elsewhere (explicit).
    leaf_number : int64[N] -- left-to-right leaf number, -1 at internal nodes.
    loss_a, loss_b : float64[N] -- two-agent losses, NaN where absent.
    branching, height : int -- uniform shape (height is the maximum depth for
        explicit trees too: kernels size their stacks with it).
    max_branching : int -- largest number of children of any node.
    hash_key : uint64 -- ``mix64(seed + golden)``, key of the leaf hash (uniform).
    value_kind : int -- ``VALUES_INT``/``VALUES_BINARY``/``VALUES_FLOAT``.
    int_lo : int64, int_span : uint64 -- integer leaves are
        ``int_lo + hash % int_span``.
    float_lo, float_width : float64 -- float leaves are
        ``float_lo + u * float_width`` with ``u`` in [0, 1).
    root_to_move : int -- +1 or -1; levels alternate below the root (uniform).
    first_leaf_node : int64 -- index of the leftmost leaf (uniform).
    leaf_cost : int -- extra hashing rounds per leaf read (uniform; a
        benchmark knob that makes leaves expensive without changing them).
    """

    kind: int
    first_child: np.ndarray
    num_children: np.ndarray
    to_move: np.ndarray
    leaf_value: np.ndarray
    leaf_number: np.ndarray
    loss_a: np.ndarray
    loss_b: np.ndarray
    branching: int
    height: int
    max_branching: int
    hash_key: np.uint64
    value_kind: int
    int_lo: int
    int_span: np.uint64
    float_lo: float
    float_width: float
    root_to_move: int
    first_leaf_node: int
    leaf_cost: int


@njit(cache=True, inline="always")
def hash_key(seed):
    """Key of the leaf hash for ``seed`` (computed once per tree)."""
    return mix64(np.uint64(seed) + GOLDEN)


@njit(cache=True, inline="always")
def leaf_hash(key, leaf):
    """Counter-based hash of ``(key, leaf)`` -> uint64, same in pure Python."""
    return mix64(key + np.uint64(leaf) * GOLDEN)


@njit(cache=True, inline="always")
def hashed_leaf_value(t, leaf):
    h = leaf_hash(t.hash_key, leaf)
    if t.leaf_cost > 0:
        # ``leaf_cost`` more rounds the compiler cannot drop; they change the
        # value only if the chain lands exactly on 0, i.e. for one hash value
        # in 2**64 (mix64 is a bijection), so the tree is the same tree.
        z = h
        for _ in range(t.leaf_cost):
            z = mix64(z)
        if z == np.uint64(0):
            h = h ^ np.uint64(1)
    if t.value_kind == VALUES_INT:
        return np.float64(t.int_lo + np.int64(h % t.int_span))
    if t.value_kind == VALUES_BINARY:
        return np.float64(h >> np.uint64(63))
    return t.float_lo + np.float64(h >> np.uint64(11)) * _INV_2_53 * t.float_width


@njit(cache=True, inline="always")
def uniform_leaf_value(t, leaf, value_kind, int_span):
    """:func:`hashed_leaf_value` of a tree with ``leaf_cost == 0``.

    The value kind and the integer span come as arguments: specialised
    kernels pass compile-time constants, so the kind tests fold away and,
    for a constant span, ``hash % int_span`` compiles to a multiply instead
    of a guarded 64-bit division. The caller guarantees ``t.leaf_cost == 0``
    (no extra hash rounds); the value is then :func:`hashed_leaf_value`'s bit
    for bit.
    """
    h = leaf_hash(t.hash_key, leaf)
    if value_kind == VALUES_INT:
        return np.float64(t.int_lo + np.int64(h % int_span))
    if value_kind == VALUES_BINARY:
        return np.float64(h >> np.uint64(63))
    return t.float_lo + np.float64(h >> np.uint64(11)) * _INV_2_53 * t.float_width


@njit(cache=True, inline="always")
def uniform_leaf_int(t, leaf, value_kind, int_span):
    """:func:`uniform_leaf_value` as an ``int64`` for integer and binary
    trees (``leaf_cost == 0``): the same number, before the float64 cast
    (exact, as integer ranges lie within +-2**53)."""
    h = leaf_hash(t.hash_key, leaf)
    if value_kind == VALUES_BINARY:
        return np.int64(h >> np.uint64(63))
    return t.int_lo + np.int64(h % int_span)


@njit(cache=True, inline="always")
def is_leaf(t, node, depth):
    if t.kind == KIND_EXPLICIT:
        return t.num_children[node] == 0
    return depth == t.height


@njit(cache=True, inline="always")
def num_children(t, node, depth):
    if t.kind == KIND_EXPLICIT:
        return t.num_children[node]
    if depth == t.height:
        return 0
    return t.branching


@njit(cache=True, inline="always")
def child(t, node, k):
    """The k-th child (0-based, natural order) of ``node``."""
    if t.kind == KIND_EXPLICIT:
        return t.first_child[node] + k
    return node * t.branching + 1 + k


@njit(cache=True, inline="always")
def child_position(t, parent, node):
    """Inverse of :func:`child`: which child of ``parent`` ``node`` is."""
    if t.kind == KIND_EXPLICIT:
        return node - t.first_child[parent]
    return node - parent * t.branching - 1


@njit(cache=True, inline="always")
def player_to_move(t, node, depth):
    if t.kind == KIND_EXPLICIT:
        return np.int64(t.to_move[node])
    if depth % 2 == 0:
        return np.int64(t.root_to_move)
    return -np.int64(t.root_to_move)


@njit(cache=True, inline="always")
def leaf_value(t, node):
    if t.kind == KIND_EXPLICIT:
        return t.leaf_value[node]
    return hashed_leaf_value(t, node - t.first_leaf_node)


@njit(cache=True, inline="always")
def leaf_number(t, node):
    if t.kind == KIND_EXPLICIT:
        return t.leaf_number[node]
    return node - t.first_leaf_node


@njit(cache=True, inline="always")
def node_loss(t, node, agent_is_a):
    """Loss of ``node`` for agent A (the root's player) or B; NaN if absent.

    Uniform trees are zero-sum: A's loss is minus the leaf value seen from
    A's side, B's loss its negation.
    """
    if t.kind == KIND_EXPLICIT:
        if agent_is_a:
            return t.loss_a[node]
        return t.loss_b[node]
    v = hashed_leaf_value(t, node - t.first_leaf_node) * t.root_to_move
    if agent_is_a:
        return -v
    return v


@njit(cache=True, nogil=True)
def fill_leaf_values(t, out):
    """Write the hashed values of leaves ``0 .. out.size-1`` into ``out``."""
    for i in range(out.shape[0]):
        out[i] = hashed_leaf_value(t, i)

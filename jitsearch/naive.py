"""Deliberately naive plain-Python references, for tests and benchmarks only.

Obvious recursive minimax and alpha-beta over the same trees the kernels
read (explicit trees, and uniform trees through the pure-Python twin of the
leaf hash). They are the oracle the compiled solvers are checked against and
the baseline the benchmarks measure them against. Recursion depth equals the
tree's height, so keep them to modest trees.
"""

from __future__ import annotations

import math

from .trees import ExplicitTree, UniformTree
from .rng import M64, mix64_py
from .trees.uniform import hash_key_py


class _View:
    """Plain-Python accessors for one tree (no NumPy in the hot path)."""

    def __init__(self, tree):
        self.tree = tree
        if isinstance(tree, ExplicitTree):
            self.first = tree.first_child.tolist()
            self.num = tree.num_children.tolist()
            self.mover = tree.to_move.tolist()
            self.values = tree.leaf_value.tolist()
            self.numbers = tree.leaf_number.tolist()
            self.explicit = True
        elif isinstance(tree, UniformTree):
            self.explicit = False
            self.b = tree.branching
            self.h = tree.height
            self.root_mover = tree.root_to_move
            self.first_leaf = tree.first_leaf_node
            self.key = hash_key_py(tree.seed)
            self.kind = tree.values
            lo, hi = tree.value_range
            self.lo, self.hi = lo, hi
        else:
            raise ValueError(f"expected a tree, got {type(tree).__name__}")

    def children(self, node, depth):
        if self.explicit:
            f = self.first[node]
            return range(f, f + self.num[node])
        if depth == self.h:
            return range(0)
        f = node * self.b + 1
        return range(f, f + self.b)

    def is_max(self, node, depth):
        if self.explicit:
            return self.mover[node] > 0
        return (self.root_mover > 0) == (depth % 2 == 0)

    def leaf(self, node):
        """(value, leaf_number) of a leaf."""
        if self.explicit:
            return self.values[node], self.numbers[node]
        j = node - self.first_leaf
        h = mix64_py((self.key + j * 0x9E3779B97F4A7C15) & M64)
        if self.kind == "int":
            return float(self.lo + h % (self.hi - self.lo + 1)), j
        if self.kind == "binary":
            return float(h >> 63), j
        return self.lo + float(h >> 11) * (1.0 / 2**53) * (self.hi - self.lo), j


def minimax(tree):
    """Brute-force minimax: returns (value, best_move) (lowest index on ties)."""
    view = _View(tree)

    def rec(node, depth):
        kids = view.children(node, depth)
        if not kids:
            return view.leaf(node)[0]
        vals = [rec(c, depth + 1) for c in kids]
        return max(vals) if view.is_max(node, depth) else min(vals)

    kids = view.children(0, 0)
    if not kids:
        return view.leaf(0)[0], -1
    vals = [rec(c, 1) for c in kids]
    best = max(vals) if view.is_max(0, 0) else min(vals)
    return best, vals.index(best)


def alphabeta(tree, alpha=-math.inf, beta=math.inf):
    """Textbook MAX-VALUE/MIN-VALUE alpha-beta (fail-soft).

    Returns (value, best_move, trace, nodes_visited) where ``trace`` lists
    leaf numbers in expansion order.
    """
    view = _View(tree)
    trace: list[int] = []
    nodes = [0]
    best_move = [-1]

    def max_value(node, depth, alpha, beta):
        nodes[0] += 1
        kids = view.children(node, depth)
        if not kids:
            v, j = view.leaf(node)
            trace.append(j)
            return v
        maximize = view.is_max(node, depth)
        v = -math.inf if maximize else math.inf
        for i, c in enumerate(kids):
            r = max_value(c, depth + 1, alpha, beta)
            if maximize:
                if r > v:
                    v = r
                    if depth == 0:
                        best_move[0] = i
                alpha = max(alpha, v)
            else:
                if r < v:
                    v = r
                    if depth == 0:
                        best_move[0] = i
                beta = min(beta, v)
            if alpha >= beta:
                break
        return v

    value = max_value(0, 0, alpha, beta)
    return value, best_move[0], trace, nodes[0]

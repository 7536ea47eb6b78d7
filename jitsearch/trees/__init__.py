"""Array-encoded game trees: explicit (CSR arrays) and implicit uniform trees.

Conventions everywhere: the root moves as MAX unless stated, levels of
uniform and nested-list trees alternate, leaf values are from MAX's point of
view, and leaves are numbered left to right from 0.
"""

from ._access import MAX_PLAYER, MIN_PLAYER, TreeData
from .explicit import ExplicitTree, load_tree, tree_from_json_obj
from .incremental import IncrementalTree
from .memory import DEFAULT_MAX_BYTES
from .uniform import UniformTree, leaf_hash_py

Tree = ExplicitTree | UniformTree

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ExplicitTree",
    "IncrementalTree",
    "MAX_PLAYER",
    "MIN_PLAYER",
    "Tree",
    "TreeData",
    "UniformTree",
    "leaf_hash_py",
    "load_tree",
    "tree_from_json_obj",
]

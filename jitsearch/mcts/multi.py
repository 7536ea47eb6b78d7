"""The multi-tree MCTS entry points under their older names (:func:`analyse_positions`,
:func:`multi_tree_search`, :func:`search_many`): written once for every game in
:mod:`jitsearch.mcts.game`, re-exported here for the callers and documents that import them
from this module."""

from .game import (DEFAULT_TIME_NODES, MAX_NODES, GameGrower, analyse_checked, analyse_positions,  # noqa: F401
                   default_leaves, grow_in_chunks, most_visited, multi_tree_search, root_positions, search_many,
                   search_many_checked, tree_keys_for)

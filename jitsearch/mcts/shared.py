"""The tree-parallel MCTS entry points under their older names (:func:`tree_parallel_search`,
:func:`search_many_shared`): written once for every game in :mod:`jitsearch.mcts.game_shared`,
re-exported here for the callers and documents that import them from this module."""

from .game_shared import (DEFAULT_SHARED_TIME_NODES, MAX_NODES, SharedGrower, search_many_shared,  # noqa: F401
                          search_shared_checked, tree_parallel_search)

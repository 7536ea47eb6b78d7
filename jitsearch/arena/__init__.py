"""The arena: agents (search algorithms behind one spec string) and the
tournaments that pit them against each other.

It sits above :mod:`jitsearch.mcts` in the layers (trees -> search -> games
-> kernels -> mcts -> arena -> cli), so an agent may use any searcher.

Besides the agents (:mod:`.agents`) and the tournaments
(:mod:`.kalah_tournament`, :mod:`.random_tree_tournament`) it holds the
machinery they share: JSONL record files (:mod:`.records`) and worker
processes (:mod:`.pool`).
"""

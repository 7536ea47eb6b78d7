"""The arena: agents (search algorithms behind one spec string) and the
tournaments that pit them against each other.

It sits above :mod:`jitsearch.mcts` in the layers (trees -> search -> games
-> kernels -> mcts -> arena -> cli), so an agent may use any searcher.
"""

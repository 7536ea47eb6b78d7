"""The generic searches called for Oware, with Oware's name for the evaluation's parameter (``side_weight``,
the searches' ``eval_param``): shorthands for the Oware tests."""

from __future__ import annotations

from functools import partial

from jitsearch.kernels.game_playouts import evaluate_states as _evaluate_states
from jitsearch.mcts.game import analyse_game, search_game
from jitsearch.mcts.game_shared import tree_parallel_game


def _side_weight(fn):
    def call(*args, side_weight=None, **kwargs):
        if side_weight is not None:
            kwargs["eval_param"] = side_weight
        return fn("oware", *args, **kwargs)
    return call


analyse_oware = _side_weight(analyse_game)
search_oware = _side_weight(search_game)
tree_parallel_oware = _side_weight(tree_parallel_game)
evaluate_states = partial(_evaluate_states, "oware")


def evaluate_states_cuda(*args, **kwargs):
    from jitsearch.kernels.cuda_game_playouts import evaluate_states_cuda as evaluate_cuda

    return evaluate_cuda("oware", *args, **kwargs)

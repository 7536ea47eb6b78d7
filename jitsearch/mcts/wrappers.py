"""The Oware entry points that callers above ``mcts/`` still use, as thin wrappers over the code
written once for every game: each one can go once its callers take the game from the registry
and call the generic function named in its docstring.

Oware's MCTS evaluation (``eval="capture"``, ``side_weight``) is the game's
:attr:`search_eval <jitsearch.games.protocol.Game>`; the generic searches call its parameter
``eval_param``.
"""

from __future__ import annotations

import math

from ..games import get as get_game
from ..kernels.game_mcts import node_bytes as game_node_bytes
from ..kernels.game_playouts import evaluate_states as evaluate_game_states
from ..trees.memory import DEFAULT_MAX_BYTES
from .game import DEFAULT_PLAYOUTS, analyse_game, check_eval, node_dtype_of
from .game_shared import tree_parallel_game

OWARE = "oware"


def check_oware_eval(eval, eval_plies, imm, side_weight) -> tuple:
    """:func:`jitsearch.mcts.game.check_eval` for Oware: (eval, eval_plies, imm, side_weight)."""
    return check_eval(get_game(OWARE), eval, eval_plies, imm, side_weight)


def node_bytes(houses: int, imm: bool = False) -> int:
    """Bytes of one node of an Oware tree (:func:`jitsearch.kernels.game_mcts.node_bytes`)."""
    return game_node_bytes(2 * int(houses) + 2, node_dtype_of(get_game(OWARE)), imm)


def analyse_oware(states, *, iterations: int | None = 1000, time: float | None = None, seed: int = 0,
                  tree_keys=None, c: float = math.sqrt(2), formula: str = "ucb1",
                  playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None, leaves: int | None = None,
                  backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, memory_hint: str | None = None,
                  threads: int | None = None, return_trees: bool = False, eval: str | None = None,
                  eval_plies: int | None = None, imm: float = 0.0, side_weight: float | None = None,
                  stop=None):
    """:func:`jitsearch.mcts.game.analyse_game` of Oware (``side_weight`` is its ``eval_param``)."""
    return analyse_game(OWARE, states, iterations=iterations, time=time, seed=seed, tree_keys=tree_keys, c=c,
                        formula=formula, playouts=playouts, capacity=capacity, leaves=leaves, backend=backend,
                        max_bytes=max_bytes, memory_hint=memory_hint, threads=threads, return_trees=return_trees,
                        eval=eval, eval_plies=eval_plies, imm=imm, eval_param=side_weight, stop=stop)


def search_oware(state, *, iterations: int | None = None, time: float | None = None, seed: int = 0,
                 **options) -> dict:
    """:func:`jitsearch.mcts.game.search_game` of Oware (``side_weight`` is its ``eval_param``)."""
    from .game import search_game

    if "side_weight" in options:
        options["eval_param"] = options.pop("side_weight")
    return search_game(OWARE, state, iterations=iterations, time=time, seed=seed, **options)


def tree_parallel_oware(states, *, blocks: int | None = None, iterations: int | None = 1000,
                        time: float | None = None, seed: int = 0, tree_keys=None, c: float = math.sqrt(2),
                        formula: str = "ucb1", playouts: int = DEFAULT_PLAYOUTS, capacity: int | None = None,
                        backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, threads: int | None = None,
                        return_trees: bool = False, eval: str | None = None, eval_plies: int | None = None,
                        imm: float = 0.0, side_weight: float | None = None, stop=None):
    """:func:`jitsearch.mcts.game_shared.tree_parallel_game` of Oware."""
    return tree_parallel_game(OWARE, states, blocks=blocks, iterations=iterations, time=time, seed=seed,
                              tree_keys=tree_keys, c=c, formula=formula, playouts=playouts, capacity=capacity,
                              backend=backend, max_bytes=max_bytes, threads=threads, return_trees=return_trees,
                              eval=eval, eval_plies=eval_plies, imm=imm, eval_param=side_weight, stop=stop)


def evaluate_states(states, playouts_per_state: int, seed: int, *, threads: int = 1, stop=None) -> dict:
    """:func:`jitsearch.kernels.game_playouts.evaluate_states` of Oware."""
    return evaluate_game_states(OWARE, states, playouts_per_state, seed, threads=threads, stop=stop)


def evaluate_states_cuda(states, playouts_per_state: int, seed: int, *, threads_per_block: int = 128,
                         blocks: int | None = None) -> dict:
    """:func:`jitsearch.kernels.cuda_game_playouts.evaluate_states_cuda` of Oware."""
    from ..kernels.cuda_game_playouts import evaluate_states_cuda as evaluate_cuda

    return evaluate_cuda(OWARE, states, playouts_per_state, seed, threads_per_block=threads_per_block,
                         blocks=blocks)

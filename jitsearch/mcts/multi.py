"""Multi-tree MCTS: T independent trees grown by one kernel, on the GPU (one
thread block per tree, :mod:`jitsearch.kernels.cuda_mcts`) or on all CPU
cores (its twin, :func:`jitsearch.kernels.multi_mcts.grow_trees_cpu`).

Two uses of the same kernel:

* **one position** (:func:`multi_tree_search`, block parallelism after Rocki
  & Suda 2011): every tree starts at the same position with its own random
  streams; the root statistics are summed over the trees and the move with
  the most visits is played. This is what ``mcts:...,backend=cuda`` means.
* **many positions** (:func:`analyse_positions`): T different positions in
  one launch, one tree each (``jitsearch analyse``, lockstep tournaments).

Conventions as in :mod:`jitsearch.mcts.search`: the root's player to move
chooses; a child's ``value`` is the mean reward (win 1, draw 1/2, loss 0, or
the HMCTS heuristic or an evaluation in [0, 1], :mod:`jitsearch.kernels.evaluation`)
of the root player, who moved into it. An
*iteration* expands and evaluates one leaf of one tree with ``playouts``
playouts; tree t's iteration i draws playout k from
``stream_key(tree_keys[t], i, k)``, so a tree's growth depends on its key
and its iteration count only, not on the other trees in the launch.

Budgets: ``iterations`` per tree, or ``time`` in seconds (anytime): the host
launches the kernel in chunks of iterations sized from the measured rate
(about 20 ms each after a short first one) until the time is spent, so a
time-limited search is also a pure function of the iterations it reached.
Ctrl-C between chunks returns what the trees hold (``interrupted``), and so
does ``stop`` (a ``threading.Event`` set from another thread), read between
chunks: a search stops within a chunk (a few hundredths of a second).
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from ..games.kalah import KalahState
from .._checks import check_int, check_seed
from ..games.kalah.game import GAME as KALAH
from ..kernels.multi_mcts import game_units, node_bytes
from ..trees.memory import DEFAULT_MAX_BYTES
from .config import MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREES, TreeOptions, check_tree_options
from .game import (DEFAULT_TIME_NODES, MAX_NODES, GameGrower, default_leaves, grow_in_chunks,  # noqa: F401
                   most_visited, root_positions, tree_keys_for)

def _nodes_needed(houses: int, iterations: int | None, capacity: int | None) -> int:
    if capacity is not None:
        return check_int("capacity", capacity, houses + 1, MAX_NODES)
    if iterations is None:
        return DEFAULT_TIME_NODES
    return int(min(MAX_NODES, max(houses + 1, iterations * houses + 1)))


def analyse_positions(states, *, iterations: int | None = 1000, time: float | None = None, seed: int = 0,
                      tree_keys=None, c: float = math.sqrt(2), formula: str = "ucb1", reward: str = "win",
                      playouts: int = 32, playout_depth: int = 0, capacity: int | None = None,
                      leaves: int | None = None, backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES,
                      memory_hint: str | None = None, eval: str | None = None, eval_plies: int | None = None,
                      imm: float = 0.0) -> dict:
    """One MCTS tree per position, all grown in one launch (per chunk).

    ``states``: KalahStates of one board size and rule variant, none over.
    ``iterations`` per tree (or ``time`` for the whole batch); ``playouts``
    per leaf; ``tree_keys`` (uint64, one per position) fix the random
    streams, else they come from ``seed`` and the position's index.
    ``memory_hint``: what a refusal for memory tells the user to change
    (default: the API's arguments). ``eval``, ``eval_plies`` and ``imm``:
    leaf evaluation and implicit minimax backups, as in
    :func:`jitsearch.mcts.search.mcts_search`.

    Returns ``positions``: per position ``move`` (most visits; ties to the
    better value, then house order), ``children`` (move, visits, value = the
    mover's mean reward); and ``iterations`` (per tree), ``playouts_total``,
    ``seconds``, ``backend``, ``interrupted``.
    """
    states = _checked_states(states)
    opts = check_tree_options(iterations, time, c, formula, reward, playouts, playout_depth, capacity, len(states),
                              eval, eval_plies, imm)
    from ..kernels.backend import resolve

    return analyse_checked(states, opts, resolve(backend), seed=seed, tree_keys=tree_keys, leaves=leaves,
                           max_bytes=max_bytes, memory_hint=memory_hint)


def _checked_states(states) -> list:
    states = list(states)
    if not states or not all(isinstance(s, KalahState) for s in states):
        raise ValueError("states must be a non-empty list of KalahStates")
    m, ec = states[0].houses, states[0].empty_capture
    if any(s.houses != m or s.empty_capture != ec for s in states):
        raise ValueError("all positions must have the same number of houses and rule variant")
    if any(s.is_over for s in states):
        bad = next(i for i, s in enumerate(states) if s.is_over)
        raise ValueError(f"position {bad + 1} is already over: no move to search")
    return states


def analyse_checked(states: list, opts: TreeOptions, resolved: str, *, seed: int = 0, tree_keys=None,
                    leaves: int | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
                    memory_hint: str | None = None, stop=None) -> dict:
    """:func:`analyse_positions` with its options already checked (``opts``;
    one tree per position, ``opts.trees`` unused) and the backend resolved
    (``cpu`` or ``cuda``): what a search validated once upstream calls.
    ``stop`` (a ``threading.Event``): once set, the growth ends after the
    chunk running, ``interrupted`` True."""
    m, ec = states[0].houses, states[0].empty_capture
    iterations, time, playouts, capacity = opts.iterations, opts.time, opts.playouts, opts.capacity
    leaves = default_leaves(resolved) if leaves is None else check_int("leaves", leaves, 1, MAX_LEAVES)
    if leaves * playouts > MAX_STEP_PLAYOUTS:
        raise ValueError(f"leaves x playouts = {leaves} x {playouts} is above the limit of {MAX_STEP_PLAYOUTS} "
                         f"playouts per step: lower leaves= or playouts=")
    if len(states) > MAX_TREES:
        raise ValueError(f"{len(states):,} positions are above the limit of {MAX_TREES:,} per launch")
    if tree_keys is None:
        tree_keys = tree_keys_for(seed, len(states))
    tree_keys = np.asarray(tree_keys)
    if tree_keys.shape != (len(states),) or tree_keys.dtype.kind not in "iu":
        raise ValueError(f"tree_keys must hold one unsigned integer per position ({len(states)})")
    capacity = _nodes_needed(m, None if iterations is None else iterations + leaves, capacity)
    if iterations is None:  # a time budget: as many nodes as max_bytes holds for every tree, at most the default
        capacity = max(m + 1, min(capacity, int(max_bytes) // (len(states) * node_bytes(m, opts.imm > 0.0))))
    reward_kind, max_plies = opts.kernel_reward()
    grower = GameGrower(KALAH, states, tree_keys.astype(np.uint64), capacity=capacity, c=opts.c,
                        formula=opts.formula, playouts=playouts, leaves=leaves, backend=resolved, max_bytes=max_bytes,
                        memory_hint=memory_hint or "lower trees=, capacity= or iterations= (API: or raise max_bytes)",
                        eval_plies=int(max_plies), param=np.int64(reward_kind), imm=opts.imm, units=game_units,
                        node_dtype=np.int16, label="MCTS trees")
    start = _time.perf_counter()
    interrupted = grower.run(iterations, time, stop)
    batch = grower.results()
    seconds = _time.perf_counter() - start
    positions = [{k: p[k] for k in ("move", "children", "nodes")}
                 for p in root_positions(batch, len(states), playouts)]
    return {"positions": positions, "iterations": grower.iterations,
            "playouts_total": grower.iterations * playouts * len(states), "seconds": seconds,
            "backend": resolved, "interrupted": interrupted, "trees": len(states), "playouts": playouts,
            "leaves": leaves}


def search_many(states, seeds, *, trees: int = 256, iterations: int | None = None, time: float | None = None,
                c: float = math.sqrt(2), formula: str = "ucb1", reward: str = "win", playouts: int = 32,
                playout_depth: int = 0, capacity: int | None = None, leaves: int | None = None,
                backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, eval: str | None = None,
                eval_plies: int | None = None, imm: float = 0.0) -> list[dict]:
    """Block-parallel MCTS of several positions in one launch: position g
    gets ``trees`` trees keyed by ``tree_keys_for(seeds[g], trees)``, so its
    result is the same as :func:`multi_tree_search` of that position alone
    with ``seed=seeds[g]`` (with an iteration budget; a time budget is
    shared by the whole launch). Returns one result per position."""
    states = list(states)
    seeds = [check_seed("seed", x) for x in seeds]
    if not states or len(seeds) != len(states):
        raise ValueError("give one seed per position (and at least one position)")
    for s in states:
        if not isinstance(s, KalahState):
            raise ValueError(f"state must be a KalahState, got {type(s).__name__}")
        if s.is_over:
            raise ValueError("the game is over: no move to search")
    opts = check_tree_options(iterations, time, c, formula, reward, playouts, playout_depth, capacity, trees, eval,
                              eval_plies, imm)
    from ..kernels.backend import resolve

    return search_many_checked(states, seeds, opts, resolve(backend), leaves=leaves, max_bytes=max_bytes)


def search_many_checked(states: list, seeds: list, opts: TreeOptions, resolved: str, *, leaves: int | None = None,
                        max_bytes: int = DEFAULT_MAX_BYTES, stop=None) -> list[dict]:
    """:func:`search_many` with its options already checked (``opts``) and the
    backend resolved: what :func:`jitsearch.mcts.search.mcts_search` calls
    after validating its :class:`~jitsearch.mcts.config.MCTSConfig` once.
    ``stop`` as :func:`analyse_checked`."""
    trees, playouts = opts.trees, opts.playouts
    if trees * len(states) > MAX_TREES:
        raise ValueError(f"{len(states)} positions x {trees} trees is above the limit of {MAX_TREES:,} trees per "
                         f"launch: lower trees= or search fewer positions at once")
    keys = np.concatenate([tree_keys_for(x, trees) for x in seeds])
    r = analyse_checked([s for s in states for _ in range(trees)], opts, resolved, tree_keys=keys, leaves=leaves,
                        max_bytes=max_bytes, stop=stop)
    out = []
    for g, state in enumerate(states):
        children, nodes = _sum_trees(state, r["positions"][g * trees:(g + 1) * trees])
        out.append({"move": most_visited(children), "children": children, "iterations": r["iterations"] * trees,
                    "simulations": r["iterations"] * trees * playouts, "nodes": nodes, "seconds": r["seconds"],
                    "backend": r["backend"], "trees": trees, "leaves": r["leaves"], "interrupted": r["interrupted"],
                    "proven": None})
    return out


def _sum_trees(state: KalahState, positions: list[dict]) -> tuple[list[dict], int]:
    """Root statistics summed over one position's trees, in tree order."""
    visits: dict[int, int] = {mv: 0 for mv in state.legal_moves()}
    value: dict[int, float] = {mv: 0.0 for mv in visits}
    nodes = 0
    for pos in positions:
        nodes += pos["nodes"]
        for ch in pos["children"]:
            visits[ch["move"]] += ch["visits"]
            if ch["visits"]:
                value[ch["move"]] += ch["value"] * ch["visits"]
    children = [{"move": mv, "visits": visits[mv], "value": value[mv] / visits[mv] if visits[mv] else None,
                 "proven": None} for mv in visits]
    return children, nodes


def multi_tree_search(state: KalahState, *, trees: int = 256, iterations: int | None = None,
                      time: float | None = None, seed: int = 0, **options) -> dict:
    """Block-parallel MCTS from one position: ``trees`` independent trees
    (``iterations`` each, or until ``time`` seconds), their root statistics
    summed; the move with the most summed visits is played. ``options`` as
    :func:`search_many` (c, formula, reward, playouts, playout_depth,
    capacity, leaves, backend, max_bytes, eval, eval_plies, imm).

    Returns ``move``, ``children`` (move, visits summed over the trees,
    value = the root player's mean reward), ``iterations`` (all trees),
    ``simulations`` (playouts), ``nodes``, ``seconds``, ``backend``,
    ``trees``, ``leaves``, ``interrupted``.
    """
    if not isinstance(state, KalahState):
        raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
    return search_many([state], [seed], trees=trees, iterations=iterations, time=time, **options)[0]

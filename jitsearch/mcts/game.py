"""Multi-tree MCTS of any game of the protocol (:mod:`jitsearch.games.protocol`): T independent
trees grown by one kernel written once over a :class:`~jitsearch.games.protocol.Game`, on all
CPU cores (:func:`jitsearch.kernels.game_mcts.grow_trees_cpu`) or on the GPU (one thread block
per tree, :mod:`jitsearch.kernels.cuda_game_mcts`), bit-identical for the same seed.

* :func:`analyse_game` (:func:`analyse_positions`: the game of the states): many positions of
  one variant in one launch, one tree each (``jitsearch analyse``, lockstep tournaments);
* :func:`search_game`: one position, one tree;
* :func:`multi_tree_search` and :func:`search_many` (block parallelism after Rocki & Suda
  2011): ``trees`` trees a position with their own random streams, the root statistics summed
  over the trees (``mcts:...,backend=cuda,parallel=root``).

A game is given as a registry name or a ``Game`` (``jitsearch.games.get``), or found from its
states (:func:`jitsearch.games.game_of`). Conventions as :mod:`jitsearch.mcts.search`: the
root's player to move chooses; a move's ``value`` is that player's mean reward after it (win 1,
draw 1/2, loss 0 by the sign of the game's margin, or an evaluation in [0, 1]); the move played
has the most visits (ties to the better value, then the rules' order). An *iteration* expands
and evaluates one leaf with ``playouts`` uniformly random playouts to the end of the game (tree
t's iteration i draws playout k from ``stream_key(tree_keys[t], i, k)``, so a tree's growth
depends on its key and its iteration count only).

With ``eval=`` (a game with its own evaluation, :attr:`Game.search_eval
<jitsearch.games.protocol.Game>`: Oware's ``capture``, Kalah's ``heuristic`` and ``store``)
each playout stops after ``eval_plies`` random plies and, if the game goes on, scores the
game's evaluation (with ``eval_param``: Oware's side weight) in [0, 1]; ``imm`` = alpha > 0 adds
implicit minimax backups of that evaluation (Lanctot et al. 2014). A game with rewards of its
own (Kalah) also takes ``reward="heuristic"`` (HMCTS) and ``playout_depth`` (:func:`kernel_param`).

Budgets: ``iterations`` per tree, or ``time`` in seconds (anytime): the host launches the kernel
in chunks sized from the measured rate (about 20 ms each after a short first one) until the time
is spent. Ctrl-C between chunks returns what the trees hold (``interrupted``), and so does
``stop`` (a ``threading.Event`` set from another thread), read between chunks.
"""

from __future__ import annotations

import math
import time as _time

import numpy as np

from .._checks import check_bool, check_choice, check_float, check_int, check_seed, kernel_array
from .._threads import cpu_threads
from ..games import game_of, get as get_game
from ..kernels.game_mcts import (EVAL_AT_END, GameTrees, cpu_step, grow_trees_cpu, node_bytes, scratch_bytes,
                                 scratch_rows)
from ..kernels.tree_step import REWARD_UNITS, log_table_for
from ..kernels.sentinels import FORMULAS, NO_NODE, NO_PLY_CAP
from ..rng import mix64_py
from ..stop import check_stop
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .config import (DEFAULT_EVAL_PLIES, MAX_LEAVES, MAX_PLAYOUT_DEPTH, MAX_STEP_PLAYOUTS, MAX_TREES,
                     check_tree_options)

#: Default playouts per leaf of :func:`analyse_game`.
DEFAULT_PLAYOUTS = 8
#: Nodes per tree (int32 indices).
MAX_NODES = 1 << 24
#: Default nodes per tree in a time-limited search.
DEFAULT_TIME_NODES = 1 << 16
CHUNK_SECONDS = 0.02



def default_leaves(backend: str) -> int:
    """Leaves per step when the caller gives none: 8 on a GPU (a step's
    playouts run at once on the block's threads), 1 on the CPU (where they
    run one after another, so more leaves per step only dilutes selection)."""
    return 8 if backend == "cuda" else 1


def tree_keys_for(seed: int, count: int, offset: int = 0) -> np.ndarray:
    """Stream keys of trees ``offset .. offset+count-1`` under ``seed``."""
    seed = check_seed("seed", seed)
    return np.array([mix64_py(seed * 0x9E3779B97F4A7C15 + offset + t + 1) for t in range(count)],
                    dtype=np.uint64)


def grow_in_chunks(grow, done, total: int | None, seconds: float | None, first: int, stop=None) -> bool:
    """Call ``grow(k)`` with chunks of ``k`` units until ``done()`` reaches
    ``total`` or ``seconds`` have passed; the first chunk is ``first``, the
    next ones are sized from the measured rate to last about CHUNK_SECONDS
    (at most 4x the previous), the last one to end near the deadline.
    Returns True if Ctrl-C stopped it (between or inside chunks) or
    ``stop`` (a ``threading.Event``) was set (seen between chunks)."""
    deadline = None if seconds is None else _time.perf_counter() + seconds
    chunk = first
    try:
        while True:
            if stop is not None and stop.is_set():
                return True
            todo = chunk if total is None else min(chunk, total - done())
            if todo <= 0:
                return False
            t0 = _time.perf_counter()
            grow(todo)
            now = _time.perf_counter()
            if deadline is not None and now >= deadline:
                return False
            rate = todo / max(now - t0, 1e-6)
            target = CHUNK_SECONDS if deadline is None else min(CHUNK_SECONDS, max(deadline - now, 1e-3))
            chunk = int(max(1, min(rate * target, 4 * chunk)))
    except KeyboardInterrupt:
        return True


def most_visited(children: list[dict]) -> int:
    """Most visits; ties to the better mean value, then house order; -1 if none."""
    best, key = -1, None
    for ch in children:
        k = (ch["visits"], ch["value"] if ch["value"] is not None else -1.0)
        if key is None or k > key:
            best, key = ch["move"], k
    return best



def node_dtype_of(game):
    """The dtype of ``game``'s node boards in a tree (its evaluation's, else its board dtype)."""
    se = game.search_eval
    return np.dtype(se.node_dtype if se is not None and se.node_dtype is not None else game.board_dtype)


def check_eval(game, eval, eval_plies, imm, eval_param) -> tuple:
    """(eval, eval_plies, imm, eval_param) checked for ``game``: ``eval`` None or one of the
    game's evaluations (:attr:`Game.search_eval <jitsearch.games.protocol.Game>`);
    ``eval_plies`` (default 4) and ``eval_param`` (default the game's) only with it; ``imm`` in
    [0, 1], above 0 only with ``eval``. ``eval_param`` comes back as a float (1.0 for a game
    without an evaluation of its own)."""
    se = game.search_eval
    name = se.param if se is not None else "eval_param"
    if eval is not None:
        if se is None:
            raise ValueError(f"{game.name} has no MCTS evaluation (eval=): its playouts go to the end of the game")
        eval = check_choice("eval", eval, se.evals)
        eval_plies = DEFAULT_EVAL_PLIES if eval_plies is None else check_int("eval_plies", eval_plies, 0,
                                                                             MAX_PLAYOUT_DEPTH)
        eval_param = se.check_param(eval_param)
    elif eval_plies is not None or eval_param is not None:
        evals = "eval=" + "/".join(se.evals) if se is not None else "eval="
        raise ValueError(f"eval_plies= and {name}= apply to {evals} (random playouts to the end have no "
                         f"evaluation)")
    else:
        eval_param = se.check_param(None) if se is not None else 1.0
    imm = check_float("imm", imm, 0.0, 1.0)
    if imm and eval is None:
        give = "eval=" + se.evals[0] if se is not None else "an eval="
        raise ValueError(f"imm= (implicit minimax backups) backs up an evaluation: give {give}")
    return eval, eval_plies, float(imm), float(eval_param)


def checked_states(game, states) -> list:
    """A non-empty list of live ``game`` states (a single state is wrapped), at most MAX_TREES."""
    cls = game.State.__name__
    if isinstance(states, game.State):
        states = [states]
    if not isinstance(states, (list, tuple)) or not states:
        raise ValueError(f"states must be a non-empty list of {cls}")
    for i, s in enumerate(states):
        if not isinstance(s, game.State):
            raise ValueError(f"states must be {cls}, got {type(s).__name__}")
        if s.is_over:
            raise ValueError(f"position {i + 1} is already over: no move to search")
    if len(states) > MAX_TREES:
        raise ValueError(f"{len(states):,} positions are above the limit of {MAX_TREES:,} per launch")
    return list(states)


class GameGrower:
    """Owns a :class:`~jitsearch.kernels.game_mcts.GameTrees` batch of ``game`` and grows it on
    one backend, in chunks. ``node_dtype``: the node boards' dtype (default the game's board dtype);
    ``label``: how memory errors name the trees."""

    def __init__(self, game, states, tree_keys, *, capacity, c, formula, playouts, leaves, backend, max_bytes,
                 memory_hint=None, threads=None, eval_plies=None, param=1.0, imm=0.0, node_dtype=None,
                 label=None, warm=True):
        packed = game.pack(states)
        t = len(states)
        label = label or f"{game.name} MCTS trees"
        self.game, self.backend = game, backend
        self.cfg = packed.cfg
        self.rows = scratch_rows(game, packed.cfg, packed.rows, packed.plies)
        self.args = (float(c), FORMULAS[formula], int(playouts))
        param = param if isinstance(param, np.integer) else float(param)  # the units' parameter keeps its type
        self.eval_args = (NO_PLY_CAP if eval_plies is None else int(eval_plies), param, float(imm))
        self.leaves = int(leaves)
        node_dtype = np.dtype(node_dtype or node_dtype_of(game))
        cells = packed.boards.shape[1]
        hists = packed.hists
        per_scratch = scratch_bytes(self.rows, hists.shape[2], hists.dtype.itemsize)
        hint = memory_hint or "lower iterations= or the number of positions (API: or raise max_bytes)"
        tree_bytes = t * capacity * node_bytes(cells, node_dtype, imm > 0)
        if backend == "cuda":
            from ..kernels.cuda_game_mcts import MAX_SCRATCH_BYTES, free_bytes, threads_for

            if t * per_scratch > MAX_SCRATCH_BYTES:
                raise ValueError(f"{t:,} trees' records need {t * per_scratch / 2**20:,.0f} MiB of GPU "
                                 f"scratch even with one thread a block: analyse fewer positions at once")
            self.threads_per_block = threads_for(self.leaves * int(playouts), t, per_scratch)
            need = tree_bytes + t * self.threads_per_block * per_scratch
            check_bytes(need, max_bytes, f"{t:,} {label} of {capacity:,} nodes", hint)
            free = free_bytes()
            if need > 0.9 * free:
                raise ValueError(f"{t:,} {label} of {capacity:,} nodes need {need / 2**20:,.0f} MiB of "
                                 f"GPU memory, but {free / 2**20:,.0f} MiB are free: lower the iterations or the "
                                 f"positions")
        else:
            self.threads = threads
            need = tree_bytes + min(t, threads or cpu_threads()) * per_scratch
            check_bytes(need, max_bytes, f"{t:,} {label} of {capacity:,} nodes", hint)
        self.trees = GameTrees(t, capacity, cells, node_dtype, imm > 0)
        self.trees.set_roots(packed.boards, packed.players)
        self.tree_keys = kernel_array(tree_keys, np.uint64)
        self.root_hist = kernel_array(hists, hists.dtype)
        self.root_rows = packed.rows.astype(np.int32)
        self.root_ply = packed.plies.astype(np.int32)
        self.log_table = log_table_for(1024)
        self.done = 0  # steps
        self.device = None
        if warm:
            self._warm(states[0])
        if backend == "cuda":
            from ..kernels.cuda_game_mcts import DeviceGameTrees

            self.device = DeviceGameTrees(game, self.trees, self.tree_keys, self.root_hist, self.root_rows,
                                          self.root_ply, self.log_table, self.rows, self.threads_per_block)

    def _warm(self, state) -> None:
        """Compile (or load) the backend's kernel once per process for this game and
        argument types (a one-step search of one tree), so that no time budget pays for the JIT."""
        key = (self.game, self.backend, self.trees.boards.dtype, self.root_hist.dtype)
        if key in _WARMED:
            return
        _WARMED.add(key)
        small = GameGrower(self.game, [state], np.zeros(1, np.uint64), capacity=self.game.max_moves + 1, c=1.0,
                           formula="ucb1", playouts=1, leaves=1, backend=self.backend, max_bytes=DEFAULT_MAX_BYTES,
                           threads=1, eval_plies=0, param=self.eval_args[1], imm=0.0,
                           node_dtype=self.trees.boards.dtype, warm=False)
        small.grow(1)

    @property
    def iterations(self) -> int:
        return self.done * self.leaves

    def grow(self, steps: int) -> None:
        visits = (self.done + steps) * self.leaves + 1  # a node's visits, virtual ones too, never pass this
        if visits >= self.log_table.shape[0]:
            self.log_table = log_table_for(1 << max(10, int(visits).bit_length()))
            if self.device is not None:
                self.device.set_log_table(self.log_table)
        c, formula, playouts = self.args
        if self.device is not None:
            self.device.grow(self.cfg, c, formula, playouts, *self.eval_args, self.leaves, self.done, steps)
        else:
            grow_trees_cpu(cpu_step(self.game).grow_tree_range, self.trees.arrays(), self.tree_keys,
                           self.root_hist, self.root_rows, self.root_ply, self.log_table, self.cfg, c, formula,
                           playouts, *self.eval_args, self.rows, self.leaves, self.done, steps, self.threads)
        self.done += steps

    def run(self, iterations: int | None, seconds: float | None, stop=None) -> bool:
        steps = None if iterations is None else -(-iterations // self.leaves)
        return grow_in_chunks(self.grow, lambda: self.done, steps, seconds, 1, stop)

    def results(self) -> GameTrees:
        if self.device is not None:
            self.device.copy_back(self.trees)
        return self.trees


_WARMED: set = set()


def root_positions(trees, count: int, playouts: int) -> list:
    """Per tree: ``move`` (most visited), ``children`` (move, visits, value for the root's
    player), ``value`` (the root player's mean reward), ``nodes``."""
    scale = playouts * REWARD_UNITS
    positions = []
    for t in range(count):
        kids = []
        f = int(trees.first_child[t, 0])
        if f != NO_NODE:
            for ch in range(f, f + int(trees.num_children[t, 0])):
                n, v = int(trees.visits[t, ch]), int(trees.value[t, ch])
                kids.append({"move": int(trees.move[t, ch]), "visits": n, "value": v / (n * scale) if n else None})
        root_n = int(trees.visits[t, 0])
        value = (root_n * scale - int(trees.value[t, 0])) / (root_n * scale) if root_n else None
        positions.append({"move": most_visited(kids), "children": kids, "value": value,
                          "nodes": int(trees.size[t])})
    return positions


def checked_run_options(threads, return_trees, tree_keys, seed, count):
    """(threads or None, return_trees, tree_keys as an array of ``count`` integers, by default
    from ``seed``)."""
    if threads is not None:
        threads = check_int("threads", threads, 1, 1024)
    return_trees = check_bool("return_trees", return_trees)
    if tree_keys is None:
        tree_keys = tree_keys_for(seed, count)
    tree_keys = np.asarray(tree_keys)
    if tree_keys.shape != (count,) or tree_keys.dtype.kind not in "iu":
        raise ValueError(f"tree_keys must hold one unsigned integer per position ({count})")
    return threads, return_trees, tree_keys


def default_capacity(game, opts, leaves: int, count: int, max_bytes: int, node_size: int, moves: int) -> int:
    """Nodes per tree: ``capacity`` checked (at least ``moves`` + 1, the variant's most moves),
    else enough for the iterations, else (a time budget) as many as ``max_bytes`` holds for
    every tree, at most the default."""
    m = int(moves)
    if opts.capacity is not None:
        return check_int("capacity", opts.capacity, m + 1, MAX_NODES)
    if opts.iterations is not None:
        return int(min(MAX_NODES, (opts.iterations + leaves) * m + 1))
    return max(m + 1, min(DEFAULT_TIME_NODES, int(max_bytes) // (2 * count * node_size)))


def kernel_param(game, opts, eval_param=None) -> tuple:
    """The kernels' (``param``, ``max_plies``) for checked ``opts`` (a :class:`~.config.TreeOptions`)
    of ``game``: a game with rewards of its own (:attr:`SearchEval.rewards
    <jitsearch.games.protocol.SearchEval>`, Kalah) gets the index of its evaluation (``eval=``;
    else its first, HMCTS's heuristic, with :data:`~jitsearch.kernels.game_mcts.EVAL_AT_END` for
    ``reward=heuristic``) as an int64, playouts cut after ``eval_plies`` or ``playout_depth``
    plies; any other game ``eval_param`` and ``eval_plies`` (no ``reward=heuristic`` or
    ``playout_depth``: one-line ``ValueError``)."""
    se = game.search_eval
    cut = opts.playout_depth if opts.playout_depth else NO_PLY_CAP
    if se is None or se.rewards is None:
        if opts.reward != "win" or opts.playout_depth:
            raise ValueError(f"{game.name} has no heuristic reward (reward=heuristic, playout_depth=): its playouts "
                             f"go to the end of the game{', or use eval=' + se.evals[0] if se else ''}")
        return (1.0 if eval_param is None else float(eval_param)), (NO_PLY_CAP if opts.eval is None else
                                                                     opts.eval_plies)
    if opts.eval is not None:
        if opts.reward != "win":
            raise ValueError("eval= replaces reward=heuristic (HMCTS): give one of them (eval=heuristic scores the "
                             "leaves by the heuristic after eval_plies random plies)")
        if opts.playout_depth:
            raise ValueError("with eval= the random plies before the evaluation are eval_plies=, not playout_depth=")
        return np.int64(se.evals.index(opts.eval)), opts.eval_plies
    return np.int64(EVAL_AT_END if opts.reward == "heuristic" else 0), cut


def checked_options(game, iterations, time, c, formula, reward, playouts, playout_depth, capacity, trees, eval,
                    eval_plies, imm, eval_param) -> tuple:
    """(:class:`~.config.TreeOptions`, eval_param) of a search of ``game``, checked (one-line
    ``ValueError``): :func:`~.config.check_tree_options`, :func:`check_eval`, :func:`kernel_param`."""
    opts = check_tree_options(iterations, time, c, formula, reward, playouts, playout_depth, capacity, trees)
    eval, eval_plies, imm, eval_param = check_eval(game, eval, eval_plies, imm, eval_param)
    opts = opts._replace(eval=eval, eval_plies=eval_plies, imm=imm)
    kernel_param(game, opts, eval_param)
    return opts, eval_param


def check_variant(game, states) -> None:
    """States of one variant (else the one-line error of ``game.pack``, naming the options that differ)."""
    cfg = game.cfg(states[0])
    if any(game.cfg(s) != cfg for s in states):
        game.pack(states)


def analyse_game(game, states, *, iterations: int | None = 1000, time: float | None = None, seed: int = 0,
                 tree_keys=None, c: float = math.sqrt(2), formula: str = "ucb1", playouts: int = DEFAULT_PLAYOUTS,
                 capacity: int | None = None, leaves: int | None = None, backend: str = "auto",
                 max_bytes: int = DEFAULT_MAX_BYTES, memory_hint: str | None = None, threads: int | None = None,
                 return_trees: bool = False, eval: str | None = None, eval_plies: int | None = None,
                 imm: float = 0.0, eval_param: float | None = None, reward: str = "win", playout_depth: int = 0,
                 stop=None):
    """One MCTS tree per position of ``game`` (a registry name or a Game), all grown in one
    launch (per chunk).

    ``states``: live states of one variant (with their records). ``iterations`` per tree, or
    ``time`` seconds for the whole batch; ``playouts`` per leaf; ``leaves`` per step (default 8
    on cuda, 1 on cpu); ``tree_keys`` (one uint64 per position) fix the random streams, else
    they come from ``seed`` and the position's index. ``capacity``: nodes per tree (default:
    enough for the iterations). ``max_bytes``: the trees and the record scratch must fit,
    checked before any allocation. ``threads``: CPU threads (default every core). ``eval``,
    ``eval_plies``, ``imm``, ``eval_param``: the module docstring (:func:`check_eval`);
    ``reward`` (``win``, or ``heuristic``: HMCTS) and ``playout_depth``, for a game with rewards
    of its own (:func:`kernel_param`). ``stop`` (a ``threading.Event``): once set, the growth
    ends after the chunk running and the trees grown so far are returned, ``interrupted`` True.

    Returns ``positions`` (per position: ``move``, ``children`` = move, visits, value;
    ``value`` the root player's mean reward over all iterations; ``nodes``), ``iterations``
    (per tree), ``playouts_total``, ``seconds``, ``backend``, ``interrupted``, ``trees``,
    ``playouts``, ``leaves``, ``game``; with ``return_trees``, (that dict, the
    :class:`~jitsearch.kernels.game_mcts.GameTrees` grown)."""
    game = get_game(game)
    states = checked_states(game, states)
    opts, eval_param = checked_options(game, iterations, time, c, formula, reward, playouts, playout_depth, capacity,
                                       len(states), eval, eval_plies, imm, eval_param)
    check_stop(stop)
    check_variant(game, states)
    from ..kernels.backend import resolve

    resolved = resolve(backend)
    threads, return_trees, tree_keys = checked_run_options(threads, return_trees, tree_keys, seed, len(states))
    result, trees = analyse_checked(states, opts, resolved, tree_keys=tree_keys, leaves=leaves, max_bytes=max_bytes,
                                    memory_hint=memory_hint, threads=threads, eval_param=eval_param, stop=stop,
                                    game=game)
    return (result, trees) if return_trees else result


def analyse_checked(states: list, opts, resolved: str, *, seed: int = 0, tree_keys=None, leaves: int | None = None,
                    max_bytes: int = DEFAULT_MAX_BYTES, memory_hint: str | None = None, threads: int | None = None,
                    eval_param=None, stop=None, game=None) -> tuple:
    """:func:`analyse_game` with its options already checked (``opts``, a
    :class:`~.config.TreeOptions`; one tree per position, ``opts.trees`` unused) and the backend
    resolved (``cpu`` or ``cuda``); ``game`` by default that of the states. Returns (result,
    trees)."""
    game = game_of(states[0]) if game is None else game
    leaves = default_leaves(resolved) if leaves is None else check_int("leaves", leaves, 1, MAX_LEAVES)
    if leaves * opts.playouts > MAX_STEP_PLAYOUTS:
        raise ValueError(f"leaves x playouts = {leaves} x {opts.playouts} is above the limit of "
                         f"{MAX_STEP_PLAYOUTS} playouts per step: lower leaves= or playouts=")
    if len(states) > MAX_TREES:
        raise ValueError(f"{len(states):,} positions are above the limit of {MAX_TREES:,} per launch")
    if tree_keys is None:
        tree_keys = tree_keys_for(seed, len(states))
    tree_keys = np.asarray(tree_keys)
    if tree_keys.shape != (len(states),) or tree_keys.dtype.kind not in "iu":
        raise ValueError(f"tree_keys must hold one unsigned integer per position ({len(states)})")
    param, max_plies = kernel_param(game, opts, eval_param)
    size = game.sizes(game.cfg(states[0]))
    capacity = default_capacity(game, opts, leaves, len(states), max_bytes,
                                node_bytes(size.cells, node_dtype_of(game), opts.imm > 0), size.moves)
    grower = GameGrower(game, states, tree_keys.astype(np.uint64), capacity=capacity, c=opts.c,
                        formula=opts.formula, playouts=opts.playouts, leaves=leaves, backend=resolved,
                        max_bytes=max_bytes, memory_hint=memory_hint, threads=threads, eval_plies=max_plies,
                        param=param, imm=opts.imm)
    start = _time.perf_counter()
    interrupted = grower.run(opts.iterations, opts.time, stop)
    trees = grower.results()
    seconds = _time.perf_counter() - start
    result = {"positions": root_positions(trees, len(states), opts.playouts), "iterations": grower.iterations,
              "playouts_total": grower.iterations * opts.playouts * len(states), "seconds": seconds,
              "backend": resolved, "interrupted": interrupted, "trees": len(states), "playouts": opts.playouts,
              "leaves": leaves, "game": game.name}
    return result, trees


def search_game(game, state, *, iterations: int | None = None, time: float | None = None, seed: int = 0,
                **options) -> dict:
    """MCTS of ``game`` from one position with one tree: ``iterations`` (default 1000 when no
    ``time`` is given) or ``time`` seconds; ``options`` as :func:`analyse_game`. Returns
    ``move``, ``children``, ``value``, ``iterations``, ``nodes``, ``seconds``, ``backend``,
    ``interrupted``, ``playouts``, ``leaves``."""
    game = get_game(game)
    if not isinstance(state, game.State):
        raise ValueError(f"state must be a {game.State.__name__}, got {type(state).__name__}")
    if iterations is None and time is None:
        iterations = 1000
    r = analyse_game(game, [state], iterations=iterations, time=time, seed=seed, **options)
    return {**r["positions"][0], "iterations": r["iterations"], "seconds": r["seconds"], "backend": r["backend"],
            "interrupted": r["interrupted"], "playouts": r["playouts"], "leaves": r["leaves"]}


# -- the searches of any state (the game looked up from it): positions at once, trees summed ------

def analyse_positions(states, *, iterations: int | None = 1000, time: float | None = None, seed: int = 0,
                      tree_keys=None, c: float = math.sqrt(2), formula: str = "ucb1", reward: str = "win",
                      playouts: int = 32, playout_depth: int = 0, capacity: int | None = None,
                      leaves: int | None = None, backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES,
                      memory_hint: str | None = None, eval: str | None = None, eval_plies: int | None = None,
                      imm: float = 0.0, eval_param: float | None = None) -> dict:
    """:func:`analyse_game` of the game of ``states`` (:func:`jitsearch.games.game_of`) with 32
    playouts a leaf by default; per position ``move``, ``children``, ``value``, ``nodes``.
    ``memory_hint``: what a refusal for memory tells the user to change."""
    states = [states] if hasattr(states, "is_over") else list(states)
    if not states:
        raise ValueError("states must be a non-empty list of positions")
    game = game_of(states[0])
    return analyse_game(game, states, iterations=iterations, time=time, seed=seed, tree_keys=tree_keys, c=c,
                        formula=formula, reward=reward, playouts=playouts, playout_depth=playout_depth,
                        capacity=capacity, leaves=leaves, backend=backend, max_bytes=max_bytes,
                        memory_hint=memory_hint or "lower trees=, capacity= or iterations= (API: or raise max_bytes)",
                        eval=eval, eval_plies=eval_plies, imm=imm, eval_param=eval_param)


def checked_positions(states, seeds) -> tuple:
    """(game, live states of one variant, checked seeds): one seed per position."""
    states = list(states)
    seeds = [check_seed("seed", x) for x in seeds]
    if not states or len(seeds) != len(states):
        raise ValueError("give one seed per position (and at least one position)")
    game = game_of(states[0])
    for s in states:
        if not isinstance(s, game.State):
            raise ValueError(f"state must be a {game.State.__name__}, got {type(s).__name__}")
        if s.is_over:
            raise ValueError("the game is over: no move to search")
    check_variant(game, states)
    return game, states, seeds


def search_many(states, seeds, *, trees: int = 256, iterations: int | None = None, time: float | None = None,
                c: float = math.sqrt(2), formula: str = "ucb1", reward: str = "win", playouts: int = 32,
                playout_depth: int = 0, capacity: int | None = None, leaves: int | None = None,
                backend: str = "auto", max_bytes: int = DEFAULT_MAX_BYTES, eval: str | None = None,
                eval_plies: int | None = None, imm: float = 0.0, eval_param: float | None = None) -> list[dict]:
    """Block-parallel MCTS of several positions of one game in one launch: position g gets
    ``trees`` trees keyed by ``tree_keys_for(seeds[g], trees)``, so its result is the same as
    :func:`multi_tree_search` of that position alone with ``seed=seeds[g]`` (with an iteration
    budget; a time budget is shared by the whole launch). Returns one result per position."""
    game, states, seeds = checked_positions(states, seeds)
    opts, eval_param = checked_options(game, iterations, time, c, formula, reward, playouts, playout_depth, capacity,
                                       trees, eval, eval_plies, imm, eval_param)
    from ..kernels.backend import resolve

    return search_many_checked(states, seeds, opts, resolve(backend), leaves=leaves, max_bytes=max_bytes,
                               eval_param=eval_param)


def search_many_checked(states: list, seeds: list, opts, resolved: str, *, leaves: int | None = None,
                        max_bytes: int = DEFAULT_MAX_BYTES, stop=None, eval_param=None) -> list[dict]:
    """:func:`search_many` with its options already checked (``opts``) and the backend resolved:
    what :func:`jitsearch.mcts.search.mcts_search` calls after validating its
    :class:`~jitsearch.mcts.config.MCTSConfig` once. ``stop`` as :func:`analyse_game`."""
    trees, playouts = opts.trees, opts.playouts
    if trees * len(states) > MAX_TREES:
        raise ValueError(f"{len(states)} positions x {trees} trees is above the limit of {MAX_TREES:,} trees per "
                         f"launch: lower trees= or search fewer positions at once")
    keys = np.concatenate([tree_keys_for(x, trees) for x in seeds])
    r, _ = analyse_checked([s for s in states for _ in range(trees)], opts, resolved, tree_keys=keys, leaves=leaves,
                           max_bytes=max_bytes, stop=stop, eval_param=eval_param,
                           memory_hint="lower trees=, capacity= or iterations= (API: or raise max_bytes)")
    out = []
    for g, state in enumerate(states):
        children, nodes = sum_trees(state, r["positions"][g * trees:(g + 1) * trees])
        out.append({"move": most_visited(children), "children": children, "iterations": r["iterations"] * trees,
                    "simulations": r["iterations"] * trees * playouts, "nodes": nodes, "seconds": r["seconds"],
                    "backend": r["backend"], "trees": trees, "leaves": r["leaves"], "interrupted": r["interrupted"],
                    "proven": None})
    return out


def sum_trees(state, positions: list[dict]) -> tuple[list[dict], int]:
    """Root statistics of one position summed over its trees (``positions``: ``children`` as
    (move, visits, value) dicts), in tree order; and their nodes."""
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


def multi_tree_search(state, *, trees: int = 256, iterations: int | None = None, time: float | None = None,
                      seed: int = 0, **options) -> dict:
    """Block-parallel MCTS from one position of any game (after Rocki & Suda 2011): ``trees``
    independent trees (``iterations`` each, or until ``time`` seconds), their root statistics
    summed; the move with the most summed visits is played. ``options`` as :func:`search_many`.

    Returns ``move``, ``children`` (move, visits summed over the trees, value = the root
    player's mean reward), ``iterations`` (all trees), ``simulations`` (playouts), ``nodes``,
    ``seconds``, ``backend``, ``trees``, ``leaves``, ``interrupted``."""
    game_of(state)
    return search_many([state], [seed], trees=trees, iterations=iterations, time=time, **options)[0]

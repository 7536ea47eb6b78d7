"""Options of every MCTS search, and the one set of limits they are checked
against: :class:`MCTSConfig` (the options of
:func:`jitsearch.mcts.search.mcts_search`, validated by
:meth:`MCTSConfig.validate`) and :func:`check_tree_options` (the
multi-tree and tree-parallel searches' options). Every amount of work a
caller can ask for is bounded here and refused above these limits.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from .._checks import check_bool, check_choice, check_float, check_int, max_threads
from ..kernels.evaluation import kernel_reward
from ..kernels.sentinels import EVALS, FORMULAS, NO_PLY_CAP, REWARD_WIN, REWARDS
from .tree import (N_PARAMS, P_C, P_EVAL_PARAM, P_FORMULA, P_IMM, P_MAX_PLIES, P_PB, P_PLAYOUTS, P_REWARD,
                   P_SOLVER)

#: Iterations (expanded leaves) of one search, all workers together.
MAX_ITERATIONS = 10**8
#: Playouts per expanded leaf.
MAX_PLAYOUTS = 100_000
#: Simulations (iterations x playouts per leaf) of one search: roughly half an
#: hour of one CPU core on Kalah(6,4); use ``time=`` for longer searches.
MAX_SIMULATIONS = 10**9
#: Seconds of an anytime search (``time=``) or a pure Monte Carlo search: one day.
MAX_TIME = 86_400.0
#: Plies before a cut playout is scored (``playout_depth``; 0 = to the end), and random plies before an
#: evaluation (``eval_plies``; 0 = the leaf itself).
MAX_PLAYOUT_DEPTH = 10_000
#: Random plies before the evaluation when ``eval=`` is given without ``eval_plies=``: the best of 0, 2, 4 and 8
#: in a short measurement at Kalah(6,4) (docs/mcts.md, "Leaf evaluations"), as in Lanctot et al. 2014 (fet4).
DEFAULT_EVAL_PLIES = 4
#: Leaves per batched launch.
MAX_BATCH = 1 << 16
#: Nodes of one tree: node indices are int32.
MAX_CAPACITY = (1 << 31) - 1
#: Largest exploration constant, progressive-bias weight and virtual loss.
MAX_WEIGHT = 1e6
FINALS = ("visits", "value")
#: The backend searches without batch=: one block per tree (root), many blocks per shared tree (tree).
PARALLEL_MODES = ("root", "tree")
#: The default per resolved backend: on a GPU the tree-parallel search (it measured stronger at equal time per
#: move, bench/results/gpu_mcts/), on the CPU the multi-tree search (one tree per core; the tree-parallel CPU twin
#: grows each tree with one worker).
DEFAULT_PARALLEL = {"cuda": "tree", "cpu": "root"}
#: Trees in one launch.
MAX_TREES = 1 << 16
#: Iterations per tree.
MAX_TREE_ITERATIONS = 10**7
#: Playouts per leaf.
MAX_LEAF_PLAYOUTS = 1024
#: Leaves per step (selected with virtual visits, evaluated together).
MAX_LEAVES = 64
#: Playouts per step of one tree: leaves x playouts (the GPU's shared memory holds one slot each).
MAX_STEP_PLAYOUTS = 1024
#: Blocks per tree at most, and blocks in one launch at most.
MAX_BLOCKS = 1 << 16


@dataclass
class MCTSConfig:
    """Options of :func:`mcts_search` (each documented there)."""

    iterations: int | None = 1000
    time: float | None = None
    c: float = math.sqrt(2)
    formula: str = "ucb1"
    pb: float = 0.0
    reward: str = "win"
    playout_depth: int = 0
    eval: str | None = None
    eval_plies: int | None = None
    imm: float = 0.0
    solver: bool = False
    playouts: int = 1
    final: str = "visits"
    workers: int = 1
    capacity: int | None = None
    backend: str | None = None
    batch: int | None = None
    virtual_loss: float = 1.0
    trees: int | None = None
    leaves: int | None = None
    parallel: str | None = None
    blocks: int | None = None
    eval_param: float | None = None

    def validate(self, game=None):
        """Check every option (type, range, and the combinations that
        conflict) and normalise the types; raises ``ValueError`` naming the
        option, what it got and what is allowed. With ``game`` (a
        :class:`~jitsearch.games.protocol.Game`), ``reward=``, ``eval=`` and
        ``eval_param=`` are checked against what the game offers
        (:func:`game_rewards`); without, against every registered game's."""
        from ..kernels.backend import BACKENDS

        rewards, evals = game_rewards(game)

        if self.iterations is None and self.time is None:
            raise ValueError("give iterations= or time=")
        if self.iterations is not None:
            self.iterations = check_int("iterations", self.iterations, 1, MAX_ITERATIONS)
        if self.time is not None:
            self.time = check_float("time", self.time, 0.0, MAX_TIME, lo_open=True)
        self.formula = check_choice("formula", self.formula, tuple(FORMULAS))
        self.reward = check_choice("reward", self.reward, rewards)
        self.final = check_choice("final", self.final, FINALS)
        self.c = check_float("c", self.c, 0.0, MAX_WEIGHT)
        self.pb = check_float("pb", self.pb, 0.0, MAX_WEIGHT)
        self.playout_depth = check_int("playout_depth", self.playout_depth, 0, MAX_PLAYOUT_DEPTH)
        self.eval, self.eval_plies, self.imm = check_eval(self.reward, self.playout_depth, self.eval,
                                                          self.eval_plies, self.imm, evals)
        self.eval_param = check_eval_param(game, self.eval, self.eval_param)
        self.solver = check_bool("solver", self.solver)
        self.playouts = check_int("playouts", self.playouts, 1, MAX_PLAYOUTS)
        if self.iterations is not None and self.iterations * self.playouts > MAX_SIMULATIONS:
            raise ValueError(f"iterations x playouts = {self.iterations:,} x {self.playouts:,} simulations is "
                             f"above the limit of {MAX_SIMULATIONS:,}: lower iterations= or playouts=, "
                             f"or give time= instead")
        self.workers = check_int("workers", self.workers, 1, max_threads())
        if self.capacity is not None:
            self.capacity = check_int("capacity", self.capacity, 1, MAX_CAPACITY)
        if self.batch is not None:
            self.batch = check_int("batch", self.batch, 1, MAX_BATCH)
        self.virtual_loss = check_float("virtual_loss", self.virtual_loss, 0.0, MAX_WEIGHT, lo_open=True)
        if self.trees is not None:
            self.trees = check_int("trees", self.trees, 1, MAX_TREES)
            if self.backend is None:
                raise ValueError("trees= applies to the multi-tree search: give backend= (cpu, cuda or auto)")
        if self.leaves is not None:
            self.leaves = check_int("leaves", self.leaves, 1, MAX_LEAVES)
            if self.backend is None or self.batch is not None:
                raise ValueError("leaves= applies to the multi-tree search: give backend= without batch=")
        if self.backend is not None:
            self.backend = check_choice("backend", self.backend, BACKENDS)
            if self.solver:
                raise ValueError("the solver runs with the in-kernel playouts only (leave backend unset)")
            if self.batch is not None:  # leaf parallelism: one launch per batch of leaves
                if self.trees is not None:
                    raise ValueError("batch= (leaf-parallel evaluation) and trees= (multi-tree search) exclude "
                                     "each other")
                if self.reward != "win" or self.playout_depth or self.eval is not None:
                    raise ValueError("batched leaf evaluation plays random playouts to the end (reward=win; no "
                                     "playout_depth, eval or imm)")
            else:  # the multi-tree search (one thread block per tree on a GPU)
                if self.pb:
                    raise ValueError("progressive bias (pb=) is not part of the multi-tree search: leave backend "
                                     "unset")
                if self.final != "visits":
                    raise ValueError("the multi-tree search plays the most visited move (final=visits)")
                if self.workers != 1:
                    raise ValueError("workers= is root parallelism on threads; with backend= use trees=")
        if self.parallel is not None:
            self.parallel = check_choice("parallel", self.parallel, PARALLEL_MODES)
            if self.backend is None or self.batch is not None:
                raise ValueError("parallel= chooses between the backend searches: give backend= without batch=")
        if self.blocks is not None:
            self.blocks = check_int("blocks", self.blocks, 1, MAX_BLOCKS)
            if self.backend is None or self.mode() != "tree":
                raise ValueError("blocks= (workers per shared tree) applies to parallel=tree: give backend= and "
                                 "parallel=tree")
        if self.leaves is not None and self.backend is not None and self.mode() == "tree":
            raise ValueError("leaves= applies to parallel=root (one block per tree); parallel=tree evaluates one "
                             "leaf per block: use blocks=")
        if self.backend is not None and self.batch is None:  # the backend searches' limits, checked here once
            check_int("playouts", self.playouts, 1, MAX_LEAF_PLAYOUTS)
            opts = self.tree_options()
            if opts.iterations is not None:
                check_int("iterations per tree", opts.iterations, 1, MAX_TREE_ITERATIONS)
            if self.mode() == "root" and self.leaves is not None and self.leaves * self.playouts > MAX_STEP_PLAYOUTS:
                raise ValueError(f"leaves x playouts = {self.leaves} x {self.playouts} is above the limit of "
                                 f"{MAX_STEP_PLAYOUTS} playouts per step: lower leaves= or playouts=")

    def tree_options(self) -> TreeOptions:
        """The backend search's options (``backend`` given, no ``batch``):
        the iteration budget split over the trees (``trees``, default 1 tree
        per position for ``parallel=tree``, else :func:`default_trees`).
        Nothing is checked again: :meth:`validate` checked it all."""
        trees = self.trees or (1 if self.mode() == "tree" else default_trees(self.resolved_backend()))
        per_tree = None if self.iterations is None else max(1, -(-self.iterations // trees))
        return TreeOptions(per_tree, self.time, self.c, self.formula, self.reward, self.playouts,
                           self.playout_depth, self.capacity, trees, self.eval, self.eval_plies, self.imm)

    def mode(self) -> str | None:
        """The backend search this config runs: ``tree`` (tree-parallel,
        :mod:`jitsearch.mcts.shared`), ``root`` (multi-tree block
        parallelism, :mod:`jitsearch.mcts.multi`), ``leaf`` (batched leaf
        evaluation), or None (the in-kernel CPU search)."""
        if self.backend is None:
            return None
        if self.batch is not None:
            return "leaf"
        if self.parallel is not None:
            return self.parallel
        return DEFAULT_PARALLEL[self.resolved_backend()]

    def resolved_backend(self) -> str | None:
        """``cpu`` or ``cuda`` for the backend asked for (``auto`` decided),
        None for the in-kernel CPU search; a CUDA request without a GPU
        raises :class:`~jitsearch.kernels.backend.BackendError` here. The
        answer is kept: one search resolves its backend once."""
        if self.backend is None:
            return None
        if getattr(self, "_resolved", (None, None))[0] != self.backend:
            from ..kernels.backend import resolve

            self._resolved = (self.backend, resolve(self.backend))
        return self._resolved[1]

    @classmethod
    def from_options(cls, **options) -> "MCTSConfig":
        """A config from keyword options; ``time`` alone means no iteration
        cap. Unknown options, and ``batch`` / ``virtual_loss`` without a
        ``backend`` (they would be ignored), raise ``ValueError``."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ValueError(f"unknown MCTS option(s) {', '.join(unknown)}; known: {', '.join(known)}")
        if options.get("backend") is None:
            stray = [k for k in ("batch", "virtual_loss", "trees", "leaves", "parallel", "blocks") if k in options]
            if stray:
                raise ValueError(f"{' and '.join(stray)} {'apply' if len(stray) > 1 else 'applies'} to the "
                                 f"backend searches only: give backend= "
                                 f"(cpu, cuda or auto) or drop {', '.join(stray)}")
        if "time" in options and "iterations" not in options:
            options["iterations"] = None
        return cls(**options)

    def plays_to_the_end(self) -> bool:
        """Whether the leaves get random playouts to the end only (reward
        ``win``, no ``playout_depth``, no ``eval``): the searches the smaller
        in-kernel MCTS (:func:`jitsearch.mcts.tree.kernels` with
        ``to_the_end``) runs."""
        return kernel_reward(self.reward, self.playout_depth, self.eval, self.eval_plies) == (REWARD_WIN, NO_PLY_CAP)

    def params(self, game=None) -> np.ndarray:
        """The kernel's params vector (:mod:`jitsearch.mcts.tree`) for ``game`` (its default
        ``eval_param`` filled in)."""
        p = np.zeros(N_PARAMS, dtype=np.float64)
        p[P_C] = self.c
        p[P_FORMULA] = FORMULAS[self.formula]
        p[P_PB] = self.pb
        p[P_REWARD], p[P_MAX_PLIES] = kernel_reward(self.reward, self.playout_depth, self.eval, self.eval_plies)
        p[P_IMM] = self.imm
        p[P_SOLVER] = 1.0 if self.solver else 0.0
        p[P_PLAYOUTS] = self.playouts
        se = None if game is None else game.search_eval
        if self.eval is not None and se is not None and self.eval in se.evals:
            p[P_EVAL_PARAM] = se.check_param(self.eval_param)
        return p


class TreeOptions(NamedTuple):
    """The options of one multi-tree or tree-parallel search, already
    checked (by :func:`check_tree_options`, or by :meth:`MCTSConfig.validate`
    and then :meth:`MCTSConfig.tree_options`): ``iterations`` per tree (or
    None with ``time``), ``time`` in seconds for the whole launch, ``c``,
    ``formula``, ``reward``, ``playouts`` per leaf, ``playout_depth``,
    ``capacity`` (nodes per tree or None), ``trees`` per position, ``eval``
    (None, ``store`` or ``heuristic``), ``eval_plies`` (set when ``eval``
    is) and ``imm`` (the implicit minimax weight alpha, 0 = off)."""

    iterations: int | None
    time: float | None
    c: float
    formula: str
    reward: str
    playouts: int
    playout_depth: int
    capacity: int | None
    trees: int
    eval: str | None = None
    eval_plies: int | None = None
    imm: float = 0.0

    def kernel_reward(self) -> tuple[int, int]:
        """The kernels' (reward code, plies before a playout is scored)."""
        return kernel_reward(self.reward, self.playout_depth, self.eval, self.eval_plies)


def default_trees(backend: str) -> int:
    """Trees when the caller gives none: 256 on a GPU (two blocks per SM on an
    H100/H200), one per core on the CPU."""
    return 256 if backend == "cuda" else max(1, min(os.cpu_count() or 1, max_threads()))


def game_rewards(game=None) -> tuple[tuple, tuple]:
    """(``reward=`` names, ``eval=`` names) of ``game``'s single-tree MCTS: ``win`` (and
    ``heuristic``, HMCTS, for a game with rewards of its own) and the evaluations of its
    :attr:`~jitsearch.games.protocol.Game.search_eval`; ``None``: every registered game's."""
    from ..games import GAMES

    rewards, evals = ["win"], []
    for g in (GAMES.values() if game is None else (game,)):
        se = g.search_eval
        if se is not None:
            if se.rewards is not None and "heuristic" not in rewards:
                rewards.append("heuristic")
            evals += [e for e in se.evals if e not in evals]
    return tuple(rewards), tuple(evals)


def check_eval_param(game, eval, eval_param):
    """``eval_param`` (the parameter of a game's own evaluation, Oware's side weight): None
    unless ``eval`` is the game's :attr:`~jitsearch.games.protocol.Game.search_eval`'s, then
    checked by it (one-line ``ValueError``)."""
    if eval_param is None:
        return None
    se = None if game is None else game.search_eval
    if game is not None and (se is None or eval not in se.evals):
        raise ValueError(f"eval_param= is the parameter of {game.name}'s own evaluation"
                         + (f" ({se.param} of eval={se.evals[0]})" if se is not None else ": it has none"))
    if se is None:
        return check_float("eval_param", eval_param, -MAX_WEIGHT, MAX_WEIGHT)
    return se.check_param(eval_param)


def check_eval(reward, playout_depth, eval, eval_plies, imm, evals=EVALS) -> tuple[str | None, int | None, float]:
    """Check the leaf evaluation options (``reward`` and ``playout_depth``
    already checked): ``eval`` None or one of EVALS, ``eval_plies`` in
    0..MAX_PLAYOUT_DEPTH and only with ``eval`` (default
    DEFAULT_EVAL_PLIES), ``imm`` in [0, 1] and above 0 only with ``eval``;
    ``eval`` excludes ``reward=heuristic`` and ``playout_depth``. Returns
    them normalised."""
    if eval is not None:
        if not evals:
            raise ValueError("this game has no MCTS evaluation (eval=): its playouts go to the end of the game")
        eval = check_choice("eval", eval, tuple(evals))
        if reward != "win":
            raise ValueError("eval= replaces reward=heuristic (HMCTS): give one of them (eval=heuristic scores the "
                             "leaves by the heuristic after eval_plies random plies)")
        if playout_depth:
            raise ValueError("with eval= the random plies before the evaluation are eval_plies=, not playout_depth=")
        eval_plies = DEFAULT_EVAL_PLIES if eval_plies is None else check_int("eval_plies", eval_plies, 0,
                                                                             MAX_PLAYOUT_DEPTH)
    elif eval_plies is not None:
        raise ValueError("eval_plies= (random plies before the evaluation) applies to eval=: give eval=store or "
                         "eval=heuristic")
    imm = check_float("imm", imm, 0.0, 1.0)
    if imm and eval is None:
        raise ValueError("imm= (implicit minimax backups) backs up an evaluation: give eval=store or eval=heuristic")
    return eval, eval_plies, imm


def check_tree_options(iterations, time, c, formula, reward, playouts, playout_depth, capacity, trees, eval=None,
                       eval_plies=None, imm=0.0) -> TreeOptions:
    """The options of the multi-tree and tree-parallel searches called
    directly, checked against this module's limits; returns them normalised
    (``capacity`` is checked against the board by the search)."""
    if iterations is None and time is None:
        raise ValueError("give iterations= or time=")
    if iterations is not None:
        iterations = check_int("iterations", iterations, 1, MAX_TREE_ITERATIONS)
    if time is not None:
        time = check_float("time", time, 0.0, MAX_TIME, lo_open=True)
    c = check_float("c", c, 0.0, MAX_WEIGHT)
    formula = check_choice("formula", formula, tuple(FORMULAS))
    reward = check_choice("reward", reward, tuple(REWARDS))
    playouts = check_int("playouts", playouts, 1, MAX_LEAF_PLAYOUTS)
    playout_depth = check_int("playout_depth", playout_depth, 0, MAX_PLAYOUT_DEPTH)
    trees = check_int("trees", trees, 1, MAX_TREES)
    eval, eval_plies, imm = check_eval(reward, playout_depth, eval, eval_plies, imm)
    return TreeOptions(iterations, time, c, formula, reward, playouts, playout_depth, capacity, trees, eval,
                       eval_plies, imm)

"""Agents of any game of the protocol (:mod:`jitsearch.games.protocol`): the generic kinds plus
the game's own engines (:attr:`~jitsearch.games.protocol.Game.engines`).

Specs: ``random``; ``mc:playouts=200`` (flat Monte Carlo: that many uniformly random playouts
after each legal move, :func:`jitsearch.games.playout.evaluate`; the move with the best mean
result for the mover, ties to the first legal move; ``time=`` plays rounds of ``playouts`` until
that many seconds have passed); ``mcts:iterations=2000`` or ``mcts:time=0.5`` (one UCT tree,
:func:`jitsearch.mcts.game.search_game`; options ``playouts=`` per leaf (default 1), ``c=``
(default sqrt 2), ``formula=ucb1|sqrt|sqrtlog``, ``leaves=`` per step, ``threads=``,
``backend=cpu|cuda|auto``; ``parallel=tree`` grows one shared tree with ``blocks=`` workers on
a GPU, :func:`jitsearch.mcts.game_shared.tree_parallel_game`; a game with an MCTS module of
its own, ``jitsearch.mcts.NAME`` (today Oware's), is searched by it, which adds leaf
evaluations ``eval=``, ``eval_plies=``, ``imm=``: Oware's ``eval=capture``). A game's engines add
their kinds with their options (Oware: ``alphabeta``
and ``fsss`` with ``depth=``, ``time=``, ``w=``, ``db=``). Each option may be given once; the
options are checked once, when the spec is parsed.

An agent's random stream comes from its seed and the number of moves it has made, so a game
replays exactly. Called from the main thread the search runs on the agents' search thread
(:func:`jitsearch.arena.search_thread.run_search`: Ctrl-C raises ``KeyboardInterrupt`` at once);
:meth:`GameAgent.choose` searches in the calling thread and ``stop`` (a ``threading.Event``)
ends it within about a second, raising ``KeyboardInterrupt``.
"""

from __future__ import annotations

import copy
import math
import random
import threading
import time as _time

from .._checks import check_float, check_int, max_threads
from ..games.protocol import Game
from ..kernels.backend import BackendError, resolve
from ..games.playout import MAX_PLAYOUTS_PER_STATE
from ..rng import mix64_py
from ..mcts.config import (MAX_BLOCKS, MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TIME,
                           MAX_TREE_ITERATIONS, MAX_WEIGHT)
from ..stop import check_stop, raise_if_stopped
from .search_thread import run_search

#: The generic kinds and their option types (every game).
GENERIC = {"random": {}, "mc": {"playouts": int, "time": float, "threads": int},
           "mcts": {"iterations": int, "time": float, "playouts": int, "c": float, "formula": str, "leaves": int,
                    "threads": int, "backend": str, "parallel": str, "blocks": int, "eval": str,
                    "eval_plies": int, "imm": float}}
#: Playouts a child of flat Monte Carlo plays between two looks at ``stop``.
MC_CHUNK = 1024
#: The MCTS options of leaf evaluations (the game's ``search_eval`` hook, :func:`jitsearch.mcts.game.check_eval`).
EVAL_OPTIONS = ("eval", "eval_plies", "imm")


def kinds(game: Game) -> dict:
    """Every agent kind of ``game`` (name -> option types): the generic ones, then the game's engines."""
    return {**GENERIC, **{name: dict(engine.options) for name, engine in game.engines.items()}}


def check_options(game: Game, kind: str, options: dict):
    """Check ``options`` of a generic ``kind`` (one-line ``ValueError``); for an engine kind, return
    its search (the engine's ``make(options)``)."""
    if kind in game.engines:
        return game.engines[kind].make(dict(options))
    if "time" in options:
        check_float("time", options["time"], 0.0, MAX_TIME, lo_open=True)
    if "playouts" in options:
        check_int("playouts", options["playouts"], 1, MAX_PLAYOUTS_PER_STATE if kind == "mc" else MAX_LEAF_PLAYOUTS)
    if kind == "mc" and "threads" in options:
        check_int("threads", options["threads"], 1, max_threads())
    if kind != "mcts":
        return None
    o = options
    if "iterations" in o and "time" in o:
        raise ValueError("give iterations= or time=, not both")
    if "iterations" in o:
        check_int("iterations", o["iterations"], 1, MAX_TREE_ITERATIONS)
    if "c" in o:
        check_float("c", o["c"], 0.0, MAX_WEIGHT)
    if "leaves" in o:
        check_int("leaves", o["leaves"], 1, MAX_LEAVES)
    if "threads" in o:
        check_int("threads", o["threads"], 1, 1024)
    if o.get("formula", "ucb1") not in ("ucb1", "sqrt", "sqrtlog"):
        raise ValueError(f"formula must be one of ucb1, sqrt, sqrtlog, got {o['formula']!r}")
    if o.get("parallel", "root") not in ("root", "tree"):
        raise ValueError(f"parallel must be root (one tree) or tree (one shared tree, blocks= workers on a GPU), "
                         f"got {o['parallel']!r}")
    if o.get("parallel", "root") == "tree" and "leaves" in o:
        raise ValueError("leaves= applies to parallel=root; a shared tree evaluates one leaf a worker")
    if "blocks" in o:
        if o.get("parallel") != "tree":
            raise ValueError("blocks= applies only with parallel=tree")
        check_int("blocks", o["blocks"], 1, MAX_BLOCKS)
    if o.get("leaves", 1) * o.get("playouts", 1) > MAX_STEP_PLAYOUTS:
        raise ValueError(f"leaves x playouts is above the limit of {MAX_STEP_PLAYOUTS} per step")
    if any(k in o for k in EVAL_OPTIONS):
        from ..mcts.game import check_eval

        check_eval(game, o.get("eval"), o.get("eval_plies"), o.get("imm", 0.0), None)
    return None


class GameAgent:
    """A move chooser for one game: ``agent(state) -> move``; ``last`` holds its last search's info
    (module docstring)."""

    def __init__(self, game: Game, spec: str, kind: str, options: dict, seed: int, search=None):
        self.game, self.spec, self.kind, self.options, self.seed = game, spec, kind, options, seed
        self._engine_search = search
        self._engine_options = dict(options)  # what the engine's search was made from
        self.moves_made = 0
        self.last: dict = {}
        self.backend = resolve(options.get("backend", "cpu")) if kind == "mcts" else "cpu"

    def __repr__(self) -> str:
        return self.spec

    __str__ = __repr__

    def with_seed(self, seed: int | None) -> "GameAgent":
        """A fresh agent of this spec (nothing parsed or checked again) with its own ``seed``."""
        twin = copy.copy(self)
        twin.seed = random.randrange(1 << 31) if seed is None else check_int("seed", seed)
        twin.moves_made, twin.last = 0, {}
        return twin

    def __call__(self, state) -> int:
        self._check_state(state)
        if self.kind == "random":
            return self._search(None, state)
        return run_search(self._search, state)

    def choose(self, state, stop: threading.Event | None = None) -> int:
        """The move in ``state``, searched in the calling thread; ``stop`` set from another thread ends the
        search within about a second and raises ``KeyboardInterrupt``."""
        self._check_state(state)
        check_stop(stop)
        return self._search(stop, state)

    def _check_state(self, state) -> None:
        if not isinstance(state, self.game.State):
            raise ValueError(f"a {self.game.name} agent plays a {self.game.State.__name__}, got {type(state).__name__}")
        if state.is_over:
            raise ValueError("the game is over: no move to choose")

    def _search(self, stop, state) -> int:
        move = self._search_move(stop, state)
        raise_if_stopped(stop)
        return move

    def _search_move(self, stop, state) -> int:
        legal = state.legal_moves()
        rnd = random.Random(self.seed * 1_000_003 + self.moves_made)
        self.moves_made += 1
        if self.kind == "random":
            return rnd.choice(legal)
        if self._engine_search is not None:
            if self.options != self._engine_options:  # changed since (a server's time cap): made again, checked
                self._engine_search = self.game.engines[self.kind].make(dict(self.options))
                self._engine_options = dict(self.options)
            r = self._engine_search(state, rnd.getrandbits(63), stop)
            self.last = {k: v for k, v in r.items() if k != "move"}
            return r["move"]
        if self.kind == "mcts":
            return self._mcts(stop, state, rnd.getrandbits(63))
        return self._monte_carlo(stop, state, rnd.getrandbits(63), legal)

    def _mcts(self, stop, state, seed: int) -> int:
        o = self.options
        common = dict(iterations=o.get("iterations"), time=o.get("time"), seed=seed, playouts=o.get("playouts", 1),
                      c=o.get("c", math.sqrt(2)), backend=self.backend, stop=stop)
        if "formula" in o:
            common["formula"] = o["formula"]
        if "threads" in o:
            common["threads"] = o["threads"]
        if any(k in o for k in EVAL_OPTIONS):  # leaf evaluations: the game's search_eval hook
            common.update(eval=o.get("eval"), eval_plies=o.get("eval_plies"), imm=o.get("imm", 0.0))
        if o.get("parallel") == "tree":
            from ..mcts.game_shared import tree_parallel_game

            if common["iterations"] is None and common["time"] is None:
                common["iterations"] = 1000
            out = tree_parallel_game(self.game, [state], blocks=o.get("blocks"), **common)
            r = {**out["positions"][0], "iterations": out["iterations"], "interrupted": out["interrupted"]}
        else:
            from ..mcts.game import search_game

            r = search_game(self.game, state, leaves=o.get("leaves"), **common)
        if r["interrupted"]:  # Ctrl-C between chunks, or stop: no move from a half-grown tree
            raise KeyboardInterrupt
        self.last = {"value": r["value"], "iterations": r["iterations"], "nodes": r["nodes"]}
        return r["move"]

    def _monte_carlo(self, stop, state, seed: int, legal) -> int:
        """Flat Monte Carlo: ``playouts`` random playouts after each legal move (rounds until ``time``)."""
        from ..kernels.game_playouts import evaluate_states

        playouts = self.options.get("playouts", 200)
        limit = self.options.get("time")
        threads = self.options.get("threads", 1)
        children = [state.play(m) for m in legal]
        live = [k for k, c in enumerate(children) if not c.is_over]
        points = [0.0] * len(legal)
        played = 0
        start = _time.perf_counter()
        while True:
            for first in range(0, playouts if live else 0, MC_CHUNK):  # stop is read between chunks
                n = min(MC_CHUNK, playouts - first)
                key = mix64_py(seed + played * playouts + first)
                # the same playouts on any number of threads; the batch is loaded from Numba's disk cache
                out = evaluate_states(self.game, [children[k] for k in live], n, key, threads=threads, stop=stop)
                for i, k in enumerate(live):  # counts are for the child's player to move
                    mover_is_next = children[k].player == state.player
                    won = out["wins"][i] if mover_is_next else out["losses"][i]
                    points[k] += won + 0.5 * out["draws"][i]
                raise_if_stopped(stop)
            played += 1
            raise_if_stopped(stop)
            if limit is None or _time.perf_counter() - start >= limit:
                break
        best, best_score = legal[0], -1.0
        for k, (m, c) in enumerate(zip(legal, children)):
            if c.is_over:
                mine = c.margin if state.player == 0 else -c.margin
                s = 1.0 if mine > 0 else 0.5 if mine == 0 else 0.0
            else:
                s = float(points[k]) / (playouts * played)
            if s > best_score:
                best, best_score = m, s
        self.last = {"value": best_score, "playouts": playouts * played * len(live)}
        return best


def parse_game_agent(game: Game, spec: str, rest: str, seed: int | None) -> GameAgent:
    """The agent of ``spec`` (kind before ``:``, ``rest`` its options) for ``game``; a bad spec raises one-line
    ``ValueError`` naming it."""
    kind = spec.strip().partition(":")[0].strip()
    known = kinds(game)
    if kind not in known:
        raise ValueError(f"unknown {game.name.capitalize()} agent {kind!r}: one of "
                         f"{', '.join([*known, 'openspiel', 'cmd'])}")
    options = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = (x.strip() for x in item.partition("="))
        if not eq or key not in known[kind]:
            raise ValueError(f"{spec}: unknown option {item!r} for {kind} (options: "
                             f"{', '.join(known[kind]) or 'none'})")
        if key in options:
            raise ValueError(f"{spec}: option {key} given twice")
        try:
            options[key] = _value(known[kind][key], value)
        except ValueError:
            raise ValueError(f"{spec}: bad value {value!r} for {key}") from None
    try:
        search = check_options(game, kind, options)
        seed = random.randrange(1 << 31) if seed is None else check_int("seed", seed, 0)
        return GameAgent(game, spec.strip(), kind, options, seed, search)
    except (ValueError, BackendError) as exc:
        text = str(exc)
        raise ValueError(text if text.startswith(spec) else f"{spec}: {text}") from None


def _value(kind, text: str):
    if kind is bool:
        if text.lower() not in ("0", "1", "true", "false"):
            raise ValueError
        return text.lower() in ("1", "true")
    return kind(text)

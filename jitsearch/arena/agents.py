"""Agents: one interface, state -> move, for every game (:func:`parse_agent`), and one class,
:class:`Agent`, for every kind that is not another program's (``cmd:``) or an OpenSpiel bot.

Every game's agents are ``random``, Monte Carlo kinds and the game's engines
(:attr:`~jitsearch.games.protocol.Game.engines`: Kalah's
``alphabeta:depth=8``, ``alphabeta:time=1.5`` (the engine: ``threads=``, ``db=``, ``tt=``,
``eval=fitted|store``, ``exact=0|1``, ``exact_share=``, ``book=0|1``; ``plain=1`` the textbook
iterative deepening), ``fsss:depth=5,eval=heuristic``, ``mtdf``, ``perfect``; Oware's
``alphabeta`` and ``fsss`` with ``depth=``, ``time=``, ``w=``, ``db=``). Every game also has
``openspiel:mcts,simulations=1000`` and the other OpenSpiel bots of
:mod:`jitsearch.arena.openspiel_agents` (with the ``openspiel`` extra) and ``cmd:PROGRAM
ARGS...`` (an external engine speaking the line protocol, :mod:`jitsearch.arena.external_engine`).

**A game with** :attr:`~jitsearch.games.protocol.Game.config_agents` (Kalah) also has ``human``
(the CLI asks), and its Monte Carlo kinds are the MCTSConfig searches of
:mod:`jitsearch.mcts.search`: ``mcts:iterations=100`` or ``mcts:time=1`` with ``c=`` (default
sqrt 2), ``formula=ucb1|sqrt|sqrtlog``, ``pb=`` (progressive bias weight),
``reward=win|heuristic``, ``playout_depth=`` (cut playouts, score by the heuristic),
``eval=store|heuristic`` (score each leaf by ``eval_plies=`` random plies, default 4, then the
squashed store difference or the heuristic), ``imm=`` (implicit minimax backups of the
evaluation, weight 0..1; 0 = off), ``solver=1`` (MCTS-Solver; 0, 1, true or false),
``playouts=`` (per leaf), ``final=visits|value``, ``workers=`` (root parallelism),
``backend=cpu|cuda|auto`` with ``batch=`` (leaves per launch, chosen with virtual loss);
``hmcts:...`` is ``mcts`` with ``reward=heuristic`` (Siljander's HMCTS); ``mc:playouts=1000``
(or ``time=``) is pure Monte Carlo. Each option may be given once; values are checked against
the same limits as the API (:mod:`jitsearch.mcts.search`: iterations, playouts, workers, batch,
time), and an option that does not apply to the agent is refused.

**Every other game** has the generic kinds: ``mc:playouts=200`` (flat Monte Carlo: that many
uniformly random playouts after each legal move,
:func:`jitsearch.kernels.game_playouts.evaluate_states`; the move with the best mean result for
the mover, ties to the first legal move; ``time=`` plays rounds of ``playouts`` until that many
seconds have passed); ``mcts:iterations=2000`` or ``mcts:time=0.5`` (one UCT tree,
:func:`jitsearch.mcts.game.search_game`; options ``playouts=`` per leaf (default 1), ``c=``
(default sqrt 2), ``formula=ucb1|sqrt|sqrtlog``, ``leaves=`` per step, ``threads=``,
``backend=cpu|cuda|auto``; ``parallel=tree`` grows one shared tree with ``blocks=`` workers on a
GPU, :func:`jitsearch.mcts.game_shared.tree_parallel_game`; a game with its own evaluation adds
``eval=``, ``eval_plies=``, ``imm=``: Oware's ``eval=capture``); and, unless the game has an
engine of that name, ``alphabeta:depth=8`` or ``alphabeta:time=0.5`` (iterative-deepening
alpha-beta over the protocol with the game's ``evaluate`` at the leaves and its position key
and move order where it has them, :func:`jitsearch.kernels.game_alphabeta.alphabeta_game`;
``table=`` slots; ``exact=SHARE``: a game with an exact solve proves the position first within
that share of ``time=``; it stops deepening once the value is exact). Each option may be given once;
the options are checked once, when the spec is parsed.

An agent's random streams come from its seed and the number of moves it has made, so a game
replays exactly.

Ctrl-C: called from the main thread, an agent runs its search on a helper thread
(:func:`run_search`; every kernel it calls is ``nogil``) and waits for it in short slices, so a
Ctrl-C raises ``KeyboardInterrupt`` within a fraction of a second even in the middle of a long
kernel; the interrupted search is told to stop and ends soon after on its daemon thread. A
search that reports it was interrupted raises ``KeyboardInterrupt`` too, never plays on. Called
from any other thread (a Dask worker, a thread of the caller's), the search runs in that thread,
with no hand-off.

Stopping (:meth:`Agent.choose` with ``stop``, a ``threading.Event``, what a server's worker
calls; also the Ctrl-C path above): every searching kind ends within about a second of ``stop``
being set and raises ``KeyboardInterrupt``: the engines as their hook promises, MCTS between
chunks of a few hundredths of a second, ``mc`` between rounds (a round is at most 2**20 playouts,
about 0.6 s).
"""

from __future__ import annotations

import copy
import inspect
import math
import random
import threading
import time as _time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .._checks import check_choice, check_float, check_int, max_threads
from ..games import DEFAULT_GAME, get as get_game
from ..games.playout import MAX_PLAYOUTS_PER_STATE
from ..games.protocol import Engine
from ..kernels.backend import BackendError, resolve
from ..mcts.config import (MAX_BLOCKS, MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TIME,
                           MAX_TREE_ITERATIONS, MAX_WEIGHT)
from ..rng import mix64_py
from ..stop import check_stop, raise_if_stopped
from .search_thread import run_search

#: The kinds of a game with ``config_agents`` (the game's engines come between ``human`` and ``mcts``).
CONFIG_KINDS = ("random", "human", "mcts", "hmcts", "mc")
#: Value type of each MCTS option in a spec (``bool``: 0, 1, true or false).
MCTS_OPTIONS = {"iterations": int, "time": float, "c": float, "formula": str, "pb": float, "reward": str,
                "playout_depth": int, "eval": str, "eval_plies": int, "imm": float, "solver": bool, "playouts": int,
                "final": str, "workers": int, "backend": str, "batch": int, "virtual_loss": float, "trees": int,
                "leaves": int, "parallel": str, "blocks": int}
#: Options of those kinds and their value types.
AGENT_OPTIONS = {"random": {}, "human": {}, "mcts": MCTS_OPTIONS,
                 "hmcts": {k: v for k, v in MCTS_OPTIONS.items() if k != "reward"},
                 "mc": {"playouts": int, "time": float}}
#: Longest agent spec, in characters.
MAX_SPEC = 1000
#: Most plies :func:`play_game` may be asked to play.
MAX_PLIES = 1_000_000


def agent_kinds(game=DEFAULT_GAME) -> tuple:
    """:class:`Agent`'s kinds for ``game``: ``random``, ``human``, the game's engines, ``mcts``, ``hmcts``, ``mc``."""
    return (*CONFIG_KINDS[:2], *get_game(game).engines, *CONFIG_KINDS[2:])


#: :class:`Agent`'s kinds for the default game.
KINDS = agent_kinds()
#: The generic kinds and their option types (every game).
GENERIC = {"random": {}, "mc": {"playouts": int, "time": float, "threads": int},
           "mcts": {"iterations": int, "time": float, "playouts": int, "c": float, "formula": str, "leaves": int,
                    "threads": int, "backend": str, "parallel": str, "blocks": int, "eval": str,
                    "eval_plies": int, "imm": float}}
#: Playouts a child of flat Monte Carlo plays between two looks at ``stop``.
MC_CHUNK = 1024
#: The MCTS options of leaf evaluations (the game's ``search_eval`` hook, :func:`jitsearch.mcts.game.check_eval`).
EVAL_OPTIONS = ("eval", "eval_plies", "imm")


#: Options of the generic ``alphabeta`` kind and their value types.
ALPHABETA_OPTIONS = {"depth": int, "time": float, "table": int, "exact": float}
#: Seconds a move of the generic ``alphabeta`` kind searches when given neither depth= nor time=.
ALPHABETA_DEFAULT_TIME = 1.0


def _make_alphabeta(game, options: dict):
    """The search of ``alphabeta:depth=D,time=T,table=SLOTS,exact=SHARE`` on ``game``: iterative
    deepening over the protocol (:func:`jitsearch.kernels.game_alphabeta.alphabeta_game`) to
    ``depth`` plies, for ``time`` seconds (the deepest iteration completed), or both; neither:
    ``time=1``. It stops early once the value is exact (the end of the game under every line).
    ``table``: slots of its transposition table (a power of two, 0 none; default 2**20 where the
    game has a position key). ``exact``: a game with an exact solve (:attr:`Game.exact
    <jitsearch.games.protocol.Game>`) first tries to solve the position within that share of
    ``time`` and plays a move that keeps the proven value when it does; the search has the rest."""
    from ..kernels.game_alphabeta import MAX_DEPTH, alphabeta_game

    depth, time, table = options.get("depth"), options.get("time"), options.get("table")
    share = options.get("exact", 0.0)
    if depth is not None:
        check_int("depth", depth, 1, MAX_DEPTH)
    if time is not None:
        check_float("time", time, 0.0, MAX_TIME, lo_open=True)
    if depth is None and time is None:
        time = ALPHABETA_DEFAULT_TIME
    if table is not None:
        check_int("table", table, 0, 1 << 30)
        if table and (table < 16 or table & (table - 1)):
            raise ValueError(f"table must be 0 or a power of two >= 16, got {table}")
        if table and game.position_key is None:
            raise ValueError(f"{game.name} has no position key: table must be 0")
    check_float("exact", share, 0.0, 1.0)
    if share and game.exact is None:
        raise ValueError(f"{game.name} has no exact solve: exact= must be 0")
    if share and time is None:
        raise ValueError("exact= is a share of time=: give time= too")

    def search(state, seed, stop):
        left = time
        if share:
            t0 = _time.perf_counter()
            r = game.exact.solve(state, report=lambda line: None, time_limit=share * time)
            raise_if_stopped(stop)
            if r.get("complete") and r.get("best_move") is not None:
                mover = r["margin"] if state.player == 0 else -r["margin"]  # the final margin, the mover's
                return {"move": r["best_move"], "value": float(r["margin"]), "margin": int(mover), "exact": True,
                        "solved": True, "nodes": r.get("nodes"), "seconds": _time.perf_counter() - t0}
            left = max(time - (_time.perf_counter() - t0), 1e-3)
        out = alphabeta_game(game, state, depth=depth, time=left, stop=stop, table_slots=table)
        return {**out, "solved": False} if share else out

    search.options = dict(options)
    return search


def engines(game) -> dict:
    """The engine kinds of ``game`` (name -> :class:`~jitsearch.games.protocol.Engine`): the game's own
    (:attr:`~jitsearch.games.protocol.Game.engines`), and ``alphabeta`` over the protocol for a game
    without one of that name."""
    own = dict(game.engines)
    if "alphabeta" not in own:
        own["alphabeta"] = Engine(ALPHABETA_OPTIONS, partial(_make_alphabeta, game))
    return own


def kinds(game) -> dict:
    """Every agent kind of ``game`` (name -> option types): the generic ones, then the engines."""
    return {**GENERIC, **{name: dict(engine.options) for name, engine in engines(game).items()}}


def check_options(game, kind: str, options: dict):
    """Check ``options`` of a generic ``kind`` (one-line ``ValueError``); for an engine kind, return
    its search (the engine's ``make(options)``)."""
    own = engines(game)
    if kind in own:
        return own[kind].make(dict(options))
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


@dataclass
class Agent:
    """A move chooser of any game (module docstring): ``agent(state) -> move``; ``last`` holds the
    search info of the last move. Its kinds are those of :func:`agent_kinds` for a game with
    ``config_agents`` (Kalah), else the generic ones of :func:`kinds`; ``spec`` is the spec it was
    parsed from (generic kinds)."""

    kind: str
    depth: int | None = None
    time: float | None = None
    eval: str | None = None
    seed: int | None = None
    last: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    game: Any = DEFAULT_GAME
    spec: str | None = None

    def __post_init__(self):
        self._config = None  # the MCTS options, validated once (mcts and hmcts agents of config games)
        self._engine_search = None  # the search of an engine kind (the game's Engine.make)
        self._check()
        self._engine_options = dict(self.options)  # what the engine's search was made from
        self._rng = random.Random(self.seed)
        self._moves_made = 0

    @property
    def generic(self) -> bool:
        """True for the generic kinds (a game without ``config_agents``)."""
        return not self.game.config_agents

    def with_seed(self, seed: int | None) -> "Agent":
        """A fresh agent of this spec (already parsed and checked: nothing
        is parsed or validated again) with its own ``seed`` and its own
        state: what a tournament makes for each game."""
        twin = copy.copy(self)
        if seed is None:
            twin.seed = random.randrange(1 << 31) if self.generic else None
        else:
            twin.seed = check_int("seed", seed)
        twin.last = {}
        twin.options = dict(self.options)
        twin._rng = random.Random(twin.seed)
        twin._moves_made = 0
        s = self._engine_search
        twin._engine_search = s.fresh() if hasattr(s, "fresh") else s
        if twin._engine_search is not None:
            twin.options = getattr(twin._engine_search, "options", twin.options)
        return twin

    def _check(self):
        """Validate the fields (what :func:`parse_agent` checks, for direct construction too)."""
        self.game = get_game(self.game)
        if self.generic:
            self.kind = check_choice("agent kind", self.kind, tuple(kinds(self.game)))
            self._engine_search = check_options(self.game, self.kind, self.options)
            self.seed = random.randrange(1 << 31) if self.seed is None else check_int("seed", self.seed, 0)
            self.backend = resolve(self.options.get("backend", "cpu")) if self.kind == "mcts" else "cpu"
            return
        self.kind = check_choice("agent kind", self.kind, agent_kinds(self.game))
        if not isinstance(self.options, dict):
            raise ValueError(f"options must be a dict, got {type(self.options).__name__}")
        if self.kind in self.game.engines:
            given = {k: v for k, v in (("depth", self.depth), ("time", self.time), ("eval", self.eval))
                     if v is not None}
            s = self._engine_search = self.game.engines[self.kind].make({**given, **self.options})
            self.depth, self.time, self.eval = (getattr(s, "depth", None), getattr(s, "time", None),
                                                getattr(s, "eval", None))
            self.options = getattr(s, "options", self.options)
            if self.seed is not None:
                self.seed = check_int("seed", self.seed)
            return
        allowed = AGENT_OPTIONS[self.kind]
        monte_carlo = self.kind in ("mcts", "hmcts", "mc")
        if self.depth is not None:
            raise ValueError(f"depth does not apply to a {self.kind} agent")
        if self.time is not None:
            if "time" not in allowed:
                raise ValueError(f"time does not apply to a {self.kind} agent")
            self.time = check_float("time", self.time, 0.0, 86_400.0, lo_open=True)
        if self.eval is not None:  # (mcts: eval= is in its options)
            raise ValueError(f"eval does not apply to a {self.kind} agent")
        self.eval = "store"
        if self.seed is not None:  # any integer: it is hashed before use
            self.seed = check_int("seed", self.seed)
        if self.options and not monte_carlo:
            raise ValueError(f"a {self.kind} agent takes no options, got {sorted(self.options)}")
        if not monte_carlo:
            return
        unknown = sorted(set(self.options) - set(allowed) - ({"reward"} if self.kind == "hmcts" else set()))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for {self.kind}; known: {sorted(allowed)}")
        if self.time is not None and self.options.get("time") != self.time:
            raise ValueError(f"a {self.kind} agent's time goes in its options (time=)")
        if self.kind != "mc" and "iterations" in self.options and "time" in self.options:
            raise ValueError(f"give iterations= or time=, not both: an {self.kind} agent searches a fixed number "
                             f"of iterations or for a time")
        if self.kind == "mc":
            if "playouts" in self.options:
                check_int("playouts", self.options["playouts"], 1, MAX_PLAYOUTS_PER_STATE)
            if "time" in self.options:
                check_float("time", self.options["time"], 0.0, MAX_TIME, lo_open=True)
            return
        if self.kind == "hmcts" and self.options.setdefault("reward", "heuristic") != "heuristic":
            raise ValueError("hmcts is mcts with reward=heuristic: drop reward= (or use mcts:reward=...)")
        from ..mcts.config import MCTSConfig

        config = MCTSConfig.from_options(**self.options)
        config.validate()  # the same errors as the API, once, before any game starts
        config.resolved_backend()  # a CUDA request without a GPU fails here, in one line
        self._config = config

    @property
    def engine(self) -> bool:
        """True for an engine kind that keeps an engine of its own (Kalah's ``alphabeta:time=``...)."""
        return bool(getattr(self._engine_search, "engine", False))

    def prepare(self, state, notice=None) -> None:
        """Load (or build, once, into the cache) what this agent needs before its first move in games like
        ``state`` (the engine's endgame database). ``notice(text)`` is told before a build."""
        if hasattr(self._engine_search, "prepare"):
            self._engine_search.prepare(state, notice)

    def game_engine(self, state):
        """The engine of this agent on ``state``'s board (made at the first call); None for an agent that
        keeps none."""
        return self._engine_search.game_engine(state) if hasattr(self._engine_search, "game_engine") else None

    def next_search_seed(self) -> int:
        """The seed of this agent's next Monte Carlo search (a game with ``config_agents``): a function of
        its own seed and the moves it has made, so a game replays exactly (and a lockstep tournament gets
        the same searches)."""
        seed = mix64_py((self.seed or 0) * 1_000_003 + self._moves_made)
        self._moves_made += 1
        return seed

    @property
    def lockstep(self) -> bool:
        """True for a multi-tree MCTS agent with an iteration budget (a game with ``config_agents``): its
        searches of many games can share one kernel launch with identical results
        (:func:`jitsearch.arena.game_match.play_lockstep`)."""
        o = self.options
        return (not self.generic and self.kind in ("mcts", "hmcts") and o.get("backend") is not None
                and o.get("batch") is None and o.get("time") is None)

    def check_match(self, *variant, **settings) -> None:
        """Refuse (``ValueError``, one line), before the first game, a board this agent cannot play:
        the engine kind's own check (Kalah's ``perfect`` on a board it cannot solve in seconds; its
        engine loads its database), given the variant's options (in the game's order, or by name)
        and the ``settings`` it names (``suite``, ``position``). The other kinds play every board."""
        check = getattr(self._engine_search, "check_match", None)
        if check is not None:
            params = inspect.signature(check).parameters
            check(*variant, **{k: v for k, v in settings.items() if k in params})

    def _check_state(self, state) -> None:
        if not isinstance(state, self.game.State):
            if self.generic:
                raise ValueError(f"a {self.game.name} agent plays a {self.game.State.__name__}, got "
                                 f"{type(state).__name__}")
            raise ValueError(f"an agent plays a {self.game.State.__name__}, got {type(state).__name__}")
        if state.is_over:
            raise ValueError("the game is over: no move to choose" if self.generic else "the game is over")
        if self.kind == "human":
            raise ValueError(f"agent {self.kind!r} cannot choose moves by itself")

    def __call__(self, state) -> int:
        self._check_state(state)
        if self.kind == "random":
            return self._search(None, state)
        return run_search(self._search, state)

    def choose(self, state, stop: threading.Event | None = None) -> int:
        """The move in ``state``, searched in the calling thread (no hand-off, whatever the thread);
        ``stop`` set from another thread ends the search of every kind within about a second (module
        docstring) and raises ``KeyboardInterrupt``: a stopped search never gives a move. What a server's
        worker calls."""
        self._check_state(state)
        if self.kind == "random" and not self.generic:
            return self(state)
        check_stop(stop)
        return self._search(stop, state)

    @property
    def warms(self) -> bool:
        """Whether :meth:`warm` compiles anything (a game with ``config_agents``: MCTS, Monte Carlo, an
        engine kind that warms)."""
        return not self.generic and (self.kind in ("mcts", "hmcts", "mc")
                                     or bool(getattr(self._engine_search, "warms", False)))

    def warm(self, state) -> None:
        """Compile (or load from the cache) the kernels this agent's searches
        use, with the smallest budget of the same search on ``state``; its
        games are untouched (no move counted, no seed drawn, no table kept).
        Engines that keep a table, exact solvers and ``cmd:`` engines compile
        on their own first move (the engine's database is built by :meth:`prepare`)."""
        if state.is_over or not self.warms:
            return
        if self.kind in ("mcts", "hmcts"):
            from dataclasses import replace

            from ..mcts.search import mcts_search

            cfg = self._config
            mcts_search(state, replace(cfg, time=None, iterations=max(8, 2 * (cfg.batch or 1))), seed=0)
        elif self.kind == "mc":
            from ..mcts.search import monte_carlo_search

            monte_carlo_search(state, playouts=max(1, len(state.legal_moves())), seed=0)
        else:
            self._engine_search.warm(state)

    def _search(self, stop, state) -> int:
        """The move of a searching agent (:func:`run_search` calls it, on the
        search thread when the caller is the main thread); ``KeyboardInterrupt``
        once ``stop`` is set, whatever the search had found."""
        move = self._generic_move(stop, state) if self.generic else self._config_move(stop, state)
        raise_if_stopped(stop)
        return move

    def _config_move(self, stop, state) -> int:
        if self.kind == "random":
            self.last = {}
            return self._rng.choice(state.legal_moves())
        if self._engine_search is not None:
            self.last = self._engine_search(state, self.seed or 0, stop)
            return self.last["move"]
        from ..mcts.search import mcts_search, monte_carlo_search

        seed = self.next_search_seed()
        if self.kind == "mc":
            self.last = monte_carlo_search(state, playouts=self.options.get("playouts", 1000),
                                           time_limit=self.options.get("time"), seed=seed, stop=stop)
        else:
            self.last = mcts_search(state, self._config, seed=seed, stop=stop)
        if self.last.get("interrupted"):  # Ctrl-C between chunks, or stop: no move from a half-grown tree
            raise KeyboardInterrupt
        return self.last["move"]

    def _generic_move(self, stop, state) -> int:
        legal = state.legal_moves()
        rnd = random.Random(self.seed * 1_000_003 + self._moves_made)
        self._moves_made += 1
        if self.kind == "random":
            return rnd.choice(legal)
        if self._engine_search is not None:
            if self.options != self._engine_options:  # changed since (a server's time cap): made again, checked
                self._engine_search = engines(self.game)[self.kind].make(dict(self.options))
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

    def __str__(self) -> str:
        if self.generic:
            return self.spec or self.kind
        if self._engine_search is not None:
            return str(self._engine_search)
        opts = [f"time={self.time:g}"] if self.time is not None else []
        opts += [f"{k}={v}" for k, v in self.options.items()
                 if not (self.kind == "hmcts" and k == "reward") and not (k == "time" and self.time is not None)]
        return self.kind + (":" + ",".join(opts) if opts else "")


def agent_kind(spec: str) -> str:
    """The kind a spec names (its text before ``:``), without checking the rest."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'alphabeta:depth=6', got {type(spec).__name__}")
    return spec.strip().partition(":")[0].strip()


def parse_agent(spec: str, *, game=DEFAULT_GAME, seed: int | None = None):
    """The agent of ``spec`` for ``game`` (a registered name or a :class:`~jitsearch.games.protocol.Game`).

    Every agent has ``agent(state) -> move`` (searched on the search thread from the main thread:
    Ctrl-C safe), ``agent.choose(state, stop=None) -> move`` (the calling thread; ``stop`` a
    ``threading.Event``), ``agent.last`` (the last search's info) and ``agent.with_seed(seed)``;
    agents that keep a game of their own add ``start(opening_moves)``, ``observe(move)`` and
    ``close()``. ``cmd:PROGRAM ARGS...`` is an external engine, ``openspiel:BOT,...`` an OpenSpiel
    bot; a game with ``config_agents`` (Kalah) has the MCTSConfig kinds (module docstring), every
    other game the generic ones (``random``, ``mc``, ``mcts`` and the game's engines).
    """
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'alphabeta:depth=6', got {type(spec).__name__}")
    if len(spec) > MAX_SPEC:
        raise ValueError(f"an agent spec has at most {MAX_SPEC} characters, got {len(spec)}")
    game = get_game(game)
    kind = agent_kind(spec)
    rest = spec.strip().partition(":")[2]
    if game.config_agents:
        return _parse_config_agent(game, spec, kind, rest, seed)
    if not spec.strip():
        raise ValueError(f"an agent spec is a string such as alphabeta:depth=6, got {spec!r}")
    if kind == "openspiel":
        from .openspiel_agents import parse_openspiel_spec

        return parse_openspiel_spec(spec.strip(), rest, random.randrange(1 << 31) if seed is None
                                    else check_int("seed", seed, 0), game=game.name)
    if kind == "cmd":  # an external engine speaking the line protocol (every game)
        from .external_engine import ExternalAgent

        return ExternalAgent(spec, seed=seed, game=game.name)
    return _parse_generic_agent(game, spec, rest, seed)


def _parse_config_agent(game, spec: str, kind: str, rest: str, seed: int | None) -> Agent:
    """:class:`Agent` from its spec.

    ``kind`` or ``kind:name=value,...``. Refused with ``ValueError`` naming
    the spec: an unknown kind or option, an option given twice, an empty
    value, a value of the wrong type (integers for counts, finite numbers,
    0/1/true/false for ``solver``) or out of its range, ``reward=`` with
    ``hmcts`` (it means reward=heuristic), ``batch`` / ``virtual_loss``
    without ``backend``, ``iterations=`` with ``time=`` (``mcts``, ``hmcts``:
    a budget is one or the other, as in every game's ``mcts``).

    Budgets that combine: ``alphabeta:depth=D,time=T`` is a timed search
    (iterative deepening, or the engine) that also stops at depth ``D``
    (Oware's ``alphabeta`` and ``fsss`` read both the same way);
    ``mc:playouts=N,time=T`` plays rounds of ``N`` playouts until ``T``
    seconds have passed (``N`` alone: one round).
    """
    if kind == "openspiel":
        from .openspiel_agents import parse_openspiel_spec

        return parse_openspiel_spec(spec, rest, seed, game=game.name)
    if kind == "cmd":  # an external engine (the line protocol): cmd:PROGRAM ARGS...
        from .external_engine import ExternalAgent

        return ExternalAgent(spec, seed=seed, game=game.name)
    kinds = agent_kinds(game)
    if kind not in kinds:
        raise ValueError(f"unknown agent {kind!r} in agent spec {spec!r}; choose one of: {', '.join(kinds)}")
    allowed = game.engines[kind].options if kind in game.engines else AGENT_OPTIONS[kind]
    fields = {}
    items = [x.strip() for x in rest.split(",")] if rest.strip() else []
    for item in items:
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not item:
            raise ValueError(f"empty option (a stray comma) in agent spec {spec!r}")
        if not eq:
            raise ValueError(f"agent option {item!r} must look like name=value in agent spec {spec!r}")
        if kind == "hmcts" and name == "reward":
            raise ValueError(f"hmcts is mcts with reward=heuristic: drop reward= (or use mcts:reward=...) "
                             f"in agent spec {spec!r}")
        if name not in allowed:
            raise ValueError(f"unknown option {name!r} for {kind} in agent spec {spec!r}; known: "
                             f"{', '.join(sorted(allowed)) or 'none'}")
        if name in fields:
            raise ValueError(f"option {name} is given twice in agent spec {spec!r}")
        if not value:
            raise ValueError(f"option {name} has an empty value in agent spec {spec!r}")
        fields[name] = _parse_value(allowed[name], name, value, spec)
    try:
        if kind in ("mcts", "hmcts", "mc"):
            return Agent(kind, None, fields.get("time"), None, seed, options=fields, game=game)
        return Agent(kind, seed=seed, options=fields, game=game)
    except ValueError as exc:
        raise ValueError(f"{exc} (agent spec {spec!r})") from None


def _parse_value(kind, name, value, spec):
    """One option value of a spec, parsed as ``kind`` (int, float, bool or str)."""
    try:
        if kind is bool:
            lowered = value.lower()
            if lowered not in ("0", "1", "true", "false"):
                raise ValueError
            return lowered in ("1", "true")
        if kind is int:
            return int(value, 10)
        if kind is float:
            return float(value)
        return value
    except ValueError:
        what = {bool: "0, 1, true or false", int: "an integer", float: "a number"}[kind]
        raise ValueError(f"bad value {value!r} for {name} in agent spec {spec!r}: {what} is needed") from None


def _parse_generic_agent(game, spec: str, rest: str, seed: int | None) -> Agent:
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
        return Agent(kind, seed=seed, options=options, game=game, spec=spec.strip())
    except (ValueError, BackendError) as exc:
        text = str(exc)
        raise ValueError(text if text.startswith(spec) else f"{spec}: {text}") from None


def _value(kind, text: str):
    if kind is bool:
        if text.lower() not in ("0", "1", "true", "false"):
            raise ValueError
        return text.lower() in ("1", "true")
    return kind(text)


def inform_move(agents, pit: int) -> None:
    """Tell the agents that keep their own game (OpenSpiel bots, :mod:`jitsearch.arena.openspiel_agents`)
    that ``pit`` was played."""
    seen = set()
    for agent in agents:
        if hasattr(agent, "observe") and id(agent) not in seen:
            seen.add(id(agent))
            agent.observe(pit)


def play_game(state, agents, *, max_plies: int | None = None, on_move=None) -> dict:
    """Play ``state`` (a state of any game) to the end, or ``max_plies`` moves (1..MAX_PLIES; None: no cap);
    returns :func:`game_result`. ``agents``: two callables state -> move (player 0's first); ``on_move(before,
    move, after, agent)`` is called after each move when given. Agents that keep their own game hear every move
    (``observe``); OpenSpiel's Oware bots are shown the position first (``begin``)."""
    if not all(callable(getattr(state, name, None)) for name in ("play", "legal_moves", "to_text")):
        raise ValueError(f"state must be a game state such as a KalahState (play, legal_moves, to_text), got "
                         f"{type(state).__name__}")
    if not isinstance(agents, (list, tuple)) or len(agents) != 2 or not all(callable(a) for a in agents):
        raise ValueError("agents must be two callables (player 0's first), such as parse_agent(...) results")
    if max_plies is not None:
        max_plies = check_int("max_plies", max_plies, 1, MAX_PLIES)
    if on_move is not None and not callable(on_move):
        raise ValueError(f"on_move must be a callable or None, got {type(on_move).__name__}")
    for x in {id(x): x for x in agents if hasattr(x, "begin")}.values():
        x.begin(state)
    moves = []
    while not state.is_over and (max_plies is None or len(moves) < max_plies):
        agent = agents[state.player]
        move = agent(state)
        if move not in state.legal_moves():
            raise RuntimeError(f"agent {agent} chose an illegal move {move} in {state.to_text()}")
        before = state
        state = state.play(move)
        moves.append(int(move))
        inform_move(agents, move)
        if on_move:
            on_move(before, move, state, agent)
    return game_result(moves, state)


def game_result(moves, final) -> dict:
    """:func:`play_game`'s result for ``moves`` that reached ``final``: ``moves``, ``margin`` (player 0's),
    ``result`` (``p0``, ``p1``, ``draw``; None if unfinished), ``plies``, ``final`` (its text), ``finished``, and
    ``final_board`` where the state has a board (Kalah, Oware)."""
    out = {"moves": list(moves), "margin": int(final.margin), "result": final.result, "plies": len(moves),
           "final": final.to_text(), "finished": final.is_over}
    if hasattr(final, "board"):
        out["final_board"] = [int(x) for x in final.board]
    return out

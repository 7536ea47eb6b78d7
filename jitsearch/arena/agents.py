"""Kalah agents: one interface, state -> move (a pit index of the board layout).

Specs (command line and API): ``random``, ``alphabeta:depth=8``,
``alphabeta:time=1.5`` (the engine of :mod:`jitsearch.games.kalah.engine`:
PVS, a table kept for the game, endgame-database probes, a fitted
evaluation; options ``threads=`` (Lazy SMP), ``db=`` (database seeds, 0:
none; default :func:`~jitsearch.games.kalah.engine_db.default_db_seeds`),
``tt=`` (table MiB; exact mode's solver table takes half as much again),
``eval=fitted|store``, ``exact=0|1`` (exact mode, on by default: once the
endgame is within the solver's reach the engine proves the game and plays
the proven-best move, see the engine's docstring), ``exact_share=`` (share
of the move's time a proof may take, default 0.5), ``book=0|1`` (the shipped
opening book of exact move values, on by default); an engine option without
``time=`` gives a fixed-depth engine search, ``depth=5`` unless given;
``plain=1``: the plain textbook iterative deepening that shipped
before the engine),
``openspiel:mcts,simulations=1000`` and the other OpenSpiel bots of
:mod:`jitsearch.arena.openspiel_agents` (with the ``openspiel`` extra),
``alphabeta:depth=6,eval=heuristic``, ``fsss:depth=5,eval=heuristic``,
``mtdf`` (exact: solves the position, small boards only; ``time=`` caps it
and falls back to the deepest alpha-beta iteration), ``perfect`` (solves
every position it moves in, no limit: perfect play, for boards that solve
in seconds; a position with more seeds in its houses than
:func:`perfect_seed_limit` allows is refused in one line), ``human`` (the CLI
asks), ``cmd:PROGRAM ARGS...`` (an external engine speaking the line protocol,
:mod:`jitsearch.arena.external_engine`). ``eval`` is ``store`` (store difference, the default) or
``heuristic`` (Siljander's weighted H1..H5, "Heuristic Monte-Carlo Tree Search for Mancala").

Monte Carlo agents (:mod:`jitsearch.mcts.search`): ``mcts:iterations=100``
or ``mcts:time=1`` with ``c=`` (default sqrt 2), ``formula=ucb1|sqrt|sqrtlog``,
``pb=`` (progressive bias weight), ``reward=win|heuristic``,
``playout_depth=`` (cut playouts, score by the heuristic), ``eval=store|heuristic``
(score each leaf by ``eval_plies=`` random plies, default 4, then the squashed
store difference or the heuristic), ``imm=`` (implicit minimax backups of the
evaluation, weight 0..1; 0 = off), ``solver=1``
(MCTS-Solver; 0, 1, true or false), ``playouts=`` (per leaf), ``final=visits|value``,
``workers=`` (root parallelism), ``backend=cpu|cuda|auto`` with ``batch=``
(leaves per launch, chosen with virtual loss); ``hmcts:...`` is ``mcts`` with
``reward=heuristic`` (Siljander's HMCTS); ``mc:playouts=1000`` (or
``time=``) is pure Monte Carlo. Their random streams come from the agent's
seed and the number of moves it has made, so a game replays exactly.

Each option may be given once; values are checked against the same limits
as the API (:mod:`jitsearch.mcts.search`: iterations, playouts, workers,
batch, time), and an option that does not apply to the agent is refused.

Ctrl-C: called from the main thread, an agent runs its search on a helper
thread (:func:`run_search`; every kernel it calls is ``nogil``) and waits
for it in short slices, so a Ctrl-C raises ``KeyboardInterrupt`` within a
fraction of a second even in the middle of a long kernel; the interrupted
search is told to stop and ends soon after on its daemon thread. A search
that reports it was interrupted raises ``KeyboardInterrupt`` too, never
plays on. Called from any other thread (a Dask worker, a thread of the
caller's), the search runs in that thread, with no hand-off.

Stopping (:meth:`Agent.choose` with ``stop``, a ``threading.Event``, what a
server's worker calls; also the Ctrl-C path above): every searching kind
ends within about a second of ``stop`` being set and raises
``KeyboardInterrupt``. Fixed-depth alpha-beta and FSSS kernels read a stop
flag every 1,024 nodes (:mod:`jitsearch.stop`), the engine every
time it looks at its clock, MCTS between chunks of a few hundredths of a
second, ``mc`` between rounds (a round is at most 2**20 playouts, about 0.6
s), ``perfect`` and ``mtdf`` between the solver's iterations.
"""

from __future__ import annotations

import copy
import random
import threading
from dataclasses import dataclass, field

import sys

from .._checks import check_bool, check_choice, check_float, check_int
from ..games.kalah import KalahState
from ..games.kalah.alphabeta import iterative_deepening, search
from ..games.kalah.fsss import fsss_search
from ..games.kalah.solver import solve_exact
from ..stop import check_stop, raise_if_stopped
from .search_thread import run_search

KINDS = ("random", "human", "alphabeta", "fsss", "mtdf", "perfect", "mcts", "hmcts", "mc")
#: Value type of each MCTS option in a spec (``bool``: 0, 1, true or false).
MCTS_OPTIONS = {"iterations": int, "time": float, "c": float, "formula": str, "pb": float, "reward": str,
                "playout_depth": int, "eval": str, "eval_plies": int, "imm": float, "solver": bool, "playouts": int,
                "final": str, "workers": int, "backend": str, "batch": int, "virtual_loss": float, "trees": int,
                "leaves": int, "parallel": str, "blocks": int}
#: Options of each agent kind and their value types.
#: The engine's options of an ``alphabeta`` agent (kept in ``Agent.options``).
ENGINE_OPTIONS = {"threads": int, "db": int, "tt": int, "plain": bool, "exact": bool, "exact_share": float,
                  "book": bool}
#: The engine options that make an ``alphabeta`` agent the engine (without ``time=``: a fixed-depth engine search).
_ENGINE_ONLY = ("threads", "db", "tt", "exact", "exact_share", "book")
AGENT_OPTIONS = {"random": {}, "human": {}, "alphabeta": {"depth": int, "time": float, "eval": str, **ENGINE_OPTIONS},
                 "fsss": {"depth": int, "eval": str}, "mtdf": {"time": float}, "perfect": {},
                 "mcts": MCTS_OPTIONS, "hmcts": {k: v for k, v in MCTS_OPTIONS.items() if k != "reward"},
                 "mc": {"playouts": int, "time": float}}
EVALS = ("store", "heuristic", "fitted")
#: Most Lazy SMP threads an engine may ask for.
MAX_THREADS = 256
#: Largest engine table, in MiB (``tt=``).
MAX_TABLE_MB = 65_536
#: The kinds that search (on the search thread when called from the main thread: :func:`run_search`).
_SEARCHING = ("alphabeta", "fsss", "perfect", "mtdf", "mcts", "hmcts", "mc")
#: Deepest alpha-beta / FSSS search an agent may ask for, in plies.
MAX_DEPTH = 64
#: Longest time limit of an agent's move, in seconds (one day).
MAX_MOVE_TIME = 86_400.0
#: Longest agent spec, in characters.
MAX_SPEC = 1000
#: What an exact agent's memory refusal says to change (play and tournament have no memory options).
_AGENT_MEMORY_HINT = "play on a smaller board (fewer houses or seeds) or use a depth-limited agent"
#: Most plies :func:`play_game` may be asked to play.
MAX_PLIES = 1_000_000


#: Most seeds in the houses (both sides) of a position the ``perfect`` agent agrees to solve, by houses per
#: side (none up to 2 houses; 28 from 7 houses on). The first position of a game is the hardest it solves; the
#: start of each largest board allowed solves in 0.5-5 s on one core of a loaded machine (Kalah(3,12) 2.0 s,
#: (4,6) 4.5 s, (5,4) 4.5-5 s, (6,3) 2.2 s, (7,2) 2.7 s, (8,2) 1.5 s), while Kalah(6,4) (48 seeds) or
#: (7,3) (42) is not solved in a minute.
PERFECT_MAX_SEEDS = {3: 72, 4: 48, 5: 40, 6: 36}
PERFECT_MAX_SEEDS_WIDE = 28


def perfect_seed_limit(houses: int) -> int | None:
    """Most seeds in the houses the ``perfect`` agent solves on a board of ``houses`` per side (None: any)."""
    if houses <= 2:
        return None
    return PERFECT_MAX_SEEDS.get(houses, PERFECT_MAX_SEEDS_WIDE)




def _seeds_in_houses(state: KalahState) -> int:
    m = state.houses
    return int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])


def check_perfect_board(state: KalahState) -> None:
    """Refuse (``ValueError``, one line) a position the ``perfect`` agent
    cannot solve in seconds (:func:`perfect_seed_limit`)."""
    limit = perfect_seed_limit(state.houses)
    seeds = _seeds_in_houses(state)
    if limit is not None and seeds > limit:
        raise ValueError(f"the perfect agent solves every position it moves in: with {state.houses} houses a "
                         f"side it takes at most {limit} seeds in the houses (seconds a solve), not {seeds} "
                         f"(Kalah(6,4) would take hours); use mtdf:time=SECONDS or alphabeta:time=SECONDS")


@dataclass
class Agent:
    """A move chooser. ``last`` holds the search info of the last move."""

    kind: str
    depth: int | None = None
    time: float | None = None
    eval: str | None = None
    seed: int | None = None
    last: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        self._config = None  # the MCTS options, validated once (mcts and hmcts agents)
        self._engine = None  # the alpha-beta engine of this agent's game (made at its first move)
        self._check()
        self._rng = random.Random(self.seed)
        self._moves_made = 0

    def with_seed(self, seed: int | None) -> "Agent":
        """A fresh agent of this spec (already parsed and checked: nothing
        is parsed or validated again) with its own ``seed`` and its own
        state: what a tournament makes for each game."""
        twin = copy.copy(self)
        twin.seed = None if seed is None else check_int("seed", seed)
        twin.last = {}
        twin.options = dict(self.options)
        twin._rng = random.Random(twin.seed)
        twin._moves_made = 0
        twin._engine = None
        return twin

    def _check(self):
        """Validate the fields (what :func:`parse_agent` checks, for direct construction too)."""
        self.kind = check_choice("agent kind", self.kind, KINDS)
        allowed = AGENT_OPTIONS[self.kind]
        monte_carlo = self.kind in ("mcts", "hmcts", "mc")
        if self.depth is not None:
            if "depth" not in allowed:
                raise ValueError(f"depth does not apply to a {self.kind} agent")
            self.depth = check_int("depth", self.depth, 1, MAX_DEPTH)
        if self.time is not None:
            if "time" not in allowed:
                raise ValueError(f"time does not apply to a {self.kind} agent")
            self.time = check_float("time", self.time, 0.0, MAX_MOVE_TIME, lo_open=True)
        if self.eval is not None and self.kind not in ("alphabeta", "fsss"):  # (mcts: eval= is in its options)
            raise ValueError(f"eval does not apply to a {self.kind} agent")
        if self.kind == "alphabeta":
            self._check_engine()
        self.eval = check_choice("eval", self.eval or "store", EVALS)
        if self.eval == "fitted" and not self.engine:
            raise ValueError("eval=fitted is the engine's evaluation: give time= (or threads=, db=, tt=) "
                             "without plain=1")
        if self.seed is not None:  # any integer: it is hashed before use
            self.seed = check_int("seed", self.seed)
        if not isinstance(self.options, dict):
            raise ValueError(f"options must be a dict, got {type(self.options).__name__}")
        if self.options and not monte_carlo and self.kind != "alphabeta":
            raise ValueError(f"a {self.kind} agent takes no options, got {sorted(self.options)}")
        if not monte_carlo:
            return
        unknown = sorted(set(self.options) - set(AGENT_OPTIONS[self.kind]) - ({"reward"} if self.kind == "hmcts"
                                                                             else set()))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for {self.kind}; known: {sorted(allowed)}")
        if self.time is not None and self.options.get("time") != self.time:
            raise ValueError(f"a {self.kind} agent's time goes in its options (time=)")
        if self.kind != "mc" and "iterations" in self.options and "time" in self.options:
            raise ValueError(f"give iterations= or time=, not both: an {self.kind} agent searches a fixed number "
                             f"of iterations or for a time")
        if self.kind == "mc":
            from ..mcts.config import MAX_TIME
            from ..kernels.playouts import MAX_PLAYOUTS_PER_STATE

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
        """True for an ``alphabeta`` agent that runs the engine (:mod:`jitsearch.games.kalah.engine`): a
        time limit or an engine option, and not ``plain=1``."""
        o = self.options
        return self.kind == "alphabeta" and not o.get("plain", False) and (
            self.time is not None or any(k in o for k in _ENGINE_ONLY))

    def _check_engine(self) -> None:
        if not isinstance(self.options, dict):
            raise ValueError(f"options must be a dict, got {type(self.options).__name__}")
        o = self.options
        unknown = sorted(set(o) - set(ENGINE_OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for alphabeta; known: depth, time, eval, "
                             f"{', '.join(ENGINE_OPTIONS)}")
        if "plain" in o:
            o["plain"] = check_bool("plain", o["plain"])
            if o["plain"] and any(k in o for k in _ENGINE_ONLY):
                raise ValueError("threads=, db=, tt=, exact=, exact_share= and book= are the engine's: drop them or "
                                 "plain=1")
        if "threads" in o:
            o["threads"] = check_int("threads", o["threads"], 1, MAX_THREADS)
        if "db" in o:
            o["db"] = check_int("db", o["db"], 0, 127)
        if "tt" in o:
            o["tt"] = check_int("tt (MiB)", o["tt"], 1, MAX_TABLE_MB)
        if "exact" in o:
            o["exact"] = check_bool("exact", o["exact"])
        if "book" in o:
            o["book"] = check_bool("book", o["book"])
        if "exact_share" in o:
            o["exact_share"] = check_float("exact_share", o["exact_share"], 0.0, 1.0, lo_open=True)
            if not o.get("exact", True):
                raise ValueError("exact_share= is exact mode's share of the move's time: drop it or exact=0")
        if self.engine:
            if self.eval == "heuristic":
                raise ValueError("the engine evaluates with eval=fitted (default) or eval=store; Siljander's "
                                 "heuristic is the plain search's: add plain=1")
            self.eval = self.eval or "fitted"

    def engine_db_seeds(self, state: KalahState) -> int:
        """The endgame database (seeds in the houses) this engine agent probes on ``state``'s board."""
        from ..games.kalah.engine_db import default_db_seeds

        db = self.options.get("db")
        return default_db_seeds(state.houses, state.seeds_total) if db is None else db

    def prepare(self, state: KalahState, notice=None) -> None:
        """Load (or build, once, into the cache) what this agent needs before its first move in games like
        ``state``: the engine's endgame database. ``notice(text)`` is told before a build."""
        if not self.engine:
            return
        from ..games.kalah.engine_db import database_cached, load_probe

        seeds = self.engine_db_seeds(state)
        if seeds and notice is not None and not database_cached(state.houses, seeds, state.empty_capture):
            notice(f"building the Kalah({state.houses}) endgame database of {seeds} seeds for {self} "
                   f"(first use only: it is cached)")
        probe = load_probe(state.houses, seeds, state.empty_capture)
        if self.options.get("exact", True) and self.time is not None:
            from ..games.kalah.engine_db import warm_solver

            warm_solver(state.houses, probe, state.empty_capture)

    def next_search_seed(self) -> int:
        """The seed of this agent's next Monte Carlo search: a function of
        its own seed and the moves it has made, so a game replays exactly
        (and a lockstep tournament gets the same searches)."""
        from ..rng import mix64_py

        seed = mix64_py((self.seed or 0) * 1_000_003 + self._moves_made)
        self._moves_made += 1
        return seed

    @property
    def lockstep(self) -> bool:
        """True for a multi-tree MCTS agent with an iteration budget: its
        searches of many games can share one kernel launch with identical
        results (:func:`jitsearch.arena.kalah_tournament.play_lockstep`)."""
        o = self.options
        return (self.kind in ("mcts", "hmcts") and o.get("backend") is not None and o.get("batch") is None
                and o.get("time") is None)

    def check_match(self, houses: int, seeds: int, empty_capture: bool, suite=(), position=None) -> None:
        """Refuse (``ValueError``, one line), before the first game, a board this
        agent cannot play: ``perfect`` on a board it cannot solve in a few
        seconds (:func:`check_perfect_board`, from ``position`` or each
        opening of ``suite`` when given, else the start of Kalah(houses,
        seeds)). The other kinds play every board."""
        if self.engine:
            self.prepare(position if position is not None else
                         KalahState.initial(houses, seeds, empty_capture=empty_capture), notice=_stderr_notice)
            return
        if self.kind != "perfect":
            return
        starts = [position] if position is not None else [
            KalahState.from_text(text, empty_capture=empty_capture) for text in suite] or [
            KalahState.initial(houses, seeds, empty_capture=empty_capture)]
        for start in starts:
            if not start.is_over:
                check_perfect_board(start)

    def __call__(self, state: KalahState) -> int:
        if not isinstance(state, KalahState):
            raise ValueError(f"an agent plays a KalahState, got {type(state).__name__}")
        if state.is_over:
            raise ValueError("the game is over")
        if self.kind == "random":
            self.last = {}
            return self._rng.choice(state.legal_moves())
        if self.kind not in _SEARCHING:
            raise ValueError(f"agent {self.kind!r} cannot choose moves by itself")
        return run_search(self._search, state)

    def choose(self, state: KalahState, stop: threading.Event | None = None) -> int:
        """The move in ``state``, searched in the calling thread (no hand-off, whatever the thread);
        ``stop`` set from another thread ends the search of every kind within about a second (module
        docstring) and raises ``KeyboardInterrupt``: a stopped search never gives a move. What a server's
        worker thread calls."""
        if not isinstance(state, KalahState):
            raise ValueError(f"an agent plays a KalahState, got {type(state).__name__}")
        if state.is_over:
            raise ValueError("the game is over")
        if self.kind == "random":
            return self(state)
        if self.kind not in _SEARCHING:
            raise ValueError(f"agent {self.kind!r} cannot choose moves by itself")
        check_stop(stop)
        return self._search(stop, state)

    @property
    def warms(self) -> bool:
        """Whether :meth:`warm` compiles anything (MCTS, Monte Carlo, fixed-depth alpha-beta, FSSS)."""
        return self.kind in ("mcts", "hmcts", "mc", "fsss") or (self.kind == "alphabeta" and not self.engine)

    def warm(self, state: KalahState) -> None:
        """Compile (or load from the cache) the kernels this agent's searches
        use, with the smallest budget of the same search on ``state``; its
        games are untouched (no move counted, no seed drawn, no table kept).
        The engine, exact solvers and ``cmd:`` engines compile on their own
        first move (the engine's database is built by :meth:`prepare`)."""
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
        elif self.kind == "alphabeta" and not self.engine:
            search(state, 1, eval=self.eval)
        elif self.kind == "fsss":
            fsss_search(state, 1, eval=self.eval)

    def _search(self, stop, state: KalahState) -> int:
        """The move of a searching agent (:func:`run_search` calls it, on the
        search thread when the caller is the main thread); ``KeyboardInterrupt``
        once ``stop`` is set, whatever the search had found."""
        move = self._search_move(stop, state)
        raise_if_stopped(stop)
        return move

    def _search_move(self, stop, state: KalahState) -> int:
        if self.engine:
            self.last = self._engine_move(stop, state)
            return self.last["move"]
        if self.kind == "alphabeta":
            if self.time is not None:
                r = iterative_deepening(state, time_limit=self.time, eval=self.eval,
                                        max_depth=self.depth or 64, stop=stop)
            else:
                r = search(state, self.depth, eval=self.eval, stop=stop)
            self.last = r
            return r["move"]
        if self.kind == "fsss":
            self.last = fsss_search(state, self.depth, eval=self.eval, stop=stop)
            return self.last["move"]
        if self.kind == "perfect":  # solve the position exactly, play its best move
            check_perfect_board(state)
            r = solve_exact(state, memory_hint=_AGENT_MEMORY_HINT, stop=stop)
            self.last = r
            if r["interrupted"]:
                raise KeyboardInterrupt
            if not r["complete"]:
                raise ValueError(f"the perfect agent could not solve {state.to_text()} "
                                 f"({r['stop_reason'] or 'unfinished'}): use mtdf:time=SECONDS or alphabeta instead")
            return r["best_move"]
        if self.kind == "mtdf":
            r = solve_exact(state, time_limit=self.time, memory_hint=_AGENT_MEMORY_HINT, stop=stop)
            self.last = r
            if r["interrupted"]:
                raise KeyboardInterrupt
            if r["complete"] and r["best_move"] >= 0:
                return r["best_move"]
            return iterative_deepening(state, time_limit=self.time or 1.0, stop=stop)["move"]
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

    def game_engine(self, state: KalahState):
        """The engine of this agent's game on ``state``'s board (made, its table allocated, at the first call:
        a fresh agent's first move makes it, or :mod:`jitsearch.arena.engine_protocol` before the first
        ``go``); None for an agent that is not an engine."""
        if not self.engine:
            return None
        from ..games.kalah.engine import EXACT_SHARE, KalahEngine
        from ..games.kalah.engine_db import load_probe

        engine = self._engine
        if engine is None or engine.houses != state.houses:
            o = self.options
            probe = load_probe(state.houses, self.engine_db_seeds(state), state.empty_capture)
            engine = self._engine = KalahEngine(state.houses, eval=self.eval, probe=probe,
                                                table_mb=o.get("tt", 64), threads=o.get("threads", 1),
                                                exact=o.get("exact", True),
                                                exact_share=o.get("exact_share", EXACT_SHARE),
                                                book=o.get("book", True))
        return engine

    def _engine_move(self, stop, state: KalahState) -> dict:
        engine = self.game_engine(state)
        r = engine.search(state, time_limit=self.time, depth=self.depth, stop_event=stop)
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt
        return r

    def __str__(self) -> str:
        opts = []
        if self.depth is not None:
            opts.append(f"depth={self.depth}")
        if self.time is not None:
            opts.append(f"time={self.time:g}")
        if self.eval != ("fitted" if self.engine else "store"):
            opts.append(f"eval={self.eval}")
        opts += [f"{k}={v}" for k, v in self.options.items()
                 if not (self.kind == "hmcts" and k == "reward") and not (k == "time" and self.time is not None)]
        return self.kind + (":" + ",".join(opts) if opts else "")


def _stderr_notice(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def agent_kind(spec: str) -> str:
    """The kind a spec names (its text before ``:``), without checking the rest."""
    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'alphabeta:depth=6', got {type(spec).__name__}")
    return spec.strip().partition(":")[0].strip()


def parse_agent(spec: str, *, game="kalah", seed: int | None = None):
    """The agent of ``spec`` for ``game`` (a registered name or a :class:`~jitsearch.games.protocol.Game`).

    Every agent has ``agent(state) -> move`` (searched on the search thread from the main thread:
    Ctrl-C safe), ``agent.choose(state, stop=None) -> move`` (the calling thread; ``stop`` a
    ``threading.Event``), ``agent.last`` (the last search's info) and ``agent.with_seed(seed)``;
    agents that keep a game of their own add ``start(opening_moves)``, ``observe(move)`` and
    ``close()``. ``cmd:PROGRAM ARGS...`` is an external engine, ``openspiel:BOT,...`` an OpenSpiel
    bot; Kalah's kinds are :class:`Agent`'s (module docstring), every other game's are
    :mod:`jitsearch.arena.game_agents`' (``random``, ``mc``, ``mcts`` and the game's engines).
    """
    from ..games import get as get_game

    if not isinstance(spec, str):
        raise ValueError(f"an agent spec is a string such as 'alphabeta:depth=6', got {type(spec).__name__}")
    if len(spec) > MAX_SPEC:
        raise ValueError(f"an agent spec has at most {MAX_SPEC} characters, got {len(spec)}")
    game = get_game(game)
    kind = agent_kind(spec)
    rest = spec.strip().partition(":")[2]
    if game.State is KalahState:  # Kalah's agents: its engines are still arena code (the Agent class)
        return _parse_kalah_agent(spec, kind, rest, seed)
    if not spec.strip():
        raise ValueError(f"an agent spec is a string such as alphabeta:depth=6, got {spec!r}")
    if kind == "openspiel":
        from .openspiel_agents import parse_openspiel_spec

        return parse_openspiel_spec(spec.strip(), rest, random.randrange(1 << 31) if seed is None
                                    else check_int("seed", seed, 0), game=game.name)
    if kind == "cmd":  # an external engine speaking the line protocol (every game)
        from .external_engine import ExternalAgent

        return ExternalAgent(spec, seed=seed, game=game.name)
    from .game_agents import parse_game_agent

    return parse_game_agent(game, spec, rest, seed)


def _parse_kalah_agent(spec: str, kind: str, rest: str, seed: int | None) -> Agent:
    """Kalah's :class:`Agent` from its spec.

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

        return parse_openspiel_spec(spec, rest, seed)
    if kind == "cmd":  # an external engine (the line protocol): cmd:PROGRAM ARGS...
        from .external_engine import ExternalAgent

        return ExternalAgent(spec, seed=seed)
    if kind not in KINDS:
        raise ValueError(f"unknown agent {kind!r} in agent spec {spec!r}; choose one of: {', '.join(KINDS)}")
    allowed = AGENT_OPTIONS[kind]
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
            return Agent(kind, None, fields.get("time"), None, seed, options=fields)
        depth = fields.get("depth")
        limit = fields.get("time")
        if kind in ("alphabeta", "fsss") and depth is None and limit is None:
            depth = 5
        engine = {k: fields[k] for k in ENGINE_OPTIONS if k in fields}
        return Agent(kind, depth, limit, fields.get("eval"), seed, options=engine)
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


def inform_move(agents, pit: int) -> None:
    """Tell the agents that keep their own game (OpenSpiel bots, :mod:`jitsearch.arena.openspiel_agents`)
    that ``pit`` was played."""
    seen = set()
    for agent in agents:
        if hasattr(agent, "observe") and id(agent) not in seen:
            seen.add(id(agent))
            agent.observe(pit)


def start_agents(agents, opening_moves) -> None:
    """A new game for the agents that keep their own game: the start position plus ``opening_moves``."""
    seen = set()
    for agent in agents:
        if hasattr(agent, "start") and id(agent) not in seen:
            seen.add(id(agent))
            agent.start(list(opening_moves))


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

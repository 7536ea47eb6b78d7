"""Kalah's own agent kinds (:attr:`jitsearch.games.protocol.Game.engines`): ``alphabeta``, ``fsss``,
``mtdf`` and ``perfect`` (their specs: :mod:`jitsearch.arena.agents`).

``alphabeta:depth=D`` is the plain fixed-depth search of :mod:`.alphabeta` (``time=``: its
iterative deepening); with ``time=`` or an engine option (``threads=``, ``db=``, ``tt=``,
``exact=``, ``exact_share=``, ``book=``) and without ``plain=1`` it is the engine of
:mod:`.engine`. ``fsss`` is :mod:`.fsss` to a fixed depth; ``mtdf`` the exact solver
(``time=`` caps it, then the deepest alpha-beta iteration plays); ``perfect`` solves every
position it moves in. ``eval`` is ``store``, ``heuristic`` (Siljander's H1..H5) or ``fitted``
(the engine's). Every kind is deterministic: the seed is not used.
"""

from __future__ import annotations

import sys

from ..._checks import check_bool, check_choice, check_float, check_int
from ...stop import raise_if_stopped
from ..protocol import Engine
from .alphabeta import iterative_deepening, search
from .fsss import fsss_search
from .solver import solve_exact
from .state import KalahState

#: The engine's options of an ``alphabeta`` agent.
ENGINE_OPTIONS = {"threads": int, "db": int, "tt": int, "plain": bool, "exact": bool, "exact_share": float,
                  "book": bool}
#: The engine options that make an ``alphabeta`` agent the engine (without ``time=``: a fixed-depth engine search).
ENGINE_ONLY = ("threads", "db", "tt", "exact", "exact_share", "book")
#: Options of each kind and their value types.
OPTIONS = {"alphabeta": {"depth": int, "time": float, "eval": str, **ENGINE_OPTIONS},
           "fsss": {"depth": int, "eval": str}, "mtdf": {"time": float}, "perfect": {}}
EVALS = ("store", "heuristic", "fitted")
#: Most Lazy SMP threads an engine may ask for.
MAX_THREADS = 256
#: Largest engine table, in MiB (``tt=``).
MAX_TABLE_MB = 65_536
#: Deepest alpha-beta / FSSS search an agent may ask for, in plies.
MAX_DEPTH = 64
#: Longest time limit of an agent's move, in seconds (one day).
MAX_MOVE_TIME = 86_400.0
#: Depth of ``alphabeta`` and ``fsss`` given neither ``depth=`` nor ``time=``.
DEFAULT_DEPTH = 5
#: What an exact agent's memory refusal says to change (play and tournament have no memory options).
MEMORY_HINT = "play on a smaller board (fewer houses or seeds) or use a depth-limited agent"

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


def check_perfect_board(state: KalahState) -> None:
    """Refuse (``ValueError``, one line) a position the ``perfect`` agent
    cannot solve in seconds (:func:`perfect_seed_limit`)."""
    limit = perfect_seed_limit(state.houses)
    m = state.houses
    seeds = int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])
    if limit is not None and seeds > limit:
        raise ValueError(f"the perfect agent solves every position it moves in: with {state.houses} houses a "
                         f"side it takes at most {limit} seeds in the houses (seconds a solve), not {seeds} "
                         f"(Kalah(6,4) would take hours); use mtdf:time=SECONDS or alphabeta:time=SECONDS")


def _stderr_notice(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class KalahSearch:
    """One Kalah engine kind with its options checked: ``search(state, seed, stop) -> dict`` (the
    move as ``"move"``); ``depth``, ``time``, ``eval`` and the engine's ``options`` as resolved."""

    def __init__(self, kind: str, options: dict):
        o = dict(options)
        allowed = OPTIONS[kind]
        self.kind = kind
        depth, limit, ev = o.pop("depth", None), o.pop("time", None), o.pop("eval", None)
        if depth is not None:
            if "depth" not in allowed:
                raise ValueError(f"depth does not apply to a {kind} agent")
            depth = check_int("depth", depth, 1, MAX_DEPTH)
        if limit is not None:
            if "time" not in allowed:
                raise ValueError(f"time does not apply to a {kind} agent")
            limit = check_float("time", limit, 0.0, MAX_MOVE_TIME, lo_open=True)
        if ev is not None and kind not in ("alphabeta", "fsss"):
            raise ValueError(f"eval does not apply to a {kind} agent")
        if kind in ("alphabeta", "fsss") and depth is None and limit is None:
            depth = DEFAULT_DEPTH
        self.depth, self.time, self.eval, self.options = depth, limit, ev, o
        self._engine = None  # the engine of this agent's board (made at its first move)
        if kind == "alphabeta":
            self._check_engine()
        elif o:
            raise ValueError(f"a {kind} agent takes no options, got {sorted(o)}")
        self.eval = check_choice("eval", self.eval or "store", EVALS)
        if self.eval == "fitted" and not self.engine:
            raise ValueError("eval=fitted is the engine's evaluation: give time= (or threads=, db=, tt=) "
                             "without plain=1")

    @property
    def engine(self) -> bool:
        """True for an ``alphabeta`` agent that runs the engine (:mod:`.engine`): a time limit or an
        engine option, and not ``plain=1``."""
        o = self.options
        return self.kind == "alphabeta" and not o.get("plain", False) and (
            self.time is not None or any(k in o for k in ENGINE_ONLY))

    def _check_engine(self) -> None:
        o = self.options
        unknown = sorted(set(o) - set(ENGINE_OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for alphabeta; known: depth, time, eval, "
                             f"{', '.join(ENGINE_OPTIONS)}")
        if "plain" in o:
            o["plain"] = check_bool("plain", o["plain"])
            if o["plain"] and any(k in o for k in ENGINE_ONLY):
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
        from .engine_db import default_db_seeds

        db = self.options.get("db")
        return default_db_seeds(state.houses, state.seeds_total) if db is None else db

    def prepare(self, state: KalahState, notice=None) -> None:
        """Load (or build, once, into the cache) the engine's endgame database for games like ``state``;
        ``notice(text)`` is told before a build."""
        if not self.engine:
            return
        from .engine_db import database_cached, load_probe, warm_solver

        seeds = self.engine_db_seeds(state)
        if seeds and notice is not None and not database_cached(state.houses, seeds, state.empty_capture):
            notice(f"building the Kalah({state.houses}) endgame database of {seeds} seeds for {self} "
                   f"(first use only: it is cached)")
        probe = load_probe(state.houses, seeds, state.empty_capture)
        if self.options.get("exact", True) and self.time is not None:
            warm_solver(state.houses, probe, state.empty_capture)

    def check_match(self, houses: int, seeds: int, empty_capture: bool, suite=(), position=None) -> None:
        """Refuse (``ValueError``, one line), before the first game, a board this kind cannot play:
        ``perfect`` on a board it cannot solve in seconds; the engine loads its database here."""
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

    @property
    def warms(self) -> bool:
        """Whether :meth:`warm` compiles anything (fixed-depth alpha-beta, FSSS)."""
        return self.kind == "fsss" or (self.kind == "alphabeta" and not self.engine)

    def warm(self, state: KalahState) -> None:
        """Compile the kernels of this search with the smallest search of ``state``."""
        if self.kind == "alphabeta" and not self.engine:
            search(state, 1, eval=self.eval)
        elif self.kind == "fsss":
            fsss_search(state, 1, eval=self.eval)

    def game_engine(self, state: KalahState):
        """The engine on ``state``'s board (made, its table allocated, at the first call); None for a
        kind that is not the engine."""
        if not self.engine:
            return None
        from .engine import EXACT_SHARE, KalahEngine
        from .engine_db import load_probe

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

    @property
    def analyses(self) -> bool:
        """Whether :meth:`value_moves` serves an analysis board (``alphabeta``)."""
        return self.kind == "alphabeta"

    def value_moves(self, state: KalahState, moves, stop=None, report=None) -> dict:
        """Value ``moves`` of ``state`` for an analysis board: the engine searches the position after
        each (``time=`` shared among them, or ``depth=``). Returns move -> ``value`` (seeds, the
        mover's), ``source`` (``exact``: the game ended or exact mode proved it; ``database``: every
        position below is in the endgame database; ``engine``), ``depth``, ``margin`` (player 0's,
        exact values only), ``pv``; the moves not reached once ``stop`` is set are left out.
        ``report(phase, done, total)`` with ``database`` and ``engine``."""
        from .engine import SCALE, KalahEngine
        from .engine_db import load_probe

        report = report or (lambda *_: None)
        probe = None
        if self.engine:
            report("database", 0, 1)  # loaded, or built once into the cache (seconds to a minute) on first use
            probe = load_probe(state.houses, self.engine_db_seeds(state), state.empty_capture)
        engine = KalahEngine(state.houses, eval=self.eval if self.eval in ("fitted", "store") else "fitted",
                             probe=probe, table_mb=self.options.get("tt", 64), threads=self.options.get("threads", 1))
        per_move = None if self.time is None else self.time / len(moves)
        depth = None if self.time is not None else self.depth
        out = {}
        for i, mv in enumerate(moves):
            report("engine", i, len(moves))
            if stop is not None and stop.is_set():
                return out
            child = state.play(mv)
            if child.is_over:
                mine = child.margin if state.player == 0 else -child.margin
                out[mv] = {"value": mine, "margin": child.margin, "source": "exact"}
                continue
            r = engine.search(child, time_limit=per_move, depth=depth, stop_event=stop)
            same = child.player == state.player  # an extra turn: the child's mover is the root's
            value = (r["value"] if same else -r["value"]) / SCALE
            proven = r["exact"] and r.get("proof") is not None  # the engine's exact mode proved it
            row = out[mv] = {"value": value, "source": "exact" if proven else ("database" if r["exact"] else "engine"),
                             "depth": r["depth"], "pv": list(r["pv"])}
            if r["exact"]:
                row["margin"] = int(round(value)) * (1 if state.player == 0 else -1)
        report("engine", len(moves), len(moves))
        return out

    def fresh(self) -> "KalahSearch":
        """This search with no engine made yet (a new game's agent)."""
        import copy

        twin = copy.copy(self)
        twin.options = dict(self.options)
        twin._engine = None
        return twin

    def __call__(self, state: KalahState, seed: int, stop) -> dict:
        r = self._search(state, stop)
        raise_if_stopped(stop)
        return r

    def _search(self, state: KalahState, stop) -> dict:
        if self.engine:
            r = self.game_engine(state).search(state, time_limit=self.time, depth=self.depth, stop_event=stop)
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            return r
        if self.kind == "alphabeta":
            if self.time is not None:
                return iterative_deepening(state, time_limit=self.time, eval=self.eval,
                                           max_depth=self.depth or MAX_DEPTH, stop=stop)
            return search(state, self.depth, eval=self.eval, stop=stop)
        if self.kind == "fsss":
            return fsss_search(state, self.depth, eval=self.eval, stop=stop)
        if self.kind == "perfect":  # solve the position exactly, play its best move
            check_perfect_board(state)
            r = solve_exact(state, memory_hint=MEMORY_HINT, stop=stop)
            if r["interrupted"]:
                raise KeyboardInterrupt
            if not r["complete"]:
                raise ValueError(f"the perfect agent could not solve {state.to_text()} "
                                 f"({r['stop_reason'] or 'unfinished'}): use mtdf:time=SECONDS or alphabeta instead")
            return {**r, "move": r["best_move"]}
        r = solve_exact(state, time_limit=self.time, memory_hint=MEMORY_HINT, stop=stop)  # mtdf
        if r["interrupted"]:
            raise KeyboardInterrupt
        if r["complete"] and r["best_move"] >= 0:
            return {**r, "move": r["best_move"]}
        return {**r, "move": iterative_deepening(state, time_limit=self.time or 1.0, stop=stop)["move"]}

    def __str__(self) -> str:
        opts = []
        if self.depth is not None:
            opts.append(f"depth={self.depth}")
        if self.time is not None:
            opts.append(f"time={self.time:g}")
        if self.eval != ("fitted" if self.engine else "store"):
            opts.append(f"eval={self.eval}")
        opts += [f"{k}={v}" for k, v in self.options.items()]
        return self.kind + (":" + ",".join(opts) if opts else "")


def _engine(kind: str) -> Engine:
    return Engine(OPTIONS[kind], lambda options: KalahSearch(kind, options))


#: Kalah's :attr:`~jitsearch.games.protocol.Game.engines`.
ENGINES = {kind: _engine(kind) for kind in OPTIONS}

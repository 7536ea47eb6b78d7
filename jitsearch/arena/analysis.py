"""Every legal move of one position valued, as an analysis board shows it.

:func:`analyse_position` first solves each move exactly (the game's
:attr:`~jitsearch.games.protocol.Game.move_values` hook with its keywords) within ``solve_time`` seconds; the moves
left unsolved are then valued by the analysis engine, an agent spec
(:mod:`jitsearch.arena.agents`):

* an engine kind of the game whose search values moves (``value_moves``, Kalah's
  ``alphabeta:...``: the engine searches the position after each unsolved move, ``time=``
  shared among them, or ``depth=``); a value is in the game's units for the player to move,
  and ``source`` is ``"database"`` when every position after that move is in the engine's
  endgame database, ``"exact"`` when the engine proved it (either way it is then the exact
  final margin).
* ``mcts:...`` / ``hmcts:...``: one search of the position; a move's
  ``share`` is its fraction of the root visits and ``value`` the mover's mean
  reward (win 1, draw 1/2, loss 0).

A value with ``source == "exact"`` is the final margin (mover's view) under
perfect play; every other source says the number is an estimate. ``margin`` is player
0's view of an exact value.
"""

from __future__ import annotations

import inspect
import threading
import time

from .._checks import check_float, check_int
from ..games import DEFAULT_GAME, get as get_game
from .agents import agent_kind, agent_kinds, parse_agent

#: Monte Carlo kinds that can analyse (see the module docstring); engine kinds can when their search values moves.
MCTS_KINDS = ("mcts", "hmcts")
#: Longest exact-solve budget, in seconds.
MAX_SOLVE_TIME = 3600.0
#: Table and database ceiling of the exact phase.
DEFAULT_SOLVE_BYTES = 512 * 1024**2


def check_analysis_engine(spec: str, game=DEFAULT_GAME):
    """The agent of ``spec`` for ``game``, refused in one line unless it can analyse (an engine whose
    search values moves, or MCTS with a budget)."""
    game = get_game(game)
    kind = agent_kind(spec)
    agent = None
    if kind in agent_kinds(game):  # (an unknown kind gets parse_agent's own message)
        agent = parse_agent(spec, game=game, seed=0)
    able = agent is not None and (agent.kind in MCTS_KINDS or
                                  getattr(getattr(agent, "_engine_search", None), "analyses", False))
    if not able:
        if agent is None:
            parse_agent(spec, game=game, seed=0)
        kinds = [*_analysing_engines(game), *MCTS_KINDS]
        raise ValueError(f"the analysis engine must be one of {', '.join(k + ':...' for k in kinds)}, "
                         f"got {spec!r}")
    if agent.kind in MCTS_KINDS and "time" not in agent.options and "iterations" not in agent.options:
        raise ValueError(f"give the analysis engine a budget: time=SECONDS or iterations=N, got {spec!r}")
    return agent


def check_solve_time(game, solve_time, most: float = MAX_SOLVE_TIME) -> float:
    """``solve_time`` checked for ``game``: seconds in [0, ``most``], above 0 only where the game has timed
    exact move values (a ``time_limit`` keyword of its :attr:`~jitsearch.games.protocol.Game.move_values`);
    None: 2 s where it has them, else 0."""
    timed = game.move_values is not None and "time_limit" in inspect.signature(game.move_values).parameters
    if solve_time is None:
        return min(2.0, most) if timed else 0.0
    solve_time = check_float("solve_time", solve_time, 0.0, most)
    if solve_time > 0 and not timed:
        raise ValueError(f"{game.name} has no timed exact move values: give solve_time=0")
    return solve_time


def _analysing_engines(game) -> list:
    """The engine kinds of ``game`` whose search values moves (made with their default options)."""
    out = []
    for kind, engine in game.engines.items():
        try:
            if getattr(engine.make({}), "analyses", False):
                out.append(kind)
        except ValueError:
            pass
    return out


def _typed_number(game, state, move: int):
    """The number a player types for ``move`` (the inverse of the game's ``parse_move``), None where none."""
    if game.ui is None:
        return None
    for n in range(1, game.max_moves + 1):
        try:
            if game.ui.parse_move(state, str(n)) == move:
                return n
        except ValueError:
            pass
    return None


def analyse_position(state, *, engine: str = "alphabeta:time=1", solve_time: float = 2.0,
                     stop: threading.Event | None = None, progress=None, seed: int = 0,
                     max_bytes: int = DEFAULT_SOLVE_BYTES, game=DEFAULT_GAME) -> dict:
    """Value every legal move of ``state``, a position of ``game`` (see the module docstring).

    ``solve_time``: seconds for the exact solves (0: none). ``stop`` (a
    ``threading.Event``) ends the analysis early: the solve in progress within
    about a second, the engine at once, an MCTS search at its own budget;
    what was found is returned with ``interrupted`` True.
    ``progress(phase, done, total)`` is called as work advances
    (``phase``: ``"exact"``, ``"database"`` (the engine's endgame database
    is loaded, or built once on first use) or ``"engine"``).

    Returns ``position``, ``player``, the variant's options (Kalah's ``empty_capture``),
    ``moves`` (per legal move in order: ``move``, ``house`` (the number a player types for it),
    ``value``, ``source`` (``exact``, ``database``, ``engine`` or ``mcts``),
    ``margin`` (exact only), ``visits`` and ``share`` (mcts only),
    ``depth`` (engine only)), ``best_move``, ``pv`` (a principal variation
    starting with the best move), ``exact`` (every move exact), ``engine``,
    ``solve_seconds``, ``engine_seconds``, ``interrupted``.
    """
    game = get_game(game)
    if not isinstance(state, game.State):
        raise ValueError(f"state must be a {game.State.__name__}, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over: no move to analyse")
    agent = check_analysis_engine(engine, game)
    solve_time = check_solve_time(game, solve_time)
    seed = check_int("seed", seed, 0, 2**64 - 1)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ValueError(f"stop must be a threading.Event or None, got {type(stop).__name__}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable or None, got {type(progress).__name__}")
    report = progress or (lambda *_: None)
    moves = state.legal_moves()
    rows = {mv: {"move": mv, "house": _typed_number(game, state, mv), "value": None, "source": None, "margin": None}
            for mv in moves}
    t0 = time.perf_counter()
    interrupted = False
    known = {}
    if solve_time > 0:
        report("exact", 0, len(moves))
        known = game.move_values(state, time_limit=solve_time, max_bytes=max_bytes, stop=stop,
                                 progress=lambda done, total: report("exact", done, total)) or {}
        for mv, value in known.get("values", {}).items():
            rows[mv].update(value=value, margin=known["margins"][mv], source="exact")
        interrupted = bool(known.get("interrupted")) or (stop is not None and stop.is_set())
    solve_seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    pv_tail: dict = {}
    open_moves = [mv for mv in moves if rows[mv]["source"] is None]
    if open_moves and not interrupted:
        if agent.kind in MCTS_KINDS:
            interrupted = _mcts_values(state, agent, rows, seed, report, stop)
        else:
            for mv, row in agent._engine_search.value_moves(state, open_moves, stop, report).items():
                pv_tail[mv] = row.pop("pv", [])
                rows[mv].update(row)
            interrupted = stop is not None and stop.is_set()
    valued = [rows[mv] for mv in moves if rows[mv]["value"] is not None]
    best = _best(valued)
    pv = []
    if best is not None:
        pv = [best["move"]] + pv_tail.get(best["move"], [])
        if best["source"] == "exact" and "line" in known:
            pv = known["line"](best["move"])
    out_rows = [rows[mv] for mv in moves]
    variant = game.engine_protocol.variant_of(state) if game.engine_protocol is not None else {}
    return {"position": state.to_text(), "player": state.player,
            **variant,
            "moves": out_rows, "best_move": None if best is None else best["move"], "pv": pv,
            "exact": all(r["source"] == "exact" for r in out_rows), "engine": engine.strip(),
            "solve_seconds": solve_seconds, "engine_seconds": time.perf_counter() - t1,
            "interrupted": interrupted}


def _best(valued: list[dict]):
    """The best move by the numbers shown: an exact or database value first when all are in seeds; MCTS by
    visits."""
    if not valued:
        return None
    if any(r["source"] == "mcts" for r in valued):
        exact_win = [r for r in valued if r["source"] == "exact" and r["value"] > 0]
        if exact_win:
            return max(exact_win, key=lambda r: (r["value"], -r["move"]))
        return max(valued, key=lambda r: (r.get("visits") or 0.0, -r["move"]))
    return max(valued, key=lambda r: (r["value"], -r["move"]))


def _mcts_values(state, agent, rows, seed, report, stop=None) -> bool:
    """Visit shares and mean rewards of one MCTS search, for the moves not solved exactly; True when ``stop``
    ended the search early (the tree grown so far is shown)."""
    from ..mcts.config import MCTSConfig
    from ..mcts.search import mcts_search

    report("engine", 0, 1)
    r = mcts_search(state, MCTSConfig.from_options(**agent.options), seed=seed, stop=stop)
    total = sum(ch["visits"] for ch in r["children"]) or 1.0
    for ch in r["children"]:
        row = rows[ch["move"]]
        row.update(visits=ch["visits"], share=ch["visits"] / total)
        if row["source"] is None:
            row.update(value=ch["value"], source="mcts")
    report("engine", 1, 1)
    return bool(r.get("interrupted")) or (stop is not None and stop.is_set())


# -- every game: one MCTS tree and the game's exact move values ------------------------------------

#: Most MCTS iterations one analysis may ask for.
MAX_ANALYSIS_ITERATIONS = 1_000_000


def analyse_moves(game, state, *, iterations: int | None = 2000, time: float | None = None, playouts: int = 8,
                  seed: int = 0, backend: str = "cpu", exact: bool = True, stop: threading.Event | None = None,
                  progress=None) -> dict:
    """Value every legal move of ``state``, a position of ``game`` (a registered name or a Game).

    One MCTS tree (:func:`jitsearch.mcts.game.analyse_game`, ``iterations`` or ``time``): per move
    its ``visits``, ``share`` of the root's visits and ``value``, the mover's mean reward (win 1,
    draw 1/2, loss 0). With ``exact``, where the game's :attr:`~jitsearch.games.protocol.Game.move_values`
    hook answers (it returns None where exact values would take more than about a second), a move's
    ``exact`` is its final margin for the mover under perfect play, in the game's units, and
    ``exact_result`` its sign as ``win``/``draw``/``loss``. ``stop`` (a ``threading.Event``): set it
    to stop; the tree grown so far is returned with ``interrupted``. ``progress(phase)`` with
    ``"exact"`` and ``"mcts"``.

    Returns ``game``, ``position``, ``player``, ``moves`` (per legal move, increasing), ``best_move``
    (the most visited), ``value`` (the root's mean reward), ``iterations``, ``seconds``,
    ``interrupted``, ``backend``, ``playouts``, ``exact`` (whether exact values are given),
    ``exact_best`` (the moves of the highest exact value), ``exact_value`` (that value) and
    ``exact_rule`` (what the exact values assume, None: the game's own rules).
    """
    from ..games import get
    from ..mcts.game import analyse_game

    game = get(game)
    if not isinstance(state, game.State):
        raise ValueError(f"state must be a {game.State.__name__}, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over in this position: no move to analyse")
    if not isinstance(exact, bool):
        raise ValueError(f"exact must be True or False, got {exact!r}")
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ValueError(f"stop must be a threading.Event or None, got {type(stop).__name__}")
    report = progress or (lambda phase: None)
    known = None
    if exact and game.move_values is not None:
        report("exact")
        known = game.move_values(state)
    if stop is not None and stop.is_set():
        raise KeyboardInterrupt
    report("mcts")
    r = analyse_game(game, [state], iterations=iterations, time=time, seed=seed, playouts=playouts,
                     backend=backend, stop=stop)
    pos = r["positions"][0]
    total = sum(ch["visits"] for ch in pos["children"]) or 1  # one leaf an iteration
    values = (known or {}).get("values", {})
    rows = []
    for ch in pos["children"]:
        row = {"move": ch["move"], "visits": ch["visits"], "share": ch["visits"] / total, "value": ch["value"]}
        if ch["move"] in values:
            v = values[ch["move"]]
            row.update(exact=v, exact_result="win" if v > 0 else "draw" if v == 0 else "loss")
        rows.append(row)
    best = max(values.values()) if values else None
    return {"game": game.name, "position": state.to_text(), "player": state.player, "moves": rows,
            "best_move": pos["move"], "value": pos["value"], "iterations": r["iterations"], "seconds": r["seconds"],
            "interrupted": bool(r["interrupted"]), "backend": r["backend"], "playouts": r["playouts"],
            "exact": bool(values), "exact_best": sorted(m for m, v in values.items() if v == best),
            "exact_value": best, "exact_rule": (known or {}).get("rule")}

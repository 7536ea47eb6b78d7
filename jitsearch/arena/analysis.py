"""Every legal move of one Kalah position valued, as an analysis board shows it.

:func:`analyse_position` first solves each move exactly
(:func:`jitsearch.games.kalah.moves.move_values`) within ``solve_time``
seconds; the moves left unsolved are then valued by the analysis engine, an
agent spec (:mod:`jitsearch.arena.agents`):

* ``alphabeta:...``: the engine of :mod:`jitsearch.games.kalah.engine`
  searches the position after each unsolved move (``time=`` shared among
  them, or ``depth=``); a value is in seeds for the player to move, and
  ``source`` is ``"database"`` when every position after that move is in
  the engine's endgame database, ``"exact"`` when the engine's exact mode
  proved it (either way it is then the exact final margin).
* ``mcts:...`` / ``hmcts:...``: one search of the position; a move's
  ``share`` is its fraction of the root visits and ``value`` the mover's mean
  reward (win 1, draw 1/2, loss 0).

A value with ``source == "exact"`` is the final margin (mover's view) under
perfect play; every other source says the number is an estimate. Moves are
pit indices; ``margin`` is player 0's view of an exact value.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from .._checks import check_float, check_int
from ..games.kalah import KalahState
from ..games.kalah.moves import move_values
from .agents import KINDS, agent_kind, parse_agent

#: Agent kinds that can analyse (see the module docstring).
ANALYSIS_KINDS = ("alphabeta", "mcts", "hmcts")
#: Longest exact-solve budget, in seconds.
MAX_SOLVE_TIME = 3600.0
#: Table and database ceiling of the exact phase.
DEFAULT_SOLVE_BYTES = 512 * 1024**2


def check_analysis_engine(spec: str):
    """The agent of ``spec``, refused in one line unless it can analyse (:data:`ANALYSIS_KINDS`)."""
    kind = agent_kind(spec)
    if kind not in ANALYSIS_KINDS and kind in KINDS:  # (an unknown kind gets parse_agent's own message)
        raise ValueError(f"the analysis engine must be one of {', '.join(k + ':...' for k in ANALYSIS_KINDS)}, "
                         f"got {spec!r}")
    agent = parse_agent(spec, seed=0)
    if agent.kind not in ANALYSIS_KINDS:
        raise ValueError(f"the analysis engine must be one of {', '.join(k + ':...' for k in ANALYSIS_KINDS)}, "
                         f"got {spec!r}")
    if agent.kind in ("mcts", "hmcts") and "time" not in agent.options and "iterations" not in agent.options:
        raise ValueError(f"give the analysis engine a budget: time=SECONDS or iterations=N, got {spec!r}")
    return agent


def analyse_position(state: KalahState, *, engine: str = "alphabeta:time=1", solve_time: float = 2.0,
                     stop: threading.Event | None = None, progress=None, seed: int = 0,
                     max_bytes: int = DEFAULT_SOLVE_BYTES) -> dict:
    """Value every legal move of ``state`` (see the module docstring).

    ``solve_time``: seconds for the exact solves (0: none). ``stop`` (a
    ``threading.Event``) ends the analysis early: the solve in progress within
    about a second, the engine at once, an MCTS search at its own budget;
    what was found is returned with ``interrupted`` True.
    ``progress(phase, done, total)`` is called as work advances
    (``phase``: ``"exact"``, ``"database"`` (the engine's endgame database
    is loaded, or built once on first use) or ``"engine"``).

    Returns ``position``, ``player``, ``moves`` (per legal move in house
    order: ``move``, ``house`` (1..m from the mover's left), ``value``,
    ``source`` (``exact``, ``database``, ``engine`` or ``mcts``),
    ``margin`` (exact only), ``visits`` and ``share`` (mcts only),
    ``depth`` (engine only)), ``best_move``, ``pv`` (a principal variation
    starting with the best move), ``exact`` (every move exact), ``engine``,
    ``solve_seconds``, ``engine_seconds``, ``interrupted``.
    """
    if not isinstance(state, KalahState):
        raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over: no move to analyse")
    agent = check_analysis_engine(engine)
    solve_time = check_float("solve_time", solve_time, 0.0, MAX_SOLVE_TIME)
    seed = check_int("seed", seed, 0, 2**64 - 1)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ValueError(f"stop must be a threading.Event or None, got {type(stop).__name__}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable or None, got {type(progress).__name__}")
    report = progress or (lambda *_: None)
    moves = state.legal_moves()
    m = state.houses
    first = 1 if state.player == 0 else m + 2
    rows = {mv: {"move": mv, "house": mv - first + 1, "value": None, "source": None, "margin": None}
            for mv in moves}
    t0 = time.perf_counter()
    interrupted = False
    table = None
    if solve_time > 0:
        report("exact", 0, len(moves))
        table = new_table(state, max_bytes)  # shared by every solve below: the moves' subtrees overlap
        r = move_values(state, time_limit=solve_time, max_bytes=max_bytes, stop=stop, table=table,
                        progress=lambda mv, row, done, total: report("exact", done, total))
        for row in r["moves"]:
            if row["margin"] is not None:
                rows[row["move"]].update(value=row["value"], margin=row["margin"], source="exact")
        interrupted = bool(r["interrupted"]) or (stop is not None and stop.is_set())
    solve_seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    pv_tail: dict = {}
    open_moves = [mv for mv in moves if rows[mv]["source"] is None]
    if open_moves and not interrupted:
        if agent.kind == "alphabeta":
            interrupted = _engine_values(state, agent, open_moves, rows, pv_tail, stop, report)
        else:
            interrupted = _mcts_values(state, agent, rows, seed, report, stop)
    valued = [rows[mv] for mv in moves if rows[mv]["value"] is not None]
    best = _best(valued)
    pv = []
    if best is not None:
        pv = [best["move"]] + pv_tail.get(best["move"], [])
        if best["source"] == "exact":
            pv = _exact_line(state, best["move"], table)
    out_rows = [rows[mv] for mv in moves]
    return {"position": state.to_text(), "player": state.player, "empty_capture": state.empty_capture,
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


def new_table(state: KalahState, max_bytes: int) -> np.ndarray:
    """A transposition table for the exact solves of ``state``'s board (zeros, sized as the solver would)."""
    from ..games.kalah import table_slots_for
    from ..games.kalah.solver import new_solver_table

    return new_solver_table(table_slots_for(state, 0, max_bytes))


def _exact_line(state: KalahState, move: int, table: np.ndarray | None, plies: int = 12) -> list[int]:
    """A few plies of perfect play after ``move``, each solved with the table of the moves' solves (which
    already holds most of what they need), within about a second."""
    from ..games.kalah import solve_exact

    line = [move]
    s = state.play(move)
    deadline = time.perf_counter() + 1.0
    while not s.is_over and len(line) < plies and time.perf_counter() < deadline:
        r = solve_exact(s, time_limit=max(deadline - time.perf_counter(), 0.01), table=table)
        if not r["complete"]:
            break
        line.append(int(r["best_move"]))
        s = s.play(int(r["best_move"]))
    return line


def _engine_values(state, agent, open_moves, rows, pv_tail, stop, report) -> bool:
    """Value ``open_moves`` by the engine (a search of each resulting position); True when stopped."""
    from ..games.kalah.engine import SCALE, KalahEngine
    from ..games.kalah.engine_db import load_probe

    probe = None
    if agent.engine:
        report("database", 0, 1)  # loaded, or built once into the cache (seconds to a minute) on first use
        probe = load_probe(state.houses, agent.engine_db_seeds(state), state.empty_capture)
    engine = KalahEngine(state.houses, eval=agent.eval if agent.eval in ("fitted", "store") else "fitted",
                         probe=probe, table_mb=agent.options.get("tt", 64), threads=agent.options.get("threads", 1))
    per_move = None if agent.time is None else agent.time / len(open_moves)
    depth = None if agent.time is not None else agent.depth
    for i, mv in enumerate(open_moves):
        report("engine", i, len(open_moves))
        if stop is not None and stop.is_set():
            return True
        child = state.play(mv)
        row = rows[mv]
        if child.is_over:
            mine = child.margin if state.player == 0 else -child.margin
            row.update(value=mine, margin=child.margin, source="exact")
            continue
        r = engine.search(child, time_limit=per_move, depth=depth, stop_event=stop)
        same = child.player == state.player  # an extra turn: the child's mover is the root's
        value = (r["value"] if same else -r["value"]) / SCALE
        proven = r["exact"] and r.get("proof") is not None  # the engine's exact mode proved it
        row.update(value=value, source="exact" if proven else ("database" if r["exact"] else "engine"),
                   depth=r["depth"])
        if r["exact"]:
            row["margin"] = int(round(value)) * (1 if state.player == 0 else -1)
        pv_tail[mv] = list(r["pv"])
    report("engine", len(open_moves), len(open_moves))
    return stop is not None and stop.is_set()


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

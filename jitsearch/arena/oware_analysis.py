"""Every legal move of one Oware position valued, as the web board shows it.

:func:`analyse_oware_position` runs one MCTS tree on the position
(:func:`jitsearch.mcts.wrappers.analyse_oware`: per move its visits, visit
share and ``value``, the mover's mean reward, win 1, draw 1/2, loss 0) and,
where the board holds few enough seeds (:func:`exact_seeds_limit`), the
exact value of every move in the endgame database
(:mod:`jitsearch.games.oware.endgame`).

The database's values are for **its** rule, not OpenSpiel's: play that
never captures again is an even split of the seeds on the board (the
repetition rule ends such a game differently, depending on the positions
played before), and the end by the scores and the move limit are not
applied (the first changes no result). A move's ``db_value`` is in
half-seeds: twice the seeds the player to move gets from here on, of the
``seeds_on_board``, when it plays that move and both play perfectly
afterwards; ``db_margin`` and ``db_result`` add the seeds already captured:
the final score difference and result for the player to move.
"""

from __future__ import annotations

import threading

import numpy as np

from .._checks import check_bool, check_int
from ..games.oware import OwareState
from ..games.oware.endgame import MAX_DB_SEEDS, database_size
from ..games.oware.state import RULES

#: Largest endgame database the analysis builds (positions; Oware(6) up to 10 seeds is 646,646, about 0.3 s).
MAX_EXACT_POSITIONS = 700_000
#: Rule of the exact values, in words (the page shows it).
EXACT_RULE = ("endgame database: endless play without a capture splits the seeds on the board evenly (not "
              "OpenSpiel's repetition rule); the move limit is not applied")


def exact_seeds_limit(houses: int) -> int:
    """The most seeds on the board for which the analysis gives exact values on Oware(``houses``): the
    largest S whose database (layers 0..S) has at most :data:`MAX_EXACT_POSITIONS` positions."""
    houses = check_int("houses", houses, 1)
    s = 0
    while s < MAX_DB_SEEDS and database_size(houses, s + 1) <= MAX_EXACT_POSITIONS:
        s += 1
    return s


def exact_move_values(state: OwareState, db) -> dict:
    """``{house: half-seeds}`` for the player to move, every legal move, from ``db`` (built to at least the
    seeds on the board): a move capturing c of the S seeds is worth 2c + 2(S - c) - v(child) = 2S - v(child),
    the child's value being the opponent's (module docstring)."""
    m, p = state.houses, state.player
    total = int(state.board[:2 * m].sum())
    out = {}
    for h in state.legal_moves():
        b = np.array(state.board, dtype=np.int32)
        last = RULES.sow(b, m, h)
        RULES.capture(b, m, p, last)
        out[h] = 2 * total - db.value(b[:2 * m], 1 - p)
    return out


def analyse_oware_position(state: OwareState, *, iterations: int | None = 2000, time: float | None = None,
                           playouts: int = 8, seed: int = 0, backend: str = "cpu", exact: bool = True,
                           stop: threading.Event | None = None, progress=None) -> dict:
    """Value every legal move of ``state`` (module docstring).

    MCTS options as :func:`~jitsearch.mcts.wrappers.analyse_oware` (one tree;
    ``iterations`` or ``time``); its results are that function's for the
    same arguments. ``exact``: add the database values when the board holds
    at most :func:`exact_seeds_limit` seeds. ``stop`` (a
    ``threading.Event``): set it to stop; the tree grown so far is returned
    with ``interrupted``. ``progress(phase)`` with ``"database"`` and
    ``"mcts"``.

    Returns ``position``, ``player``, ``moves`` (per legal move: ``move``
    the house index, ``visits``, ``share``, ``value``; with exact values
    ``db_value``, ``db_margin``, ``db_result``), ``best_move`` (the most
    visited), ``value`` (the root's mean reward), ``iterations``,
    ``seconds``, ``interrupted``, ``seeds_on_board``, ``exact_seeds`` (the
    limit), ``exact`` (whether the database values are given),
    ``exact_best`` (the moves of the highest ``db_value``), ``db_value``
    (the position's) and ``exact_rule``.
    """
    from ..mcts.wrappers import analyse_oware
    from .oware_arena import endgame_database

    if not isinstance(state, OwareState):
        raise ValueError(f"state must be an OwareState, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over in this position: no move to analyse")
    exact = check_bool("exact", exact)
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ValueError(f"stop must be a threading.Event or None, got {type(stop).__name__}")
    report = progress or (lambda phase: None)
    m = state.houses
    on_board = int(state.board[:2 * m].sum())
    limit = exact_seeds_limit(m)
    values = None
    interrupted = False
    if exact and on_board <= limit:
        report("database")
        db = endgame_database(m, on_board, state.grand_slam_illegal)  # built once a process (in memory)
        values = exact_move_values(state, db)
    if stop is not None and stop.is_set():
        raise KeyboardInterrupt
    report("mcts")
    r = analyse_oware([state], iterations=iterations, time=time, seed=seed, playouts=playouts,
                      backend=backend, memory_hint="lower iterations", stop=stop)
    interrupted = bool(r["interrupted"])
    pos = r["positions"][0]
    grown = sum(ch["visits"] for ch in pos["children"])  # one leaf an iteration
    total = grown or 1
    mine, theirs = int(state.board[2 * m + state.player]), int(state.board[2 * m + 1 - state.player])
    rows = []
    for ch in pos["children"]:
        row = {"move": ch["move"], "visits": ch["visits"], "share": ch["visits"] / total, "value": ch["value"]}
        if values is not None:
            v = values[ch["move"]]
            margin = (2 * mine + v - (2 * theirs + 2 * on_board - v)) / 2
            row.update(db_value=v, db_margin=margin, db_result="win" if margin > 0 else "draw" if margin == 0
                       else "loss")
        rows.append(row)
    best_db = max(values.values()) if values else None
    return {"position": state.to_text(), "player": state.player, "moves": rows, "best_move": pos["move"],
            "value": pos["value"],
            "iterations": r["iterations"], "seconds": r["seconds"],
            "interrupted": interrupted, "backend": r["backend"], "playouts": r["playouts"],
            "seeds_on_board": on_board, "exact_seeds": limit, "exact": values is not None,
            "exact_best": sorted(h for h, v in values.items() if v == best_db) if values else [],
            "db_value": best_db, "exact_rule": EXACT_RULE}

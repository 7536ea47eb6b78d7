"""Kalah in the arena beyond the protocol (:class:`jitsearch.games.protocol.ArenaHooks`): the
balanced opening suites shipped in ``suites/``, the values a balanced suite is made with
(:func:`jitsearch.arena.opening_suites.balanced_suite`), the title of a board and the check of an
opening file's positions.

Values are player 0's margin: ``exact`` by :func:`.solver.solve_exact` (perfect play by both
sides), ``depth-D`` by a depth-``D`` iterative-deepening alpha-beta search with the store
difference as evaluation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Folder of the suites shipped with the package.
SUITES_DIR = Path(__file__).resolve().parent / "suites"
#: (houses, seeds, empty_capture) -> file name in :data:`SUITES_DIR` of each shipped suite.
SHIPPED = {(6, 4, False): "kalah-6-4-standard.txt",
           (6, 4, True): "kalah-6-4-empty-capture.txt",
           (6, 6, False): "kalah-6-6-standard.txt"}


def title(variant: dict) -> str:
    """The name of a board, e.g. ``Kalah(6,4) empty capture`` (tables, suite errors)."""
    return f"Kalah({variant['houses']},{variant['seeds']})" + (" empty capture" if variant["empty_capture"] else "")


def shipped_suite(variant: dict) -> Path:
    """The file of the balanced suite shipped for ``variant``; ``ValueError`` naming the boards that
    have one when there is none."""
    name = SHIPPED.get((int(variant["houses"]), int(variant["seeds"]), bool(variant["empty_capture"])))
    if name is None:
        have = ", ".join(title(dict(zip(("houses", "seeds", "empty_capture"), key))) for key in SHIPPED)
        raise ValueError(f"no balanced opening suite is shipped for {title(variant)}; there is one for {have}")
    return SUITES_DIR / name


def check_opening(state, variant: dict, where: str) -> None:
    """Refuse a position of an openings file that is not of ``variant``'s board (houses, seeds in all)."""
    houses, total = variant["houses"], 2 * variant["houses"] * variant["seeds"]
    if state.houses != houses:
        raise ValueError(f"{where}: {state.houses} houses a side, the tournament plays {houses}")
    if int(sum(int(x) for x in state.board)) != total:
        raise ValueError(f"{where}: {sum(int(x) for x in state.board)} seeds in all, "
                         f"Kalah({houses},{variant['seeds']}) has {total}")


def search_value(state, depth: int) -> int:
    """Player 0's margin by a depth-``depth`` iterative-deepening alpha-beta search (store difference;
    the searched value is the mover's, turned to player 0's)."""
    from .alphabeta import iterative_deepening

    value = iterative_deepening(state, max_depth=depth, tt_capacity=1 << 18)["value"]
    return int(round(value if state.player == 0 else -value))


def value_notes(variant: dict, result: dict) -> tuple[str, str]:
    """What a suite file's header says its values and move numbers are: (the values' sentence, the
    moves' description), for :func:`jitsearch.arena.opening_suites.suite_header`."""
    houses = variant["houses"]
    if result["method"] == "exact":
        values = (f"Each value is EXACT: player 0's final margin under perfect play by both sides (solve_exact, "
                  f"MTD(f) with an endgame database of {result['endgame_seeds']} seeds)")
    else:
        values = (f"Each value is a depth-{result['method'].split('-', 1)[1]} iterative-deepening alpha-beta search "
                  "(store difference), as player 0's margin; the board is too big to solve exactly")
    moves = (f"pit indices played from the start; player 0's houses are pits 1..{houses}, player 1's "
             f"{houses + 2}..{2 * houses + 1}")
    return values, moves


class _Outside(Exception):
    """Raised from a solve's progress callback: the value is known to lie outside the window."""


def exact_value(state, within: int, *, endgame_db=None, guess: int = 0, max_nodes: int = 300_000_000,
                table=None) -> tuple[int | None, str, int]:
    """Player 0's exact margin when it lies within ``within`` seeds of 0.

    Returns ``(margin, status, nodes)``: ``status`` is ``"inside"`` (margin
    exact and ``|margin| <= within``), ``"outside"`` (a bound proved it
    outside; margin None unless the solve had finished) or ``"too-big"``
    (more than ``max_nodes`` nodes, checked about every second: margin
    None). MTD(f) starts from ``guess`` clamped to ``[-within-1,
    within+1]``, so that a position far from balance is usually rejected
    by its first null-window test. ``table``: a transposition table shared
    with the solves of other positions of the same board and rules (see
    :func:`.solver.solve_exact`).
    """
    from .solver import solve_exact

    seen = {"nodes": 0, "status": None}

    def watch(iteration, lo, up, nodes, seconds):
        seen["nodes"] = nodes
        if lo > within or up < -within:
            seen["status"] = "outside"
            raise _Outside
        if nodes > max_nodes:
            seen["status"] = "too-big"
            raise _Outside

    first = min(max(int(guess), -within - 1), within + 1)
    try:
        r = solve_exact(state, endgame_db=endgame_db, first_guess=first, progress=watch, table=table)
    except _Outside:
        return None, seen["status"], int(seen["nodes"])
    if r.get("interrupted"):
        raise KeyboardInterrupt
    if not r["complete"]:  # table full: too big for this machine's table
        return None, "too-big", int(r["nodes"])
    margin = int(r["margin"])
    return margin, ("inside" if abs(margin) <= within else "outside"), int(r["nodes"])


def exact_context(variant: dict, *, endgame_seeds: int, endgame_db=None, cache_dir=None, progress=None,
                  table_slots: int, max_bytes: int) -> dict:
    """What the exact solves of one suite share: the endgame database (``endgame_seeds`` seeds, built or
    loaded from ``cache_dir`` once within ``max_bytes``, or ``endgame_db``; ``progress(done, total,
    seconds)`` while it is built) and one transposition table of ``table_slots`` rows of 32 bytes
    (rounded up to a power of two). Returns ``endgame_db``, ``endgame_seeds`` (0: none) and ``table``."""
    if endgame_db is None and endgame_seeds > 0:
        from . import build_endgame_database  # (the package's name: what a test replaces)

        endgame_db = build_endgame_database(variant["houses"], endgame_seeds, variant["empty_capture"],
                                            max_bytes=max_bytes, cache_dir=cache_dir, progress=progress)
    table = np.zeros((1 << max(4, (table_slots - 1).bit_length()), 4), dtype=np.int64)
    return {"endgame_db": endgame_db, "endgame_seeds": 0 if endgame_db is None else int(endgame_db["max_seeds"]),
            "table": table}

"""Balanced Kalah opening suites: generated (:func:`balanced_suite`) and
shipped with the package (:func:`shipped_suite`).

A balanced suite holds positions a few plies from the start whose value lies
within a few seeds of 0, so that a tournament's games start from positions
where neither side is already winning, and every opening is played from
both seats (fishtest's and fastchess's practice with chess books).

Conventions: a ply is one move (a move that earns an extra turn is a ply
too, and the same player moves again); moves are pit indices as
:meth:`KalahState.play` takes them (player 0's houses are pits ``1..m``,
player 1's ``m+2..2m+1``); a value is player 0's margin (its store minus
player 1's at the end of the game), whoever is to move. ``exact`` values are
:func:`jitsearch.games.kalah.solve_exact`'s (perfect play by both sides);
``depth-D`` values are a depth-``D`` iterative-deepening alpha-beta search
with the store difference as evaluation, for boards too big to solve.

A suite file has one opening a line::

    <position text>  # exact <value> plies <k> moves <pit> <pit> ...
    <position text>  # depth-12 <value> plies <k> moves <pit> <pit> ...

after ``#`` header lines saying how it was made.
:func:`jitsearch.arena.openings.read_openings` reads the positions of such a
file (the comments are skipped); :func:`read_suite` reads the records too.
"""

from __future__ import annotations

import random
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from ..games.kalah import KalahState
from ..rng import mix64_py

#: Folder of the suites shipped with the package.
SUITES_DIR = Path(__file__).resolve().parent / "suites"
#: (houses, seeds, empty_capture) -> file name in :data:`SUITES_DIR` of each shipped suite.
SHIPPED = {(6, 4, False): "kalah-6-4-standard.txt",
           (6, 4, True): "kalah-6-4-empty-capture.txt",
           (6, 6, False): "kalah-6-6-standard.txt"}
#: The reserved ``--openings`` name of the shipped suite of the tournament's board.
RESERVED_NAME = "balanced"
#: Opening depths (plies from the start) allowed, and the default range.
MAX_PLIES = 12
DEFAULT_PLIES = (2, 6)
#: Distinct positions kept per ply level of the enumeration; a bigger level is sampled down (seeded).
LEVEL_CAP = 50_000
#: Prefilter: depth of the cheap search, and how far beyond ``within`` its value may lie.
PREFILTER_DEPTH = 10
PREFILTER_SLACK = 2
#: An exact solve stops (and its position is skipped) past this many nodes.
MAX_SOLVE_NODES = 300_000_000
#: Rows of the transposition table the exact solves of a suite share (int64[rows, 4], 512 MiB; the solver reads a
#: row as two 16-byte slots).
TABLE_SLOTS = 1 << 24
#: Endgame database used by exact suites when none is given (seeds in the houses).
ENDGAME_SEEDS = 20
#: Memory an exact suite's endgame database may take (values and build scratch).
ENDGAME_MAX_BYTES = 8 << 30
MAX_COUNT = 10_000
MAX_DEPTH = 30


@dataclass(frozen=True)
class Opening:
    """One opening of a suite.

    Attributes
    ----------
    position : the position text (:meth:`KalahState.to_text`).
    value : player 0's margin: exact, or the depth-limited search value.
    plies : moves played from the start (extra-turn moves count).
    moves : the pit indices played from the start, in order.
    method : ``"exact"`` or ``"depth-D"``.
    """

    position: str
    value: int
    plies: int
    moves: tuple
    method: str

    def line(self) -> str:
        """The suite-file line of this opening."""
        return (f"{self.position}  # {self.method} {self.value:+d} plies {self.plies} moves "
                f"{' '.join(str(m) for m in self.moves)}")

    def to_json(self) -> dict:
        return {"position": self.position, "value": self.value, "plies": self.plies, "moves": list(self.moves),
                "method": self.method}


def parse_line(line: str) -> Opening | None:
    """The opening of a suite-file line, None for a blank or comment line;
    ``ValueError`` for a line that does not have the form of the module docstring."""
    text, _, comment = line.partition("#")
    text = text.strip()
    if not text:
        return None
    words = comment.split()
    if (len(words) < 5 or not (words[0] == "exact" or words[0].startswith("depth-")) or words[2] != "plies"
            or words[4] != "moves"):
        raise ValueError(f"expected '<position>  # exact|depth-D <value> plies <k> moves <pits...>', got {line!r}")
    try:
        value, plies, moves = int(words[1]), int(words[3]), tuple(int(w) for w in words[5:])
    except ValueError:
        raise ValueError(f"value, plies and moves must be integers in {line!r}") from None
    if plies != len(moves):
        raise ValueError(f"{plies} plies but {len(moves)} moves in {line!r}")
    return Opening(text, value, plies, moves, words[0])


def read_suite(path) -> tuple[Opening, ...]:
    """The openings of a suite file (see the module docstring; UTF-8, a
    byte-order mark allowed); errors name ``file:line``."""
    path = Path(path)
    out = []
    for number, raw in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        try:
            opening = parse_line(raw)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        if opening is not None:
            out.append(opening)
    return tuple(out)


def shipped_boards() -> list[str]:
    """Names of the boards with a shipped suite, e.g. ``Kalah(6,4) empty capture``."""
    return [board_name(*key) for key in SHIPPED]


def board_name(houses: int, seeds: int, empty_capture: bool) -> str:
    return f"Kalah({houses},{seeds})" + (" empty capture" if empty_capture else "")


def shipped_suite_path(houses: int, seeds: int, empty_capture: bool) -> Path:
    """The file of the shipped suite of that board; ``ValueError`` naming the
    boards that have one when there is none."""
    name = SHIPPED.get((int(houses), int(seeds), bool(empty_capture)))
    if name is None:
        raise ValueError(f"no balanced opening suite is shipped for {board_name(houses, seeds, empty_capture)}; "
                         f"there is one for {', '.join(shipped_boards())}")
    return SUITES_DIR / name


def shipped_suite(houses: int = 6, seeds: int = 4, empty_capture: bool = False) -> tuple[Opening, ...]:
    """The balanced suite shipped for Kalah(houses, seeds) under that rule
    set, as :class:`Opening` records (``[o.position for o in ...]`` are the
    texts a tournament takes); ``ValueError`` for a board without one."""
    return read_suite(shipped_suite_path(houses, seeds, empty_capture))


# -- candidates ---------------------------------------------------------------------------------------

def opening_candidates(houses: int, seeds: int, empty_capture: bool, plies=DEFAULT_PLIES, seed: int = 0):
    """Distinct positions ``plies[0]..plies[1]`` plies from the start, each
    with the first move sequence that reaches it (breadth first, moves in
    pit order; a position reached at two depths counts at the shallower),
    finished games left out, as ``(state, moves)``.

    Every level of up to :data:`LEVEL_CAP` distinct positions is enumerated
    whole; a bigger one is sampled down to that many (seeded). The result
    is ordered for diversity: one shuffled list (seeded) per (plies, player
    to move), taken in turn, so a suite's first openings mix depths and both
    players to move.
    """
    lo, hi = plies
    rng = random.Random(mix64_py(seed * 0x9E3779B97F4A7C15 + 0x0B5E))
    start = KalahState.initial(houses, seeds, empty_capture=empty_capture)
    seen = {start.to_text()}
    level = [(start, ())]
    groups: dict = {}
    for depth in range(1, hi + 1):
        nxt = []
        for state, moves in level:
            for mv in state.legal_moves():
                child = state.play(mv)
                text = child.to_text()
                if text in seen:
                    continue
                seen.add(text)
                if not child.is_over:
                    nxt.append((child, moves + (mv,)))
        if len(nxt) > LEVEL_CAP:
            nxt = rng.sample(nxt, LEVEL_CAP)
        level = nxt
        if depth >= lo:
            for state, moves in level:
                groups.setdefault((depth, state.player), []).append((state, moves))
    lists = [groups[k] for k in sorted(groups)]
    for items in lists:
        rng.shuffle(items)
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        out.extend(items[i] for items in lists if i < len(items))
    return out


# -- values ---------------------------------------------------------------------------------------------

def search_value(state: KalahState, depth: int) -> int:
    """Player 0's margin by a depth-``depth`` iterative-deepening alpha-beta
    search (store difference; the searched value is the mover's, turned to
    player 0's)."""
    from ..games.kalah import iterative_deepening

    value = iterative_deepening(state, max_depth=depth, tt_capacity=1 << 18)["value"]
    return int(round(value if state.player == 0 else -value))


class _Outside(Exception):
    """Raised from a solve's progress callback: the value is known to lie outside the window."""


def exact_value(state: KalahState, within: int, *, endgame_db=None, guess: int = 0,
                max_nodes: int = MAX_SOLVE_NODES, table=None) -> tuple[int | None, str, int]:
    """Player 0's exact margin when it lies within ``within`` seeds of 0.

    Returns ``(margin, status, nodes)``: ``status`` is ``"inside"`` (margin
    exact and ``|margin| <= within``), ``"outside"`` (a bound proved it
    outside; margin None unless the solve had finished) or ``"too-big"``
    (more than ``max_nodes`` nodes, checked about every second: margin
    None). MTD(f) starts from ``guess`` clamped to ``[-within-1,
    within+1]``, so that a position far from balance is usually rejected
    by its first null-window test. ``table``: a transposition table shared
    with the solves of other positions of the same board and rules (see
    :func:`jitsearch.games.kalah.solve_exact`).
    """
    from ..games.kalah import solve_exact

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


# -- suites ---------------------------------------------------------------------------------------------

def _check_args(houses, seeds, empty_capture, plies, within, exact, depth, count, prefilter_depth, max_nodes,
                table_slots):
    if not isinstance(empty_capture, bool):
        raise ValueError(f"empty_capture must be True or False, got {empty_capture!r}")
    KalahState.initial(houses, seeds, empty_capture=empty_capture)  # checks the board's size
    if (not isinstance(plies, (tuple, list)) or len(plies) != 2 or not all(isinstance(p, int) for p in plies)
            or not 1 <= plies[0] <= plies[1] <= MAX_PLIES):
        raise ValueError(f"plies must be (lo, hi) with 1 <= lo <= hi <= {MAX_PLIES}, got {plies!r}")
    if isinstance(within, bool) or not isinstance(within, int) or within < 0:
        raise ValueError(f"within must be an integer >= 0 (seeds), got {within!r}")
    if exact == (depth is not None):
        raise ValueError("give exactly one of exact=True and depth=D")
    for name, value, top in (("depth", depth, MAX_DEPTH), ("prefilter_depth", prefilter_depth, MAX_DEPTH),
                             ("count", count, MAX_COUNT), ("max_nodes", max_nodes, 1 << 50),
                             ("table_slots", table_slots, 1 << 32)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top):
            raise ValueError(f"{name} must be an integer in 1..{top}, got {value!r}")


def balanced_suite(houses: int = 6, seeds: int = 4, empty_capture: bool = False, *, plies=DEFAULT_PLIES,
                   within: int = 2, exact: bool = True, depth: int | None = None, count: int = 50, seed: int = 0,
                   prefilter_depth: int | None = PREFILTER_DEPTH, prefilter_slack: int = PREFILTER_SLACK,
                   endgame_seeds: int = ENDGAME_SEEDS, endgame_db=None, endgame_cache_dir=None,
                   max_nodes: int = MAX_SOLVE_NODES, table_slots: int = TABLE_SLOTS, on_found=None,
                   progress=None, endgame_progress=None) -> dict:
    """Up to ``count`` distinct positions ``plies`` plies from the start
    whose value lies within ``within`` seeds of 0.

    The candidates are :func:`opening_candidates` (seeded by ``seed``), in
    their order; each is first searched to ``prefilter_depth`` (None: no
    prefilter) and dropped when that value is more than ``within +
    prefilter_slack`` from 0; the rest get their value:

    * ``exact=True``: :func:`exact_value` (MTD(f) with an endgame database
      of ``endgame_seeds`` seeds, built or loaded from ``endgame_cache_dir``
      once, or ``endgame_db``), all solves sharing one transposition table
      of ``table_slots`` rows of 32 bytes (two 16-byte solver slots each;
      rounded up to a power of two); a solve past ``max_nodes`` nodes is skipped;
    * ``depth=D`` (with ``exact=False``): :func:`search_value` to depth D.

    Parameters
    ----------
    on_found : ``on_found(opening, openings_so_far, stats)`` after each opening
        found (``stats``: the counters of the result below).
    progress : ``progress(stats)`` after each candidate (``stats``: the
        counters of the result below).
    endgame_progress : ``endgame_progress(done, total, seconds)`` while the
        endgame database is built (see :func:`build_endgame_database`).

    Returns
    -------
    dict with ``openings`` (tuple of :class:`Opening`, in the order found),
    ``complete`` (``count`` found), ``interrupted`` (Ctrl-C stopped it: a
    KeyboardInterrupt is caught and what was found returned),
    ``interrupted_in`` (``"endgame database"`` while it was built or
    loaded, ``"search"`` after, None when not interrupted), and the
    counters ``candidates`` (distinct positions in range), ``tried``,
    ``prefiltered_out``, ``evaluated``, ``outside``, ``too_big`` (exact
    solves over ``max_nodes``), ``nodes`` (of the exact solves),
    ``seconds``, ``endgame_seeds`` (0 in depth mode).
    """
    plies = tuple(plies) if isinstance(plies, list) else plies
    _check_args(houses, seeds, empty_capture, plies, within, exact, depth, count, prefilter_depth, max_nodes,
                table_slots)
    if not exact and prefilter_depth is not None and prefilter_depth >= depth:
        prefilter_depth = None  # the search itself is no dearer than its prefilter
    t0 = time.perf_counter()
    stats = {"candidates": 0, "tried": 0, "prefiltered_out": 0, "evaluated": 0, "outside": 0, "too_big": 0,
             "nodes": 0, "found": 0, "seconds": 0.0, "endgame_seeds": 0, "prefilter_depth": prefilter_depth,
             "within": within, "max_nodes": max_nodes if exact else None}
    found: list[Opening] = []
    method = "exact" if exact else f"depth-{depth}"
    interrupted = None
    stage = "endgame database"
    try:
        if exact and endgame_db is None and endgame_seeds > 0:
            from ..games.kalah import build_endgame_database

            endgame_db = build_endgame_database(houses, endgame_seeds, empty_capture, max_bytes=ENDGAME_MAX_BYTES,
                                                cache_dir=endgame_cache_dir, progress=endgame_progress)
        stage = "search"
        if exact and endgame_db is not None:
            stats["endgame_seeds"] = int(endgame_db["max_seeds"])
        table = None
        if exact:
            import numpy as np

            table = np.zeros((1 << max(4, (table_slots - 1).bit_length()), 4), dtype=np.int64)
        candidates = opening_candidates(houses, seeds, empty_capture, plies, seed)
        stats["candidates"] = len(candidates)
        for state, moves in candidates:
            if len(found) >= count:
                break
            stats["tried"] += 1
            guess = 0
            if prefilter_depth is not None:
                guess = search_value(state, prefilter_depth)
                if abs(guess) > within + prefilter_slack:
                    stats["prefiltered_out"] += 1
                    _report(progress, stats, t0)
                    continue
            stats["evaluated"] += 1
            if exact:
                value, status, nodes = exact_value(state, within, endgame_db=endgame_db, guess=guess,
                                                   max_nodes=max_nodes, table=table)
                stats["nodes"] += nodes
            else:
                value = search_value(state, depth)
                status = "inside" if abs(value) <= within else "outside"
            if status == "inside":
                opening = Opening(state.to_text(), int(value), len(moves), tuple(int(m) for m in moves), method)
                found.append(opening)
                stats["found"] = len(found)
                stats["seconds"] = time.perf_counter() - t0
                if on_found is not None:
                    on_found(opening, tuple(found), dict(stats))
            elif status == "outside":
                stats["outside"] += 1
            else:
                stats["too_big"] += 1
            _report(progress, stats, t0)
    except KeyboardInterrupt:
        interrupted = stage
    stats["seconds"] = time.perf_counter() - t0
    return {"openings": tuple(found), "complete": len(found) >= count, "interrupted": interrupted is not None,
            "interrupted_in": interrupted, "method": method, **stats}


def _report(progress, stats, t0):
    if progress is not None:
        stats["seconds"] = time.perf_counter() - t0
        progress(dict(stats))


def suite_header(houses: int, seeds: int, empty_capture: bool, result: dict, *, plies, command: str,
                 seed: int) -> str:
    """The ``#`` header of a suite file: what the values mean, how the suite was made, the command that remakes it."""
    exact = result["method"] == "exact"
    within, prefilter_depth, max_nodes = result["within"], result["prefilter_depth"], result["max_nodes"]
    rules = "empty-capture rules" if empty_capture else "standard rules"
    values = [o.value for o in result["openings"]]
    spread = ", ".join(f"{v:+d}: {values.count(v)}" for v in sorted(set(values)))
    lines = [
        f"Balanced opening suite for Kalah({houses},{seeds}), {rules}: {len(values)} distinct positions "
        f"{plies[0]}-{plies[1]} plies from the start (a ply is one move; extra-turn moves count).",
        (f"Each value is EXACT: player 0's final margin under perfect play by both sides (solve_exact, MTD(f) with "
         f"an endgame database of {result['endgame_seeds']} seeds), |value| <= {within}."
         if exact else
         f"Each value is a depth-{result['method'].split('-', 1)[1]} iterative-deepening alpha-beta search "
         f"(store difference), as player 0's margin, |value| <= {within}; the board is too big to solve "
         f"exactly."),
        f"Values: {spread}.",
        "Line: <position text>  # <exact|depth-D> <value> plies <k> moves <pit indices played from the start; "
        f"player 0's houses are pits 1..{houses}, player 1's {houses + 2}..{2 * houses + 1}>.",
        (f"Made from candidates in a seeded order (seed {seed}) mixing depths and players to move: "
         f"{result['tried']} tried, "
         + (f"{result['prefiltered_out']} dropped by a depth-{prefilter_depth} search (|value| > {within} + "
            f"slack), " if prefilter_depth else "")
         + f"{result['evaluated']} evaluated"
         + (f", {result['too_big']} skipped as their solve passed {max_nodes:,} nodes" if exact else "")
         + f"; {result['seconds']:.0f} s."),
    ]
    out = []
    for line in lines:
        out.extend("# " + part for part in textwrap.wrap(line, 110, break_long_words=False, break_on_hyphens=False))
    out.append(f"# Remake: {command}")  # one line, to copy
    return "\n".join(out) + "\n"


def format_suite(header: str, openings) -> str:
    return header + "".join(o.line() + "\n" for o in openings)

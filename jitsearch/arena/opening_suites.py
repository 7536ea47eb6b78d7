"""Balanced opening suites: generated (:func:`balanced_suite`) and shipped with the package
(:func:`shipped_suite`), for a game whose arena hooks give them
(:class:`~jitsearch.games.protocol.ArenaHooks`: ``suite_values``, ``shipped_suite``; Kalah
has them). The functions take the game's variant options in order
(Kalah's houses, seeds, empty_capture) or by name, and ``game=`` (default Kalah).

A balanced suite holds positions a few plies from the start whose value lies
within a few units of 0, so that a tournament's games start from positions
where neither side is already winning, and every opening is played from
both seats (fishtest's and fastchess's practice with chess books).

Conventions: a ply is one move (a move that earns an extra turn is a ply
too, and the same player moves again); moves are as the state's ``play`` takes them;
a value is player 0's margin, whoever is to move. ``exact`` values are the game's
exact solver's (perfect play by both sides); ``depth-D`` values a depth-``D`` search,
for boards too big to solve.

A suite file has one opening a line::

    <position text>  # exact <value> plies <k> moves <move> <move> ...
    <position text>  # depth-12 <value> plies <k> moves <move> <move> ...

after ``#`` header lines saying how it was made.
:func:`jitsearch.arena.openings.read_game_openings` reads the positions of such a
file (the comments are skipped); :func:`read_suite` reads the records too.
"""

from __future__ import annotations

import random
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from ..games import DEFAULT_GAME, get as get_game
from ..rng import mix64_py

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


def _variant(game, args, options) -> dict:
    """The full variant of ``game`` from its options given in order (``args``) or by name."""
    if len(args) > len(game.variant):
        raise ValueError(f"{game.name} has {len(game.variant)} variant options, got {len(args)}")
    return {**game.defaults(), **dict(zip(game.variant, args)), **options}


def _hook(game, name: str):
    hook = getattr(game.arena, name, None) if game.arena is not None else None
    if hook is None:
        what = "is shipped" if name == "shipped_suite" else "can be made"
        raise ValueError(f"no balanced suite {what} for {game.name}: give --openings FILE, or --random-openings K "
                         f"with --balanced MARGIN")
    return hook


@dataclass(frozen=True)
class Opening:
    """One opening of a suite.

    Attributes
    ----------
    position : the position text (the state's ``to_text``).
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


def board_name(*args, game=DEFAULT_GAME, **options) -> str:
    """The name of a variant of ``game`` (its options in order or by name), e.g. ``Kalah(6,4) empty capture``."""
    from .game_match import variant_title

    game = get_game(game)
    return variant_title(game, _variant(game, args, options))


def shipped_suite_path(*args, game=DEFAULT_GAME, **options) -> Path:
    """The file of the balanced suite shipped for a variant of ``game`` (its options in order or by
    name: Kalah's houses, seeds, empty_capture); ``ValueError`` naming the boards that have one when
    there is none."""
    game = get_game(game)
    return _hook(game, "shipped_suite")(_variant(game, args, options))


def shipped_suite(*args, game=DEFAULT_GAME, **options) -> tuple[Opening, ...]:
    """The balanced suite shipped for a variant of ``game`` (default Kalah(6,4), standard rules),
    as :class:`Opening` records (``[o.position for o in ...]`` are the texts a tournament takes);
    ``ValueError`` for a board without one."""
    return read_suite(shipped_suite_path(*args, game=game, **options))


# -- candidates ---------------------------------------------------------------------------------------

def opening_candidates(*args, plies=DEFAULT_PLIES, seed: int = 0, game=DEFAULT_GAME, **options):
    """Distinct positions of a variant of ``game`` (its options in order or by name) ``plies[0]..plies[1]`` plies from the start, each
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
    game = get_game(game)
    start = game.initial(**_variant(game, args, options))
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

def search_value(state, depth: int, *, game=DEFAULT_GAME) -> int:
    """Player 0's margin by a depth-``depth`` search of the game's suite values (Kalah: iterative-deepening
    alpha-beta, store difference)."""
    return _hook(get_game(game), "suite_values").search_value(state, depth)


def exact_value(state, within: int, *, game=DEFAULT_GAME, **options) -> tuple[int | None, str, int]:
    """``(margin, status, nodes)``: player 0's exact margin when it lies within ``within`` of 0 (the game's
    suite values' ``exact_value``: ``status`` ``inside``,
    ``outside`` or ``too-big``; options ``endgame_db``, ``guess``, ``max_nodes``, ``table``)."""
    return _hook(get_game(game), "suite_values").exact_value(state, within, **options)


# -- suites ---------------------------------------------------------------------------------------------

def _check_args(game, variant, plies, within, exact, depth, count, prefilter_depth, max_nodes, table_slots):
    for key, option in game.variant.items():
        if option.type is bool and not isinstance(variant[key], bool):
            raise ValueError(f"{key} must be True or False, got {variant[key]!r}")
    game.initial(**variant)  # checks the board's size
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


def balanced_suite(*args, plies=DEFAULT_PLIES, within: int = 2, exact: bool = True, depth: int | None = None, count: int = 50, seed: int = 0,
                   prefilter_depth: int | None = PREFILTER_DEPTH, prefilter_slack: int = PREFILTER_SLACK,
                   endgame_seeds: int = ENDGAME_SEEDS, endgame_db=None, endgame_cache_dir=None,
                   max_nodes: int = MAX_SOLVE_NODES, table_slots: int = TABLE_SLOTS, on_found=None,
                   progress=None, endgame_progress=None, game=DEFAULT_GAME, **options) -> dict:
    """Up to ``count`` distinct positions of a variant of ``game`` (its options in order or by name;
    default Kalah(6,4), standard rules) ``plies`` plies from the start whose value lies within
    ``within`` units (Kalah: seeds) of 0.

    The candidates are :func:`opening_candidates` (seeded by ``seed``), in
    their order; each is first searched to ``prefilter_depth`` (None: no
    prefilter) and dropped when that value is more than ``within +
    prefilter_slack`` from 0; the rest get their value:

    * ``exact=True``: :func:`exact_value` (Kalah: MTD(f) with an endgame
      database of ``endgame_seeds`` seeds, built or loaded from
      ``endgame_cache_dir`` once, or ``endgame_db``), all solves sharing one
      transposition table of ``table_slots`` rows of 32 bytes (two 16-byte
      solver slots each; rounded up to a power of two); a solve past
      ``max_nodes`` nodes is skipped;
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
    game = get_game(game)
    variant = _variant(game, args, options)
    values = _hook(game, "suite_values")
    _check_args(game, variant, plies, within, exact, depth, count, prefilter_depth, max_nodes, table_slots)
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
        shared = {"endgame_db": None, "table": None}
        if exact:
            shared = values.exact_context(variant, endgame_seeds=endgame_seeds, endgame_db=endgame_db,
                                          cache_dir=endgame_cache_dir, progress=endgame_progress,
                                          table_slots=table_slots, max_bytes=ENDGAME_MAX_BYTES)
            stats["endgame_seeds"] = shared.pop("endgame_seeds")
        stage = "search"
        candidates = opening_candidates(plies=plies, seed=seed, game=game, **variant)
        stats["candidates"] = len(candidates)
        for state, moves in candidates:
            if len(found) >= count:
                break
            stats["tried"] += 1
            guess = 0
            if prefilter_depth is not None:
                guess = search_value(state, prefilter_depth, game=game)
                if abs(guess) > within + prefilter_slack:
                    stats["prefiltered_out"] += 1
                    _report(progress, stats, t0)
                    continue
            stats["evaluated"] += 1
            if exact:
                value, status, nodes = exact_value(state, within, game=game, guess=guess, max_nodes=max_nodes,
                                                   **shared)
                stats["nodes"] += nodes
            else:
                value = search_value(state, depth, game=game)
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


def suite_header(variant: dict, result: dict, *, plies, command: str, seed: int, game=DEFAULT_GAME) -> str:
    """The ``#`` header of a suite file of ``game``'s ``variant`` (options by name, the rest the
    defaults): what the values mean (the game's ``suite_values.value_notes``), how the suite was
    made, the command that remakes it."""
    game = get_game(game)
    variant = _variant(game, (), variant)
    exact = result["method"] == "exact"
    within, prefilter_depth, max_nodes = result["within"], result["prefilter_depth"], result["max_nodes"]
    values = [o.value for o in result["openings"]]
    spread = ", ".join(f"{v:+d}: {values.count(v)}" for v in sorted(set(values)))
    value_line, moves_line = _hook(game, "suite_values").value_notes(variant, result)
    lines = [
        f"Balanced opening suite for {board_name(game=game, **variant)}: {len(values)} distinct positions "
        f"{plies[0]}-{plies[1]} plies from the start (a ply is one move; extra-turn moves count).",
        f"{value_line}, |value| <= {within}.",
        f"Values: {spread}.",
        f"Line: <position text>  # <exact|depth-D> <value> plies <k> moves <{moves_line}>.",
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

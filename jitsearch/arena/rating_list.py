"""Rating lists from tournament record files, as Ordo and BayesElo make
them from PGN files: read the games, count each pair of engines' wins,
draws and losses, fit maximum-likelihood ratings
(:func:`jitsearch.arena.ratings.fit_ratings`) and show them as a table or a
chart.

Records
-------
The JSONL files that ``jitsearch tournament --out`` writes (one per match
with ``--engines``, so a round robin's output folder is read whole). Three
kinds are understood, told apart by their keys:

* game records (:mod:`jitsearch.arena.game_match`, ``game`` its name): one
  game, ``a_result`` ("win", "draw", "loss") from engine ``a``'s side;
* Kalah's game records of the older format (no ``game`` field,
  :mod:`jitsearch.arena.legacy_records`): the same, one game each;
* random-tree pair records (:mod:`jitsearch.arena.random_tree_tournament`):
  one result per *pair* of games, ``winner`` ("a", "b", "tie"), counted as
  the tournament counts it (a pair is one win, draw or loss).

A game that an external engine lost by a time forfeit, an illegal move or
a crash (``termination``) counts as its loss whatever the board's margin,
as the tournament counted it. Game records, and older Kalah records whose
config id is that of their players and settings (``match``), are checked by
the tournament's own check (:class:`jitsearch.arena.game_match.GameRecords`,
:class:`jitsearch.arena.legacy_records.LegacyRecords`): their moves are replayed
from the opening and must give the recorded final position and result. Other
older Kalah records (older files, records made by hand) get the lighter checks
below.

Engines are grouped by their spec as recorded (``a`` and ``b``), so
``alphabeta:depth=3`` of one file and of another are the same engine; the
games of a match of an engine against itself are checked and left out with
a note (they say nothing about ratings).
Every record is checked before anything is counted: its fields and types,
its check value (an edited record is refused), that its result agrees with
its other fields, and that no game is counted twice (the same game in two
files, or a file named twice through a folder). Records of different
settings (board, rules, ply cap, openings) are pooled with a note; records
of different games are never mixed. Each problem is one
``ValueError`` naming ``file:line``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .._checks import check_float
from .records import BadRecord, ForeignRecord, get_field, legacy_format, legacy_game, read_record_file, verify_check
from ..games import get as get_game
from .ratings import fit_ratings

#: Suffix of the record files searched for in a folder.
RECORD_SUFFIX = ".jsonl"
#: File types :func:`plot_ratings` writes (matplotlib picks the format from the suffix).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
#: Record kinds: what one record counts.
KINDS = {"random-tree": "pair"}
_KALAH_RESULT = {"win": 0, "draw": 1, "loss": 2}
_TREE_RESULT = {"a": 0, "tie": 1, "b": 2}


@dataclass
class RecordResults:
    """What a set of record files says about each pair of engines.

    ``results``: (engine_a, engine_b, wins_a, draws, losses_a) per pair of
    engines that met (each unordered pair once, in order of first
    appearance), the input of :func:`jitsearch.arena.ratings.fit_ratings`;
    ``kind``: a game's name or "random-tree"; ``games``: results counted
    (games for every game, game pairs for random trees: ``unit`` says which);
    ``files``: the files read, in order; ``settings``: the distinct game
    settings of the records (as recorded; older records without them are
    not listed); ``notes``: what the reader repaired or wants known.
    """

    kind: str
    results: list = field(default_factory=list)
    games: int = 0
    files: list = field(default_factory=list)
    settings: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def unit(self) -> str:
        return KINDS.get(self.kind, "game")

    @property
    def engines(self) -> list[str]:
        """The engines, in order of first appearance."""
        seen: dict[str, None] = {}
        for a, b, *_ in self.results:
            seen.setdefault(a)
            seen.setdefault(b)
        return list(seen)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "unit": self.unit, "games": self.games, "files": list(self.files),
                "engines": self.engines, "settings": list(self.settings), "notes": list(self.notes),
                "results": [list(r) for r in self.results]}


def record_paths(sources) -> list[Path]:
    """The record files of ``sources`` (paths of files, or of folders searched
    recursively for ``*.jsonl``), in the order given (a folder's files sorted
    by path), each file once. Raises ValueError for a path that does not
    exist, is neither a file nor a folder, or a folder without record files."""
    if isinstance(sources, (str, Path)):
        sources = [sources]
    sources = list(sources)
    if not sources:
        raise ValueError("give at least one record file or folder")
    out: list[Path] = []
    seen: set[Path] = set()
    for src in sources:
        path = Path(src)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*" + RECORD_SUFFIX) if p.is_file())
            if not found:
                raise ValueError(f"{path} is a folder without record files (*{RECORD_SUFFIX}, as tournament "
                                 f"--out writes them)")
        elif path.is_file():
            found = [path]
        elif path.exists():
            raise ValueError(f"{path} is not a regular file or folder")
        else:
            raise ValueError(f"{path} does not exist")
        for p in found:
            key = p.resolve()
            if key not in seen:
                seen.add(key)
                out.append(p)
    return out


def _record_kind(rec: dict) -> str:
    if "a_result" in rec:
        game = rec.get("game", legacy_game())
        if not isinstance(game, str) or game == "random-tree":
            raise BadRecord(f"game {game!r} is not a registered game")
        try:
            get_game(game)
        except ValueError as exc:
            raise BadRecord(str(exc)) from None
        return game
    if "game" in rec and rec["game"] != "random-tree":
        name = str(rec["game"]).capitalize()
        raise BadRecord(f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} record written by an older jitsearch (no "
                        f"a_result, config id or check value): play its match again to rate it")
    if "winner" in rec:
        return "random-tree"
    raise BadRecord("not a game record of a tournament (it has neither a_result, as every game's records have, "
                    "nor winner, as random-tree pairs have)")


class _MatchChecks:
    """The tournaments' own record checks (replay included), one per (game, players, settings) met."""

    def __init__(self):
        self._checks: dict = {}

    def __call__(self, kind: str, a: str, b: str, settings: dict, legacy: bool):
        key = (kind, a, b, json.dumps(settings, sort_keys=True), legacy)
        if key not in self._checks:
            self._checks[key] = self._make(kind, a, b, settings, legacy)
        return self._checks[key]

    @staticmethod
    def _make(kind: str, a: str, b: str, settings: dict, legacy: bool):
        if not legacy:
            from .game_match import GameMatch, GameRecords

            cls, check = GameMatch, GameRecords
            settings = {**settings, "variant": tuple(tuple(x) for x in settings.get("variant") or ()),
                        "suite": tuple(settings.get("suite") or ())}
        else:
            from .legacy_records import LegacyMatch, LegacyRecords

            cls, check = LegacyMatch, LegacyRecords
            settings = {**settings, "suite": tuple(settings.get("suite") or ())}
        try:
            match = cls(**settings)
            match.check()
        except (TypeError, ValueError) as exc:
            if legacy:
                return None  # not a tournament's settings (a hand-made record): the lighter checks
            raise BadRecord(f"its match settings are not an {kind} match's: {exc}") from None
        return check(a, b, match)


def _check_record(rec: dict, kind: str, checks: _MatchChecks):
    """(game key, engine a, engine b, outcome index 0/1/2 = a wins/draw/a loses, settings or None) of a record."""
    a, b = get_field(rec, "a", "str"), get_field(rec, "b", "str")
    if not a.strip() or not b.strip():
        raise BadRecord("an engine's name (a, b) must not be empty")
    cid = get_field(rec, "config", "str")
    pair = get_field(rec, "pair", "int", low=0)
    if "check" in rec:
        get_field(rec, "check", "str")
    if kind != "random-tree":
        seat = get_field(rec, "seat", "int", choices=(0, 1))
        a_player = get_field(rec, "a_player", "int", choices=(0, 1))
        margin = get_field(rec, "margin", "int")
        result = get_field(rec, "a_result", "str", choices=tuple(_KALAH_RESULT))
        termination = get_field(rec, "termination", "str") if "termination" in rec else None
        legacy = legacy_format(rec)
        settings = get_field(rec, "match", "dict") if (not legacy or "match" in rec) else None
        verify_check(rec)
        check = checks(kind, a, b, settings, legacy) if settings is not None else None
        if check is not None and (not legacy or check.cid == cid):
            try:  # the tournament's own check: fields, replay, result, forfeit
                check(rec)
            except ForeignRecord as exc:  # a config id that its players and settings do not give
                raise BadRecord(str(exc)) from None
        elif termination is not None:  # the forfeiter lost, whatever the margin
            if result == "draw":
                raise BadRecord(f"a_result 'draw' in a game lost by a forfeit ({termination})")
        else:
            mine = margin if a_player == 0 else -margin
            if result != ("win" if mine > 0 else "loss" if mine < 0 else "draw"):
                raise BadRecord(f"a_result {result!r} does not agree with margin {margin} and A as player "
                                f"{a_player}")
        return (kind, cid, pair, seat), a, b, _KALAH_RESULT[result], settings
    out_a = get_field(rec, "outcome_a_max", "number")
    out_b = get_field(rec, "outcome_b_max", "number")
    winner = get_field(rec, "winner", "str", choices=tuple(_TREE_RESULT))
    round_no = get_field(rec, "round", "int", low=0) if rec.get("round") is not None else None
    settings = get_field(rec, "game", "dict") if "game" in rec else None
    verify_check(rec)
    if winner != ("a" if out_a > out_b else "b" if out_b > out_a else "tie"):
        raise BadRecord(f"winner {winner!r} does not agree with the outcomes {out_a:g} (A as MAX) and {out_b:g} "
                        f"(B as MAX)")
    return (kind, cid, round_no, pair), a, b, _TREE_RESULT[winner], settings


def read_results(sources) -> RecordResults:
    """Read and check every record of ``sources`` (see :func:`record_paths`)
    and count each pair of engines' results (see the module's notes).

    Raises ValueError (one line, naming ``file:line`` where a line is at
    fault) for a missing or unreadable path, a line that is not JSON, a
    record that is not a tournament's (or is damaged or edited, or does
    not replay), a game counted twice, records of two games together, or
    no game at all. A torn last line (an interrupted write) is dropped with a note.
    """
    paths = record_paths(sources)
    checks = _MatchChecks()
    kind = None
    counts: dict[tuple[str, str], list[int]] = {}
    seen: dict[tuple, str] = {}
    settings: list[dict] = []
    notes: list[str] = []
    itself: dict[str, int] = {}
    total = 0
    for path in paths:
        rf = read_record_file(path)
        notes.extend(rf.notes)
        if not rf.entries and not rf.notes:
            notes.append(f"{path} holds no game records")
        for number, rec in rf.entries:
            where = f"{path}:{number}"
            if not isinstance(rec, dict):
                raise ValueError(f"{where}: a record must be a JSON object, got {json.dumps(rec)[:40]}")
            try:
                this = _record_kind(rec)
                key, a, b, outcome, setting = _check_record(rec, this, checks)
            except ValueError as exc:  # BadRecord
                raise ValueError(f"{where}: {exc}") from None
            if kind is None:
                kind = this
            elif this != kind:
                raise ValueError(f"{where}: a {this} record among {kind} records; rate the records of one game "
                                 f"at a time")
            if key in seen:
                raise ValueError(f"{where}: the same game is already counted at {seen[key]} (a file given twice, "
                                 f"or a copy)")
            seen[key] = where
            if setting is not None and setting not in settings:
                settings.append(setting)
            if a == b:  # a match of an engine against itself (a seat-bias check): no rating information
                itself[a] = itself.get(a, 0) + 1
                continue
            if (b, a) in counts:
                a, b, outcome = b, a, 2 - outcome
            counts.setdefault((a, b), [0, 0, 0])[outcome] += 1
            total += 1
    if kind is None:
        where = ", ".join(str(p) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
        raise ValueError(f"no game records in {where}: nothing to rate")
    if itself:
        games = ", ".join(f"{n} of {spec}" for spec, n in itself.items())
        if not counts:
            raise ValueError(f"the records hold only games of an engine against itself ({games}): nothing to rate")
        unit = KINDS.get(kind, "game")
        notes.append(f"left out {sum(itself.values())} {unit}s of an engine against itself ({games}): they "
                     f"say nothing about ratings")
    if len(settings) > 1:
        notes.append(f"the records come from {len(settings)} different game settings (board, rules, ply cap or "
                     f"openings); their games are pooled")
    results = [(a, b, w, d, l) for (a, b), (w, d, l) in counts.items()]
    return RecordResults(kind, results, total, [str(p) for p in paths], settings, notes)


def rating_list(results, *, draw_model: str = "davidson", anchor: str | None = None, anchor_elo: float = 0.0,
                confidence: float = 0.95, virtual_draws: float = 1.0) -> dict:
    """:func:`jitsearch.arena.ratings.fit_ratings` of ``results`` (a list of
    (engine_a, engine_b, wins_a, draws, losses_a), or a :class:`RecordResults`),
    shifted so that ``anchor`` (or, without one, the mean, as Ordo's ``-a``
    does) is at ``anchor_elo``.

    Returns fit_ratings' dict, with ``anchor_elo`` and, for every player,
    ``los_next``: the probability that it is stronger than the next one
    down the list (None for the last), from the fit's covariance.
    Raises ValueError for results that do not determine ratings (one
    engine, engines never connected by games, every game drawn under
    Davidson's model), RuntimeError when the fit does not converge.
    """
    if isinstance(results, RecordResults):
        results = results.results
    anchor_elo = check_float("anchor_elo", anchor_elo)
    fit = fit_ratings(results, draw_model=draw_model, anchor=anchor, confidence=confidence,
                      virtual_draws=virtual_draws)
    players = fit["players"]
    for k, p in enumerate(players):
        p["rating"] += anchor_elo
        p["los_next"] = fit["los"][k][k + 1] if k + 1 < len(players) else None
    fit["anchor_elo"] = anchor_elo
    return fit


def describe_fit(fit: dict) -> str:
    """One line: the model, the gauge and the intervals of a :func:`rating_list`."""
    gauge = (f"{fit['anchor']} at {fit['anchor_elo']:g}" if fit["anchor"] is not None
             else f"mean {fit['anchor_elo']:g}")
    nu = f", nu {fit['draw_nu']:.3g}" if fit.get("draw_nu") else ""
    return (f"maximum likelihood, {fit['draw_model']} draws{nu}, {gauge}, {fit['confidence']:.0%} intervals")


def _pct(x) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{100 * x:.1f}%"


def elo_text(fit: dict, rating: float) -> str:
    """A rating as shown: signed around 0 (``+35``), plain around another anchor value (``1535``)."""
    return f"{rating:+.0f}" if fit["anchor_elo"] == 0 else f"{rating:.0f}"


def table_rows(fit: dict) -> list[list[str]]:
    """The rows of a rating list as text: rank, engine, Elo, ± error, games,
    score, draws, LOS over the next engine."""
    rows = []
    for k, p in enumerate(fit["players"]):
        rows.append([str(k + 1), p["name"], elo_text(fit, p["rating"]),
                     "-" if p["name"] == fit["anchor"] else f"{p['error']:.0f}", str(p["games"]), _pct(p["score"]),
                     _pct(p["draws"] / p["games"]),
                     _pct(p["los_next"])])
    return rows


#: Column names of :func:`table_rows`.
COLUMNS = ("#", "engine", "Elo", "±", "games", "score", "draws", "LOS next")


def ratings_markdown(fit: dict, title: str | None = None) -> str:
    """A rating list as a Markdown table (with a caption line under it: the
    model, and the prior when one was needed)."""
    lines = [f"{title}", ""] if title else []
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "|".join("---" if c == "engine" else "--:" for c in COLUMNS) + "|")
    for row in table_rows(fit):
        row = list(row)
        row[1] = f"`{row[1]}`"
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", describe_fit(fit) + "; LOS next: the probability that an engine is stronger than the next "
              "one down."]
    if fit["prior"]:
        lines.append(f"Prior: {fit['prior']['method']} ({fit['prior']['reason']}).")
    return "\n".join(lines) + "\n"


def plot_ratings(fit: dict, path, title: str | None = None) -> None:
    """A horizontal error-bar chart of a rating list (best engine on top,
    each bar its rating's interval), written to ``path`` (.png, .svg or
    .pdf; folders created). Needs matplotlib (the ``bench`` extra): without
    it, a ValueError saying how to install it."""
    path = Path(path)
    if path.suffix.lower() not in PLOT_SUFFIXES:
        raise ValueError(f"the ratings chart is written as {', '.join(PLOT_SUFFIXES)}, got {path.name!r}")
    try:
        import matplotlib
    except ImportError:
        raise ValueError("the ratings chart needs matplotlib: pip install 'jitsearch[bench]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players = fit["players"]
    n = len(players)
    ys = list(range(n - 1, -1, -1))  # the best engine on top
    ratings = [p["rating"] for p in players]
    errors = [p["error"] for p in players]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * n))
    ax.errorbar(ratings, ys, xerr=errors, fmt="o", color="C0", ecolor="C0", elinewidth=1.5, capsize=4)
    ax.axvline(fit["anchor_elo"], color="grey", lw=0.8, ls="--")
    ax.set_yticks(ys)
    ax.set_yticklabels([p["name"] for p in players], fontsize=8)
    lo = min(r - e for r, e in zip(ratings, errors))
    hi = max(r + e for r, e in zip(ratings, errors))
    span = max(hi - lo, 1.0)
    ax.set_xlim(lo - 0.05 * span, hi + 0.05 * span)
    for y, r, e, p in zip(ys, ratings, errors, players):  # a column of values right of the plot
        interval = "(anchor)" if p["name"] == fit["anchor"] else f"± {e:.0f}"
        ax.annotate(f"{elo_text(fit, r)} {interval}  ({p['games']} games, {100 * p['score']:.0f}%)", (1.0, y),
                    xycoords=("axes fraction", "data"), xytext=(8, 0), textcoords="offset points", va="center",
                    fontsize=8)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel("Elo")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title or f"ratings ({describe_fit(fit)})", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)

"""JSONL record files of tournaments, and small checks the tournaments share.

A tournament appends one JSON record per finished game (or pair) to a file,
flushed as it is written and synced at least every second, so an
interrupted run loses nothing and ``resume`` skips what is already there.
Before any game is played every line is parsed (:func:`read_record_file`)
and checked (:func:`check_records`) by a tournament-specific function that
returns the record's game key or raises :class:`BadRecord` (a line that is
not a usable record) or :class:`ForeignRecord` (a record of another
tournament). A torn last line, left by an interrupted write, is dropped with
a note and cut off by :class:`RecordSink` before it appends. Records carry a
check value (:func:`record_check`, blake2b of their other fields), so an
edited record is caught.

Shared by the tournaments of :mod:`jitsearch.arena` (random-tree games,
Kalah, Oware) and by the rating lists that read their files.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._checks import is_int

#: Most pairs one tournament may ask for (records are kept in memory).
MAX_PAIRS = 1_000_000


# -- small checks and statistics -----------------------------------------------------------

def check_count(name: str, value, high: int, low: int = 1) -> int:
    """``value`` as an int in ``low..high`` (bools and floats refused)."""
    if not is_int(value) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low}..{high:,}, got {value!r}")
    return int(value)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion (``successes`` may be fractional,
    e.g. wins + draws/2); never of zero width for n >= 1."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))



# -- record files ---------------------------------------------------------------------------

class BadRecord(ValueError):
    """A line that is not a usable record; the message lacks the ``file:line`` prefix."""


class ForeignRecord(Exception):
    """A record written for another tournament; the message says what differs."""


def config_id(a: str, b: str, match) -> str:
    """A match's config id: blake2b (6 bytes, hex) of its players and its settings dataclass (every field);
    records carry it, so a file of another match is told from this one's."""
    text = json.dumps([a, b, asdict(match)], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def record_check(rec: dict) -> str:
    """Check value of a record: blake2b (8 bytes, hex) of the canonical JSON
    (sorted keys, no spaces) of every field but ``check``."""
    body = {k: v for k, v in rec.items() if k != "check"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def seal(rec: dict) -> dict:
    """Add the record's check value (as its last field)."""
    rec.pop("check", None)
    rec["check"] = record_check(rec)
    return rec


def verify_check(rec: dict) -> bool:
    """True when ``rec`` carries a matching check value, False when it carries
    none (older files); raises :class:`BadRecord` when it does not match."""
    if "check" not in rec:
        return False
    if rec["check"] != record_check(rec):
        raise BadRecord("its check value does not match its fields (an edited or damaged record)")
    return True


def _show(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def get_field(rec: dict, key: str, kind: str, *, low=None, high=None, choices=None):
    """``rec[key]`` checked to be ``kind`` (int, bool, str, number, ints, dict)
    and in range; raises :class:`BadRecord` saying what is wrong."""
    if key not in rec:
        raise BadRecord(f"missing key {key!r}")
    v = rec[key]
    ok = {
        "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
        "bool": lambda x: isinstance(x, bool),
        "str": lambda x: isinstance(x, str),
        "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x),
        "ints": lambda x: isinstance(x, list) and all(isinstance(y, int) and not isinstance(y, bool) for y in x),
        "dict": lambda x: isinstance(x, dict),
    }[kind](v)
    if not ok:
        what = {"int": "an integer", "bool": "true or false", "str": "a string", "number": "a finite number",
                "ints": "a list of integers", "dict": "a JSON object"}[kind]
        raise BadRecord(f"{key} must be {what}, got {_show(v)}")
    if choices is not None and v not in choices:
        raise BadRecord(f"{key} must be one of {', '.join(map(str, choices))}, got {_show(v)}")
    if (low is not None and v < low) or (high is not None and v > high):
        span = f"{low if low is not None else '-inf'}..{high if high is not None else 'inf'}"
        raise BadRecord(f"{key} {v} is out of range {span}")
    return v


def dict_differences(found: dict, expected: dict) -> str:
    """'name X in the file, Y here; ...' for the keys where two settings dicts differ."""
    keys = sorted(set(found) | set(expected))
    diffs = [f"{k} {_show(found.get(k))} in the file, {_show(expected.get(k))} here"
             for k in keys if found.get(k) != expected.get(k)]
    return "; ".join(diffs)


@dataclass
class RecordFile:
    """The lines of a JSONL record file, parsed but not yet checked.

    ``entries``: (line number, parsed JSON value); ``cut_at``: byte size to
    truncate to before appending (a torn last line), else None;
    ``needs_newline``: the last line is complete but lacks its newline.
    """

    path: Path
    entries: list = field(default_factory=list)
    cut_at: int | None = None
    needs_newline: bool = False
    notes: list = field(default_factory=list)


def check_out_path(out) -> Path:
    """The path of a record file: refuse a directory or something that is not
    a regular file, and create its folder (before any game is played)."""
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"{path} is a directory: the game records need a file path")
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} is not a regular file: the game records need a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the folder of {path}: {exc.strerror or exc}") from None
    return path


def read_record_file(path: Path) -> RecordFile:
    """Parse every line of ``path`` (missing file: no lines). A last line
    without its newline that does not parse is a write cut short by an
    interruption: it is dropped with a note. Raises ValueError naming
    ``file:line`` for invalid UTF-8 or a line that is not JSON."""
    rf = RecordFile(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return rf
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    body, newline, tail = data.rpartition(b"\n")
    lines = body.split(b"\n") if newline else []
    for number, raw in enumerate(lines, 1):
        value = _parse_line(path, number, raw)
        if value is not _BLANK:
            rf.entries.append((number, value))
    if tail.strip():
        number = len(lines) + 1
        try:
            value = _parse_line(path, number, tail)
        except ValueError:
            rf.cut_at = len(data) - len(tail)
            rf.notes.append(f"{path}:{number}: dropped an incomplete last line ({len(tail)} bytes without a "
                            f"newline, left by an interrupted write)")
        else:
            rf.entries.append((number, value))
            rf.needs_newline = True
    elif tail:
        rf.cut_at = len(data) - len(tail)
    return rf


_BLANK = object()


def _parse_line(path: Path, number: int, raw: bytes):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}:{number}: not valid UTF-8 text (byte {exc.start + 1} of the line)") from None
    if not text.strip():
        return _BLANK
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ValueError(f"{path}:{number}: not a JSON record ({msg})") from None


def check_records(rf: RecordFile, check_fn, describe_key=str) -> list[tuple]:
    """[(key, record)] for every line of ``rf``; ``check_fn(record)`` returns
    the record's game key or raises :class:`BadRecord` / :class:`ForeignRecord`.

    Raises ValueError: ``file:line: what is wrong`` for a bad line or a
    duplicate game, one line naming the file and what differs for a file of
    another tournament.
    """
    seen: dict = {}
    out = []
    for number, rec in rf.entries:
        where = f"{rf.path}:{number}"
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: a record must be a JSON object, got {_show(rec)}")
        try:
            key = check_fn(rec)
        except ForeignRecord as exc:
            raise ValueError(f"{rf.path} holds games of another tournament: {exc} (line {number}); "
                             f"choose another output file") from None
        except ValueError as exc:  # BadRecord, or a value error from a parser it called
            raise ValueError(f"{where}: {exc}") from None
        if key in seen:
            raise ValueError(f"{where}: duplicate game {describe_key(key)} (first at line {seen[key]})")
        seen[key] = number
        out.append((key, rec))
    return out


class RecordSink:
    """Appends records to a file: cuts a torn last line first, flushes each
    record as it is written (a record on disk is a finished game, whatever
    happens to the process) and syncs it to the disk at most every
    ``sync_every`` seconds and on close (a sync per record would cost more
    than a quick game)."""

    def __init__(self, rf: RecordFile, sync_every: float = 1.0):
        path = rf.path
        self._sync_every = sync_every
        self._synced = time.monotonic()
        try:
            if rf.cut_at is not None:
                with open(path, "r+b") as fh:
                    fh.truncate(rf.cut_at)
            self._fh = open(path, "a", encoding="utf-8")
            if rf.needs_newline:
                self._fh.write("\n")
                self._fh.flush()
        except OSError as exc:
            raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None

    def write(self, rec: dict) -> None:
        self._fh.write(json.dumps(rec) + "\n")
        self._fh.flush()
        if time.monotonic() - self._synced >= self._sync_every:
            self._sync()

    def _sync(self) -> None:
        try:
            os.fsync(self._fh.fileno())
        except OSError:  # some file systems cannot sync; the data is flushed
            pass
        self._synced = time.monotonic()

    def close(self) -> None:
        if not self._fh.closed:
            self._sync()
            self._fh.close()


def legacy_game() -> str | None:
    """The registered game whose match records of the arena's older format carry no ``game`` field
    (:attr:`ArenaHooks.legacy_records <jitsearch.games.protocol.ArenaHooks>`: Kalah's); None when no game
    has such records."""
    from ..games import GAMES

    return next((g.name for g in GAMES.values() if g.arena is not None and g.arena.legacy_records), None)


def legacy_format(rec: dict) -> bool:
    """True for a game record of the older format (no ``game`` field: :func:`legacy_game`'s)."""
    return isinstance(rec, dict) and "game" not in rec and "a_result" in rec and legacy_game() is not None


def result_of(margin: int, a_player: int) -> str:
    """A's result (``win``, ``draw``, ``loss``) of a game of player 0's ``margin``, A being ``a_player``."""
    mine = margin if a_player == 0 else -margin
    return "win" if mine > 0 else ("loss" if mine < 0 else "draw")


def check_exact_moves(rec: dict, moves: list) -> None:
    """A record's ``exact_moves`` (when it has them): ``[ply, side, margin]`` each, ``ply`` an index into
    ``moves``, ``side`` ``"a"`` or ``"b"``; else :class:`BadRecord`."""
    exact_moves = rec.get("exact_moves", [])
    if not isinstance(exact_moves, list) or not all(
            isinstance(e, list) and len(e) == 3 and is_int(e[0]) and 0 <= e[0] < len(moves)
            and e[1] in ("a", "b") and is_int(e[2]) for e in exact_moves):
        raise BadRecord("exact_moves must be a list of [ply, 'a' or 'b', margin], ply an index into moves")


def game_key_text(key) -> str:
    """A game's key (pair, seat) as the file checks name it."""
    return f"(pair {key[0]}, seat {key[1]})"


def read_records(path) -> list[dict]:
    """Every JSON object line of ``path``, unchecked (for inspection; a match checks each record of its
    file, :func:`check_records`)."""
    rf = read_record_file(Path(path))
    return [rec for _, rec in rf.entries if isinstance(rec, dict)]

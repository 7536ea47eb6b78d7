"""An opening book of exact move values: every position of the first plies
of Kalah(m, n) with the exact value of each legal move, so that an engine
plays the opening perfectly without searching.

File format (UTF-8 text, one record a line)::

    {"body_check": "...", "check": "...", "empty_capture": false, "format": "jitsearch-kalah-opening-book",
     "houses": 6, "plies": 2, "positions": 43, "seeds": 4, "version": 1, ...}
    0<TAB>4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0<TAB>1:+2 2:+0 3:+6 4:+2 5:+0 6:+2
    1<TAB>...

The first line is a JSON header: the board (``houses``, ``seeds``), the rule
set (``empty_capture``), ``plies`` (the book holds every position reachable
from the start in at most that many plies; a move that earns an extra turn
is a ply too), the number of ``positions``, how it was made (``command``,
``endgame_seeds``, ``seconds``), ``body_check`` (blake2b of every byte
after the header line) and ``check`` (of the header's other fields). Each
other line is a position: its ply, its text
(:meth:`~jitsearch.games.kalah.KalahState.to_text`) and, for every legal
move (a pit index, as :meth:`~jitsearch.games.kalah.KalahState.play`
takes it), player 0's final margin under perfect play after that move.

:func:`load_book` checks all of it: both check values, that every line
parses, that each position is legal on the board and reachable in the
stated plies, that its moves are exactly the legal ones, that every margin
fits the seeds (and their parity), and that the values agree with each
other (a position's value is the best of its moves' and equals what its
parent's move says it is). A damaged, truncated or foreign file gives one
``warning:`` line on stderr and ``None``: the caller plays without a book.

:func:`build_book` makes a book with :func:`~jitsearch.games.kalah.move_values`.
Only the positions ``plies`` from the start are searched; every position
before them takes its moves' values from its children, which are all in
the book.

For an engine: load once per game (``book = shipped_book(m, n, rules)`` or
``load_book(path, ...)``) and, before searching, ``move = book_move(book,
state)``; a move that is not None is optimal (ties go to the lowest pit, as
in :func:`~jitsearch.games.kalah.move_values`).

Conventions: player 0 moves first and maximises; a margin is player 0's
final store difference; a value is the margin from the mover's view.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..._checks import check_bool, check_int
from ..._io import check_value
from .state import KalahState

FORMAT = "jitsearch-kalah-opening-book"
VERSION = 1
#: Folder of the books shipped with the package (``kalah-<m>-<n>-<standard|empty-capture>.book``).
BOOKS_DIR = Path(__file__).resolve().parent / "books"
#: Most plies a book may cover (the positions grow about sixfold a ply).
MAX_PLIES = 6
#: Most bytes a book file may have (a bigger file is refused before it is read).
MAX_BYTES = 256 * 1024**2


class BookError(ValueError):
    """A book file that cannot be used; the message says why, in one line."""


@dataclass(frozen=True)
class OpeningBook:
    """Exact move values of the positions of the first ``plies`` plies.

    Attributes: ``houses``, ``seeds`` (per house at the start),
    ``empty_capture``, ``plies``, ``entries`` ({position text: {pit:
    player 0's margin}}), ``header`` (the file's header, for provenance).
    """

    houses: int
    seeds: int
    empty_capture: bool
    plies: int
    entries: dict = field(repr=False)
    header: dict = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, state: KalahState) -> dict | None:
        """{pit: player 0's exact margin after that move} for every legal move of ``state``, or None when
        ``state`` is not in the book (another board or rule set, or deeper than the book)."""
        if not isinstance(state, KalahState):
            raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
        if (state.houses != self.houses or state.empty_capture != self.empty_capture
                or state.seeds_total != 2 * self.houses * self.seeds):
            return None
        values = self.entries.get(state.to_text())
        return None if values is None else dict(values)


def book_move(book: OpeningBook | None, state: KalahState) -> int | None:
    """The book's best move in ``state`` (the highest value for the mover, ties to the lowest pit), or None
    when there is no book or ``state`` is not in it: what an engine calls before searching."""
    if book is None:
        return None
    values = book.lookup(state)
    if not values:
        return None
    sign = 1 if state.player == 0 else -1
    return max(values, key=lambda pit: (sign * values[pit], -pit))


def book_value(book: OpeningBook | None, state: KalahState) -> int | None:
    """``state``'s exact value for the player to move from the book, or None when it is not in it."""
    if book is None:
        return None
    values = book.lookup(state)
    if not values:
        return None
    sign = 1 if state.player == 0 else -1
    return max(sign * v for v in values.values())


# -- positions ---------------------------------------------------------------------------------

def book_positions(houses: int, seeds: int, empty_capture: bool, plies: int) -> dict:
    """{position text: ply} of every position reachable from the start of
    Kalah(houses, seeds) in at most ``plies`` plies (a position reached at
    two depths counts at the shallower), games already over left out."""
    plies = check_int("plies", plies, 0, MAX_PLIES)
    start = KalahState.initial(houses, seeds, empty_capture=check_bool("empty_capture", empty_capture))
    seen = {start.to_text(): 0}
    level = [start]
    for ply in range(1, plies + 1):
        nxt = []
        for s in level:
            for mv in s.legal_moves():
                c = s.play(mv)
                t = c.to_text()
                if not c.is_over and t not in seen:
                    seen[t] = ply
                    nxt.append(c)
        level = nxt
    return seen


# -- the file ----------------------------------------------------------------------------------

def _body_line(ply: int, text: str, values: dict) -> str:
    return f"{ply}\t{text}\t" + " ".join(f"{pit}:{values[pit]:+d}" for pit in sorted(values))


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def dumps_book(book: OpeningBook, **provenance) -> str:
    """The file text of ``book`` (header with check values, then one line a position, by ply then text);
    ``provenance`` (``command``, ``endgame_seeds``, ``seconds``, ``made``...) joins the header."""
    plies = book_positions(book.houses, book.seeds, book.empty_capture, book.plies)
    if set(plies) != set(book.entries):
        raise ValueError("the book's positions are not those of its plies")
    order = sorted(book.entries, key=lambda t: (plies[t], t))
    body = "".join(_body_line(plies[t], t, book.entries[t]) + "\n" for t in order)
    header = {"format": FORMAT, "version": VERSION, "houses": book.houses, "seeds": book.seeds,
              "empty_capture": book.empty_capture, "plies": book.plies, "positions": len(order),
              "body_check": _digest(body.encode())}
    header.update({k: v for k, v in provenance.items() if k not in header})
    header["check"] = check_value(header)
    return json.dumps(header, sort_keys=True) + "\n" + body


def write_book(path, book: OpeningBook, **provenance) -> Path:
    """Write ``book`` to ``path`` (a temporary file renamed over it: a reader never sees half a book)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(dumps_book(book, **provenance), encoding="utf-8")
    tmp.replace(path)
    return path


def parse_book(data: bytes, *, where: str = "book") -> OpeningBook:
    """The :class:`OpeningBook` in ``data`` (a file's bytes), every check of the module docstring done;
    :class:`BookError` (one line, naming ``where``) for the first one that fails."""
    def bad(why):
        return BookError(f"{where}: {why}")

    head, nl, body = data.partition(b"\n")
    if not nl:
        raise bad("no header line (an empty or truncated file)")
    try:
        header = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise bad("the header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise bad("not a Kalah opening book")
    if header.get("version") != VERSION:
        raise bad(f"book version {header.get('version')!r}, this version reads {VERSION}")
    if header.get("check") != check_value(header):
        raise bad("the header was changed (its check value does not match)")
    if header.get("body_check") != _digest(body):
        raise bad("the positions were changed or cut short (their check value does not match)")
    try:
        houses = check_int("houses", header.get("houses"), 1, 16)
        seeds = check_int("seeds", header.get("seeds"), 1, 100)
        ec = check_bool("empty_capture", header.get("empty_capture"))
        plies = check_int("plies", header.get("plies"), 0, MAX_PLIES)
        count = check_int("positions", header.get("positions"), 0)
    except ValueError as exc:
        raise bad(f"bad header: {exc}") from None
    expected = book_positions(houses, seeds, ec, plies)
    total = 2 * houses * seeds
    entries = {}
    try:
        lines = body.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise bad("the positions are not UTF-8 text") from None
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 2):
        parts = line.split("\t")
        try:
            if len(parts) != 3:
                raise ValueError("not <ply> TAB <position> TAB <moves>")
            ply, text = int(parts[0]), parts[1]
            state = KalahState.from_text(text, empty_capture=ec, seeds_total=total)
            values = {}
            for item in parts[2].split(" "):
                pit, _, margin = item.partition(":")
                values[int(pit)] = int(margin)
        except ValueError as exc:
            raise bad(f"line {number}: {exc}") from None
        if state.houses != houses or expected.get(text) != ply:
            raise bad(f"line {number}: {text!r} is not a position {ply} plies from the start")
        if text in entries:
            raise bad(f"line {number}: {text!r} is given twice")
        if sorted(values) != state.legal_moves():
            raise bad(f"line {number}: moves {sorted(values)} are not the legal moves {state.legal_moves()}")
        if any(abs(v) > total or (v - total) % 2 for v in values.values()):
            raise bad(f"line {number}: a margin does not fit {total} seeds")
        entries[text] = values
    if len(entries) != count or set(entries) != set(expected):
        raise bad(f"{len(entries)} positions, the header says {count} and {plies} plies hold {len(expected)}")
    for text, values in entries.items():  # every value agrees with its children's
        state = KalahState.from_text(text, empty_capture=ec)
        for pit, margin in values.items():
            child = state.play(pit)
            got = child.margin if child.is_over else _best_margin(child, entries.get(child.to_text()))
            if got is not None and got != margin:
                raise bad(f"move {pit} of {text!r} is worth {margin:+d}, but the position it reaches is "
                          f"worth {got:+d}")
    return OpeningBook(houses, seeds, ec, plies, entries, header)


def _best_margin(state: KalahState, values: dict | None) -> int | None:
    """Player 0's margin of ``state`` under perfect play, from its moves' margins (None without them)."""
    if not values:
        return None
    return max(values.values()) if state.player == 0 else min(values.values())


def load_book(path, *, houses: int | None = None, seeds: int | None = None, empty_capture: bool | None = None,
              warn=None) -> OpeningBook | None:
    """The book in ``path``, checked (module docstring), or None with one
    ``warning:`` line (``warn(text)``, default stderr) when the file is
    missing, unreadable, damaged, or of another board or rule set than the
    ``houses``/``seeds``/``empty_capture`` given: the engine then plays
    without it."""
    if warn is None:
        def warn(text):
            print(text, file=sys.stderr, flush=True)
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise BookError(f"{path}: {size:,} bytes, more than a book may have ({MAX_BYTES:,})")
        book = parse_book(path.read_bytes(), where=str(path))
        wanted = {"houses": houses, "seeds": seeds, "empty_capture": empty_capture}
        for name, value in wanted.items():
            if value is not None and getattr(book, name) != value:
                raise BookError(f"{path}: a book of {name}={getattr(book, name)}, not {name}={value}")
    except (OSError, BookError) as exc:
        why = str(exc) if isinstance(exc, BookError) else f"{path}: {exc.strerror or exc}"
        warn(f"warning: opening book not used: {why}")
        return None
    return book


def book_file_name(houses: int, seeds: int, empty_capture: bool) -> str:
    return f"kalah-{houses}-{seeds}-{'empty-capture' if empty_capture else 'standard'}.book"


#: {book path: ((mtime_ns, size), the book or None)}: each shipped file is read and checked once a process.
_LOADED: dict = {}


def shipped_book(houses: int, seeds: int, empty_capture: bool, warn=None) -> OpeningBook | None:
    """The book shipped for that board and rule set (checked), None (silently) when none is shipped, or
    None with one warning line when the shipped file is damaged. The result is kept for the process
    (read again when the file changes): an engine asks at every move, a damaged file warns once."""
    path = BOOKS_DIR / book_file_name(houses, seeds, empty_capture)
    try:
        st = path.stat()
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    got = _LOADED.get(path)
    if got is None or got[0] != stamp:
        got = _LOADED[path] = (stamp, load_book(path, houses=houses, seeds=seeds, empty_capture=empty_capture,
                                                warn=warn))
    return got[1]


# -- the generator -----------------------------------------------------------------------------

def build_book(houses: int, seeds: int, empty_capture: bool, plies: int, *, endgame_seeds: int = 0,
               endgame_cache_dir=None, table_slots: int | None = None, solved: dict | None = None, on_solved=None,
               progress=None, move_progress=None,
               max_bytes: int = 8 * 1024**3) -> OpeningBook:
    """Solve the book of the first ``plies`` plies of Kalah(houses, seeds).

    Every position ``plies`` from the start (and a shallower one whose
    children are not all valued yet: one reached again at its own depth or
    sooner) is solved with :func:`move_values` (an
    ``endgame_seeds`` database, loaded from ``endgame_cache_dir`` or built
    there once, built in memory for every position without it; one transposition table of ``table_slots``
    shared by all the solves), deepest first; each shallower position takes
    its moves' values from its children. ``solved`` ({position text:
    {pit: margin}}) gives positions already solved (a cache, a resumed
    run), and ``on_solved(text, values)`` is called after each new solve,
    so a caller can keep them. ``progress(done, total, text, seconds)``
    after each position; ``move_progress`` is :func:`move_values`' ``progress`` (after each solved move).
    """
    import numpy as np

    from .moves import move_values

    positions = book_positions(houses, seeds, empty_capture, plies)
    solved = {} if solved is None else solved
    entries: dict = {}
    table = None
    order = sorted(positions, key=lambda t: (-positions[t], t))
    for done, text in enumerate(order, 1):
        state = KalahState.from_text(text, empty_capture=empty_capture)
        t0 = time.perf_counter()
        values = {}
        for pit in state.legal_moves():
            child = state.play(pit)
            ct = child.to_text()
            values[pit] = child.margin if child.is_over else _best_margin(child, entries.get(ct))
        if any(v is None for v in values.values()):
            values = solved.get(text)
            if values is None:
                if table is None:
                    from .solver import new_solver_table, table_slots_for

                    slots = table_slots or table_slots_for(KalahState.initial(houses, seeds,
                                                                              empty_capture=empty_capture),
                                                           endgame_seeds, max_bytes)
                    table = new_solver_table(1 << max(4, (slots - 1).bit_length()))
                r = move_values(state, endgame_seeds=endgame_seeds, endgame_cache_dir=endgame_cache_dir,
                                table=table, max_bytes=max_bytes, progress=move_progress)
                if not r["complete"]:
                    raise RuntimeError(f"{text}: the solve did not finish")
                values = {row["move"]: int(row["margin"]) for row in r["moves"]}
                if on_solved is not None:
                    on_solved(text, values)
            values = {int(k): int(v) for k, v in values.items()}
        entries[text] = values
        if progress is not None:
            progress(done, len(order), text, time.perf_counter() - t0)
    return OpeningBook(houses, seeds, bool(empty_capture), plies, entries)

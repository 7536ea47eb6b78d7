"""What ``jitsearch serve`` runs behind its routes, without the web stack: the
one search slot (a worker thread per search, a stop event, a time cap) and
the replay of arena record files.

A search is a :class:`Job`: ``fn(job)`` runs on a daemon thread; the page
polls the job for its ``progress`` and ``result``. One search runs at a time
per server: a second one is refused (:class:`Busy`, one line) until the
first one's thread has ended. At its time cap or on Cancel the job's
``stop`` event is set and the job reports ``stopping``; the search notices it
(every agent passed ``stop`` ends within about a second) and the slot is
free once its thread returns. The slot is never handed on while a search
still runs, so searches cannot pile up behind the page.

Record files are the ``*.jsonl`` files directly in the records directory
whose real path (symbolic links resolved) lies in it: a link to a file
elsewhere is neither listed nor read.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

#: Finished jobs kept for the page to read.
KEEP_JOBS = 32
#: Largest record file the page may open, in bytes.
MAX_RECORD_BYTES = 64 * 1024**2
#: Most games of one record file listed.
MAX_RECORD_GAMES = 20_000


class Busy(Exception):
    """A search is running: one line, HTTP 409."""


class NotFound(Exception):
    """No such job, record file or game: one line, HTTP 404."""


class Job:
    """One search: ``status`` is ``running``, ``done``, ``error`` or ``cancelled``."""

    def __init__(self, number: int, kind: str, cap: float):
        self.id = number
        self.kind = kind
        self.cap = cap
        self.status = "running"
        self.progress: dict = {}
        self.result = None
        self.error: str | None = None
        self.stop = threading.Event()
        self.started = time.monotonic()
        self.ended: float | None = None
        self.stopped_at: float | None = None
        self.stop_why: str | None = None
        self.thread: threading.Thread | None = None

    def cancel(self, why: str = "cancelled") -> None:
        if self.status == "running" and not self.stop.is_set():
            self.stop_why = why
            self.stopped_at = time.monotonic()
            self.stop.set()

    @property
    def busy(self) -> bool:
        """Holds the search slot: its thread has not ended (a stopped search holds it until it returns)."""
        return self.status == "running" or (self.thread is not None and self.thread.is_alive())

    def busy_reason(self) -> str:
        """Why a new search is refused while this one holds the slot (one line)."""
        now = time.monotonic()
        if self.stopped_at is None:
            return (f"a search is already running ({self.kind}, {now - self.started:.1f} s so far): wait for it or "
                    f"cancel it")
        return (f"a search is still stopping ({self.kind}, {self.stop_why}, {now - self.stopped_at:.1f} s ago): "
                f"the slot is free once it has ended; try again in a moment")

    def to_json(self) -> dict:
        end = self.ended if self.ended is not None else time.monotonic()
        return {"id": self.id, "kind": self.kind, "status": self.status, "progress": dict(self.progress),
                "result": self.result, "error": self.error, "seconds": round(end - self.started, 3),
                "cap": self.cap, "stopping": self.stop.is_set() and self.status == "running"}


class Searches:
    """The server's search slot and its recent jobs."""

    def __init__(self, max_seconds: float):
        self.max_seconds = max_seconds
        self._lock = threading.Lock()
        self._jobs: dict[int, Job] = {}
        self._numbers = itertools.count(1)
        self._current: Job | None = None

    def start(self, kind: str, fn) -> Job:
        """Run ``fn(job)`` on a worker thread; its return value becomes ``job.result``. A ``ValueError``
        becomes ``job.error`` (one line); a ``KeyboardInterrupt`` (a stopped search) ends the job as
        ``cancelled``. Raises :class:`Busy` while another search holds the slot."""
        with self._lock:
            cur = self._current
            if cur is not None and cur.status != "running" and cur.thread is not None:
                cur.thread.join(0.2)  # it has answered and is returning
            if cur is not None and cur.busy:
                raise Busy(cur.busy_reason())
            job = Job(next(self._numbers), kind, self.max_seconds)
            self._jobs[job.id] = job
            for old in sorted(self._jobs)[:-KEEP_JOBS]:
                if self._jobs[old].status != "running":
                    del self._jobs[old]
            self._current = job
        timer = threading.Timer(self.max_seconds, job.cancel, args=(f"stopped at this server's time cap of "
                                                                   f"{self.max_seconds:g} s",))
        timer.daemon = True

        def run():
            try:
                result = fn(job)
            except KeyboardInterrupt:
                job.error = job.stop_why or "cancelled"
                job.status = "cancelled"
            except (ValueError, MemoryError) as exc:
                job.error = " ".join(str(exc).split()) if not isinstance(exc, MemoryError) else "out of memory"
                job.status = "error"
            except Exception as exc:  # noqa: BLE001 - a worker must never take the server down
                job.error = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}"
                job.status = "error"
            else:
                job.result = result
                job.status = "done"
            finally:
                job.ended = time.monotonic()
                timer.cancel()

        job.thread = threading.Thread(target=run, name=f"jitsearch-serve-{kind}-{job.id}", daemon=True)
        timer.start()
        job.thread.start()
        return job

    def get(self, number: int) -> Job:
        job = self._jobs.get(number)
        if job is None:
            raise NotFound(f"no search {number} on this server (it finished long ago or never started)")
        return job

    def stop_all(self, why: str = "the server is stopping") -> None:
        """Tell the running search to stop (shutdown)."""
        cur = self._current
        if cur is not None:
            cur.cancel(why)

    def wait_idle(self, seconds: float) -> bool:
        """Wait for the current search to end (tests, shutdown); True when none runs."""
        cur = self._current
        if cur is None or cur.thread is None:
            return True
        cur.thread.join(seconds)
        return not cur.thread.is_alive()


# -- record files -------------------------------------------------------------------------------

def _inside(directory: Path, path: Path) -> bool:
    """``path``'s real path (every link resolved) is a file directly in ``directory``'s real path."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a broken link or a loop
        return False
    return real.parent == directory.resolve() and real.is_file()


def record_files(directory: Path) -> list[dict]:
    """The ``*.jsonl`` files directly in ``directory`` (name and size), sorted by name; a symbolic link is
    listed only where its target is a file directly in ``directory`` too."""
    out = []
    for p in sorted(directory.iterdir()):
        if p.suffix == ".jsonl" and not p.name.startswith(".") and _inside(directory, p):
            out.append({"name": p.name, "bytes": p.stat().st_size})
    return out


def record_path(directory: Path, name: str) -> Path:
    """``directory / name`` for a name that :func:`record_files` lists; anything else is refused."""
    if not isinstance(name, str) or name not in {f["name"] for f in record_files(directory)}:
        raise NotFound(f"no record file {name!r} in the records directory (a .jsonl file directly in it)")
    path = (directory / name).resolve()
    if not _inside(directory, path):  # changed since it was listed
        raise NotFound(f"no record file {name!r} in the records directory (a .jsonl file directly in it)")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ValueError(f"{name}: {path.stat().st_size:,} bytes; the page opens record files up to "
                         f"{MAX_RECORD_BYTES:,} bytes")
    return path


def read_games(path: Path) -> list[dict]:
    """Every game of an arena record file, replayed and checked: per game its ``line``, players
    ``a`` and ``b``, ``pair``, ``seat``, ``a_player``, board ``houses``/``seeds``/``empty_capture``,
    ``start`` (text), ``plies`` (opening plies then the game's moves, pit indices), ``opening``
    (how many of them were the opening), ``positions`` (text after each ply, the start first),
    ``margin``, ``a_result`` and ``game`` (the older format without a game field: Kalah's). A record of
    ``tournament --game NAME`` gives the same keys, the game's own (Oware: ``scores``) and ``reason`` (why it
    ended); its ``start`` is the record's ``opening`` text
    (a text starts a fresh repetition record: the opening's own moves are not in the file). A line that is
    neither is refused as ``FILE:LINE: ...``."""
    from ..arena.records import legacy_game, read_record_file
    from ..games import get

    legacy = get(legacy_game())  # records without a game field: the older format's game (Kalah)

    try:
        rf = read_record_file(path)
    except ValueError as exc:  # its messages name the path: show the page the file's name only
        raise ValueError(str(exc).replace(str(path), path.name)) from None
    games = []
    for number, rec in rf.entries:
        where = f"{path.name}:{number}"
        if len(games) >= MAX_RECORD_GAMES:
            raise ValueError(f"{path.name}: more than {MAX_RECORD_GAMES:,} games; the page opens smaller files")
        if not isinstance(rec, dict):
            raise ValueError(f"{where}: a record must be a JSON object")
        if rec.get("game") is not None:  # the generic match's record (the older format has no game field)
            games.append(_game_record(rec, number, where))
            continue
        match = rec.get("match")
        if not isinstance(match, dict) or not {"houses", "seeds", "empty_capture"} <= set(match):
            raise ValueError(f"{where}: not a Kalah game record (no match settings with houses, seeds and "
                             f"empty_capture; random-tree tournaments and older files cannot be replayed)")
        opening, moves = rec.get("opening", []), rec.get("moves")
        if not (isinstance(opening, list) and isinstance(moves, list)
                and all(isinstance(x, int) and not isinstance(x, bool) for x in opening + moves)):
            raise ValueError(f"{where}: opening and moves must be lists of pit indices")
        try:
            ec = match["empty_capture"]
            if isinstance(rec.get("start"), str):
                state = legacy.from_text(rec["start"], empty_capture=ec)
            else:
                state = legacy.initial(match["houses"], match["seeds"], empty_capture=ec)
            start = state.to_text()
            positions = [start]
            for i, pit in enumerate(opening + moves):
                if pit not in state.legal_moves():
                    raise ValueError(f"ply {i + 1} (pit {pit}) is not a legal move in {state.to_text()}")
                state = state.play(pit)
                positions.append(state.to_text())
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        games.append({"line": number, "game": legacy.name, "a": str(rec.get("a", "?")), "b": str(rec.get("b", "?")),
                      "pair": rec.get("pair"), "seat": rec.get("seat"), "a_player": rec.get("a_player"),
                      "houses": state.houses, "seeds": match["seeds"], "empty_capture": bool(ec), "start": start,
                      "plies": opening + moves, "opening": len(opening), "positions": positions,
                      "margin": state.margin, "a_result": rec.get("a_result"), "finished": state.is_over})
    if not games:
        raise ValueError(f"{path.name}: no game records")
    return games


def _game_record(rec: dict, number: int, where: str) -> dict:
    """One record of ``tournament --game NAME`` (:mod:`jitsearch.arena.game_match`) replayed from its
    ``opening`` text in the record's variant (:func:`read_games`); the game's ``TextUI.board_json`` of the
    final position adds what its board script shows (Oware: ``scores``)."""
    from ..games import get

    try:
        game = get(rec["game"])
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    moves, start = rec.get("moves"), rec.get("opening")
    if not (isinstance(moves, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in moves)):
        raise ValueError(f"{where}: moves must be a list of move numbers")
    if not isinstance(start, str):
        raise ValueError(f"{where}: a {game.name} record needs its opening position (text)")
    match = rec.get("match") if isinstance(rec.get("match"), dict) else {}
    variant = match.get("variant") or ()
    reason = None
    try:
        options = game.check_variant(**{str(k): v for k, v in variant})
        state = game.from_text(start, **options)
        positions = [state.to_text()]
        for i, move in enumerate(moves):
            if move not in state.legal_moves():
                raise ValueError(f"ply {i + 1} (move {move}) is not a legal move in {state.to_text()}")
            if hasattr(state, "end_reason"):  # why a game ended, where the game tells (Oware)
                reason = state.end_reason(move)
            state = state.play(move)
            positions.append(state.to_text())
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    a_seat = rec.get("a_seat")
    extra = game.ui.board_json(state) if game.ui is not None else {}
    return {**{k: v for k, v in extra.items() if k not in ("board",)}, **options,
            "line": number, "game": game.name, "a": str(rec.get("a", "?")), "b": str(rec.get("b", "?")),
            "pair": rec.get("pair"), "seat": a_seat, "a_player": a_seat, "start": positions[0],
            "plies": moves, "opening": 0, "positions": positions, "margin": state.margin,
            "a_result": rec.get("a_score"), "finished": state.is_over,
            "reason": reason if state.is_over else None}

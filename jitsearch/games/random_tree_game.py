"""Games on incremental random trees (seed 001, section 5; Korf & Chickering).

A game is a walk down a fresh incremental random tree of total depth ``D``:
MAX moves at the root, players alternate, and each chooses its move by
searching to its own horizon (``min(horizon, D - depth)``) from the current
node with alpha-beta or forward estimation. The cost of the leaf reached is
the outcome (MAX wants it large).

Every game is played twice on the same tree with the players swapping MAX
and MIN. The pair's winner is the player who played MAX in the game with
the larger outcome; equal outcomes tie the pair. A tournament is N pairs.
In the depth-increment protocol both players start at horizon 1 and, after
each tournament, the one that generated fewer nodes in total gets one more
ply of horizon.

Records (one JSON line per pair) are appended, flushed and synced as pairs
finish, so an interrupted tournament continues with ``resume=True`` and ends
with the same totals as an uninterrupted one. A resume file is checked
before any game is played: every line must be a record of this tournament
(same players, trees and protocol) that agrees with itself, else one
``ValueError`` names the file (and ``file:line`` for a bad record). Ctrl-C
(``KeyboardInterrupt``) stops a tournament between pairs and returns the
totals of the pairs finished, with ``"interrupted": True``.

This module also holds the record-file and worker-process helpers that
:mod:`jitsearch.arena.kalah_tournament` shares (``read_record_file``,
``check_records``, ``RecordSink``, ``run_tasks``).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from numba import njit

from .._io import grouped
from ..search.forward_estimation import BOUNDS_FIXED, BOUNDS_ONLINE, incremental_search
from ..trees.incremental import (
    DEFAULT_EDGE_RANGE,
    IncrementalTree,
    inc_child_key,
    inc_edge_cost,
    inc_root_key,
)

#: Most pairs one tournament may ask for (records are kept in memory).
MAX_PAIRS = 1_000_000
#: Most worker processes a tournament may start.
MAX_WORKERS = 256
#: Most tournaments (rounds) of the depth-increment protocol.
MAX_ROUNDS = 1000
#: A player whose move would search more than about this many nodes is refused.
MAX_NODES_PER_MOVE = 1e10

# player parameter vector: [use_fe, bounds_mode, l, u, delta, horizon]
_P_FE, _P_MODE, _P_L, _P_U, _P_DELTA, _P_H = range(6)


@njit(cache=True, nogil=True)
def play_game(branching, random_branching, edge_lo, edge_span, tree_seed, total_depth, max_player, min_player):
    """One game; returns (outcome, generations of MAX, generations of MIN)."""
    key = inc_root_key(tree_seed)
    cost = 0.0
    gens = np.zeros(2, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    for depth in range(total_depth):
        p = max_player if depth % 2 == 0 else min_player
        horizon = min(np.int64(p[_P_H]), total_depth - depth)
        counter[0] = 0
        _, best, _, _ = incremental_search(
            branching, random_branching, edge_lo, edge_span, key, cost, depth % 2 == 0, horizon,
            p[_P_FE] > 0, np.int64(p[_P_MODE]), p[_P_L], p[_P_U], p[_P_DELTA], counter,
        )
        gens[depth % 2] += counter[0]
        key = inc_child_key(key, best)
        cost += inc_edge_cost(key, edge_lo, edge_span)
    return cost, gens[0], gens[1]


def is_int(x) -> bool:
    """An integer (Python or NumPy), not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_count(name: str, value, high: int, low: int = 1) -> int:
    """``value`` as an int in ``low..high`` (bools and floats refused)."""
    if not is_int(value) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low}..{high:,}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class PlayerSpec:
    """A searcher for random-tree games: ``alphabeta`` or ``fe``.

    Spec strings: ``alphabeta:depth=3`` or ``fe:depth=3,delta=0.5,bounds=online``
    (bounds: exact, online, or ``L/U`` numbers; default online as in the
    paper's tournaments).
    """

    kind: str
    horizon: int = 1
    delta: float = 1.0
    bounds: str = "online"

    @classmethod
    def parse(cls, text: str) -> "PlayerSpec":
        if not isinstance(text, str):
            raise ValueError(f"a player spec is a string such as 'alphabeta:depth=3', got {text!r}")
        kind, _, rest = text.partition(":")
        kind = kind.strip()
        if kind not in ("alphabeta", "fe"):
            raise ValueError(f"player must be alphabeta or fe, got {kind!r} in {text!r}")
        fields = {}
        for item in filter(None, (x.strip() for x in rest.split(","))):
            name, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"player option {item!r} must look like name=value in {text!r}")
            name = name.strip()
            if name in fields:
                raise ValueError(f"player option {name!r} is given twice in {text!r}")
            fields[name] = value.strip()
        known = {"depth", "delta", "bounds"} if kind == "fe" else {"depth"}
        unknown = set(fields) - known
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for {kind}; known: {sorted(known)}")
        try:
            spec = cls(kind, int(fields.get("depth", 1)), float(fields.get("delta", 1.0)),
                       fields.get("bounds", "online"))
        except ValueError:
            raise ValueError(f"bad number in player spec {text!r}") from None
        spec.check()
        return spec

    def check(self) -> None:
        if self.kind not in ("alphabeta", "fe"):
            raise ValueError(f"player must be alphabeta or fe, got {self.kind!r}")
        if not is_int(self.horizon) or not 1 <= self.horizon <= 64:
            raise ValueError(f"depth (horizon) must be an integer in 1..64, got {self.horizon!r}")
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)) or not 0 < self.delta <= 1:
            raise ValueError(f"delta must lie in (0, 1], got {self.delta!r}")
        if not isinstance(self.bounds, str):
            raise ValueError(f"bounds must be exact, online or L/U, got {self.bounds!r}")
        if self.bounds not in ("exact", "online"):
            parts = self.bounds.split("/")
            try:
                lo, hi = (float(x) for x in parts) if len(parts) == 2 else (math.nan, math.nan)
            except ValueError:
                lo = hi = math.nan
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(f"bounds must be exact, online or L/U with finite numbers L <= U, "
                                 f"got {self.bounds!r}")

    def __str__(self) -> str:
        if self.kind == "alphabeta":
            return f"alphabeta:depth={self.horizon}"
        return f"fe:depth={self.horizon},delta={self.delta:g},bounds={self.bounds}"

    def params(self, tree: IncrementalTree) -> np.ndarray:
        mode, lo, hi = BOUNDS_FIXED, float(tree.edge_lo), float(tree.edge_hi)
        if self.bounds == "online":
            mode = BOUNDS_ONLINE
        elif self.bounds != "exact":
            lo, hi = (float(x) for x in self.bounds.split("/"))
        return np.array([1.0 if self.kind == "fe" else 0.0, mode, lo, hi, self.delta, self.horizon])


@dataclass(frozen=True)
class GameConfig:
    """The random trees games are played on (checked when built)."""

    branching: int = 5
    random_branching: bool = True
    depth: int = 10
    edge_lo: int = DEFAULT_EDGE_RANGE[0]
    edge_hi: int = DEFAULT_EDGE_RANGE[1]
    seed: int = 0

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        if not is_int(self.branching) or self.branching < 1:
            raise ValueError(f"branching must be an integer >= 1, got {self.branching!r}")
        if not isinstance(self.random_branching, (bool, np.bool_)):
            raise ValueError(f"random_branching must be True or False, got {self.random_branching!r}")
        if not is_int(self.depth) or not 1 <= self.depth <= 64:
            raise ValueError(f"the game depth must be an integer in 1..64 (plies of a game), got {self.depth!r}")
        for name in ("edge_lo", "edge_hi"):
            if not is_int(getattr(self, name)):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if not is_int(self.seed) or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        self.tree(0)  # the tree's own limits (edge range, exact float costs)

    def tree(self, pair: int) -> IncrementalTree:
        return IncrementalTree(self.branching, self.depth, seed=pair_seed(self.seed, pair),
                               random_branching=self.random_branching, edge_lo=self.edge_lo, edge_hi=self.edge_hi)


def pair_seed(seed: int, pair: int) -> int:
    """Seed of pair ``pair``'s tree: a hash, so tournaments never share trees."""
    digest = hashlib.blake2b(f"{seed}:{pair}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def pair_winner(outcome_a_max: float, outcome_b_max: float) -> str:
    """'a', 'b' or 'tie': the player that played MAX when the larger outcome came."""
    if outcome_a_max > outcome_b_max:
        return "a"
    if outcome_b_max > outcome_a_max:
        return "b"
    return "tie"


def play_pair(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pair: int) -> dict:
    tree = config.tree(pair)
    pa, pb = a.params(tree), b.params(tree)
    args = (tree.branching, tree.random_branching, tree.edge_lo, np.uint64(tree.edge_span),
            np.uint64(tree.seed), tree.depth)
    out1, a_gens1, b_gens1 = play_game(*args, pa, pb)  # a is MAX
    out2, b_gens2, a_gens2 = play_game(*args, pb, pa)  # b is MAX
    return {
        "pair": pair,
        "tree_seed": tree.seed,
        "a": str(a),
        "b": str(b),
        "outcome_a_max": float(out1),
        "outcome_b_max": float(out2),
        "winner": pair_winner(out1, out2),
        "nodes_a": int(a_gens1 + a_gens2),
        "nodes_b": int(b_gens1 + b_gens2),
    }


def tally(records) -> dict:
    """Totals of pair records: wins, ties, rates (with a Wilson interval), nodes."""
    n = len(records)
    a = sum(r["winner"] == "a" for r in records)
    b = sum(r["winner"] == "b" for r in records)
    ties = n - a - b
    score = (a + 0.5 * ties) / n if n else math.nan
    return {
        "pairs": n,
        "a_wins": a,
        "b_wins": b,
        "ties": ties,
        "a_win_rate": a / n if n else math.nan,
        "a_score": score,
        "a_win_rate_ci95": wilson(a, n),
        "nodes_a": int(sum(r["nodes_a"] for r in records)),
        "nodes_b": int(sum(r["nodes_b"] for r in records)),
    }


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


def _config_id(a: PlayerSpec, b: PlayerSpec, config: GameConfig, round_no: int | None) -> str:
    text = json.dumps([str(a), str(b), config.__dict__, round_no], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


# -- record files (shared with kalah_tournament) -------------------------------------------

class BadRecord(ValueError):
    """A line that is not a usable record; the message lacks the ``file:line`` prefix."""


class ForeignRecord(Exception):
    """A record written for another tournament; the message says what differs."""


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


# -- worker processes (shared with kalah_tournament) ----------------------------------------

_PR_SET_PDEATHSIG = 1


def _worker_init(parent_pid: int, start_method: str) -> None:
    """Pool initializer: only the parent handles Ctrl-C, and a worker exits by
    itself when its parent dies (PR_SET_PDEATHSIG on Linux; a thread that
    polls the parent pid everywhere)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    watched = os.getppid()
    if start_method in ("fork", "spawn") and watched != parent_pid:
        os._exit(1)  # the parent died before the death signal was armed
    threading.Thread(target=_watch_parent, args=(watched,), daemon=True, name="watch-parent").start()


def _watch_parent(ppid: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid:
            os._exit(1)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the worker processes now (a game
    running in a worker is abandoned, not waited for)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 1.0
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(timeout=0.5)


def run_tasks(fn, tasks: list, workers: int, on_result) -> bool:
    """Run ``fn(task)`` for each task (in ``workers`` processes when more than
    one), calling ``on_result(result)`` in this process as each finishes.

    Returns True when Ctrl-C (KeyboardInterrupt, also one raised by
    ``on_result``) stopped the run, False when every task finished. Other
    errors are raised after the workers are stopped.
    """
    try:
        if workers <= 1 or len(tasks) <= 1:
            for t in tasks:
                on_result(fn(t))
            return False
        import multiprocessing

        context = multiprocessing.get_context()
        pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=context,
                                   initializer=_worker_init, initargs=(os.getpid(), context.get_start_method()))
        try:
            futures = [pool.submit(fn, t) for t in tasks]
            for f in as_completed(futures):
                on_result(f.result())
        except BaseException:
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)
    except KeyboardInterrupt:
        return True
    return False


# -- tournaments ---------------------------------------------------------------------------

class _PairRecords:
    """Checks the records of a random-tree game file against one tournament
    (``round_no`` None) or one round of the depth-increment protocol."""

    def __init__(self, a: PlayerSpec, b: PlayerSpec, config: GameConfig, round_no: int | None):
        self.a, self.b, self.config, self.round_no = a, b, config, round_no
        self.game = asdict(config)

    def __call__(self, rec: dict):
        pair = get_field(rec, "pair", "int", low=0, high=MAX_PAIRS - 1)
        tree_seed = get_field(rec, "tree_seed", "int", low=0, high=2**64 - 1)
        a_text, b_text = get_field(rec, "a", "str"), get_field(rec, "b", "str")
        out_a = get_field(rec, "outcome_a_max", "number")
        out_b = get_field(rec, "outcome_b_max", "number")
        winner = get_field(rec, "winner", "str", choices=("a", "b", "tie"))
        get_field(rec, "nodes_a", "int", low=0)
        get_field(rec, "nodes_b", "int", low=0)
        cid = get_field(rec, "config", "str")
        round_no = rec.get("round")
        if round_no is not None:
            round_no = get_field(rec, "round", "int", low=0, high=MAX_ROUNDS - 1)
        if "game" in rec:
            get_field(rec, "game", "dict")
        if "check" in rec:
            get_field(rec, "check", "str")
        verify_check(rec)
        try:
            pa, pb = PlayerSpec.parse(a_text), PlayerSpec.parse(b_text)
        except ValueError as exc:
            raise BadRecord(f"bad player: {exc}") from None
        if (str(pa), str(pb)) != (a_text, b_text):
            raise BadRecord(f"players {a_text!r} / {b_text!r} are not written in canonical form")
        # -- is it this tournament's?
        if self.round_no is None:
            if round_no is not None:
                raise ForeignRecord(f"round {round_no} of a depth-increment protocol, this run is one tournament")
            if (a_text, b_text) != (str(self.a), str(self.b)):
                raise ForeignRecord(f"players {a_text} vs {b_text} in the file, {self.a} vs {self.b} here")
        else:
            if round_no is None:
                raise ForeignRecord("a single tournament's games, this run is the depth-increment protocol")
            if (replace(pa, horizon=1), replace(pb, horizon=1)) != (replace(self.a, horizon=1),
                                                                     replace(self.b, horizon=1)):
                raise ForeignRecord(f"players {a_text} vs {b_text} in the file, {self.a} vs {self.b} here "
                                    f"(horizons aside)")
        if "game" in rec and rec["game"] != self.game:
            raise ForeignRecord("tree settings differ: " + dict_differences(rec["game"], self.game))
        if tree_seed != pair_seed(self.config.seed, pair):
            if "game" in rec:
                raise BadRecord(f"tree_seed does not belong to pair {pair} of seed {self.config.seed}")
            raise ForeignRecord(f"its trees come from another seed (this run: seed {self.config.seed})")
        if cid != _config_id(pa, pb, self.config, round_no):
            if "game" in rec:
                raise BadRecord("its config id does not agree with its players, trees and round")
            raise ForeignRecord("its trees differ (branching, depth or edge costs): its config id does not "
                                "match this run's settings")
        # -- does it agree with itself?
        if round_no is not None and pa.horizon + pb.horizon != round_no + 2:
            raise BadRecord(f"horizons {pa.horizon} and {pb.horizon} cannot be those of round {round_no} "
                            f"(they sum to round + 2)")
        if round_no == self.round_no and (a_text, b_text) != (str(self.a), str(self.b)):
            raise BadRecord(f"round {round_no} was played as {a_text} vs {b_text} but this run's round "
                            f"{round_no} is {self.a} vs {self.b}: the file's earlier rounds disagree with it")
        if winner != pair_winner(out_a, out_b):
            raise BadRecord(f"winner {winner!r} does not agree with the outcomes {out_a:g} (A as MAX) and "
                            f"{out_b:g} (B as MAX)")
        return (round_no, pair)


def _pair_key_text(key) -> str:
    round_no, pair = key
    return f"(pair {pair})" if round_no is None else f"(round {round_no}, pair {pair})"


def _check_work(spec: PlayerSpec, config: GameConfig, horizon: int | None = None) -> None:
    h = min(spec.horizon if horizon is None else horizon, config.depth)
    nodes = float(config.branching) ** h
    if nodes > MAX_NODES_PER_MOVE:
        raise ValueError(f"{spec.kind} at depth {h} on trees of branching {config.branching} searches up to about "
                         f"{config.branching}**{h} = {nodes:.1e} nodes a move (limit {MAX_NODES_PER_MOVE:.0e}): "
                         f"use a smaller depth or branching")


def run_tournament(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pairs: int, *, out=None,
                   resume: bool = False, round_no: int | None = None, progress=None) -> dict:
    """Play ``pairs`` pairs; append each record to ``out`` (JSONL) as it finishes.

    With ``resume``, pairs already in ``out`` for the same players, trees and
    round are not replayed. Every record already in ``out`` is checked first
    (see the module docstring); without ``resume`` a file that already holds
    this tournament's games is refused. Ctrl-C stops between pairs.

    Returns :func:`tally` of the finished pairs plus the players, ``round``,
    ``interrupted`` (and ``pairs_planned`` when interrupted, ``notes`` when
    the file needed repair).
    """
    check_count("pairs", pairs, MAX_PAIRS)
    if round_no is not None:
        check_count("round_no", round_no, MAX_ROUNDS - 1, low=0)
    for spec in (a, b):
        if not isinstance(spec, PlayerSpec):
            raise ValueError(f"players must be PlayerSpec objects (PlayerSpec.parse('alphabeta:depth=2')), "
                             f"got {spec!r}")
        spec.check()
        _check_work(spec, config)
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a GameConfig, got {config!r}")
    cid = _config_id(a, b, config, round_no)
    done: dict[int, dict] = {}
    notes: list[str] = []
    sink = None
    if out is not None:
        path = check_out_path(out)
        rf = read_record_file(path)
        checked = check_records(rf, _PairRecords(a, b, config, round_no), _pair_key_text)
        mine = [(key[1], rec) for key, rec in checked if key[0] == round_no]
        if mine and not resume:
            raise ValueError(f"{path} already holds this tournament's games: pass --resume or another --out")
        done = {p: rec for p, rec in mine if p < pairs}
        notes = rf.notes
        sink = RecordSink(rf)
    records = dict(done)
    interrupted = False
    try:
        for p in range(pairs):
            if p in records:
                continue
            rec = play_pair(a, b, config, p)
            rec["config"] = cid
            if round_no is not None:
                rec["round"] = round_no
            rec["game"] = asdict(config)
            seal(rec)
            records[p] = rec
            if sink is not None:
                sink.write(rec)
            if progress:
                progress(len(records), pairs)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if sink is not None:
            sink.close()
    result = tally([records[p] for p in range(pairs) if p in records])
    result.update(a=str(a), b=str(b), round=round_no, interrupted=interrupted)
    if interrupted:
        result["pairs_planned"] = pairs
    if notes:
        result["notes"] = list(notes)
    return result


def depth_increment_protocol(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pairs: int, *,
                             max_horizon: int = 6, max_rounds: int = 40, out=None, resume: bool = False,
                             progress=None) -> list[dict]:
    """Korf & Chickering's protocol: both start at horizon 1; after each
    tournament the player with fewer total node generations gains a ply.

    Stops once either horizon would exceed ``max_horizon`` or after
    ``max_rounds`` tournaments. Returns one summary per tournament (with
    both horizons and which player was incremented). Ctrl-C stops it: the
    last summary then has ``"interrupted": True`` (its counts are the pairs
    finished) and ``"incremented": None``; every round's games are in
    ``out`` already, so ``resume=True`` continues.
    """
    check_count("max_horizon", max_horizon, 64)
    check_count("max_rounds", max_rounds, MAX_ROUNDS)
    check_count("pairs", pairs, MAX_PAIRS)
    a = replace(a, horizon=1)
    b = replace(b, horizon=1)
    for spec in (a, b):
        spec.check()
        _check_work(spec, config, horizon=max_horizon)
    rounds: list[dict] = []
    try:
        for r in range(max_rounds):
            res = run_tournament(a, b, config, pairs, out=out, resume=resume, round_no=r,
                                 progress=(lambda done, total, r=r: progress(r, done, total)) if progress else None)
            res["horizon_a"], res["horizon_b"] = a.horizon, b.horizon
            rounds.append(res)
            if res["interrupted"]:
                res["incremented"] = None
                break
            inc_a = res["nodes_a"] < res["nodes_b"] or (res["nodes_a"] == res["nodes_b"]
                                                        and a.horizon <= b.horizon)
            res["incremented"] = "a" if inc_a else "b"
            if inc_a:
                a = replace(a, horizon=a.horizon + 1)
            else:
                b = replace(b, horizon=b.horizon + 1)
            if max(a.horizon, b.horizon) > max_horizon or max(a.horizon, b.horizon) > config.depth:
                break
    except KeyboardInterrupt:  # between two rounds (a round catches its own)
        if not rounds:
            raise
        rounds[-1]["interrupted"] = True
    return rounds


def more_less_points(rounds: list[dict]) -> list[dict]:
    """Per horizon of player b: the MORE and LESS tournaments of seed 001.

    MORE: the tournament at that horizon where player a generated more
    nodes than b (after which b gained a ply); LESS: the tournament just
    before it at the same b horizon (a one ply shallower), if any.
    """
    points = []
    for h, rs in grouped(rounds, "horizon_b"):
        more = next((r for r in rs if r["nodes_a"] > r["nodes_b"]), None)
        less = None
        if more is not None:
            i = rs.index(more)
            less = rs[i - 1] if i > 0 else None
        points.append({
            "horizon_b": h,
            "more": None if more is None else {k: more[k] for k in ("horizon_a", "a_win_rate", "a_score",
                                                                     "nodes_a", "nodes_b")},
            "less": None if less is None else {k: less[k] for k in ("horizon_a", "a_win_rate", "a_score",
                                                                     "nodes_a", "nodes_b")},
        })
    return points

"""Exact values of every legal move of a Kalah position (what a chess
player gets from a tablebase), and solves that survive interruption.

:func:`move_values` solves the position after each legal move exactly
(:func:`jitsearch.games.kalah.solver.solve_exact`: MTD(f) with a
transposition table and, with ``endgame_seeds``, the endgame database for
every position it covers) and reports, per move, player 0's final margin
under perfect play and the value for the player to move (the margin with
the mover's sign). The best move is the one of highest value (ties to the
lowest pit); its value is the position's solved value.

With ``checkpoint=PATH`` each solved move is appended to a JSONL file as it
is solved (a header line naming the position and rules, then one line per
move with a check value); ``resume=True`` takes the moves already there
and solves only the rest, so a long solve killed at any point loses at most
the move in progress. A file of another position or rule set, an edited
line or an illegal move is refused; a torn last line (a kill mid-write) is
dropped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..._io import append_line_synced, check_value, drop_partial_line
from ..._jit import JitWatch
from .endgame import build_endgame_database
from .solver import solve_exact
from .state import KalahState

FORMAT = "jitsearch-kalah-move-values"
VERSION = 1


def _header(state: KalahState) -> dict:
    h = {"format": FORMAT, "version": VERSION, "position": state.to_text(), "empty_capture": state.empty_capture}
    h["check"] = check_value(h)
    return h


def read_checkpoint(path, state: KalahState) -> dict:
    """{move: entry} of a checkpoint file of ``state`` (empty if the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return {}
    if path.is_dir():
        raise ValueError(f"checkpoint {path} is a directory")
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):  # a torn last line: everything before it is whole
        raw = raw[:raw.rfind(b"\n") + 1]
    lines = raw.decode("utf-8", errors="replace").splitlines()
    if not lines:
        return {}
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        raise ValueError(f"{path}:1: not a move-values checkpoint (no JSON header)") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}:1: not a move-values checkpoint")
    if header.get("check") != check_value(header):
        raise ValueError(f"{path}:1: the header was edited (its check value does not match)")
    if header.get("position") != state.to_text() or header.get("empty_capture") != state.empty_capture:
        raise ValueError(f"{path} holds the moves of {header.get('position')!r} "
                         f"({'empty-capture' if header.get('empty_capture') else 'standard'} rules), not of "
                         f"{state.to_text()!r} ({'empty-capture' if state.empty_capture else 'standard'} rules)")
    total = int(sum(int(x) for x in state.board))
    legal = set(state.legal_moves())
    out = {}
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(entry, dict) or entry.get("check") != check_value(entry):
            raise ValueError(f"{path}:{number}: the line was edited (its check value does not match)")
        move, margin = entry.get("move"), entry.get("margin")
        if move not in legal or not isinstance(margin, int) or abs(margin) > total:
            raise ValueError(f"{path}:{number}: move {move!r} with margin {margin!r} does not fit the position")
        out[move] = entry
    return out


def _append(path: Path, entry: dict) -> None:
    entry = dict(entry)
    entry["check"] = check_value(entry)
    append_line_synced(path, json.dumps(entry, sort_keys=True))


def _stopper(stop):
    """A ``solve_exact`` progress callback that ends the solve (as Ctrl-C does) once ``stop`` is set."""
    if stop is None:
        return None

    def progress(*_):
        if stop.is_set():
            raise KeyboardInterrupt

    return progress


def move_values(state: KalahState, *, checkpoint=None, resume: bool = False, time_limit: float | None = None,
                tt_capacity: int | None = None, endgame_seeds: int = 0, endgame_cache_dir=None,
                max_bytes: int = 4 * 1024**3, progress=None, stop=None, table=None) -> dict:
    """Solve every legal move of ``state`` (see the module docstring).

    ``progress(move, row, done, total)`` after each move (rows taken from the
    checkpoint have ``from_checkpoint`` True). ``time_limit`` covers the
    whole call's search (the first run's JIT compile is not counted); a move left unsolved at the limit (or by Ctrl-C, or once
    ``stop``, a ``threading.Event``, is set: within about a second) is
    reported with its bounds and ``complete`` is False. ``table``: one
    transposition table for every move's solve (see
    :func:`~jitsearch.games.kalah.solver.solve_exact`), so that each reuses
    what the others proved; the caller may keep it for later solves of the
    same board and rules.

    Returns ``position``, ``player_to_move``, ``moves`` (per legal move in
    house order: ``move``, ``margin`` = player 0's final margin after it
    under perfect play (None if unsolved), ``value`` = that margin for the
    player to move, ``lower``/``upper`` bounds on the margin, ``nodes``,
    ``seconds``, ``from_checkpoint``), ``best_move``, ``value`` (the best
    value for the mover, = the position's solved value), ``margin`` (player
    0's), ``complete``, ``interrupted``, ``seconds``, ``nodes``.
    """
    if not isinstance(state, KalahState):
        raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
    if state.is_over:
        raise ValueError("the game is over: no move to value")
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ValueError(f"stop must be a threading.Event or None, got {type(stop).__name__}")
    path = None
    done: dict = {}
    if checkpoint is not None:
        path = Path(checkpoint)
        if path.exists() and path.stat().st_size > 0 and not resume:
            raise ValueError(f"{path} already holds a checkpoint: pass --resume to continue it, or choose another "
                             "file")
        done = read_checkpoint(path, state) if resume else {}
        if not path.exists() or path.stat().st_size == 0 or not resume:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w") as fh:
                fh.write(json.dumps(_header(state), sort_keys=True) + "\n")
        else:
            drop_partial_line(path)  # a line torn by a kill, before appending
    db = None
    if endgame_seeds:
        db = build_endgame_database(state.houses, endgame_seeds, state.empty_capture, cache_dir=endgame_cache_dir)
    sign = 1 if state.player == 0 else -1
    start = time.perf_counter()
    moves = state.legal_moves()
    rows = []
    compile_seconds = 0.0
    complete, interrupted = True, False
    for i, mv in enumerate(moves):
        if mv in done:
            e = dict(done[mv])
            row = {"move": mv, "margin": e["margin"], "value": sign * e["margin"], "lower": e["margin"],
                   "upper": e["margin"], "nodes": e.get("nodes", 0), "seconds": e.get("seconds", 0.0),
                   "from_checkpoint": True}
        elif not complete:
            row = {"move": mv, "margin": None, "value": None, "lower": None, "upper": None, "nodes": 0,
                   "seconds": 0.0, "from_checkpoint": False}
        else:
            child = state.play(mv)
            t0 = time.perf_counter()
            if child.is_over:
                r = {"margin": child.margin, "complete": True, "nodes": 0, "lower": child.margin,
                     "upper": child.margin}
            else:
                left = None if time_limit is None else time_limit - (t0 - start - compile_seconds)
                if (left is not None and left <= 0) or (stop is not None and stop.is_set()):
                    r = {"margin": None, "complete": False, "nodes": 0, "lower": None, "upper": None,
                         "stop_reason": "time_limit", "interrupted": stop is not None and stop.is_set()}
                else:
                    with JitWatch(notify=False) as jit:
                        r = solve_exact(child, tt_capacity=tt_capacity, time_limit=left, max_bytes=max_bytes,
                                        endgame_seeds=endgame_seeds if db is not None else 0, endgame_db=db,
                                        progress=_stopper(stop), table=table, stop=stop)
                    compile_seconds += jit.seconds
                    t0 += jit.seconds  # a move's time is its search, not the kernels' compilation
            seconds = time.perf_counter() - t0
            row = {"move": mv, "margin": r["margin"] if r["complete"] else None,
                   "value": sign * r["margin"] if r["complete"] else None, "lower": r.get("lower"),
                   "upper": r.get("upper"), "nodes": int(r.get("nodes", 0)), "seconds": seconds,
                   "from_checkpoint": False}
            if r["complete"]:
                if path is not None:
                    _append(path, {"move": mv, "margin": int(r["margin"]), "nodes": row["nodes"],
                                   "seconds": round(seconds, 3)})
            else:
                complete = False
                interrupted = bool(r.get("interrupted"))
        rows.append(row)
        if progress:
            progress(mv, row, i + 1, len(moves))
    solved = [r for r in rows if r["value"] is not None]
    best = max(solved, key=lambda r: (r["value"], -r["move"])) if complete and solved else None
    return {"position": state.to_text(), "player_to_move": state.player, "empty_capture": state.empty_capture,
            "moves": rows, "best_move": None if best is None else best["move"],
            "value": None if best is None else best["value"], "margin": None if best is None else best["margin"],
            "complete": complete, "interrupted": interrupted, "seconds": time.perf_counter() - start,
            "nodes": sum(r["nodes"] for r in rows), "checkpoint": None if path is None else str(path),
            "compile_seconds": compile_seconds,
            "endgame_seeds": endgame_seeds}

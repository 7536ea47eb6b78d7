"""Connect Four's exact solve as ``jitsearch solve`` reports it (protocol: :attr:`Game.exact`):
Pons's solver (:class:`.solver.Connect4Solver`) with its score, a best move, the nodes, a line a
second while it runs, a time limit and Ctrl-C that end it with the interval found so far, and
every move solved (``--all-moves``).

**Scores** are Pons's, from the view of the player to move (positive: a win with the
``k``-th stone, ``cells / 2 + 1 - k``; 0 a draw; negative: a loss); ``margin`` is the protocol's,
player 0's outcome +1 / 0 / -1."""

from __future__ import annotations

import threading
import time

from ...stop import in_worker, watch
from ..protocol import ExactSolve

#: Options of the solve beyond the time limit.
OPTIONS = ("all_moves",)
#: Table entries of a solve: 2**22 of 16 bytes (64 MiB); fewer when ``max_bytes`` is smaller.
TABLE_BITS = 22
#: Seconds between two progress lines when the interval changed (none for a solve that takes less),
#: and when it did not.
PROGRESS_SECONDS = 1.0
QUIET_SECONDS = 10.0


_KEPT = threading.local()  # a solver per thread and size, its table emptied (O(1)) for each solve


def _solver(state, max_bytes: int):
    """A solver for ``state``'s size with an empty table of at most ``max_bytes`` (2**22 entries, fewer
    when that is too many); kept per thread, so a game's moves (an agent's solves) allocate it once."""
    from .solver import Connect4Solver

    bits = TABLE_BITS
    while bits > 16 and (16 << bits) > max_bytes:
        bits -= 1
    if (16 << bits) > max_bytes:
        raise ValueError(f"the solver's table needs {16 << bits:,} bytes, more than --max-memory allows "
                         f"({max_bytes:,} bytes)")
    kept = _KEPT.__dict__.setdefault("solvers", {})
    key = (state.width, state.height, bits)
    if key not in kept:
        kept.clear()  # one table a thread
        kept[key] = Connect4Solver(state.width, state.height, table_bits=bits)
    kept[key].clear()
    return kept[key]


def _margin(state, score: int) -> int:
    """Player 0's outcome (+1 / 0 / -1) from the mover's score."""
    sign = (score > 0) - (score < 0)
    return sign if state.player == 0 else -sign


def _run(solver, fn, report, label, time_limit, t0):
    """``fn()`` in a worker thread (the kernel releases the GIL) under the solver's stop flag, set at
    ``time_limit`` or on Ctrl-C (the kernel reads it every 1,024 nodes: back within milliseconds);
    a line through ``report`` with the interval so far (module constants: how often). Returns
    ``(result, interrupted)``."""
    stop = threading.Event()
    shown = {"at": time.perf_counter(), "bounds": None}

    def tick():  # a line once a second when the interval changed, else every QUIET_SECONDS
        now = time.perf_counter()
        bounds = (int(solver.bounds[0]), int(solver.bounds[1]))
        quiet = QUIET_SECONDS if bounds == shown["bounds"] else PROGRESS_SECONDS
        if report is not None and now - shown["at"] >= quiet and not stop.is_set():
            shown.update(at=now, bounds=bounds)
            report(f"{label}score in [{bounds[0]}, {bounds[1]}], {int(solver.nodes[0]):,} nodes, {now - t0:.1f} s")

    solver.flag[0] = 0
    deadline = None if time_limit is None else t0 + time_limit
    with watch(stop, solver.flag, 0, deadline=deadline):
        result = in_worker(fn, "jitsearch-connect4-solve", stop, wait_on_interrupt=True, tick=tick)
    return result, stop.is_set()  # set by Ctrl-C only: the deadline sets the flag


def solve(state, *, report, time_limit=None, max_bytes=4 * 1024**3, **_) -> dict:
    """The position's exact score and a move that keeps it (Pons's solver, a fresh table)."""
    t0 = time.perf_counter()
    solver = _solver(state, max_bytes)

    def work():
        r = solver.solve(state)
        move = None if r.score is None else solver.best_move(state, r.score)
        return r, move

    (r, move), interrupted = _run(solver, work, report, "", time_limit, t0)
    out = {"width": state.width, "height": state.height, "complete": r.score is not None and move is not None,
           "score": r.score, "lower": r.lower, "upper": r.upper, "margin": None, "best_move": move,
           "best_column": None if move is None else move + 1, "nodes": int(solver.nodes[0]),
           "table_entries": len(solver.table), "interrupted": interrupted, "seconds": time.perf_counter() - t0}
    if r.score is not None:
        out["margin"] = _margin(state, r.score)
    if not out["complete"] and not interrupted:
        out["stop_reason"] = "time_limit"
    return out


def moves(state, *, report, steps=True, time_limit=None, max_bytes=4 * 1024**3, **_) -> dict:
    """Every legal move's exact score (the mover's, Pons's), one solve each on one table; a move
    that wins or fills the board is scored without a search."""
    t0 = time.perf_counter()
    solver = _solver(state, max_bytes)
    rows = []
    legal = list(state.legal_moves())
    try:
        interrupted = _solve_moves(state, solver, legal, rows, report, steps, time_limit, t0)
    except KeyboardInterrupt:  # between two solves (during one, _run sees it and returns)
        interrupted = True
    solved = [row for row in rows if row["value"] is not None]
    complete = len(solved) == len(legal)
    best = max(solved, key=lambda row: row["value"]) if complete else None
    out = {"width": state.width, "height": state.height, "moves": rows, "complete": complete,
           "interrupted": interrupted, "best_move": None if best is None else best["move"],
           "value": None if best is None else best["value"], "margin": None if best is None else best["margin"],
           "nodes": int(sum(row["nodes"] for row in rows)), "seconds": time.perf_counter() - t0}
    if not complete and not interrupted:
        out["stop_reason"] = "time_limit"
    return out


def _solve_moves(state, solver, legal, rows, report, steps, time_limit, t0) -> bool:
    """Append a row per move of ``legal`` to ``rows``; True when Ctrl-C stopped a solve."""
    cells = state.width * state.height
    interrupted = False
    for done, move in enumerate(legal, 1):
        child = state.play(move)
        started = time.perf_counter()
        if child.is_over:
            score = (cells + 1 - state.ply) // 2 if child.margin != 0 else 0
            lower = upper = score
            nodes = 0
        elif interrupted or (time_limit is not None and started - t0 >= time_limit):
            score, lower, upper, nodes = None, None, None, 0
        else:
            left = None if time_limit is None else time_limit - (started - t0)
            r, interrupted = _run(solver, lambda c=child: solver.solve(c), report if steps else None,
                                  f"column {move + 1}: ", left, started)
            score = None if r.score is None else -r.score
            lower, upper, nodes = -r.upper, -r.lower, r.nodes
        row = {"move": move, "column": move + 1, "value": score, "margin": None if score is None else
               _margin(state, score), "lower": lower, "upper": upper, "nodes": nodes,
               "seconds": time.perf_counter() - started, "from_checkpoint": False}
        rows.append(row)
        if steps:
            what = (f"score {score:+d}" if score is not None else
                    "not solved" + ("" if lower is None else f", score in [{lower}, {upper}]"))
            report(f"move {done}/{len(legal)}, column {move + 1}: {what}")
    return interrupted


def title(state, from_start: bool) -> str:
    """``Connect Four 7x6 from the start`` or ``Connect Four 7x6, 12 stones played``."""
    where = "from the start" if state.ply == 0 else f"{state.ply} stones played"
    return f"Connect Four {state.width}x{state.height}, {where} (Pons's score: the mover's, + wins)"


def stopped(result: dict, options: dict) -> str:
    """The interval found; nothing of the search is kept."""
    return (f"the score lies in [{result['lower']}, {result['upper']}] for the player to move; nothing of the "
            "search is kept")


EXACT = ExactSolve(
    solve=solve, title=title, stopped=stopped, options=OPTIONS, moves=moves,
    rows=("position", "score", "margin", "best_column", "complete", "lower", "upper", "nodes", "table_entries"))

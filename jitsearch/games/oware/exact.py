"""Oware's exact solve as ``jitsearch solve`` reports it (protocol: :attr:`Game.exact`,
:attr:`Game.database`): the iterative-deepening solver of small variants
(:func:`.solver.solve`, OpenSpiel's rules) and, with ``endgame_seeds``, the endgame
database's value (:mod:`.endgame`: endless play without a capture splits the seeds evenly)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ...stop import in_worker
from ..kalah.exact import cached  # the same files (.npy values, a JSON record with checksums)
from ..protocol import EndgameFiles, ExactSolve

#: While the exact solve runs, a line after this many seconds, then every HEARTBEAT_SECONDS.
FIRST_HEARTBEAT_SECONDS = 5.0
HEARTBEAT_SECONDS = 10.0


def _heartbeat(seen, time_limit, done, report):
    """A line through ``report`` until ``done`` is set: a deepening may take minutes."""
    wait = FIRST_HEARTBEAT_SECONDS
    while not done.wait(wait):
        wait = HEARTBEAT_SECONDS
        if seen["depth"] is None:
            continue
        seconds = time.perf_counter() - seen["t0"]
        report(f"exact solve: searching depth {seen['depth']} ({seen['nodes']:,} nodes in the shallower depths), "
               f"{seconds:.0f} s so far" + (f" of at most {time_limit:g} s" if time_limit else
                                           "; no time limit: Ctrl-C stops it, --time-limit SECONDS bounds it"))


def _solve_with_limit(state, time_limit, report, seen):
    """:func:`.solver.solve` in a worker thread: its result, or None when ``time_limit`` passed
    first (the worker is stopped and prints nothing more)."""
    from .solver import solve as solve_exact

    stop = threading.Event()

    def progress(depth, nodes, seconds):  # one line per deepening, once the solve has taken a second
        if not stop.is_set() and seconds >= 1.0:
            report(f"depth {depth} not enough for an exact value ({nodes:,} nodes, {seconds:.1f} s); trying depth "
                   f"{2 * depth}" + ("" if seconds < 60 else ": this variant may be too large to solve"))

    def on_depth(depth, nodes, seconds):
        seen.update(depth=depth, nodes=nodes)

    return in_worker(lambda: solve_exact(state, progress=progress, stop=stop, on_depth=on_depth),
                     "jitsearch-oware-solve", stop, time_limit=time_limit)


def _database(state, endgame_seeds, max_bytes, cache_dir, endgame_progress):
    from ..kalah.endgame_files import discard_temporaries
    from .endgame import build_database

    shown = [0.0]

    def progress(seeds, done, total, seconds):  # at most a line a second, and the last one
        if endgame_progress is not None and (seconds - shown[0] >= 1.0 or done == total):
            shown[0] = seconds
            endgame_progress(done, total, seconds, f"layer {seeds} of {endgame_seeds}, ")

    try:
        return in_worker(lambda: build_database(
            state.houses, endgame_seeds, grand_slam_illegal=state.grand_slam_illegal, max_bytes=max_bytes,
            cache_dir=cache_dir, progress=progress), "jitsearch-oware-database", threading.Event())
    except KeyboardInterrupt:
        discard_temporaries()  # the build goes on in its worker thread until exit: its file goes now
        raise


def solve(state, *, report, time_limit=None, max_bytes=4 * 1024**3, endgame_seeds=0, endgame_cache_dir=None,
          endgame_progress=None) -> dict:
    """The database's value (``endgame_seeds``), then the exact solve; Ctrl-C and ``time_limit``
    end it with ``complete`` False (nothing of an unfinished solve is kept)."""
    t0 = time.perf_counter()
    out = {"houses": state.houses}
    if endgame_seeds:
        try:
            db = _database(state, endgame_seeds, max_bytes, endgame_cache_dir, endgame_progress)
        except KeyboardInterrupt:
            return dict(out, complete=False, interrupted=True, interrupted_in="endgame database",
                        seconds=time.perf_counter() - t0)
        on_board = int(state.board[:2 * state.houses].sum())
        out.update(endgame_seeds=endgame_seeds, endgame_path=db.path, endgame_loaded=db.loaded,
                   seeds_on_board=on_board, endgame_value=None, endgame_result=None)
        if on_board <= endgame_seeds:
            v = db.value_of(state)
            mover = state.scores[state.player] * 2 + v
            other = state.scores[1 - state.player] * 2 + 2 * on_board - v
            out.update(endgame_value=v, endgame_result="win" if mover > other else "draw" if mover == other else "loss")
            report(f"endgame database: {v} half-seeds from here for p{state.player}: {out['endgame_result']} (cycles "
                   "split evenly); now the exact solve under OpenSpiel's rules"
                   + (f" (at most {time_limit:g} s)" if time_limit else " (Ctrl-C stops it)"))
        else:
            report(f"the position has {on_board} seeds on the board, above the database's {endgame_seeds}: no "
                   "database value")
    seen = {"depth": None, "nodes": 0, "t0": time.perf_counter()}
    done = threading.Event()
    threading.Thread(target=_heartbeat, args=(seen, time_limit, done, report), name="jitsearch-oware-heartbeat",
                     daemon=True).start()
    try:
        r = _solve_with_limit(state, time_limit, report, seen)
    except KeyboardInterrupt:
        return dict(out, complete=False, interrupted=True, stopped_at_depth=seen["depth"],
                    seconds=time.perf_counter() - t0, solve_seconds=time.perf_counter() - seen["t0"])
    finally:
        done.set()
    out.update(complete=r is not None, seconds=time.perf_counter() - t0)
    if r is None:
        out["stop_reason"] = "time_limit"
    else:
        out.update(result=r.result, margin=r.margin, best_move=r.move, depth=r.depth, nodes=r.nodes)
    return out


def title(state, from_start: bool) -> str:
    return f"Oware({state.houses}) {state.to_text()}"


def stopped(result: dict, options: dict) -> str:
    """What Ctrl-C kept: the database (only a finished one) and never an unfinished solve."""
    if result.get("interrupted_in") == "endgame database":
        if not options.get("building"):
            return f"while the endgame database {options.get('endgame_path')} was being checked; it is unchanged"
        cache_dir = options.get("endgame_cache_dir")
        return ("the endgame database was not finished and nothing of it was written"
                + (f" to {cache_dir}" if cache_dir is not None else "") + "; the next run builds it from the start")
    depth = result.get("stopped_at_depth")
    where = "" if depth is None else f" while searching depth {depth}"
    kept = f"; the endgame database is cached in {result['endgame_path']}" if result.get("endgame_path") else ""
    return (f"the exact solve was stopped{where} after {result.get('solve_seconds', 0.0):.0f} s and nothing of it "
            f"is kept{kept}; --time-limit SECONDS bounds a solve")


EXACT = ExactSolve(
    solve=solve, title=title, stopped=stopped,
    rows=("result", "margin", "best_move", "depth", "nodes", "endgame_seeds", "seeds_on_board", "endgame_value",
          "endgame_result", "endgame_path"))


def _estimate(state, seeds: int, max_bytes: int) -> dict:
    from ...trees.memory import check_bytes
    from .endgame import estimate_build

    est = estimate_build(state.houses, seeds)
    check_bytes(est["ram_bytes"], max_bytes, f"an Oware endgame database of {est['positions']:,} positions",
                "lower --endgame-seeds or raise --max-memory")
    return est


def _cache_path(cache_dir, state, seeds: int) -> Path:
    from .endgame import cache_path

    return cache_path(cache_dir, state.houses, seeds, state.grand_slam_illegal)


def _default_dir() -> Path:
    from .endgame import default_cache_dir

    return default_cache_dir()


DATABASE = EndgameFiles(estimate=_estimate, cache_path=_cache_path, default_dir=_default_dir, cached=cached,
                        holds="on the board")

"""``jitsearch solve --game oware``: the exact solver of small variants
(:mod:`jitsearch.games.oware.solver`) and, with ``--endgame-seeds S``, the
endgame database's value (:mod:`jitsearch.games.oware.endgame`)."""

from __future__ import annotations

import threading
import time

from rich.table import Table

from ._support import Interrupted, JitWatch, UserError, refuse_options, run_interruptibly
from .common import emit_json, stderr, stop_interrupted, stdout

#: Options of ``solve --game kalah`` that Oware has no counterpart for.
KALAH_ONLY = ("empty_capture", "table_size", "checkpoint_every", "all_moves", "checkpoint", "resume")


def _oware_state(houses, seeds, position):
    from ..games.oware import OwareState

    try:
        if position is not None:
            return OwareState.from_text(position)
        return OwareState.initial(houses, seeds)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _build(endgame_seeds, houses, max_bytes, cache_dir):
    from ..games.kalah.endgame_files import discard_temporaries
    from ..games.oware.endgame import build_database, cache_path, estimate_build
    from ..trees.memory import check_bytes
    from ._endgame_notice import announce_endgame_build, endgame_progress_printer

    try:
        est = estimate_build(houses, endgame_seeds)
        check_bytes(est["ram_bytes"], max_bytes, f"an Oware endgame database of {est['positions']:,} positions",
                    "lower --endgame-seeds or raise --max-memory")
    except ValueError as exc:
        raise UserError(str(exc)) from None
    path = None if cache_dir is None else cache_path(cache_dir, houses, endgame_seeds, False)
    building = announce_endgame_build(est, f"<= {endgame_seeds} seeds on the board", path)
    printer = endgame_progress_printer()
    shown = [0.0]

    def progress(seeds, done, total, seconds):  # at most a line a second, and the last one
        if seconds - shown[0] >= 1.0 or done == total:
            shown[0] = seconds
            printer(done, total, seconds, f"layer {seeds} of {endgame_seeds}, ")

    try:
        with JitWatch():
            return run_interruptibly(build_database, houses, endgame_seeds, max_bytes=max_bytes, cache_dir=cache_dir,
                                     progress=progress)
    except Interrupted:
        discard_temporaries()  # the build goes on in its worker thread until exit: its file goes now
        if not building:
            stop_interrupted(f"while the endgame database {path} was being checked; it is unchanged")
        stop_interrupted("the endgame database was not finished and nothing of it was written"
                         + (f" to {cache_dir}" if cache_dir is not None else "")
                         + "; the next run builds it from the start")
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _progress(depth, nodes, seconds):
    """One line on stderr per deepening, once the solve has taken a second."""
    if seconds < 1.0:
        return
    stderr.print(f"depth {depth} not enough for an exact value ({nodes:,} nodes, {seconds:.1f} s); "
                 f"trying depth {2 * depth}" + ("" if seconds < 60 else ": this variant may be too large to solve"),
                 soft_wrap=True)


#: While the exact solve runs, a line on stderr after this many seconds, then every HEARTBEAT_SECONDS.
FIRST_HEARTBEAT_SECONDS = 5.0
HEARTBEAT_SECONDS = 10.0


def _heartbeat(seen, time_limit, done):
    """Print where the exact solve stands until ``done`` is set: a deepening
    may take minutes, with nothing else to show that it is alive."""
    wait = FIRST_HEARTBEAT_SECONDS
    while not done.wait(wait):
        wait = HEARTBEAT_SECONDS
        if seen["depth"] is None:
            continue
        seconds = time.perf_counter() - seen["t0"]
        stderr.print(f"exact solve: searching depth {seen['depth']} ({seen['nodes']:,} nodes in the shallower "
                     f"depths), {seconds:.0f} s so far"
                     + (f" of at most {time_limit:g} s" if time_limit else
                        "; no time limit: Ctrl-C stops it, --time-limit SECONDS bounds it"), soft_wrap=True)


def _solve_with_limit(state, time_limit, on_depth=None):
    """``solver.solve`` in a worker thread: its result, or None when
    ``time_limit`` passed first; the worker is then stopped (its kernel sees
    the stop within about a thousand nodes) and prints nothing more."""
    from ..games.oware.solver import solve as solve_exact

    stop = threading.Event()

    def progress(depth, nodes, seconds):
        if not stop.is_set():
            _progress(depth, nodes, seconds)

    def solve(s):
        return solve_exact(s, progress=progress, stop=stop, on_depth=on_depth)

    if time_limit is None:
        return run_interruptibly(solve, state)
    box = {}
    done = threading.Event()

    def target():
        try:
            box["result"] = solve(state)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="jitsearch-oware-solve", daemon=True).start()
    end = time.perf_counter() + time_limit
    try:
        while not done.wait(min(0.05, max(end - time.perf_counter(), 0.0))):
            if time.perf_counter() >= end:
                stop.set()
                return None
    except KeyboardInterrupt:
        raise Interrupted() from None
    if "error" in box:
        raise box["error"]
    return box["result"]


def solve_oware(given, *, houses, seeds, position, time_limit, endgame_seeds, as_json, max_bytes, endgame_cache,
                endgame_cache_dir):
    refuse_options(given, KALAH_ONLY, "applies to --game kalah only")
    if endgame_cache_dir is not None and not endgame_cache:
        raise UserError("--endgame-cache-dir and --no-endgame-cache contradict each other: give one")
    if "endgame_cache_dir" in given and not endgame_seeds:
        raise UserError("--endgame-cache-dir applies with --endgame-seeds S (a database to build or load)")
    if endgame_cache_dir is not None and endgame_cache_dir.exists() and not endgame_cache_dir.is_dir():
        raise UserError(f"--endgame-cache-dir {endgame_cache_dir} is a file, not a directory")
    if endgame_seeds < 0:
        raise UserError(f"--endgame-seeds must be >= 0, got {endgame_seeds}")
    state = _oware_state(houses, seeds, position)
    if state.is_over:
        raise UserError("the game is over in this position: nothing to solve")
    if state.grand_slam_illegal:  # pragma: no cover - the CLI has no option for it
        raise UserError("the database is built for OpenSpiel's grand slam rule only here")
    out = {"game": "oware", "houses": state.houses, "position": state.to_text(), "player_to_move": state.player}
    if endgame_seeds:
        from ..games.oware.endgame import default_cache_dir

        cache_dir = None if not endgame_cache else (endgame_cache_dir or default_cache_dir())
        db = _build(endgame_seeds, state.houses, max_bytes, cache_dir)
        on_board = int(state.board[:2 * state.houses].sum())
        out.update(endgame_seeds=endgame_seeds, endgame_path=db.path, endgame_loaded=db.loaded,
                   seeds_on_board=on_board)
        if on_board <= endgame_seeds:
            v = db.value_of(state)
            mover = state.scores[state.player] * 2 + v
            other = state.scores[1 - state.player] * 2 + 2 * on_board - v
            out.update(endgame_value=v, endgame_result="win" if mover > other else "draw" if mover == other
                       else "loss")
        else:
            out.update(endgame_value=None, endgame_result=None)
        if not as_json:  # at once: the exact solve may take long (small variants only)
            if out["endgame_value"] is None:
                stderr.print(f"the position has {on_board} seeds on the board, above --endgame-seeds "
                             f"{endgame_seeds}: no database value")
            else:
                stdout.print(f"endgame database: {out['endgame_value']} half-seeds from here for p{state.player}: "
                             f"{out['endgame_result']} (cycles split evenly); now the exact solve under "
                             "OpenSpiel's rules" + (f" (at most {time_limit:g} s)" if time_limit else
                                                    " (Ctrl-C stops it)"), soft_wrap=True)
    seen = {"depth": None, "nodes": 0, "t0": time.perf_counter()}

    def on_depth(depth, nodes, seconds):
        seen.update(depth=depth, nodes=nodes)

    done = threading.Event()
    threading.Thread(target=_heartbeat, args=(seen, time_limit, done), name="jitsearch-oware-heartbeat",
                     daemon=True).start()
    try:
        with JitWatch() as jit:
            t0 = seen["t0"] = time.perf_counter()
            r = _solve_with_limit(state, time_limit, on_depth)
            wall = time.perf_counter() - t0
    except Interrupted:
        done.set()
        if as_json:
            emit_json(dict(out, complete=False))
        where = "" if seen["depth"] is None else f" while searching depth {seen['depth']}"
        kept = f"; the endgame database is cached in {out['endgame_path']}" if out.get("endgame_path") else ""
        stop_interrupted(f"the exact solve was stopped{where} after {time.perf_counter() - seen['t0']:.0f} s and "
                         f"nothing of it is kept{kept}; --time-limit SECONDS bounds a solve")
    finally:
        done.set()
    out["complete"] = r is not None
    out["compile_seconds"] = jit.seconds
    out["seconds"] = max(wall - jit.seconds, 0.0)
    if r is not None:
        out.update(result=r.result, margin=r.margin, best_move=r.move, depth=r.depth, nodes=r.nodes)
    if as_json:
        emit_json(out)
        return
    table = Table(title=f"Oware({state.houses}) {state.to_text()}", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    for key in ("result", "margin", "best_move", "depth", "nodes", "endgame_seeds", "seeds_on_board",
                "endgame_value", "endgame_result", "endgame_path"):
        if key in out:
            table.add_row(key, "-" if out[key] is None else str(out[key]))
    table.add_row("seconds", f"{out['seconds']:.2f}")
    stdout.print(table)
    if r is None:
        stderr.print(f"time limit reached: the exact solve did not finish in {time_limit:g} s")

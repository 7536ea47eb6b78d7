"""The exact Kalah solver: MTD(f) over resumable null-window alpha-beta
tests to the end of the game, with seed-count bounds, a transposition table
of bounds on the rest of the game, endgame databases and checkpoints.

Values are player 0's final margin (stores plus the seeds each side keeps);
player 0 maximises. See :func:`solve_exact` and the test kernel
:func:`.null_window.null_window_test`.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import warnings

import numpy as np

from ..._checks import check_bool, check_int
from ..._jit import CompileBeside, JitWatch
from ...stop import MIN_WAIT_SECONDS, check_stop, watch
from ...trees.memory import check_bytes, format_bytes
from .alphabeta import ABORTED_MOVE, EVAL_STORE, kalah_alphabeta, new_table
from .checkpoint import check_checkpoint_dir, checkpoint_exists, load_solve_state, save_solve_state
from .endgame import build_endgame_database
from .endgame_files import EndgameDatabaseError, mark_damaged
from .null_window import (DATABASE_DAMAGED, NO_DATABASE, PAUSED, TABLE_FULL, EndgameArrays, MTStack, SolverOptions,
                          null_window_test, root_houses_hash)
from .null_window_fast import FAST_STOP_WORD, FastStack, fast_kernel_fits, null_window_fast, stop_fast
from .state import KalahState


def _database_damaged(endgame_db: dict, what: str):
    """Stop a solve whose endgame database proved damaged: flag its record
    (the next use rebuilds it) and raise :class:`EndgameDatabaseError`."""
    path = endgame_db.get("path")
    if path:
        mark_damaged(path, what)
        where = f"the endgame database {path}"
        fix = "it is flagged and will be rebuilt on its next use (or delete it)"
    else:
        where = "the endgame database given"
        fix = "build it again"
    raise EndgameDatabaseError(f"{where} is damaged ({what}); no exact value can be trusted from it: {fix}")


def _estimate(state: KalahState, node_budget: int, out: dict, past_deadline=None) -> dict:
    """The iterations of :func:`estimate_position`, recorded into ``out`` as
    each one finishes (so an interrupted estimate keeps its last result);
    ``past_deadline()`` (optional) stops the deepening when it returns True."""
    table = new_table(1 << 16)
    counters = np.zeros(2, dtype=np.int64)
    no_trace = np.zeros(0, dtype=np.uint64)
    out.setdefault("nodes", 0)
    for depth in range(2, 41, 2):
        counters[:] = 0
        value, move = kalah_alphabeta(state.board, state.houses, state.player, depth, EVAL_STORE,
                                      state.empty_capture, True, *table, counters, no_trace, int(node_budget))
        out["nodes"] += int(counters[0])
        if move == ABORTED_MOVE:
            break
        guess = int(round(value if state.player == 0 else -value))
        if (guess - int(state.board.sum())) % 2:
            guess += 1
        out.update(margin=guess, move=int(move), depth=depth)  # one call: an interrupt sees all or nothing
        if counters[0] > node_budget // 4 or (past_deadline is not None and past_deadline()):
            break
    return out


def estimate_position(state: KalahState, node_budget: int = 2_000_000) -> dict:
    """MTD(f)'s first guess and a move: depth-limited alpha-beta with the
    store difference, deepened two plies at a time while an iteration takes
    under a quarter of ``node_budget`` nodes (about 16 plies on Kalah(6,4));
    an iteration that would pass ``node_budget`` nodes is abandoned (so one
    kernel call stays well under a second) and the deepest finished one is
    used. Counted in nodes, not seconds, so the guess is the same on every run.

    Returns ``{"margin": player 0's margin with the parity of the seed total
    (every final margin has it), "move": the best move of the deepest
    finished iteration (-1 if none finished), "depth", "nodes"}``.
    """
    if state.is_over:
        raise ValueError("the game is over: nothing to search")
    check_int("node_budget", node_budget, 1)
    out = _estimate(state, node_budget, {"nodes": 0})
    margin = out.get("margin")
    if margin is None:
        margin = int(state.board.sum()) % 2
    return {"margin": margin, "move": out.get("move", -1), "depth": out.get("depth", 0), "nodes": out["nodes"]}


def estimate_margin(state: KalahState, node_budget: int = 2_000_000) -> int:
    """MTD(f)'s first guess as player 0's margin (see :func:`estimate_position`)."""
    return estimate_position(state, node_budget)["margin"]


MAX_TIME_LIMIT = 1e7  # seconds (about 116 days)
MIN_TABLE_SLOTS = 1 << 10
# 2**25 16-byte slots (512 MiB, the memory of the 2**24 32-byte slots before): measured against 2**24 with a
# 16-seed database, Kalah(6,4) suite positions 7 and 13: 11% and 8% fewer nodes, 14% and 6% less CPU time
MAX_DEFAULT_TABLE_SLOTS = 1 << 25
TABLE_ROW_BYTES = 16
TABLE_COLUMNS = TABLE_ROW_BYTES // 8  # int64 words a slot (null_window_test's table)
# what a table entry means (checkpoints of another are refused): 3 = 16-byte slots (int16 bounds) keyed on
# the houses seen from the mover, bounds on the mover's rest of the game (mirror images share an entry);
# 2 = the same in 32-byte slots (float64 bounds); 1 (none) = player 0's
TABLE_KEY = 3
_CHUNK_SECONDS = 0.35  # target length of one kernel call
_FIRST_CHUNK_NODES = 200_000
_MIN_CHUNK_NODES = 10_000  # and a call grows at most 4x over the one before (the rate is a wall-clock estimate)
_PROGRESS_SECONDS = 1.0  # the longest gap between two progress calls (plus one chunk)
# the first guess's budget: on the Kalah(6,4) suite's positions 0-5 (16-seed database) a 200,000-node
# estimate guessed as well as a 2,000,000-node one (two tests each), and the 1.8 million nodes saved are
# most of a small solve (position 2: 2.36 million nodes in all before, 0.50 million after)
_ESTIMATE_NODES = 200_000
DB_ETC_WINDOW = -1  # measured: 35-42% fewer nodes but 5-6% slower (bench/kalah_solver_variants.py)
PREFETCH_MIN_BYTES = 64 << 20  # a table and database this big miss the caches (L3: 32 MiB here)


def _check_solve_args(state, tt_capacity, time_limit, first_guess, progress, max_bytes, etc_min_seeds,
                      endgame_seeds, endgame_db, chunk_nodes, endgame_progress):
    if not isinstance(state, KalahState):
        raise ValueError(f"state must be a KalahState, got {type(state).__name__}")
    if tt_capacity is not None:
        check_int("tt_capacity", tt_capacity, 16, 1 << 40)
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer, np.floating)):
            raise ValueError(f"time_limit must be a number of seconds, got {time_limit!r}")
        if not (math.isfinite(time_limit) and 0 < time_limit <= MAX_TIME_LIMIT):
            raise ValueError(f"time_limit must be a finite number of seconds in (0, {MAX_TIME_LIMIT:g}], "
                             f"got {time_limit!r}")
    if first_guess is not None:
        check_int("first_guess", first_guess, -(1 << 40), 1 << 40)
    for name, fn in (("progress", progress), ("endgame_progress", endgame_progress)):
        if fn is not None and not callable(fn):
            raise ValueError(f"{name} must be callable or None, got {fn!r}")
    check_int("max_bytes", max_bytes, 1)
    if etc_min_seeds is not None:
        check_int("etc_min_seeds", etc_min_seeds, 0)
    check_int("endgame_seeds", endgame_seeds, 0, 127)
    if chunk_nodes is not None:
        check_int("chunk_nodes", chunk_nodes, 1)
    if endgame_db is not None:
        if not isinstance(endgame_db, dict) or not {"houses", "empty_capture", "values", "binom",
                                                    "max_seeds"} <= set(endgame_db):
            raise ValueError("endgame_db must be a database from build_endgame_database")
        if endgame_db["houses"] != state.houses or endgame_db["empty_capture"] != state.empty_capture:
            raise ValueError("the endgame database is for another board size or rule variant")


def table_slots_for(state: KalahState, endgame_seeds: int = 0, max_bytes: int = 4 * 1024**3) -> int:
    """The transposition table's size when the caller gives none.

    The table is keyed on (houses, player to move); with r seeds in the
    houses there are at most C(r + 2m - 1, 2m - 1) distributions of them for
    each player, fewer as seeds reach the stores. That count, times two,
    divided by 16 (a search stores far fewer positions than that bound:
    Kalah(4,3) solves in about 21,000 nodes) and rounded down to a power of
    two, clamped to [2**10, 2**25] slots and halved until it fits
    ``max_bytes`` (16 bytes a slot). Positions the endgame database answers
    are never stored. Kalah(3,3): 2**12 slots (64 KiB), Kalah(4,3): 2**18
    (4 MiB), Kalah(4,4): 2**20 (16 MiB), Kalah(5,4) and up: 2**25 (512 MiB).
    """
    m = state.houses
    r = int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])
    count = 2 if r <= endgame_seeds else 2 * math.comb(r + 2 * m - 1, 2 * m - 1) // 16
    cap = 1 << max(count.bit_length() - 1, 0)
    cap = min(max(cap, MIN_TABLE_SLOTS), MAX_DEFAULT_TABLE_SLOTS)
    while cap > MIN_TABLE_SLOTS and cap * TABLE_ROW_BYTES > max_bytes:
        cap >>= 1
    return cap


def _allocate(shape, dtype, what: str, fix: str) -> np.ndarray:
    """``np.zeros`` whose failure is a one-line ValueError saying what to lower."""
    try:
        return np.zeros(shape, dtype=dtype)
    except (MemoryError, ValueError):
        nbytes = float(np.prod(np.asarray(shape, dtype=np.float64))) * np.dtype(dtype).itemsize
        raise ValueError(f"could not allocate {what} ({format_bytes(nbytes)}): {fix}") from None


_table_lock = threading.Lock()
_idle_tables: list = []  # at most one buffer (flat int64), kept between solves
TABLE_ALIGN = 64  # bytes: a two-slot bucket is one cache line


def _aligned_rows(buf: np.ndarray, cap: int) -> np.ndarray:
    """The table (int64[cap, TABLE_COLUMNS]) inside the flat buffer ``buf``,
    starting on a :data:`TABLE_ALIGN` boundary. A large ``np.zeros`` starts
    16 bytes past a page boundary, which split buckets over two cache lines
    (two misses for one probe)."""
    skip = (-buf.ctypes.data % TABLE_ALIGN) // 8
    return buf[skip:skip + TABLE_COLUMNS * cap].reshape(cap, TABLE_COLUMNS)


def new_solver_table(slots: int) -> np.ndarray:
    """A zeroed table for :func:`solve_exact`'s ``table=`` (``slots`` a
    power of two >= 16), aligned to :data:`TABLE_ALIGN` bytes."""
    check_int("slots", slots, 16)
    if slots & (slots - 1):
        raise ValueError(f"slots must be a power of two, got {slots}")
    fix = "lower the table size"
    return _aligned_rows(_allocate(TABLE_COLUMNS * slots + TABLE_ALIGN // 8, np.int64, f"a table of {slots} slots",
                                   fix), slots)


def _take_table(cap: int, what: str, fix: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """A zeroed table of ``cap`` slots (:func:`_aligned_rows`), the buffer it
    is a view of and whether that buffer is new: the idle buffer a previous
    solve gave back when it is big enough, else a new one.

    A new multi-GiB ``np.zeros`` is cheap to ask for but its pages are
    faulted in (and zeroed by the kernel) at the search's first touches:
    measured here for 2**24 32-byte slots (512 MiB), 0.1-1.3 s a solve on a loaded
    two-core machine against 0.04 s to refill a buffer already mapped.
    """
    words = TABLE_COLUMNS * cap + TABLE_ALIGN // 8
    with _table_lock:
        buf = _idle_tables.pop() if _idle_tables else None
    if buf is None or buf.size < words:
        buf = None  # dropped before the new one is allocated
        buf = _allocate(words, np.int64, what, fix)
        return buf, _aligned_rows(buf, cap), True
    view = _aligned_rows(buf, cap)
    view.fill(0)
    return buf, view, False


def _fault_in(table: np.ndarray, check) -> None:
    """Touch every page of a new table in 16 MiB slices, calling ``check()``
    between them (it raises to stop): the kernel zeroes the pages of a fresh
    allocation at their first touch, 1.2 s for 512 MiB on an idle two-core
    machine and 6 s at load 5, which inside one kernel call kept a stop
    waiting. The contents are written back unchanged."""
    flat = table.reshape(-1).view(np.uint8)
    step = 16 << 20
    for i in range(0, flat.size, step):
        part = flat[i:i + step:4096]
        part += 0  # a write (a read would map the shared zero page)
        check()


def _give_back_table(buf: np.ndarray) -> None:
    """Keep ``buf`` for the next solve (the bigger of it and the one kept)."""
    with _table_lock:
        if _idle_tables and _idle_tables[0].size >= buf.size:
            return
        _idle_tables[:] = [buf]


def release_table_memory() -> None:
    """Free the transposition table :func:`solve_exact` keeps between calls
    (up to 512 MiB with the default sizes; the next solve allocates anew)."""
    with _table_lock:
        _idle_tables.clear()


def _root_table_move(state: KalahState, table) -> int:
    """The move stored in the root's table entry, or -1."""
    cap = table.shape[0]
    h = int(root_houses_hash(state.board, state.houses, state.player))
    for slot in ((h & (cap - 2)), (h & (cap - 2)) + 1):
        if int(table[slot, 0]) & ((1 << 64) - 1) == h:
            return int(table.view(np.int16)[slot, 6]) + (1 if state.player == 0 else state.houses + 2)
    return -1


_FAST_POLL_SECONDS = 0.05  # how often the caller of a vector-kernel test looks at the clock, a stop and Ctrl-C
#: A vector-kernel test with at most this many seconds to its deadline runs in the caller's thread, the stop
#: module's watcher (:func:`jitsearch.stop.watch`) stopping it at the deadline or a stop: no hand-over between
#: threads, which costs a scheduler slice on a loaded machine (measured on 2 busy cores: a 4-node solve 10 ms
#: in a worker thread, 0.7 ms in the caller's). Ctrl-C is then seen when the test stops, within this time.
_FAST_INLINE_SECONDS = 1.0


def _fast_test(state, gamma, table, counters, options, db, fast, past_deadline, heartbeat, end_time, stop_event):
    """One null-window test by :func:`.null_window_fast.null_window_fast` (run to the end in one call). A
    deadline (``end_time()``: its ``time.perf_counter()`` value, None without one; ``past_deadline()``, which
    raises KeyboardInterrupt for a stop), the ``stop_event`` or Ctrl-C stops the kernel within a node and
    abandons the test. Far from a deadline the kernel runs in a worker thread and the caller's thread looks at
    all three and at ``heartbeat(nodes so far)`` every :data:`_FAST_POLL_SECONDS` (or at the deadline when
    sooner); within :data:`_FAST_INLINE_SECONDS` of it, the caller runs the kernel under
    :func:`jitsearch.stop.watch`. Returns (status, g, root move, past the deadline); a KeyboardInterrupt is
    raised again once the kernel has stopped."""

    def seconds_left():
        end = end_time()
        return None if end is None else end - time.perf_counter()

    def kernel():
        return null_window_fast(state.board, state.houses, state.player, float(gamma), state.empty_capture,
                                table, counters, 1 << 62, options, db, fast)

    left = seconds_left()
    stop_fast(fast, False)
    if left is not None and left <= _FAST_INLINE_SECONDS:
        with watch(stop_event, fast.w, FAST_STOP_WORD, deadline=end_time):
            status, g, move = kernel()
        late = status == PAUSED  # stopped by the watcher: the deadline, or a stop (raised here)
        if late:
            past_deadline()
        return status, g, move, late
    out = {}

    def work():
        try:
            out["r"] = kernel()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            out["e"] = exc

    worker = threading.Thread(target=work, name="kalah-solve-test", daemon=True)
    worker.start()
    late = False
    try:
        while True:
            left = seconds_left()
            worker.join(_FAST_POLL_SECONDS if left is None else
                        min(_FAST_POLL_SECONDS, max(left, MIN_WAIT_SECONDS)))
            if not worker.is_alive():
                break
            if past_deadline():
                late = True
                stop_fast(fast, True)
                worker.join()
                break
            heartbeat(fast)
    except BaseException:
        stop_fast(fast, True)
        worker.join()
        raise
    if "e" in out:
        raise out["e"]
    status, g, move = out["r"]
    return status, g, move, late


def _null_window_helper_argv(m: int, empty_capture: bool) -> list[str]:
    return CompileBeside.python_argv("jitsearch.games.kalah.solver", "_null_window_helper_main", int(m),
                                     1 if empty_capture else 0)


def _null_window_helper_main() -> None:
    """A helper process (:class:`jitsearch._jit.CompileBeside`): compile (or
    load) the null-window kernel for m houses by solving a one-seed board with
    a given first guess (no alpha-beta estimate)."""
    m, empty = int(sys.argv[1]), sys.argv[2] == "1"
    solve_exact(KalahState.initial(m, 1, empty_capture=empty), first_guess=0)  # the vector kernel where it fits
    solve_exact(KalahState.initial(m, 1, empty_capture=empty), first_guess=0, chunk_nodes=1 << 20)  # the resumable


def solve_exact(state: KalahState, *, tt_capacity: int | None = None, time_limit: float | None = None,
                first_guess: int | None = None, progress=None, max_bytes: int = 4 * 1024**3,
                etc_min_seeds: int | None = None, endgame_seeds: int = 0, endgame_db: dict | None = None,
                endgame_cache_dir=None, chunk_nodes: int | None = None, endgame_progress=None,
                db_etc_window: int = DB_ETC_WINDOW, checkpoint=None, resume: bool = False,
                checkpoint_seconds: float = 600.0, prefetch: bool | None = None,
                memory_hint: str | None = None, table: np.ndarray | None = None, stop=None,
                fast: bool | None = None, fallback_move: bool = True) -> dict:
    """Game-theoretic value (player 0's final margin under perfect play) and
    the best move, by MTD(f) with a transposition table.

    Parameters
    ----------
    state : the position (player 0 maximises; values are player 0's margin).
    tt_capacity : table slots (rounded up to a power of two, >= 16); None
        sizes it from the position (:func:`table_slots_for`).
    time_limit : seconds, finite, in (0, 1e7]; None: until solved. The
        first run's JIT compile (a cold Numba cache) is not counted.
    first_guess : MTD(f)'s first guess; None: :func:`estimate_position`
        with a budget of 200,000 nodes.
    progress : ``progress(iteration, lo, up, nodes, seconds)``, called after
        every finished null-window test (``iteration`` = tests finished so
        far) and, while a test runs, about every second with the same
        ``iteration`` (a heartbeat; the first test gives 0). ``lo``/``up``
        are the current integer bounds on the margin, ``seconds`` the time
        since the start.
    max_bytes : ceiling for the table and the endgame database.
    endgame_seeds, endgame_db, endgame_cache_dir : an endgame database of
        positions with at most ``endgame_seeds`` (0..127) seeds in the
        houses, given or built (and cached in ``endgame_cache_dir``, see
        :func:`jitsearch.games.kalah.endgame.build_endgame_database`).
    endgame_progress : ``endgame_progress(positions_done, positions_total,
        seconds)`` during a database build, about every second.
    chunk_nodes : nodes per kernel call of the resumable kernel; None sizes
        the calls from the measured node rate to last about 0.35 s. Results
        never depend on it.
    fast : which kernel runs the tests. None (default): the vector kernel
        (:func:`.null_window_fast.null_window_fast`: board vectors, a recursive
        search, 35-40% less CPU time) when the board has at most 7 houses,
        the CPU has AVX2 and BMI2, and neither ``checkpoint`` nor
        ``chunk_nodes`` is given; else the resumable one
        (:func:`.null_window.null_window_test`). Both visit the same nodes
        and return the same results. The vector kernel runs each test in
        one call in a worker thread; the time limit stops it within about a
        millisecond, ``stop`` or Ctrl-C within 0.05 s, and the test in
        progress is abandoned (what it stored in the table stays true).
    fallback_move : when an unfinished solve has neither a bound's move nor
        one in the root's table entry, find one by a 20,000-node alpha-beta
        after the time is up (default; a few ms) or, False, answer the first
        legal move with ``best_move_source`` ``"none"`` (a caller that only
        plays a proven move, as the engine's exact mode, saves that time).
    stop : a ``threading.Event`` (or None) set from another thread to stop
        the solve as a Ctrl-C would (``interrupted`` in the result); it is
        looked at before every kernel call, so the solve ends within one
        call (about 0.35 s of kernel time) of it being set.
    etc_min_seeds : enhanced transposition cutoffs (every child's table
        entry looked up before the first is searched) at nodes with at least
        this many seeds in the houses: near the root only. None (default):
        5/12 of the seeds in the root's houses (20 in a Kalah(6,4) opening:
        7-8% fewer nodes and 8% less CPU time than none on the standard
        suite's positions 1, 4 and 5 with a 16-seed database).
    db_etc_window : at nodes with at most ``endgame seeds + db_etc_window``
        seeds in the houses, every child the endgame database answers is
        looked up first, and one that decides the test cuts at once (-1:
        off). Results never depend on either; node counts do.
    prefetch : prefetch the children's table buckets and database entries
        once a node's first child has failed to cut (never changes a value
        or a node count). None (default): when the table and database
        together exceed :data:`PREFETCH_MIN_BYTES`, so that their loads
        miss the caches; on a board whose table fits them it only costs the
        extra moves (Kalah(4,4): 1.6x slower).
    memory_hint : what a refusal for memory tells the user to change (default:
        the table size or ``max_bytes``, as the ``solve`` command names them).
    table : a transposition table to use and keep (int64[slots, 2], slots a
        power of two >= 16, from :func:`new_solver_table` or zeros; an
        int64[slots, 4] array is read as 2 * slots slots of the same
        memory), e.g. to share one between the
        solves of many positions of the same board and rules: its entries
        are bounds on the rest of the game keyed on the houses and the
        player to move, true whatever the root, so a later solve reuses what
        an earlier one proved. Never share one across board sizes or rule
        variants. Not with ``checkpoint``; ``tt_capacity`` is then ignored.
        Without one, the solve's table is zeroed memory kept from the
        previous solve when that is big enough (refilling it is far cheaper
        than faulting in fresh pages); :func:`release_table_memory` frees it.
    checkpoint, resume, checkpoint_seconds : a directory where the solve's
        whole state (table, bounds, the test in progress) is saved every
        ``checkpoint_seconds`` and when it stops unfinished (see
        :mod:`jitsearch.games.kalah.checkpoint`); ``resume=True``
        continues from it node for node (a missing checkpoint starts afresh).
        An existing checkpoint without ``resume`` is refused, so that hours
        of work are never overwritten by mistake.

    Returns
    -------
    dict with ``margin`` (None unless complete), ``lower``/``upper`` (integer
    bounds on the margin, never None: they start from the seed counts and
    tighten with every finished test), ``best_move`` (a legal move whenever
    the game is not over) and ``best_move_source``: ``"exact"`` (complete:
    an optimal move), ``"bound"`` (the move proving the mover's current
    bound), ``"heuristic"`` (the first-guess alpha-beta's move),
    ``"table"`` (the root's table entry) or ``"none"`` (the first legal move,
    with ``fallback_move=False``); ``complete``, ``interrupted``
    (Ctrl-C stopped it: a KeyboardInterrupt is caught and the partial
    result returned), ``stop_reason`` (None, ``"time_limit"``,
    ``"interrupted"``, ``"table_full"``), ``nodes``, ``iterations``,
    ``seconds`` (this run), ``total_seconds`` (with the runs before a
    resume), ``table_slots``, ``first_guess``, ``estimate_nodes``,
    ``endgame_seeds``, ``endgame_seconds``, ``resumed`` and ``checkpoint``.
    """
    _check_solve_args(state, tt_capacity, time_limit, first_guess, progress, max_bytes, etc_min_seeds,
                      endgame_seeds, endgame_db, chunk_nodes, endgame_progress)
    check_int("db_etc_window", db_etc_window, -1, 127)
    check_bool("fallback_move", fallback_move)
    check_stop(stop)
    stop_event = stop
    if fast is not None:
        if not isinstance(fast, (bool, np.bool_)):
            raise ValueError(f"fast must be True, False or None (automatic), got {fast!r}")
        if fast and not fast_kernel_fits(state.houses):
            raise ValueError(f"the vector kernel (fast=True) takes boards of at most 7 houses on a CPU with AVX2 and "
                             f"BMI2; here: {state.houses} houses" + ("" if fast_kernel_fits(1) else ", no AVX2/BMI2"))
        if fast and (checkpoint is not None or chunk_nodes is not None):
            raise ValueError("fast=True cannot pause a test: it excludes a checkpoint and chunk_nodes")
    if prefetch is not None and not isinstance(prefetch, (bool, np.bool_)):
        raise ValueError(f"prefetch must be True, False or None (automatic), got {prefetch!r}")
    if checkpoint is not None:
        if isinstance(checkpoint_seconds, bool) or not isinstance(checkpoint_seconds, (int, float)) or not (
                math.isfinite(checkpoint_seconds) and checkpoint_seconds > 0):
            raise ValueError(f"checkpoint_seconds must be a positive number, got {checkpoint_seconds!r}")
        if os.path.exists(checkpoint) and not os.path.isdir(checkpoint):
            raise ValueError(f"checkpoint {checkpoint} is a file; a solve checkpoint is a directory")
        if checkpoint_exists(checkpoint) and not resume:
            raise ValueError(f"checkpoint {checkpoint} already holds a solve: resume it (resume=True, --resume) "
                             "or remove it")
    elif resume:
        raise ValueError("resume=True needs a checkpoint")
    if state.is_over:
        return {"margin": state.margin, "best_move": -1, "best_move_source": None, "nodes": 0, "iterations": 0,
                "seconds": 0.0, "total_seconds": 0.0, "resumed": False, "checkpoint": None,
                "complete": True, "interrupted": False, "stop_reason": None,
                "lower": state.margin, "upper": state.margin, "endgame_seeds": 0, "endgame_seconds": 0.0,
                "table_slots": 0, "first_guess": None, "estimate_nodes": 0}
    m = state.houses
    if etc_min_seeds is None:
        etc_min_seeds = max(1, 5 * (int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])) // 12)
    db_wanted = endgame_db["max_seeds"] if endgame_db is not None else endgame_seeds
    if table is not None:
        if checkpoint is not None:
            raise ValueError("a shared table (table=...) and a checkpoint exclude each other")
        if (not isinstance(table, np.ndarray) or table.dtype != np.int64 or table.ndim != 2
                or table.shape[1] not in (2, 4) or table.shape[0] < 16 or table.shape[0] & (table.shape[0] - 1)
                or not table.flags.c_contiguous or not table.flags.writeable):
            raise ValueError("table must be a writable C-contiguous int64 array of shape (slots, 2) (or (slots, 4), "
                             "read as twice the slots), slots a power of two >= 16")
        table = table.reshape(-1, TABLE_COLUMNS)  # a view: the same memory
        tt_capacity = table.shape[0]
    if tt_capacity is None:
        cap = table_slots_for(state, db_wanted, max_bytes)
    else:
        cap = 1 << max(4, int(tt_capacity - 1).bit_length())
    fix = memory_hint or "lower the table size (tt_capacity, --table-size) or raise max_bytes (--max-memory)"
    check_bytes(cap * TABLE_ROW_BYTES, max_bytes, f"a transposition table of {cap} slots", fix)
    identity = {"position": state.to_text(), "player": int(state.player), "empty_capture": bool(state.empty_capture),
                "table_slots": int(cap), "endgame_seeds": int(db_wanted), "etc_min_seeds": int(etc_min_seeds),
                "db_etc_window": int(db_etc_window), "table_key": TABLE_KEY}
    saved = None
    if checkpoint is not None:
        check_checkpoint_dir(checkpoint, cap * TABLE_ROW_BYTES)
    if checkpoint is not None and resume:
        if checkpoint_exists(checkpoint):
            saved = load_solve_state(checkpoint, identity)
    stack = MTStack.for_state(state)
    counters = np.zeros(1, dtype=np.int64)
    pooled = None  # the buffer of a table taken from the idle one, given back at the end
    new_buffer = False
    if saved is not None:
        table = saved["table"]
        for field, arr in saved["stack"].items():
            mine = getattr(stack, field)
            if mine.shape != arr.shape:
                raise ValueError(f"{checkpoint}: the saved stack's {field} has shape {arr.shape}, not {mine.shape}")
            mine[...] = arr
        counters[0] = int(saved["progress"]["nodes"])
    elif table is None:
        pooled, table, new_buffer = _take_table(cap, f"a transposition table of {cap} slots", fix)
    start = time.perf_counter()
    deadline = None if time_limit is None else start + float(time_limit)
    # the time limit is the search's: JIT time (compiling on a cold cache, waiting for compile
    # helpers) moves the deadline back, so a first run is not cut short by its own compile
    jit = JitWatch(notify=False)

    def end_time() -> float | None:
        return None if deadline is None else deadline + jit.seconds

    def past_deadline() -> bool:
        if stop_event is not None and stop_event.is_set():
            raise KeyboardInterrupt  # caught below: the result says "interrupted"
        return deadline is not None and time.perf_counter() >= deadline + jit.seconds

    seeds_in_houses = int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])
    diff = int(state.board[m + 1]) - int(state.board[0])
    # (lo, up, best move proving the mover's bound, tests finished): replaced as one tuple, so an
    # interrupt never sees a bound without its move
    record = (diff - seeds_in_houses, diff + seeds_in_houses, -1, 0)
    estimate = {"nodes": 0}
    gamma = None
    saved_g = None
    before_seconds = 0.0
    if saved is not None:
        p = saved["progress"]
        record = tuple(int(x) for x in p["record"])
        estimate = dict(p["estimate"])
        first_guess = p["first_guess"]
        gamma = p["gamma"]
        saved_g = p["g"]
        before_seconds = float(p["seconds"])
    stop = None
    db_seconds = 0.0
    db_seeds = -1
    last_report = start
    last_save = start
    g = None

    def save_checkpoint():
        progress_fields = {"record": [int(x) for x in record], "gamma": gamma, "g": g, "nodes": int(counters[0]),
                           "first_guess": first_guess, "estimate": estimate,
                           "seconds": before_seconds + time.perf_counter() - start}
        try:
            save_solve_state(checkpoint, identity, progress_fields, table, stack)
        except OSError as exc:  # the solve goes on; the previous checkpoint stays whole
            warnings.warn(f"could not save the checkpoint {checkpoint}: {exc}", stacklevel=2)

    jit.__enter__()
    try:
        if new_buffer:
            _fault_in(table, past_deadline)
        if endgame_db is None and endgame_seeds > 0:
            endgame_db = build_endgame_database(m, endgame_seeds, state.empty_capture, max_bytes=max_bytes,
                                                cache_dir=endgame_cache_dir, progress=endgame_progress,
                                                deadline=end_time())
            db_seconds = time.perf_counter() - start
            if endgame_db is None:
                stop = "time_limit"
        db = NO_DATABASE
        if endgame_db is not None:
            db = EndgameArrays(endgame_db["values"], endgame_db["binom"], int(endgame_db["max_seeds"]))
            db_seeds = db.seeds
        if prefetch is None:
            prefetch = table.nbytes + db.values.nbytes > PREFETCH_MIN_BYTES
        options = SolverOptions(int(etc_min_seeds), int(db_etc_window), bool(prefetch))
        if fast is None:
            fast = checkpoint is None and chunk_nodes is None and fast_kernel_fits(m)
        if stop is None and first_guess is None:
            # a cold cache: the null-window kernel compiles in a helper process while the first guess's does here
            beside = CompileBeside([_null_window_helper_argv(m, state.empty_capture)])
            try:
                with beside:
                    _estimate(state, _ESTIMATE_NODES, estimate, past_deadline)
                beside.wait()
            finally:
                beside.close()
            first_guess = estimate.get("margin", int(state.board.sum()) % 2)
            if past_deadline():
                stop = "time_limit"
        lo, up = record[0], record[1]
        g = min(max(int(first_guess or 0) if saved_g is None else int(saved_g), lo), up)
        # a search that can be stopped starts with a short call: the first calls also fault in the table's
        # pages (seconds for a large one on a loaded machine), so a long first chunk answered a stop late
        chunk = chunk_nodes or (_FIRST_CHUNK_NODES if stop_event is None and deadline is None else _MIN_CHUNK_NODES)
        kernel_nodes, kernel_seconds = 0, 0.0
        fast_stack = FastStack.for_state(state) if fast else None

        def heartbeat(fs):
            nonlocal last_report
            now = time.perf_counter()
            if progress and now - last_report >= _PROGRESS_SECONDS:
                progress(record[3], int(lo), int(up), fs.nodes(), now - start)
                last_report = now

        while stop is None and lo < up:
            if stack.regs[0] == 0:  # a new test (else the checkpoint's test goes on at its gamma)
                gamma = g + 1 if g == lo else g  # gamma in (lo, up]: every test moves a bound
            while fast_stack is not None:
                if past_deadline():
                    stop = "time_limit"
                    break
                status, g_new, root_move, late = _fast_test(state, gamma, table, counters, options, db, fast_stack,
                                                            past_deadline, heartbeat, end_time, stop_event)
                if late:
                    stop = "time_limit"
                break
            while fast_stack is None:
                now = time.perf_counter()
                if past_deadline():
                    stop = "time_limit"
                    break
                if progress and now - last_report >= _PROGRESS_SECONDS:
                    progress(record[3], int(lo), int(up), int(counters[0]), now - start)
                    last_report = now
                size = chunk
                if chunk_nodes is None and deadline is not None and kernel_seconds > 0:
                    size = min(size, max(int(kernel_nodes / kernel_seconds * (end_time() - now)) + 1, 1000))
                before = int(counters[0])
                status, g_new, root_move = null_window_test(
                    state.board, m, state.player, float(gamma), state.empty_capture, table, counters,
                    before + size, options, db, stack)
                dt = time.perf_counter() - now
                kernel_nodes += int(counters[0]) - before
                kernel_seconds += dt
                if chunk_nodes is None and kernel_seconds > 0.02:
                    chunk = int(min(max(kernel_nodes / kernel_seconds * _CHUNK_SECONDS, _MIN_CHUNK_NODES), 4 * chunk))
                if status != PAUSED:
                    break
                if checkpoint is not None and time.perf_counter() - last_save >= checkpoint_seconds:
                    save_checkpoint()
                    last_save = time.perf_counter()
            if stop is not None:
                break
            if status == TABLE_FULL:
                stop = "table_full"
                break
            if status == DATABASE_DAMAGED:
                _database_damaged(endgame_db, f"entry {int(g_new)} holds an impossible value")
            g_new = int(g_new)
            if (g_new >= gamma and g_new > up) or (g_new < gamma and g_new < lo):
                # a test proved a bound outside the bounds proved before: impossible for a sound search
                what = f"a test at {gamma} returned {g_new}, outside the bounds [{lo}, {up}] proved before"
                if endgame_db is not None:
                    _database_damaged(endgame_db, what)
                raise RuntimeError(f"internal error in the Kalah solver: {what}")
            best = record[2]
            if g_new >= gamma:
                lo = max(lo, g_new)
            else:
                up = min(up, g_new)
            # the test that moved the mover's own bound names its best move: a
            # fail-high for player 0 (margin >= g via that move), a fail-low for 1
            if (g_new >= gamma) == (state.player == 0) and root_move >= 0:
                best = int(root_move)
            record = (lo, up, best, record[3] + 1)
            g = min(max(g_new, lo), up)
            if progress:
                last_report = time.perf_counter()
                progress(record[3], int(lo), int(up), int(counters[0]), last_report - start)
    except KeyboardInterrupt:
        stop = "interrupted"
    finally:
        jit.__exit__(None, None, None)
    if checkpoint is not None and (stop is not None or record[0] >= record[1]):
        save_checkpoint()  # also when complete: a resume then answers at once
    lo, up, best, iterations = record
    complete = lo >= up
    legal = state.legal_moves()
    source = None
    if complete:
        source = "exact"
        if best not in legal:
            # no test moved the mover's own bound: the value is the worst the
            # seed counts allow the mover, so every move attains it
            best = _root_table_move(state, table)
            best = best if best in legal else legal[0]
    elif best in legal:
        source = "bound"
    elif estimate.get("move", -1) in legal:
        best, source = estimate["move"], "heuristic"
    else:
        best, source = _root_table_move(state, table), "table"
        if best not in legal and not fallback_move:
            best, source = legal[0], "none"
        elif best not in legal:
            quick = _estimate(state, 20_000, {"nodes": 0})
            best, source = quick.get("move", legal[0]), "heuristic"
            if best not in legal:
                best = legal[0]
    if pooled is not None:
        _give_back_table(pooled)
    return {"margin": int(lo) if complete else None, "best_move": int(best), "best_move_source": source,
            "nodes": int(counters[0]), "iterations": iterations, "seconds": time.perf_counter() - start,
            "total_seconds": before_seconds + time.perf_counter() - start, "resumed": saved is not None,
            "checkpoint": None if checkpoint is None else str(checkpoint),
            "complete": complete, "interrupted": (not complete) and stop == "interrupted",
            "stop_reason": None if complete else stop, "lower": int(lo), "upper": int(up),
            "endgame_seeds": max(db_seeds, 0), "endgame_seconds": db_seconds, "table_slots": int(cap),
            "first_guess": None if first_guess is None else int(first_guess), "estimate_nodes": estimate["nodes"]}

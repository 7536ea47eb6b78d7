"""The vector null-window kernel (null_window_fast) against the resumable one
(null_window_test): the same nodes, results and table, test for test; and
solve_exact's choice between them, its stop and its argument checks."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import jitsearch.games.kalah.null_window as nw
import jitsearch.games.kalah.null_window_fast as nwf
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.solver import solve_exact

from test_kalah_search import _random_positions

pytestmark = pytest.mark.skipif(not nwf.fast_kernel_fits(6), reason="no AVX2/BMI2: the vector kernel never runs")

_SKIP = ("seconds", "endgame_seconds", "total_seconds")


def _both(state, gamma, options, db, cap):
    """One test by each kernel on a fresh table: (status, g, move, nodes, table) twice."""
    out = []
    for kernel in ("test", "fast"):
        table = np.zeros((cap, 2), dtype=np.int64)
        counters = np.zeros(1, dtype=np.int64)
        args = (state.board, state.houses, state.player, float(gamma), state.empty_capture, table, counters, 1 << 62,
                options, db)
        if kernel == "test":
            r = nw.null_window_test(*args, nw.MTStack.for_state(state))
        else:
            r = nwf.null_window_fast(*args, nwf.FastStack.for_state(state))
        out.append((int(r[0]), float(r[1]), int(r[2]), int(counters[0]), table))
    return out


@pytest.mark.parametrize("ec", [False, True])
@pytest.mark.parametrize("m,n", [(1, 3), (3, 3), (4, 3), (6, 1), (7, 1)])
def test_same_nodes_results_and_table_as_the_resumable_kernel(m, n, ec):
    db = build_endgame_database(m, 4, ec)
    dbs = {"none": nw.NO_DATABASE, "db": nw.EndgameArrays(db["values"], db["binom"], int(db["max_seeds"]))}
    positions = [KalahState.initial(m, n, empty_capture=ec)] + _random_positions(4, m=m, n=n, seed=m + 7 * n,
                                                                                empty_capture=ec)
    for pos in positions:
        for etc, window, prefetch in ((1 << 30, -1, False), (1, -1, True), (3, 2, True)):
            options = nw.SolverOptions(etc, window, prefetch)
            for name, db_arrays in dbs.items():
                for gamma in (-3, 0, 1, 2, 5):
                    a, b = _both(pos, gamma, options, db_arrays, 1 << 8)
                    assert a[:4] == b[:4], (pos.to_text(), gamma, options, name)
                    assert np.array_equal(a[4], b[4]), (pos.to_text(), gamma, options, name)  # slot for slot


@pytest.mark.slow
def test_solves_with_either_kernel_agree():
    db = build_endgame_database(6, 8, False)
    states = [KalahState.initial(4, 3), KalahState.initial(3, 3, empty_capture=True),
              KalahState.from_text("2,0,3,1,0,4/9/0,3,1,2,2,1/8 p1"), KalahState.from_text("1,2,0,3,2,1/10/2,0,1,2,3,0/9 p0")]
    for s in states:
        kw = {"endgame_db": db} if s.houses == 6 else {}
        fast = solve_exact(s, fast=True, **kw)
        slow = solve_exact(s, fast=False, **kw)
        auto = solve_exact(s, **kw)
        assert {k: v for k, v in fast.items() if k not in _SKIP} == {k: v for k, v in slow.items() if k not in _SKIP}
        assert {k: v for k, v in auto.items() if k not in _SKIP} == {k: v for k, v in slow.items() if k not in _SKIP}


def test_a_time_limit_and_a_stop_end_a_vector_test():
    s = KalahState.initial(6, 4)
    t = time.perf_counter()
    r = solve_exact(s, fast=True, time_limit=0.5, first_guess=0, tt_capacity=1 << 16)
    assert not r["complete"] and r["stop_reason"] == "time_limit"
    assert time.perf_counter() - t < 20
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    r = solve_exact(s, fast=True, stop=stop, first_guess=0, tt_capacity=1 << 16)
    assert r["interrupted"] and r["stop_reason"] == "interrupted"
    assert r["lower"] <= r["upper"]


def test_a_test_near_its_deadline_runs_in_the_callers_thread_and_still_stops():
    """Within _FAST_INLINE_SECONDS of the deadline the kernel runs in the caller's thread (no hand-over), a
    watcher stopping it at the deadline or at a stop; further away, in a worker thread."""
    import jitsearch.games.kalah.solver as solver

    s = KalahState.initial(6, 4)
    seen = []
    kernel = solver.null_window_fast

    def spy(*args):
        seen.append(threading.current_thread() is threading.main_thread())
        return kernel(*args)

    solver.null_window_fast = spy
    try:
        t = time.perf_counter()
        r = solve_exact(s, fast=True, time_limit=0.3, first_guess=0, tt_capacity=1 << 16)
        assert not r["complete"] and r["stop_reason"] == "time_limit" and time.perf_counter() - t < 20
        assert seen and all(seen)
        stop = threading.Event()
        threading.Timer(0.2, stop.set).start()
        r = solve_exact(s, fast=True, time_limit=solver._FAST_INLINE_SECONDS - 0.01, stop=stop, first_guess=0,
                        tt_capacity=1 << 16)
        assert r["interrupted"] and r["stop_reason"] == "interrupted" and all(seen)
        seen.clear()
        r = solve_exact(s, fast=True, time_limit=solver._FAST_INLINE_SECONDS + 0.5, first_guess=0,
                        tt_capacity=1 << 16)
        assert r["stop_reason"] == "time_limit" and seen[0] is False  # far from the deadline: a worker thread
        # a test that finishes leaves no stop flag behind for the next one
        small = KalahState.initial(3, 2)
        assert solve_exact(small, fast=True, time_limit=0.5, first_guess=0)["complete"]
        assert solve_exact(small, fast=True, time_limit=0.5, first_guess=0)["complete"]
    finally:
        solver.null_window_fast = kernel


def test_stop_fast_stops_the_kernel_within_a_node():
    s = KalahState.initial(6, 4)
    fs = nwf.FastStack.for_state(s)
    table = np.zeros((1 << 12, 2), dtype=np.int64)
    counters = np.zeros(1, dtype=np.int64)
    options = nw.SolverOptions(20, -1, False)
    nwf.stop_fast(fs, True)
    status, g, move = nwf.null_window_fast(s.board, 6, 0, 1.0, False, table, counters, 1 << 62, options,
                                          nw.NO_DATABASE, fs)
    assert (status, move, int(counters[0])) == (nw.PAUSED, -1, 0)
    nwf.stop_fast(fs, False)
    status, g, move = nwf.null_window_fast(s.board, 6, 0, 1.0, False, table, counters, 1000, options,
                                          nw.NO_DATABASE, fs)
    assert status == nw.PAUSED and int(counters[0]) == 1000  # the node limit stops it too


def test_fast_argument_checks(tmp_path):
    with pytest.raises(ValueError, match="fast must be"):
        solve_exact(KalahState.initial(3, 3), fast=1)
    with pytest.raises(ValueError, match="excludes a checkpoint"):
        solve_exact(KalahState.initial(3, 3), fast=True, chunk_nodes=100)
    with pytest.raises(ValueError, match="excludes a checkpoint"):
        solve_exact(KalahState.initial(3, 3), fast=True, checkpoint=tmp_path / "c")
    with pytest.raises(ValueError, match="at most 7 houses"):
        solve_exact(KalahState.initial(8, 1), fast=True)
    assert solve_exact(KalahState.initial(8, 1))["complete"]  # the resumable kernel, automatically


def test_an_unfinished_solve_without_a_move_falls_back_only_when_asked():
    """Stopped before any test, with a fresh table and a given first guess, a solve knows no move: by default
    it finds one by a short alpha-beta; with fallback_move=False it answers the first legal move as "none"."""
    s = KalahState.initial(6, 4)
    kw = dict(time_limit=1e-6, first_guess=0, tt_capacity=1 << 12)
    quick = solve_exact(s, **kw)
    assert not quick["complete"] and quick["best_move_source"] == "heuristic" and quick["best_move"] in s.legal_moves()
    bare = solve_exact(s, fallback_move=False, **kw)
    assert bare["best_move_source"] == "none" and bare["best_move"] == s.legal_moves()[0]
    with pytest.raises(ValueError, match="fallback_move must be True or False"):
        solve_exact(s, fallback_move=1, **kw)

"""Exact Kalah solving under hostile conditions: tests resumed in
chunks, Ctrl-C, time limits, argument validation, the table's size."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jitsearch.games.kalah.alphabeta as alphabeta
import jitsearch.games.kalah.null_window as nw
import jitsearch.games.kalah.solver as ks
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.null_window import MTStack
from jitsearch.games.kalah.solver import solve_exact, table_slots_for

from test_kalah_search import _random_positions, brute_force_margin

_OPTIONS = nw.SolverOptions(etc_min_seeds=1 << 30, db_etc_window=0, prefetch=True)
_SKIP = ("seconds", "endgame_seconds", "total_seconds")


def _same(a, b):
    return {k: v for k, v in a.items() if k not in _SKIP} == {k: v for k, v in b.items() if k not in _SKIP}


def _run_test(state, gamma, chunk, cap=1 << 10):
    """One null-window test in chunks of ``chunk`` nodes: (status, g, move, nodes, calls, table)."""
    table = np.zeros((cap, 2), dtype=np.int64)  # 16-byte slots
    counters = np.zeros(1, dtype=np.int64)
    stack = MTStack.for_state(state)
    calls = 0
    while True:
        calls += 1
        status, g, move = nw.null_window_test(state.board, state.houses, state.player, float(gamma), state.empty_capture,
                                       table, counters, int(counters[0]) + chunk, _OPTIONS, nw.NO_DATABASE, stack)
        if status != nw.PAUSED:
            return status, g, move, int(counters[0]), calls, table


@pytest.mark.parametrize("ec", [False, True])
def test_a_test_in_tiny_chunks_equals_one_run(ec):
    positions = [KalahState.initial(4, 3, empty_capture=ec)] + _random_positions(4, m=3, n=3, seed=3, empty_capture=ec)
    for pos in positions:
        for gamma in (-3, 0, 1, 2, 6):
            whole = _run_test(pos, gamma, 1 << 40)
            assert whole[0] == nw.SOLVED and whole[4] == 1
            for chunk in (1, 7, 100):
                part = _run_test(pos, gamma, chunk)
                assert part[:4] == whole[:4], (pos.to_text(), gamma, chunk)
                assert part[4] >= whole[3] // chunk  # it really stopped and resumed
                assert np.array_equal(part[5], whole[5])  # the same table, slot for slot


def test_solve_in_tiny_chunks_equals_one_chunk():
    for s in (KalahState.initial(4, 3), KalahState.initial(3, 3, empty_capture=True)):
        one = solve_exact(s, chunk_nodes=1 << 40)
        tiny = solve_exact(s, chunk_nodes=13)
        auto = solve_exact(s)
        assert _same(one, tiny) and _same(one, auto)
        assert one["complete"] and one["margin"] == _true_margin(s)


class _Interrupter:
    """A progress callback that raises KeyboardInterrupt on call ``n``."""

    def __init__(self, n):
        self.n, self.calls = n, []

    def __call__(self, *args):
        self.calls.append(args)
        if len(self.calls) == self.n:
            raise KeyboardInterrupt


_MARGINS = {}


def _true_margin(s):
    """Brute force, memoised; Kalah(4,3) (plain-Python brute force takes
    minutes) by its value from an uninterrupted solve: 6, 8 with empty capture."""
    key = (s.to_text(), s.empty_capture)
    if key not in _MARGINS:
        if key[0] == "3,3,3,3/0/3,3,3,3/0 p0":
            _MARGINS[key] = 8 if s.empty_capture else 6
        else:
            _MARGINS[key] = brute_force_margin(s)
    return _MARGINS[key]


def _check_partial(s, r, true_margin):
    assert r["interrupted"] and not r["complete"] and r["margin"] is None and r["stop_reason"] == "interrupted"
    assert r["lower"] <= true_margin <= r["upper"]
    assert r["best_move"] in s.legal_moves()
    if r["best_move_source"] == "bound":  # the move proves the mover's own bound
        child = _true_margin(s.play(r["best_move"]))
        assert child >= r["lower"] if s.player == 0 else child <= r["upper"]


@pytest.mark.parametrize("player", [0, 1])
def test_ctrl_c_between_chunks_gives_the_bounds_reached(monkeypatch, player):
    monkeypatch.setattr(ks, "_PROGRESS_SECONDS", 0.0)  # a progress call before every chunk
    s = KalahState.initial(3, 3)
    if player:
        s = s.play(2)
        assert s.player == 1
    want = _true_margin(s)
    full = solve_exact(s, chunk_nodes=20, first_guess=-10)
    assert full["complete"] and full["margin"] == want and full["iterations"] >= 2
    seen_moved_bounds = False
    for n in range(1, 200, 3):
        stop = _Interrupter(n)
        r = solve_exact(s, chunk_nodes=20, first_guess=-10, progress=stop)
        if r["complete"]:  # finished before (or at) the n-th call
            assert _same(r, full) and n - 3 <= len(stop.calls) <= n  # the (n-3)-th call stopped it
            break
        _check_partial(s, r, want)
        # the partial result is the full run's state at that point
        assert r["iterations"] == stop.calls[-1][0] and (r["lower"], r["upper"]) == stop.calls[-1][1:3]
        assert r["nodes"] <= full["nodes"]
        seen_moved_bounds |= r["upper"] - r["lower"] < 36
    else:
        pytest.fail("the solve never finished")
    assert seen_moved_bounds


def test_ctrl_c_in_the_first_guess_search(monkeypatch):
    calls = []
    real = ks.kalah_alphabeta

    def flaky(*args):
        calls.append(args[3])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    s = KalahState.initial(4, 3)
    table = alphabeta.new_table(1 << 16)  # the estimate's iterations, uninterrupted
    depth4_move = [alphabeta.search(s, d, table=table)["move"] for d in (2, 4)][-1]
    monkeypatch.setattr(ks, "kalah_alphabeta", flaky)
    r = solve_exact(s)
    assert calls == [2, 4, 6]
    _check_partial(s, r, _true_margin(s))
    assert (r["lower"], r["upper"]) == (-24, 24) and r["nodes"] == 0 and r["iterations"] == 0
    assert r["best_move_source"] == "heuristic" and r["best_move"] == depth4_move


def test_ctrl_c_in_the_endgame_build(tmp_path, monkeypatch):
    import jitsearch.games.kalah.endgame as eg

    monkeypatch.setattr(eg, "_PROGRESS_SECONDS", 0.0)
    s = KalahState.initial(3, 3)
    stop = _Interrupter(2)
    r = solve_exact(s, endgame_seeds=14, endgame_cache_dir=tmp_path, endgame_progress=stop)
    assert stop.calls[-1][0] < stop.calls[-1][1]  # stopped inside the build
    _check_partial(s, r, _true_margin(s))
    assert r["endgame_seeds"] == 0 and r["nodes"] == 0
    assert list(tmp_path.iterdir()) == []  # a clean stop: no file, no temporary left behind


def test_time_limited_solves_give_bounds_and_a_move():
    s = KalahState.initial(6, 4, empty_capture=True)  # the example
    r = solve_exact(s, time_limit=0.4, tt_capacity=1 << 16)
    assert not r["complete"] and r["stop_reason"] == "time_limit" and not r["interrupted"]
    assert r["lower"] is not None and r["upper"] is not None and -48 <= r["lower"] <= r["upper"] <= 48
    assert r["best_move"] in s.legal_moves() and r["best_move_source"] in ("bound", "heuristic", "table")
    assert r["seconds"] < 5
    # a small board: whatever the limit stops, the bounds hold the true value
    small = KalahState.initial(4, 3)
    r = solve_exact(small, time_limit=1e-6)
    assert r["lower"] <= _true_margin(small) <= r["upper"] and r["best_move"] in small.legal_moves()


def test_progress_comes_during_a_long_first_test():
    s = KalahState.initial(6, 4, empty_capture=True)
    calls = []
    r = solve_exact(s, time_limit=2.5, tt_capacity=1 << 16, progress=lambda *a: calls.append(a))
    assert r["iterations"] == 0 or calls[-1][0] == r["iterations"]
    times = [0.0] + [c[4] for c in calls] + [r["seconds"]]
    assert len(calls) >= 1 and max(b - a for a, b in zip(times, times[1:])) < 2.5
    assert all(isinstance(c[1], int) and isinstance(c[2], int) and c[1] <= c[2] for c in calls)


@pytest.mark.parametrize("text, want", [("1,0,0/0/1,0,2/0 p0", -4), ("1,0,2/0/1,0,0/0 p1", 4)])
def test_best_move_when_the_value_is_the_movers_worst_case(text, want):
    """Every seed left goes to the opponent: the value is the seed-count bound
    the solver starts from, so no test moves the mover's bound and the move
    comes from the rule that every move attains that value."""
    s = KalahState.from_text(text)
    assert brute_force_margin(s) == want
    for guess in (None, -40, 40):
        r = solve_exact(s, first_guess=guess)
        assert r["complete"] and r["margin"] == want
        assert r["best_move"] in s.legal_moves() and r["best_move_source"] == "exact"


@pytest.mark.parametrize("kw", [
    {"time_limit": math.inf}, {"time_limit": 1e300}, {"time_limit": math.nan}, {"time_limit": 0},
    {"time_limit": -1.0}, {"time_limit": True}, {"time_limit": "10"}, {"time_limit": 2e7},
    {"endgame_seeds": -1}, {"endgame_seeds": 128}, {"endgame_seeds": True}, {"endgame_seeds": 2.0},
    {"endgame_seeds": "3"}, {"tt_capacity": 15}, {"tt_capacity": 0}, {"tt_capacity": True},
    {"tt_capacity": "1024"}, {"tt_capacity": 1024.0}, {"chunk_nodes": 0}, {"max_bytes": "1GiB"},
    {"first_guess": 1.5}, {"progress": 3}, {"etc_min_seeds": -1},
])
def test_bad_arguments_raise_value_error(kw):
    with pytest.raises(ValueError) as info:
        solve_exact(KalahState.initial(2, 2), **kw)
    assert "\n" not in str(info.value) and next(iter(kw)) in str(info.value)


def test_allocation_failures_are_value_errors():
    with pytest.raises(ValueError, match="could not allocate a transposition table.*lower the table size"):
        ks._allocate((1 << 61, 4), np.int64, "a transposition table of 2**61 slots",
                     "lower the table size (tt_capacity, --table-size)")
    with pytest.raises(ValueError, match="table-size"):
        solve_exact(KalahState.initial(3, 3), tt_capacity=1 << 30, max_bytes=1 << 20)


def test_the_table_is_sized_from_the_problem():
    small, mid = KalahState.initial(3, 3), KalahState.initial(4, 3)
    # 18 seeds in 6 houses: 2 * C(23, 5) = 67,298 (player, distribution) pairs, / 16 -> 2**12 slots
    assert table_slots_for(small) == 1 << 12 and table_slots_for(KalahState.initial(1, 1)) == 1 << 10
    assert table_slots_for(mid) == 1 << 18 and table_slots_for(KalahState.initial(6, 4)) == 1 << 25
    assert table_slots_for(KalahState.initial(6, 4), max_bytes=1 << 20) == 1 << 16  # 16 bytes a slot
    assert table_slots_for(small, endgame_seeds=18) == 1 << 10  # the database answers every child
    r = solve_exact(small)
    assert r["table_slots"] == 1 << 12 and r["complete"] and r["margin"] == _true_margin(small)
    assert solve_exact(small, tt_capacity=100)["table_slots"] == 128
    assert solve_exact(small, max_bytes=1 << 15)["table_slots"] == 1 << 11  # halved to fit 32 KiB


@pytest.mark.slow
def test_a_cold_compile_does_not_eat_the_time_limit(tmp_path):
    """On an empty Numba cache the solver's kernels compile for seconds; a
    one-second time limit is the search's, so the small solve still finishes."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json; from jitsearch.games.kalah import KalahState, solve_exact; "
            "r = solve_exact(KalahState.initial(3, 3), time_limit=1.0); "
            "print(json.dumps({'margin': r['margin'], 'stop': r.get('stop_reason')}))")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["stop"] is None
    assert r["margin"] == solve_exact(KalahState.initial(3, 3))["margin"]

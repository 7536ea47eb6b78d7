"""The exact Kalah solver's speed-ups never change a value: the move
ordering that tries the moves (and descends into the children it made),
the table kept between solves, the smaller first-guess budget, enhanced
transposition cutoffs, database cutoffs, prefetching and tests paused and
resumed node by node, each against a plain-Python brute force on random
positions of Kalah(4,3), (5,3) and (6,3) under both rule sets."""

from __future__ import annotations

import random

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah import solver as ks
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.solver import release_table_memory, solve_exact
from test_kalah_search import brute_force_margin

BOARDS = [(4, 3), (5, 3), (6, 3)]


def _positions(m, n, empty_capture, count, seed, max_in_houses=12):
    """Random-play positions with at most ``max_in_houses`` seeds left in the
    houses (so that the brute force takes well under a second each)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(m, n, empty_capture=empty_capture)
        while not s.is_over:
            left = int(s.board.sum()) - int(s.board[0]) - int(s.board[m + 1])
            if left <= max_in_houses and rng.random() < 0.5:
                break
            s = s.play(rng.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("m, n", [BOARDS[0]] + [pytest.param(*b, marks=pytest.mark.slow) for b in BOARDS[1:]])
@pytest.mark.parametrize("empty_capture", [False, True])
def test_every_option_gives_the_brute_force_value(m, n, empty_capture):
    db = build_endgame_database(m, 4, empty_capture)
    kept = np.zeros((1 << 12, 4), dtype=np.int64)  # one table across every solve below
    for pos in _positions(m, n, empty_capture, 6, seed=100 * m + 10 * n + empty_capture):
        want = brute_force_margin(pos)
        for kw in ({}, {"table": kept}, {"tt_capacity": 64, "first_guess": -30}, {"etc_min_seeds": 1 << 30},
                   {"etc_min_seeds": 0, "prefetch": True}, {"endgame_db": db, "db_etc_window": 4},
                   {"endgame_db": db, "prefetch": True, "chunk_nodes": 7, "table": kept},
                   {"chunk_nodes": 3, "tt_capacity": 256, "first_guess": 30}):
            r = solve_exact(pos, **kw)
            assert r["complete"] and r["margin"] == want, (pos.to_text(), kw)
            assert brute_force_margin(pos.play(r["best_move"])) == want, (pos.to_text(), kw)


@pytest.mark.parametrize("empty_capture", [False, True])
def test_paused_tests_resume_node_for_node(empty_capture):
    """A test paused every few nodes rebuilds the children of the plies on
    its stack and visits exactly the nodes of one uninterrupted run."""
    db = build_endgame_database(5, 4, empty_capture)
    for pos in _positions(5, 3, empty_capture, 4, seed=7 + empty_capture, max_in_houses=14):
        runs = [solve_exact(pos, endgame_db=db, first_guess=0, chunk_nodes=c, prefetch=p, tt_capacity=1 << 10)
                for c, p in ((1 << 30, False), (5, False), (3, True))]
        assert len({(r["margin"], r["nodes"]) for r in runs}) == 1, pos.to_text()


@pytest.mark.slow
def test_the_table_kept_between_solves_never_leaks_a_value():
    """Solves of one board under both rule sets, of other boards and of
    other sizes take turns with the table kept between calls: it is zeroed
    for each, so no entry of one solve reaches another."""
    release_table_memory()
    positions = [p for m, n in BOARDS for ec in (False, True) for p in _positions(m, n, ec, 2, seed=m + ec)]
    want = [brute_force_margin(pos) for pos in positions]
    for size in (1 << 12, 1 << 8, 1 << 14, 1 << 10):
        for pos, margin in zip(positions, want):
            assert solve_exact(pos, tt_capacity=size)["margin"] == margin, (pos.to_text(), size)
    assert len(ks._idle_tables) == 1 and ks._idle_tables[0].size == ks.TABLE_COLUMNS * (1 << 14) + ks.TABLE_ALIGN // 8
    release_table_memory()
    assert not ks._idle_tables


@pytest.mark.slow
def test_the_16_byte_table_in_either_shape_gives_the_brute_force_values():
    """The table's slots are 16 bytes (the key, then int16 bounds, move and
    seeds left) and a bucket starts on a cache line; an int64[slots, 4]
    array, as callers sized it for the 32-byte slots, is read as twice the
    slots of the same memory. Both give the brute force's margins, with
    tables small enough that entries are replaced, and keep what they
    learnt between the solves."""
    aligned = ks.new_solver_table(1 << 8)
    assert aligned.shape == (1 << 8, 2) and aligned.ctypes.data % ks.TABLE_ALIGN == 0 and not aligned.any()
    legacy = np.zeros((1 << 7, 4), dtype=np.int64)
    for m, n in BOARDS:
        for ec in (False, True):
            for pos in _positions(m, n, ec, 3, seed=40 + m + ec):
                aligned[:] = 0
                legacy[:] = 0
                want = brute_force_margin(pos)
                assert solve_exact(pos, table=aligned)["margin"] == want, pos.to_text()
                assert solve_exact(pos, table=legacy)["margin"] == want, pos.to_text()
                assert legacy.any() and aligned.any()
    with pytest.raises(ValueError, match="power of two"):
        ks.new_solver_table(100)

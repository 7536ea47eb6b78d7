"""Endgame databases: every entry checked against brute force on small
boards; the solver with a database agrees with brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah_endgame import build_endgame_database, database_size, rank_houses
from jitsearch.games.kalah_search import solve_exact

from test_kalah_search import _random_positions, brute_force_margin


def _all_house_vectors(m, max_seeds):
    for t in range(max_seeds + 1):
        for cuts in itertools.combinations(range(t + 2 * m - 1), 2 * m - 1):
            parts, prev = [], -1
            for c in cuts:
                parts.append(c - prev - 1)
                prev = c
            parts.append(t + 2 * m - 1 - prev - 1)
            yield parts


@pytest.mark.parametrize("m, seeds, ec", [(2, 6, False), (2, 6, True), (3, 4, False), (3, 4, True)])
def test_every_entry_equals_brute_force(m, seeds, ec):
    db = build_endgame_database(m, seeds, ec)
    ranks = set()
    for h in _all_house_vectors(m, seeds):
        board = np.array([3] + h[:m] + [1] + h[m:], dtype=np.int32)  # stores are irrelevant to the rest
        r = int(rank_houses(board, m, db["binom"]))
        ranks.add(r)
        if sum(h[:m]) == 0 or sum(h[m:]) == 0:
            continue  # the game is over: never looked up
        for player in (0, 1):
            s = KalahState.from_board(board, player, empty_capture=ec)
            assert db["values"][player, r] == brute_force_margin(s) - (1 - 3), (h, player)
    assert ranks == set(range(database_size(m, seeds)))  # the ranking is a bijection


@pytest.mark.parametrize("ec", [False, True])
def test_solver_with_a_database_agrees_with_brute_force(ec):
    db = build_endgame_database(3, 8, ec)
    for pos in _random_positions(12, m=3, n=3, seed=21 + ec, empty_capture=ec):
        want = brute_force_margin(pos)
        r = solve_exact(pos, endgame_db=db, tt_capacity=1 << 10)
        assert r["margin"] == want and r["endgame_seeds"] == 8
        assert brute_force_margin(pos.play(r["best_move"])) == want
    with pytest.raises(ValueError, match="another board size"):
        solve_exact(KalahState.initial(4, 2), endgame_db=db)


def test_database_cache_round_trips(tmp_path):
    a = build_endgame_database(2, 5, True, cache_dir=tmp_path)
    b = build_endgame_database(2, 5, True, cache_dir=tmp_path)
    assert not a["loaded"] and b["loaded"] and (a["values"] == b["values"]).all()
    (next(tmp_path.glob("*.npy"))).write_bytes(b"garbage")  # a damaged file is rebuilt, not trusted
    c = build_endgame_database(2, 5, True, cache_dir=tmp_path)
    assert not c["loaded"] and (c["values"] == a["values"]).all()

"""Kalah search: alpha-beta (ordering, table) vs plain-Python minimax; exact solving vs brute force."""

from __future__ import annotations

import functools
import random

import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.naive import move as ref_move
from jitsearch.games.kalah.rules import W1, W2, W3, W4, W5
from jitsearch.games.kalah.alphabeta import iterative_deepening, search
from jitsearch.games.kalah.solver import solve_exact


def _split(state):
    m, b = state.houses, [int(x) for x in state.board]
    return b[1:m + 1], b[m + 1], b[m + 2:], b[0]


def _value(h0, s0, h1, s1, root, evaluation, over):
    margin = (s0 - s1) if root == 0 else (s1 - s0)
    if over or evaluation == "store":
        return float(margin)
    own, own_store, opp_store = (h0, s0, s1) if root == 0 else (h1, s1, s0)
    return (W1 * own[0] + W2 * sum(own) + W3 * sum(1 for x in own if x) + W4 * own_store - W5 * opp_store)


def ref_minimax(state, depth, evaluation="store", empty_capture=False):
    """Plain depth-limited minimax on the reference rules; MAX = the root player."""
    root = state.player

    def rec(h0, s0, h1, s1, player, d):
        if player == -1 or d == 0:
            return _value(h0, s0, h1, s1, root, evaluation, player == -1)
        side = h0 if player == 0 else h1
        vals = []
        for i in range(len(side)):
            if side[i]:
                nh0, ns0, nh1, ns1, nxt = ref_move(h0, s0, h1, s1, player, i, empty_capture)
                vals.append(rec(nh0, ns0, nh1, ns1, nxt, d - 1))
        return max(vals) if player == root else min(vals)

    h0, s0, h1, s1 = _split(state)
    return rec(h0, s0, h1, s1, state.player, depth)


def _random_positions(count, m=4, n=3, seed=0, empty_capture=False):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(m, n, empty_capture=empty_capture)
        for _ in range(rng.randrange(0, 12)):
            if s.is_over:
                break
            s = s.play(rng.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


@pytest.mark.parametrize("evaluation", ["store", "heuristic"])
@pytest.mark.parametrize("empty_capture", [False, True])
def test_alphabeta_equals_plain_minimax(evaluation, empty_capture):
    for s in _random_positions(40, seed=1 + empty_capture, empty_capture=empty_capture):
        for d in (1, 2, 4):
            want = ref_minimax(s, d, evaluation, empty_capture)
            for tt in (0, 1 << 10):
                for ordering in (True, False):
                    r = search(s, d, eval=evaluation, tt_capacity=tt, ordering=ordering)
                    assert r["value"] == pytest.approx(want, abs=1e-9), (s.to_text(), d, tt, ordering)
                    child = s.play(r["move"])
                    # the chosen move attains the value
                    assert ref_minimax_child(s, child, d, evaluation, empty_capture) == pytest.approx(want)


def ref_minimax_child(root_state, child, depth, evaluation, empty_capture):
    """Value of ``child`` searched to ``depth - 1`` with the root player as MAX."""
    root = root_state.player

    def rec(h0, s0, h1, s1, player, d):
        if player == -1 or d == 0:
            return _value(h0, s0, h1, s1, root, evaluation, player == -1)
        side = h0 if player == 0 else h1
        vals = [rec(*ref_move(h0, s0, h1, s1, player, i, empty_capture), d - 1)
                for i in range(len(side)) if side[i]]
        return max(vals) if player == root else min(vals)

    return rec(*_split(child), child.player, depth - 1)


def test_ordering_and_table_reduce_nodes():
    s = KalahState.initial(6, 4)
    plain = search(s, 7, tt_capacity=0, ordering=False)
    ordered = search(s, 7, tt_capacity=0)
    both = search(s, 7)
    assert plain["value"] == ordered["value"] == both["value"]
    assert ordered["nodes"] < plain["nodes"] and both["nodes"] <= ordered["nodes"]
    assert both["pv"][0] == both["move"] and len(both["pv"]) >= 2


def test_iterative_deepening_returns_a_completed_depth():
    s = KalahState.initial(6, 4)
    r = iterative_deepening(s, max_depth=6)
    assert r["depth"] == 6 and r["value"] == search(s, 6)["value"]
    t = iterative_deepening(s, time_limit=0.3)
    assert t["depth"] >= 1 and t["move"] in s.legal_moves()


def brute_force_margin(state):
    """Player 0's margin under perfect play, memoised plain Python."""

    @functools.lru_cache(maxsize=None)
    def rec(h0, s0, h1, s1, player):
        if player == -1:
            return s0 - s1
        side = h0 if player == 0 else h1
        vals = [rec(*(tuple(x) if isinstance(x, list) else x
                      for x in ref_move(list(h0), s0, list(h1), s1, player, i, state.empty_capture)))
                for i in range(len(side)) if side[i]]
        return max(vals) if player == 0 else min(vals)

    h0, s0, h1, s1 = _split(state)
    return rec(tuple(h0), s0, tuple(h1), s1, state.player)


@pytest.mark.parametrize("m, n", [(1, 1), (1, 4), (2, 2), (2, 3), (3, 2), (3, 3),
                                  pytest.param(4, 2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("empty_capture", [False, True])
def test_exact_solve_equals_brute_force(m, n, empty_capture):
    s = KalahState.initial(m, n, empty_capture=empty_capture)
    r = solve_exact(s, tt_capacity=1 << 12)
    assert r["complete"] and r["margin"] == brute_force_margin(s)
    assert r["best_move"] in s.legal_moves()
    # the best move keeps the value
    assert brute_force_margin(s.play(r["best_move"])) == r["margin"]
    for pos in _random_positions(5, m=3, n=3, seed=m * 10 + n, empty_capture=empty_capture):
        assert solve_exact(pos, tt_capacity=1 << 8, first_guess=3)["margin"] == brute_force_margin(pos)


@pytest.mark.parametrize("empty_capture", [pytest.param(False, marks=pytest.mark.slow), True])
def test_solver_options_agree_with_brute_force(empty_capture):
    """Enhanced transposition cutoffs, a tiny table (constant replacement in
    the two-slot buckets) and any first guess change the work, never the
    margin; positions with unequal stores check the table's relative bounds."""
    positions = _random_positions(12, m=3, n=3, seed=5 + empty_capture, empty_capture=empty_capture)
    for pos in positions:
        want = brute_force_margin(pos)
        for kw in ({}, {"etc_min_seeds": 0}, {"tt_capacity": 64, "first_guess": -20},
                   {"tt_capacity": 1 << 10, "first_guess": 21, "etc_min_seeds": 4}):
            r = solve_exact(pos, **kw)
            assert r["margin"] == want, (pos.to_text(), kw)
            if not pos.is_over:
                assert brute_force_margin(pos.play(r["best_move"])) == want


def test_estimate_margin_has_the_parity_of_the_seed_total():
    from jitsearch.games.kalah.solver import estimate_margin, estimate_position

    for m, n in ((4, 3), (5, 3), (6, 4)):
        s = KalahState.initial(m, n)
        assert (estimate_margin(s, node_budget=20_000) - 2 * m * n) % 2 == 0
        assert estimate_margin(s, node_budget=20_000) == estimate_margin(s, node_budget=20_000)
        e = estimate_position(s, node_budget=20_000)
        # the move and value of the deepest finished iteration: a plain search to that depth agrees
        r = search(s, e["depth"], tt_capacity=1 << 16)
        assert e["move"] == r["move"] and e["margin"] - r["value"] in (0, 1)
        assert e["nodes"] <= 20_000 * 2  # an iteration past the budget is abandoned


def test_solver_time_limit_reports_bounds():
    s = KalahState.initial(6, 6)
    r = solve_exact(s, time_limit=0.5, tt_capacity=1 << 16)
    assert not r["complete"] and r["margin"] is None and r["stop_reason"] == "time_limit"
    assert -72 <= r["lower"] <= r["upper"] <= 72 and r["best_move"] in s.legal_moves()


@pytest.mark.parametrize("evaluation", ["store", "heuristic"])
@pytest.mark.slow
def test_fsss_on_kalah_matches_alphabeta_and_expands_a_subset(evaluation):
    from jitsearch.games.kalah.fsss import fsss_search

    for s in _random_positions(25, m=6, n=4, seed=7):
        for d in (1, 3, 5):
            ab = search(s, d, eval=evaluation, tt_capacity=0, trace=True)
            fs = fsss_search(s, d, eval=evaluation, trace=True)
            assert fs["value"] == pytest.approx(ab["value"], abs=1e-9)
            assert set(fs["frontier"].tolist()) <= set(ab["frontier"].tolist())
            assert fs["evaluations"] <= ab["evaluations"]
            assert ref_minimax_child(s, s.play(fs["move"]), d, evaluation, False) == pytest.approx(fs["value"])

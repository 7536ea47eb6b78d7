"""The Kalah engine (jitsearch.games.kalah.engine): PVS + lock-free table + endgame database + Lazy SMP."""

import math
import random

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.games.kalah import KalahState, apply_move
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.engine import (EXTEND_MIN_DEPTH, FEATURES, FITTED_WEIGHTS, SCALE, STORE_WEIGHTS,
                                          KalahEngine, Probe, evaluate, features_into)
from jitsearch.games.kalah.engine_table import pack_entry, unpack_entry
from jitsearch.games.kalah.solver import solve_exact


def negamax_reference(state: KalahState, depth: int, weights=STORE_WEIGHTS) -> int:
    """Plain depth-limited negamax (no pruning, no table): the mover's value in centiseeds; an extra turn with
    EXTEND_MIN_DEPTH plies left or more uses no ply (the engine's rule)."""
    m = state.houses
    w = np.asarray(weights, np.int64)

    def rec(board, player, d):
        if d == 0:  # the evaluation, clamped to the seed bound (the mover's store difference +- the house seeds)
            own, opp = (m + 1, 0) if player == 0 else (0, m + 1)
            diff, left = int(board[own] - board[opp]), int(board.sum() - board[0] - board[m + 1])
            return min(max(int(evaluate(board, m, player, w)), SCALE * (diff - left)), SCALE * (diff + left))
        best = -math.inf
        first = 1 if player == 0 else m + 2
        for pit in range(first, first + m):
            if board[pit] == 0:
                continue
            child = board.copy()
            nxt = int(apply_move(child, m, player, pit, state.empty_capture))
            if nxt < 0:
                margin = int(child[m + 1] - child[0])
                v = SCALE * (margin if player == 0 else -margin)
            elif nxt == player:  # an extra turn: extended, as the engine does, with EXTEND_MIN_DEPTH plies left
                v = rec(child, player, d if d >= EXTEND_MIN_DEPTH else d - 1)
            else:
                v = -rec(child, nxt, d - 1)
            best = max(best, v)
        return best

    return rec(state.board.copy(), state.player, depth)


def random_positions(houses, seeds, count, seed, max_plies=14):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(houses, seeds, empty_capture=bool(len(out) % 2))
        for _ in range(rng.randint(0, max_plies)):
            if s.is_over:
                break
            s = s.play(rng.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


@pytest.mark.parametrize("weights", ["store", "fitted"])
def test_fixed_depth_value_equals_plain_negamax_any_threads(weights):
    """With cutoffs only from entries of the exact depth, PVS + aspiration + table + Lazy SMP return the
    depth-limited negamax value, for 1 and for several threads sharing the table."""
    w = STORE_WEIGHTS if weights == "store" else FITTED_WEIGHTS
    for s in random_positions(4, 3, 12, seed=3):
        for depth in (1, 2, 4, 6):
            ref = negamax_reference(s, depth, w)
            for threads in (1, 3):
                e = KalahEngine(4, eval=weights, exact_depth=True, table_mb=1, threads=threads)
                r = e.search(s, depth=depth)
                assert r["value"] == ref, (s.to_text(), depth, threads)
                assert r["move"] in s.legal_moves()


def test_one_thread_is_deterministic_node_for_node():
    s = random_positions(6, 4, 1, seed=9)[0]
    runs = [KalahEngine(6, eval="fitted", table_mb=4).search(s, depth=9) for _ in range(2)]
    assert runs[0]["nodes"] == runs[1]["nodes"] > 0
    assert (runs[0]["move"], runs[0]["value"]) == (runs[1]["move"], runs[1]["value"])
    smp = KalahEngine(6, eval="fitted", table_mb=4, threads=1).search(s, depth=9)
    assert smp["nodes"] == runs[0]["nodes"]


def test_persistent_table_and_default_mode_play_legal_moves():
    e = KalahEngine(6, eval="fitted", table_mb=4)
    s = KalahState.initial(6, 4)
    while not s.is_over:
        r = e.search(s, depth=5)
        assert r["move"] in s.legal_moves()
        assert r["pv"][0] == r["move"]
        s = s.play(r["move"])


@pytest.mark.slow
def test_database_probes_give_the_solvers_exact_values():
    """Every position after the root is in the database: the engine's value is the exact margin (the
    solver's, from the mover's side) and its move is an optimal one."""
    db = build_endgame_database(4, 24, False)
    probe = Probe(db["values"], db["binom"], 24)
    db_ec = build_endgame_database(4, 24, True)
    probe_ec = Probe(db_ec["values"], db_ec["binom"], 24)
    for s in random_positions(4, 3, 16, seed=21, max_plies=6):
        e = KalahEngine(4, eval="fitted", probe=probe_ec if s.empty_capture else probe, table_mb=1)
        r = e.search(s, depth=2)
        assert r["exact"]
        exact = solve_exact(s)["margin"]
        sign = 1 if s.player == 0 else -1
        assert r["value"] == SCALE * sign * exact, s.to_text()
        after = s.play(r["move"])
        assert (after.margin if after.is_over else solve_exact(after)["margin"]) == exact  # an optimal move


def test_database_probe_inside_a_deeper_search_is_exact_at_the_root_when_covered():
    probes = {}
    for rule in (False, True):
        db = build_endgame_database(3, 18, rule)
        probes[rule] = Probe(db["values"], db["binom"], 18)
    for s in random_positions(3, 3, 10, seed=5):
        r = KalahEngine(3, eval="store", probe=probes[s.empty_capture], table_mb=1).search(s, depth=8)
        exact = solve_exact(s)["margin"]
        assert r["exact"] and r["value"] == SCALE * (exact if s.player == 0 else -exact)


def test_evaluate_is_the_store_difference_plus_weighted_features():
    f = np.zeros(len(FEATURES), np.int64)
    for s in random_positions(6, 4, 40, seed=2, max_plies=30):
        features_into(s.board, 6, s.player, f)
        own, opp = (7, 0) if s.player == 0 else (0, 7)
        store = SCALE * (int(s.board[own]) - int(s.board[opp]))
        assert evaluate(s.board, 6, s.player, FITTED_WEIGHTS) == store + int(FITTED_WEIGHTS @ f)
        assert evaluate(s.board, 6, s.player, STORE_WEIGHTS) == store


def test_table_entries_round_trip():
    for value in (-100_000, -1, 0, 7, 100_000):
        for depth, flag, move, gen in ((0, 0, -1, 0), (128, 2, 33, 65535), (5, 1, 7, 3)):
            assert unpack_entry(np.uint64(pack_entry(value, depth, flag, move, gen))) == (value, depth, flag, move, gen)


def test_time_limited_search_stops():
    e = KalahEngine(6, eval="fitted", table_mb=8, threads=2, book=False)  # (the start is in the book)
    r = e.search(KalahState.initial(6, 4), time_limit=0.1)
    assert r["seconds"] < 1.5 and r["depth"] >= 4 and r["move"] in range(1, 7)


def test_engine_agent_specs_and_errors():
    a = parse_agent("alphabeta:time=0.05,threads=2,db=0")
    assert a.engine and a.eval == "fitted" and str(a) == "alphabeta:time=0.05,threads=2,db=0"
    assert not parse_agent("alphabeta:depth=4").engine  # the fixed-depth search of the seeds
    assert not parse_agent("alphabeta:time=0.05,plain=1").engine
    assert parse_agent("alphabeta:depth=3,db=0").engine
    for bad, words in (("alphabeta:time=1,eval=heuristic", "plain=1"), ("alphabeta:depth=3,eval=fitted", "engine"),
                       ("alphabeta:time=1,threads=0", "threads"), ("alphabeta:plain=1,db=3", "plain"),
                       ("alphabeta:time=1,db=128", "db"), ("alphabeta:time=1,tt=0", "tt"),
                       ("fsss:depth=3,threads=2", "threads")):
        with pytest.raises(ValueError, match=words):
            parse_agent(bad)


def test_engine_agent_plays_a_game_with_its_database_and_reuses_its_table(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    a = parse_agent("alphabeta:depth=4,db=10")
    b = parse_agent("alphabeta:depth=2")
    start = KalahState.initial(4, 3)
    a.check_match(4, 3, False)
    r = play_game(start, [a, b])
    assert r["finished"]
    assert a._engine_search._engine is not None and a.last["move"] in range(1, 5)
    twin = a.with_seed(3)
    assert twin._engine_search._engine is None  # a new game gets a new table


def test_other_weights_are_checked_and_used():
    s = random_positions(4, 3, 1, seed=4)[0]
    w = np.array([10, -20, 30, 40, -50, 6], np.int64)
    r = KalahEngine(4, weights=w, exact_depth=True, table_mb=1).search(s, depth=3)
    assert r["value"] == negamax_reference(s, 3, w)
    for bad in ([1, 2, 3], [0.5] * 6, [10**6] * 6):
        with pytest.raises(ValueError, match="weights"):
            KalahEngine(4, weights=np.array(bad))

"""The engine's exact mode (jitsearch.games.kalah.engine): a proof by the exact solver inside the move's
budget, proven results kept, ``exact`` reported in the agent's ``last``, the protocol's ``info`` lines and the
tournament's game records."""

import random

import numpy as np
import pytest

from jitsearch.arena.agents import parse_agent
from jitsearch.arena.engine_protocol import EngineServer, _info_lines
from jitsearch.arena.external_engine import _exact_words
from conftest import kalah_match as KalahMatch
from jitsearch.arena.game_match import GameRecords, exact_summary, play_one, summarize
from jitsearch.arena.records import BadRecord, config_id, seal
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah import solver as solver_module
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.engine import SCALE, KalahEngine, Probe
from jitsearch.games.kalah.engine_db import NO_PROBE, warm_solver
from jitsearch.games.kalah.solver import solve_exact


def seeds_in_houses(s: KalahState) -> int:
    return int(s.board.sum()) - int(s.board[0]) - int(s.board[s.houses + 1])


def positions(houses, seeds, count, seed, max_seeds):
    """Random-play positions with at most ``max_seeds`` seeds in the houses, cycling through the two rule sets
    and the two players to move."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(houses, seeds, empty_capture=bool(len(out) % 2))
        for _ in range(rng.randint(4, 40)):
            if s.is_over or seeds_in_houses(s) <= max_seeds and rng.random() < 0.3:
                break
            s = s.play(rng.choice(s.legal_moves()))
        if not s.is_over and seeds_in_houses(s) <= max_seeds and s.player == (len(out) // 2) % 2:
            out.append(s)
    return out


def mover_margin(s: KalahState) -> int:
    """The mover's final margin under perfect play (the solver's, turned to the mover's side)."""
    margin = solve_exact(s)["margin"]
    return margin if s.player == 0 else -margin


def move_value(s: KalahState, move: int) -> int:
    """The mover's final margin after ``move`` and perfect play."""
    after = s.play(move)
    margin = after.margin if after.is_over else solve_exact(after)["margin"]
    return margin if s.player == 0 else -margin


@pytest.mark.parametrize("houses,max_seeds,seconds", [(4, 24, 20.0), pytest.param(5, 22, 20.0, marks=pytest.mark.slow),
                                                       pytest.param(6, 20, 20.0, marks=pytest.mark.slow)])
def test_exact_value_is_the_solvers_and_the_move_an_optimal_one(houses, max_seeds, seconds):
    """No database (the proof itself is tested): every position within reach is proven, its value is
    solve_exact's margin from the mover's side and its move keeps that margin, for both rule sets and both
    players to move."""
    engines = {}
    found = set()
    for rule in (False, True):  # compiled (or loaded from Numba's cache) before any search is timed
        warm_solver(houses, NO_PROBE, rule)
        KalahEngine(houses, table_mb=1, exact=False).search(KalahState.initial(houses, 3, empty_capture=rule), depth=2)
    for s in positions(houses, 3, 8, seed=houses, max_seeds=max_seeds):
        e = engines.setdefault(s.empty_capture, KalahEngine(houses, table_mb=2, exact_reach=max_seeds,
                                                            exact_share=0.9))  # (the heuristic search: 10%)
        r = e.search(s, time_limit=seconds)
        want = mover_margin(s)
        why = f"{s.to_text()} empty_capture={s.empty_capture}: {r}"
        assert r["exact"] and r["proof"]["complete"], why
        assert r["margin"] == want and r["value"] == SCALE * want, why
        assert move_value(s, r["move"]) == want, why
        assert r["depth"] >= 0 and r["move"] in s.legal_moves()
        found.add((s.empty_capture, s.player))
    assert found == {(False, 0), (False, 1), (True, 0), (True, 1)}


def test_exact_mode_with_a_database_at_its_leaves(monkeypatch, tmp_path):
    """The proof reads the engine's endgame database: the same values as without one."""
    probes = {}
    for rule in (False, True):
        db = build_endgame_database(4, 8, rule)
        probes[rule] = Probe(db["values"], db["binom"], 8)
    for s in positions(4, 3, 6, seed=11, max_seeds=20):
        r = KalahEngine(4, probe=probes[s.empty_capture], table_mb=1).search(s, time_limit=20.0)
        assert r["exact"] and r["margin"] == mover_margin(s), s.to_text()
        assert move_value(s, r["move"]) == r["margin"]


def test_a_game_of_proven_moves_keeps_its_margin():
    """An engine proving every move of a game never does worse than its first proof (the table kept across
    the moves: later proofs reuse it), whatever the opponent plays."""
    rng = random.Random(3)
    e = KalahEngine(4, table_mb=2)
    s = positions(4, 3, 1, seed=9, max_seeds=22)[0]
    me = s.player
    first = None
    while not s.is_over:
        if s.player == me:
            r = e.search(s, time_limit=20.0)
            assert r["exact"]
            first = r["margin"] if first is None else first
            assert r["margin"] >= first  # a proven result only grows as the opponent errs
            s = s.play(r["move"])
        else:
            s = s.play(rng.choice(s.legal_moves()))
    assert (s.margin if me == 0 else -s.margin) >= first


def test_out_of_reach_off_and_depth_searches_do_not_prove():
    s = positions(5, 3, 1, seed=2, max_seeds=24)[0]
    n = seeds_in_houses(s)
    for engine, kwargs in ((KalahEngine(5, table_mb=1, exact_reach=n - 1), {"time_limit": 0.05}),
                           (KalahEngine(5, table_mb=1, exact=False), {"time_limit": 0.05}),
                           (KalahEngine(5, table_mb=1), {"depth": 3})):
        r = engine.search(s, **kwargs)
        assert r["proof"] is None and not r["exact"] and r["margin"] is None and r["depth"] >= 1
    assert KalahEngine(5, table_mb=1, exact_reach=n).search(s, time_limit=20.0)["exact"]


def test_a_root_in_the_database_stops_after_one_ply():
    db = build_endgame_database(4, 12, False)
    s = positions(4, 3, 2, seed=5, max_seeds=12)
    s = [x for x in s if not x.empty_capture][0]
    r = KalahEngine(4, probe=Probe(db["values"], db["binom"], 12), table_mb=1).search(s, time_limit=5.0)
    assert r["exact"] and r["depth"] == 1 and r["proof"] is None and r["seconds"] < 1.0
    assert r["margin"] == mover_margin(s)


def _fake_solve(result, calls):
    def solve(state, **kwargs):
        calls.append(kwargs)
        base = {"nodes": 100, "seconds": 0.001, "complete": False, "margin": None, "iterations": 1}
        return {**base, **result(state)}
    return solve


def test_an_unfinished_proof_that_secures_a_draw_or_win_overrules_the_heuristic(monkeypatch):
    """The fallback path: a bound move proven to secure >= 0 for the mover is played even when the heuristic
    search prefers another; a bound below 0 leaves the heuristic's move."""
    s = positions(5, 3, 1, seed=4, max_seeds=24)[0]
    heuristic, other = s.legal_moves()[:2]
    sign = 1 if s.player == 0 else -1
    for mover_lower, played in ((2, other), (0, other), (-2, heuristic)):
        calls = []
        bounds = sorted((sign * mover_lower, sign * 30))
        monkeypatch.setattr(solver_module, "solve_exact", _fake_solve(
            lambda st: {"lower": bounds[0], "upper": bounds[1], "best_move": other, "best_move_source": "bound"},
            calls))
        e = KalahEngine(5, table_mb=1)
        monkeypatch.setattr(e, "_heuristic", lambda *args: {"move": heuristic, "value": 50, "depth": 3, "nodes": 9,
                                                            "db_hits": 0, "seconds": 0.0, "pv": [heuristic]})
        r = e.search(s, time_limit=0.05)
        assert calls and r["proof"]["lower"] == mover_lower and r["proof"]["kept"] == (mover_lower >= 0)
        assert r["move"] == played and not r["exact"] and r["depth"] == 3


def test_a_proven_margin_is_the_next_proofs_first_test(monkeypatch):
    """After a proof of W for a player, the next proof of that player starts by testing whether W is kept
    (player 0: first guess W; player 1: -W + 1, whose fail low proves <= -W) with the larger guard share."""
    for player in (0, 1):
        s = positions(5, 3, 40, seed=8, max_seeds=24)
        s = [x for x in s if x.player == player][0]
        calls = []
        w = 4
        p0 = w if player == 0 else -w
        monkeypatch.setattr(solver_module, "solve_exact", _fake_solve(
            lambda st: {"complete": True, "margin": p0, "lower": p0, "upper": p0,
                        "best_move": st.legal_moves()[0], "best_move_source": "exact"}, calls))
        e = KalahEngine(5, table_mb=1, exact_share=0.25)
        r = e.search(s, time_limit=1.0)
        assert r["exact"] and r["margin"] == w and r["value"] == w * SCALE
        e.search(s, time_limit=1.0)
        assert calls[1]["first_guess"] == (w if player == 0 else -w + 1)
        # the first proof has what the heuristic search left (at least the share); the guard has GUARD_SHARE
        assert 0.2 <= calls[0]["time_limit"] <= 1.0 and calls[1]["time_limit"] > 0.8


def test_a_guard_proof_that_finished_no_test_is_tried_again(monkeypatch):
    """A proof keeping an earlier result that lost its budget before finishing one test (a loaded machine) is
    tried once more rather than leaving the move to a heuristic search with a tenth of the time."""
    s = [x for x in positions(5, 3, 40, seed=8, max_seeds=24) if x.player == 0][0]
    move = s.legal_moves()[-1]
    answers = [{"complete": True, "margin": 4, "lower": 4, "upper": 4, "best_move": move,
                "best_move_source": "exact"},
               {"lower": -30, "upper": 30, "best_move": -1, "best_move_source": "table", "iterations": 0, "nodes": 0},
               {"complete": True, "margin": 4, "lower": 4, "upper": 4, "best_move": move,
                "best_move_source": "exact"}]
    calls = []
    monkeypatch.setattr(solver_module, "solve_exact", _fake_solve(lambda st: answers[len(calls) - 1], calls))
    e = KalahEngine(5, table_mb=1)
    assert e.search(s, time_limit=0.2)["exact"]
    r = e.search(s, time_limit=0.2)
    assert len(calls) == 3 and r["exact"] and r["move"] == move and r["margin"] == 4
    assert calls[2]["first_guess"] == 4 and calls[2]["time_limit"] >= 0.02


def test_proofs_run_on_the_vector_kernel_where_it_fits(monkeypatch):
    """The engine's proofs are the vector kernel's (no chunks) on boards it takes, the resumable kernel's in
    chunks on the others; both prove the same value."""
    from jitsearch.games.kalah.null_window_fast import fast_kernel_fits

    calls = []
    real = solver_module.solve_exact

    def spy(state, **kwargs):
        calls.append(kwargs)
        return real(state, **kwargs)

    monkeypatch.setattr(solver_module, "solve_exact", spy)
    s = positions(5, 3, 1, seed=11, max_seeds=14)[0]
    margins = []
    for vector in (True, False):
        e = KalahEngine(5, table_mb=1)
        assert e.vector_proof == fast_kernel_fits(5)
        e.vector_proof = vector and e.vector_proof
        r = e.search(s, time_limit=5.0)
        assert r["exact"] and r["proof"]["complete"]
        assert (calls[-1]["chunk_nodes"] is None) if e.vector_proof else (calls[-1]["chunk_nodes"] > 0)
        margins.append(r["margin"])
    assert margins[0] == margins[1] == real(s)["margin"]
    assert KalahEngine(8, table_mb=1).vector_proof is False  # past the vector kernel's 7 houses


def test_a_long_proof_stops_within_about_a_second_of_the_stop_event():
    """A proof with an hour to go (here the first test keeping a result: the proof runs first) ends soon after
    the stop event, whatever its budget: its kernel calls are short."""
    import threading
    import time

    s = KalahState.initial(6, 3)  # 36 seeds, no database: seconds to prove
    e = KalahEngine(6, table_mb=8, exact_reach=40)
    e._proven[0], e._solver_rules = (0, 100), (6, False)  # as if a proof of margin 0 came before
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.perf_counter()
    r = e.search(s, time_limit=3600.0, stop_event=stop)
    took = time.perf_counter() - t0
    assert r["proof"] is not None and not r["proof"]["complete"], r
    # the solver reads its progress callback (the stop) about every second, between kernel calls of <= 50 ms
    assert r["proof"]["seconds"] < 2.0 and took < 3.0, (took, r)
    assert r["move"] in s.legal_moves()


def test_engine_agent_options_and_its_last():
    a = parse_agent("alphabeta:time=0.05,exact=0")
    assert a.engine and a.options["exact"] is False
    assert parse_agent("alphabeta:time=0.05,exact_share=0.3").options["exact_share"] == 0.3
    assert parse_agent("alphabeta:depth=3,exact=1").engine
    for bad, words in (("alphabeta:time=1,exact_share=0", "exact_share"), ("alphabeta:time=1,exact_share=1.5",
                                                                           "exact_share"),
                       ("alphabeta:time=1,exact=0,exact_share=0.5", "exact=0"), ("alphabeta:time=1,exact=2", "exact"),
                       ("alphabeta:time=1,plain=1,exact=1", "plain")):
        with pytest.raises(ValueError, match=words):
            parse_agent(bad)
    s = positions(4, 3, 1, seed=1, max_seeds=20)[0]
    agent = parse_agent("alphabeta:time=5,db=0")
    move = agent(s)
    assert agent.last["exact"] and agent.last["margin"] == mover_margin(s) and move == agent.last["move"]


def test_info_lines_and_the_protocol_report_exact():
    assert _info_lines({"depth": 0, "value": 400, "exact": True, "margin": 4}) == ["info depth 0 value 400 exact 1 "
                                                                                  "margin 4"]
    assert _info_lines({"depth": 7, "value": 12, "exact": False, "margin": None}) == ["info depth 7 value 12 exact 0"]
    assert _exact_words("depth 0 value -200 exact 1 margin -2") == {"exact": True, "margin": -2}
    assert _exact_words("depth 9 value 3 exact 0") == {"exact": False}
    assert _exact_words("depth 9 value 3") == {} and _exact_words("exact 1 margin x") == {}
    server = EngineServer("alphabeta:time=5,db=0")
    s = positions(4, 3, 1, seed=6, max_seeds=20)[0]
    rule = "empty-capture" if s.empty_capture else "standard"
    assert server.handle(f"game 4 3 {rule}")[0] == ["ok"]
    assert server.handle(f"position {s.to_text()}")[0] == ["ok"]
    answers, _ = server.handle("go 5000")
    words = answers[0].split()
    assert words[0] == "info" and words[words.index("exact") + 1] == "1"
    assert int(words[words.index("margin") + 1]) == mover_margin(s)
    assert answers[-1] == f"move {server.agent.last['move']}"


def test_tournament_records_carry_the_proven_moves_and_none_is_thrown():
    match = KalahMatch(houses=4, seeds=3, openings=2, seed=4)
    a, b = "alphabeta:time=0.05,db=0", "alphabeta:time=0.05,db=0,exact=0"
    records = []
    check = GameRecords(a, b, match)
    for seat in (0, 1):
        rec = play_one(a, b, match, 0, seat)
        assert rec["exact_moves"] and all(side == "a" for _, side, _ in rec["exact_moves"])
        rec.update(a=a, b=b, config=config_id(a, b, match), match=check.settings)
        records.append(seal(rec))
        assert check(rec) == (0, seat)
    out = summarize(records)
    assert out["exact"]["a"]["moves"] == sum(len(r["exact_moves"]) for r in records)
    assert out["exact"]["a"]["thrown"] == 0 and out["exact"]["b"] == {"moves": 0, "thrown": 0}
    bad = dict(records[0], exact_moves=[[len(records[0]["moves"]), "a", 0]])
    with pytest.raises(BadRecord, match="exact_moves"):
        check(seal({k: v for k, v in bad.items() if k != "check"}))


def test_exact_summary_counts_a_result_thrown_away():
    rec = {"a_player": 1, "margin": 2, "capped": False, "exact_moves": [[3, "a", 0], [5, "a", -2], [6, "b", 2],
                                                                         [8, "b", 4]]}
    # A is player 1: its final margin is -2 (it had proven 0: thrown; -2: kept); B's is +2 (4: thrown)
    assert exact_summary([rec]) == {"a": {"moves": 2, "thrown": 1}, "b": {"moves": 2, "thrown": 1}}
    assert exact_summary([dict(rec, capped=True)]) == {"a": {"moves": 2, "thrown": 0}, "b": {"moves": 2, "thrown": 0}}

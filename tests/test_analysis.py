"""jitsearch.arena.analysis: every move of a position valued, exact where the solver finishes."""

from __future__ import annotations

import random
import threading
import time

import pytest

from jitsearch.arena.analysis import analyse_position, check_analysis_engine
from jitsearch.games.kalah import KalahState, move_values, solve_exact


def random_positions(houses, seeds, count, seed, empty_capture=False):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(houses, seeds, empty_capture=empty_capture)
        for _ in range(rng.randrange(0, 8)):
            if s.is_over:
                break
            s = s.play(rng.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


@pytest.mark.parametrize("empty_capture", [pytest.param(False, marks=pytest.mark.slow), True])
def test_exact_values_equal_the_solver(empty_capture):
    for s in random_positions(3, 3, 6, 11, empty_capture):
        r = analyse_position(s, solve_time=60)
        ref = move_values(s)
        assert r["exact"] and not r["interrupted"]
        assert [row["move"] for row in r["moves"]] == s.legal_moves()
        assert [row["value"] for row in r["moves"]] == [row["value"] for row in ref["moves"]]
        assert [row["margin"] for row in r["moves"]] == [row["margin"] for row in ref["moves"]]
        assert {row["source"] for row in r["moves"]} == {"exact"}
        assert r["best_move"] == ref["best_move"]
        # the principal variation starts with the best move and each later ply is an optimal move
        state = s
        assert r["pv"][0] == ref["best_move"]
        for mv in r["pv"]:
            assert mv in state.legal_moves()
            if mv != r["pv"][0]:
                assert mv in _optimal(state)
            state = state.play(mv)


def _optimal(state):
    ref = move_values(state)
    return {row["move"] for row in ref["moves"] if row["value"] == ref["value"]}


@pytest.mark.slow
def test_engine_values_from_the_database_are_exact():
    # Kalah(3,3): 18 seeds, inside the engine's default database, so the engine's values are exact
    s = KalahState.initial(3, 3)
    r = analyse_position(s, engine="alphabeta:time=0.3", solve_time=0)
    ref = move_values(s)
    assert {row["source"] for row in r["moves"]} == {"database"}
    assert [row["value"] for row in r["moves"]] == [row["value"] for row in ref["moves"]]
    assert r["best_move"] == ref["best_move"] and r["pv"][0] == ref["best_move"]


def test_engine_values_on_a_board_too_large_to_solve():
    s = KalahState.initial(6, 4)
    r = analyse_position(s, engine="alphabeta:depth=4", solve_time=0)
    assert {row["source"] for row in r["moves"]} == {"engine"}
    best = max(r["moves"], key=lambda row: (row["value"], -row["move"]))
    assert r["best_move"] == best["move"] and r["pv"][0] == best["move"]
    assert all(mv in st for mv, st in zip(r["pv"], _pv_states(s, r["pv"])))
    assert not r["exact"]


def _pv_states(state, pv):
    out = []
    for mv in pv:
        out.append(state.legal_moves())
        state = state.play(mv)
    return out


@pytest.mark.slow
def test_mcts_visit_shares():
    s = KalahState.initial(4, 3)
    r = analyse_position(s, engine="mcts:iterations=400", solve_time=0, seed=3)
    assert {row["source"] for row in r["moves"]} == {"mcts"}
    assert sum(row["share"] for row in r["moves"]) == pytest.approx(1.0)
    assert r["best_move"] == max(r["moves"], key=lambda row: (row["visits"], -row["move"]))["move"]
    assert all(0.0 <= row["value"] <= 1.0 for row in r["moves"])


def test_a_move_that_ends_the_game_is_exact_without_the_solver():
    s = KalahState.from_text("0,0,1/5/2,0,0/4 p0")  # pit 3's seed ends in the store: p0's houses empty
    r = analyse_position(s, engine="alphabeta:depth=2", solve_time=0)
    assert r["moves"] == [{"move": 3, "house": 3, "value": s.play(3).margin, "source": "exact",
                           "margin": s.play(3).margin}]


def test_stopped_before_it_starts():
    stop = threading.Event()
    stop.set()
    r = analyse_position(KalahState.initial(6, 4), engine="alphabeta:time=5,db=0", solve_time=5, stop=stop)
    assert r["interrupted"]
    assert all(row["source"] is None for row in r["moves"])
    assert r["best_move"] is None and r["pv"] == []


def test_stop_ends_a_long_solve_within_seconds():
    # compile (or load) the solver and engine first: a compile cannot be stopped, and on an empty cache
    # (a fresh clone) it took 13 s of the solve's time when this test ran first
    analyse_position(KalahState.initial(3, 2), engine="alphabeta:depth=2,db=0", solve_time=60)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    r = analyse_position(KalahState.initial(6, 6), engine="alphabeta:time=60,db=0", solve_time=60, stop=stop)
    assert r["interrupted"] and r["solve_seconds"] < 5 and r["engine_seconds"] < 1


def test_stop_ends_an_mcts_analysis_within_about_a_second():
    """An MCTS engine's analysis stops with its stop Event (a server's Cancel or time cap) and says so."""
    s = KalahState.initial(6, 4)  # the MCTS kernel test_mcts.py and test_stop.py compile (Kalah(4,3)'s: here only)
    analyse_position(s, engine="mcts:iterations=50", solve_time=0, seed=1)  # compiled before the clock
    stop = threading.Event()
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    t0 = time.perf_counter()
    r = analyse_position(s, engine="mcts:time=60", solve_time=0, seed=1, stop=stop)
    timer.cancel()
    assert r["interrupted"] and time.perf_counter() - t0 < 3.0
    assert sum(row["visits"] for row in r["moves"]) > 0  # the tree grown so far is shown


def test_progress_reports():
    seen = []
    analyse_position(KalahState.initial(3, 2), solve_time=60, progress=lambda *a: seen.append(a))
    assert seen[0] == ("exact", 0, 3) and seen[-1] == ("exact", 3, 3)


@pytest.mark.parametrize("spec, message", [
    ("random", "the analysis engine must be one of"),
    ("perfect", "the analysis engine must be one of"),
    ("mcts:c=1", "give the analysis engine a budget"),
    ("alphabeta:depth=0", "depth must be"),
    ("nonsense", "unknown agent 'nonsense'"),
])
def test_bad_engines(spec, message):
    with pytest.raises(ValueError, match=message):
        check_analysis_engine(spec)
    with pytest.raises(ValueError, match=message):
        analyse_position(KalahState.initial(3, 2), engine=spec)


def test_bad_arguments():
    with pytest.raises(ValueError, match="game is over"):
        analyse_position(KalahState.from_text("0,0,0/6/0,0,0/6 end"))
    with pytest.raises(ValueError, match="KalahState"):
        analyse_position("3,3,3/0/3,3,3/0 p0")
    with pytest.raises(ValueError, match="solve_time"):
        analyse_position(KalahState.initial(3, 2), solve_time=-1)
    with pytest.raises(ValueError, match="stop must be"):
        analyse_position(KalahState.initial(3, 2), stop=True)


def test_move_values_stop_event():
    stop = threading.Event()
    stop.set()
    r = move_values(KalahState.initial(4, 3), stop=stop)
    assert r["interrupted"] and not r["complete"]
    assert all(row["margin"] is None for row in r["moves"])
    with pytest.raises(ValueError, match="stop must be"):
        move_values(KalahState.initial(3, 2), stop="yes")
    assert solve_exact(KalahState.initial(3, 2))["complete"]


def test_agent_choose_in_this_thread_with_a_stop_event():
    from jitsearch.arena.agents import parse_agent

    s = KalahState.initial(3, 3)
    best = move_values(s)
    optimal = {m["move"] for m in best["moves"] if m["value"] == best["value"]}
    assert parse_agent("perfect").choose(s) in optimal
    assert parse_agent("random", seed=4).choose(s) == parse_agent("random", seed=4)(s)
    stop = threading.Event()
    stop.set()
    with pytest.raises(KeyboardInterrupt):
        parse_agent("perfect").choose(KalahState.initial(4, 4), stop)
    with pytest.raises(KeyboardInterrupt):
        parse_agent("alphabeta:time=30,db=0").choose(KalahState.initial(6, 4), stop)
    with pytest.raises(ValueError, match="stop must be"):
        parse_agent("alphabeta:depth=2").choose(s, stop=1)
    with pytest.raises(ValueError, match="cannot choose moves by itself"):
        parse_agent("human").choose(s)


# -- every game: analyse_moves (one MCTS tree and the game's move_values hook) ----------------------------

def _late(name, seed, empty):
    """A live position of ``name`` reached by random play with at most ``empty`` moves' worth left (Connect
    Four: empty cells; the mancala games: seeds on the board)."""
    from jitsearch.games import get

    game = get(name)
    rng = random.Random(seed)
    while True:
        s = game.initial(**({"houses": 3, "seeds": 2} if name != "connect4" else {}))
        while not s.is_over and _left(name, s) > empty:
            s = s.play(rng.choice(s.legal_moves()))
        if not s.is_over and s.legal_moves():
            return game, s


def _left(name, s):
    if name == "connect4":
        return s.width * s.height - s.ply
    m = s.houses
    return int(s.board[1:m + 1].sum() + s.board[m + 2:].sum()) if name == "kalah" else int(s.board[:2 * m].sum())


def _c4_naive(s):
    """Pons's score of a Connect Four position for the player to move, by plain negamax (few empty cells)."""
    best = None
    for c in s.legal_moves():
        child = s.play(c)
        if child.is_over:
            v = (s.width * s.height + 1 - s.ply) // 2 if child.margin else 0
        else:
            v = -_c4_naive(child)
        best = v if best is None else max(best, v)
    return best


@pytest.mark.parametrize("name", [pytest.param("kalah", marks=pytest.mark.slow),
                                  pytest.param("oware", marks=pytest.mark.slow), "connect4"])
def test_analyse_moves_is_the_librarys_tree(name):
    """(Kalah and Oware in the slow step: the CLI's and the page's tests compare the same trees.)"""
    from jitsearch.arena.analysis import analyse_moves
    from jitsearch.mcts.game import analyse_game

    game, s = _late(name, 5, 12)
    r = analyse_moves(game, s, iterations=120, playouts=2, seed=4, exact=False)
    lib = analyse_game(game, [s], iterations=120, playouts=2, seed=4, backend="cpu")["positions"][0]
    assert [(m["move"], m["visits"], m["value"]) for m in r["moves"]] == \
        [(c["move"], c["visits"], c["value"]) for c in lib["children"]]
    assert r["best_move"] == lib["move"] and r["value"] == lib["value"] and r["game"] == name
    assert abs(sum(m["share"] for m in r["moves"]) - 1) < 1e-9 and r["exact"] is False
    assert all("exact" not in m for m in r["moves"]) and r["exact_best"] == []


@pytest.mark.parametrize("name, seed", [("kalah", 1), ("kalah", 2), ("connect4", 1), ("connect4", 2),
                                        ("connect4", 3)])
def test_analyse_moves_exact_values_equal_a_reference(name, seed):
    """Kalah: the exact solver's move values; Connect Four: plain negamax over every line (Pons's score)."""
    from jitsearch.arena.analysis import analyse_moves

    game, s = _late(name, seed, 7)
    r = analyse_moves(game, s, iterations=30, playouts=1, seed=1)
    assert r["exact"] and [m["move"] for m in r["moves"]] == s.legal_moves()
    if name == "kalah":
        want = {row["move"]: row["value"] for row in move_values(s)["moves"]}
    else:
        want = {c: (s.width * s.height + 1 - s.ply) // 2 if s.play(c).is_over and s.play(c).margin
                else 0 if s.play(c).is_over else -_c4_naive(s.play(c)) for c in s.legal_moves()}
    assert {m["move"]: m["exact"] for m in r["moves"]} == want
    best = max(want.values())
    assert r["exact_value"] == best and r["exact_best"] == sorted(c for c, v in want.items() if v == best)
    for m in r["moves"]:
        assert m["exact_result"] == ("win" if m["exact"] > 0 else "draw" if m["exact"] == 0 else "loss")


def test_analyse_moves_without_exact_values_where_they_cost_too_much():
    from jitsearch.arena.analysis import analyse_moves
    from jitsearch.games import get

    c4 = get("connect4")
    r = analyse_moves(c4, c4.initial(), iterations=20, playouts=1)
    assert r["exact"] is False and r["exact_rule"] is None and len(r["moves"]) == 7


@pytest.mark.parametrize("args, kwargs, message", [
    (("connect4", KalahState.initial(3, 3)), {}, "state must be a Connect4State"),
    (("kalah", KalahState.from_text("0,0,0/10/0,0,0/8 end")), {}, "the game is over"),
    (("kalah", KalahState.initial(3, 3)), {"exact": 1}, "exact must be True or False"),
    (("kalah", KalahState.initial(3, 3)), {"stop": 3}, "stop must be a threading.Event"),
    (("chess", KalahState.initial(3, 3)), {}, "unknown game 'chess'"),
])
def test_analyse_moves_bad_arguments_are_one_line(args, kwargs, message):
    from jitsearch.arena.analysis import analyse_moves

    with pytest.raises(ValueError, match=message) as info:
        analyse_moves(*args, iterations=5, **kwargs)
    assert "\n" not in str(info.value)

"""Alpha-beta over the game protocol (kernels.game_alphabeta): at a fixed depth its value is the
depth-limited minimax value of a plain-Python minimax over the state classes (leaves by the rules'
``evaluate`` run as Python), with and without the transposition table, for the three built-in games;
its exact values equal Kalah's MTD(f) solver and have the sign of Pons's Connect Four solver."""

from __future__ import annotations

import dataclasses
import random
import threading

import pytest

from jitsearch.games import get
from jitsearch.kernels.game_alphabeta import alphabeta_game

VARIANTS = {"kalah": dict(houses=3, seeds=2), "connect4": dict(width=4, height=4),
            "oware": dict(houses=3, seeds=2, move_limit=24)}
_PY_RULES = {}


def _evaluate(game, state):
    if game.name not in _PY_RULES:
        _PY_RULES[game.name] = game.build(lambda f: f)  # the rules as plain Python
    packed = game.pack([state])
    return float(_PY_RULES[game.name].evaluate(packed.boards[0], packed.cfg, state.player))


def minimax(game, state, depth):
    """Player 0's depth-limited minimax value, the naive way."""
    if state.is_over:
        return float(state.margin)
    if depth == 0:
        return _evaluate(game, state)
    values = [minimax(game, state.play(m), depth - 1) for m in state.legal_moves()]
    return max(values) if state.player == 0 else min(values)


def _positions(game, seed, count, max_plies=12):
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = game.initial(**VARIANTS[game.name])
        for _ in range(rnd.randrange(max_plies)):
            s = s.play(rnd.choice(s.legal_moves()))
            if s.is_over:
                break
        if not s.is_over:
            out.append(s)
    return out


def _without_hooks(game):
    return dataclasses.replace(game, name=game.name + "_plain", position_key=None, move_order=None)


@pytest.mark.slow
@pytest.mark.parametrize("name, plain", [("connect4", True), ("kalah", False), ("oware", False),
                                         pytest.param("kalah", True, marks=pytest.mark.slow)])  # another kernel
def test_fixed_depth_value_is_the_minimax_value(name, plain):
    """With the game's hooks (table and move order) and, ``plain``, without them (the rules' order, no table)."""
    game = get(name)
    searches = [game, _without_hooks(game)] if plain else [game]
    for state in _positions(game, 7, 6):
        for depth in (1, 2, 4):
            want = minimax(game, state, depth)
            for g in searches:
                r = alphabeta_game(g, state, depth=depth)
                assert r["value"] == want, (g.name, state.to_text(), depth, r)
                if r["exact"]:
                    assert r["depth"] <= depth
                else:
                    assert r["depth"] == depth and r["leaves"] > 0
                child = state.play(r["move"])
                assert minimax(game, child, r["depth"] - 1) == want or r["exact"], (state.to_text(), r)


def test_oware_record_is_threaded_as_a_value():
    """Oware's repetition rule ends a game on a repeated position: its positions with a record
    searched to their end equal the naive minimax (which replays the record in the state class)."""
    game = get("oware")
    rnd = random.Random(3)
    checked = 0
    while checked < 4:
        s = game.initial(houses=2, seeds=2, move_limit=30)
        for _ in range(rnd.randrange(1, 8)):
            s = s.play(rnd.choice(s.legal_moves()))
            if s.is_over:
                break
        if s.is_over or len(s.history) < 2:
            continue
        r = alphabeta_game(game, s)
        assert r["exact"]
        assert r["value"] == minimax(game, s, 64), s.to_text()
        checked += 1


def _connect4_states(seed, empties, count):
    game = get("connect4")
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = game.initial()
        while not s.is_over and 42 - s.ply > empties:
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def test_connect_four_exact_values_have_the_solvers_sign():
    game = get("connect4")
    signs = set()
    for state in _connect4_states(11, 12, 8):
        r = alphabeta_game(game, state)
        assert r["exact"]
        want = game.solver(state)
        assert (r["value"] > 0) - (r["value"] < 0) == (want > 0) - (want < 0), (state.to_text(), r, want)
        signs.add(want > 0)
    assert len(signs) == 2  # wins for both players among the cases


@pytest.mark.parametrize("houses", [3, 4])
def test_kalah_exact_values_equal_the_mtdf_solver(houses):
    from jitsearch.games.kalah import solve_exact

    game = get("kalah")
    rnd = random.Random(houses)
    states = [game.initial(houses=houses, seeds=2)]
    while len(states) < 4:
        s = states[0]
        for _ in range(rnd.randrange(1, 6)):
            s = s.play(rnd.choice(s.legal_moves()))
            if s.is_over:
                break
        if not s.is_over:
            states.append(s)
    for state in states:
        r = alphabeta_game(game, state)
        assert r["exact"] and r["value"] == solve_exact(state)["margin"], (state.to_text(), r)


def test_the_table_saves_nodes_and_keeps_values():
    game = get("connect4")
    plain = _without_hooks(game)
    state = _connect4_states(5, 14, 1)[0]
    with_table = alphabeta_game(game, state)
    without = alphabeta_game(plain, state)
    assert with_table["value"] == without["value"] and with_table["exact"] and without["exact"]
    assert with_table["nodes"] < without["nodes"]


def test_time_and_stop():
    game = get("kalah")
    state = game.initial(houses=6, seeds=4)
    r = alphabeta_game(game, state, time=0.3)
    assert 1 <= r["depth"] and not r["exact"] and r["move"] in state.legal_moves()
    assert r["seconds"] < 5
    stop = threading.Event()
    stop.set()
    with pytest.raises(KeyboardInterrupt):
        alphabeta_game(game, state, depth=30, stop=stop)


def test_errors_are_one_line():
    game = get("connect4")
    over = game.from_text("1212121")
    for call, words in ((lambda: alphabeta_game("chess", over), "unknown game"),
                        (lambda: alphabeta_game("connect4", get("kalah").initial()), "Connect4State"),
                        (lambda: alphabeta_game("connect4", over), "over"),
                        (lambda: alphabeta_game(game, game.initial(), depth=0), "depth"),
                        (lambda: alphabeta_game(game, game.initial(), time=-1), "time"),
                        (lambda: alphabeta_game(game, game.initial(), table_slots=100), "power of two"),
                        (lambda: alphabeta_game(get("oware"), get("oware").initial(), table_slots=16), "position_key"),
                        (lambda: alphabeta_game(game, game.initial(), stop=1), "stop")):
        with pytest.raises(ValueError) as exc:
            call()
        assert words in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.slow  # compiles Kalah's own alpha-beta too
def test_kalah_values_equal_kalahs_own_alphabeta():
    """On Kalah(6,4) the generic search returns the value of Kalah's alpha-beta (store evaluation, its own
    move ordering and table) at the same depth."""
    from jitsearch.games.kalah import alphabeta as kalah_alphabeta

    game = get("kalah")
    rnd = random.Random(6)
    for _ in range(4):
        s = game.initial(houses=6, seeds=4)
        for _ in range(rnd.randrange(8)):
            s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            continue
        for depth in (4, 7):
            want = kalah_alphabeta.search(s, depth, eval="store")["value"]
            want = want if s.player == 0 else -want  # its values are the root player's
            assert alphabeta_game(game, s, depth=depth)["value"] == want, (s.to_text(), depth)


def test_connect4_evaluation_is_never_worth_a_win():
    """The protocol's evaluate estimates the margin (+1 / 0 / -1 here): strictly inside (-1, 1), so
    ``alphabeta:depth=1`` takes a win now even where another move makes more threats."""
    from jitsearch.arena.agents import parse_agent

    game = get("connect4")
    rnd = random.Random(5)
    found = 0
    for _ in range(3000):
        s = game.initial()
        for _ in range(rnd.randrange(8, 30)):
            s = s.play(rnd.choice(s.legal_moves()))
            if s.is_over:
                break
        if s.is_over:
            continue
        assert abs(_evaluate(game, s)) < 1
        wins = [m for m in s.legal_moves() if s.play(m).is_over and s.play(m).margin != 0]
        sign = 1 if s.player == 0 else -1
        threats = [m for m in s.legal_moves() if m not in wins and not s.play(m).is_over
                   and sign * _evaluate(game, s.play(m)) > 0.6]  # two or more threats more than the opponent's
        if wins and threats:
            found += 1
            assert parse_agent("alphabeta:depth=1", game="connect4", seed=0)(s) in wins, s.to_text()
    assert found >= 3


def test_every_game_has_an_alphabeta_agent_over_the_protocol():
    """Connect Four (no engine of its own) gets the generic alphabeta kind; Oware keeps its own."""
    from jitsearch.arena.agents import kinds, parse_agent

    assert set(kinds(get("connect4"))["alphabeta"]) == {"depth", "time", "table", "exact"}
    assert "w" in kinds(get("oware"))["alphabeta"]
    state = _connect4_states(4, 10, 3)[0]
    agent = parse_agent("alphabeta:depth=20", game="connect4", seed=0)
    move = agent(state)
    assert agent.last["exact"] and move in state.legal_moves()
    assert agent.last["value"] == alphabeta_game(get("connect4"), state)["value"]
    for spec, words in [("alphabeta:depth=0", "depth"), ("alphabeta:table=100", "power of two"),
                        ("alphabeta:time=-1", "time"), ("alphabeta:nodes=5", "unknown option")]:
        with pytest.raises(ValueError) as e:
            parse_agent(spec, game="connect4")
        assert words in str(e.value) and "\n" not in str(e.value), spec


def test_the_generic_alphabeta_plays_a_proven_move_with_exact():
    """``exact=SHARE``: a game with an exact solve proves the position first (Connect Four near its end
    within 0.5 x 2 s) and plays a move that keeps the proven score; bad shares are one line."""
    from jitsearch.arena.agents import parse_agent

    import test_connect4_solver as c4
    state = c4._near_terminal(7, 6, 14, 1, 21)[0]
    agent = parse_agent("alphabeta:time=2,exact=0.5", game="connect4", seed=0)
    move = agent(state)
    ref = c4.brute_force(state)
    child = state.play(move)
    kept = (42 + 1 - state.ply) // 2 if child.is_over and child.margin else 0 if child.is_over else \
        -c4.brute_force(child)
    assert agent.last["solved"] and agent.last["exact"] and kept == ref
    assert agent.last["margin"] == (ref > 0) - (ref < 0)  # the mover's final margin
    plain = dataclasses.replace(get("connect4"), name="connect4_no_exact", exact=None)
    for spec, game, words in [("alphabeta:time=1,exact=2", "connect4", "exact"),
                              ("alphabeta:depth=3,exact=0.5", "connect4", "give time="),
                              ("alphabeta:time=1,exact=0.5", plain, "no exact solve")]:
        with pytest.raises(ValueError) as e:
            parse_agent(spec, game=game)
        assert words in str(e.value) and "\n" not in str(e.value), spec

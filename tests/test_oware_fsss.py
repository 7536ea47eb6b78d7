"""Oware FSSS-Minimax against Oware alpha-beta (the same tree): equal root
values, a best move of that value, expanded frontier a subset of alpha-beta's,
on positions of real games (their repetition records), positions where the
repetition rule ends lines inside the horizon, small boards and with an
endgame database; the fsss agent, the CLI and one-line errors."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from jitsearch.arena.engine_protocol import EngineServer
from jitsearch.arena.agents import parse_agent
from jitsearch.cli.app import main
from jitsearch.games.oware import OwareState
from jitsearch.games.oware import alphabeta as ab
from jitsearch.games.oware import fsss
from jitsearch.games.oware.endgame import build_database


def _positions(seed, count, m, n, *, min_plies=0, max_plies=60, max_on_board=None, **kw):
    """Positions of seeded random games (each with its game's repetition record)."""
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = OwareState.initial(m, n, **kw)
        for _ in range(rnd.randrange(min_plies, max_plies + 1)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over and (max_on_board is None or int(s.board[:2 * m].sum()) <= max_on_board):
            out.append(s)
    return out


def _repeats_within(s: OwareState, depth: int) -> bool:
    """Whether some line of ``depth`` plies or fewer from ``s`` ends by the repetition rule."""
    for h in s.legal_moves():
        if s.end_reason(h) == "repetition":
            return True
        c = s.play(h)
        if depth > 1 and not c.is_over and _repeats_within(c, depth - 1):
            return True
    return False


def _move_value(s: OwareState, move: int, depth: int, w: float, endgame=None) -> float:
    """Alpha-beta's value of ``move`` for the player to move: its child's leaf value, else minus
    alpha-beta's value of the child one ply shallower."""
    c = s.play(move)
    if c.is_over:
        margin = c.margin if s.player == 0 else -c.margin
        return 0.0 if margin == 0 else (ab.WIN + margin if margin > 0 else -ab.WIN + margin)
    if endgame is not None and int(c.board[:2 * s.houses].sum()) <= endgame.max_seeds:
        return float(-ab.database_value(c.board, s.houses, c.player, endgame.values, endgame.binom))
    if depth == 1:
        return float(-ab.evaluate(c.board, s.houses, c.player, w))
    return -ab.search(c, depth - 1, side_weight=w, endgame=endgame).value


def _agree(s, depth, w=ab.DEFAULT_SIDE_WEIGHT, endgame=None, first_move=-1):
    a = ab.search(s, depth, side_weight=w, endgame=endgame, trace=True, first_move=first_move)
    f = fsss.search(s, depth, side_weight=w, endgame=endgame, trace=True, first_move=first_move)
    assert f.value == a.value, (s.to_text(), depth)
    assert f.move in s.legal_moves()
    frontier = set(f.frontier.tolist())
    assert len(frontier) == f.evaluations == len(f.frontier)  # one new leaf a rollout
    assert frontier <= set(a.frontier.tolist()), (s.to_text(), depth)
    assert f.evaluations <= a.evaluations
    assert _move_value(s, f.move, depth, w, endgame) == a.value, (s.to_text(), depth)
    return a, f


@pytest.mark.slow
def test_fsss_equals_alphabeta_on_oware_6_4_game_positions():
    for s in _positions(1, 12, 6, 4):
        for depth in range(1, 7):
            _agree(s, depth)
    for s in _positions(2, 6, 6, 4, min_plies=20):
        for w in (0.0, 0.7):
            _agree(s, 5, w)


@pytest.mark.parametrize("m, n, depth, kw", [pytest.param(2, 2, 6, {}, marks=pytest.mark.slow), (3, 2, 6, {}),
                                             (2, 3, 6, {}), (3, 3, 5, {}),
                                             (4, 2, 5, {"move_limit": 30}), (3, 2, 6, {"grand_slam_illegal": True})])
def test_fsss_equals_alphabeta_on_small_boards(m, n, depth, kw):
    for s in _positions(m * 10 + n, 20, m, n, **kw):
        for d in range(1, depth + 1):
            _agree(s, d)


def _before_repetition(seed, games, m, n, plies=6):
    """From seeded random games that end by the repetition rule: the positions 1..``plies`` plies before
    the last move (the game's line reaches the repetition within that many plies)."""
    rnd = random.Random(seed)
    out = []
    while games:
        line = [OwareState.initial(m, n)]
        while True:
            h = rnd.choice(line[-1].legal_moves())
            c = line[-1].play(h)
            if c.is_over:
                break
            line.append(c)
        if line[-1].end_reason(h) == "repetition":
            games -= 1
            out += [(line[-k], k) for k in range(1, min(plies, len(line)) + 1)]
    return out


def test_repetition_inside_the_horizon():
    """Positions of games that end by repetition, a few plies before the end, searched past it; small-board
    positions where some line repeats within the depth. The record matters: the same board with a fresh
    record (from its text) has another value at some of them, and FSSS still equals alpha-beta."""
    cases = _before_repetition(5, 8, 6, 4)
    on_6_4 = len(cases)
    cases += [(s, 6) for s in _positions(7, 60, 2, 3, min_plies=6, max_plies=30) if _repeats_within(s, 6)]
    cases += [(s, 6) for s in _positions(8, 40, 3, 2, min_plies=6, max_plies=30) if _repeats_within(s, 6)]
    differs = [0, 0]  # on Oware(6,4), on the small boards
    for i, (s, k) in enumerate(cases):
        for d in range(1, 7):
            a, f = _agree(s, d)
        fresh = OwareState.from_text(s.to_text(), move_limit=s.move_limit - s.ply)
        differs[i >= on_6_4] += fsss.search(fresh, 6).value != f.value
    assert on_6_4 >= 40 and len(cases) >= 70 and min(differs) >= 5, (on_6_4, len(cases), differs)


def test_fsss_with_an_endgame_database():
    probed = 0  # positions whose value the database changes (its leaves lie inside the horizon)
    db6 = build_database(6, 6)
    for s in _positions(11, 10, 6, 4, min_plies=60, max_plies=200, max_on_board=12):
        for d in range(1, 6):
            a, f = _agree(s, d, endgame=db6)
        probed += f.value != fsss.search(s, 5).value
    db3 = build_database(3, 5)
    for s in _positions(12, 15, 3, 2, min_plies=4, max_plies=30):
        for d in range(1, 7):
            a, f = _agree(s, d, endgame=db3)
        probed += f.value != fsss.search(s, 6).value
    assert probed >= 10, probed


def test_first_move_and_node_limit():
    s = _positions(3, 1, 6, 4, min_plies=10)[0]
    for first in s.legal_moves():
        _agree(s, 4, first_move=first)
    assert fsss.search(s, 6, node_limit=10) is None
    full = fsss.search(s, 4)
    same = fsss.search(s, 4, node_limit=full.nodes)  # the limit is on node visits
    assert (same.move, same.value, same.nodes) == (full.move, full.value, full.nodes)
    assert fsss.search(s, 4, node_limit=full.nodes - 1) is None
    r = fsss.iterative_deepening(s, max_depth=5)
    assert r.depth == 5 and r.value == ab.iterative_deepening(s, max_depth=5).value
    assert fsss.iterative_deepening(s, time_limit=0.05).move in s.legal_moves()


def test_counts_on_the_start_position():
    s = OwareState.initial(6, 4)
    f = fsss.search(s, 1, trace=True)
    assert (f.nodes, f.evaluations) == (12, 6)  # six rollouts of two visits each
    assert f.frontier.dtype == np.uint64 and f.frontier.size == 6


@pytest.mark.parametrize("bad, words", [
    (dict(depth=0), "depth"), (dict(depth=65), "depth"), (dict(depth=3, side_weight=float("nan")), "side_weight"),
    (dict(depth=3, node_limit=0), "node_limit"), (dict(depth=2, endgame="db"), "endgame must be"),
])
def test_search_errors(bad, words):
    with pytest.raises(ValueError, match=words):
        fsss.search(OwareState.initial(), **bad)
    with pytest.raises(ValueError, match="game is over"):
        fsss.search(OwareState.from_text("0,0,8,0,0,1/1,1,1,1,2,3/0,0 p0").play(2), 1)


def test_agent_plays_like_alphabeta():
    s = OwareState.from_board([0, 0, 8, 0, 0, 1, 1, 1, 1, 1, 2, 3, 0, 0], 0)
    for spec in ("fsss:depth=3", "fsss:time=0.05"):
        assert parse_agent(spec, game="oware", seed=1)(s) == 2  # the winning capture
    for t in _positions(5, 4, 6, 4):
        f, a = parse_agent("fsss:depth=4,w=0.5", game="oware", seed=1), parse_agent("alphabeta:depth=4,w=0.5", game="oware", seed=1)
        move = f(t)
        a(t)
        assert f.last["value"] == a.last["value"] and f.last["depth"] == 4
        assert _move_value(t, move, 4, 0.5) == a.last["value"]
    agent = parse_agent("fsss:depth=2,db=6", game="oware", seed=1)
    t = OwareState.from_text("0,0,0,0,1,2/1,0,0,0,0,1/20,21 p0")
    assert agent(t) in t.legal_moves()
    twin = parse_agent("alphabeta:depth=2,db=6", game="oware", seed=1)
    twin(t)
    assert agent.last["value"] == twin.last["value"] == ab.search(t, 2, endgame=build_database(6, 6)).value


@pytest.mark.parametrize("spec, words", [
    ("fsss:depth=0", "depth"), ("fsss:playouts=3", "unknown option"), ("fsss:w=x", "bad value"),
    ("fsss:db=99", "db"), ("fsss:depth=2,depth=3", "given twice"), ("fsss:time=-1", "time"),
])
def test_bad_specs(spec, words):
    with pytest.raises(ValueError, match=words):
        parse_agent(spec, game="oware")


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_tournament_play_and_engine(capsys):
    code, out, err = run(capsys, "tournament", "--game", "oware", "--a", "fsss:depth=3", "--b", "random",
                         "--pairs", "1", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["games"] == 2 and obj["a"] == "fsss:depth=3"
    code, out, err = run(capsys, "play", "--game", "oware", "--p0", "fsss:depth=2", "--p1", "random", "--seed", "2",
                         "--houses", "3", "--seeds", "2", "--json")
    assert code == 0, err
    assert sum(json.loads(out)["scores"]) == 12
    code, out, err = run(capsys, "tournament", "--game", "oware", "--a", "fsss:depth=x", "--b", "random",
                         "--pairs", "1")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1 and "bad value" in err
    server = EngineServer("fsss:depth=3", game="oware")
    assert server.handle("game 6 4 standard")[0] == ["ok"]
    assert server.handle("position 4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0 moves 5 9")[0] == ["ok"]
    answers, _ = server.handle("go 1000")
    want = ab.search(OwareState.initial().play(5).play(9), 3).value
    assert answers[-1].startswith("move ") and f"value {want:.4g}" in " ".join(answers), answers

"""`jitsearch serve`'s Oware analysis (``POST /api/oware/analyse``, the generic
:func:`jitsearch.arena.analysis.analyse_moves` with Oware's ``move_values`` hook) and record replay, against
the library: :func:`jitsearch.mcts.game.analyse_game` (Oware) and :mod:`jitsearch.games.oware.endgame`."""

from __future__ import annotations

import json
import random
import threading
import time
import warnings

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("httpx", reason="httpx (Starlette's TestClient) is not installed")

with warnings.catch_warnings():  # Starlette 1.x asks for httpx2 but still works with httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from jitsearch.arena.analysis import analyse_moves  # noqa: E402
from jitsearch.arena.game_match import GameMatch  # noqa: E402
from jitsearch.arena.matches import run_tournament  # noqa: E402
from jitsearch.cli.webapp import TOKEN_HEADER, create_app  # noqa: E402
from jitsearch.games import get  # noqa: E402
from jitsearch.games.oware import OwareState  # noqa: E402
from jitsearch.games.oware.game import exact_seeds_limit  # noqa: E402
from jitsearch.games.oware.endgame import build_database, database_size  # noqa: E402
from oware_calls import analyse_oware  # noqa: E402

START_64 = "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0"
LATE = "0,1,0,2,0,1/1,0,2,0,1,0/14,16 p0"  # 8 seeds on the board


def analyse_oware_position(state, **kw):
    return analyse_moves("oware", state, **kw)


def seeds_on_board(state) -> int:
    return int(state.board[:2 * state.houses].sum())


def page_headers(app) -> dict:
    """What the page sends with every request that changes something: the server's token."""
    return {TOKEN_HEADER: app.state.token}


@pytest.fixture
def client():
    app = create_app(max_seconds=20, game="oware")
    with TestClient(app, headers=page_headers(app)) as c:
        yield c
    app.state.searches.wait_idle(10)


def error(r, status=400) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"]
    return body["error"]


def wait(client, job, seconds=120):
    end = time.monotonic() + seconds
    while job["status"] == "running":
        assert time.monotonic() < end, job
        time.sleep(0.05)
        job = client.get(f"/api/jobs/{job['id']}").json()["job"]
    return job


def analyse(client, **body):
    r = client.post("/api/oware/analyse", json=body)
    assert r.status_code == 202, r.text
    return wait(client, r.json()["job"])


def test_analysis_equals_the_library_on_a_line_with_a_record(client):
    """The rows are analyse_oware's for the same seed and iterations, from the line's state (its repetition
    record included, which a text alone would not carry)."""
    rnd = random.Random(7)
    state, moves = OwareState.initial(), []
    for _ in range(9):
        moves.append(rnd.choice(state.legal_moves()))
        state = state.play(moves[-1])
    job = analyse(client, position=START_64, moves=moves, iterations=300, playouts=2, seed=5)
    assert job["status"] == "done", job
    res = job["result"]
    lib = analyse_oware([state], iterations=300, playouts=2, seed=5, backend="cpu")["positions"][0]
    assert res["position"] == state.to_text() and res["best_move"] == lib["move"] and res["value"] == lib["value"]
    assert [(r["move"], r["visits"], r["value"]) for r in res["moves"]] == \
        [(c["move"], c["visits"], c["value"]) for c in lib["children"]]
    assert sum(r["visits"] for r in res["moves"]) == 300 and res["iterations"] == 300
    assert abs(sum(r["share"] for r in res["moves"]) - 1) < 1e-9
    assert seeds_on_board(state) > exact_seeds_limit(6) and res["exact"] is False and "exact" not in res["moves"][0]


def test_exact_values_equal_the_database_by_the_moves_played():
    """Each move's half-seed value is 2c + 2(S - c) - v(child) with the child reached by OwareState.play (c: the
    seeds it captured), the position's value is the best move's, and the exact margin adds the captures so far."""
    db = build_database(6, 8)
    for text in (LATE, "1,0,0,3,0,0/0,2,0,0,1,1/15,15 p1", "0,0,0,0,0,2/1,1,0,0,0,1/20,15 p0"):
        state = OwareState.from_text(text)
        res = analyse_oware_position(state, iterations=50, seed=1)
        half = get("oware").move_values(state)["half_seeds"]
        s, p = seeds_on_board(state), state.player
        assert res["exact"] and s <= 8
        for row in res["moves"]:
            child = state.play(row["move"])
            c = child.scores[p] - state.scores[p]
            if child.is_over:  # ended by the rules (scores or no move): the database plays on; its board
                continue       # is collected, so compare the other moves only
            v = 2 * c + 2 * (s - c) - db.value_of(child)
            assert half[row["move"]] == v, (text, row)
            mine = 2 * state.scores[p] + v
            theirs = 2 * state.scores[1 - p] + 2 * s - v
            assert row["exact"] == (mine - theirs) / 2
            assert row["exact_result"] == ("win" if mine > theirs else "draw" if mine == theirs else "loss")
        assert db.value_of(state) == max(half.values())
        assert res["exact_best"] == sorted(h for h, v in half.items() if v == max(half.values()))
        assert res["exact_value"] == max(r["exact"] for r in res["moves"])


def test_exact_limit_follows_the_database_size():
    for m in (2, 4, 6, 12):
        s = exact_seeds_limit(m)
        assert database_size(m, s) <= 700_000 < database_size(m, s + 1)
    assert exact_seeds_limit(6) == 10


def test_exact_values_through_the_api(client):
    job = analyse(client, position=LATE, iterations=200, seed=2)
    res = job["result"]
    assert res["exact"] and seeds_on_board(OwareState.from_text(LATE)) == 8 and "evenly" in res["exact_rule"]
    direct = analyse_oware_position(OwareState.from_text(LATE), iterations=200, seed=2)
    assert res["moves"] == json.loads(json.dumps(direct["moves"]))
    off = analyse(client, position=LATE, iterations=200, seed=2, exact=False)["result"]
    assert off["exact"] is False and all("exact" not in r for r in off["moves"])


def test_analysis_can_be_cancelled(client):
    r = client.post("/api/oware/analyse", json={"position": START_64, "iterations": 1_000_000, "playouts": 8})
    job = r.json()["job"]
    time.sleep(0.5)
    assert client.post(f"/api/jobs/{job['id']}/cancel", json={}).status_code == 200
    t0 = time.monotonic()
    job = wait(client, job, 30)
    assert time.monotonic() - t0 < 10
    if job["status"] == "done":  # stopped inside the tree's growth: the tree so far
        assert job["result"]["interrupted"] and job["result"]["iterations"] < 1_000_000
    else:
        assert job["status"] == "cancelled"


def test_library_stop_returns_the_tree_so_far():
    analyse_oware_position(OwareState.initial(), iterations=50)  # compiled first: a compile cannot be stopped
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    r = analyse_oware_position(OwareState.initial(), iterations=1_000_000, stop=stop)
    assert r["interrupted"] and 0 < r["iterations"] < 1_000_000
    assert sum(m["visits"] for m in r["moves"]) == r["iterations"]


@pytest.mark.parametrize("body, words", [
    ({"position": START_64, "depth": 3}, "unknown field"),
    ({"moves": []}, "missing field"),
    ({"position": START_64, "iterations": 10, "time": 1}, "not both"),
    ({"position": START_64, "iterations": 0}, "iterations must lie in"),
    ({"position": START_64, "iterations": 10**9}, "iterations must lie in"),
    ({"position": START_64, "iterations": "9"}, "iterations must be an integer"),
    ({"position": START_64, "time": 0}, "time must lie in"),
    ({"position": START_64, "time": 999}, "cap"),
    ({"position": START_64, "playouts": True}, "playouts must be an integer"),
    ({"position": START_64, "seed": -1}, "seed must lie in"),
    ({"position": START_64, "exact": "yes"}, "exact must be true or false"),
    ({"position": START_64, "backend": "gpu"}, "backend must be"),
    ({"position": "4,4/4 p0"}, "position"),
    ({"position": START_64, "moves": [7]}, "(house 7)) in"),
    ({"position": "0,0,8,0,0,1/1,1,1,1,2,3/0,0 p0", "moves": [2]}, "game is over"),
])
def test_bad_analysis_requests_are_one_line(client, body, words):
    assert words in error(client.post("/api/oware/analyse", json=body))


def test_cmd_agents_are_refused_by_the_page(client):
    msg = error(client.post("/api/oware/agent-move", json={"position": START_64, "agent": "cmd:/bin/echo"}))
    assert "cmd:" in msg and "web page" in msg


def test_oware_records_replay(tmp_path):
    """A tournament's Oware record file opens on the page: each game's positions are the game's."""
    run_tournament("random", "alphabeta:depth=1", GameMatch.of("oware", {"houses": 3, "seeds": 3}, openings=2, seed=3), 1,
                   out=tmp_path / "ow.jsonl")
    app = create_app(records_dir=tmp_path, game="oware")
    with TestClient(app, headers=page_headers(app)) as c:
        files = c.get("/api/records").json()["files"]
        assert [f["name"] for f in files] == ["ow.jsonl"]
        games = c.get("/api/records/ow.jsonl").json()["games"]
    recs = [json.loads(x) for x in (tmp_path / "ow.jsonl").read_text().splitlines()]
    assert len(games) == len(recs) == 2
    for g, rec in zip(games, recs):
        assert g["game"] == "oware" and g["plies"] == rec["moves"] and g["start"] == rec["opening"]
        state = OwareState.from_text(rec["opening"])
        assert g["positions"][0] == state.to_text()
        for h, text in zip(rec["moves"], g["positions"][1:]):
            state = state.play(h)
            assert text == state.to_text()
        assert state.to_text() == rec["final"] and g["scores"] == list(state.scores)
        assert g["a"] == "random" and g["a_player"] == rec["a_seat"]


def test_connect4_records_replay(tmp_path):
    """A Connect Four tournament's record file (the generic match's records) opens on the page too, in the
    record's board size: the replayed positions are the game's."""
    run_tournament("random", "random", GameMatch.of("connect4", {"width": 5, "height": 4}, openings=1, seed=2), 1,
                   out=tmp_path / "c4.jsonl")
    app = create_app(records_dir=tmp_path, game="connect4")
    with TestClient(app, headers=page_headers(app)) as c:
        games = c.get("/api/records/c4.jsonl").json()["games"]
        (tmp_path / "bad.jsonl").write_text((tmp_path / "c4.jsonl").read_text().replace('"moves": [', '"moves": [9, '))
        bad = c.get("/api/records/bad.jsonl")
    recs = [json.loads(x) for x in (tmp_path / "c4.jsonl").read_text().splitlines()]
    assert len(games) == len(recs) == 2
    c4 = get("connect4")
    for g, rec in zip(games, recs):
        assert g["game"] == "connect4" and g["width"] == 5 and g["height"] == 4 and g["plies"] == rec["moves"]
        state = c4.from_text(rec["opening"], width=5, height=4)
        for move, text in zip(rec["moves"], g["positions"][1:]):
            state = state.play(move)
            assert text == state.to_text()
        assert state.to_text() == rec["final"] and g["margin"] == rec["margin"]
    assert bad.status_code >= 400 and "not a legal move" in bad.json()["error"]

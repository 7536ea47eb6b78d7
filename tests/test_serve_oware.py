"""`jitsearch serve` for Oware: its API routes (Starlette's TestClient) against the rules of
:mod:`jitsearch.games.oware` and its agents (:func:`jitsearch.arena.agents.parse_agent`)."""

from __future__ import annotations

import random
import time
import warnings

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("httpx", reason="httpx (Starlette's TestClient) is not installed")

with warnings.catch_warnings():  # Starlette 1.x asks for httpx2 but still works with httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from jitsearch.arena.agents import parse_agent  # noqa: E402
from jitsearch.arena.agents import kinds  # noqa: E402
from jitsearch.games import get as get_game  # noqa: E402
from jitsearch.cli.app import main  # noqa: E402
from jitsearch.cli.webapp import TOKEN_HEADER, create_app  # noqa: E402
from jitsearch.games.oware import OwareState  # noqa: E402

START_64 = "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0"


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


def wait(client, job, seconds=60):
    end = time.monotonic() + seconds
    while job["status"] == "running":
        assert time.monotonic() < end, job
        time.sleep(0.05)
        job = client.get(f"/api/jobs/{job['id']}").json()["job"]
    return job


def check_state(js, state: OwareState, reason=None):
    """The JSON the page draws is ``state``'s, with the game-over reason given."""
    assert js["game"] == "oware" and js["text"] == state.to_text() and js["board"] == [int(x) for x in state.board]
    assert js["player"] == state.player and js["legal"] == state.legal_moves() and js["over"] == state.is_over
    assert js["scores"] == list(state.scores) and js["ply"] == state.ply and js["result"] == state.result
    assert js["repetition_rows"] == len(state.history) and js["reason"] == reason


def test_info_and_new_game(client):
    info = client.get("/api/info").json()
    assert info["game"] == "oware" and info["games"] == ["kalah", "oware", "connect4"]
    assert info["agent_kinds"]["oware"] == [*kinds(get_game("oware")), "openspiel"]  # an agent kind added to the parser shows up
    r = client.post("/api/oware/new", json={"houses": 3, "seeds": 2})
    assert r.status_code == 200
    check_state(r.json()["state"], OwareState.initial(3, 2))
    check_state(client.post("/api/oware/new", json={}).json()["state"], OwareState.initial())
    assert "seeds per house" in error(client.post("/api/oware/new", json={"seeds": 0}))
    assert "unknown field" in error(client.post("/api/oware/new", json={"empty_capture": True}))
    assert "houses must be an integer" in error(client.post("/api/oware/new", json={"houses": "6"}))
    with pytest.raises(ValueError, match="game must be one of"):
        create_app(game="chess")


@pytest.mark.slow
def test_random_games_replay_as_the_rules_play_them(client):
    """Random lines sent move by move: every answer is the library's state after the same moves (so the
    repetition record travels with the moves), and every ending gives the rules' reason."""
    rnd = random.Random(5)
    reasons = set()
    for g in range(30):
        m, n = (4, 3) if g == 0 else rnd.choice([(2, 2), (3, 2), (1, 3)])
        state, moves, start = OwareState.initial(m, n), [], OwareState.initial(m, n).to_text()
        reason = None
        while not state.is_over:
            house = rnd.choice(state.legal_moves())
            r = client.post("/api/oware/move", json={"position": start, "moves": moves, "move": house})
            assert r.status_code == 200, r.text
            reason = state.end_reason(house)
            state = state.play(house)
            moves.append(house)
            check_state(r.json()["state"], state, reason)
        reasons.add(reason)
        r = client.post("/api/oware/position", json={"position": start, "moves": moves})
        check_state(r.json()["state"], state, reason)
    assert {"repetition", "scores"} <= reasons


def test_end_reasons_one_by_one(client):
    # the last seed takes 3+2+2+2+2 = 11 of 18 seeds: the scores end the game (OpenSpiel's test position)
    r = client.post("/api/oware/move", json={"position": "0,0,8,0,0,1/1,1,1,1,2,3/0,0 p0", "move": 2})
    js = r.json()["state"]
    assert js["over"] and js["reason"] == "scores" and js["scores"] == [15, 3] and js["text"].endswith("end")
    # Oware(1,n): the seeds go round without a capture (a grand slam captures nothing) and come back
    r = client.post("/api/oware/position", json={"position": "2/1/0,0 p0", "moves": [0, 1, 0]})
    assert r.json()["state"]["reason"] == "repetition"
    # must feed: player 1 has no seeds, so only the houses whose sowing reaches them are legal
    r = client.post("/api/oware/position", json={"position": "0,0,0,1,2,0/0,0,0,0,0,0/20,22 p0"})
    assert r.json()["state"]["legal"] == [4]
    r = client.post("/api/oware/move", json={"position": "0,0,0,1,2,0/0,0,0,0,0,0/20,22 p0", "move": 3})
    assert "does not feed the opponent" in error(r)


@pytest.mark.parametrize("body, words", [
    ({"position": "4,4/4,4/0,0 p2"}, "p0, p1 or end"),
    ({"position": "4,4/4,4 p0"}, "position must look like"),
    ({"position": "4,4/4,4,4/0,0 p0"}, "same number of houses"),
    ({"position": 7}, "position must be a string"),
    ({"position": "4,4/4,4/0,0 p0", "moves": [0, 0]}, "move 2 (sows a (house 0))"),
    ({"position": "4,4/4,4/0,0 p0", "moves": [2]}, "not a house of player 0"),
    ({"position": "4,4/4,4/0,0 p0", "moves": "0 1"}, "moves must be a list"),
    ({"position": "4,4/4,4/0,0 p0", "moves": [True]}, "moves must be a list"),
    ({"position": "4,4/4,4/0,0 p0", "moves": [0] * 1001}, "at most 1000"),
    ({"position": "4,4/4,4/0,0 p0", "empty_capture": False}, "unknown field"),
    ({"moves": []}, "missing field"),
])
def test_bad_positions_and_lines(client, body, words):
    assert words in error(client.post("/api/oware/position", json=body))


@pytest.mark.parametrize("move, words", [(6, "not a house of player 0"), (-1, "not a house of player 0"),
                                         ("A", "must be an integer"), (True, "must be an integer")])
def test_illegal_moves(client, move, words):
    assert words in error(client.post("/api/oware/move", json={"position": START_64, "move": move}))
    r = client.post("/api/oware/move", json={"position": "0,4,4,4,4,4/5,5,5,5,4,4/0,0 p0", "move": 0})
    assert "house 0 is empty" in error(r)


@pytest.mark.parametrize("spec", ["random", "alphabeta:depth=3",
                                  pytest.param("mc:playouts=20", marks=pytest.mark.slow)])
def test_agent_move_is_the_agents_move(client, spec):
    """The engine's reply is the move the same agent (same spec and seed) chooses in the replayed position."""
    moves = [5, 9, 3]
    state = OwareState.initial()
    for h in moves:
        state = state.play(h)
    r = client.post("/api/oware/agent-move", json={"position": START_64, "moves": moves, "agent": spec, "seed": 7})
    assert r.status_code == 202, r.text
    job = wait(client, r.json()["job"])
    assert job["status"] == "done", job
    res = job["result"]
    want = parse_agent(spec, game="oware", seed=7)(state)
    assert res["move"] == want and res["player"] == state.player
    check_state(res["state"], state.play(want), state.end_reason(want))
    if spec.startswith("alphabeta"):
        assert res["info"]["depth"] == 3 and isinstance(res["info"]["value"], float)


@pytest.mark.parametrize("body, words, status", [
    ({"agent": "alphabeta:depth=0"}, "depth", 400),
    ({"agent": "human"}, "clicking the board", 400),
    ({"agent": "chess"}, "unknown Oware agent", 400),
    ({"agent": "alphabeta:time=100"}, "above this server's cap", 400),
    ({"agent": 3}, "agent spec string", 400),
    ({"agent": "random", "seed": -1}, "seed must lie", 400),
    ({"agent": "random", "position": "0,0/0,0/2,2 end"}, "the game is over", 400),
])
def test_agent_move_refusals(client, body, words, status):
    assert words in error(client.post("/api/oware/agent-move", json={"position": START_64, **body}), status)


def test_openspiel_bot_replies_from_a_start_position(client):
    pytest.importorskip("pyspiel", reason="open-spiel is not installed")
    moves = [5, 9]
    r = client.post("/api/oware/agent-move", json={"position": START_64, "moves": moves, "agent": "openspiel:random"})
    job = wait(client, r.json()["job"])
    assert job["status"] == "done" and job["result"]["move"] in OwareState.initial().play(5).play(9).legal_moves()
    r = client.post("/api/oware/agent-move", json={"position": "4,4,4,4,4,0/5,5,5,5,4,4/0,0 p1",
                                                   "agent": "openspiel:random"})
    assert "not shown how the game reached" in error(r)


def test_serve_game_option(capsys):
    assert main(["serve", "--game", "chess"]) == 2
    assert "unknown game 'chess'" in capsys.readouterr().err


def test_agent_reply_hands_the_stop_event_to_agents_that_take_it():
    """An agent with ``choose(state, stop)`` gets the job's stop event (and stops by raising
    KeyboardInterrupt, which cancels the job); one without it is called as before."""
    import threading

    from jitsearch.cli._web_game import agent_reply as reply
    from jitsearch.games import get

    def agent_reply(agent, state, stop):
        return reply(get("oware"), agent, state, stop)

    state = OwareState.initial()
    stop = threading.Event()

    class Stoppable:
        seen = None

        def choose(self, st, ev):
            Stoppable.seen = ev
            return st.legal_moves()[0]

        def __call__(self, st):
            raise AssertionError("called without the stop event")

    assert agent_reply(Stoppable(), state, stop)["move"] == state.legal_moves()[0]
    assert Stoppable.seen is stop
    assert agent_reply(lambda st: st.legal_moves()[-1], state, stop)["move"] == state.legal_moves()[-1]

    class Interrupted:
        def choose(self, st, ev):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        agent_reply(Interrupted(), state, stop)


def test_an_oware_search_that_takes_the_stop_event_ends_at_the_cap(monkeypatch):
    """Through the route: an agent with ``choose(state, stop)`` is stopped at the server's cap and the job
    ends as cancelled, its slot free at once."""
    from jitsearch.cli import _web_game

    class Patient:
        options = {}

        def choose(self, state, stop):
            if not stop.wait(20):
                raise AssertionError("never told to stop")
            raise KeyboardInterrupt

    monkeypatch.setattr(_web_game, "make_agent", lambda game, spec, seed, start, moves, *rest: Patient())
    app = create_app(max_seconds=0.5, game="oware")
    with TestClient(app, headers=page_headers(app)) as c:
        r = c.post("/api/oware/agent-move", json={"position": START_64, "agent": "alphabeta:depth=40"})
        assert r.status_code == 202, r.text
        job = wait(c, r.json()["job"], 5)
        assert job["status"] == "cancelled" and "time cap of 0.5 s" in job["error"] and job["seconds"] < 2
        again = c.post("/api/oware/agent-move", json={"position": START_64, "agent": "random"})
        assert again.status_code == 202, again.text
        wait(c, again.json()["job"], 5)
    assert app.state.searches.wait_idle(5)

"""`jitsearch serve`: every API route of the web app (Starlette's TestClient), and the command's own errors."""

from __future__ import annotations

import json
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("httpx", reason="httpx (Starlette's TestClient) is not installed")

with warnings.catch_warnings():  # Starlette 1.x asks for httpx2 but still works with httpx
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from jitsearch.arena.agents import parse_agent  # noqa: E402
from jitsearch.cli.app import main  # noqa: E402
from jitsearch.cli.serve import INSTALL_HINT, bind_socket  # noqa: E402
from jitsearch.cli._support import UserError  # noqa: E402
from jitsearch.cli.webapp import LOOPBACK_HOSTS, MAX_BODY, TOKEN_HEADER, create_app  # noqa: E402
from jitsearch.games.kalah import KalahState, move_values  # noqa: E402

START_33 = "3,3,3/0/3,3,3/0 p0"


JSON = {"Content-Type": "application/json"}


def page_headers(app) -> dict:
    """What the page sends with every request that changes something: the server's token."""
    return {TOKEN_HEADER: app.state.token}


def library_error(fn, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as info:
        fn(*args, **kwargs)
    return str(info.value)


@pytest.fixture(scope="module")
def warm_engine():
    """Compile (or load) the engine the cancel and time-cap tests run, outside their time limits: a compiling
    search cannot be stopped, and those tests time how fast a search stops. (Only they ask for it: the other
    tests compile what they run inside budgets that do not count a compile.)"""
    parse_agent("alphabeta:time=0.2,db=0,book=0").choose(KalahState.initial(6, 4))  # (the start is in the book)


@pytest.fixture
def client(tmp_path):
    app = create_app(records_dir=tmp_path, max_seconds=20)
    with TestClient(app, headers=page_headers(app)) as c:
        c.records = tmp_path
        yield c
    app.state.searches.wait_idle(10)


def wait(client, job, seconds=60):
    end = time.monotonic() + seconds
    while job["status"] == "running":
        assert time.monotonic() < end, job
        time.sleep(0.05)
        r = client.get(f"/api/jobs/{job['id']}")
        assert r.status_code == 200, r.text
        job = r.json()["job"]
    return job


def error(r, status=400) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"]
    return body["error"]


# -- the page -------------------------------------------------------------------------------------

@pytest.mark.slow
def test_page_and_static_files(client):
    r = client.get("/")
    assert r.status_code == 200 and "<svg" not in r.text and 'id="board"' in r.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert "Not Found" in error(client.get("/api/nothing"), 404)
    assert "Method Not Allowed" in error(client.get("/api/move"), 405)


def test_info(client):
    info = client.get("/api/info").json()
    assert info["max_seconds"] == 20 and info["records"] is True
    assert "human" not in info["agents"] and "alphabeta" in info["agents"]
    assert info["max_houses"] == 16
    assert info["games"] == ["kalah", "oware", "connect4"]
    assert info["variants"]["connect4"] == {"width": {"type": "int", "default": 7, "help": "columns (4..9)"},
                                            "height": {"type": "int", "default": 6, "help": "rows (4..8)"}}
    assert info["variants"]["kalah"]["empty_capture"]["type"] == "bool"



@pytest.mark.slow
def test_the_page_suggests_only_agents_this_board_and_machine_run(client, monkeypatch):
    """``perfect`` only where it solves the position, ``backend=cuda`` only with a CUDA device; every
    suggestion is a spec the server accepts for that position."""
    from jitsearch.games.kalah.engines import check_perfect_board
    from jitsearch.cli import webapp
    from jitsearch.kernels.backend import cuda_status

    cuda = cuda_status()[0]
    big = client.post("/api/new", json={}).json()["state"]["agents"]
    small = client.post("/api/new", json={"houses": 3, "seeds": 3}).json()["state"]["agents"]
    assert "perfect" not in big and "perfect" in small
    assert "human" in big and "alphabeta:time=1" in big
    assert any("backend=cuda" in a for a in big) == cuda
    assert any("backend=cuda" in e for e in client.get("/api/info").json()["engines"]) == cuda
    for spec in small:  # accepted as they are (a search is started only for the fast ones)
        if spec != "human":
            parse_agent(spec)
    check_perfect_board(KalahState.initial(3, 3))
    # the suggestions follow the position: after a move, and for a set-up position
    moved = client.post("/api/move", json={"position": KalahState.initial(6, 4).to_text(), "move": 1}).json()
    assert "perfect" not in moved["state"]["agents"]
    late = client.post("/api/position", json={"position": "0,0,0,0,0,1/20/0,0,0,1,0,0/26 p0"}).json()
    assert "perfect" in late["state"]["agents"]
    monkeypatch.setattr(webapp, "_cuda_usable", lambda: True)  # a GPU machine
    app = create_app()
    with TestClient(app, headers=page_headers(app)) as c:
        assert "mcts:time=1,backend=cuda" in c.post("/api/new", json={}).json()["state"]["agents"]
        assert "mcts:time=1,backend=cuda" in c.get("/api/info").json()["engines"]


# -- positions and moves ----------------------------------------------------------------------------

def test_new_game(client):
    r = client.post("/api/new", json={"houses": 3, "seeds": 3, "empty_capture": True})
    st = r.json()["state"]
    ref = KalahState.initial(3, 3, empty_capture=True)
    assert st["text"] == ref.to_text() and st["board"] == ref.board.tolist() and st["empty_capture"]
    assert st["legal"] == [1, 2, 3] and st["player"] == 0 and not st["over"]
    assert client.post("/api/new", json={}).json()["state"]["text"] == KalahState.initial(6, 4).to_text()


@pytest.mark.parametrize("body", [{"houses": 17}, {"houses": 16, "seeds": 100}, {"seeds": 0}, {"houses": 0}])
def test_new_game_refuses_huge_boards_as_the_library_does(client, body):
    message = library_error(KalahState.initial, body.get("houses", 6), body.get("seeds", 4))
    assert error(client.post("/api/new", json=body)) == message


@pytest.mark.parametrize("body, message", [
    ({"houses": "6"}, "houses must be an integer"),
    ({"houses": True}, "houses must be an integer"),
    ({"empty_capture": 1}, "empty_capture must be true or false"),
    ({"colour": "red"}, "unknown field(s) ['colour']"),
])
def test_new_game_bad_fields(client, body, message):
    assert message in error(client.post("/api/new", json=body))


def test_bodies_that_are_not_json_objects(client):
    for raw in (b"[1, 2]", b"{not json", b"\xff\xfe"):
        assert error(client.post("/api/new", content=raw, headers=JSON)) == "the request body must be a JSON object"
    big = json.dumps({"position": "x" * (MAX_BODY + 10)})
    assert "at most" in error(client.post("/api/position", content=big, headers=JSON), 413)


def test_position_round_trips(client):
    text = "0,4,4/1/3,3,3/0 p1"
    st = client.post("/api/position", json={"position": text}).json()["state"]
    ref = KalahState.from_text(text)
    assert st["text"] == text and st["board"] == ref.board.tolist() and st["legal"] == ref.legal_moves()
    over = client.post("/api/position", json={"position": "0,0,0/10/0,0,0/8 end"}).json()["state"]
    assert over["over"] and over["result"] == "p0" and over["margin"] == 2 and over["legal"] == []


@pytest.mark.parametrize("text", ["3,3,3/0/3,3 p0", "banana", "3,3,3/0/3,3,3/0 p2", "1,2,3/0/1,2,3/0 end",
                                  "9" * 5000])
def test_malformed_positions_give_the_libraries_line(client, text):
    message = library_error(KalahState.from_text, text)
    assert error(client.post("/api/position", json={"position": text})) == message
    assert error(client.post("/api/position", json={"position": 5})) == "position must be a string, got 5"
    assert error(client.post("/api/position", json={})) == "missing field(s): position"


def test_move(client):
    r = client.post("/api/move", json={"position": START_33, "move": 2}).json()
    assert r["state"]["text"] == KalahState.from_text(START_33).play(2).to_text()
    assert r["move"] == 2 and r["player"] == 0 and r["extra_turn"] is False and r["state"]["player"] == 1
    extra = client.post("/api/move", json={"position": "3,3,1/0/3,3,3/0 p0", "move": 3}).json()
    assert extra["extra_turn"] is True and extra["state"]["player"] == 0
    ec = "3,1,0/0/0,3,3/0 p0"  # pit 2 ends in empty pit 3, opposite empty: captures only with empty_capture
    for flag in (False, True):
        got = client.post("/api/move", json={"position": ec, "move": 2, "empty_capture": flag}).json()
        assert got["state"]["text"] == KalahState.from_text(ec, empty_capture=flag).play(2).to_text()


@pytest.mark.parametrize("move", [0, 4, 5, 99, -1])
def test_illegal_moves_give_the_libraries_line(client, move):
    s = KalahState.from_text("3,3,0/1/4,4,3/0 p0")
    message = library_error(s.play, move)
    assert error(client.post("/api/move", json={"position": s.to_text(), "move": move})) == message


def test_move_bad_types(client):
    assert "move must be an integer" in error(
        client.post("/api/move", json={"position": START_33, "move": "1"}))
    assert "game is over" in error(client.post("/api/move", json={"position": "0,0,0/10/0,0,0/8 end", "move": 1}))


# -- searches ------------------------------------------------------------------------------------

def test_agent_move_random(client):
    r = client.post("/api/agent-move", json={"position": START_33, "agent": "random", "seed": 5})
    assert r.status_code == 202
    job = wait(client, r.json()["job"])
    assert job["status"] == "done" and job["kind"] == "move"
    res = job["result"]
    s = KalahState.from_text(START_33)
    assert res["move"] in s.legal_moves() and res["state"]["text"] == s.play(res["move"]).to_text()


@pytest.mark.slow
def test_agent_move_engine_plays_the_solved_best_move(client):
    s = KalahState.from_text("0,4,4/1/3,3,3/0 p0")
    r = client.post("/api/agent-move", json={"position": s.to_text(), "agent": "perfect"})
    job = wait(client, r.json()["job"])
    assert job["status"] == "done", job
    best = move_values(s)
    assert best["moves"][[m["move"] for m in best["moves"]].index(job["result"]["move"])]["value"] == best["value"]


@pytest.mark.parametrize("spec", ["nonsense", "alphabeta:depth=0", "mcts:time=1,bogus=2", "alphabeta:depth=3,depth=4"])
def test_agent_move_bad_specs_give_the_clis_line(client, spec):
    message = library_error(parse_agent, spec, seed=0)
    assert error(client.post("/api/agent-move", json={"position": START_33, "agent": spec})) == message


def test_cmd_engines_are_refused_without_starting_anything(client, tmp_path):
    marker = tmp_path / "started"
    spec = f"cmd:touch {marker}"
    assert error(client.post("/api/agent-move", json={"position": START_33, "agent": spec})).startswith(
        "cmd: engines start a program on this machine")
    assert error(client.post("/api/analyse", json={"position": START_33, "engine": spec})).startswith(
        "cmd: engines start a program on this machine")
    assert not marker.exists()


def test_agent_move_refusals(client):
    assert "'human' is you" in error(client.post("/api/agent-move", json={"position": START_33, "agent": "human"}))
    assert "above this server's cap of 20 s" in error(
        client.post("/api/agent-move", json={"position": START_33, "agent": "alphabeta:time=30"}))
    big = KalahState.initial(6, 6).to_text()
    assert "the perfect agent solves every position" in error(
        client.post("/api/agent-move", json={"position": big, "agent": "perfect"}))
    assert "game is over" in error(client.post("/api/agent-move", json={"position": "0,0,0/10/0,0,0/8 end",
                                                                          "agent": "random"}))
    assert "seed must lie in" in error(client.post("/api/agent-move", json={"position": START_33, "agent": "random",
                                                                             "seed": -1}))


def test_analyse_small_board_is_exact(client):
    s = KalahState.initial(3, 3)
    r = client.post("/api/analyse", json={"position": s.to_text(), "solve_time": 20})
    job = wait(client, r.json()["job"])
    assert job["status"] == "done" and job["kind"] == "analysis"
    res = job["result"]
    ref = move_values(s)
    assert res["exact"] and [m["value"] for m in res["moves"]] == [m["value"] for m in ref["moves"]]
    assert res["best_move"] == ref["best_move"] and res["pv"][0] == ref["best_move"]
    assert job["progress"]["phase"] in ("exact", "engine")


@pytest.mark.slow
def test_the_engine_panel_of_another_game(client):
    """/api/GAME/engine-analysis is the engine panel of any game: Connect Four's with MCTS (it has no timed
    exact solve: solve_time > 0 is refused in one line)."""
    from jitsearch.games import get

    start = get("connect4").initial().to_text()
    r = client.post("/api/connect4/engine-analysis", json={"position": start, "moves": [3, 3],
                                                          "engine": "mcts:iterations=300", "solve_time": 0})
    job = wait(client, r.json()["job"])
    assert job["status"] == "done", job
    res = job["result"]
    assert [m["move"] for m in res["moves"]] == list(range(7)) and {m["source"] for m in res["moves"]} == {"mcts"}
    assert res["best_move"] in range(7) and not res["exact"]
    assert "no timed exact move values" in error(client.post(
        "/api/connect4/engine-analysis", json={"position": start, "engine": "mcts:iterations=300", "solve_time": 1}))
    assert error(client.post("/api/chess/engine-analysis", json={"position": "x"}), 404)


@pytest.mark.parametrize("body, message", [
    ({"engine": "random"}, "the analysis engine must be one of"),
    ({"engine": "mcts:c=2"}, "give the analysis engine a budget"),
    ({"engine": 3}, "engine must be an agent spec string"),
    ({"engine": "alphabeta:time=25"}, "above this server's cap"),
    ({"solve_time": 21}, "solve_time must lie in 0..20 seconds"),
    ({"solve_time": "2"}, "solve_time must be a number"),
])
def test_analyse_refusals(client, body, message):
    assert message in error(client.post("/api/analyse", json={"position": START_33, **body}))


@pytest.mark.slow
def test_one_search_at_a_time_and_cancel(client, warm_engine):
    big = KalahState.initial(6, 4).to_text()
    first = client.post("/api/analyse", json={"position": big, "engine": "alphabeta:time=15,db=0", "solve_time": 0})
    assert first.status_code == 202
    job = first.json()["job"]
    time.sleep(0.3)
    message = error(client.post("/api/agent-move", json={"position": START_33, "agent": "random"}), 409)
    assert message.startswith("a search is already running (analysis")
    assert error(client.post("/api/analyse", json={"position": START_33}), 409).startswith("a search is already")
    t0 = time.monotonic()
    assert client.post(f"/api/jobs/{job['id']}/cancel", json={}).json()["job"]["stopping"] in (True, False)
    job = wait(client, job, 10)
    assert time.monotonic() - t0 < 5
    assert job["status"] == "done" and job["result"]["interrupted"]
    again = client.post("/api/agent-move", json={"position": START_33, "agent": "random"})
    assert again.status_code == 202 and wait(client, again.json()["job"])["status"] == "done"


def test_time_cap_stops_a_search(tmp_path, warm_engine):
    app = create_app(max_seconds=1)
    with TestClient(app, headers=page_headers(app)) as c:
        r = c.post("/api/agent-move", json={"position": KalahState.initial(6, 4).to_text(),
                                            "agent": "alphabeta:depth=64,db=0"})
        job = wait(c, r.json()["job"], 15)
        assert job["status"] == "cancelled" and "time cap of 1 s" in job["error"]
        assert job["seconds"] < 5
    app.state.searches.wait_idle(10)



def _stubborn_search(app, seconds_ignoring_stop: float):
    """A search that goes on for a while after it is told to stop (as a kernel that cannot be stopped
    would): it ends once ``release`` is set or ``seconds_ignoring_stop`` after its stop."""
    release = threading.Event()

    def run(job):
        job.progress = {"phase": "search"}
        job.stop.wait(30)
        release.wait(seconds_ignoring_stop)
        raise KeyboardInterrupt

    return app.state.searches.start("move", run), release


def test_a_stopped_search_holds_the_slot_until_it_has_ended(client):
    """On Cancel or at the time cap a search is told to stop and reports ``stopping``; one that runs on
    keeps the slot however long it takes (a new search is refused, 409, with the reason in one line), so no
    search is left running beside the next; once its thread has ended, the next one starts."""
    capped = create_app(max_seconds=0.3)
    with TestClient(capped, headers=page_headers(capped)) as c:
        job, release = _stubborn_search(client.app, 30)
        client.post(f"/api/jobs/{job.id}/cancel", json={})
        at_cap, release_cap = _stubborn_search(capped, 30)
        time.sleep(3.3)  # longer than a stopped search was once given before its slot was handed on
        for cl, j, why in ((client, job, "cancelled"), (c, at_cap, "stopped at this server's time cap of 0.3 s")):
            shown = cl.get(f"/api/jobs/{j.id}").json()["job"]
            assert shown["status"] == "running" and shown["stopping"] is True and j.thread.is_alive()
            message = error(cl.post("/api/agent-move", json={"position": START_33, "agent": "random"}), 409)
            assert message.startswith(f"a search is still stopping (move, {why},"), message
        release.set()
        release_cap.set()
        for cl, j, why in ((client, job, "cancelled"), (c, at_cap, "time cap of 0.3 s")):
            j.thread.join(5)
            shown = cl.get(f"/api/jobs/{j.id}").json()["job"]
            assert shown["status"] == "cancelled" and why in shown["error"]
            again = cl.post("/api/agent-move", json={"position": START_33, "agent": "random"})
            assert again.status_code == 202 and wait(cl, again.json()["job"])["status"] == "done"
    assert capped.state.searches.wait_idle(5)

def test_jobs_that_do_not_exist(client):
    assert "no search 999" in error(client.get("/api/jobs/999"), 404)
    assert "no search 'abc'" in error(client.get("/api/jobs/abc"), 404)
    assert "no search 7" in error(client.post("/api/jobs/7/cancel", json={}), 404)


# -- records ------------------------------------------------------------------------------------------

def _record_file(path, capsys):
    code = main(["tournament", "--game", "kalah", "--houses", "3", "--seeds", "2", "--a", "random", "--b",
                 "random", "--pairs", "2", "--openings", "1", "--out", str(path)])
    capsys.readouterr()
    assert code == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_records(client, capsys):
    recs = _record_file(client.records / "games.jsonl", capsys)
    (client.records / "notes.txt").write_text("not a record")
    (client.records / "sub").mkdir()
    files = client.get("/api/records").json()["files"]
    assert [f["name"] for f in files] == ["games.jsonl"]
    games = client.get("/api/records/games.jsonl").json()["games"]
    assert len(games) == len(recs) == 4
    for g, rec in zip(games, recs):  # a match's record replays from the position its opening plies reach
        s = KalahState.from_text(rec["opening"])
        texts = [s.to_text()]
        for mv in rec["moves"]:
            s = s.play(mv)
            texts.append(s.to_text())
        assert g["positions"] == texts and g["plies"] == rec["moves"] and len(rec["opening_moves"]) == 1
        assert g["margin"] == rec["margin"] and g["a"] == "random" and g["opening"] == 0
    # Kalah's older record format (no game field) replays from the start, its opening plies included
    older = Path(__file__).parent / "data" / "kalah_legacy.jsonl"
    (client.records / "older.jsonl").write_text(older.read_text())
    recs = [json.loads(line) for line in older.read_text().splitlines()]
    games = client.get("/api/records/older.jsonl").json()["games"]
    assert len(games) == len(recs) == 6
    for g, rec in zip(games, recs):
        s = KalahState.initial(3, 2)
        texts = [s.to_text()]
        for mv in rec["opening"] + rec["moves"]:
            s = s.play(mv)
            texts.append(s.to_text())
        assert g["positions"] == texts and g["plies"] == rec["opening"] + rec["moves"]
        assert g["margin"] == rec["margin"] and g["a"] == "alphabeta:depth=1" and g["opening"] == 1


@pytest.mark.parametrize("name", ["notes.txt", "..%2Fsecret.jsonl", "missing.jsonl", ".hidden.jsonl"])
def test_records_outside_the_list_are_refused(client, name):
    (client.records / "notes.txt").write_text("x")
    (client.records / ".hidden.jsonl").write_text("{}\n")
    (client.records.parent / "secret.jsonl").write_text("{}\n")
    assert error(client.get(f"/api/records/{name}"), 404)


def test_bad_record_files(client, capsys):
    (client.records / "broken.jsonl").write_text('{"a": 1}\n')
    assert error(client.get("/api/records/broken.jsonl")).startswith("broken.jsonl:1: not a Kalah game record")
    (client.records / "bad.jsonl").write_text("not json\n")
    assert error(client.get("/api/records/bad.jsonl")) == "bad.jsonl:1: not a JSON record (Expecting value)"
    recs = _record_file(client.records / "games.jsonl", capsys)
    recs[1]["moves"][0] = 99
    (client.records / "edited.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert "edited.jsonl:2: ply 1 (move 99) is not a legal move" in error(client.get("/api/records/edited.jsonl"))
    older = Path(__file__).parent / "data" / "kalah_legacy.jsonl"  # Kalah's older format, its opening plies first
    recs = [json.loads(line) for line in older.read_text().splitlines()]
    recs[1]["moves"][0] = 99
    (client.records / "edited.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert "edited.jsonl:2: ply 2 (pit 99) is not a legal move" in error(client.get("/api/records/edited.jsonl"))
    (client.records / "empty.jsonl").write_text("")
    assert error(client.get("/api/records/empty.jsonl")) == "empty.jsonl: no game records"



def test_record_links_out_of_the_directory_are_neither_listed_nor_read(client, capsys):
    """A symbolic link whose real path is outside the records directory (or broken, or a link to a
    directory) is not a record file of it; a link to a file in the directory itself is."""
    outside = client.records.parent / "outside"
    outside.mkdir()
    recs = _record_file(outside / "secret.jsonl", capsys)
    _record_file(client.records / "games.jsonl", capsys)
    (client.records / "leak.jsonl").symlink_to(outside / "secret.jsonl")
    (client.records / "up.jsonl").symlink_to(Path("..") / "outside" / "secret.jsonl")
    (client.records / "dangling.jsonl").symlink_to(outside / "missing.jsonl")
    (client.records / "dir.jsonl").symlink_to(outside)
    (client.records / "alias.jsonl").symlink_to(client.records / "games.jsonl")
    files = client.get("/api/records").json()["files"]
    assert [f["name"] for f in files] == ["alias.jsonl", "games.jsonl"]
    for name in ("leak.jsonl", "up.jsonl", "dangling.jsonl", "dir.jsonl"):
        assert "no record file" in error(client.get(f"/api/records/{name}"), 404)
    alias = client.get("/api/records/alias.jsonl").json()
    assert alias["file"] == "alias.jsonl" and len(alias["games"]) == len(recs)


def test_no_records_directory():
    with TestClient(create_app()) as c:
        assert c.get("/api/info").json()["records"] is False
        assert "start the server with --records DIR" in error(c.get("/api/records"), 404)
        assert "start the server with --records DIR" in error(c.get("/api/records/a.jsonl"), 404)


def test_loopback_server_refuses_other_host_names():
    with TestClient(create_app(allowed_hosts=LOOPBACK_HOSTS), base_url="http://127.0.0.1") as c:
        assert c.get("/api/info").status_code == 200
        assert c.get("/api/info", headers={"host": "evil.example"}).status_code == 400



# -- requests from other pages -------------------------------------------------------------------------

def _page_token(client) -> str:
    import re

    m = re.search(r'<meta name="jitsearch-token" content="([^"]+)">', client.get("/").text)
    assert m, "the page carries no token"
    return m.group(1)


def test_only_the_page_may_change_anything(tmp_path):
    """A request that changes something must be JSON, from the server's own origin, with the token that the
    page (and only the page) carries; each refusal is one line. Reading (GET) needs none of it."""
    app = create_app(allowed_hosts=LOOPBACK_HOSTS)
    body = json.dumps({"position": START_33, "agent": "random"})
    with TestClient(app, base_url="http://127.0.0.1:8123") as c:
        token = _page_token(c)
        assert token == app.state.token and len(token) >= 32
        assert _page_token(TestClient(create_app())) != token  # a token per server
        own = {"Content-Type": "application/json", TOKEN_HEADER: token}
        # another site's page: a "simple" request (text/plain, no preflight) with its Origin
        evil = c.post("/api/agent-move", content=body,
                      headers={"Origin": "http://evil.example", "Content-Type": "text/plain"})
        assert "cross-origin request refused: Origin http://evil.example" in error(evil, 403)
        assert "cross-origin" in error(c.post("/api/agent-move", content=body,
                                              headers={**own, "Origin": "http://evil.example"}), 403)
        assert "cross-origin" in error(c.post("/api/new", json={}, headers={**own, "Origin": "null"}), 403)
        assert "cross-origin" in error(c.post("/api/new", json={}, headers={
            **own, "Origin": "http://127.0.0.1:9999"}), 403)  # another server on this machine
        assert "Sec-Fetch-Site: cross-site" in error(c.post("/api/new", json={}, headers={
            **own, "Sec-Fetch-Site": "cross-site"}), 403)
        assert "Content-Type: application/json" in error(c.post("/api/agent-move", content=body, headers={
            TOKEN_HEADER: token, "Content-Type": "text/plain"}), 415)
        assert "Content-Type: application/json" in error(c.post("/api/jobs/1/cancel", headers={
            TOKEN_HEADER: token}), 415)
        assert f"missing or wrong {TOKEN_HEADER}" in error(c.post("/api/agent-move", content=body, headers={
            "Content-Type": "application/json"}), 403)
        assert f"missing or wrong {TOKEN_HEADER}" in error(c.post("/api/new", json={}, headers={
            TOKEN_HEADER: token[:-1] + ("A" if token[-1] != "A" else "B")}), 403)
        assert error(c.post("/api/records", json={}, headers={}), 403)  # every route, whatever its method
        # the page's own requests, as a browser sends them (Origin and Sec-Fetch-Site of the page itself)
        page = {**own, "Origin": "http://127.0.0.1:8123", "Sec-Fetch-Site": "same-origin"}
        assert c.post("/api/new", json={"houses": 3}, headers=page).status_code == 200
        r = c.post("/api/agent-move", content=body, headers=page)
        assert r.status_code == 202 and wait(c, r.json()["job"])["status"] == "done"
        assert c.post("/api/new", json={}, headers=own).status_code == 200  # a script: no Origin
        assert c.get("/api/info", headers={"Origin": "http://evil.example"}).status_code == 200
    app.state.searches.wait_idle(10)


def test_a_request_body_that_never_comes_is_answered_408():
    """A client that sends the headers and part of the body, then nothing, gets 408 (one line) after the
    server's body timeout, instead of holding the request open."""
    import asyncio

    app = create_app(body_seconds=0.3, token="t" * 32)
    sent = []

    async def go():
        chunks = [{"type": "http.request", "body": b'{"hou', "more_body": True}]

        async def receive():
            if chunks:
                return chunks.pop(0)
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/api/new", "raw_path": b"/api/new", "query_string": b"",
                 "root_path": "", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 5000),
                 "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
                             (b"content-length", b"100"), (TOKEN_HEADER.lower().encode(), b"t" * 32)]}
        await asyncio.wait_for(app(scope, receive, send), 5)

    t0 = time.monotonic()
    asyncio.run(go())
    assert time.monotonic() - t0 < 3
    assert sent[0]["status"] == 408
    assert json.loads(sent[1]["body"]) == {"error": "the request body was not sent within 0.3 s"}


# -- the command -------------------------------------------------------------------------------------

def test_serve_without_the_web_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main(["serve"]) == 2
    out, err = capsys.readouterr()
    assert err == f"error: {INSTALL_HINT}\n" and out == ""


@pytest.mark.parametrize("args, message", [
    (["--port", "70000"], "--port must lie in 0..65535"),
    (["--max-seconds", "0"], "--max-seconds must be a finite number"),
    (["--records", "/nonexistent/dir"], "--records /nonexistent/dir: not a directory"),
])
def test_serve_usage_errors(capsys, args, message):
    assert main(["serve", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_bind_socket():
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    try:
        with pytest.raises(UserError, match=f"cannot listen on 127.0.0.1:{port}"):
            bind_socket("127.0.0.1", port)
    finally:
        sock.close()


def test_serve_starts_prints_its_address_and_stops_on_ctrl_c(tmp_path):
    """The real command: a server on an open port, the warning for a non-loopback interface, Ctrl-C."""
    import os
    import signal
    import subprocess
    import urllib.request

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                                     os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "jitsearch", "serve", "--host", "0.0.0.0", "--records",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("jitsearch serve: http://0.0.0.0:"), line
        port = int(line.split(":")[3].split("/")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/info", timeout=20) as r:
            assert json.load(r)["records"] is True
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert err.startswith("warning: listening on 0.0.0.0: anyone who can reach this machine")
    assert "Traceback" not in err and proc.returncode in (0, 130), (proc.returncode, err)


def test_ctrl_c_stops_the_server_while_a_client_holds_a_request_open():
    """A client sent the headers and 5 of 100 body bytes, then nothing: the first Ctrl-C still stops the
    command within a second or two, with exit status 130 and no traceback."""
    import os
    import re
    import signal
    import socket
    import subprocess
    import urllib.request

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                                     os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "jitsearch", "serve"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    held = None
    try:
        line = proc.stdout.readline()
        port = int(line.split(":")[3].split("/")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=20) as r:
            token = re.search(r'name="jitsearch-token" content="([^"]+)"', r.read().decode()).group(1)
        held = socket.create_connection(("127.0.0.1", port), timeout=10)
        held.sendall(f"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: 100\r\n{TOKEN_HEADER}: {token}\r\n\r\n{{\"hou".encode())
        time.sleep(0.5)  # the request is in the app, waiting for the rest of its body
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the first Ctrl-C did not stop the server within 10 s: {err[-500:]}")
        took = time.monotonic() - t0
    finally:
        if held is not None:
            held.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (proc.returncode, err)
    assert took < 5, took  # 1.3 s on an idle 2-core box (1 s of it the graceful shutdown); 3.1 s seen at load 6
    assert "Traceback" not in err and err.count("\n") <= 2, err


# -- every game: /api/{game}/... (Connect Four: no code of its own above games/) ----------------------

def _c4():
    from jitsearch.games import get

    return get("connect4")


def test_connect4_new_position_and_legal_moves(client):
    c4 = _c4()
    r = client.post("/api/connect4/new", json={"width": 8, "height": 7})
    assert r.status_code == 200, r.text
    st = r.json()["state"]
    start = c4.initial(width=8, height=7)
    assert st["game"] == "connect4" and st["text"] == start.to_text() and st["legal"] == list(range(8))
    assert st["width"] == 8 and st["height"] == 7 and st["cells"] == [[-1] * 8] * 7 and st["player"] == 0
    assert st["names"]["7"] == "drops a stone in column 8" and st["over"] is False and "human" in st["agents"]
    full = client.post("/api/connect4/position", json={"position": "111111", "moves": [1]}).json()["state"]
    state = c4.from_text("111111").play(1)
    assert full["text"] == state.to_text() and full["legal"] == state.legal_moves() == [1, 2, 3, 4, 5, 6]
    assert full["cells"] == c4.ui.board_json(state)["cells"] and full["player"] == 1


def test_connect4_moves_apply_as_the_rules_do(client):
    """A random line through the route equals the state class's; the winning move ends the game."""
    import random

    c4 = _c4()
    rnd = random.Random(3)
    for _ in range(3):
        state, moves = c4.initial(), []
        while not state.is_over:
            move = rnd.choice(state.legal_moves())
            r = client.post("/api/connect4/move", json={"position": "", "moves": moves, "move": move})
            assert r.status_code == 200, r.text
            body = r.json()
            after = state.play(move)
            assert body["move"] == move and body["player"] == state.player and body["extra_turn"] is False
            js = body["state"]
            assert js["text"] == after.to_text() and js["legal"] == after.legal_moves()
            assert js["over"] == after.is_over and js["margin"] == after.margin and js["result"] == after.result
            assert js["cells"] == c4.ui.board_json(after)["cells"]
            state, moves = after, moves + [move]


@pytest.mark.parametrize("path, body, words, status", [
    ("/api/connect4/move", {"position": "", "move": 7}, "a move is a column 0..6, got 7", 400),
    ("/api/connect4/move", {"position": "111111", "move": 0}, "column 1 is full", 400),
    ("/api/connect4/move", {"position": "1212121", "move": 3}, "the game is over", 400),
    ("/api/connect4/move", {"position": "", "move": "4"}, "move must be an integer", 400),
    ("/api/connect4/position", {"position": "12x"}, "position must look like", 400),
    ("/api/connect4/position", {"position": "", "moves": [0] * 7}, "move 7 (drops a stone in column 1)", 400),
    ("/api/connect4/position", {"position": "", "houses": 6}, "unknown field", 400),
    ("/api/connect4/new", {"width": 3}, "width", 400),
    ("/api/connect4/new", {"width": "7"}, "width must be an integer", 400),
    ("/api/connect4/agent-move", {"position": "", "agent": "cmd:/bin/echo"}, "web page", 400),
    ("/api/connect4/agent-move", {"position": "", "agent": "human"}, "clicking the board", 400),
    ("/api/chess/new", {}, "unknown game 'chess'", 404),
])
def test_connect4_bad_requests_are_one_line(client, path, body, words, status):
    assert words in error(client.post(path, json=body), status)


@pytest.mark.slow
def test_connect4_analysis_values_every_move():
    """A late position: every move valued by the MCTS tree and exactly (Pons's score, the mover's), the
    exact values those of the solver on each child. (A cap that leaves room for a first compile.)"""
    from jitsearch.games.connect4.solver import solve

    c4 = _c4()
    text = "...x..o/o..o..x/x..o..o/xx.oxox/oooxoxo/oxxxoxx p0"  # 14 empty cells: exact values are given
    state = c4.from_text(text)
    app = create_app(max_seconds=600)
    with TestClient(app, headers=page_headers(app)) as client:
        r = client.post("/api/connect4/analyse", json={"position": text, "iterations": 300, "playouts": 2})
        assert r.status_code == 202, r.text
        job = wait(client, r.json()["job"], 600)
    app.state.searches.wait_idle(10)
    assert job["status"] == "done", job
    res = job["result"]
    assert [m["move"] for m in res["moves"]] == state.legal_moves()
    assert sum(m["visits"] for m in res["moves"]) == res["iterations"] == 300
    assert res["exact"] and "Pons" in res["exact_rule"]
    if res["exact"]:
        for m in res["moves"]:
            child = state.play(m["move"])
            want = (42 + 1 - state.ply) // 2 if child.is_over and child.margin else 0 if child.is_over \
                else -solve(child)
            assert m["exact"] == want
        assert res["exact_best"] == [m["move"] for m in res["moves"] if m["exact"] == res["exact_value"]]


def _connect4_agents_missing():
    from jitsearch.cli.common import agent_for

    try:
        agent_for("connect4", "random", 0)
        agent_for("connect4", "mcts:iterations=200", 0)
    except ValueError as exc:
        return f"no Connect Four agents before the generic parse_agent(spec, game=...) lands: {exc}"
    return None


@pytest.mark.skipif(_connect4_agents_missing() is not None, reason=str(_connect4_agents_missing()))
@pytest.mark.parametrize("spec", ["random", "mcts:iterations=200"])
def test_connect4_agent_move(client, spec):
    c4 = _c4()
    r = client.post("/api/connect4/agent-move", json={"position": "4455", "moves": [2], "agent": spec, "seed": 3})
    assert r.status_code == 202, r.text
    job = wait(client, r.json()["job"], 60)
    assert job["status"] == "done", job
    state = c4.from_text("4455").play(2)
    res = job["result"]
    assert res["move"] in state.legal_moves() and res["player"] == 1
    assert res["state"]["text"] == state.play(res["move"]).to_text()


def test_the_page_gets_every_games_drawing_script_from_the_game(client, tmp_path):
    """/boards.js is the registry's drawing scripts (``TextUI.script``), a game from outside the package's too;
    a script path that is not a file is refused when the game is registered."""
    from dataclasses import replace

    import jitsearch.games as games
    from jitsearch.games.protocol import check_game

    r = client.get("/boards.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    for name in ("kalah", "oware", "connect4"):
        assert f"BOARDS = window.BOARDS || {{}}).{name} =" in r.text
    assert '<script src="/boards.js">' in client.get("/").text
    base = games.get("connect4")
    script = tmp_path / "mine.js"
    script.write_text('(window.BOARDS = window.BOARDS || {}).connect4_mine = {title: "mine"};\n')
    try:
        games.register(replace(base, name="connect4_mine", ui=base.ui._replace(script=str(script))))
        assert 'BOARDS || {}).connect4_mine = {title: "mine"}' in client.get("/boards.js").text
    finally:
        games.GAMES.pop("connect4_mine", None)
    with pytest.raises(ValueError, match="drawing script .*missing.js is not a file"):
        check_game(replace(base, ui=base.ui._replace(script=str(tmp_path / "missing.js"))))

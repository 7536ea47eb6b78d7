"""Oware in the arena and on the command line: agents, paired matches,
records that replay, the tournament and play commands, one-line errors."""

from __future__ import annotations

import json

import pytest

from jitsearch.arena.oware_arena import parse_oware_agent, play_oware_game, run_oware_match
from jitsearch.cli.app import main
from jitsearch.games.oware import OwareState


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("spec", ["alphabeta:depth=3", "alphabeta:time=0.05", "mc:playouts=30"])
def test_agents_take_the_winning_capture(spec):
    # OpenSpiel's test position: house 2 captures 11 of 18 seeds and wins at once; the others do not
    s = OwareState.from_board([0, 0, 8, 0, 0, 1, 1, 1, 1, 1, 2, 3, 0, 0], 0)
    assert parse_oware_agent(spec, seed=1)(s) == 2


def test_search_beats_random_and_records_replay(tmp_path):
    out = tmp_path / "games.jsonl"
    r = run_oware_match("alphabeta:depth=3", "random", 3, openings=2, seed=4, out=out)
    assert r["games"] == 6 and r["a_score"] >= 5 / 6 and r["game"] == "oware"
    assert len(r["statistics"]["pentanomial"]) == 5 and not r["interrupted"]
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 6 and {x["a_seat"] for x in lines} == {0, 1}
    for rec in lines:  # every record replays to its final position from the start
        s = OwareState.initial(6, 4)
        for h in rec["opening_moves"]:
            s = s.play(h)
        assert s.to_text() == rec["opening"]
        for h in rec["moves"]:
            s = s.play(h)
        assert s.to_text() == rec["final"] and s.is_over and list(s.scores) == rec["scores"]
    again = run_oware_match("alphabeta:depth=3", "random", 3, openings=2, seed=4)
    assert again["statistics"]["pentanomial"] == r["statistics"]["pentanomial"]


def test_mc_backends_agree():
    from jitsearch.kernels.backend import cuda_status

    s = OwareState.initial(4, 3).play(1)
    cpu = parse_oware_agent("mc:playouts=20,backend=cpu", seed=9)
    auto = parse_oware_agent("mc:playouts=20,backend=auto", seed=9)
    assert auto.backend == ("cuda" if cuda_status()[0] else "cpu")
    assert cpu(s) == auto(s) and cpu.last == auto.last
    if not cuda_status()[0]:
        with pytest.raises(ValueError, match="CUDA backend requested"):
            parse_oware_agent("mc:backend=cuda")


def test_games_replay_exactly():
    a, b = parse_oware_agent("mc:playouts=10", seed=3), parse_oware_agent("random", seed=5)
    g1 = play_oware_game(OwareState.initial(4, 3), [a, b])
    a, b = parse_oware_agent("mc:playouts=10", seed=3), parse_oware_agent("random", seed=5)
    g2 = play_oware_game(OwareState.initial(4, 3), [a, b])
    assert g1 == g2
    s = OwareState.initial(4, 3)
    for h in g1["moves"]:
        s = s.play(h)
    assert s.to_text() == g1["final"] and s.is_over and list(s.scores) == g1["scores"]


@pytest.mark.parametrize("spec, words", [
    ("bogus", "unknown Oware agent"), ("mc:depth=3", "unknown option"), ("alphabeta:depth=0", "depth"),
    ("alphabeta:depth=2,depth=3", "given twice"), ("mc:playouts=x", "bad value"), ("alphabeta:time=-1", "time"),
    ("mc:backend=gpu", "backend must be one of"),
])
def test_bad_specs(spec, words):
    with pytest.raises(ValueError, match=words):
        parse_oware_agent(spec)


def test_tournament_cli_json_and_errors(capsys):
    code, out, err = run(capsys, "tournament", "--game", "oware", "--a", "alphabeta:depth=2", "--b", "random",
                         "--pairs", "2", "--houses", "4", "--seeds", "3", "--json")
    assert code == 0, err
    obj = json.loads(out)
    # the keys of a Kalah match's result
    assert {"games", "a_wins", "draws", "b_wins", "a_score", "elo_diff", "statistics", "a", "b", "interrupted",
            "game"} <= set(obj)
    assert obj["games"] == 4 and obj["houses"] == 4 and obj["game"] == "oware"
    assert {"pentanomial", "elo", "nelo", "los"} <= set(obj["statistics"])
    for args, words in ((("--a", "mc:bogus=1"), "unknown option"), (("--sprt", "0,5"), "does not apply"),
                        (("--openings", "book.txt"), "random opening plies"), (("--seeds", "0"), "seeds"),
                        (("--empty-capture",), "does not apply")):
        code, out, err = run(capsys, "tournament", "--game", "oware", "--pairs", "1", *args)
        assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert words in err


def test_play_cli(capsys):
    code, out, err = run(capsys, "play", "--game", "oware", "--p0", "alphabeta:depth=2", "--p1", "random",
                         "--seed", "2", "--houses", "3", "--seeds", "2", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["result"] in ("p0", "p1", "draw") and sum(obj["scores"]) == 12
    code, out, err = run(capsys, "play", "--game", "oware", "--position", "1,0/0,0/0,0 p0", "--p0", "random",
                         "--p1", "random")
    assert code == 2 and "already end the game" in err and "Traceback" not in err
    code, out, err = run(capsys, "play", "--game", "chess")
    assert code == 2 and "--game must be kalah or oware" in err


def test_openspiel_agents_without_openspiel_are_one_line(monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "pyspiel", None)  # import pyspiel now fails
    with pytest.raises(ValueError, match=r"pip install 'jitsearch\[openspiel\]'"):
        parse_oware_agent("openspiel:mcts,simulations=10")
    code, out, err = run(capsys, "tournament", "--game", "oware", "--a", "openspiel:random", "--b", "random",
                         "--pairs", "1")
    assert code == 2 and "jitsearch[openspiel]" in err and len(err.strip().splitlines()) == 1, err

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
    assert code == 2 and "unknown game 'chess'" in err


def test_openspiel_agents_without_openspiel_are_one_line(monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "pyspiel", None)  # import pyspiel now fails
    with pytest.raises(ValueError, match=r"pip install 'jitsearch\[openspiel\]'"):
        parse_oware_agent("openspiel:mcts,simulations=10")
    code, out, err = run(capsys, "tournament", "--game", "oware", "--a", "openspiel:random", "--b", "random",
                         "--pairs", "1")
    assert code == 2 and "jitsearch[openspiel]" in err and len(err.strip().splitlines()) == 1, err


# -- a match's record file: another match's refused, resume, Ctrl-C, replay checks ------------------

MATCH_ARGS = ("tournament", "--game", "oware", "--a", "alphabeta:depth=2", "--b", "random", "--houses", "4",
              "--seeds", "3", "--openings", "2")


def _lines(path):
    return path.read_text().splitlines()


def test_out_of_another_match_is_refused_and_kept(capsys, tmp_path):
    """--out that holds another match's games (players, board, openings, seed) or a Kalah match's is refused in
    one line before any game, and the file is left as it was; this match's file needs --resume."""
    out = tmp_path / "m.jsonl"
    code, _, err = run(capsys, *MATCH_ARGS, "--pairs", "2", "--seed", "1", "--out", str(out), "--json")
    assert code == 0, err
    before = out.read_text()
    assert len(_lines(out)) == 4
    for args, words in ((("--seed", "2"), "seed 1 in the file, 2 here"),
                        (("--seed", "1", "--openings", "3"), "openings 2 in the file, 3 here"),
                        (("--seed", "1", "--b", "alphabeta:depth=1"), "players"),
                        (("--seed", "1", "--seeds", "4"), "seeds 3 in the file, 4 here"),
                        (("--seed", "1"), "already holds this match's games: pass --resume")):
        code, _, err = run(capsys, *MATCH_ARGS, "--pairs", "2", "--out", str(out), *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert words in err and (words.startswith("already") or "holds games of another tournament" in err), err
        assert out.read_text() == before
    kalah = tmp_path / "k.jsonl"
    code, _, err = run(capsys, "tournament", "--game", "kalah", "--a", "random", "--b", "random", "--pairs", "1",
                       "--houses", "3", "--seeds", "2", "--out", str(kalah))
    assert code == 0, err
    code, _, err = run(capsys, *MATCH_ARGS, "--pairs", "1", "--out", str(kalah), "--resume")
    assert code == 2 and "holds games of another tournament" in err and "not an Oware game record" in err, err
    code, _, err = run(capsys, "tournament", "--game", "kalah", "--a", "random", "--b", "random", "--pairs", "1",
                       "--houses", "3", "--seeds", "2", "--out", str(out), "--resume")
    assert code == 2 and "holds games of another tournament" in err and "an Oware game record" in err, err


def test_resume_plays_the_missing_games_and_refuses_fewer_pairs(capsys, tmp_path):
    """--resume gives exactly the records of an uninterrupted match; fewer --pairs than the file holds games
    of is refused in one line (its games would be left out of the result)."""
    full, part = tmp_path / "full.jsonl", tmp_path / "part.jsonl"
    code, out_full, err = run(capsys, *MATCH_ARGS, "--pairs", "3", "--out", str(full), "--json")
    assert code == 0, err
    code, _, err = run(capsys, *MATCH_ARGS, "--pairs", "1", "--out", str(part))
    assert code == 0, err
    code, out_part, err = run(capsys, *MATCH_ARGS, "--pairs", "3", "--out", str(part), "--resume", "--json")
    assert code == 0, err
    assert sorted(_lines(part)) == sorted(_lines(full))
    a, b = json.loads(out_full), json.loads(out_part)
    assert {k: a[k] for k in ("games", "a_wins", "draws", "b_wins", "statistics")} == \
        {k: b[k] for k in ("games", "a_wins", "draws", "b_wins", "statistics")}
    code, _, err = run(capsys, *MATCH_ARGS, "--pairs", "2", "--out", str(part), "--resume")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "holds games of 3 pairs, more than the 2 asked for" in err and "ask for 3 pairs or more" in err
    assert sorted(_lines(part)) == sorted(_lines(full))


class _StopAfter:
    """A progress callback that presses Ctrl-C once ``k`` games are done."""

    def __init__(self, k):
        self.k = k

    def __call__(self, done, total):
        if done >= self.k:
            raise KeyboardInterrupt


def test_interrupted_match_returns_its_games_and_resumes(tmp_path):
    full = run_oware_match("alphabeta:depth=2", "random", 2, houses=4, seeds=3, openings=2, seed=5,
                           out=tmp_path / "full.jsonl")
    path = tmp_path / "g.jsonl"
    part = run_oware_match("alphabeta:depth=2", "random", 2, houses=4, seeds=3, openings=2, seed=5, out=path,
                           progress=_StopAfter(3))
    assert part["interrupted"] is True and part["games"] == 3 == len(_lines(path))
    assert part["a_wins"] + part["draws"] + part["b_wins"] == 3
    resumed = run_oware_match("alphabeta:depth=2", "random", 2, houses=4, seeds=3, openings=2, seed=5, out=path,
                              resume=True)
    assert resumed["interrupted"] is False and sorted(_lines(path)) == sorted(_lines(tmp_path / "full.jsonl"))
    assert resumed["statistics"] == full["statistics"]


@pytest.mark.parametrize("as_json", [True, False])
def test_ctrl_c_prints_the_finished_games_and_exits_130(capsys, monkeypatch, tmp_path, as_json):
    """Ctrl-C during the third game: the summary of the two finished ones (JSON or table), exit 130."""
    from jitsearch.arena import oware_arena

    real, calls = oware_arena.play_one, []

    def play_one(*args, **kw):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(oware_arena, "play_one", play_one)
    out = tmp_path / "g.jsonl"
    code, stdout, err = run(capsys, *MATCH_ARGS, "--pairs", "2", "--out", str(out), *(["--json"] if as_json else []))
    assert code == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("interrupted: 2 games were played")
    assert "--resume" in err and len(_lines(out)) == 2
    if as_json:
        obj = json.loads(stdout)
        assert obj["interrupted"] is True and obj["games"] == 2 and obj["game"] == "oware"
    else:
        assert "2/4" in stdout


def test_records_are_replayed_and_edits_caught(tmp_path):
    """Every record is checked against its match and replayed from the start: a changed move, final
    position, result or score is refused (with a recomputed check value too), naming file:line."""
    from jitsearch.arena.oware_arena import GameRecords, OwareMatch
    from jitsearch.arena.records import BadRecord, seal

    path = tmp_path / "g.jsonl"
    run_oware_match("alphabeta:depth=2", "random", 1, houses=4, seeds=3, openings=2, seed=5, out=path)
    recs = [json.loads(x) for x in _lines(path)]
    check = GameRecords("alphabeta:depth=2", "random", OwareMatch(4, 3, 2, 5))
    assert [check(dict(r)) for r in recs] == [(0, 0), (0, 1)]
    rec = recs[0]
    other = next(h for h in range(8) if h != rec["moves"][0])
    for edit, words in (({"moves": [other] + rec["moves"][1:]}, "move"),
                        ({"final": "0,0,0,0/0,0,0,0/12,12 end"}, "final"),
                        ({"a_result": "loss", "a_score": 0.0}, "a_result"),
                        ({"a_score": 0.5}, "a_score"),
                        ({"opening_moves": []}, "opening"),
                        ({"termination": "crash", "detail": "x"}, "termination"),
                        ({"capped": True}, "capped")):
        with pytest.raises(BadRecord, match=words):
            check(seal({**{k: v for k, v in rec.items() if k != "check"}, **edit}))
    lines = _lines(path)
    path.write_text(lines[0].replace('"a_score": 1.0', '"a_score": 0.0') + "\n" + lines[1] + "\n")
    r = run_oware_match  # the match refuses the file with its file:line
    with pytest.raises(ValueError, match=r"g.jsonl:1: .*check value"):
        r("alphabeta:depth=2", "random", 1, houses=4, seeds=3, openings=2, seed=5, out=path, resume=True)

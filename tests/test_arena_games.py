"""Every game in the arena and on the command line (Oware and Connect Four; Kalah keeps its own
record format, tests/test_arena_tournament.py): agents, paired matches, records that replay,
the tournament command with every arena option, one-line errors."""

from __future__ import annotations

import json

import pytest

from jitsearch import games
from jitsearch.arena.agents import parse_agent, play_game
from jitsearch.arena.game_match import GameMatch, GameRecords
from jitsearch.arena.matches import run_tournament
from jitsearch.cli.app import main
from jitsearch.games.oware import OwareState

#: A small variant of each game and the agent that beats random there.
GAMES = {"oware": ({"houses": 4, "seeds": 3}, "alphabeta:depth=2"),
         "connect4": ({"width": 5, "height": 4}, "mcts:iterations=200")}
SMALL = {"oware": ("-V", "houses=4", "-V", "seeds=3"), "connect4": ("-V", "width=5", "-V", "height=4")}


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(code, err):
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def oware_match(pairs, out=None, **kw):
    """The Oware(4,3) match of alphabeta:depth=2 against random with 2 opening plies and seed 5."""
    return run_tournament("alphabeta:depth=2", "random", GameMatch.of("oware", {"houses": 4, "seeds": 3},
                                                                      openings=2, seed=5), pairs, out=out, **kw)


# -- agents -----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("spec", ["alphabeta:depth=3", "alphabeta:time=0.05", "mc:playouts=30", "fsss:depth=3"])
def test_oware_agents_take_the_winning_capture(spec):
    # OpenSpiel's test position: house 2 captures 11 of 18 seeds and wins at once; the others do not
    s = OwareState.from_board([0, 0, 8, 0, 0, 1, 1, 1, 1, 1, 2, 3, 0, 0], 0)
    assert parse_agent(spec, game="oware", seed=1)(s) == 2


@pytest.mark.parametrize("spec", ["mc:playouts=50", "mcts:iterations=300"])
def test_connect4_agents_win_at_once_and_mcts_blocks(spec):
    game = games.get("connect4")
    s = game.initial()
    for col in (0, 1, 0, 1, 0, 1):  # x has three in column 0, o three in column 1; x to move wins in column 0
        s = s.play(col)
    assert parse_agent(spec, game="connect4", seed=3)(s) == 0
    if spec.startswith("mcts"):  # (flat Monte Carlo's random replies rarely punish a missed block)
        s = game.initial()
        for col in (0, 1, 0, 2, 0):  # x has three in column 0; o to move must block there
            s = s.play(col)
        assert parse_agent(spec, game="connect4", seed=3)(s) == 0


@pytest.mark.parametrize("name", list(GAMES))
def test_games_replay_exactly_and_agents_copy_their_spec(name):
    variant, _ = GAMES[name]
    game = games.get(name)
    a, b = parse_agent("mc:playouts=10", game=name, seed=3), parse_agent("random", game=name, seed=5)
    g1 = play_game(game.initial(**variant), [a, b])
    g2 = play_game(game.initial(**variant), [a.with_seed(3), b.with_seed(5)])
    assert g1 == g2
    s = game.initial(**variant)
    for m in g1["moves"]:
        s = s.play(m)
    assert s.to_text() == g1["final"] and s.is_over and s.margin == g1["margin"]


def test_choose_with_stop_set_raises_and_last_reports():
    import threading

    agent = parse_agent("mcts:iterations=100", game="connect4", seed=1)
    s = games.get("connect4").initial(5, 4)
    assert agent.choose(s) in s.legal_moves() and agent.last["iterations"] == 100
    stop = threading.Event()
    stop.set()
    with pytest.raises(KeyboardInterrupt):
        agent.choose(s, stop)


@pytest.mark.parametrize("spec, words", [
    ("bogus", "unknown Oware agent"), ("mc:depth=3", "unknown option"), ("alphabeta:depth=0", "depth"),
    ("alphabeta:depth=2,depth=3", "given twice"), ("mc:playouts=x", "bad value"), ("alphabeta:time=-1", "time"),
    ("mcts:backend=gpu", "backend must be one of"), ("mcts:iterations=10,time=1", "not both"),
    ("mcts:formula=x", "formula"), ("mcts:blocks=2", "parallel=tree"),
])
def test_bad_oware_specs(spec, words):
    with pytest.raises(ValueError, match=words) as exc:
        parse_agent(spec, game="oware")
    assert "\n" not in str(exc.value)


def test_mcts_backends_agree():
    from jitsearch.kernels.backend import cuda_status

    s = OwareState.initial(4, 3).play(1)
    cpu = parse_agent("mcts:iterations=50,backend=cpu", game="oware", seed=9)
    auto = parse_agent("mcts:iterations=50,backend=auto", game="oware", seed=9)
    assert auto.backend == ("cuda" if cuda_status()[0] else "cpu")
    assert cpu(s) == auto(s) and cpu.last == auto.last
    if not cuda_status()[0]:
        with pytest.raises(ValueError, match="CUDA backend requested"):
            parse_agent("mcts:backend=cuda", game="oware")


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
    assert code == 2 and "unknown game 'chess'" in err and "connect4" in err


def test_connect4_has_the_generic_engine_and_no_mcts_evaluations():
    assert parse_agent("alphabeta:depth=2", game="connect4").kind == "alphabeta"  # over the protocol
    with pytest.raises(ValueError, match="unknown Connect4 agent 'fsss'"):
        parse_agent("fsss:depth=2", game="connect4")
    with pytest.raises(ValueError, match="no MCTS evaluation"):
        parse_agent("mcts:eval=capture", game="connect4")


def test_openspiel_agents_without_openspiel_are_one_line(monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "pyspiel", None)  # import pyspiel now fails
    with pytest.raises(ValueError, match=r"pip install 'jitsearch\[openspiel\]'"):
        parse_agent("openspiel:mcts,simulations=10", game="oware")
    code, out, err = run(capsys, "tournament", "--game", "oware", "--a", "openspiel:random", "--b", "random",
                         "--pairs", "1")
    one_line(code, err)
    assert "jitsearch[openspiel]" in err


# -- matches and records ----------------------------------------------------------------------

def test_search_beats_random_and_records_replay(tmp_path):
    out = tmp_path / "games.jsonl"
    match = GameMatch.of("oware", openings=2, seed=4)
    r = run_tournament("alphabeta:depth=3", "random", match, 3, out=out)
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
        assert s.to_text() == rec["final"] and s.is_over and s.margin == rec["margin"]
    again = run_tournament("alphabeta:depth=3", "random", match, 3)
    assert again["statistics"]["pentanomial"] == r["statistics"]["pentanomial"]


class _StopAfter:
    """A progress callback that presses Ctrl-C once ``k`` games are done."""

    def __init__(self, k):
        self.k = k

    def __call__(self, done, total):
        if done >= self.k:
            raise KeyboardInterrupt


def test_interrupted_match_returns_its_games_and_resumes(tmp_path):
    full = oware_match(2, tmp_path / "full.jsonl")
    path = tmp_path / "g.jsonl"
    part = oware_match(2, path, progress=_StopAfter(3))
    assert part["interrupted"] is True and part["games"] == 3 == len(_lines(path))
    assert part["a_wins"] + part["draws"] + part["b_wins"] == 3
    resumed = oware_match(2, path, resume=True)
    assert resumed["interrupted"] is False and sorted(_lines(path)) == sorted(_lines(tmp_path / "full.jsonl"))
    assert resumed["statistics"] == full["statistics"]


def test_records_are_replayed_and_edits_caught(tmp_path):
    """Every record is checked against its match and replayed from the start: a changed move, final
    position, result or score is refused (with a recomputed check value too), naming file:line."""
    from jitsearch.arena.records import BadRecord, seal

    path = tmp_path / "g.jsonl"
    oware_match(1, path)
    recs = [json.loads(x) for x in _lines(path)]
    check = GameRecords("alphabeta:depth=2", "random", GameMatch.of("oware", {"houses": 4, "seeds": 3}, openings=2,
                                                                    seed=5))
    assert [check(dict(r)) for r in recs] == [(0, 0), (0, 1)]
    rec = recs[0]
    other = next(h for h in range(8) if h != rec["moves"][0])
    for edit, words in (({"moves": [other] + rec["moves"][1:]}, "move"),
                        ({"final": "0,0,0,0/0,0,0,0/12,12 end"}, "final"),
                        ({"a_result": "loss", "a_score": 0.0}, "a_result"),
                        ({"a_score": 0.5}, "a_score"),
                        ({"opening_moves": []}, "opening"),
                        ({"termination": "crash", "detail": "x"}, "termination"),
                        ({"capped": True}, "capped"),
                        ({"margin": rec["margin"] + 1}, "margin")):
        with pytest.raises(BadRecord, match=words):
            check(seal({**{k: v for k, v in rec.items() if k != "check"}, **edit}))
    lines = _lines(path)
    path.write_text(lines[0].replace('"a_score": 1.0', '"a_score": 0.0') + "\n" + lines[1] + "\n")
    with pytest.raises(ValueError, match=r"g.jsonl:1: .*check value"):
        oware_match(1, path, resume=True)


def test_max_plies_caps_a_game_and_the_record_says_so(tmp_path):
    path = tmp_path / "g.jsonl"
    match = GameMatch.of("oware", {"houses": 4, "seeds": 3}, seed=1, max_plies=6)
    r = run_tournament("random", "random", match, 2, out=path)
    recs = [json.loads(x) for x in _lines(path)]
    assert r["capped"] == 4 and all(x["capped"] and x["plies"] == 6 for x in recs)
    check = GameRecords("random", "random", match)
    assert sorted(check(x) for x in recs) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    with pytest.raises(ValueError, match="max_plies"):
        GameMatch.of("oware", openings=4, max_plies=3)


@pytest.mark.parametrize("name", list(GAMES))
def test_an_opening_suite_is_played_with_both_seats(name, tmp_path):
    from jitsearch.arena.openings import random_game_openings

    variant, strong = GAMES[name]
    suite = random_game_openings(2, name, variant, seed=3)
    assert len(set(suite)) == 2 and random_game_openings(2, name, variant, seed=3) == suite
    match = GameMatch.of(name, variant, suite=suite, seed=2)
    path = tmp_path / "s.jsonl"
    r = run_tournament(strong, "random", match, 2, out=path)
    recs = [json.loads(x) for x in _lines(path)]
    assert r["games"] == 4 and {x["start"] for x in recs} == set(suite)
    assert {(x["start"], x["seat"]) for x in recs} == {(t, s) for t in suite for s in (0, 1)}
    assert sorted(GameRecords(strong, "random", match)(x) for x in recs) == [(0, 0), (0, 1), (1, 0), (1, 1)]


# -- the tournament command: every option for every game ---------------------------------------

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
    for args, words in ((("--a", "mc:bogus=1"), "unknown option"), (("--alpha", "0.1"), "applies with --sprt only"),
                        (("--openings", "book.txt"), "book.txt does not exist"), (("--seeds", "0"), "seeds"),
                        (("--empty-capture",), "does not apply to oware"), (("--lockstep",), "Kalah"),
                        (("--branching", "3"), "random-tree only"), (("-V", "width=3"), "no variant option"),
                        (("--openings", "balanced"), "no balanced suite")):
        code, out, err = run(capsys, "tournament", "--game", "oware", "--pairs", "1", *args)
        one_line(code, err)
        assert words in err, err
    code, out, err = run(capsys, "tournament", "--game", "chess")
    one_line(code, err)
    assert "unknown game 'chess'" in err
    code, out, err = run(capsys, "tournament", "--game", "connect4", "--random-openings", "2", "--balanced", "1")
    one_line(code, err)
    assert "needs a search value of connect4 positions" in err


def test_balanced_random_openings_of_oware():
    """--balanced keeps the random openings whose depth-limited alpha-beta value (Game.balance) is near 0."""
    from jitsearch.arena.openings import random_game_openings

    game = games.get("oware")
    suite = random_game_openings(3, "oware", {"houses": 4, "seeds": 3}, seed=1, balanced=0.5, depth=2)
    assert len(suite) == 3
    assert all(abs(game.balance(game.from_text(t), 2)) <= 0.5 for t in suite)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["oware", "connect4"])
def test_sprt_workers_and_plot(name, capsys, tmp_path):
    """--sprt stops at its bounds, --workers 2 plays on a local Dask cluster the same games as one process,
    --plot writes the Elo and LLR chart, --max-plies and --random-openings apply to every game."""
    pytest.importorskip("matplotlib")
    small, (variant, strong) = SMALL[name], GAMES[name]
    base = ("tournament", "--game", name, *small, "--a", strong, "--b", "random", "--random-openings", "2",
            "--max-plies", "60", "--json")
    code, out, err = run(capsys, *base, "--pairs", "3", "--out", tmp_path / "one.jsonl")
    assert code == 0, err
    code, out2, err = run(capsys, *base, "--pairs", "3", "--workers", "2", "--out", tmp_path / "two.jsonl")
    assert code == 0, err
    assert sorted(_lines(tmp_path / "one.jsonl")) == sorted(_lines(tmp_path / "two.jsonl"))
    code, out, err = run(capsys, *base, "--pairs", "50", "--sprt", "0,400", "--sprt-model", "logistic", "--plot",
                         tmp_path / "p.png")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["sprt"]["decision"] in ("H1 accepted", "H0 accepted") and obj["games"] < 100
    assert (tmp_path / "p.png").stat().st_size
    assert obj["max_plies"] == 60 and obj["suite"] == 2


@pytest.mark.parametrize("name", list(GAMES))
def test_round_robin_gauntlet_ratings_and_resume(name, capsys, tmp_path):
    variant, strong = GAMES[name]
    engines = f"{strong} random mc:playouts=4"
    base = ("tournament", "--game", name, *SMALL[name], "--engines", engines, "--pairs", "1", "--json")
    code, out, err = run(capsys, *base, "--format", "gauntlet", "--ratings")
    assert code == 0, err
    obj = json.loads(out)
    assert len(obj["matches"]) == 2 and obj["format"] == "gauntlet" and obj["game"] == name
    assert "ratings" in obj
    code, out, err = run(capsys, *base, "--out", tmp_path / "rr")
    assert code == 0, err
    obj = json.loads(out)
    assert len(obj["matches"]) == 3 and len(list((tmp_path / "rr").glob("*.jsonl"))) == 3
    code, out, err = run(capsys, *base, "--out", tmp_path / "rr")
    one_line(code, err)
    assert "--resume" in err
    code, again, err = run(capsys, *base, "--out", tmp_path / "rr", "--resume")
    assert code == 0, err
    assert json.loads(again)["standings"] == obj["standings"]
    code, out, err = run(capsys, "rate", tmp_path / "rr", "--json")  # rate reads every game's records
    assert code == 0, err
    assert {e["name"] for e in json.loads(out)["players"]} == set(engines.split())


# -- a match's record file: another match's refused, resume, Ctrl-C ----------------------------

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
        one_line(code, err)
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
    one_line(code, err)
    assert "holds games of 3 pairs, more than the 2 asked for" in err and "ask for 3 pairs or more" in err
    assert sorted(_lines(part)) == sorted(_lines(full))


@pytest.mark.parametrize("as_json", [True, False])
def test_ctrl_c_prints_the_finished_games_and_exits_130(capsys, monkeypatch, tmp_path, as_json):
    """Ctrl-C during the third game: the summary of the two finished ones (JSON or table), exit 130."""
    from jitsearch.arena import game_match

    real, calls = game_match.play_one, []

    def play_one(*args, **kw):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(game_match, "play_one", play_one)
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


def test_connect4_tournament_from_the_docs(capsys):
    """The example of docs/arena.md: Connect Four 7x6, MCTS against flat Monte Carlo."""
    code, out, err = run(capsys, "tournament", "--game", "connect4", "--a", "mcts:iterations=200", "--b",
                         "mc:playouts=20", "--pairs", "2", "--openings", "2", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["game"] == "connect4" and obj["games"] == 4 and obj["width"] == 7 and obj["height"] == 6


def test_flat_monte_carlo_on_threads_plays_the_same_playouts():
    """``mc:threads=N`` spreads the same playouts over threads: the move and value of ``threads=1``; a bad count
    is one line."""
    from jitsearch.games import get

    for name in ("oware", "connect4"):
        state = get(name).initial()
        one = parse_agent("mc:playouts=48", game=name, seed=5)
        two = parse_agent("mc:playouts=48,threads=2", game=name, seed=5)
        assert one(state) == two(state) and one.last == two.last
    with pytest.raises(ValueError, match="threads"):
        parse_agent("mc:threads=0", game="oware")

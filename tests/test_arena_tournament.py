"""Kalah matches in the arena: pentanomial statistics, SPRT stopping, the
Dask executor giving the same games as this process, gauntlets and round
robins with their crosstables, opening suites from files and generated."""

from __future__ import annotations

import json

import pytest

from jitsearch.arena.matches import engine_pairs, plot_trajectory, run_engines, run_match
from conftest import kalah_match as KalahMatch
from jitsearch.arena.game_match import play_one
from jitsearch.arena.openings import random_game_openings, read_game_openings
from jitsearch.arena.stats import SPRT
from jitsearch.games.kalah import KalahState

STRONG, WEAK = "alphabeta:depth=4", "random"

K43 = dict(houses=4, seeds=3, empty_capture=False)  # Kalah(4,3), standard rules


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_match_statistics_count_pairs_and_games(tmp_path):
    match = KalahMatch(3, 3, False, 300, 1, seed=2)
    r = run_match("alphabeta:depth=2", "alphabeta:depth=1", match, 5, out=tmp_path / "g.jsonl")
    st = r["statistics"]
    assert r["games"] == 10 and st["pairs"] == 5 and sum(st["pentanomial"]) == 5
    assert [st["wins"], st["draws"], st["losses"]] == [r["a_wins"], r["draws"], r["b_wins"]]
    # the pentanomial buckets agree with the records, pair by pair
    recs = {(x["pair"], x["seat"]): x for x in _lines(tmp_path / "g.jsonl")}
    score = {"win": 1.0, "draw": 0.5, "loss": 0.0}
    sums = [score[recs[(p, 0)]["a_result"]] + score[recs[(p, 1)]["a_result"]] for p in range(5)]
    assert st["pentanomial"] == [sums.count(v) for v in (0.0, 0.5, 1.0, 1.5, 2.0)]
    assert len(r["trajectory"]) == 5 and r["trajectory"][-1]["games"] == 10
    png = tmp_path / "t.png"
    plot_trajectory(r, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sprt_stops_the_match_and_resume_respects_the_decision(tmp_path):
    match = KalahMatch(3, 3, False, 300, 2, seed=4)
    out = tmp_path / "s.jsonl"
    sprt = SPRT(0, 200, alpha=0.05, beta=0.05, model="logistic")
    r = run_match(STRONG, WEAK, match, 200, out=out, sprt=sprt)
    assert r["sprt"]["state"] == "H1 accepted" and r["sprt"]["llr"] >= r["sprt"]["bounds"][1]
    assert r["games"] < 400 and len(_lines(out)) == r["games"]
    again = run_match(STRONG, WEAK, match, 200, out=out, resume=True, sprt=SPRT(0, 200, model="logistic"))
    assert again["games"] == r["games"] and len(_lines(out)) == r["games"]  # decided: nothing more played


@pytest.mark.slow
def test_dask_cluster_plays_the_same_games_as_this_process(tmp_path):
    match = KalahMatch(3, 3, False, 300, 2, seed=7)
    here = run_match("alphabeta:depth=2", WEAK, match, 4, out=tmp_path / "a.jsonl")
    there = run_match("alphabeta:depth=2", WEAK, match, 4, out=tmp_path / "b.jsonl", workers=2)
    key = lambda x: (x["pair"], x["seat"])  # noqa: E731
    a = sorted(_lines(tmp_path / "a.jsonl"), key=key)
    b = sorted(_lines(tmp_path / "b.jsonl"), key=key)
    assert a == b and here["statistics"] == there["statistics"]


def test_gauntlet_and_round_robin_crosstables(tmp_path):
    engines = ["alphabeta:depth=3", "alphabeta:depth=1", WEAK]
    assert engine_pairs(engines, "gauntlet") == [(0, 1), (0, 2)]
    assert engine_pairs(engines, "round-robin") == [(0, 1), (0, 2), (1, 2)]
    match = KalahMatch(3, 2, False, 300, 1, seed=3)
    r = run_engines(engines, "round-robin", match, 2, out_dir=tmp_path / "rr")
    assert len(r["matches"]) == 3 and not r["interrupted"]
    t = r["crosstable"]
    for i in range(3):
        assert t[i][i] is None
        for j in range(3):
            if i != j:
                assert t[i][j]["wins"] == t[j][i]["losses"] and t[i][j]["draws"] == t[j][i]["draws"]
    assert sum(e["points"] for e in r["standings"]) == 3 * 4  # every game gives out one point
    assert sorted(p.name for p in (tmp_path / "rr").iterdir()) == ["match_0_vs_1.jsonl", "match_0_vs_2.jsonl",
                                                                     "match_1_vs_2.jsonl"]
    again = run_engines(engines, "round-robin", match, 3, out_dir=tmp_path / "rr", resume=True)
    assert all(m["games"] == 6 for m in again["matches"])
    for bad, words in [([WEAK], "at least two"), ([WEAK, WEAK], "twice")]:
        with pytest.raises(ValueError, match=words):
            engine_pairs(bad, "gauntlet")
    with pytest.raises(ValueError, match="format"):
        engine_pairs(engines, "swiss")


def test_opening_suite_from_a_file(tmp_path):
    s = KalahState.initial(3, 3)
    positions = [s.play(1).to_text(), s.play(3).to_text()]
    f = tmp_path / "open.txt"
    f.write_text("# two openings\n" + positions[0] + "\n\n" + positions[1] + "  # second\n")
    suite = read_game_openings(f, "kalah", dict(houses=3, seeds=3, empty_capture=False))
    assert suite == tuple(positions)
    match = KalahMatch(3, 3, False, 300, 0, seed=1, suite=suite)
    out = tmp_path / "g.jsonl"
    r = run_match("alphabeta:depth=2", WEAK, match, 4, out=out)
    assert r["games"] == 8
    for rec in _lines(out):
        assert rec["start"] == positions[rec["pair"] % 2]
        assert rec == {**play_one("alphabeta:depth=2", WEAK, match, rec["pair"], rec["seat"]),
                       **{k: rec[k] for k in ("config", "a", "b", "match", "check")}}
    run_match("alphabeta:depth=2", WEAK, match, 5, out=out, resume=True)  # the file's records check out
    other = KalahMatch(3, 3, False, 300, 0, seed=1, suite=tuple(reversed(suite)))
    with pytest.raises(ValueError, match="settings differ"):
        run_match("alphabeta:depth=2", WEAK, other, 5, out=out, resume=True)


@pytest.mark.parametrize("text, words", [
    ("1,2/0/3,3,3/0 p0", "houses"),
    ("3,3,3/0/3,3,3/1 p0", "seeds in all"),
    ("not a position", ""),
    ("0,0,0/9/0,0,0/9 p0", ""),
])
def test_bad_opening_files_name_the_line(tmp_path, text, words):
    f = tmp_path / "o.txt"
    f.write_text("# header\n" + text + "\n")
    with pytest.raises(ValueError, match=rf"o\.txt:2: .*{words}"):
        read_game_openings(f, "kalah", dict(houses=3, seeds=3, empty_capture=False))
    f.write_text("# nothing\n")
    with pytest.raises(ValueError, match="no position"):
        read_game_openings(f, "kalah", dict(houses=3, seeds=3, empty_capture=False))


def test_random_balanced_openings_are_balanced_and_reproducible():
    from jitsearch.games.kalah.alphabeta import search

    a = random_game_openings(6, "kalah", K43, 5, balanced=1, depth=4)
    assert a == random_game_openings(6, "kalah", K43, 5, balanced=1, depth=4) and len(set(a)) == 6
    for text in a:
        assert abs(search(KalahState.from_text(text), 4)["value"]) <= 1
    assert random_game_openings(6, "kalah", K43, 6) != random_game_openings(6, "kalah", K43, 5)


# -- the command line ------------------------------------------------------------------------

def cli(capsys, *args):
    from jitsearch.cli.app import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


KALAH33 = ("tournament", "--game", "kalah", "--houses", "3", "--seeds", "3")


def test_cli_sprt_json_and_plot(capsys, tmp_path):
    code, out, err = cli(capsys, *KALAH33, "--a", STRONG, "--b", WEAK, "--pairs", "100", "--sprt", "0,200",
                         "--sprt-model", "logistic", "--openings", "2", "--out", tmp_path / "g.jsonl", "--plot",
                         tmp_path / "p.png", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["sprt"]["state"] == "H1 accepted" and r["games"] < 200
    assert r["statistics"]["pentanomial"] is not None and len(r["trajectory"]) >= 1
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_round_robin_with_a_random_balanced_suite(capsys, tmp_path):
    code, out, err = cli(capsys, *KALAH33, "--engines", f"{STRONG} alphabeta:depth=1", "--engines", WEAK,
                         "--format", "round-robin", "--pairs", "2", "--random-openings", "2", "--balanced", "3",
                         "--out", tmp_path / "rr", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["format"] == "round-robin" and len(r["matches"]) == 3 and all(m["games"] == 4 for m in r["matches"])
    assert all(m["suite"] == 2 for m in r["matches"])
    code, out, err = cli(capsys, *KALAH33, "--engines", f"{STRONG} alphabeta:depth=1", "--engines", WEAK,
                         "--format", "round-robin", "--pairs", "3", "--random-openings", "2", "--balanced", "3",
                         "--out", tmp_path / "rr", "--resume", "--json")
    assert code == 0, err  # the directory of a round robin takes --resume
    assert all(m["games"] == 6 for m in json.loads(out)["matches"])
    code, out, err = cli(capsys, *KALAH33, "--engines", f"{STRONG} {WEAK}", "--format", "gauntlet", "--pairs", "1")
    assert code == 0 and "crosstable" in out and "standings" not in err


def test_cli_openings_file(capsys, tmp_path):
    s = KalahState.initial(3, 3)
    f = tmp_path / "o.txt"
    f.write_text(s.play(2).to_text() + "\n")
    code, out, err = cli(capsys, *KALAH33, "--a", "alphabeta:depth=2", "--b", WEAK, "--pairs", "2", "--openings", f,
                         "--json")
    assert code == 0, err
    assert json.loads(out)["suite"] == 1


@pytest.mark.parametrize("args, words", [
    (("--a", STRONG, "--b", WEAK, "--sprt", "0"), "--sprt takes ELO0,ELO1"),
    (("--a", STRONG, "--b", WEAK, "--sprt", "10,0"), "elo0"),
    (("--a", STRONG, "--b", WEAK, "--alpha", "0.1"), "--alpha applies with --sprt only"),
    (("--engines", f"{STRONG} {WEAK}", "--format", "swiss"), "--format must be gauntlet or round-robin"),
    (("--engines", WEAK), "at least two"),
    (("--engines", f"{STRONG} {WEAK}", "--a", STRONG), "--a and --engines exclude each other"),
    (("--engines", f"{STRONG} {WEAK}", "--sprt", "0,5"), "--sprt applies to one match"),
    (("--a", STRONG, "--b", WEAK, "--format", "gauntlet"), "--format applies with --engines only"),
    (("--a", STRONG, "--b", WEAK, "--balanced", "1"), "--balanced applies with --random-openings only"),
    (("--a", STRONG, "--b", WEAK, "--openings", "missing.txt"), "does not exist"),
    (("--a", STRONG, "--b", WEAK, "--random-openings", "0"), "--random-openings must be >= 1"),
    (("--a", STRONG, "--b", WEAK, "--scheduler", "tcp://127.0.0.1:9", "--pairs", "4"), "cannot reach the Dask"),
])
def test_cli_bad_tournament_options_exit_2(capsys, tmp_path, args, words):
    code, out, err = cli(capsys, *KALAH33, *args)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: ") and words in lines[-1], err


def test_cli_kalah_options_are_refused_for_random_trees(capsys):
    code, out, err = cli(capsys, "tournament", "--game", "random-tree", "--sprt", "0,5")
    assert code == 2 and "--sprt applies to a registered game" in err and "not to --game random-tree" in err

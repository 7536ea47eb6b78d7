"""Rating lists from record files: jitsearch.arena.rating_list and ``jitsearch rate``
(and ``tournament --engines --plot``, which draws the same chart)."""

from __future__ import annotations

import json

import pytest

from jitsearch.arena.rating_list import rating_list, ratings_markdown, read_results, record_paths
from jitsearch.arena.ratings import fit_ratings
from jitsearch.arena.records import seal
from jitsearch.cli.app import main

_MARGIN = {"win": 3, "draw": 0, "loss": -3}


def kalah_rec(a, b, pair, seat, result, config="c1", match=None, sealed=True):
    """A Kalah game record as a tournament writes it (the fields rate reads; A is player ``seat``)."""
    margin = _MARGIN[result] if seat == 0 else -_MARGIN[result]
    rec = {"pair": pair, "seat": seat, "a_player": seat, "opening": [], "moves": [], "plies": 40,
           "margin": margin, "final_board": [], "capped": False, "a_result": result, "config": config, "a": a,
           "b": b, "match": match or {"houses": 6, "seeds": 4}}
    return seal(rec) if sealed else rec


def match_records(a, b, wins, draws, losses, config):
    """W/D/L of ``a`` against ``b`` as game records, seats alternating."""
    results = ["win"] * wins + ["draw"] * draws + ["loss"] * losses
    return [kalah_rec(a, b, k // 2, k % 2, r, config) for k, r in enumerate(results)]


def write(path, records, tail=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


#: A vs B 5-2-3, B vs C 4-1-1, C vs A 2-2-4 (written from C's side): a known answer from fit_ratings.
EXPECTED = [("A", "B", 5, 2, 3), ("B", "C", 4, 1, 1), ("C", "A", 2, 2, 4)]


@pytest.fixture
def records_dir(tmp_path):
    d = tmp_path / "rr"
    for k, (a, b, w, dr, l) in enumerate(EXPECTED):
        write(d / ("sub" if k == 2 else "") / f"m{k}.jsonl", match_records(a, b, w, dr, l, f"cfg{k}"))
    (d / "notes.txt").write_text("not a record file: skipped, only *.jsonl are read\n")
    return d


def run(capsys, *args):
    code = main(["rate", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


# -- reading records -> counts --------------------------------------------------------------

def test_read_results_counts(records_dir):
    data = read_results([records_dir])
    assert data.kind == "kalah" and data.unit == "game" and data.games == 10 + 6 + 8
    assert len(data.files) == 3 and data.engines == ["A", "B", "C"]
    assert sorted(data.results) == sorted(EXPECTED)
    assert data.settings == [{"houses": 6, "seeds": 4}] and data.notes == []


def test_read_results_merges_both_orientations_and_files_once(tmp_path):
    f1 = write(tmp_path / "x.jsonl", match_records("A", "B", 2, 1, 0, "k1"))
    f2 = write(tmp_path / "y" / "z.jsonl", match_records("B", "A", 1, 0, 3, "k2"))  # B's side
    data = read_results([f1, tmp_path, f2])  # each file read once, though named twice
    assert data.files == [str(f1), str(f2)]
    assert data.results == [("A", "B", 2 + 3, 1, 1)]


def test_read_results_random_tree_pairs(tmp_path):
    recs = [seal({"pair": p, "tree_seed": 1, "a": "fe:depth=3", "b": "alphabeta:depth=3", "outcome_a_max": oa,
                  "outcome_b_max": ob, "winner": w, "nodes_a": 1, "nodes_b": 1, "config": "t"})
            for p, (oa, ob, w) in enumerate([(2.0, 1.0, "a"), (1.0, 1.0, "tie"), (0.5, 3.0, "b"), (4.0, 1.0, "a")])]
    data = read_results(write(tmp_path / "t.jsonl", recs))
    assert data.kind == "random-tree" and data.unit == "pair"
    assert data.results == [("fe:depth=3", "alphabeta:depth=3", 2, 1, 1)]


def test_read_results_torn_last_line_is_a_note(tmp_path):
    f = write(tmp_path / "g.jsonl", match_records("A", "B", 1, 0, 1, "k"), tail='{"pair": 5, "se')
    data = read_results(f)
    assert data.games == 2 and any("incomplete last line" in n for n in data.notes)


@pytest.mark.parametrize("case, message", [
    ("edited", "g.jsonl:2: its check value does not match"),
    ("duplicate", "the same game is already counted at"),
    ("not_json", "g.jsonl:1: not a JSON record"),
    ("not_object", "g.jsonl:1: a record must be a JSON object"),
    ("foreign", "g.jsonl:1: not a game record of a tournament"),
    ("missing_key", "g.jsonl:1: missing key 'config'"),
    ("self_play", "the records hold only games of an engine against itself (1 of A): nothing to rate"),
    ("wrong_result", "does not agree with margin"),
    ("mixed", "a random-tree record among kalah records"),
    ("empty", "no game records in"),
])
def test_read_results_refuses_bad_input(tmp_path, case, message):
    f = tmp_path / "g.jsonl"
    good = match_records("A", "B", 1, 1, 1, "k")
    if case == "edited":
        bad = dict(good[1], plies=41)
        write(f, [good[0], bad])
    elif case == "duplicate":
        write(f, good)
        write(tmp_path / "copy.jsonl", good[:1])
    elif case == "not_json":
        f.write_text('{"a": \n')
    elif case == "not_object":
        f.write_text("[1, 2]\n")
    elif case == "foreign":
        write(f, [{"name": "x", "value": 1}])
    elif case == "missing_key":
        rec = dict(good[0])
        del rec["config"], rec["check"]
        write(f, [rec])
    elif case == "self_play":
        write(f, [kalah_rec("A", "A", 0, 0, "win")])
    elif case == "wrong_result":
        write(f, [kalah_rec("A", "B", 0, 0, "win", sealed=False) | {"margin": -2}])
    elif case == "mixed":
        tree = seal({"pair": 0, "tree_seed": 1, "a": "x", "b": "y", "outcome_a_max": 1.0, "outcome_b_max": 0.0,
                     "winner": "a", "nodes_a": 1, "nodes_b": 1, "config": "t"})
        write(f, [good[0], tree])
    elif case == "empty":
        f.write_text("\n")
    with pytest.raises(ValueError, match=None) as info:
        read_results(tmp_path if case == "duplicate" else f)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_record_paths_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        record_paths([tmp_path / "nope.jsonl"])
    with pytest.raises(ValueError, match="folder without record files"):
        record_paths([tmp_path])
    with pytest.raises(ValueError, match="at least one"):
        record_paths([])


# -- rating_list and the Markdown table -----------------------------------------------------

def test_rating_list_matches_fit_ratings_and_shifts(records_dir):
    data = read_results(records_dir)
    direct = fit_ratings(EXPECTED, anchor="C")
    fit = rating_list(data, anchor="C", anchor_elo=1500)
    assert [p["name"] for p in fit["players"]] == [p["name"] for p in direct["players"]]
    for p, q in zip(fit["players"], direct["players"]):
        assert p["rating"] == pytest.approx(q["rating"] + 1500, abs=1e-9)
        assert p["error"] == pytest.approx(q["error"])
    assert [p["los_next"] for p in fit["players"]] == [fit["los"][0][1], fit["los"][1][2], None]
    md = ratings_markdown(fit, title="T")
    assert md.startswith("T\n\n| # | engine | Elo |") and "| 1 | `" in md and "C at 1500" in md
    assert len([line for line in md.splitlines() if line.startswith("| ")]) == 4


# -- the CLI --------------------------------------------------------------------------------

def test_cli_json_is_fit_ratings(capsys, records_dir):
    code, out, err = run(capsys, records_dir, "--json", "--draw-model", "half")
    assert code == 0, err
    obj = json.loads(out)
    direct = fit_ratings(EXPECTED, draw_model="half")
    assert [p["name"] for p in obj["players"]] == [p["name"] for p in direct["players"]]
    for p, q in zip(obj["players"], direct["players"]):
        assert p["rating"] == pytest.approx(q["rating"]) and p["error"] == pytest.approx(q["error"])
        assert (p["games"], p["wins"], p["draws"], p["losses"]) == (q["games"], q["wins"], q["draws"], q["losses"])
    assert obj["records"]["games"] == 24 and obj["records"]["kind"] == "kalah" and len(obj["records"]["files"]) == 3
    assert sorted(map(tuple, obj["results"])) == sorted(EXPECTED)
    assert {"los", "covariance", "draw_model", "anchor", "anchor_elo", "confidence", "prior"} <= set(obj)


def test_cli_table(capsys, records_dir):
    code, out, err = run(capsys, records_dir, "--anchor", "B", "--anchor-elo", "100")
    assert code == 0, err
    fit = rating_list(EXPECTED, anchor="B", anchor_elo=100)
    assert "3 engines, 24 games from 3 files" in out
    for col in ("engine", "Elo", "±", "games", "score", "draws", "LOS next"):
        assert col in out
    lines = {p["name"]: next(line for line in out.splitlines() if f" {p['name']} " in line) for p in fit["players"]}
    for rank, p in enumerate(fit["players"], 1):
        row = lines[p["name"]]
        assert f"{p['rating']:.0f}" in row and f"{100 * p['score']:.1f}%" in row and row.split()[1] == str(rank)
    assert "B at 100" in out


@pytest.mark.parametrize("args, message", [
    (["missing.jsonl"], "missing.jsonl does not exist"),
    (["{dir}", "--anchor", "Z"], "--anchor 'Z' is not an engine"),
    (["{dir}", "--draw-model", "bogus"], "--draw-model must be davidson or half"),
    (["{dir}", "--confidence", "1.5"], "--confidence must lie strictly between 0 and 1"),
    (["{dir}", "--virtual-draws", "-1"], "--virtual-draws must be a number >= 0"),
    (["{tmp}/perfect.jsonl", "--virtual-draws", "0"], "give --virtual-draws above 0"),
    (["{dir}", "--anchor-elo", "nan"], "--anchor-elo must be a finite number"),
    (["{dir}", "--png", "{tmp}/chart.txt"], "give a file name ending in .png, .svg or .pdf"),
    (["{tmp}/bad.jsonl"], "bad.jsonl:2: not a JSON record"),
    (["{tmp}/allsame.jsonl"], "every game was a draw"),
    (["{tmp}/allsame.jsonl"], "use --draw-model half"),
    ([], "Missing argument"),
])
def test_cli_errors_one_line_exit_2(capsys, tmp_path, records_dir, args, message):
    """Every error is one line naming the command's options (--virtual-draws, not the API's virtual_draws)."""
    write(tmp_path / "bad.jsonl", match_records("A", "B", 1, 0, 0, "k"), tail="oops\n")
    write(tmp_path / "allsame.jsonl", match_records("A", "B", 0, 3, 0, "k"))
    write(tmp_path / "perfect.jsonl", match_records("A", "B", 3, 0, 0, "k"))
    args = [a.format(dir=records_dir, tmp=tmp_path) for a in args]
    code, out, err = run(capsys, *args)
    assert code == 2, (out, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("error:") and message in err
    assert "Traceback" not in err
    for api_name in ("virtual_draws", "draw_model", "anchor_elo"):
        assert api_name not in err


def test_cli_png(capsys, tmp_path, records_dir):
    pytest.importorskip("matplotlib")
    png = tmp_path / "out" / "ratings.png"
    code, out, err = run(capsys, records_dir, "--png", png)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "ratings chart written" in err
    svg = tmp_path / "r.svg"
    code, out, err = run(capsys, records_dir, "--png", svg, "--json", "--anchor", "A")
    assert code == 0, err
    assert svg.read_text().lstrip().startswith("<?xml") and json.loads(out)["anchor"] == "A"


def test_cli_png_without_matplotlib(capsys, monkeypatch, tmp_path, records_dir):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    code, out, err = run(capsys, records_dir, "--png", tmp_path / "r.png")
    assert code == 2 and out == "" and err.strip() == "error: --png needs matplotlib: pip install 'jitsearch[bench]'"


def test_tournament_plot_and_rate_agree(capsys, tmp_path):
    """A real round robin's records: tournament --ratings --plot and rate of its --out agree."""
    pytest.importorskip("matplotlib")
    out_dir, png = tmp_path / "rr", tmp_path / "t.png"
    code = main(["tournament", "--game", "kalah", "--houses", "3", "--seeds", "2", "--engines",
                 "random alphabeta:depth=1 alphabeta:depth=3", "--pairs", "3", "--openings", "2", "--out",
                 str(out_dir), "--plot", str(png), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    t = json.loads(out)["ratings"]
    assert png.read_bytes()[:4] == b"\x89PNG"
    code, out, err = run(capsys, out_dir, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert [p["name"] for p in r["players"]] == [p["name"] for p in t["players"]]
    for p, q in zip(r["players"], t["players"]):
        assert p["rating"] == pytest.approx(q["rating"]) and p["error"] == pytest.approx(q["error"])


def test_round_robin_with_a_forfeiting_engine_rates_as_the_tournament_did(capsys, tmp_path):
    """A round robin whose cmd: engine loses games by illegal moves (a forfeit with any margin, often 0):
    rate reads its --out folder without error, counts each forfeit as the forfeiter's loss, and gives the
    ratings that --ratings printed; an edited forfeit record is still caught by the replay check."""
    import shlex
    import sys
    from pathlib import Path

    from jitsearch.arena.external_engine import close_engines

    engine = Path(__file__).resolve().parent / "data" / "engines" / "illegal_engine.py"
    bad = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(engine))} 2"
    out_dir = tmp_path / "rr"
    try:
        code = main(["tournament", "--game", "kalah", "--houses", "4", "--seeds", "3", "--engines",
                     "random alphabeta:depth=1", "--engines", bad, "--pairs", "2", "--out", str(out_dir),
                     "--ratings", "--json", "--movetime", "3000"])
    finally:
        close_engines()
    out, err = capsys.readouterr()
    assert code == 0, err
    t = json.loads(out)
    assert sum(m.get("terminations", {}).get("illegal move", {}).get("b", 0) for m in t["matches"]) == 8
    code, out, err = run(capsys, out_dir, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["records"]["kind"] == "kalah" and r["records"]["games"] == 12
    assert [p["name"] for p in r["players"]] == [p["name"] for p in t["ratings"]["players"]]
    for p, q in zip(r["players"], t["ratings"]["players"]):
        assert p["rating"] == pytest.approx(q["rating"]) and p["error"] == pytest.approx(q["error"])
    assert next(p for p in r["players"] if p["name"] == bad)["points"] == 0
    # a forfeit record whose result is flipped (check value recomputed) is refused by its replay
    path = next(out_dir.glob("match_*_vs_2.jsonl"))
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    k = next(i for i, x in enumerate(recs) if "termination" in x)
    recs[k] = seal({**{key: v for key, v in recs[k].items() if key != "check"}, "a_result": "loss"})
    write(path, recs)
    code, out, err = run(capsys, out_dir)
    assert code == 2 and f"{path.name}:{k + 1}: a_result 'loss' does not agree with a illegal move" in err, err


def test_forfeit_is_the_forfeiters_loss_whatever_the_margin(tmp_path):
    """Records without replayable settings (older files): a game lost by a forfeit counts as the forfeiter's
    loss even where the board's margin says otherwise; a forfeit recorded as a draw is refused."""
    recs = match_records("A", "B", 2, 0, 1, "k")
    forfeit = {k: v for k, v in recs[0].items() if k != "check"}
    forfeit.update(margin=0, termination="illegal move", detail="played pit 0")  # B forfeited at an even margin
    write(tmp_path / "f.jsonl", [seal(forfeit), *recs[1:]])
    data = read_results(tmp_path / "f.jsonl")
    assert data.results == [("A", "B", 2, 0, 1)]
    write(tmp_path / "d.jsonl", [seal({**forfeit, "a_result": "draw"})])
    with pytest.raises(ValueError, match=r"d.jsonl:1: a_result 'draw' in a game lost by a forfeit \(illegal move\)"):
        read_results(tmp_path / "d.jsonl")


def test_old_oware_records_are_refused_in_one_line(capsys, tmp_path):
    old = {"game": "oware", "pair": 0, "a": "random", "b": "alphabeta:depth=2", "a_seat": 0,
           "opening": "4,4,4/4,4,4/0,0 p0", "a_score": 0.0, "moves": [], "final": "", "scores": [0, 0],
           "margin": 0, "result": "draw", "plies": 0}
    write(tmp_path / "old.jsonl", [old])
    code, out, err = run(capsys, tmp_path / "old.jsonl")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "old.jsonl:1: an Oware record written by an older" \
        in err, err


def test_self_play_games_are_left_out_with_a_note(tmp_path):
    """A tournament of an engine against itself writes records too: rate reads them and leaves them out."""
    write(tmp_path / "self.jsonl", match_records("A", "A", 1, 1, 0, "s"))
    write(tmp_path / "ab.jsonl", match_records("A", "B", 2, 1, 1, "k"))
    data = read_results(tmp_path)
    assert data.results == [("A", "B", 2, 1, 1)] and data.games == 4
    assert any("left out 2 games of an engine against itself (2 of A)" in n for n in data.notes)

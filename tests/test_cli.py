"""The command line: --json keys, human output, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from jitsearch.cli.app import main

JSON_KEYS = {"value", "best_move", "leaves_expanded", "nodes_visited", "seconds", "algorithm", "tree"}


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_random_json(capsys):
    code, out, err = run(capsys, "solve", "--random", "uniform", "--branching", "2", "--height", "12",
                         "--seed", "1", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert JSON_KEYS <= set(obj)
    assert obj["algorithm"] == "alphabeta" and isinstance(obj["value"], int)
    assert obj["tree"]["branching"] == 2 and obj["tree"]["height"] == 12 and obj["tree"]["seed"] == 1
    from jitsearch import UniformTree, naive
    assert obj["value"] == naive.minimax(UniformTree(2, 12, seed=1))[0]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["minimax", "alphabeta", "two-agent"])
def test_solve_file_all_algorithms(capsys, tmp_path, algorithm):
    path = tmp_path / "t.json"
    path.write_text("[[3, 5], [2, [9, 1]]]")
    code, out, err = run(capsys, "solve", str(path), "--algorithm", algorithm, "--json", "--trace")
    assert code == 0, err
    obj = json.loads(out)
    assert JSON_KEYS <= set(obj) and "trace" in obj
    assert obj["value"] == (-3 if algorithm == "two-agent" else 3)
    code, out, err = run(capsys, "solve", str(path), "--algorithm", algorithm)
    assert code == 0 and "leaves_expanded" in out


def test_solve_andor_binary(capsys):
    code, out, err = run(capsys, "solve", "--random", "uniform", "--values", "binary", "--branching", "3",
                         "--height", "4", "--algorithm", "andor", "--json")
    assert code == 0, err
    assert "goal_reachable" in json.loads(out)


def test_version(capsys):
    from jitsearch import __version__
    code, out, _ = run(capsys, "--version")
    assert code == 0 and __version__ in out


def _bad_files(tmp_path):
    files = {
        "malformed.json": "[[1, 2], [3",
        "ragged.json": '{"branching": 2, "height": 2, "leaves": [1, 2, 3]}',
        "nan.json": "[[1, NaN], [3, 4]]",
        "inf.json": "[[1, Infinity], [3, 4]]",
        "empty.json": "[[1, 2], []]",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return list(files)


BAD_ARGS = [
    ["solve", "--random", "uniform", "--branching", "0"],
    ["solve", "--random", "uniform", "--height", "-1"],
    ["solve", "--random", "uniform", "--branching", "10", "--height", "30"],
    ["solve", "--random", "uniform", "--height", "40", "--trace"],
    ["solve", "--random", "uniform", "--algorithm", "nope"],
    ["solve", "--random", "gaussian"],
    ["solve", "--random", "uniform", "--values", "complex"],
    ["solve", "--random", "uniform", "--branching", "x"],
    ["solve", "--bogus"],
    ["solve"],
    ["solve", "missing-file.json"],
    ["solve", "--random", "uniform", "--max-memory", "lots"],
    ["solve", "--random", "uniform", "--depth", "2"],
    ["bench", "throughput", "--heights", "a-b"],
]


@pytest.mark.parametrize("args", BAD_ARGS, ids=lambda a: " ".join(a[1:]) or "no-args")
def test_bad_arguments_exit_2_with_one_line(capsys, args):
    code, out, err = run(capsys, *args)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and out == ""


def test_bad_files_exit_2_with_one_line(capsys, tmp_path):
    for name in _bad_files(tmp_path):
        code, out, err = run(capsys, "solve", str(tmp_path / name))
        assert code == 2, (name, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (name, err)


def test_console_script_subprocess(tmp_path):
    """The installed entry point: exit codes and stream separation."""
    ok = subprocess.run([sys.executable, "-m", "jitsearch", "solve", "--random", "uniform", "--height", "6",
                         "--json"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["leaves_expanded"] > 0
    bad = subprocess.run([sys.executable, "-m", "jitsearch", "solve", "--random", "uniform", "--branching", "0"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: branching must be an integer") and "got 0" in lines[0]


def test_bench_throughput_json_small(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    code, out, err = run(capsys, "bench", "throughput", "--heights", "6,8", "--trees", "2", "--repeats", "1",
                         "--python-trees", "1", "--no-first-call", "--json", "--out", str(out_file))
    assert code == 0, err
    obj = json.loads(out)
    assert obj["speedup_vs_python"] > 0 and obj["leaves_per_second"] > 0
    assert [r["height"] for r in obj["rows"]] == [6, 8]
    assert json.loads(out_file.read_text()) == obj


@pytest.mark.slow
def test_solve_fsss_and_mtd(capsys):
    base = ["solve", "--random", "uniform", "--height", "10", "--seed", "3", "--json"]
    values = set()
    for extra in (["-a", "fsss"], ["-a", "fsss", "--restart-deepest", "--storage", "hash"],
                  ["-a", "mtd-inf"], ["-a", "mtdf", "--first-guess", "12"], ["-a", "alphabeta"]):
        code, out, err = run(capsys, *base, *extra)
        assert code == 0, err
        obj = json.loads(out)
        assert JSON_KEYS <= set(obj)
        values.add(obj["value"])
    assert len(values) == 1
    code, out, err = run(capsys, *base, "-a", "fsss", "--stop-when-proven")
    assert code == 0 and json.loads(out)["stopped"] in ("proven", "solved")


def test_fsss_anytime_json_has_no_infinities(capsys):
    code, out, err = run(capsys, "solve", "--random", "uniform", "--height", "12", "-a", "fsss",
                         "--max-leaves", "3", "--json")
    assert code == 0, err
    assert "Infinity" not in out
    obj = json.loads(out)
    assert obj["leaves_expanded"] == 3 and obj["exact"] is False and obj["upper"] is None


@pytest.mark.parametrize("args, words", [
    (["-a", "alphabeta", "--restart-deepest"], "applies to --algorithm fsss only"),
    (["-a", "fsss", "--value-range", "0", "1"], "not admissible"),
    (["-a", "fsss", "--max-leaves", "-2"], "max_leaves"),
    (["-a", "mtd-inf", "--storage", "disk"], "storage"),
    (["-a", "fsss", "--first-guess", "1"], "applies to --algorithm mtdf only"),
])
def test_fsss_option_errors(capsys, args, words):
    code, out, err = run(capsys, "solve", "--random", "uniform", "--height", "6", *args)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_bench_fsss_paper_small(capsys, tmp_path):
    code, out, err = run(capsys, "bench", "fsss-paper", "--out", str(tmp_path), "--heights", "4-6:1",
                         "--trees", "4", "--exp2-heights", "4-5:1", "--exp2-trees", "4", "--no-cost",
                         "--workers", "1", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["experiment1"]["trees"] == 12 and obj["experiment2"]["trees"] == 8
    assert set(obj["experiment1"]["fits"]) == {"alphabeta", "fsss", "mtd_inf"}
    for name in ("experiment1_trees.csv", "experiment2_trees.csv", "summary.json", "summary.md"):
        assert (tmp_path / name).exists()
    # resume: nothing left to do, same totals
    code, out2, err = run(capsys, "bench", "fsss-paper", "--out", str(tmp_path), "--heights", "4-6:1",
                          "--trees", "4", "--exp2-heights", "4-5:1", "--exp2-trees", "4", "--no-cost",
                          "--workers", "1", "--json", "--resume")
    assert code == 0 and json.loads(out2)["experiment1"] == obj["experiment1"]


@pytest.mark.slow
def test_solve_incremental_fe(capsys, tmp_path):
    base = ["solve", "--random", "incremental", "--branching", "4", "--depth", "6", "--seed", "2", "--json"]
    code, out, err = run(capsys, *base, "--algorithm", "alphabeta")
    assert code == 0, err
    ab = json.loads(out)
    assert ab["node_generations"] > 0 and ab["tree"]["kind"] == "incremental"
    code, out, err = run(capsys, *base, "--algorithm", "fe", "--delta", "1", "--bounds", "exact")
    fe = json.loads(out)
    assert code == 0 and fe["value"] == ab["value"] and fe["node_generations"] <= ab["node_generations"]
    code, out, err = run(capsys, *base, "--algorithm", "fe", "--delta", "0.5", "--bounds", "online",
                         "--search-depth", "4")
    assert code == 0 and json.loads(out)["search_depth"] == 4
    from jitsearch import EdgeBounds
    EdgeBounds.learn(4, trees=3).save(tmp_path / "b.json")
    code, out, err = run(capsys, *base, "-a", "fe", "--bounds", "offline", "--bounds-file", str(tmp_path / "b.json"),
                         "--likely", "0.9")
    assert code == 0, err
    assert json.loads(out)["bounds"] == "given"
    code, out, err = run(capsys, *base, "-a", "minimax")
    assert code == 0 and json.loads(out)["value"] == ab["value"]


@pytest.mark.parametrize("args, words", [
    (["--random", "uniform", "-a", "fe"], "incremental"),
    (["--random", "incremental", "-a", "fe", "--delta", "1.5"], "delta"),
    (["--random", "incremental", "-a", "fe", "--bounds", "psychic"], "--bounds"),
    (["--random", "incremental", "-a", "fe", "--bounds-file", "x.json"], "offline only"),
    (["--random", "incremental", "-a", "fe", "--bounds", "offline", "--bounds-file", "missing.json"], "not found"),
    (["--random", "incremental", "-a", "alphabeta", "--delta", "0.5"], "apply to --algorithm fe only"),
    (["--random", "uniform", "--random-branching"], "incremental only"),
    (["--random", "incremental", "--depth", "99"], "depth"),
])
def test_incremental_errors(capsys, args, words):
    code, out, err = run(capsys, "solve", *args)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_tournament_cli(capsys, tmp_path):
    games = tmp_path / "g.jsonl"
    args = ["tournament", "--game", "random-tree", "--a", "fe:depth=2,delta=0.5", "--b", "alphabeta:depth=2",
            "--pairs", "8", "--tree-depth", "6", "--out", str(games), "--json"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    obj = json.loads(out)
    assert obj["pairs"] == 8 and obj["a_wins"] + obj["b_wins"] + obj["ties"] == 8
    assert len(games.read_text().splitlines()) == 8
    code, out, err = run(capsys, *args)
    assert code == 2 and "--resume" in err
    code, out, err = run(capsys, *args, "--resume")
    assert code == 0 and json.loads(out) == obj
    code, out, err = run(capsys, "tournament", "--depth-increment", "--max-horizon", "2", "--pairs", "4",
                         "--tree-depth", "5", "--json")
    assert code == 0 and json.loads(out)["rounds"][0]["horizon_a"] == 1
    code, out, err = run(capsys, "tournament", "--game", "chess")
    assert code == 2 and "random-tree" in err
    code, out, err = run(capsys, "tournament", "--a", "fe:depth=x")
    assert code == 2 and err.startswith("error:")


def test_play_engines_json_is_reproducible(capsys):
    args = ["play", "--p0", "alphabeta:depth=3", "--p1", "random", "--houses", "4", "--seeds", "3",
            "--seed", "5", "--json"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    game = json.loads(out)
    assert {"moves", "final_board", "margin"} <= set(game)
    assert sum(game["final_board"]) == 24 and game["margin"] == game["final_board"][5] - game["final_board"][0]
    code, out2, err = run(capsys, *args)
    assert json.loads(out2) == game
    from jitsearch.games.kalah import KalahState
    s = KalahState.initial(4, 3)
    for pit in game["moves"]:
        s = s.play(pit)
    assert s.board.tolist() == game["final_board"]


def test_play_human_reprompts_on_bad_input(capsys, monkeypatch):
    answers = iter(["x", "9", "1", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    code, out, err = run(capsys, "play", "--p0", "human", "--p1", "random", "--houses", "3", "--seeds", "2",
                         "--seed", "1")
    assert code == 0
    assert out.count("type a number from 1 to 3") == 2 and "sows house 1" in out


def test_solve_kalah_cli(capsys):
    code, out, err = run(capsys, "solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["complete"] and obj["margin"] == 2 and "test 1: margin in" in err
    code, out, err = run(capsys, "solve", "--game", "kalah", "--position", "1,0,0/0/0,0,1/16 p0", "--json")
    assert code == 0 and json.loads(out)["margin"] is not None


@pytest.mark.parametrize("args, words", [
    (["play", "--p0", "minimax"], "unknown agent"),
    (["play", "--p0", "alphabeta:depth=0", "--json", "--p1", "random"], "depth"),
    (["play", "--p0", "human", "--json"], "two engine players"),
    (["play", "--position", "4,4/0/4/0 p0"], "same number of houses"),
    (["play", "--houses", "0"], "houses"),
    (["solve", "--game", "chess"], "kalah"),
    (["solve", "--game", "kalah", "--position", "4,4,4/0/4,4,4/0 p7"], "p0, p1 or end"),
    (["solve", "--game", "kalah", "--table-size", "2"], "table-size"),
])
def test_kalah_cli_errors(capsys, args, words):
    code, out, err = run(capsys, *args)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_play_help_names_every_game_and_the_variant_spellings(capsys):
    """``play --help`` says it plays any game, with --variant and the board flags as its spellings."""
    assert main(["play", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Play any game (--game kalah, oware, connect4, ...)" in text
    assert "--houses, --seeds and --empty-capture are spellings of the variant options" in text


def test_play_connect4_humans_from_scripted_input(capsys, monkeypatch):
    """Two people play Connect Four: bad input is asked again, a full column refused, x wins in column 1."""
    answers = iter(["x", "0", "1", "2", "1", "2", "1", "2", "1"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    code, out, err = run(capsys, "play", "--game", "connect4", "--p0", "human", "--p1", "human")
    assert code == 0, err
    assert out.count("type a column from 1 to 7") == 2
    assert "player 0 drops a stone in column 1" in out and "player 1 drops a stone in column 2" in out
    assert "game over: p0" in out and "result: p0, margin +1 after 7 plies" in out


def test_play_connect4_variant_and_errors(capsys, monkeypatch):
    answers = iter(["9", "8", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    code, out, err = run(capsys, "play", "--game", "connect4", "-V", "width=8", "--p0", "human", "--p1", "human")
    assert code == 0 and out.count("type a column from 1 to 8") == 1 and "player 0 drops a stone in column 8" in out
    for args, words in ((["--houses", "4"], "--houses does not apply to connect4"),
                        (["-V", "width=3"], "width"),
                        (["--position", "12x"], "position must look like"),
                        (["-V", "depth=3"], "no variant option 'depth'")):
        code, out, err = run(capsys, "play", "--game", "connect4", "--p0", "human", "--p1", "human", *args)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (args, err)
    code, out, err = run(capsys, "play", "--game", "chess")
    assert code == 2 and "unknown game 'chess'" in err and "connect4" in err


def _connect4_agents_missing() -> str | None:
    from jitsearch.cli.common import agent_for

    try:
        agent_for("connect4", "random", 0)
        agent_for("connect4", "mcts:iterations=200", 0)
    except ValueError as exc:
        return f"no Connect Four agents before the generic parse_agent(spec, game=...) lands: {exc}"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_connect4_agents_missing() is not None, reason=str(_connect4_agents_missing()))
def test_play_connect4_engines_json(capsys):
    args = ["play", "--game", "connect4", "--p0", "mcts:iterations=200", "--p1", "random", "--seed", "3", "--json"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    game = json.loads(out)
    assert game["game"] == "connect4" and game["finished"] and game["result"] in ("p0", "p1", "draw")
    from jitsearch.games import get

    s = get("connect4").initial()
    for move in game["moves"]:
        s = s.play(move)
    assert s.to_text() == game["final"] and s.margin == game["margin"]
    assert game["cells"] == get("connect4").ui.board_json(s)["cells"]
    code, out2, err = run(capsys, *args)
    assert json.loads(out2) == game  # the seed fixes the game


def test_solve_kalah_position_title_comes_from_the_position(capsys):
    code, out, err = run(capsys, "solve", "--game", "kalah", "--position", "1,0,0/0/0,0,1/16 p0")
    assert code == 0, err
    assert "Kalah(3) position, 18 seeds in play" in out and "?" not in out
    code, out, err = run(capsys, "solve", "--game", "kalah", "--houses", "3", "--seeds", "2")
    assert code == 0 and "Kalah(3, 2)" in out


def test_solve_errors_name_the_cli_options_not_the_api_arguments(capsys):
    code, out, err = run(capsys, "solve", "--random", "uniform", "--branching", "2", "--height", "16", "--trace",
                         "--max-memory", "1KiB")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--max-memory" in err and "drop --trace" in err and "max_bytes" not in err


@pytest.mark.parametrize("message, words", [
    ("needs 2 GiB: lower the table size (tt_capacity, --table-size) or raise max_bytes (--max-memory)",
     "needs 2 GiB: lower the table size (--table-size) or raise --max-memory"),
    ("cannot write the endgame cache directory d (Permission denied): choose a writable directory or build without "
     "a cache (--no-endgame-cache, endgame_cache_dir=None)",
     "cannot write the endgame cache directory d (Permission denied): choose a writable directory or build without "
     "a cache (--no-endgame-cache)"),
    ("free some space or choose another cache directory (--endgame-cache-dir, or endgame_cache_dir= in the API)",
     "free some space or choose another cache directory (--endgame-cache-dir)"),
    ("max_seeds must be an integer in 0..127, got 200", "--endgame-seeds must be an integer in 0..127, got 200"),
    ("dense_max_bytes must be positive", "dense_max_bytes must be positive"),
])
def test_library_messages_in_the_words_of_the_cli(message, words):
    from jitsearch.cli.solve import cli_words

    assert cli_words(message) == words


def test_ctrl_c_of_a_kalah_solve_says_what_is_kept(capsys, monkeypatch, tmp_path):
    import jitsearch.games.kalah.solver as kalah_solver

    def interrupted(state, **kwargs):  # Ctrl-C while the endgame database was being built
        return {"margin": None, "best_move": 1, "best_move_source": "heuristic", "complete": False,
                "interrupted": True, "stop_reason": "interrupted", "lower": -18, "upper": 18, "nodes": 0,
                "iterations": 0, "endgame_seeds": 0, "seconds": 0.1}

    monkeypatch.setattr(kalah_solver, "solve_exact", interrupted)
    code, out, err = run(capsys, "solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--endgame-seeds", "6",
                         "--endgame-cache-dir", str(tmp_path), "--json")
    last = err.strip().splitlines()[-1]
    assert code == 130 and "run again" not in last
    assert "the endgame database was not finished and nothing of it was written" in last
    assert "nothing of the search is kept (--checkpoint DIR keeps it)" in last


def test_errors_keep_no_advice_meant_for_api_callers(capsys):
    """A library message's "(API: or raise max_bytes)" names no option of the command: the CLI drops it."""
    code, out, err = run(capsys, "engine", "--agent", "mcts:iterations=100000000")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: cannot serve") and "API:" not in err and "max_bytes" not in err

"""`jitsearch analyse` (many positions, one multi-tree launch) and `jitsearch bench gpu-mcts`, on the CPU twin."""

from __future__ import annotations

import json

import pytest

from jitsearch.cli.app import main
from jitsearch.games.kalah import KalahState
from jitsearch.mcts.multi import analyse_positions

#: Kalah(3,3) positions with both players to move, and a file around them with comments and blank lines.
POSITIONS_33 = ["3,3,3/0/3,3,3/0 p0", "3,3,0/1/4,4,3/0 p1", "0,4,4/1/3,3,3/0 p0"]
FILE_33 = "# Kalah(3,3)\n\n" + POSITIONS_33[0] + "\n   \n" + POSITIONS_33[1] + "\n# more\n" + POSITIONS_33[2] + "\n"
LINES_33 = [3, 5, 7]
TIMING_KEYS = ("seconds", "compile_seconds", "positions_per_second")
JSON_KEYS = {"positions", "iterations", "playouts", "playouts_total", "leaves", "seconds", "backend",
             "positions_per_second", "interrupted", "houses", "empty_capture"}


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def analyse_json(capsys, path, *extra):
    code, out, err = run(capsys, "analyse", path, "--backend", "cpu", "--json", *extra)
    assert code == 0, (out, err)
    return json.loads(out)


def untimed(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k not in TIMING_KEYS}


@pytest.fixture
def file33(tmp_path):
    path = tmp_path / "pos33.txt"
    path.write_text(FILE_33)
    return path


@pytest.mark.slow
def test_analyse_json_keys_legal_moves_and_visits(capsys, file33):
    obj = analyse_json(capsys, file33, "--iterations", "24", "--playouts", "2")
    assert JSON_KEYS <= set(obj)
    assert obj["backend"] == "cpu" and obj["iterations"] == 24 and obj["playouts"] == 2 and obj["houses"] == 3
    assert obj["playouts_total"] == 24 * 2 * len(POSITIONS_33)
    assert [p["line"] for p in obj["positions"]] == LINES_33
    assert [p["position"] for p in obj["positions"]] == POSITIONS_33
    for pos in obj["positions"]:
        state = KalahState.from_text(pos["position"])
        assert pos["player"] == state.player
        assert pos["move"] in state.legal_moves()
        assert sorted(ch["move"] for ch in pos["children"]) == state.legal_moves()
        assert sum(ch["visits"] for ch in pos["children"]) == obj["iterations"]  # one tree per position
        assert max(ch["visits"] for ch in pos["children"]) == next(
            ch["visits"] for ch in pos["children"] if ch["move"] == pos["move"])
        assert all(ch["value"] is None or 0.0 <= ch["value"] <= 1.0 for ch in pos["children"])


@pytest.mark.slow
def test_analyse_leaves_round_up_and_visits_follow(capsys, file33):
    """With 3 leaves a step, 10 iterations become 4 whole steps = 12, and the root visits say so."""
    obj = analyse_json(capsys, file33, "--iterations", "10", "--playouts", "2", "--leaves", "3")
    assert obj["leaves"] == 3 and obj["iterations"] == 12
    for pos in obj["positions"]:
        assert sum(ch["visits"] for ch in pos["children"]) == 12


@pytest.mark.slow
def test_analyse_is_deterministic_and_matches_the_library(capsys, file33, tmp_path):
    args = ("--iterations", "30", "--playouts", "3", "--seed", "7", "--c", "0.9", "--formula", "sqrt")
    first = analyse_json(capsys, file33, *args, "--out", tmp_path / "a.json")
    second = analyse_json(capsys, file33, *args)
    assert untimed(first) == untimed(second)
    assert untimed(json.loads((tmp_path / "a.json").read_text())) == untimed(first)
    direct = analyse_positions([KalahState.from_text(t) for t in POSITIONS_33], iterations=30, playouts=3, seed=7,
                               c=0.9, formula="sqrt", backend="cpu")
    keys = ("move", "children", "nodes")
    assert [{k: p[k] for k in keys} for p in first["positions"]] == [{k: p[k] for k in keys} for p in direct["positions"]]
    other = analyse_json(capsys, file33, "--iterations", "30", "--playouts", "3", "--seed", "8", "--c", "0.9",
                         "--formula", "sqrt")
    assert [p["children"] for p in other["positions"]] != [p["children"] for p in first["positions"]]


@pytest.mark.slow
def test_analyse_empty_capture_and_4x3_board(capsys, tmp_path):
    path = tmp_path / "pos43.txt"
    texts = ["3,3,3,3/0/3,3,3,3/0 p0", "3,0,4,4/1/3,3,3,3/0 p0"]
    path.write_text("\n".join(texts) + "\n")
    obj = analyse_json(capsys, path, "--iterations", "16", "--playouts", "2", "--empty-capture")
    assert obj["empty_capture"] is True and obj["houses"] == 4
    direct = analyse_positions([KalahState.from_text(t, empty_capture=True) for t in texts], iterations=16,
                               playouts=2, backend="cpu")
    assert [p["children"] for p in obj["positions"]] == [p["children"] for p in direct["positions"]]


#: Positions of every game, two a file: (game, variant flags, texts).
GAME_FILES = [
    ("kalah", ("--empty-capture",), ["3,3,3,3/0/3,3,3,3/0 p0", "3,0,4,4/1/3,3,3,3/0 p0"]),
    ("oware", (), ["1,0,2,0,1,0/0,1,0,2,0,1/14,16 p0", "0,1,0,2,0,1/1,0,2,0,1,0/14,16 p1"]),
    ("connect4", ("-V", "width=6"), ["4455", "3"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, flags, texts", GAME_FILES, ids=[g[0] for g in GAME_FILES])
def test_analyse_every_game_equals_the_library(capsys, tmp_path, name, flags, texts):
    """For every registered game, the command's trees are the library's (``analyse_game``) for the same
    seed, from a file or from the variant's start position."""
    from jitsearch.cli.game_options import resolve_variant
    from jitsearch.games import get
    from jitsearch.mcts.game import analyse_game

    game = get(name)
    flag_values = {"empty_capture": True} if "--empty-capture" in flags else {}
    variant = resolve_variant(game, [f for f in flags if "=" in f], **flag_values)
    path = tmp_path / "p.txt"
    path.write_text("# two positions\n" + "\n".join(texts) + "\n")
    obj = analyse_json(capsys, path, "--game", name, *flags, "--iterations", "20", "--playouts", "2", "--seed", "3")
    states = [game.from_text(t, **variant) for t in texts]
    lib = analyse_game(game, states, iterations=20, playouts=2, seed=3, backend="cpu")
    assert obj["game"] == name and [p["line"] for p in obj["positions"]] == [2, 3]
    assert [p["position"] for p in obj["positions"]] == [s.to_text() for s in states]
    assert [p["children"] for p in obj["positions"]] == [p["children"] for p in lib["positions"]]
    assert obj["playouts_total"] == 20 * 2 * 2
    code, out, err = run(capsys, "analyse", "--game", name, *flags, "--iterations", "20", "--backend", "cpu", "--json")
    assert code == 0, err
    start = game.initial(**variant)
    only = json.loads(out)["positions"]
    assert [p["position"] for p in only] == [start.to_text()] and only[0]["line"] is None
    assert sorted(ch["move"] for ch in only[0]["children"]) == start.legal_moves()


def test_analyse_table_output(capsys, file33):
    code, out, err = run(capsys, "analyse", file33, "--backend", "cpu", "--iterations", "12", "--playouts", "2")
    assert code == 0, err
    for text in POSITIONS_33:
        assert text in out
    assert "positions/s" in out and "*" in out


@pytest.mark.parametrize("bad, words", [
    ("3,3,3/0/3,3/0 p0", "same number of houses"),
    ("3,3,3/0/3,3,3/0 p7", "p0, p1 or end"),
    ("hello", "position must look like"),
    ("0,0,0/10/0,0,0/8 end", "game is over"),
    ("3,3,3,3/0/3,3,3,3/0 p0", "4 houses but line 2 has 3 houses: analyse one board size per file"),
])
def test_analyse_bad_line_is_one_file_line_error(capsys, tmp_path, bad, words):
    path = tmp_path / "bad.txt"
    path.write_text(f"# header\n{POSITIONS_33[0]}\n\n{bad}\n{POSITIONS_33[1]}\n")
    code, out, err = run(capsys, "analyse", path, "--backend", "cpu", "--iterations", "4", "--json")
    assert code == 2 and out == "", (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:4: ") and words in lines[0], err


@pytest.mark.parametrize("content, args, words", [
    (None, (), "No such file"),
    ("# only a comment\n\n", (), "no positions"),
    (b"3,3,3/0/3,3,3/0 p0\n\xff\xfe\n", (), ":2: not UTF-8"),
    ("x" * 5000, (), ":1: line longer than"),
    (FILE_33, ("--iterations", "4", "--time", "1"), "not both"),
    (FILE_33, ("--iterations", "0"), "--iterations must be >= 1"),
    (FILE_33, ("--leaves", "64", "--playouts", "32"), "leaves x playouts"),
    (FILE_33, ("--seed", "-1"), "--seed"),
    (FILE_33, ("--game", "chess"), "unknown game 'chess'"),
    (FILE_33, ("--game", "connect4"), ":3: a board is rows of equal length"),
    (FILE_33, ("--houses", "3"), "--houses gives the start position"),
    (FILE_33, ("--reward", "best"), "--reward must be win or heuristic"),
    (FILE_33, ("--max-memory", "1KiB", "--iterations", "100"), "max-memory"),
    (FILE_33, ("--time", "nan"), "--time must be a finite number"),
])
def test_analyse_errors_exit_2_with_one_line(capsys, tmp_path, content, args, words):
    path = tmp_path / "p.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "analyse", path, "--backend", "cpu", *args)
    assert code == 2 and out == "", (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err


def test_analyse_ctrl_c_prints_what_it_has_and_exits_130(capsys, file33, monkeypatch):
    """Ctrl-C during the search: the search reports interrupted=True; the
    partial figures are printed and the exit status is 130."""
    from jitsearch.mcts.game import GameGrower

    real_grow = GameGrower.grow
    calls = {"n": 0}

    def grow(self, steps):
        if self.trees.parent.shape[0] > 1:  # the real search (the warm-ups grow one tree)
            calls["n"] += 1
            if calls["n"] == 2:  # after its first chunk
                raise KeyboardInterrupt
        return real_grow(self, steps)

    monkeypatch.setattr(GameGrower, "grow", grow)
    code, out, err = run(capsys, "analyse", file33, "--backend", "cpu", "--iterations", "500", "--playouts", "1",
                         "--json")
    assert code == 130, err
    obj = json.loads(out)
    assert obj["interrupted"] is True and 1 <= obj["iterations"] < 500
    for pos in obj["positions"]:
        assert sum(ch["visits"] for ch in pos["children"]) == obj["iterations"]
    assert err.strip().splitlines()[-1].startswith("interrupted: ")


@pytest.mark.slow
def test_bench_gpu_mcts_small_runs_and_writes_json(capsys, tmp_path):
    out_dir = tmp_path / "gm"
    code, out, err = run(capsys, "bench", "gpu-mcts", "--backend", "cpu", "--rates", "2x4,2x2x2", "--rate-seconds",
                         "0.1", "--positions", "4", "--analyse-iterations", "4", "--move-times", "0.01", "--pairs",
                         "1", "--workers", "1", "--out", out_dir, "--json")
    assert code == 0, (out, err)
    assert "CPU-twin figures, not GPU figures" in err
    obj = json.loads(out)
    saved = json.loads((out_dir / "gpu_mcts.json").read_text())
    assert saved["backend"] == obj["backend"] == "cpu"
    assert [(r["trees"], r["leaves"], r["playouts"]) for r in saved["rates"]] == [(2, 1, 4), (2, 2, 2)]
    assert all(r["iterations_per_second"] > 0 for r in saved["rates"])
    assert saved["analysis"]["positions"] == 4 and saved["analysis"]["positions_per_second"] > 0
    assert [(g["seconds_per_move"], g["games"]) for g in saved["games"]] == [(0.01, 2), (0.01, 2)]
    assert "CPU twin figures" in (out_dir / "gpu_mcts.md").read_text()
    # the tree-parallel rates and one opponent only
    code, out, err = run(capsys, "bench", "gpu-mcts", "--backend", "cpu", "--rates", "2x4", "--shared-rates", "2x1x4",
                         "--rate-seconds", "0.1", "--positions", "0", "--move-times", "0.01", "--pairs", "1",
                         "--opponents", "one", "--parallel", "tree", "--out", tmp_path / "gt", "--json")
    assert code == 0, (out, err)
    obj = json.loads(out)
    assert [(r.get("parallel"), r["trees"], r.get("blocks")) for r in obj["rates"]] == [(None, 2, None), ("tree", 2, 1)]
    assert [g["opponent"] for g in obj["games"]] == ["one core"] and "parallel=tree" in obj["games"][0]["a"]


@pytest.mark.parametrize("args, words", [
    (("--rates", "2y4"), "TREESxPLAYOUTS"),
    (("--rates", "2x4x4x4"), "TREESxPLAYOUTS"),
    (("--rates", "0x4"), "trees must lie"),
    (("--rates", "2x64x32"), "leaves x playouts"),
    (("--rates", ","), "names no setting"),
    (("--move-times", "0.1,x"), "--move-times takes"),
    (("--move-times", "-1", "--pairs", "1"), "--move-times must be a finite number"),
    (("--move-times", "0.1", "--pairs", "1,2"), "same number of entries"),
    (("--pairs", "0,1,1"), "--pairs must be >= 1"),
    (("--positions", "-1"), "--positions"),
    (("--leaves", "65"), "--leaves must be at most 64"),
    (("--backend", "gpu"), "backend must be one of"),
    (("--shared-rates", "1x4x4"), "needs a GPU"),
    (("--shared-rates", "1x4"), "TREESxBLOCKSxPLAYOUTS"),
    (("--opponents", "two"), "--opponents"),
    (("--parallel", "leaf"), "--parallel must be tree or root"),
    (("--blocks", "2"), "--blocks above 1 needs a GPU"),
])
def test_bench_gpu_mcts_bad_options_exit_2(capsys, tmp_path, args, words):
    code, out, err = run(capsys, "bench", "gpu-mcts", "--backend", "cpu", "--out", tmp_path / "o", *args)
    assert code == 2 and out == "", (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], err
    assert not (tmp_path / "o").exists()  # refused before anything ran or was written

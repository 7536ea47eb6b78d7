"""Balanced opening suites (jitsearch.arena.opening_suites): the shipped files
replay from the start and hold what their lines say; generated suites agree
with the exact solver and a naive minimax on small boards; the ``openings``
command and ``tournament --openings balanced``."""

from __future__ import annotations

import functools
import json

import pytest

from jitsearch.arena import opening_suites as suites
from jitsearch.arena.openings import read_game_openings
from jitsearch.cli.app import main
from jitsearch.games.kalah import KalahState, naive, solve_exact
from jitsearch.games.kalah import openings as kalah_openings


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code, out, err, words=""):
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], (code, out, err)
    assert "Traceback" not in err


def replay(houses, seeds, empty_capture, moves) -> KalahState:
    s = KalahState.initial(houses, seeds, empty_capture=empty_capture)
    for mv in moves:
        assert mv in s.legal_moves(), (moves, mv)
        s = s.play(mv)
    return s


@functools.lru_cache(maxsize=None)
def naive_margin(h0, s0, h1, s1, player, empty_capture):
    """Player 0's final margin under perfect play, by plain minimax over naive.move (no pruning, memoised)."""
    if player == -1:
        return s0 - s1
    side = h0 if player == 0 else h1
    values = [naive_margin(*(tuple(x) if isinstance(x, list) else x
                             for x in naive.move(list(h0), s0, list(h1), s1, player, i, empty_capture)),
                           empty_capture)
              for i in range(len(side)) if side[i]]
    return max(values) if player == 0 else min(values)


def naive_value(state: KalahState) -> int:
    m, b = state.houses, [int(x) for x in state.board]
    return naive_margin(tuple(b[1:m + 1]), b[m + 1], tuple(b[m + 2:]), b[0], state.player, state.empty_capture)


# -- the shipped suites -------------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(kalah_openings.SHIPPED))
def test_shipped_suite_replays_and_is_balanced(key):
    houses, seeds, empty_capture = key
    openings = suites.shipped_suite(houses, seeds, empty_capture)
    assert len(openings) >= 40
    texts = [o.position for o in openings]
    assert len(set(texts)) == len(texts)
    for o in openings:
        assert 2 <= o.plies <= 6 and len(o.moves) == o.plies
        s = replay(houses, seeds, empty_capture, o.moves)
        assert s.to_text() == o.position and not s.is_over
        assert abs(o.value) <= 2
        assert o.method == ("exact" if (houses, seeds) == (6, 4) else o.method)
        assert o.method == "exact" or o.method.startswith("depth-")
    assert {o.plies for o in openings} >= {2, 3, 4, 5, 6} or len(openings) < 60
    assert {KalahState.from_text(t).player for t in texts} == {0, 1}
    # the tournament's reader takes the same file
    assert read_game_openings(suites.shipped_suite_path(*key), "kalah",
                              dict(houses=houses, seeds=seeds, empty_capture=empty_capture)) == tuple(texts)
    header = suites.shipped_suite_path(*key).read_text().splitlines()[0]
    assert header.startswith("# Balanced opening suite for Kalah")


def test_shipped_suite_files_are_package_data():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    conf = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert "suites/*.txt" in conf["tool"]["setuptools"]["package-data"]["jitsearch.games.kalah"]
    for name in kalah_openings.SHIPPED.values():
        assert (kalah_openings.SUITES_DIR / name).is_file()


def test_no_suite_for_a_board_names_those_that_have_one():
    with pytest.raises(ValueError, match=r"Kalah\(4,3\).*Kalah\(6,4\), Kalah\(6,4\) empty capture, Kalah\(6,6\)"):
        suites.shipped_suite(4, 3, False)


def _fewest_seeds_first(openings):
    def seeds_in_houses(o):
        b = KalahState.from_text(o.position).board
        return int(b.sum()) - int(b[0]) - int(b[7])

    return sorted(openings, key=lambda o: (seeds_in_houses(o), o.position))


@pytest.mark.parametrize("empty_capture", [False, True])
@pytest.mark.slow
def test_a_shipped_kalah64_value_resolves(empty_capture):
    """Re-solve one shipped Kalah(6,4) opening on its own (no shared table, a 12-seed endgame database
    built here): the one with the fewest seeds left in the houses (about 2 s, + 2 s for the database)."""
    from jitsearch.games.kalah import build_endgame_database

    o = _fewest_seeds_first(suites.shipped_suite(6, 4, empty_capture))[0]
    db = build_endgame_database(6, 12, empty_capture)
    assert solve_exact(KalahState.from_text(o.position, empty_capture=empty_capture), endgame_db=db)["margin"] == o.value


@pytest.mark.slow
@pytest.mark.parametrize("empty_capture", [False, True])
def test_more_shipped_kalah64_values_resolve(empty_capture):
    """Re-solve the next five shipped Kalah(6,4) openings (fewest seeds in the houses first) on their own,
    with a 16-seed endgame database built here: minutes (--runslow)."""
    from jitsearch.games.kalah import build_endgame_database

    db = build_endgame_database(6, 16, empty_capture, max_bytes=2 << 30)
    for o in _fewest_seeds_first(suites.shipped_suite(6, 4, empty_capture))[1:6]:
        r = solve_exact(KalahState.from_text(o.position, empty_capture=empty_capture), endgame_db=db)
        assert r["margin"] == o.value, o.line()


# -- generated suites, checked on small boards ------------------------------------------------------------

# a second board size in the slow step
@pytest.mark.parametrize("houses,seeds,empty_capture", [(3, 3, False), (3, 3, True),
                                                          pytest.param(4, 3, False, marks=pytest.mark.slow)])
def test_exact_suite_matches_the_solver_and_naive_minimax(houses, seeds, empty_capture):
    r = suites.balanced_suite(houses, seeds, empty_capture, plies=(2, 6), within=2, count=12, seed=3,
                              endgame_seeds=0)
    assert r["complete"] and not r["interrupted"] and len(r["openings"]) == 12
    assert r["tried"] == r["prefiltered_out"] + r["evaluated"] and r["evaluated"] == 12 + r["outside"]
    texts = [o.position for o in r["openings"]]
    assert len(set(texts)) == len(texts)
    for o in r["openings"]:
        s = replay(houses, seeds, empty_capture, o.moves)
        assert s.to_text() == o.position and 2 <= o.plies <= 6 and o.method == "exact"
        assert abs(o.value) <= 2
        assert solve_exact(s)["margin"] == o.value
        if houses == 3:
            assert naive_value(s) == o.value


def test_exact_value_says_inside_or_outside_as_the_solver_does():
    cands = suites.opening_candidates(3, 3, False, plies=(2, 4), seed=1)[:40]
    for state, _ in cands:
        margin = solve_exact(state)["margin"]
        value, status, _nodes = suites.exact_value(state, 1, guess=margin)
        assert status == ("inside" if abs(margin) <= 1 else "outside")
        assert value == (margin if status == "inside" else value)
        if value is not None:
            assert value == margin


def test_exact_value_too_big_past_max_nodes():
    s = KalahState.initial(4, 4)
    assert suites.exact_value(s, 0, max_nodes=1)[1] in ("too-big", "outside")


def test_solve_exact_with_a_shared_table_gives_the_same_values():
    import numpy as np

    table = np.zeros((1 << 16, 4), dtype=np.int64)
    for state, _ in suites.opening_candidates(4, 3, False, plies=(2, 6), seed=2)[:40]:
        assert solve_exact(state, table=table)["margin"] == solve_exact(state)["margin"]
    s = KalahState.initial(3, 3)
    for bad in (np.zeros((100, 4), np.int64), np.zeros((64, 3), np.int64), np.zeros((64, 4), np.int32), [[0] * 4]):
        with pytest.raises(ValueError, match="table must be"):
            solve_exact(s, table=bad)
    with pytest.raises(ValueError, match="exclude each other"):
        solve_exact(s, table=table, checkpoint="somewhere")


def test_depth_suite_values_are_the_search_values():
    r = suites.balanced_suite(4, 4, False, exact=False, depth=6, count=8, seed=0, prefilter_depth=4)
    assert r["complete"] and r["method"] == "depth-6"
    for o in r["openings"]:
        s = KalahState.from_text(o.position)
        assert suites.search_value(s, 6) == o.value and abs(o.value) <= 2
        assert replay(4, 4, False, o.moves) == s


def test_candidates_are_distinct_in_range_and_mixed():
    cands = suites.opening_candidates(4, 3, True, plies=(2, 5), seed=7)
    texts = [s.to_text() for s, _ in cands]
    assert len(set(texts)) == len(texts)
    assert {len(m) for _, m in cands} == {2, 3, 4, 5}
    first = cands[:8]
    assert {len(m) for _, m in first} == {2, 3, 4, 5} and {s.player for s, _ in first} == {0, 1}
    for s, moves in cands[:200]:
        assert replay(4, 3, True, moves) == s
    assert [s.to_text() for s, _ in suites.opening_candidates(4, 3, True, plies=(2, 5), seed=7)] == texts
    assert [s.to_text() for s, _ in suites.opening_candidates(4, 3, True, plies=(2, 5), seed=8)] != texts


def test_suite_file_round_trip_and_bad_lines(tmp_path):
    r = suites.balanced_suite(3, 3, False, count=4, endgame_seeds=0)
    header = suites.suite_header(dict(houses=3, seeds=3), r, plies=(2, 6), command="jitsearch openings ...", seed=0)
    path = tmp_path / "s.txt"
    path.write_text(suites.format_suite(header, r["openings"]))
    assert suites.read_suite(path) == r["openings"]
    assert read_game_openings(path, "kalah", dict(houses=3, seeds=3, empty_capture=False)) == tuple(
        o.position for o in r["openings"])
    path.write_text("3,3,3/0/3,3,3/0 p0  # exact +0 plies 2 moves 1\n")
    with pytest.raises(ValueError, match="s.txt:1: 2 plies but 1 moves"):
        suites.read_suite(path)
    with pytest.raises(ValueError, match="expected"):
        suites.parse_line("3,3,3/0/3,3,3/0 p0  # value 0")


@pytest.mark.parametrize("kwargs,words", [
    ({"plies": (0, 3)}, "plies"), ({"plies": (4, 2)}, "plies"), ({"within": -1}, "within"),
    ({"exact": False}, "exactly one"), ({"depth": 4}, "exactly one"), ({"count": 0}, "count"),
    ({"empty_capture": 1}, "empty_capture")])
def test_balanced_suite_refuses_bad_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        suites.balanced_suite(3, 3, **{"endgame_seeds": 0, **kwargs})


# -- the command line ---------------------------------------------------------------------------------------

def test_openings_command_json_and_file(capsys, tmp_path):
    out = tmp_path / "suite33.txt"
    code, stdout, err = run(capsys, "openings", "--houses", 3, "--seeds", 3, "--exact", "--count", 5,
                            "--endgame-seeds", 0, "--out", out, "--json")
    assert code == 0, err
    obj = json.loads(stdout)
    assert {"houses", "seeds", "empty_capture", "plies", "within", "count", "command", "out", "openings",
            "complete", "interrupted", "candidates", "tried", "evaluated", "seconds", "method"} <= set(obj)
    assert obj["plies"] == [2, 6] and obj["method"] == "exact" and len(obj["openings"]) == 5
    assert set(obj["openings"][0]) == {"position", "value", "plies", "moves", "method"}
    text = out.read_text()
    assert "# Remake: jitsearch openings --houses 3 --seeds 3 --plies 2-6 --within 2 --exact --count 5" in text
    assert [o.position for o in suites.read_suite(out)] == [o["position"] for o in obj["openings"]]
    # the suite plays in a tournament
    code, stdout, err = run(capsys, "tournament", "--game", "kalah", "--houses", 3, "--seeds", 3, "--a", "random",
                            "--b", "random", "--pairs", 2, "--openings", out, "--json")
    assert code == 0, err
    # without --out or --json: the suite file's text on stdout
    code, stdout, err = run(capsys, "openings", "--houses", 3, "--seeds", 3, "--depth", 4, "--count", 3,
                            "--empty-capture")
    assert code == 0, err
    assert stdout.startswith("# Balanced opening suite for Kalah(3,3) empty capture")
    assert len([line for line in stdout.splitlines() if not line.startswith("#")]) == 3


@pytest.mark.parametrize("args,words", [
    (["--plies", "2-x"], "--plies"), (["--plies", "5-2"], "--plies"), (["--plies", "0-3"], "--plies"),
    (["--within", "-1"], "--within"), ([], "exactly one"), (["--depth", "4", "--exact-missing"], "No such option"),
    (["--count", "0"], "--count"), (["--houses", "0"], "houses"), (["--depth", "0"], "--depth"),
    (["--prefilter-depth", "-1"], "--prefilter-depth"), (["--max-nodes", "0"], "--max-nodes")])
def test_openings_bad_input_is_one_line_exit_2(capsys, tmp_path, args, words):
    extra = [] if "--depth" in args or args == [] else ["--exact", "--endgame-seeds", 0]
    code, out, err = run(capsys, "openings", *extra, *args)
    one_error_line(code, out, err, words)


def test_openings_takes_the_game_and_its_variant_options(capsys):
    code, stdout, err = run(capsys, "openings", "--game", "kalah", "-V", "houses=3", "-V", "seeds=3",
                            "-V", "empty_capture=1", "--depth", 4, "--count", 2)
    assert code == 0, err
    assert "# Remake: jitsearch openings --houses 3 --seeds 3 --empty-capture --plies 2-6" in stdout
    for state_text in [line.split("#")[0].strip() for line in stdout.splitlines() if not line.startswith("#")]:
        assert state_text.count(",") == 4  # two sides of three houses
    one_error_line(*run(capsys, "openings", "--game", "oware", "--depth", 4),
                   "oware has no way to value a suite's positions")
    one_error_line(*run(capsys, "openings", "--game", "nosuch", "--depth", 4), "nosuch")
    one_error_line(*run(capsys, "openings", "-V", "width=7", "--depth", 4), "no variant option 'width'")


def test_the_remake_line_spells_a_variant_with_the_board_flags_or_variant_options():
    from jitsearch.cli.openings import _variant_words
    from jitsearch.games import get

    kalah, oware = get("kalah"), get("oware")
    assert _variant_words(kalah, dict(houses=6, seeds=4, empty_capture=False)) == ["--houses", 6, "--seeds", 4]
    assert _variant_words(kalah, dict(houses=5, seeds=3, empty_capture=True)) == [
        "--houses", 5, "--seeds", 3, "--empty-capture"]
    variant = {**oware.defaults(), "grand_slam_illegal": not oware.defaults()["grand_slam_illegal"]}
    words = _variant_words(oware, variant)
    assert words[:2] == ["--game", "oware"] and f"grand_slam_illegal={int(variant['grand_slam_illegal'])}" in words


def test_openings_exact_and_depth_together_refused(capsys):
    one_error_line(*run(capsys, "openings", "--exact", "--depth", 4), "exactly one")


def test_openings_exact_only_options_refused_with_depth(capsys):
    one_error_line(*run(capsys, "openings", "--depth", 4, "--max-nodes", 10), "--max-nodes applies with --exact only")


def test_openings_out_is_a_directory(capsys, tmp_path):
    one_error_line(*run(capsys, "openings", "--houses", 3, "--seeds", 3, "--depth", 4, "--out", tmp_path),
                   "is a directory")


def test_openings_ctrl_c_keeps_what_was_found(capsys, tmp_path, monkeypatch):
    real = suites.exact_value
    calls = {"n": 0}

    def exact_value(state, within, **kw):
        r = real(state, within, **kw)
        if r[1] == "inside":
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt
        return r

    monkeypatch.setattr(suites, "exact_value", exact_value)
    out = tmp_path / "partial.txt"
    code, stdout, err = run(capsys, "openings", "--houses", 3, "--seeds", 3, "--exact", "--count", 10,
                            "--endgame-seeds", 0, "--out", out, "--json")
    assert code == 130, err
    obj = json.loads(stdout)
    assert obj["interrupted"] is True and len(obj["openings"]) == 2
    assert len(suites.read_suite(out)) == 2
    assert err.strip().splitlines()[-1].startswith("interrupted: 2 of 10 openings were found")


# -- tournament --openings balanced ------------------------------------------------------------------------

def test_tournament_plays_the_shipped_suite(capsys):
    code, out, err = run(capsys, "tournament", "--game", "kalah", "--a", "random", "--b", "random", "--pairs", 1,
                         "--openings", "balanced", "--json")
    assert code == 0, err
    assert json.loads(out)["games"] == 2


def test_tournament_balanced_without_a_suite_is_one_line(capsys):
    code, out, err = run(capsys, "tournament", "--game", "kalah", "--houses", 4, "--seeds", 3, "--a", "random",
                         "--b", "random", "--pairs", 1, "--openings", "balanced")
    one_error_line(code, out, err, "no balanced opening suite is shipped for Kalah(4,3); there is one for Kalah(6,4)")


# -- openings --exact: the database's estimate, and what a Ctrl-C leaves -------------------------------------

@pytest.mark.parametrize("found", [0, 1])
def test_openings_ctrl_c_says_what_was_and_was_not_written(capsys, tmp_path, monkeypatch, found):
    """Ctrl-C while the endgame database is built (found=0) or after one
    opening: the last line says what was written, and never claims a file
    that was not; the database's size and time are announced before."""
    import jitsearch.games.kalah as kalah

    out = tmp_path / "o.txt"
    cache = tmp_path / "cache"
    if found == 0:
        def stop(*args, **kwargs):
            raise KeyboardInterrupt

        monkeypatch.setattr(kalah, "build_endgame_database", stop)
    else:
        real, calls = suites.exact_value, {"n": 0}

        def exact_value(state, within, **kw):
            r = real(state, within, **kw)
            calls["n"] += r[1] == "inside"
            if calls["n"] == 2:
                raise KeyboardInterrupt
            return r

        monkeypatch.setattr(suites, "exact_value", exact_value)
    code, stdout, err = run(capsys, "openings", "--houses", 3, "--seeds", 3, "--exact", "--count", 10,
                            "--endgame-seeds", 6, "--endgame-cache-dir", cache, "--out", out)
    assert code == 130, err
    assert "<= 6 seeds in the houses" in err and "on disk" in err and "of memory to build" in err
    last = err.strip().splitlines()[-1]
    if found == 0:
        assert "written to" not in stdout and not out.exists()
        assert last.startswith("interrupted: while the endgame database was built") and f"{out} was not written" in last
        assert not cache.exists() or list(cache.iterdir()) == []
    else:
        assert "1 openings" in stdout and len(suites.read_suite(out)) == 1
        assert last == f"interrupted: 1 of 10 openings were found and written to {out}"


def test_openings_files_with_a_byte_order_mark_are_read(tmp_path):
    """Editors on Windows save UTF-8 with a BOM: the first line is a position all the same."""
    text = "3,3,3/0/3,3,3/0 p0  # exact +0 plies 0 moves\n"
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert read_game_openings(path, "kalah", dict(houses=3, seeds=3, empty_capture=False)) == ("3,3,3/0/3,3,3/0 p0",)
    assert [o.position for o in suites.read_suite(path)] == ["3,3,3/0/3,3,3/0 p0"]

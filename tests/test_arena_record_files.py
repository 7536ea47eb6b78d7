"""Tournament record files under hostile conditions: damaged, edited and foreign
resume files, torn last lines, Ctrl-C, killed parents, unusable --out paths,
small samples and nonsense settings."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from jitsearch.arena.matches import run_kalah_tournament
from conftest import kalah_match as KalahMatch
from jitsearch.arena.game_match import summarize
from jitsearch.arena.legacy_records import LegacyMatch, LegacyRecords
from jitsearch.arena.random_tree_tournament import GameConfig, PlayerSpec, depth_increment_protocol, run_tournament
from jitsearch.arena.records import check_records, game_key_text, read_record_file, record_check

A, B = "alphabeta:depth=1", "random"
MATCH = KalahMatch(houses=3, seeds=2, openings=1, seed=5)
PAIRS = 3
#: A file of Kalah's older record format: the same match, played by the former ``KalahMatch`` (3 pairs).
LEGACY_FILE = Path(__file__).parent / "data" / "kalah_legacy.jsonl"
LEGACY_MATCH = LegacyMatch(houses=3, seeds=2, openings=1, seed=5)
TOTALS = ("games", "a_wins", "draws", "b_wins", "a_score", "mean_plies")

TREE = GameConfig(branching=3, random_branching=True, depth=5, seed=4)
PA, PB = PlayerSpec.parse("fe:depth=2,delta=0.5"), PlayerSpec.parse("alphabeta:depth=2")
TREE_PAIRS = 8
TREE_TOTALS = ("pairs", "a_wins", "b_wins", "ties", "nodes_a", "nodes_b")


def _totals(r, keys=TOTALS):
    return {k: r[k] for k in keys}


@pytest.fixture(scope="module")
def kalah_full(tmp_path_factory):
    """A finished Kalah tournament: (its summary, its file's lines)."""
    path = tmp_path_factory.mktemp("kalah") / "full.jsonl"
    result = run_kalah_tournament(A, B, MATCH, PAIRS, out=path)
    return result, path.read_text().splitlines()


@pytest.fixture(scope="module")
def tree_full(tmp_path_factory):
    path = tmp_path_factory.mktemp("tree") / "full.jsonl"
    result = run_tournament(PA, PB, TREE, TREE_PAIRS, out=path)
    return result, path.read_text().splitlines()


def _legacy(line: str) -> dict:
    """A record as files written before check values had it."""
    rec = json.loads(line)
    for key in ("check", "match", "game"):
        rec.pop(key, None)
    return rec


def _resume_kalah(path, **kw):
    return run_kalah_tournament(A, B, kw.pop("match", MATCH), PAIRS, out=path, resume=True, **kw)


def _check_legacy(path, match=LEGACY_MATCH, b=B):
    """Check a file of the older format as ``rate`` does (its records' own check, replay included)."""
    return check_records(read_record_file(path), LegacyRecords(A, b, match), game_key_text)


# -- 1. every kind of bad line names file:line and what is wrong -----------------------------

def _set(key, value):
    def edit(rec):
        rec[key] = value
        return rec
    return edit


def _drop(key):
    def edit(rec):
        del rec[key]
        return rec
    return edit


def _flip_result(rec):
    rec["a_result"] = {"win": "loss", "loss": "win", "draw": "win"}[rec["a_result"]]
    return rec


def _shift_margin(rec):
    rec["margin"] += 2
    return rec


def _edit_board(rec):
    if "final_board" in rec:  # the older format
        rec["final_board"][0] += 1
        rec["final_board"][-1] -= 1
    else:
        rec["final"] = rec["final"].replace("/", "/1", 1)
    return rec


def _illegal_move(rec):
    rec["moves"][0] = 99
    return rec


def _other_opening(rec):
    key = "opening" if "final_board" in rec else "opening_moves"  # the older format's opening is its plies
    rec[key] = [1] if rec[key] != [1] else [2]
    return rec


def _flip_capped(rec):
    rec["capped"] = not rec["capped"]
    return rec


def _more_plies(rec):
    rec["plies"] += 1
    return rec


def _swap_a_player(rec):
    rec["a_player"] = 1 - rec["a_player"]
    return rec


TYPE_ERRORS = [  # (edit of a sealed record, words): caught before the check value
    pytest.param(lambda rec: 5, "must be a JSON object", marks=pytest.mark.slow),
    (lambda rec: None, "must be a JSON object"),
    (lambda rec: [rec], "must be a JSON object"),
    (_drop("pair"), "missing key 'pair'"),
    (_set("pair", "3"), "pair must be an integer"),
    (_set("pair", True), "pair must be an integer"),
    (_set("pair", -1), "out of range"),
    (_set("pair", 10**12), "out of range"),
    (_set("seat", 2), "seat must be one of"),
    (_set("moves", "3,4"), "moves must be a list of integers"),
    (_set("capped", 0), "capped must be true or false"),
    (_set("a_result", "won"), "a_result must be one of"),
    (_set("check", 7), "check must be a string"),
]

CONSISTENCY_ERRORS = [  # (edit of a record without check value, words)
    (_flip_result, "a_result"),
    (_shift_margin, "margin"),
    (_edit_board, "final_board"),
    (_illegal_move, "not a legal move"),
    (_other_opening, "opening"),
    (_flip_capped, "capped"),
    (_more_plies, "plies"),
    (_swap_a_player, "a_player"),
]


def _write(path: Path, lines: list[str], newline=True) -> None:
    path.write_text("\n".join(lines) + ("\n" if newline else ""))


@pytest.mark.slow
@pytest.mark.parametrize("edit, words", TYPE_ERRORS)
def test_bad_record_is_refused_with_file_line(kalah_full, tmp_path, edit, words):
    _, lines = kalah_full
    path = tmp_path / "g.jsonl"
    bad = list(lines)
    bad[2] = json.dumps(edit(json.loads(bad[2])))
    _write(path, bad)
    before = path.read_bytes()
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: ") + ".*" + re.escape(words)) as info:
        _resume_kalah(path)
    assert len(str(info.value).splitlines()) == 1
    assert path.read_bytes() == before  # nothing played, nothing appended


@pytest.mark.parametrize("edit, words", CONSISTENCY_ERRORS)
def test_edited_record_is_caught_with_or_without_check_value(kalah_full, tmp_path, edit, words):
    _, lines = kalah_full
    path = tmp_path / "g.jsonl"
    # sealed: any edit breaks the check value
    sealed = list(lines)
    sealed[1] = json.dumps(edit(json.loads(sealed[1])))
    _write(path, sealed)
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: ") + ".*check value"):
        _resume_kalah(path)
    # an older file (Kalah's older format, no check values): the replay of the moves catches it
    lines = LEGACY_FILE.read_text().splitlines()
    legacy = [json.dumps(_legacy(x)) for x in lines]
    legacy[1] = json.dumps(edit(_legacy(lines[1])))
    _write(path, legacy)
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: ") + ".*" + re.escape(words)):
        _check_legacy(path)


def test_older_files_without_check_values_read_but_do_not_resume(kalah_full, tmp_path):
    """Kalah's older record format: its records check out (replayed) without check values, as ``rate``
    reads them; a match does not resume from them (one line), the file left as it was."""
    lines = LEGACY_FILE.read_text().splitlines()
    path = tmp_path / "g.jsonl"
    _write(path, [json.dumps(_legacy(x)) for x in lines[:4]])
    assert [key for key, _ in _check_legacy(path)] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    before = path.read_bytes()
    with pytest.raises(ValueError, match="older format") as info:
        _resume_kalah(path)
    assert len(str(info.value).splitlines()) == 1 and path.read_bytes() == before
    assert all(r["check"] == record_check(r) for r in map(json.loads, kalah_full[1]))


def test_duplicate_non_json_and_invalid_utf8_lines(kalah_full, tmp_path):
    _, lines = kalah_full
    path = tmp_path / "g.jsonl"
    _write(path, lines[:3] + [lines[1]])
    with pytest.raises(ValueError, match=re.escape(f"{path}:4: duplicate game (pair 0, seat 1)") + ".*line 2"):
        _resume_kalah(path)
    _write(path, lines[:2] + ['{"pair": 1,'] + lines[2:])
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: not a JSON record")):
        _resume_kalah(path)
    path.write_bytes((lines[0] + "\n").encode() + b'{"pair": "\xff\xfe"}\n')
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: not valid UTF-8")):
        _resume_kalah(path)


def test_tree_file_bad_lines(tree_full, tmp_path):
    _, lines = tree_full
    path = tmp_path / "t.jsonl"

    def refused(bad_lines, line_no, words):
        _write(path, bad_lines)
        with pytest.raises(ValueError, match=re.escape(f"{path}:{line_no}: ") + ".*" + re.escape(words)):
            run_tournament(PA, PB, TREE, TREE_PAIRS, out=path, resume=True)

    refused(lines[:2] + ["5"] + lines[2:], 3, "must be a JSON object")
    refused(lines[:2] + ["null"], 3, "must be a JSON object")
    rec = json.loads(lines[1])
    del rec["winner"]
    refused([lines[0], json.dumps(rec)], 2, "missing key 'winner'")
    rec = json.loads(lines[1])
    rec["pair"] = "1"
    refused([lines[0], json.dumps(rec)], 2, "pair must be an integer")
    rec = json.loads(lines[1])
    rec["outcome_a_max"] += 1000.0
    refused([lines[0], json.dumps(rec)], 2, "check value")
    flipped = _legacy(lines[1])
    flipped["winner"] = {"a": "b", "b": "a", "tie": "a"}[flipped["winner"]]
    refused([lines[0], json.dumps(flipped)], 2, "winner")
    refused(lines[:3] + [lines[0]], 4, "duplicate game (pair 0)")
    # an older file without check values and tree settings resumes to the same totals
    _write(path, [json.dumps(_legacy(x)) for x in lines[:5]])
    resumed = run_tournament(PA, PB, TREE, TREE_PAIRS, out=path, resume=True)
    assert _totals(resumed, TREE_TOTALS) == _totals(tree_full[0], TREE_TOTALS)


# -- 2. a file of another tournament is refused in one line -------------------------------------

@pytest.mark.parametrize("other, words", [
    (dict(match=KalahMatch(houses=3, seeds=2, openings=1, seed=6)), "seed 5 in the file, 6 here"),
    (dict(match=KalahMatch(houses=4, seeds=2, openings=1, seed=5)), "houses 3 in the file, 4 here"),
    (dict(match=KalahMatch(houses=3, seeds=2, openings=1, seed=5, empty_capture=True)), "empty_capture"),
    (dict(match=KalahMatch(houses=3, seeds=2, openings=0, seed=5)), "openings 1 in the file, 0 here"),
    (dict(b="alphabeta:depth=2"), "players"),
])
def test_foreign_kalah_file_is_refused(kalah_full, tmp_path, other, words):
    _, lines = kalah_full
    path = tmp_path / "g.jsonl"
    for legacy in (False, True):
        _write(path, [json.dumps(_legacy(x)) if legacy else x for x in lines[:3]])
        before = path.read_bytes()
        with pytest.raises(ValueError) as info:
            run_kalah_tournament(A, other.get("b", B), other.get("match", MATCH), PAIRS, out=path, resume=True)
        msg = str(info.value)
        assert msg.startswith(f"{path} holds games of another tournament") and len(msg.splitlines()) == 1, msg
        assert (words if not legacy else "older format") in msg
        assert path.read_bytes() == before
        with pytest.raises(ValueError, match="another tournament"):  # not appended to without --resume either
            run_kalah_tournament(A, other.get("b", B), other.get("match", MATCH), PAIRS, out=path)
    # a file of the older format is checked against its own match: another's is refused, naming what differs
    older = LEGACY_FILE.read_text().splitlines()[:3]
    _write(path, older)
    if "match" in other:
        m = other["match"]
        legacy_other = {"match": LegacyMatch(m.options["houses"], m.options["seeds"], m.options["empty_capture"],
                                             300, m.openings, m.seed)}
    else:
        legacy_other = {"b": other["b"]}
    with pytest.raises(ValueError, match="another tournament") as info:
        _check_legacy(path, **legacy_other)
    assert words in str(info.value)
    # older files without their settings say what they can: a board of another size
    _write(path, [json.dumps(_legacy(x)) for x in older])
    with pytest.raises(ValueError, match="boards of 3 houses a side in the file, 4 here"):
        _check_legacy(path, match=LegacyMatch(houses=4, seeds=2, openings=1, seed=5))


def test_foreign_tree_file_is_refused(tree_full, tmp_path):
    _, lines = tree_full
    path = tmp_path / "t.jsonl"
    cases = [
        (PA, PB, GameConfig(branching=3, random_branching=True, depth=6, seed=4), None, "depth 5 in the file, 6 here"),
        (PA, PB, GameConfig(branching=3, random_branching=True, depth=5, seed=9), None, "seed 4 in the file, 9 here"),
        (PA, PlayerSpec("alphabeta", 3), TREE, None, "players"),
        (PA, PB, TREE, 0, "depth-increment protocol"),
    ]
    for legacy in (False, True):
        _write(path, [json.dumps(_legacy(x)) if legacy else x for x in lines[:3]])
        for a, b, config, round_no, words in cases:
            with pytest.raises(ValueError) as info:
                run_tournament(a, b, config, TREE_PAIRS, out=path, resume=True, round_no=round_no)
            msg = str(info.value)
            assert msg.startswith(f"{path} holds games of another tournament") and len(msg.splitlines()) == 1
            if legacy and "in the file" in words:  # older records carry a hash of the tree settings only
                words = "seed" if "seed" in words else "trees differ"
            assert words in msg, msg
    assert len(path.read_text().splitlines()) == 3


# -- 3. a torn last line is dropped, and resume gives the uninterrupted totals -------------------

def test_torn_last_line_is_dropped_and_resume_matches(kalah_full, tmp_path):
    full, lines = kalah_full
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25])
    resumed = _resume_kalah(path)
    assert _totals(resumed) == _totals(full)
    assert any("incomplete last line" in n and f"{path}:4" in n for n in resumed["notes"])
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    assert sorted((r["pair"], r["seat"]) for r in recs) == [(p, s) for p in range(PAIRS) for s in (0, 1)]
    # a complete last record that only lacks its newline is kept, and the next one goes on a new line
    _write(path, lines[:3], newline=False)
    resumed = _resume_kalah(path)
    assert _totals(resumed) == _totals(full) and "notes" not in resumed
    assert len([json.loads(x) for x in path.read_text().splitlines()]) == 2 * PAIRS


def test_resume_with_fewer_pairs_than_the_file_is_refused(kalah_full, tmp_path):
    """A file holding games of pairs beyond the pairs asked for: one line saying how many to ask for, not a
    result that leaves its games out without a word; the file is left as it was."""
    _, lines = kalah_full
    path = tmp_path / "g.jsonl"
    _write(path, lines)
    with pytest.raises(ValueError) as err:
        run_kalah_tournament(A, B, MATCH, PAIRS - 1, out=path, resume=True)
    msg = str(err.value)
    assert "\n" not in msg and f"holds games of {PAIRS} pairs, more than the {PAIRS - 1} asked for" in msg
    assert f"ask for {PAIRS} pairs or more" in msg and path.read_text().splitlines() == lines


def test_tree_resume_with_fewer_pairs_than_the_file_is_refused(tree_full, tmp_path):
    _, lines = tree_full
    path = tmp_path / "t.jsonl"
    _write(path, lines)
    with pytest.raises(ValueError, match=f"holds {TREE_PAIRS} pairs, more than the {TREE_PAIRS - 2} asked for"):
        run_tournament(PA, PB, TREE, TREE_PAIRS - 2, out=path, resume=True)
    assert path.read_text().splitlines() == lines


# -- 4. Ctrl-C returns the finished games, and resume finishes the rest --------------------------

class _StopAfter:
    """A progress callback that presses Ctrl-C once ``k`` games are done."""

    def __init__(self, k):
        self.k = k

    def __call__(self, done, total):
        if done >= self.k:
            raise KeyboardInterrupt


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_interrupted_kalah_tournament_returns_partial_and_resumes(kalah_full, tmp_path, workers):
    full, _ = kalah_full
    path = tmp_path / "g.jsonl"
    part = run_kalah_tournament(A, B, MATCH, PAIRS, out=path, workers=workers, progress=_StopAfter(3))
    assert part["interrupted"] is True and part["games"] == 3 == len(path.read_text().splitlines())
    assert part["a_wins"] + part["draws"] + part["b_wins"] == 3
    assert part["elo_diff"] is None and "3 games" in part["elo_note"]
    deadline = time.monotonic() + 3
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()  # the workers were ended, not left behind
    resumed = run_kalah_tournament(A, B, MATCH, PAIRS, out=path, resume=True, workers=workers)
    assert _totals(resumed) == _totals(full) and resumed["interrupted"] is False


def test_ctrl_c_stops_running_games_promptly(tmp_path):
    # each move of B takes seconds: a real SIGINT must not wait for the games running in the workers
    import threading

    slow = KalahMatch(houses=6, seeds=6, seed=1)
    run_kalah_tournament("random", "random", slow, 1, workers=2)  # the pool machinery works, imports warm
    sent = {}

    def press_ctrl_c():
        sent["at"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(1.5, press_ctrl_c)
    timer.start()
    try:
        r = run_kalah_tournament("random", "alphabeta:depth=18", slow, 4, out=tmp_path / "g.jsonl", workers=2)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - sent["at"]
    assert r["interrupted"] is True and elapsed < 2.5, elapsed
    assert r["games"] == len((tmp_path / "g.jsonl").read_text().splitlines()) < 8
    deadline = time.monotonic() + 2
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()


def test_interrupted_tree_tournament_and_protocol_resume(tree_full, tmp_path):
    full, _ = tree_full
    path = tmp_path / "t.jsonl"
    part = run_tournament(PA, PB, TREE, TREE_PAIRS, out=path, progress=_StopAfter(3))
    assert part["interrupted"] is True and part["pairs"] == 3 and part["pairs_planned"] == TREE_PAIRS
    resumed = run_tournament(PA, PB, TREE, TREE_PAIRS, out=path, resume=True)
    assert _totals(resumed, TREE_TOTALS) == _totals(full, TREE_TOTALS)

    config = GameConfig(branching=3, random_branching=True, depth=5, seed=8)
    kw = dict(max_horizon=3, out=tmp_path / "p.jsonl")
    fresh = depth_increment_protocol(PA, PB, config, 6, max_horizon=3)
    calls = []

    def stop_in_round_2(r, done, total):
        calls.append(r)
        if r == 1 and done == 2:
            raise KeyboardInterrupt

    cut = depth_increment_protocol(PA, PB, config, 6, progress=stop_in_round_2, **kw)
    assert len(cut) == 2 and cut[-1]["interrupted"] is True and cut[-1]["incremented"] is None
    assert cut[-1]["pairs"] == 2 and cut[0]["interrupted"] is False
    again = depth_increment_protocol(PA, PB, config, 6, resume=True, **kw)
    keys = TREE_TOTALS + ("horizon_a", "horizon_b", "incremented")
    assert [_totals(r, keys) for r in again] == [_totals(r, keys) for r in fresh]


_CHILD = textwrap.dedent("""
    import sys
    from jitsearch.arena.matches import match_of, run_kalah_tournament
    run_kalah_tournament("random", "alphabeta:depth=18", match_of("kalah", dict(houses=6, seeds=6)), 50, workers=2)
""")


def _children(pid: int) -> list[int]:
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return [p.pid for p in psutil.Process(pid).children()]
        except psutil.NoSuchProcess:
            return []
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_workers_exit_when_the_parent_is_killed():
    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline and child.poll() is None:
            workers = [p for p in _children(child.pid) if _alive(p)]
            if len(workers) >= 2:
                break
            time.sleep(0.1)
        assert len(workers) >= 2, child.stderr.read().decode() if child.poll() is not None else "no workers"
        time.sleep(0.3)  # let the workers finish their initializer
        os.kill(child.pid, signal.SIGKILL)
        child.wait(5)
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for p in workers:  # a failed run leaves no orphans behind
            if _alive(p):
                os.kill(p, signal.SIGKILL)


# -- 5. unusable --out paths are refused before any game ------------------------------------------

def test_out_that_cannot_be_written_is_refused_before_playing(tmp_path):
    played = []

    def progress(*args):
        played.append(args)

    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    bad = [(tmp_path, "is a directory"), (blocker / "g.jsonl", "cannot create the folder")]
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        bad.append((ro / "g.jsonl", "cannot write"))
    for out, words in bad:
        with pytest.raises(ValueError, match=words):
            run_kalah_tournament(A, B, MATCH, PAIRS, out=out, progress=progress)
        with pytest.raises(ValueError, match=words):
            run_tournament(PA, PB, TREE, TREE_PAIRS, out=out, progress=lambda *a: played.append(a))
    assert played == []


# -- 6. small samples give no infinite Elo --------------------------------------------------------

def _recs(results):
    return [{"a_result": r, "plies": 10, "capped": False} for r in results]


def test_small_samples_have_no_elo_but_a_real_interval():
    s = summarize(_recs(["win", "win"]))
    assert s["a_score"] == 1.0 and s["elo_diff"] is None and s["elo_ci95"] == [None, None]
    assert s["elo_note"] == "sample too small for an Elo estimate (2 games, all won by A)"
    lo, hi = s["a_score_ci95"]
    assert 0.2 < lo < 0.7 and hi == 1.0  # Wilson: not the zero-width 1.000-1.000
    s = summarize(_recs(["win", "draw", "loss"] * 3))
    assert s["elo_diff"] is None and "9 games, A 3, draws 3, B 3" in s["elo_note"]
    s = summarize(_recs(["loss"] * 12))
    assert s["elo_diff"] is None and s["elo_ci95"][0] is None and -1000 < s["elo_ci95"][1] < 0
    assert "all won by B" in s["elo_note"] and "<=" in s["elo_note"]
    s = summarize(_recs(["win"] * 12))
    assert s["elo_ci95"][1] is None and 0 < s["elo_ci95"][0] < 1000
    s = summarize(_recs(["win"] * 7 + ["draw"] * 2 + ["loss"] * 3))
    assert s["elo_note"] is None and s["elo_ci95"][0] < s["elo_diff"] < s["elo_ci95"][1]
    assert s["elo_diff"] == pytest.approx(400 * math.log10(8 / 4))
    empty = summarize([])
    assert empty["games"] == 0 and empty["elo_diff"] is None and empty["elo_note"] == "no games finished"
    for x in (s, empty):
        json.dumps(x, allow_nan=False)  # no inf or NaN in the JSON


def test_two_game_tournament_reports_no_elo():
    r = run_kalah_tournament(A, B, MATCH, 1)
    assert r["games"] == 2 and r["elo_diff"] is None and r["elo_ci95"] == [None, None]
    assert "sample too small" in r["elo_note"] and r["a_score_ci95"][1] - r["a_score_ci95"][0] > 0.3
    json.dumps(r, allow_nan=False)


# -- 7. nonsense settings ---------------------------------------------------------------------------

@pytest.mark.parametrize("kw, words", [
    (dict(openings=100000), "below max_plies"),
    (dict(max_plies=-1), "max_plies"),
    (dict(max_plies=True), "max_plies"),
    (dict(max_plies=2.5), "max_plies"),
    (dict(openings=-1), "openings"),
    (dict(openings=True), "openings"),
    (dict(empty_capture=1), "empty_capture"),
    (dict(seed=-1), "seed"),
    (dict(seed=1.0), "seed"),
    (dict(houses=True), "houses"),
])
def test_kalah_match_rejects_nonsense(kw, words):
    with pytest.raises(ValueError, match=words):
        KalahMatch(**{"houses": 3, "seeds": 2, **kw}).check()


def test_openings_that_end_the_game_are_refused():
    # Kalah(1,1): the only move sows into the store and empties the side: the game is over
    with pytest.raises(ValueError, match="end the game in pair 0"):
        run_kalah_tournament(A, B, KalahMatch(houses=1, seeds=1, openings=1, max_plies=10), 2)


@pytest.mark.parametrize("kw, words", [
    (dict(pairs=0), "pairs"), (dict(pairs=True), "pairs"), (dict(pairs=2.0), "pairs"), (dict(pairs=10**9), "pairs"),
    (dict(workers=0), "workers"), (dict(workers=True), "workers"), (dict(workers=1.5), "workers"),
    (dict(workers=10**6), "workers"), (dict(a="human"), "engines"), (dict(a=None), "spec string"),
])
def test_kalah_tournament_arguments(kw, words):
    args = {"a": A, "b": B, "pairs": 1, "workers": 1, **kw}
    with pytest.raises(ValueError, match=words):
        run_kalah_tournament(args["a"], args["b"], MATCH, args["pairs"], workers=args["workers"])


@pytest.mark.parametrize("build, words", [
    (lambda: GameConfig(depth=0), "depth"),
    (lambda: GameConfig(depth=True), "depth"),
    (lambda: GameConfig(branching=True), "branching"),
    (lambda: GameConfig(branching=2.0), "branching"),
    (lambda: GameConfig(random_branching=1), "random_branching"),
    (lambda: GameConfig(seed=-3), "seed"),
    (lambda: PlayerSpec("alphabeta", True).check(), "horizon"),
    (lambda: PlayerSpec("alphabeta", 0).check(), "horizon"),
    (lambda: PlayerSpec("fe", 2, True).check(), "delta"),
    (lambda: PlayerSpec.parse("fe:depth=2,depth=3"), "twice"),
    (lambda: PlayerSpec.parse("fe:bounds=a/b"), "bounds"),
    (lambda: PlayerSpec.parse("fe:bounds=5/1"), "bounds"),
    (lambda: run_tournament(PA, PB, TREE, 0), "pairs"),
    (lambda: run_tournament(PA, PB, TREE, True), "pairs"),
    (lambda: run_tournament(PA, PB, TREE, 2, round_no=-1), "round_no"),
    (lambda: run_tournament("alphabeta", PB, TREE, 2), "PlayerSpec"),
    (lambda: run_tournament(PlayerSpec("alphabeta", 40), PB, GameConfig(branching=100, depth=40), 1), "nodes a move"),
    (lambda: depth_increment_protocol(PA, PB, TREE, 2, max_horizon=0), "max_horizon"),
    (lambda: depth_increment_protocol(PA, PB, TREE, 2, max_rounds=2.5), "max_rounds"),
    (lambda: depth_increment_protocol(PA, PB, GameConfig(branching=50, depth=30), 2, max_horizon=30),
     "nodes a move"),
])
def test_tree_game_rejects_nonsense(build, words):
    with pytest.raises(ValueError, match=words):
        build()

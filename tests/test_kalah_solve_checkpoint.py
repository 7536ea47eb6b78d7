"""Exact Kalah solves that survive interruption (a checkpoint of the table,
the MTD(f) bounds and the test in progress), and the endgame database's
enhanced transposition cutoffs: both change how the work is done, never
the answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.solver import solve_exact
from jitsearch.games.kalah.checkpoint import STATE_FILE
from conftest import kill_when_ready
from test_kalah_search import _random_positions, brute_force_margin

_SAME = ("margin", "nodes", "iterations", "best_move", "lower", "upper", "first_guess")


def _run_in_pieces(state, path, chunks, monkeypatch, **kw):
    """Solve, stopping each run by a Ctrl-C after ``chunks`` kernel calls
    (the progress callback raises it: with no gap between progress calls
    it is called before every chunk) and resuming from the checkpoint until
    complete; (result, runs)."""
    import jitsearch.games.kalah.solver as ks

    monkeypatch.setattr(ks, "_PROGRESS_SECONDS", 0.0)

    def interrupter():
        calls = [0]

        def progress(*args):
            calls[0] += 1
            if calls[0] > chunks:
                raise KeyboardInterrupt

        return progress

    r = solve_exact(state, checkpoint=path, progress=interrupter(), **kw)
    runs = 1
    while not r["complete"]:
        assert r["stop_reason"] == "interrupted" and os.path.exists(path / STATE_FILE)
        r = solve_exact(state, checkpoint=path, resume=True, progress=interrupter(), **kw)
        runs += 1
        assert runs < 500
    return r, runs


@pytest.mark.parametrize("empty_capture", [pytest.param(False, marks=pytest.mark.slow), True])
def test_a_solve_resumed_many_times_equals_one_run_node_for_node(tmp_path, monkeypatch, empty_capture):
    state = KalahState.initial(4, 4, empty_capture=empty_capture)
    kw = dict(chunk_nodes=3000, first_guess=-6, tt_capacity=1 << 14)
    whole = solve_exact(state, **kw)
    pieces, runs = _run_in_pieces(state, tmp_path / "ck", 7, monkeypatch, **kw)
    assert runs >= 3  # it really was cut, mid-test too
    assert {k: pieces[k] for k in _SAME} == {k: whole[k] for k in _SAME}
    assert pieces["resumed"] and pieces["total_seconds"] >= pieces["seconds"]
    # a finished checkpoint answers at once, with the same result
    again = solve_exact(state, checkpoint=tmp_path / "ck", resume=True, **kw)
    assert {k: again[k] for k in _SAME} == {k: whole[k] for k in _SAME}


@pytest.mark.slow
def test_a_checkpointed_solve_with_an_endgame_database_resumes_exactly(tmp_path, monkeypatch):
    state = KalahState.initial(3, 4, empty_capture=False)
    db = build_endgame_database(3, 4, False)
    kw = dict(chunk_nodes=50, endgame_db=db, tt_capacity=1 << 6, first_guess=12)
    whole = solve_exact(state, **kw)
    pieces, runs = _run_in_pieces(state, tmp_path / "ck", 5, monkeypatch, **kw)
    assert runs >= 3
    assert {k: pieces[k] for k in _SAME} == {k: whole[k] for k in _SAME}
    assert whole["margin"] == brute_force_margin(state)


def test_checkpoint_refusals(tmp_path):
    state = KalahState.initial(3, 3)
    ck = tmp_path / "ck"
    solve_exact(state, checkpoint=ck, tt_capacity=1 << 10)
    with pytest.raises(ValueError, match="already holds a solve"):
        solve_exact(state, checkpoint=ck, tt_capacity=1 << 10)
    with pytest.raises(ValueError, match="another solve: .*table_slots"):
        solve_exact(state, checkpoint=ck, resume=True, tt_capacity=1 << 12)
    with pytest.raises(ValueError, match="another solve: .*position"):
        solve_exact(KalahState.initial(3, 2), checkpoint=ck, resume=True, tt_capacity=1 << 10)
    with pytest.raises(ValueError, match="another solve: .*empty_capture"):
        solve_exact(KalahState.initial(3, 3, empty_capture=True), checkpoint=ck, resume=True, tt_capacity=1 << 10)
    with pytest.raises(ValueError, match="needs a checkpoint"):
        solve_exact(state, resume=True)
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        solve_exact(state, checkpoint=f)
    with pytest.raises(ValueError, match="checkpoint_seconds"):
        solve_exact(state, checkpoint=tmp_path / "new", checkpoint_seconds=0)
    # resume with nothing saved yet starts afresh
    r = solve_exact(state, checkpoint=tmp_path / "fresh", resume=True, tt_capacity=1 << 10)
    assert r["complete"] and not r["resumed"] and r["margin"] == brute_force_margin(state)


def _checkpoint_after_a_cut(tmp_path):
    state = KalahState.initial(4, 4)
    ck = tmp_path / "ck"
    r = solve_exact(state, checkpoint=ck, time_limit=0.05, chunk_nodes=2000, tt_capacity=1 << 12)
    assert not r["complete"]
    return state, ck


def test_a_damaged_table_is_refused(tmp_path):
    state, ck = _checkpoint_after_a_cut(tmp_path)
    (table,) = ck.glob("table-*.bin")
    raw = bytearray(table.read_bytes())
    raw[len(raw) // 2] ^= 1
    table.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="checksum"):
        solve_exact(state, checkpoint=ck, resume=True, tt_capacity=1 << 12)
    table.write_bytes(bytes(raw[:-8]))
    with pytest.raises(ValueError, match="truncated"):
        solve_exact(state, checkpoint=ck, resume=True, tt_capacity=1 << 12)
    table.unlink()
    with pytest.raises(ValueError, match="missing"):
        solve_exact(state, checkpoint=ck, resume=True, tt_capacity=1 << 12)


def test_an_edited_or_torn_state_file_is_refused(tmp_path):
    state, ck = _checkpoint_after_a_cut(tmp_path)
    sfile = ck / STATE_FILE
    saved = json.loads(sfile.read_text())
    saved["progress"]["record"][0] += 2  # a tighter bound than was proved
    sfile.write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="edited"):
        solve_exact(state, checkpoint=ck, resume=True, tt_capacity=1 << 12)
    sfile.write_text(sfile.read_text()[:100])
    with pytest.raises(ValueError, match="not JSON"):
        solve_exact(state, checkpoint=ck, resume=True, tt_capacity=1 << 12)


@pytest.mark.slow
def test_a_killed_cli_solve_resumes_to_the_same_nodes_and_margin(tmp_path):
    ck = tmp_path / "ck"
    cmd = [sys.executable, "-m", "jitsearch", "solve", "--game", "kalah", "--houses", "4", "--seeds", "5",
           "--checkpoint", str(ck), "--checkpoint-every", "0.05", "--json"]
    kill_when_ready(cmd, lambda: (ck / STATE_FILE).exists())
    out = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    resumed = json.loads(out.stdout)
    whole = solve_exact(KalahState.initial(4, 5))
    assert resumed["margin"] == whole["margin"] == 4 and resumed["nodes"] == whole["nodes"]
    assert resumed["resumed"]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=60)  # without --resume: refused
    assert again.returncode == 2 and "--resume" in again.stderr


@pytest.mark.parametrize("empty_capture", [False, True])
@pytest.mark.slow
def test_database_cutoffs_change_the_work_never_the_margin(empty_capture):
    db = build_endgame_database(3, 5, empty_capture)
    positions = _random_positions(10, m=3, n=3, seed=11 + empty_capture, empty_capture=empty_capture)
    positions.append(KalahState.initial(3, 3, empty_capture=empty_capture))
    nodes = {}
    for pos in positions:
        want = brute_force_margin(pos)
        for window in (-1, 0, 2, 30):
            r = solve_exact(pos, endgame_db=db, db_etc_window=window, tt_capacity=1 << 10)
            assert r["margin"] == want, (pos.to_text(), window)
            if not pos.is_over:
                assert brute_force_margin(pos.play(r["best_move"])) == want
            nodes[window] = nodes.get(window, 0) + r["nodes"]
    assert nodes[30] < nodes[-1]  # the cutoffs are taken
    for pos in positions[:4]:  # prefetching is a hint: the same nodes, value and move
        kw = dict(endgame_db=db, tt_capacity=1 << 10)
        on, off = solve_exact(pos, prefetch=True, **kw), solve_exact(pos, prefetch=False, **kw)
        assert (on["margin"], on["nodes"], on["best_move"]) == (off["margin"], off["nodes"], off["best_move"])
    with pytest.raises(ValueError, match="db_etc_window"):
        solve_exact(positions[0], db_etc_window=-2)
    with pytest.raises(ValueError, match="prefetch"):
        solve_exact(positions[0], prefetch=1)

"""The solve command under hostile use: checkpoints that could
not be saved are refused before the work, a resume with nothing saved
says so, a damaged database is one warning line and the right answer,
a closed stdout is no failure, and a cold start says it is compiling."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import jitsearch.games.kalah.endgame_files as ef
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.solver import solve_exact

CLI = [sys.executable, "-m", "jitsearch"]


def _cli(*args, timeout=300, env=None, **kw):
    return subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                          env=env, **kw)


def _one_error_line(out, *words):
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = [x for x in out.stderr.splitlines() if x.strip()]
    assert lines and lines[-1].startswith("error:") and "Traceback" not in out.stderr, out.stderr
    for w in words:
        assert w in lines[-1], (w, lines[-1])


@pytest.mark.slow
def test_an_unwritable_checkpoint_is_refused_before_the_solve(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    out = _cli("solve", "--game", "kalah", "--houses", "4", "--seeds", "5", "--checkpoint", a_file / "ck",
               timeout=60)
    _one_error_line(out, "cannot write the checkpoint directory", str(a_file / "ck"))
    assert "test 1" not in out.stderr  # refused before the first test
    out = _cli("solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--all-moves", "--checkpoint",
               a_file / "moves.jsonl", timeout=60)
    _one_error_line(out, "cannot write", "moves.jsonl")
    with pytest.raises(ValueError, match="cannot write the checkpoint directory"):  # the API too
        solve_exact(KalahState.initial(3, 3), checkpoint=a_file / "ck")


@pytest.mark.slow
def test_a_resume_with_nothing_saved_says_it_starts_afresh(tmp_path):
    out = _cli("solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--checkpoint", tmp_path / "nosuch",
               "--resume", "--json")
    assert out.returncode == 0, out.stderr
    assert "nothing to resume in" in out.stderr and "starting afresh" in out.stderr
    assert json.loads(out.stdout)["margin"] == solve_exact(KalahState.initial(3, 3))["margin"]
    out = _cli("solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--all-moves", "--checkpoint",
               tmp_path / "nosuch.jsonl", "--resume", "--json")
    assert out.returncode == 0 and "nothing to resume in" in out.stderr, out.stderr


@pytest.mark.slow
def test_a_damaged_database_is_one_warning_and_the_right_answer(tmp_path):
    """Through the CLI, with --endgame-cache-dir: each run is a new process,
    so each verifies the database before trusting it."""
    args = ["solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--endgame-seeds", "8",
            "--endgame-cache-dir", tmp_path, "--json"]
    first = _cli(*args)
    assert first.returncode == 0, first.stderr
    path = ef.cache_path(tmp_path, 3, 8, False)
    assert path.exists() and json.loads(first.stdout)["margin"] == solve_exact(KalahState.initial(3, 3))["margin"]
    st = path.stat()
    values = np.load(path)
    with open(path, "r+b") as fh:  # every value negated in place, size and mtime kept
        fh.seek(st.st_size - values.nbytes)
        fh.write((-values).astype(np.int8).tobytes())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    out = _cli(*args)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    warning = [x for x in out.stderr.splitlines() if x.startswith("warning:")]
    assert len(warning) == 1 and "checksum mismatch" in warning[0] and "rebuilding" in warning[0], out.stderr
    assert json.loads(out.stdout)["margin"] == json.loads(first.stdout)["margin"]


def test_endgame_cache_dir_conflicts_are_refused(tmp_path):
    out = _cli("solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--endgame-seeds", "4",
               "--endgame-cache-dir", tmp_path, "--no-endgame-cache", timeout=60)
    _one_error_line(out, "--endgame-cache-dir")
    out = _cli("solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--endgame-cache-dir", tmp_path,
               timeout=60)
    _one_error_line(out, "--endgame-seeds")


@pytest.mark.parametrize("args", [
    pytest.param(["solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--json"], marks=pytest.mark.slow),
    ["solve", "--random", "uniform", "--height", "4", "--json"],
    ["solve", "--random", "uniform", "--height", "4"],
])
def test_a_closed_stdout_is_no_failure(args):
    """``jitsearch solve --json | head -c 0``: the reader went away; exit 0, nothing on stderr."""
    proc = subprocess.Popen(CLI + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "error" not in err.lower(), err


@pytest.mark.slow
def test_a_cold_start_says_it_is_compiling_and_moves_leave_it_out(tmp_path):
    """With an empty Numba cache, ``--all-moves`` prints the compile notice
    at once, and no move's time includes the compilation."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    out = _cli("solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--all-moves", "--json", env=env,
               timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[0].startswith("compiling"), out.stderr
    result = json.loads(out.stdout)
    assert result["compile_seconds"] > 1.0
    assert max(row["seconds"] for row in result["moves"]) < result["compile_seconds"] / 2

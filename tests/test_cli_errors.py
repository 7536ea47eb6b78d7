"""The command line under hostile input: exit codes, Ctrl-C, options that do
not apply, limits refused before any allocation, unwritable outputs, and the
README's own examples run as written."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jitsearch.cli.app import main

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("error: "), err
    assert "Traceback" not in err, err
    return lines[-1]


# -- options that do not apply ---------------------------------------------------------

CONFLICTS = [
    (["solve", "t.json", "--game", "kalah"], "TREE_FILE"),
    (["solve", "--game", "kalah", "--random", "uniform"], "--random"),
    (["solve", "--game", "kalah", "--algorithm", "fsss"], "--algorithm"),
    (["solve", "--game", "kalah", "--trace"], "--trace"),
    (["solve", "--game", "kalah", "--height", "3"], "--height"),
    (["solve", "--game", "kalah", "--max-leaves", "3"], "--max-leaves"),
    (["solve", "--game", "kalah", "--position", "3,3/0/3,3/0 p0", "--houses", "2"], "--houses"),
    (["solve", "--game", "kalah", "--position", "3,3/0/3,3/0 p0", "--seeds", "5"], "--seeds"),
    (["solve", "--random", "uniform", "--houses", "3"], "--houses"),
    (["solve", "--random", "uniform", "--time-limit", "3"], "--time-limit"),
    (["solve", "--random", "uniform", "--table-size", "64"], "--table-size"),
    (["solve", "--random", "uniform", "--empty-capture"], "--empty-capture"),
    (["solve", "--random", "incremental", "--height", "3"], "--height"),
    (["solve", "--random", "incremental", "--values", "binary"], "--values"),
    (["tournament", "--game", "kalah", "--a", "random", "--b", "random", "--tree-depth", "4"], "--tree-depth"),
    (["tournament", "--game", "kalah", "--a", "random", "--b", "random", "--depth-increment"], "--depth-increment"),
    (["tournament", "--game", "random-tree", "--houses", "4"], "--houses"),
    (["tournament", "--game", "random-tree", "--workers", "2"], "--workers"),
    (["tournament", "--game", "random-tree", "--max-horizon", "3"], "--max-horizon"),
    (["play", "--p0", "random", "--p1", "random", "--max-plies", "-1"], "--max-plies"),
    (["tournament", "--game", "kalah", "--a", "random", "--b", "random", "--pairs", "0"], "--pairs"),
]


@pytest.mark.parametrize("argv,option", CONFLICTS, ids=[" ".join(c[0][:4]) for c in CONFLICTS])
def test_options_that_do_not_apply_are_refused(capsys, tmp_path, argv, option):
    (tmp_path / "t.json").write_text("[[1, 2], [3, 4]]")
    argv = [str(tmp_path / a) if a == "t.json" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    line = one_error_line(err)
    assert option in line, line


# -- numbers and sizes refused before any work ------------------------------------------

LIMITS = [
    ["solve", "--random", "uniform", "--height", "1100"],
    ["solve", "--random", "uniform", "--height", "99999999999999999999999"],
    ["solve", "--random", "uniform", "--branching", "1", "--height", "100000000", "--max-memory", "100MiB"],
    ["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--time-limit", "inf"],
    ["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--time-limit", "1e300"],
    ["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--time-limit", "nan"],
    ["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--table-size", "1099511627776",
     "--max-memory", "64TiB"],
    ["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--table-size", "68719476736",
     "--max-memory", "4096GiB"],
    ["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--endgame-seeds", "-1"],
    ["solve", "--random", "uniform", "--algorithm", "fsss", "--max-seconds", "inf"],
    ["bench", "playouts", "--states", "1000000000000", "--backend", "cpu"],
    ["bench", "playouts", "--playouts", "100000000000000000000", "--backend", "cpu"],
    ["bench", "playouts", "--states", "100000000", "--backend", "cpu"],
    ["bench", "fsss-paper", "--heights", "1100"],
    ["bench", "throughput", "--heights", "10-24:0"],
]


@pytest.mark.parametrize("argv", LIMITS, ids=[" ".join(a[:1] + a[-2:]) for a in LIMITS])
def test_limits_refused_fast_with_one_line(capsys, argv):
    t0 = time.perf_counter()
    code, out, err = run(capsys, *argv)
    assert code == 2, (out, err)
    one_error_line(err)
    assert time.perf_counter() - t0 < 20  # refused, not attempted


def test_unwritable_outputs_refused_before_work(capsys, tmp_path):
    directory = tmp_path / "a_dir"
    directory.mkdir()
    for argv in (["tournament", "--game", "kalah", "--a", "random", "--b", "random", "--pairs", "1",
                  "--out", directory],
                 ["tournament", "--a", "alphabeta:depth=1", "--b", "alphabeta:depth=1", "--pairs", "1",
                  "--out", directory],
                 ["bench", "throughput", "--heights", "4", "--out", directory],
                 ["bench", "mcts", "--out", directory],
                 ["bench", "kalah", "--out", directory],
                 ["bench", "fsss-paper", "--heights", "4", "--out", tmp_path / "file.txt"]):
        (tmp_path / "file.txt").write_text("x")
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, out, err)
        one_error_line(err)
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        code, out, err = run(capsys, "tournament", "--game", "kalah", "--a", "random", "--b", "random",
                             "--pairs", "1", "--out", ro / "games.jsonl")
        assert code == 2 and "cannot write" in one_error_line(err)


@pytest.mark.slow
def test_fsss_paper_single_height_and_rerun_check(capsys, tmp_path):
    out_dir = tmp_path / "fp"
    args = ["bench", "fsss-paper", "--heights", "5", "--trees", "3", "--exp2-heights", "5", "--exp2-trees", "3",
            "--no-cost", "--workers", "1", "--out", out_dir]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "two heights" in (out_dir / "summary.md").read_text()
    t0 = time.perf_counter()
    code, out, err = run(capsys, *args)  # results exist, no --resume: refused at once
    assert code == 2 and "--resume" in one_error_line(err)
    assert time.perf_counter() - t0 < 5
    code, out, err = run(capsys, *args, "--resume")
    assert code == 0, err


def test_fe_paper_refuses_to_overwrite_before_computing(capsys, tmp_path):
    out_dir = tmp_path / "fe"
    out_dir.mkdir()
    (out_dir / "figure1_trees.csv").write_text("branching,depth\n2,2\n")
    t0 = time.perf_counter()
    code, out, err = run(capsys, "bench", "fe-paper", "--quick", "--out", out_dir)
    assert code == 2 and "--resume" in one_error_line(err)
    assert time.perf_counter() - t0 < 5


# -- exit status of an interrupt -----------------------------------------------------------

def test_interrupt_at_a_prompt_exits_130(capsys, monkeypatch):
    def ctrl_c(prompt=""):
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", ctrl_c)
    code, out, err = run(capsys, "play", "--p0", "human", "--p1", "random", "--houses", "3", "--seeds", "2")
    assert code == 130
    assert "interrupted" in err


def _cli(*args, **kw):
    env = dict(os.environ, PYTHONUNBUFFERED="1", **kw.pop("env", {}))
    return subprocess.Popen([sys.executable, "-m", "jitsearch", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, **kw)


def _interrupt_after(proc, ready: str | None, seconds: float, timeout: float = 60.0):
    """Wait until stderr shows ``ready`` (or ``seconds`` pass), send SIGINT;
    return (exit code, stdout, stderr, seconds from SIGINT to exit)."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    err = ""
    start = time.monotonic()
    if ready is not None:
        while time.monotonic() - start < timeout and ready not in err:
            if sel.select(timeout=0.5):
                line = proc.stderr.readline()
                if not line:
                    break
                err += line
        assert ready in err, err
    time.sleep(seconds)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, rest = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()  # never leave a search running after a failed test
        proc.communicate()
        raise
    return proc.returncode, out, err + rest, time.monotonic() - t0


@pytest.mark.slow
def test_ctrl_c_stops_a_tree_solve_quickly():
    code, out, err, took = _interrupt_after(
        _cli("solve", "--random", "uniform", "--branching", "2", "--height", "60", "--algorithm", "minimax"),
        None, 4.0)
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert took < 5.0  # well under 1 s alone; a loaded machine takes longer to print and exit


@pytest.mark.slow
def test_ctrl_c_stops_a_kalah_solve_with_bounds():
    code, out, err, took = _interrupt_after(
        _cli("solve", "--game", "kalah", "--houses", "6", "--seeds", "5", "--json"), "margin in", 1.0,
        timeout=90)
    assert code == 130, err
    assert took < 5.0  # well under 1 s alone; a loaded machine takes longer to print and exit
    obj = json.loads(out)
    assert obj["interrupted"] is True and obj["complete"] is False
    assert obj["lower"] is not None and obj["upper"] is not None and obj["lower"] <= obj["upper"]
    assert 1 <= obj["best_move"] <= 6
    assert "interrupted" in err and "Traceback" not in err


def _wait_for_records(proc, games, count: int, timeout: float = 240.0) -> None:
    """Poll until ``games`` holds ``count`` records (an observable event, not a
    fixed sleep: a loaded machine may take long to start a cluster)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None and (
            not games.exists() or games.read_text().count("\n") < count):
        time.sleep(0.1)
    if proc.poll() is not None or not games.exists() or games.read_text().count("\n") < count:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"no {count} records after {timeout:g} s (exit {proc.returncode}): {err[-2000:]}")


def _sigint(proc, timeout: float = 60.0):
    """SIGINT; (stdout, stderr, seconds to exit)."""
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return out, err, time.monotonic() - t0


@pytest.mark.slow
def test_ctrl_c_stops_a_tournament_and_resume_continues(tmp_path):
    # 400 games: far more than a run plays before its Ctrl-C, even on a fast machine
    games = tmp_path / "games.jsonl"
    args = ["tournament", "--game", "kalah", "--a", "mcts:iterations=3000", "--b", "mcts:iterations=3000",
            "--houses", "4", "--seeds", "3", "--pairs", "200", "--workers", "2", "--out", games, "--json"]
    proc = _cli(*args)
    _wait_for_records(proc, games, 2)
    out, err, took = _sigint(proc)
    assert proc.returncode == 130, err
    assert took < 15, took  # about 1 s; a loaded machine may take longer to close the cluster
    assert "Traceback" not in err
    obj = json.loads(out)
    assert obj["interrupted"] is True
    played = obj["games"]
    assert 2 <= played < 400
    assert len(games.read_text().splitlines()) == played
    # --resume keeps those games and plays more
    proc = _cli(*args, "--resume")
    _wait_for_records(proc, games, played + 1)
    out, err, took = _sigint(proc)
    assert proc.returncode == 130, err
    assert took < 15, took
    again = json.loads(out)["games"]
    assert played < again < 400
    assert len(games.read_text().splitlines()) == again


# -- JIT: fast start, a notice when compiling, search time apart from compile time ---------

def test_cli_import_does_not_load_numba():
    code = ("import sys, jitsearch, jitsearch.cli.app; "
            "assert 'numba' not in sys.modules, 'numba imported'; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr


@pytest.mark.slow
def test_compiling_notice_only_when_compiling(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    args = ["solve", "--random", "uniform", "--branching", "2", "--height", "4", "--json"]
    first = subprocess.run([sys.executable, "-m", "jitsearch", *args], capture_output=True, text=True,
                           env=dict(os.environ, **env))
    second = subprocess.run([sys.executable, "-m", "jitsearch", *args], capture_output=True, text=True,
                            env=dict(os.environ, **env))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "compiling (first run only)" in first.stderr
    assert "compiling" not in second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["compile_seconds"] > b["compile_seconds"]
    assert a["value"] == b["value"]


# -- the README, as written ---------------------------------------------------------------

def _readme_blocks(lang):
    text = (ROOT / "README.md").read_text()
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


@pytest.mark.slow
def test_readme_python_blocks_run_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    ran = 0
    for i, block in enumerate(_readme_blocks("python")):
        if "cuda" in block:  # needs a GPU; the CUDA paths are tested in test_gpu.py
            continue
        if "openspiel" in block or "pyspiel" in block:  # the extra; run when it is installed
            try:
                import pyspiel  # noqa: F401
            except ImportError:
                continue
        exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        ran += 1
    assert ran >= 4


def _runnable_cli_lines():
    """`jitsearch solve/play/tournament` lines of the README without
    placeholders ([...], a|b, N, DIR), as written."""
    lines = []
    for block in _readme_blocks("bash"):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if not line.startswith("jitsearch ") or line.endswith("\\"):
                continue
            if re.search(r"\[|\||\bN\b|\bDIR\b|\bTEXT\b|\bS\b", line):
                continue
            if any(w in line for w in ("bench", "human", "openspiel", "--pairs 200", "--pairs 100", "cuda", "analyse", "--seeds 5", "--height 22",
                                       "--houses 6 --seeds 4")):
                continue  # long runs; covered by their own tests
            lines.append(line)
    return lines


@pytest.mark.slow
def test_readme_cli_lines_run_as_written(tmp_path, monkeypatch, capsys):
    import shlex

    monkeypatch.chdir(tmp_path)
    import jitsearch as js

    # the README's tree.json (written by its Python block) and losses.json
    js.ExplicitTree.from_nested([[3, 5], [2, [9, 1]]]).save_json("tree.json")
    lines = _runnable_cli_lines()
    assert len(lines) >= 5, lines
    for line in lines:
        argv = shlex.split(line)[1:]
        if "losses.json" in argv:
            exec(compile(_losses_block(), "README losses", "exec"), {})
        code, out, err = run(capsys, *argv)
        assert code == 0, (line, err)


def _losses_block():
    for block in _readme_blocks("python"):
        if "losses.json" in block:
            return block
    return ""


def test_compile_notice_spins_on_a_terminal_and_ends_with_the_seconds(monkeypatch):
    """On a terminal the notice line gets a spinner while the first
    compilation runs and ends with the seconds it took; a later compilation
    writes nothing more."""
    import io
    import re

    from numba import njit

    from jitsearch import _jit

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    monkeypatch.setattr(_jit, "_told", False)
    notice = _jit.CompileNotice(stream)
    monkeypatch.setattr(_jit, "_notice", notice)
    assert njit(lambda x: x * 3 + 1)(2) == 7  # not cached: a real compilation
    text = stream.getvalue()
    assert text.startswith(_jit.NOTICE), text
    assert re.search(r"\r" + re.escape(_jit.NOTICE) + r" \d+\.\d s\n$", text), text
    assert njit(lambda x: x - 1)(2) == 1
    assert stream.getvalue() == text

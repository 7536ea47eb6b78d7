"""Exact values of every move (`solve --game kalah --all-moves`), solves
checkpointed move by move that survive a kill, and the perfect agent."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from jitsearch.arena.agents import parse_agent
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.moves import move_values, read_checkpoint
from jitsearch.games.kalah.solver import solve_exact
from conftest import kill_when_ready


def _positions(m, n, ec, count, seed):
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = KalahState.initial(m, n, empty_capture=ec)
        for _ in range(rnd.randrange(0, 8)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


@pytest.mark.parametrize("m, n, ec", [(3, 3, False), (3, 3, True), (4, 2, False), (2, 4, True)])
def test_each_move_value_is_the_solved_value_after_it_and_the_best_is_the_positions(m, n, ec):
    for s in _positions(m, n, ec, 4, m * 10 + n + ec):
        r = move_values(s)
        assert r["complete"] and [row["move"] for row in r["moves"]] == s.legal_moves()
        sign = 1 if s.player == 0 else -1
        for row in r["moves"]:
            child = s.play(row["move"])
            margin = child.margin if child.is_over else solve_exact(child)["margin"]
            assert row["margin"] == margin and row["value"] == sign * margin
        solved = solve_exact(s)["margin"]
        assert r["margin"] == solved and r["value"] == sign * solved
        assert max(row["value"] for row in r["moves"]) == r["value"]
        assert parse_agent("perfect")(s) in [row["move"] for row in r["moves"] if row["value"] == r["value"]]


def test_checkpoint_resume_equals_one_run_and_refuses_foreign_or_edited_files(tmp_path):
    s = KalahState.initial(4, 3)
    whole = move_values(s)
    f = tmp_path / "c.jsonl"
    first = move_values(s, checkpoint=f)
    assert first["moves"] == [dict(r, seconds=first["moves"][i]["seconds"]) for i, r in enumerate(whole["moves"])]
    lines = f.read_text().splitlines()
    assert len(lines) == 1 + len(s.legal_moves())
    # a kill in the middle: two moves saved and a torn third line
    f.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])
    again = move_values(s, checkpoint=f, resume=True)
    assert [r["from_checkpoint"] for r in again["moves"]] == [True, True, False, False]
    assert [(r["move"], r["margin"]) for r in again["moves"]] == [(r["move"], r["margin"]) for r in whole["moves"]]
    assert again["best_move"] == whole["best_move"] and again["value"] == whole["value"]
    with pytest.raises(ValueError, match="already holds a checkpoint"):
        move_values(s, checkpoint=f)
    with pytest.raises(ValueError, match="holds the moves of"):
        move_values(s.play(1), checkpoint=f, resume=True)
    lines = f.read_text().splitlines()
    entry = json.loads(lines[1])
    entry["margin"] += 2  # a changed value with the old check value
    f.write_text("\n".join([lines[0], json.dumps(entry)] + lines[2:]) + "\n")
    with pytest.raises(ValueError, match="edited"):
        read_checkpoint(f, s)


@pytest.mark.slow
def test_a_killed_checkpointed_solve_resumes_to_the_same_result(tmp_path):
    f = tmp_path / "k.jsonl"
    cmd = [sys.executable, "-m", "jitsearch", "solve", "--game", "kalah", "--houses", "4", "--seeds", "4",
           "--all-moves", "--checkpoint", str(f), "--json"]
    # killed after the header and the first solved move
    killed = kill_when_ready(cmd, lambda: f.exists() and len(f.read_text().splitlines()) >= 2)
    out = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    resumed = json.loads(out.stdout)
    whole = move_values(KalahState.initial(4, 4))
    assert [(r["move"], r["margin"]) for r in resumed["moves"]] == [(r["move"], r["margin"]) for r in whole["moves"]]
    assert resumed["value"] == whole["value"] == solve_exact(KalahState.initial(4, 4))["margin"]
    if killed:
        assert resumed["moves"][0]["from_checkpoint"]


def test_cli_all_moves_json_and_errors(capsys, tmp_path):
    from jitsearch.cli.app import main

    assert main(["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--all-moves", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["complete"] and r["value"] == solve_exact(KalahState.initial(3, 2))["margin"]
    assert main(["solve", "--game", "kalah", "--houses", "3", "--seeds", "2", "--resume"]) == 2
    assert "--resume needs --checkpoint" in capsys.readouterr().err
    assert main(["solve", "--game", "kalah", "--position", "0,0,0/9/0,0,0/9 end", "--all-moves"]) == 2
    assert main(["solve", "--random", "uniform", "--all-moves"]) == 2
    assert "applies to --game connect4 or kalah only" in capsys.readouterr().err

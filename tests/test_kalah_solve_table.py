"""bench/kalah_solve_table.py: per-house database sizes, boards left out
and imported from a separate `jitsearch solve --json` run."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.solver import solve_exact
from test_kalah_search import brute_force_margin

ROOT = Path(__file__).resolve().parents[1]


def _table_module():
    spec = importlib.util.spec_from_file_location("kalah_solve_table", ROOT / "bench" / "kalah_solve_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_endgame_seed_specs():
    t = _table_module()
    assert t.parse_endgame_seeds("20") == {0: 20}
    assert t.parse_endgame_seeds("6:26,5:28") == {6: 26, 5: 28}
    spec = t.parse_endgame_seeds("6:26,2:30")
    assert t.endgame_seeds_for(spec, 6, 5) == 26
    assert t.endgame_seeds_for(spec, 2, 2) == 7  # never all the seeds of the board
    assert t.endgame_seeds_for(spec, 3, 3) == 0  # no database for other house counts


def test_a_table_with_a_board_left_out_and_imported(tmp_path, capsys, monkeypatch):
    from jitsearch.cli.app import main as cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert cli(["solve", "--game", "kalah", "--houses", "2", "--seeds", "3", "--endgame-seeds", "4", "--json"]) == 0
    solved = tmp_path / "k23.json"
    solved.write_text(capsys.readouterr().out)
    t = _table_module()
    out = tmp_path / "table"
    assert t.main(["--max-houses", "2", "--max-seeds", "3", "--endgame-seeds", "2:3", "--leave", "2,3",
                   "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "solve_table.csv")))
    boards = {(int(r["houses"]), int(r["seeds"]), r["rules"]): r for r in rows}
    assert (2, 3, "standard") not in boards and len(boards) == 2 * 5
    for (m, n, rules), r in boards.items():
        state = KalahState.initial(m, n, empty_capture=rules == "empty-capture")
        assert r["status"] == "solved" and int(r["margin"]) == brute_force_margin(state)
        assert int(r["endgame_seeds"]) == (min(3, 2 * m * n - 1) if m == 2 else 0)
    assert t.main(["--max-houses", "2", "--max-seeds", "3", "--resume", "--import", str(solved),
                   "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "solve_table.csv")))
    imported = [r for r in rows if r["source"] == "k23.json"]
    assert len(imported) == 1 and int(imported[0]["margin"]) == solve_exact(KalahState.initial(2, 3))["margin"]
    assert int(imported[0]["endgame_seeds"]) == 4
    md = (out / "solve_table.md").read_text()
    assert "| 2 | 3 |" in md and " *" in md
    with pytest.raises(SystemExit):
        t.main(["--endgame-seeds", "6:x", "--out", str(out)])

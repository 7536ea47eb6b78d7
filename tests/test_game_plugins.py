"""Games from outside the package on the command line: the registry loads the entry points of
``jitsearch.games`` and the modules or files of ``$JITSEARCH_GAMES`` the first time it is asked for
a name it does not know; a plugin that fails is one line naming it (the CLI exits 2)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import jitsearch.games as games

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "tictactoe.py"


def _cli(*args, plugins: str, cwd=None):
    env = dict(os.environ, JITSEARCH_GAMES=plugins)
    return subprocess.run([sys.executable, "-m", "jitsearch", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, stdin=subprocess.DEVNULL, timeout=120)


def test_a_game_file_named_in_the_environment_plays_on_the_command_line(tmp_path):
    out = _cli("play", "--game", "tictactoe", "--p0", "random", "--p1", "random", "--seed", "3", "--json",
               plugins=str(EXAMPLE), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    game = json.loads(out.stdout)
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import tictactoe
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    state = tictactoe.GAME.initial()
    for move in game["moves"]:  # the moves are legal and replay to the reported end
        assert move in state.legal_moves()
        state = state.play(move)
    assert game["game"] == "tictactoe" and state.is_over and state.to_text() == game["final"]
    assert game["margin"] == state.margin


@pytest.mark.parametrize("body, words", [
    ("raise RuntimeError('boom\\nsecond line')", "RuntimeError: boom second line"),
    ("import no_such_module_of_anyone", "ModuleNotFoundError"),
    ("def broken(:\n    pass", "SyntaxError"),
])
def test_a_broken_plugin_is_one_line_naming_it(tmp_path, body, words):
    plugin = tmp_path / "broken.py"
    plugin.write_text(body + "\n")
    out = _cli("play", "--game", "tictactoe", plugins=f"{plugin}", cwd=tmp_path)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert lines[0].startswith(f"error: game plugin {plugin} (JITSEARCH_GAMES) failed to load") and words in lines[0]


def test_a_missing_plugin_is_named_and_known_games_still_play(tmp_path):
    out = _cli("play", "--game", "tictactoe", plugins="no_such_plugin_module", cwd=tmp_path)
    assert out.returncode == 2 and "game plugin no_such_plugin_module (JITSEARCH_GAMES)" in out.stderr
    out = _cli("play", "--game", "connect4", "--p0", "random", "--p1", "random", "--json",
               plugins="no_such_plugin_module", cwd=tmp_path)  # a known game never loads the plugins
    assert out.returncode == 0, out.stderr


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry as on a fresh start (built-in games only, plugins not yet loaded)."""
    monkeypatch.setattr(games, "_GAMES", {k: v for k, v in games.GAMES.items() if k in ("kalah", "oware", "connect4")})
    monkeypatch.setattr(games, "_PLUGINS_LOADED", [])
    monkeypatch.delenv("JITSEARCH_GAMES", raising=False)


def _entry_points(*points):
    eps = [importlib.metadata.EntryPoint(name=n, value=v, group="jitsearch.games") for n, v in points]
    return lambda group=None, **kw: [e for e in eps if group in (None, e.group)]


def test_entry_points_register_their_games_once(fresh_registry, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points(("tictactoe", "tictactoe:GAME")))
    game = games.get("tictactoe")
    assert game.name == "tictactoe" and games.get("tictactoe") is game and "tictactoe" in games.GAMES
    with pytest.raises(ValueError, match="unknown game 'chess'; known games: connect4, kalah, oware, tictactoe"):
        games.get("chess")  # the plugins load once: an unknown name after them is the usual line


def test_a_broken_entry_point_is_one_line(fresh_registry, monkeypatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points(("bad", "no_such_module_xyz:GAME")))
    with pytest.raises(ValueError) as info:
        games.get("tictactoe")
    text = str(info.value)
    assert "\n" not in text and text.startswith("game plugin 'bad' (entry point no_such_module_xyz:GAME) failed")
    assert games.get("kalah").name == "kalah"


def test_a_plugin_game_without_a_solver_is_one_line_in_solve(tmp_path):
    out = _cli("solve", "--game", "tictactoe", plugins=str(EXAMPLE), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.strip() == ("error: tictactoe has no exact solver; solve takes --game "
                                                          "connect4 or kalah or oware"), out.stderr


BENCHED_PLUGIN = '''import dataclasses, sys
sys.path.insert(0, {where!r})
import tictactoe


def bench(depths, python_max_depth, solve, time_limit, progress=None):
    """Tic-tac-toe: how many depths were asked for."""
    rows = [dict(depth=d, nodes=d, numba_nodes_per_second=1e6, numba_ordered_tt_nodes=d) for d in depths]
    return {{"benchmark": "benched", "nodes_per_second": {{"rows": rows}}, "solve": []}}


GAME = dataclasses.replace(tictactoe.GAME, name="benched", bench=bench)
'''


def test_a_plugin_game_with_its_own_benchmark_gets_a_bench_command(tmp_path):
    plugin = tmp_path / "benched.py"
    plugin.write_text(BENCHED_PLUGIN.format(where=str(EXAMPLE.parent)))
    out = _cli("bench", "benched", "--depths", "2-4:1", "--json", plugins=str(plugin), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [r["depth"] for r in json.loads(out.stdout)["nodes_per_second"]["rows"]] == [2, 3, 4]
    out = _cli("bench", "benched", "--depths", "2", plugins=str(plugin), cwd=tmp_path)  # the table
    assert out.returncode == 0 and "benched alpha-beta" in out.stdout, out.stderr
    out = _cli("bench", "--help", plugins=str(plugin), cwd=tmp_path)
    assert "benched" in out.stdout and "Tic-tac-toe: how many depths were asked for." in out.stdout
    out = _cli("bench", "tictactoe", plugins=str(plugin), cwd=tmp_path)  # a game without a benchmark of its own
    assert out.returncode == 2 and "No such command 'tictactoe'" in out.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    out = _cli("bench", "benched", plugins=str(broken), cwd=tmp_path)
    assert out.returncode == 2 and "game plugin" in out.stderr and "RuntimeError: boom" in out.stderr

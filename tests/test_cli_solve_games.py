"""``jitsearch solve --game NAME``: one path over the game's hooks (``Game.exact``, ``Game.solver``,
``Game.database``) for every registered game, the variant given as ``--variant``."""

from __future__ import annotations

import json

import pytest

from jitsearch.cli.app import main
from jitsearch.games import get
from test_connect4_solver import _near_terminal, brute_force


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_connect4_solves_to_the_brute_force_score_with_a_move_that_keeps_it(capsys):
    for state in _near_terminal(7, 6, 9, 4, 7) + _near_terminal(5, 4, 9, 2, 8):
        code, out, err = run(capsys, "solve", "--game", "connect4", "-V", f"width={state.width}",
                             "-V", f"height={state.height}", "--position", state.to_text(), "--json")
        assert code == 0, err
        r = json.loads(out)
        ref = brute_force(state)  # Pons's score, the mover's
        sign = (ref > 0) - (ref < 0)
        assert r["score"] == r["lower"] == r["upper"] == ref and r["complete"] is True and r["nodes"] >= 0
        assert r["margin"] == (sign if state.player == 0 else -sign)
        assert r["game"] == "connect4" and r["position"] == state.to_text() and r["player_to_move"] == state.player
        child = state.play(r["best_move"])
        assert r["best_column"] == r["best_move"] + 1
        assert (child.margin != 0) if child.is_over else -brute_force(child) == ref


def test_connect4_all_moves_are_the_brute_force_scores(capsys):
    state = _near_terminal(5, 4, 10, 1, 9)[0]
    code, out, err = run(capsys, "solve", "--game", "connect4", "-V", "width=5", "-V", "height=4",
                         "--position", state.to_text(), "--all-moves", "--json")
    assert code == 0, err
    r = json.loads(out)
    cells = 20
    want = {c: (cells + 1 - state.ply) // 2 if (ch := state.play(c)).is_over and ch.margin != 0 else
            0 if ch.is_over else -brute_force(ch) for c in state.legal_moves()}
    assert {row["move"]: row["value"] for row in r["moves"]} == want and r["complete"] is True
    assert want[r["best_move"]] == max(want.values()) == r["value"]


def test_a_connect4_solve_past_its_time_limit_gives_the_interval_found(capsys):
    code, out, err = run(capsys, "solve", "--game", "connect4", "--time-limit", "1", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["complete"] is False and r["score"] is None and r["stop_reason"] == "time_limit"
    assert r["lower"] <= 1 <= r["upper"] and r["seconds"] < 3  # the first player wins with her 21st stone
    code, out, err = run(capsys, "solve", "--game", "connect4", "--time-limit", "1")
    assert code == 0 and "time limit reached" in err and "score" in out


def test_the_variant_option_sets_the_board_as_the_flags_do(capsys):
    code, out, err = run(capsys, "solve", "--game", "kalah", "-V", "houses=3", "-V", "seeds=3", "--json")
    flags = run(capsys, "solve", "--game", "kalah", "--houses", "3", "--seeds", "3", "--json")
    assert code == 0 and flags[0] == 0, err
    a, b = json.loads(out), json.loads(flags[1])
    assert a["margin"] == b["margin"] == 2 and a["nodes"] == b["nodes"] and a["position"] == b["position"]


@pytest.mark.parametrize("args, words", [
    (["--game", "connect4", "--table-size", "64"], "--table-size applies to --game kalah only"),
    (["--game", "connect4", "--endgame-seeds", "4"], "--endgame-seeds applies to --game kalah or oware only"),
    (["--game", "connect4", "--houses", "4"], "--houses applies to --game kalah or oware only"),
    (["--game", "connect4", "-V", "width=99"], "width"),
    (["--game", "connect4", "--position", "4444444"], "full"),
    (["--game", "oware", "--checkpoint", "ck"], "--checkpoint applies to --game kalah only"),
    (["--game", "kalah", "--position", "0,0,0/9/0,0,0/9 end"], "the game is over"),
    (["--game", "random_tree"], "unknown game"),
])
def test_what_a_game_does_not_take_is_one_line(capsys, args, words):
    code, out, err = run(capsys, "solve", *args)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_every_game_with_a_solver_solves(capsys):
    """The registry's games with an exact solve or a solver, each from a small position."""
    small = {"kalah": ["-V", "houses=2", "-V", "seeds=2"], "oware": ["-V", "houses=2", "-V", "seeds=2"],
             "connect4": ["-V", "width=4", "-V", "height=4", "--position", "1121"]}
    for name in ("kalah", "oware", "connect4"):
        g = get(name)
        assert g.exact is not None or g.solver is not None
        code, out, err = run(capsys, "solve", "--game", name, *small[name], "--json")
        assert code == 0, err
        r = json.loads(out)
        state = g.from_text(r["position"], **g.defaults())
        want = g.solver(state)  # player 0's, in the game's units: Connect Four's is Pons's score
        assert state.player == 0 and r["margin"] == (want if name != "connect4" else (want > 0) - (want < 0))


@pytest.mark.slow
def test_ctrl_c_stops_a_solver_hook_at_once():
    """Connect Four from the start takes minutes; its kernel releases the GIL, so Ctrl-C ends the
    command within a second or two: status 130 and one line."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "jitsearch", "solve", "--game", "connect4"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(10)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and time.monotonic() - t0 < 5, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted: the score lies in [") and "nothing of the search is kept" in last
    assert "lower" in out and "upper" in out

"""The Connect Four solver against a brute-force negamax (always runs) and Pascal Pons's test
sets (the shared data folder; skipped with a reason where it is absent): a sample of the two
easy sets by default, all 1,000 positions of each behind ``slow``."""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path

import pytest

from jitsearch.games import get
from jitsearch.games.connect4.solver import Connect4Solver, solve
from jitsearch.games.connect4.state import Connect4State


def data_dir() -> Path | None:
    """$JITSEARCH_CONNECT4_DATA, else the first shared/data/connect4 above the repository."""
    if os.environ.get("JITSEARCH_CONNECT4_DATA"):
        return Path(os.environ["JITSEARCH_CONNECT4_DATA"])
    for up in Path(__file__).resolve().parents:
        if (up / "shared" / "data" / "connect4").is_dir():
            return up / "shared" / "data" / "connect4"
    return None


DATA = data_dir()
needs_data = pytest.mark.skipif(DATA is None or not (DATA / "Test_L3_R1.txt").is_file(),
                                reason="Pons's test sets not found (shared/data/connect4 or $JITSEARCH_CONNECT4_DATA)")


def brute_force(state: Connect4State) -> int:
    """Pons's score by plain negamax over every move, no pruning, an exact memo: a move that
    wins scores (cells + 1 - stones) // 2, a move that fills the board 0, any other minus the
    score of the position it leads to."""
    w, h = state.width, state.height
    cells = w * h

    @functools.lru_cache(maxsize=None)
    def score(s: Connect4State) -> int:
        best = -cells
        for c in s.legal_moves():
            child = s.play(c)
            v = (cells + 1 - s.ply) // 2 if child.is_over and child.margin != 0 else \
                0 if child.is_over else -score(child)
            best = max(best, v)
        return best

    return score(state)


def _near_terminal(w, h, empty, count, seed):
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = Connect4State.initial(w, h)
        while not s.is_over and w * h - s.ply > empty:
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def test_solver_equals_brute_force_on_small_and_near_terminal_positions():
    _check_brute_force(_near_terminal(7, 6, 9, 25, 1) + _near_terminal(5, 4, 10, 8, 2)
                       + _near_terminal(4, 4, 11, 5, 3) + _near_terminal(9, 6, 8, 5, 4))


@pytest.mark.slow
def test_solver_equals_brute_force_on_whole_small_games():
    """The whole 4x4 game and deeper 5x4 positions (Python's brute force takes a minute)."""
    _check_brute_force([Connect4State.initial(4, 4)] + _near_terminal(5, 4, 14, 4, 5) + _near_terminal(4, 5, 15, 3, 6))


def _check_brute_force(positions):
    solvers = {}
    cells_of = {}
    for s in positions:
        size = (s.width, s.height)
        solver = solvers.setdefault(size, Connect4Solver(*size, table_bits=16))
        ref = brute_force(s)
        r = solver.solve(s, fresh=True)
        assert r.score == ref and r.lower == r.upper == ref, s.to_text()
        move = solver.best_move(s, r.score)  # a move that keeps the score, checked by brute force
        child = s.play(move)
        cells = cells_of.setdefault(size, s.width * s.height)
        kept = (cells + 1 - s.ply) // 2 if child.is_over and child.margin != 0 else \
            0 if child.is_over else -brute_force(child)
        assert kept == ref, (s.to_text(), move)
        assert solver.solve(s).score == ref  # the table kept from the last search
        assert solver.solve(s, weak=True).score == (ref > 0) - (ref < 0)


def test_a_stopped_search_gives_a_true_interval_and_leaves_the_table_true():
    """The flag set before a solve stops it at its first read (1,024 nodes): the score is None and
    the interval holds the true score; the same table then solves every position exactly."""
    positions = _near_terminal(7, 6, 22, 6, 11)
    solver = Connect4Solver(table_bits=14)
    refs = [Connect4Solver(table_bits=16).solve(s).score for s in positions]
    stopped = 0
    for s, ref in zip(positions, refs):
        solver.flag[0] = 1
        r = solver.solve(s)
        assert r.lower <= ref <= r.upper
        if r.score is None:
            stopped += 1
            move = solver.best_move(s, ref)  # None if stopped too; a move found before its first look keeps the score
            assert move is None or Connect4Solver(table_bits=16).move_scores(s)[move] == ref
        else:
            assert r.score == ref
    assert stopped >= 1
    solver.flag[0] = 0
    assert [solver.solve(s).score for s in positions] == refs


def test_blog_examples_move_scores_and_the_game_hook():
    assert solve("4455") == 18 and solve("44455554221") == -15
    assert get("connect4").solver(Connect4State.from_text("44455554221")) == 15  # player 0's view
    assert get("connect4").solver(Connect4State.from_text("4455")) == 18
    solver = Connect4Solver(5, 4, table_bits=16)
    state = Connect4State.from_text("3344", width=5, height=4)
    scores = solver.move_scores(state)
    assert scores == {0: -1, 1: 7, 2: -1, 3: -1, 4: -1}  # column 2 makes two threats; the others let o do it
    r = solver.solve(state)
    assert r.nodes >= 1 and r.seconds >= 0


@pytest.mark.parametrize("args, words", [
    ((Connect4State.initial(5, 4),), "this solver is for 7x6"),
    (("1212121",), "game is over"),
    (("12a",), "position must look like"),
])
def test_solver_errors_are_one_line(args, words):
    with pytest.raises(ValueError) as e:
        Connect4Solver(table_bits=12).solve(*args)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_bad_solver_sizes():
    with pytest.raises(ValueError, match="table_bits"):
        Connect4Solver(table_bits=40)
    with pytest.raises(ValueError, match="width 4..9"):
        Connect4Solver(3, 6)


def _check_set(name: str, every: int):
    lines = (DATA / f"Test_{name}.txt").read_text().split()
    pairs = list(zip(lines[0::2], lines[1::2]))[::every]
    solver = Connect4Solver()
    bad = [(mv, sc, r) for mv, sc in pairs if (r := solver.solve(mv, fresh=True).score) != int(sc)]
    assert not bad, bad[:5]
    return len(pairs)


@needs_data
@pytest.mark.parametrize("name", ["L3_R1", "L2_R1"])
def test_pons_easy_sets_sample(name):
    """Every 20th position (50) of End-Easy and Middle-Easy."""
    assert _check_set(name, 20) == 50


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("name", ["L3_R1", "L2_R1"])
def test_pons_easy_sets_all(name):
    assert _check_set(name, 1) == 1000

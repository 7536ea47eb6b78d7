"""The C references of bench/c_reference/ reproduce jitsearch exactly.

Skipped when no C compiler (or no source checkout) is available. The C
playouts (straightforward and tuned) must give evaluate_cpu's per-state
wins, draws, losses, margin sums and plies; the C alpha-beta (explicit
stack and recursive) must give jitsearch.alphabeta's value, leaves
expanded and nodes visited on UniformTree(2, h, seed).
"""

from __future__ import annotations

import numpy as np
import pytest

import jitsearch
from jitsearch.benchmarks import c_reference
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.playouts import evaluate_cpu

pytestmark = pytest.mark.skipif(c_reference.unavailable_reason() is not None,
                                reason=str(c_reference.unavailable_reason()))


def random_boards(rng: np.random.Generator, m: int, k: int, max_house: int) -> tuple[np.ndarray, np.ndarray]:
    """``k`` live boards of Kalah(m, .): random houses (some big enough to lap
    the board) and stores, both sides non-empty; random players."""
    n = 2 * m + 2
    boards = rng.integers(0, max_house + 1, size=(k, n))
    boards[rng.random((k, n)) < 0.3] = 0  # empty houses: captures, empty-capture cases
    boards[:, 0] = rng.integers(0, 20, size=k)
    boards[:, m + 1] = rng.integers(0, 20, size=k)
    boards[:, 1] += boards[:, 1:m + 1].sum(axis=1) == 0
    boards[:, m + 2] += boards[:, m + 2:].sum(axis=1) == 0
    return boards.astype(np.int32), rng.integers(0, 2, size=k)


@pytest.mark.parametrize("m, max_house", [(6, 15), pytest.param(3, 9, marks=pytest.mark.slow),
                                          pytest.param(7, 30, marks=pytest.mark.slow)])
@pytest.mark.parametrize("empty_capture", [False, True])
def test_playouts_equal_evaluate_cpu(m, max_house, empty_capture):
    rng = np.random.default_rng(1000 * m + empty_capture)
    boards, players = random_boards(rng, m, 24, max_house)
    seeds = [int(rng.integers(0, 2**63)), 2**64 - 1]
    for variant in c_reference.VARIANTS:
        got = c_reference.run_playouts(variant, boards, players, 5, seeds, empty_capture=empty_capture)
        for seed, res in zip(seeds, got):
            want = evaluate_cpu(boards, players, 5, seed, empty_capture=empty_capture)
            for key in ("wins", "draws", "losses", "margin_sum", "plies"):
                np.testing.assert_array_equal(res[key], want[key], err_msg=f"{variant} {key} seed {seed}")
            assert res["seconds"] >= 0


def test_playouts_from_the_start_position():
    start = KalahState.initial(6, 4).board
    boards = np.repeat(np.asarray(start)[None, :], 16, axis=0)
    players = np.zeros(16, dtype=np.int64)
    want = evaluate_cpu(boards, players, 8, 3)
    for variant in c_reference.VARIANTS:
        assert c_reference.same_playouts(c_reference.run_playouts(variant, boards, players, 8, [3])[0], want)


@pytest.mark.parametrize("height", range(4, 15))
def test_alphabeta_equals_jitsearch(height):
    seeds = [0, 1, 7, 2**64 - 1]
    want = [jitsearch.alphabeta(jitsearch.UniformTree(2, height, seed=s)) for s in seeds]
    for variant in c_reference.VARIANTS:
        got = c_reference.run_alphabeta(variant, 2, height, seeds)
        for s, w, g in zip(seeds, want, got):
            assert (g["value"], g["leaves_expanded"], g["nodes_visited"]) == (
                w.value, w.leaves_expanded, w.nodes_visited), f"{variant} height {height} seed {s}"


@pytest.mark.parametrize("branching, height, lo, hi", [(3, 6, -5, 5), (5, 4, 0, 1), (2, 9, -3, 3)])
def test_alphabeta_other_shapes(branching, height, lo, hi):
    """Other branchings and narrow value ranges (many ties, many cut-offs)."""
    seeds = [2, 3]
    want = [jitsearch.alphabeta(jitsearch.UniformTree(branching, height, seed=s, lo=lo, hi=hi)) for s in seeds]
    for variant in c_reference.VARIANTS:
        got = c_reference.run_alphabeta(variant, branching, height, seeds, lo=lo, hi=hi)
        assert [(g["value"], g["leaves_expanded"], g["nodes_visited"]) for g in got] == [
            (w.value, w.leaves_expanded, w.nodes_visited) for w in want]


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="variant"):
        c_reference.run_alphabeta("fast", 2, 4, [0])
    with pytest.raises(ValueError, match="seeds"):
        c_reference.run_alphabeta("plain", 2, 4, [])
    with pytest.raises(ValueError, match="variant"):
        c_reference.run_playouts("fast", np.array([0, 4, 4, 0, 4, 4]), [0], 1, [0])

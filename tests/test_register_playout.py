"""The register-board playout (the GPU's fast playout) compiled for the CPU:
game by game the generic playout's results (margins, outcomes, plies), in
both of its forms (one playout per call; a job loop that starts the next
game as soon as one ends, shared by lanes with a stride as GPU threads share
it), for random positions of every kind (laps, captures on both rule sets,
extra moves, the final sweep)."""

from __future__ import annotations

import numpy as np
import pytest

from jitsearch.games.kalah import register as register_playout
from jitsearch.games.kalah.playouts import evaluate_register_cpu
from jitsearch.games.kalah.playouts import evaluate_cpu

KEYS = ("wins", "draws", "losses", "margin_sum", "plies")


def _positions(m, count, seed):
    """Live random boards: few seeds (endings, captures of empty houses), many (whole laps) and in between."""
    rnd = np.random.default_rng(seed)
    boards = []
    for i in range(count):
        hi = (3, 10, 40)[i % 3]
        b = rnd.integers(0, hi, size=2 * m + 2)
        b[1 + rnd.integers(m)] += 1
        b[m + 2 + rnd.integers(m)] += 1
        boards.append(b)
    return np.array(boards), rnd.integers(0, 2, size=count)


# m=6 in the default run (each m compiles kernels of its own, about 2 s); the other sizes in the slow step
@pytest.mark.slow
@pytest.mark.parametrize("m", [pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow), 6,
                               pytest.param(9, marks=pytest.mark.slow), pytest.param(16, marks=pytest.mark.slow)])
@pytest.mark.parametrize("empty_capture", [False, True])
def test_register_playout_equals_the_generic_playout(m, empty_capture):
    boards, players = _positions(m, 30, seed=m)
    for seed in (0, 2**64 - 1):
        generic = evaluate_cpu(boards, players, 8, seed, empty_capture=empty_capture, kernel="generic")
        for lanes in (0, 1, 5, 1000):  # 0: one playout per call; else the job loop on that many lanes
            regs = evaluate_register_cpu(boards, players, 8, seed, empty_capture=empty_capture, lanes=lanes)
            for k in KEYS:
                assert (regs[k] == generic[k]).all(), (k, seed, lanes)


def test_register_playout_depends_on_the_stream():
    boards, players = _positions(6, 12, seed=1)
    a = evaluate_register_cpu(boards, players, 8, 1)
    b = evaluate_register_cpu(boards, players, 8, 2)
    assert any((a[k] != b[k]).any() for k in KEYS)


def test_register_playout_source_rejects_bad_houses():
    with pytest.raises(ValueError, match="houses must lie in 1..16"):
        register_playout.playout_source(0)
    with pytest.raises(ValueError, match="houses must lie in 1..16"):
        register_playout.jobs_source(17)
    with pytest.raises(ValueError, match="lanes"):
        evaluate_register_cpu(np.array([[0, 1, 0, 1]]), [0], 1, 1, lanes=-1)

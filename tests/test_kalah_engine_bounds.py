"""The Kalah engine's seed bound (jitsearch.games.kalah.engine): every end of the game below a node lies
between the mover's store difference less and plus the seeds in the houses, so the evaluation is clamped to
that range and a node whose window lies outside it returns the bound at once; a fixed-depth value stays the
plain negamax value with the clamped evaluation."""

import numpy as np

from jitsearch.games.kalah.engine import FITTED_WEIGHTS, SCALE, KalahEngine

from test_engine import negamax_reference, random_positions

#: Weights whose evaluation leaves the seed bound almost everywhere (the clamp decides most leaves).
WILD = np.array([900, -4000, 3000, 2500, -3000, 5000], np.int64)


def lopsided_positions(count, seed):
    """Late positions of random games (few seeds in the houses, store differences far from 0)."""
    return [s for s in random_positions(4, 3, 6 * count, seed, max_plies=40)
            if abs(int(s.board[5]) - int(s.board[0])) >= 4][:count]


def test_fixed_depth_values_equal_plain_negamax_with_the_clamped_evaluation():
    for weights in (FITTED_WEIGHTS, WILD):
        for s in lopsided_positions(8, seed=31) + random_positions(4, 3, 4, seed=32):
            for depth in (2, 5, 7):
                ref = negamax_reference(s, depth, weights)
                r = KalahEngine(4, weights=weights, exact_depth=True, table_mb=1).search(s, depth=depth)
                assert r["value"] == ref, (s.to_text(), depth)


def test_values_lie_within_the_roots_seed_bound():
    for s in lopsided_positions(8, seed=33):
        own, opp = (5, 0) if s.player == 0 else (0, 5)
        diff, left = int(s.board[own] - s.board[opp]), int(s.board.sum() - s.board[0] - s.board[5])
        for depth in (1, 4):
            v = KalahEngine(4, weights=WILD, table_mb=1).search(s, depth=depth)["value"]
            assert SCALE * (diff - left) <= v <= SCALE * (diff + left), (s.to_text(), depth, v)

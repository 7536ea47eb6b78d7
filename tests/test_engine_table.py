"""The Kalah engine's table (jitsearch.games.kalah.engine): keyed on the houses alone, seen from the mover,
with the store difference outside the stored value, it never changes a fixed-depth minimax value: the same
houses with other stores, or mirrored with the other player to move, read one entry exactly."""

import numpy as np

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.engine import FITTED_WEIGHTS, KalahEngine

from test_engine import negamax_reference, random_positions


def _variants(s: KalahState):
    """``s``, the same houses with the stores' seeds split otherwise, and the mirror image (sides swapped, the
    other player to move)."""
    m = s.houses
    b = [int(x) for x in s.board]
    out = [s]
    shifted = b.copy()
    moved = min(shifted[0], 2)
    shifted[0] -= moved
    shifted[m + 1] += moved
    if moved == 0:
        moved = min(shifted[m + 1], 2)
        shifted[m + 1] -= moved
        shifted[0] += moved
    out.append(KalahState.from_board(shifted, s.player, empty_capture=s.empty_capture))
    mirror = [b[m + 1]] + b[m + 2:] + [b[0]] + b[1:m + 1]
    out.append(KalahState.from_board(mirror, 1 - s.player, empty_capture=s.empty_capture))
    return out


def test_one_table_across_stores_and_mirrors_keeps_fixed_depth_values():
    """One engine (one table, entries kept across searches) searches positions that share houses with earlier
    ones; with cutoffs only from entries of the exact depth its values stay the depth-limited negamax values."""
    for weights in ("store", "fitted"):
        w = FITTED_WEIGHTS if weights == "fitted" else np.zeros(6, np.int64)
        e = KalahEngine(4, eval=weights, exact_depth=True, table_mb=1)
        for s in random_positions(4, 3, 10, seed=11):
            for v in _variants(s):
                for depth in (1, 3, 5):
                    assert e.search(v, depth=depth)["value"] == negamax_reference(v, depth, w), (v.to_text(), depth)


def test_mirror_image_has_the_same_value_and_the_mirrored_move():
    e = KalahEngine(6, table_mb=4)
    for s in random_positions(6, 4, 6, seed=12):
        a, _, mirror = _variants(s)
        ra = e.search(a, depth=7)
        rm = KalahEngine(6, table_mb=4).search(mirror, depth=7)
        assert ra["value"] == rm["value"]
        assert ra["move"] - (1 if a.player == 0 else 8) == rm["move"] - (1 if mirror.player == 0 else 8)

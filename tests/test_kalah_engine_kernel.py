"""The Kalah engine's kernel (jitsearch.games.kalah.engine): its six-house builds and the table keys a node
hands its children keep the plain negamax values, also after a search stopped by its clock."""

import random

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.engine import FITTED_WEIGHTS, KalahEngine

from test_engine import negamax_reference, random_positions


def test_six_house_values_equal_plain_negamax():
    for s in random_positions(6, 3, 6, seed=41, max_plies=30):
        for depth in (1, 3, 5):
            r = KalahEngine(6, exact_depth=True, table_mb=1).search(s, depth=depth)
            assert r["value"] == negamax_reference(s, depth, FITTED_WEIGHTS), (s.to_text(), depth)


def test_a_search_stopped_by_its_clock_leaves_no_stale_key_behind():
    """A search stopped between handing a child its table key and entering it must not let a later search
    read that key as its own: after many stopped searches one engine still gives the negamax values."""
    rng = random.Random(42)
    e = KalahEngine(6, exact_depth=True, table_mb=1, exact=False, book=False)
    positions = random_positions(6, 4, 8, seed=43, max_plies=20)
    for s in positions:
        e.search(s, time_limit=rng.choice((0.001, 0.003, 0.01)))
        for depth in (2, 4):
            assert e.search(s, depth=depth)["value"] == negamax_reference(s, depth, FITTED_WEIGHTS), s.to_text()
    assert KalahState.initial(6, 4).legal_moves()

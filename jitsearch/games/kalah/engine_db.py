"""The Kalah engine's endgame database: the record its kernel probes
(:class:`Probe`), the default size, and one load a process per database
(built once into the default cache directory)."""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from .state import KalahState


class Probe(NamedTuple):
    """The endgame database as the kernel reads it: ``values`` (int8[2, size]: player 0's rest of the game,
    by player to move and house ranking), ``binom``, ``seeds`` (0: no database)."""

    values: np.ndarray
    binom: np.ndarray
    seeds: int


#: No database (``seeds`` 0): what the engine probes when it has none.
NO_PROBE = Probe(np.zeros((2, 1), np.int8), np.zeros((1, 1), np.int64), 0)


#: Positions per player of the default endgame database (int8 each, two players): 64 MiB.
DEFAULT_DB_POSITIONS = 1 << 25
_PROBES: dict = {}
_PROBES_LOCK = threading.Lock()


def default_db_seeds(houses: int, seeds_total: int) -> int:
    """The database size the engine uses by default: the most seeds in the houses whose database holds at most
    :data:`DEFAULT_DB_POSITIONS` positions a player (Kalah(6, n): 16 seeds, 58 MiB, about 10 s to build once),
    and never more than the board's seeds."""
    from .endgame import database_size

    s = 0
    while s < min(seeds_total, 127) and database_size(houses, s + 1) <= DEFAULT_DB_POSITIONS:
        s += 1
    return s


def database_cached(houses: int, db_seeds: int, empty_capture: bool) -> bool:
    """Whether the database is already in the default cache (a build would not be needed)."""
    from .endgame_files import cache_path, default_cache_dir

    return (houses, db_seeds, bool(empty_capture)) in _PROBES or cache_path(
        default_cache_dir(), houses, db_seeds, empty_capture).exists()


def warm_solver(houses: int, probe: Probe, empty_capture: bool) -> None:
    """Compile (or load from Numba's cache) exact mode's solver kernels for this database, with a proof of a
    one-seed board, so that the first proof of a game is not spent on it."""
    from .solver import solve_exact

    db = None
    if probe.seeds > 0:
        db = {"houses": houses, "empty_capture": bool(empty_capture), "values": probe.values, "binom": probe.binom,
              "max_seeds": int(probe.seeds)}
    state = KalahState.initial(houses, 1, empty_capture=empty_capture)
    solve_exact(state, first_guess=0, endgame_db=db, table=np.zeros((1 << 10, 4), np.int64), chunk_nodes=10_000)
    if probe.seeds > 0:  # map the database's pages in now (a first proof faulted them in: 50 ms on Kalah(6,4))
        int(probe.values[:, ::4096].sum())


def load_probe(houses: int, db_seeds: int, empty_capture: bool) -> Probe:
    """The endgame database of ``db_seeds`` seeds as a :class:`Probe` (0: none), built once into the default
    cache directory (:func:`jitsearch.games.kalah.endgame_files.default_cache_dir`) and loaded once a process."""
    if db_seeds <= 0:
        return NO_PROBE
    key = (houses, db_seeds, bool(empty_capture))
    with _PROBES_LOCK:
        probe = _PROBES.get(key)
        if probe is None:
            from .endgame import build_endgame_database
            from .endgame_files import default_cache_dir

            db = build_endgame_database(houses, db_seeds, empty_capture, cache_dir=default_cache_dir(),
                                        max_bytes=8 << 30)
            probe = _PROBES[key] = Probe(db["values"], db["binom"], int(db_seeds))
        return probe

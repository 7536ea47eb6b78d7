"""Kalah(m, n): positions and rules, engines and the exact solver.

Modules, from the ground up:

* :mod:`.rules` -- the rule source, written once and compiled for the CPU
  (:data:`.state.RULES`) and for CUDA;
* :mod:`.state` -- :class:`KalahState` (validated positions, text forms);
* :mod:`.alphabeta` -- depth-limited alpha-beta, iterative deepening;
* :mod:`.fsss` -- FSSS-Minimax to a fixed depth;
* :mod:`.endgame` (retrograde builds) and :mod:`.endgame_files` (cached,
  verified database files);
* :mod:`.solver` -- the exact MTD(f) solver; :mod:`.checkpoint` -- its saved
  state; :mod:`.moves` -- the exact value of every move.

Conventions: player 0 moves first and maximises; a value or margin is player
0's final store difference unless a function says otherwise.
"""

from .alphabeta import iterative_deepening, search
from .endgame import build_endgame_database, estimate_endgame_build
from .endgame_files import EndgameCacheWarning, EndgameDatabaseError, default_cache_dir
from .fsss import fsss_search
from .moves import move_values
from .solver import estimate_position, solve_exact, table_slots_for
from .state import (BOARD_DTYPE, MAX_HOUSES, MAX_SEEDS, MAX_SEEDS_PER_HOUSE, MAX_TEXT, RULES, KalahState,
                    apply_move, heuristic_of, legal_moves, margin_of)

__all__ = ["BOARD_DTYPE", "MAX_HOUSES", "MAX_SEEDS", "MAX_SEEDS_PER_HOUSE", "MAX_TEXT", "RULES",
           "EndgameCacheWarning", "EndgameDatabaseError", "KalahState", "apply_move", "build_endgame_database",
           "default_cache_dir", "estimate_endgame_build", "estimate_position", "fsss_search", "heuristic_of",
           "iterative_deepening", "legal_moves", "margin_of", "move_values", "search", "solve_exact",
           "table_slots_for"]

"""Oware (abapa rules, as OpenSpiel's ``oware``): positions and rules.

* :mod:`.rules` -- the rule source, written once and compiled for the CPU
  (:data:`.state.RULES`) and as CUDA device functions;
* :mod:`.state` -- :class:`OwareState` (validated positions, text forms);
* :mod:`.alphabeta` -- depth-limited alpha-beta and iterative deepening;
* :mod:`.solver` -- exact solving of small variants;
* :mod:`.endgame` -- retrograde endgame databases (cycles split evenly);
* :mod:`.naive` -- a line-by-line transcription of OpenSpiel's ``oware.cc`` (tests).

Conventions: player 0 moves first; a margin is player 0's score minus
player 1's; moves are house indices (0..m-1 player 0's, m..2m-1 player 1's).
"""

from .rules import GAME_OVER, OPENSPIEL_MOVE_LIMIT
from .state import (BOARD_DTYPE, MAX_HOUSES, MAX_MOVE_LIMIT, MAX_SEEDS, MAX_SEEDS_PER_HOUSE, MAX_TEXT, RULES,
                    OwareState, apply_move, legal_moves, margin_of)

__all__ = ["BOARD_DTYPE", "GAME_OVER", "MAX_HOUSES", "MAX_MOVE_LIMIT", "MAX_SEEDS", "MAX_SEEDS_PER_HOUSE",
           "MAX_TEXT", "OPENSPIEL_MOVE_LIMIT", "RULES", "OwareState", "apply_move", "legal_moves", "margin_of"]

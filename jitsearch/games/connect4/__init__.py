"""Connect Four (width 4..9 by height 4..8, 7x6 by default) on 64-bit bitboards.

* :mod:`.rules` -- the rule source, compiled for the CPU and as CUDA device functions;
* :mod:`.state` -- :class:`Connect4State` (validated positions; Pons's moves form and a board form);
* :mod:`.game` -- the game protocol's adapter and :data:`.game.GAME`;
* :mod:`.solver` -- the exact solver (Pons's score convention).

Conventions: :mod:`jitsearch.games.protocol`; player 0 (``x``) moves first; a move is a
column 0..width-1 (written 1-based in the moves form).
"""

from .state import Connect4State

__all__ = ["Connect4State"]

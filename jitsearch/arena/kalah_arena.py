"""The former name of :mod:`jitsearch.arena.matches` (matches of every game), kept for the
modules and scripts that import it."""

from __future__ import annotations

from .matches import (FORMATS, MatchRun, engine_pairs, plot_trajectory, run_engines,  # noqa: F401
                      run_kalah_tournament, run_match, run_tournament)

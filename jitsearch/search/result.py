"""The small typed result every solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SearchResult:
    """Outcome of one search.

    Attributes
    ----------
    algorithm : str
        Name of the solver (as accepted by :func:`jitsearch.solve`).
    value : float
        Value of the root from MAX's point of view (minimax family); 1.0/0.0
        for AND-OR (goal reachable or not); the primary agent's loss of the
        chosen state for two-agent search.
    best_move : int
        Index (0-based, natural left-to-right order) of the root's child
        chosen; ties go to the lowest index; -1 when the root is a leaf (or,
        for AND-OR, when no winning move exists).
    leaves_expanded : int
        Number of distinct leaves whose value was read (each leaf is read at
        most once by these solvers).
    nodes_visited : int
        Number of nodes entered, root and leaves included.
    trace : int64[leaves_expanded] or None
        With ``trace=True``: leaf numbers (left to right from 0) in the order
        they were expanded.
    extra : dict
        Solver-specific fields (documented by each solver).
    """

    algorithm: str
    value: float
    best_move: int
    leaves_expanded: int
    nodes_visited: int
    trace: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self, *, integral: bool = False) -> dict:
        """JSON-ready dict (trace as a list when present)."""
        value = self.value
        if integral and float(value).is_integer():
            value = int(value)
        out = {
            "algorithm": self.algorithm,
            "value": value,
            "best_move": int(self.best_move),
            "leaves_expanded": int(self.leaves_expanded),
            "nodes_visited": int(self.nodes_visited),
        }
        out.update(self.extra)
        if self.trace is not None:
            out["trace"] = [int(x) for x in self.trace]
        return out

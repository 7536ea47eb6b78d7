"""Exact solvers over array-encoded trees (Numba kernels + validating wrappers).

Every solver takes an :class:`~jitsearch.trees.ExplicitTree` or
:class:`~jitsearch.trees.UniformTree` and returns a
:class:`~jitsearch.search.result.SearchResult`.
"""

from __future__ import annotations

from .depth_first import alphabeta, and_or, minimax
from .fsss_minimax import fsss
from .mtd import mtd_inf, mtdf
from .result import SearchResult
from .loss_search import two_agent

#: Algorithm names accepted by :func:`solve` and ``jitsearch solve --algorithm``.
ALGORITHMS = {
    "minimax": minimax,
    "alphabeta": alphabeta,
    "andor": and_or,
    "two-agent": two_agent,
    "fsss": fsss,
    "mtd-inf": mtd_inf,
    "mtdf": mtdf,
}


def solve(tree, algorithm: str = "alphabeta", **options) -> SearchResult:
    """Solve ``tree`` with the named algorithm (see :data:`ALGORITHMS`).

    ``options`` go to the solver (``trace``, ``window``, ``depth``, ...).
    """
    try:
        fn = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}"
        ) from None
    return fn(tree, **options)


__all__ = [
    "ALGORITHMS",
    "SearchResult",
    "alphabeta",
    "and_or",
    "fsss",
    "minimax",
    "mtd_inf",
    "mtdf",
    "solve",
    "two_agent",
]

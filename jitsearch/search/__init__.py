"""Exact solvers over array-encoded trees (Numba kernels + validating wrappers).

Every solver takes an :class:`~jitsearch.trees.ExplicitTree` or
:class:`~jitsearch.trees.UniformTree` and returns a
:class:`~jitsearch.search.result.SearchResult`.
"""

from __future__ import annotations

from ..trees.memory import DEFAULT_MAX_BYTES
from .depth_first import alphabeta, and_or, minimax
from .forward_estimation import EdgeBounds, forward_estimation, incremental_alphabeta, perfect_ordering_generations
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
    "fe": forward_estimation,
}


def solve(tree, algorithm: str = "alphabeta", **options) -> SearchResult:
    """Solve ``tree`` with the named algorithm (see :data:`ALGORITHMS`).

    ``options`` go to the solver (``trace``, ``window``, ``depth``, ...). On
    an :class:`~jitsearch.trees.IncrementalTree`, ``fe`` and ``alphabeta``
    run on the implicit tree and report ``node_generations``; the other
    solvers run on its materialised copy (memory-checked).
    """
    from ..trees.incremental import IncrementalTree

    try:
        fn = ALGORITHMS[algorithm]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}"
        ) from None
    if isinstance(tree, IncrementalTree):
        if algorithm == "alphabeta":
            fn = incremental_alphabeta
        elif algorithm != "fe":
            _check_options(algorithm, fn, options)
            tree = tree.to_explicit(max_bytes=options.get("max_bytes", DEFAULT_MAX_BYTES))
    elif algorithm == "fe":
        raise ValueError("forward estimation needs edge costs: use an incremental tree (--random incremental)")
    _check_options(algorithm, fn, options)
    return fn(tree, **options)


def _check_options(algorithm: str, fn, options: dict) -> None:
    """Refuse keywords the solver does not take (ValueError, not TypeError)."""
    import inspect

    accepted = {
        name for name, p in inspect.signature(fn).parameters.items()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name != "tree"
    }
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(
            f"{algorithm} does not take the option(s) {', '.join(unknown)} on this tree; "
            f"it takes: {', '.join(sorted(accepted))}"
        )


__all__ = [
    "ALGORITHMS",
    "EdgeBounds",
    "forward_estimation",
    "incremental_alphabeta",
    "perfect_ordering_generations",
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

"""jitsearch: game-tree search at compiled speed.

Public API
----------
Trees: :class:`ExplicitTree`, :class:`UniformTree`, :func:`load_tree`.
Solvers: :func:`minimax`, :func:`alphabeta`, :func:`and_or`,
:func:`two_agent`, :func:`fsss`, :func:`mtd_inf`, :func:`mtdf`, and
:func:`solve` by name; all return a
:class:`SearchResult`.

Conventions: the root moves as MAX unless stated, values are from MAX's
point of view, leaves are numbered left to right from 0.
"""

from ._version import __version__
from .search import (
    ALGORITHMS,
    EdgeBounds,
    SearchResult,
    alphabeta,
    and_or,
    forward_estimation,
    fsss,
    minimax,
    mtd_inf,
    mtdf,
    perfect_ordering_generations,
    solve,
    two_agent,
)
from .trees import ExplicitTree, IncrementalTree, UniformTree, load_tree

__all__ = [
    "ALGORITHMS",
    "EdgeBounds",
    "IncrementalTree",
    "forward_estimation",
    "perfect_ordering_generations",
    "ExplicitTree",
    "SearchResult",
    "UniformTree",
    "__version__",
    "alphabeta",
    "and_or",
    "fsss",
    "load_tree",
    "minimax",
    "mtd_inf",
    "mtdf",
    "solve",
    "two_agent",
]

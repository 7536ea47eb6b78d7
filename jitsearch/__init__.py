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

from ._jit import keep_kernel_cache_outside_sources as _keep_kernel_cache_outside_sources
from ._version import __version__

# Compiled kernels go to the user's cache ($XDG_CACHE_HOME/jitsearch/numba, or
# $NUMBA_CACHE_DIR), never beside the sources; Numba stays unimported here.
_keep_kernel_cache_outside_sources()

# The public names load lazily (PEP 562): ``import jitsearch`` and
# ``jitsearch --version`` / ``--help`` do not import Numba; the first use of a
# solver or tree does.
_LAZY = {
    **{name: ".search" for name in ("ALGORITHMS", "EdgeBounds", "SearchResult", "alphabeta", "and_or",
                                     "forward_estimation", "fsss", "minimax", "mtd_inf", "mtdf",
                                     "perfect_ordering_generations", "solve", "two_agent")},
    **{name: ".trees" for name in ("ExplicitTree", "IncrementalTree", "UniformTree", "load_tree")},
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'jitsearch' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


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

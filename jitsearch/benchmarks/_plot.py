"""Matplotlib for the benchmark figures, optional (the ``bench`` extra)."""

from __future__ import annotations


def pyplot():
    """``matplotlib.pyplot`` on the headless Agg backend, or None when absent."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt

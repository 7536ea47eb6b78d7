"""Matplotlib for the benchmark figures, optional (the ``bench`` extra)."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """``matplotlib.pyplot`` on the headless Agg backend, or None when absent."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def finish(plt, fig, ax, path, xlabel: str, ylabel: str, title: str, *, fontsize=None, dpi: int = 120) -> str:
    """Label ``ax`` (axes, title, legend in ``fontsize``), lay out ``fig``, write it to ``path``
    at ``dpi`` and close it; returns the file's name."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return Path(path).name

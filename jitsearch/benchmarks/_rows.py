"""Resumable per-item benchmark runs: one CSV row per finished item."""

from __future__ import annotations

import csv
from pathlib import Path

from .._io import drop_partial_line, grouped  # noqa: F401  (grouped re-exported)


def refuse_existing(paths, option: str = "--out") -> None:
    """Before a long run without ``--resume``: refuse to overwrite results
    already on disk (one line naming the first file found)."""
    for path in paths:
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            raise ValueError(f"{path} already holds results: add --resume to continue them, or choose another "
                             f"{option} (or delete the file)")


def read_rows(path: Path, numeric) -> list[dict]:
    """Rows of a CSV written by :func:`run_rows`; ``numeric`` converts a cell."""
    if not path.exists():
        return []
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            try:
                rows.append({k: numeric(k, v) for k, v in r.items()})
            except (TypeError, ValueError):
                continue  # a line cut by an interruption
    return rows


def run_rows(fn, tasks, path: Path, fields, key, *, resume: bool, workers: int, progress=None,
             label: str = "", numeric=None, scheduler: str | None = None) -> list[dict]:
    """Run ``fn(task) -> row`` for every task whose ``key(task)`` is not yet in ``path``.

    Rows are appended (and flushed) as they finish, so an interrupted run
    loses nothing and ``resume=True`` continues it. ``key(row)`` must equal
    ``key(task)`` for the same item. The tasks run on the arena's executor
    (:mod:`jitsearch.arena.executor`: this process, a local Dask cluster of
    ``workers`` processes, or the cluster at ``scheduler``), rows arriving
    in completion order. Returns all rows, old and new.
    """
    numeric = numeric or (lambda k, v: float(v) if "." in v or "e" in v or "inf" in v else int(v))
    if resume:
        drop_partial_line(path)
    rows = read_rows(path, numeric) if resume else []
    done = {key(r) for r in rows}
    todo = [t for t in tasks if key(t) not in done]
    if not (resume and path.exists()):
        with open(path, "w", newline="") as fh:
            csv.DictWriter(fh, fields).writeheader()
    total = len(todo)
    if progress:
        progress(f"{label}: {total} to run ({len(rows)} done before)", 0, total)
    from ..arena.executor import run_tasks

    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fields)
        done_now = [0]

        def consume(row):
            writer.writerow(row)
            fh.flush()
            rows.append(row)
            done_now[0] += 1
            if progress:
                progress(label, done_now[0], total)

        interrupted = run_tasks(fn, todo, consume, workers=workers, scheduler=scheduler)
    if interrupted:  # every finished row is on disk: resume continues
        raise KeyboardInterrupt
    return rows

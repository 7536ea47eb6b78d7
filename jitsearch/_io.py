"""Small helpers shared by long runs that append records as they go."""

from __future__ import annotations

from pathlib import Path


def drop_partial_line(path: Path) -> None:
    """Cut a last line left without its newline by an interruption."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    with open(path, "r+b") as fh:
        fh.truncate(data.rfind(b"\n") + 1)


def grouped(rows, key: str) -> list[tuple]:
    """[(value, rows with that value of ``key``)], sorted by value."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    return sorted(groups.items())

"""Memory estimates made before anything large is allocated."""

from __future__ import annotations

#: Default ceiling for one allocation made on a user's behalf (2 GiB).
DEFAULT_MAX_BYTES = 2 * 1024**3


def format_bytes(n: float) -> str:
    """Human form of a byte count: ``1.5 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def check_bytes(needed: int, max_bytes: int, what: str, fix: str) -> None:
    """Raise ``ValueError`` when ``needed`` exceeds ``max_bytes``.

    The message names what was being allocated, how much it needs, the limit
    and what to change (``fix``).
    """
    if needed > max_bytes:
        raise ValueError(
            f"{what} needs about {format_bytes(needed)}, above the limit of "
            f"{format_bytes(max_bytes)}: {fix}"
        )

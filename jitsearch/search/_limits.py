"""Argument checks and memory estimates shared by the tree solvers.

Every solver validates its keywords here (one ``ValueError`` per bad
argument, naming it and its type) and counts all of its scratch -- explicit
stack, ordering buffer, trace, bound storage -- against ``max_bytes`` before
any kernel runs.
"""

from __future__ import annotations

import time

from ..trees import ExplicitTree, UniformTree
from .._checks import check_bool, check_max_bytes, is_int
from ..trees.memory import MACHINE_CHECK_FLOOR, check_bytes

#: Status a resumable kernel returns when it needs a larger table or pool.
NEED_ROOM = 4


def tree_max_branching(tree) -> int:
    if isinstance(tree, ExplicitTree):
        return tree.max_branching
    return int(tree.branching) if tree.height > 0 else 0


def check_common(tree, trace, max_bytes) -> tuple[bool, int]:
    """Validate ``trace`` and ``max_bytes`` (the tree itself by ``tree_data``)."""
    if not isinstance(tree, (ExplicitTree, UniformTree)):
        raise ValueError(f"expected an ExplicitTree or UniformTree, got {type(tree).__name__}")
    return check_bool("trace", trace), check_max_bytes("max_bytes", max_bytes)


def trace_bytes(tree, trace: bool) -> int:
    return int(tree.num_leaves) * 8 if trace else 0


def check_search_bytes(name: str, tree, parts: dict, max_bytes: int) -> int:
    """Refuse when the sum of ``parts`` (bytes by what they are for) exceeds the limits.

    Returns the total. The message lists the parts, so a user sees that a
    very tall tree's stack, not its leaves, is what does not fit.
    """
    total = sum(int(v) for v in parts.values())
    if is_int(max_bytes) and 0 < total <= max_bytes and total <= MACHINE_CHECK_FLOOR:
        return total  # check_bytes would pass: skip formatting its message
    def label(k):
        return f"a trace of up to {tree.num_leaves} leaves" if k == "trace" else k

    detail = ", ".join(f"{label(k)} {_fmt(v)}" for k, v in parts.items() if v)
    check_bytes(
        total,
        max_bytes,
        f"{name} on this tree (height {tree.height}; {detail})",
        "lower the height or the branching, drop trace, or raise max_bytes (--max-memory)",
    )
    return total


def _fmt(n) -> str:
    from ..trees.memory import format_bytes

    return format_bytes(n)


def cancelled(cancel) -> bool:
    """True when ``cancel`` (None or an object with ``is_set()``, e.g. a threading.Event) is set."""
    return cancel is not None and bool(cancel.is_set())


def check_cancel(cancel):
    if cancel is not None and not callable(getattr(cancel, "is_set", None)):
        raise ValueError(f"cancel must be None or an object with is_set() (threading.Event), "
                         f"got {type(cancel).__name__}")
    return cancel


class ChunkClock:
    """Sizes kernel chunks so that each runs about ``target`` seconds.

    Starts small (so the first interrupt check comes fast) and doubles while
    chunks finish quickly; halves when one ran long.
    """

    def __init__(self, first: int = 1024, target: float = 0.2, cap: int = 1 << 40):
        self.size = first
        self.target = target
        self.cap = cap
        self._t = 0.0

    def start(self) -> int:
        self._t = time.perf_counter()
        return self.size

    def done(self) -> None:
        elapsed = time.perf_counter() - self._t
        if elapsed < self.target / 4 and self.size < self.cap:
            self.size *= 2
        elif elapsed > self.target * 2 and self.size > 1:
            self.size //= 2

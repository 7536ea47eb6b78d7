"""Argument checks for every public entry point: one family, one argument
order (``name`` first, then the value), one meaning of each check.

Each check raises one ``ValueError`` naming the argument, what it must be
and what it got (type and value), and returns the value normalised to a
plain Python ``int`` / ``float`` / ``bool`` / ``str`` (NumPy scalars
accepted), so nothing of the wrong type or size ever reaches a Numba
kernel. ``bool`` is never taken for a number, and numbers are never taken
for a ``bool``.

This module is the ground floor: it imports nothing of jitsearch, and every
layer may import it.
"""

from __future__ import annotations

import math
import os

import numpy as np

#: Largest value an int64 holds.
INT64_MAX = 2**63 - 1


def got(x) -> str:
    """``type repr`` of a value for an error message (long reprs cut)."""
    text = repr(x)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(x).__name__} {text}"


def is_int(x) -> bool:
    """True for Python and NumPy integers, False for bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_real(x) -> bool:
    """True for Python/NumPy integers and floats, False for bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def range_words(lo, hi) -> str:
    """`` in [lo, hi]``, `` >= lo``, `` <= hi`` or nothing: one wording of ranges everywhere."""
    if lo is not None and hi is not None:
        return f" in [{_num(lo)}, {_num(hi)}]"
    if lo is not None:
        return f" >= {_num(lo)}"
    if hi is not None:
        return f" <= {_num(hi)}"
    return ""


def _num(x) -> str:
    for p in (62, 63, 64):
        if x == 2**p:
            return f"2**{p}"
        if x == 2**p - 1:
            return f"2**{p} - 1"
    return f"{x:g}" if isinstance(x, float) else str(x)


def check_int(name: str, value, lo: int | None = None, hi: int | None = None, *, what: str | None = None) -> int:
    """``value`` as a Python int in ``[lo, hi]`` (either end optional);
    ``what`` replaces ``name`` in the message."""
    label = what or name
    if not is_int(value):
        raise ValueError(f"{label} must be an integer{range_words(lo, hi)}, got {got(value)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{label} must be an integer{range_words(lo, hi)}, got {v}")
    return v


def check_float(name: str, value, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
                allow_inf: bool = False) -> float:
    """``value`` as a Python float in ``[lo, hi]`` (``(lo, hi]`` with
    ``lo_open``; either end optional). NaN is always refused, infinities
    unless ``allow_inf``; ints and NumPy numbers are accepted."""
    if not is_real(value):
        raise ValueError(f"{name} must be a number, got {got(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large to be a float64: {got(value)}") from None
    low = "" if lo is None else (f" > {_num(lo)}" if lo_open else f" >= {_num(lo)}")
    high = "" if hi is None else f"{',' if low else ''} <= {_num(hi)}"
    if math.isnan(v):
        raise ValueError(f"{name} must be a finite number{low}{high}, not NaN")
    if math.isinf(v) and not allow_inf:
        raise ValueError(f"{name} must be finite{low}{high}, got {v}")
    if (lo is not None and (v <= lo if lo_open else v < lo)) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be a {'' if allow_inf else 'finite '}number{low}{high}, got {value!r}")
    return v


def check_bool(name: str, value) -> bool:
    """``value`` as a Python bool: ``True`` / ``False`` (or a NumPy bool) only."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {got(value)}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """``value`` if it is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {got(value)}")
    return value


def check_pair(name: str, value, *, allow_inf: bool = True) -> tuple[float, float]:
    """A pair of real numbers (list, tuple or 1-D array of two numbers)."""
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise ValueError(f"{name} must be a pair of numbers, got {got(value)}")
    try:
        items = list(value)
    except Exception:  # noqa: BLE001 - odd containers
        raise ValueError(f"{name} must be a pair of numbers, got {got(value)}") from None
    if len(items) != 2:
        raise ValueError(f"{name} must be a pair of numbers, got {len(items)} items")
    a, b = (check_float(f"{name}[{i}]", v, allow_inf=allow_inf) for i, v in enumerate(items))
    return a, b


def check_seed(name: str, value) -> int:
    """A seed: an integer in [0, 2**64)."""
    return check_int(name, value, 0, 2**64 - 1)


def max_threads() -> int:
    """The most threads (MCTS workers, playout threads) a call may ask for: 4 per core."""
    return 4 * (os.cpu_count() or 1)


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return None


def kernel_array(a, dtype) -> np.ndarray:
    """``a`` as a C-contiguous, writable array of ``dtype``: the one form an array takes on its way into a
    kernel. A read-only input (a frozen state's board, a ``[None, :]`` view of one, ``np.broadcast_to``) would
    otherwise be a second signature, and a second compile of the kernel and of everything it calls; it is
    copied instead."""
    out = np.ascontiguousarray(a, dtype=dtype)
    return out if out.flags.writeable else out.copy()


def check_max_bytes(name: str, value) -> int:
    """A memory ceiling given by a caller: a positive integer number of bytes."""
    if not is_int(value):
        raise ValueError(f"{name} must be an integer number of bytes, got {got(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0 bytes, got {value}")
    return int(value)


def cap_to_physical_memory(max_bytes: int) -> int:
    """``max_bytes`` lowered to the machine's physical memory, where the OS says how much."""
    phys = physical_memory()
    return min(max_bytes, phys) if phys else max_bytes

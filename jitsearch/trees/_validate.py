"""Type and range checks for the public entry points of trees/ and search/.

Each helper raises one ``ValueError`` naming the argument, what it must be
and what it got (type and value), and returns the value normalised to a
plain Python ``int`` / ``float`` / ``bool`` (NumPy scalars accepted), so
nothing of the wrong type or size ever reaches a Numba kernel.
"""

from __future__ import annotations

import math

import numpy as np

#: Largest value an int64 holds.
INT64_MAX = 2**63 - 1


def _got(x) -> str:
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


def check_int(x, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``x`` as a Python int in ``[lo, hi]`` (either end optional)."""
    if not is_int(x):
        raise ValueError(f"{name} must be an integer{_range_words(lo, hi)}, got {_got(x)}")
    x = int(x)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise ValueError(f"{name} must be an integer{_range_words(lo, hi)}, got {x}")
    return x


def check_real(x, name: str, *, lo: float | None = None, hi: float | None = None,
               lo_open: bool = False, finite: bool = True, allow_inf: bool = False) -> float:
    """``x`` as a Python float; NaN always refused, infinities unless ``allow_inf``."""
    if not is_real(x):
        raise ValueError(f"{name} must be a number, got {_got(x)}")
    try:
        v = float(x)
    except OverflowError:
        raise ValueError(f"{name} is too large to be a float64: {_got(x)}") from None
    if math.isnan(v):
        raise ValueError(f"{name} must be a number, not NaN")
    if math.isinf(v) and not allow_inf and finite:
        raise ValueError(f"{name} must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {v}")
    return v


def check_bool(x, name: str) -> bool:
    """``x`` as a Python bool (``True``/``False`` or a NumPy bool only)."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {_got(x)}")
    return bool(x)


def check_choice(x, name: str, choices) -> str:
    """``x`` as one of the strings ``choices``."""
    if not isinstance(x, str) or x not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {_got(x)}")
    return x


def check_pair(x, name: str, *, allow_inf: bool = True) -> tuple[float, float]:
    """A pair of real numbers (list, tuple or 1-D array of two numbers)."""
    if isinstance(x, (str, bytes, dict)) or not hasattr(x, "__len__"):
        raise ValueError(f"{name} must be a pair of numbers, got {_got(x)}")
    try:
        items = list(x)
    except Exception:  # noqa: BLE001 - odd containers
        raise ValueError(f"{name} must be a pair of numbers, got {_got(x)}") from None
    if len(items) != 2:
        raise ValueError(f"{name} must be a pair of numbers, got {len(items)} items")
    a, b = (check_real(v, f"{name}[{i}]", allow_inf=allow_inf) for i, v in enumerate(items))
    return a, b


def _range_words(lo, hi) -> str:
    if lo is not None and hi is not None:
        return f" in [{_num(lo)}, {_num(hi)}]"
    if lo is not None:
        return f" >= {_num(lo)}"
    if hi is not None:
        return f" <= {_num(hi)}"
    return ""


def _num(x: int) -> str:
    for p in (62, 63, 64):
        if x == 2**p:
            return f"2**{p}"
        if x == 2**p - 1:
            return f"2**{p} - 1"
    return str(x)

"""Memory estimates made before anything large is allocated.

Every size a user can ask for is estimated here first and refused with one
``ValueError`` that says what was being allocated, how much it needs, the
limit and what to change:

* :func:`check_bytes` -- against the caller's ``max_bytes`` and against what
  this machine can hold (``MemAvailable`` from ``/proc/meminfo`` when
  readable, else the physical memory);
* :func:`~jitsearch._checks.check_max_bytes` (from the checks) -- validates a ``max_bytes`` argument;
* :func:`memory_guard` -- turns a ``MemoryError`` raised by NumPy or a Numba
  kernel at an allocation into a ``ValueError`` saying what to lower.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from .._checks import check_max_bytes, physical_memory

#: Default ceiling for one allocation made on a user's behalf (2 GiB).
DEFAULT_MAX_BYTES = 2 * 1024**3
#: Requests below this are not compared with the machine's memory (no file read).
MACHINE_CHECK_FLOOR = 64 * 1024**2
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")


def format_bytes(n) -> str:
    """Human form of a byte count: ``1.5 GiB``; never overflows.

    Python integers of any size are accepted: above the largest unit the
    count is given as a power of two (``about 2**1101 B``).
    """
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        n = int(n)
        if abs(n) >= 1024 ** len(_UNITS):
            return f"about 2**{abs(n).bit_length() - 1} B"
        n = float(n)
    else:
        try:
            n = float(n)
        except (TypeError, ValueError, OverflowError):
            return repr(n)
        if not math.isfinite(n):
            return f"{n} B"
    for unit in _UNITS:
        if abs(n) < 1024 or unit == _UNITS[-1]:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} {_UNITS[-1]}"  # pragma: no cover


def machine_bytes() -> tuple[int | None, str]:
    """(bytes this machine can give a new allocation, how that was measured).

    ``MemAvailable`` from ``/proc/meminfo`` when readable, else the physical
    memory from ``sysconf``; ``(None, "")`` when neither is known.
    """
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available memory"
    except (OSError, ValueError, IndexError):
        pass
    phys = physical_memory()
    return (phys, "physical memory") if phys and phys > 0 else (None, "")


def check_bytes(needed, max_bytes, what: str, fix: str) -> None:
    """Raise ``ValueError`` when ``needed`` bytes cannot be allocated.

    Refused when ``needed`` exceeds ``max_bytes`` (the message names what was
    being allocated, how much it needs, the limit and what to change:
    ``fix``), or when it exceeds what this machine can hold (see
    :func:`machine_bytes`). ``needed`` may be any Python integer or float.
    """
    max_bytes = check_max_bytes("max_bytes", max_bytes)
    if isinstance(needed, float) and math.isnan(needed):
        raise ValueError(f"the size of {what} could not be estimated: {fix}")
    if needed > max_bytes:
        raise ValueError(
            f"{what} needs about {format_bytes(needed)}, above the limit of "
            f"{format_bytes(max_bytes)}: {fix}"
        )
    if needed > MACHINE_CHECK_FLOOR:
        have, how = machine_bytes()
        if have is not None and needed > have:
            raise ValueError(
                f"{what} needs about {format_bytes(needed)}, more than this machine's "
                f"{how} ({format_bytes(have)}): {fix}"
            )


@contextlib.contextmanager
def memory_guard(what: str, fix: str):
    """Turn a ``MemoryError`` inside the block into a ``ValueError``.

    NumPy and Numba kernels raise ``MemoryError`` when an allocation fails
    even after the estimates passed (the machine is busy); the user gets one
    line saying what could not be allocated and what to lower.
    """
    try:
        yield
    except MemoryError:
        raise ValueError(f"not enough memory for {what}: {fix}") from None

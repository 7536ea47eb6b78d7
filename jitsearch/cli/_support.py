"""Plumbing shared by the CLI commands: JIT accounting, option checks,
interruptible kernels and output files.

Nothing here imports Numba at module level, so ``jitsearch --help`` and
``--version`` stay fast.
"""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path


class UserError(Exception):
    """A problem with what the user asked for: one line, exit status 2."""


class Interrupted(Exception):
    """Ctrl-C arrived; the command printed what it had and exits with 130."""


# -- JIT compilation: a notice on stderr and time kept out of ``seconds`` -----------------

from .._jit import JitWatch  # noqa: E402  (one home for it; the games layer uses it too)


def timed(fn, *args, **kwargs):
    """Run ``fn`` and return (result, search seconds, jit seconds)."""
    with JitWatch() as jit:
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        wall = time.perf_counter() - t0
    return result, max(wall - jit.seconds, 0.0), jit.seconds


def run_interruptibly(fn, *args, stop_event=None, **kwargs):
    """Run ``fn`` in a worker thread and wait for it so that Ctrl-C is seen at
    once even while a ``nogil`` Numba kernel runs (:func:`jitsearch.stop.in_worker`).

    With ``stop_event`` (a ``threading.Event`` that ``fn`` checks between chunks
    of work) a Ctrl-C sets the event and waits up to 3 s for ``fn`` to return
    what it found so far; that result is returned. Otherwise, or if it does
    not come back in time, raises :class:`Interrupted`; the worker is a
    daemon thread and is abandoned (an exact tree search keeps no partial
    state worth waiting for)."""
    from ..stop import in_worker  # (imports Numba)

    stop = stop_event if stop_event is not None else threading.Event()
    try:
        return in_worker(lambda: fn(*args, **kwargs), "jitsearch-search", stop,
                         wait_on_interrupt=3.0 if stop_event is not None else False)
    except Exception:
        if not stop.is_set():
            raise
        raise Interrupted() from None  # what fn raised once it was stopped
    except KeyboardInterrupt:
        raise Interrupted() from None


# -- option checks --------------------------------------------------------------------------

def given_options(ctx) -> set:
    """Names of the parameters the user set on the command line (or by env)."""
    given = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)  # click's ParameterSource (typer may vendor click)
        if getattr(source, "name", None) in ("COMMANDLINE", "ENVIRONMENT"):
            given.add(name)
    return given


_ARGUMENTS = {"tree_file": "TREE_FILE", "fmt": "--format"}


def flag(name: str) -> str:
    """The option as the user typed it (a positional argument by its metavar)."""
    return _ARGUMENTS.get(name) or "--" + name.replace("_", "-")


def refuse_options(given: set, names, why: str) -> None:
    """One line naming the first option in ``names`` the user gave, with ``why``."""
    for name in names:
        if name in given:
            raise UserError(f"{flag(name)} {why}")


MAX_SECONDS = 1e7  # about 116 days: anything longer is a typo


def check_seconds(value, option: str) -> None:
    if value is None:
        return
    if not math.isfinite(value) or not value > 0:
        raise UserError(f"{option} must be a finite number of seconds > 0, got {value}")
    if value > MAX_SECONDS:
        raise UserError(f"{option} must be at most {MAX_SECONDS:g} seconds, got {value:g}")


def check_positive(values: dict) -> None:
    """``{"--pairs": 3, ...}``: each must be an int >= 1."""
    for option, value in values.items():
        if value is not None and value < 1:
            raise UserError(f"{option} must be >= 1, got {value}")


# -- output files ------------------------------------------------------------------------------

def check_output_file(path: Path, option: str = "--out", suffixes: tuple[str, ...] | None = None) -> None:
    """Refuse, before any work, a file path that cannot be written: a
    directory, something under a file, a folder without write permission,
    a read-only file, or (with ``suffixes``, e.g. ``(".png", ".svg")``) a
    name without one of those suffixes. Missing folders are fine: the
    writers create them."""
    path = Path(path)
    if path.exists() and path.is_dir():
        raise UserError(f"{option} {path} is a directory; give a file name")
    if suffixes and path.suffix.lower() not in suffixes:
        names = ", ".join(suffixes[:-1]) + (" or " if len(suffixes) > 1 else "") + suffixes[-1]
        raise UserError(f"{option} {path}: give a file name ending in {names}")
    parent = path.parent if str(path.parent) else Path(".")
    _check_dir_writable(parent, option, path)
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"{option} {path} is not writable")


def check_output_dir(path: Path, option: str = "--out") -> None:
    """Refuse, before any work, a directory that cannot be created or written."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{option} {path} exists and is not a directory")
    _check_dir_writable(path, option, path)


def _check_dir_writable(directory: Path, option: str, shown: Path) -> None:
    probe = directory
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise UserError(f"{option} {shown}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"{option} {shown}: cannot write in {probe}")


def write_text_atomic(path: Path, text: str, option: str = "--out") -> None:
    """Write ``text`` to ``path`` (parents created), errors as one line."""
    import tempfile

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600: give the file the usual mode
        os.replace(tmp, path)
    except OSError as exc:
        raise UserError(f"{option} {path}: {exc.strerror or exc}") from None

"""Stopping a running kernel from another thread: the one home of the stop flag.

A search that may run for long takes ``stop``, a ``threading.Event`` (the
web server's Cancel and time cap, or :func:`jitsearch.arena.agents.run_search`
on a Ctrl-C in the main thread). A compiled kernel cannot wait on an Event,
so :func:`watch` copies it into an int64 flag that the kernel reads:

* fixed-depth alpha-beta and FSSS kernels take it as ``counters[STOP_SLOT]``
  of an int64 counters array of at least ``STOP_SLOT + 1`` elements (shorter
  counters: no flag) and read it every :data:`STOP_EVERY` nodes
  (:func:`stop_requested`), which on one core of a loaded machine is well under
  a millisecond; the read never changes what the search visits, so a search
  that is not stopped counts exactly the nodes it counted without a flag;
* playout kernels (flat Monte Carlo) read ``flag[0]`` of an int64[1] array
  every :data:`STOP_EVERY_PLAYOUTS` playouts;
* MCTS kernels are launched in chunks of a few hundredths of a second
  (:func:`jitsearch.mcts.game.grow_in_chunks`) and the Event is read between
  chunks, so they need no flag.

The flag is set by one watcher thread for the whole process, which looks at
the Event of every search running every :data:`POLL_SECONDS` (and sets the
flag of a search given a deadline at that deadline, to about a millisecond) and ends
:data:`IDLE_SECONDS` after the last search (so a test run or a command is
left with no thread of it, and a game of many short searches starts no
thread per search). A search that was stopped raises ``KeyboardInterrupt``
(:func:`raise_if_stopped`), never returns a half result as if it were done.

Measured (``tests/test_stop.py``'s cases, 2-core box at load 1-4,
2026-11-27): from ``stop.set()`` to the agent's ``KeyboardInterrupt``,
1-30 ms for every fixed-depth, engine, MCTS and Monte Carlo agent of both
games; Kalah's exact solves (``perfect``, ``mtdf``) look at ``stop``
before each kernel call of about 0.35 s (``solve_exact(stop=)``).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numpy as np
from numba import njit

#: ``counters[STOP_SLOT]``: the stop flag of a fixed-depth search given int64[STOP_SLOT + 1] counters.
STOP_SLOT = 4
#: Nodes between two reads of the flag (a power of two: the read is ``nodes & (STOP_EVERY - 1) == 0``).
STOP_EVERY = 1024
#: Playouts between two reads of a playout kernel's flag (a power of two).
STOP_EVERY_PLAYOUTS = 64
#: Seconds between two looks of the watcher thread at the Event.
POLL_SECONDS = 0.02


@njit(cache=True, inline="always")
def stop_requested(counters, nodes):
    """True when ``nodes`` is a multiple of :data:`STOP_EVERY` and ``counters``
    (int64, at least ``STOP_SLOT + 1`` long) has its stop flag set."""
    return ((nodes & (STOP_EVERY - 1)) == 0 and counters.shape[0] > STOP_SLOT
            and counters[STOP_SLOT] != 0)


def check_stop(stop) -> None:
    """Refuse (``ValueError``, one line) a ``stop`` that is not None or an Event-like object."""
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ValueError(f"stop must be a threading.Event or None, got {type(stop).__name__}")


def new_counters(size: int) -> np.ndarray:
    """Zeroed int64 counters of ``size`` elements with room for the stop flag."""
    return np.zeros(max(size, STOP_SLOT + 1), np.int64)


#: Seconds the watcher thread stays without a search to watch before it ends.
IDLE_SECONDS = 0.5
#: The shortest wait of the watcher before a deadline: a deadline is met to about this (plus the OS's wake-up).
MIN_WAIT_SECONDS = 0.0005

_lock = threading.Lock()
_watched: dict = {}  # token -> (stop, flag, slot, deadline) of each search running
_watcher: threading.Thread | None = None
_wake = threading.Event()  # set when a search with a deadline starts: the watcher recomputes its wait


def _due(deadline) -> float | None:
    return deadline() if callable(deadline) else deadline


def _watch_loop() -> None:
    """Copy each watched Event into its flag, and set the flag of each search past its deadline, every
    POLL_SECONDS or at the nearest deadline; end after IDLE_SECONDS with nothing to watch."""
    global _watcher
    idle_since = None
    while True:
        _wake.clear()
        with _lock:
            items = list(_watched.values())
            if items:
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= IDLE_SECONDS:
                _watcher = None  # under the lock: the next search starts a new watcher
                return
        wait = POLL_SECONDS
        now = time.perf_counter()
        for stop, flag, slot, deadline in items:
            due = _due(deadline)
            if (stop is not None and stop.is_set()) or (due is not None and now >= due):
                flag[slot] = 1
            elif due is not None:
                wait = min(wait, max(due - now, MIN_WAIT_SECONDS))
        _wake.wait(wait)


@contextmanager
def watch(stop, flag: np.ndarray, slot: int = STOP_SLOT, *, deadline=None):
    """While the block runs, set ``flag[slot] = 1`` within :data:`POLL_SECONDS`
    of ``stop`` being set (at once if it already is), and at ``deadline`` (a
    ``time.perf_counter()`` value, or a function returning it, read at every
    look: a deadline that moves; met to about a millisecond); nothing when
    both are None. One watcher thread serves every search of the process; it
    ends :data:`IDLE_SECONDS` after the last one."""
    global _watcher
    check_stop(stop)
    if stop is None and deadline is None:
        yield
        return
    if (stop is not None and stop.is_set()) or (deadline is not None and time.perf_counter() >= _due(deadline)):
        flag[slot] = 1
    token = object()
    with _lock:
        _watched[token] = (stop, flag, slot, deadline)
        if _watcher is None:
            _watcher = threading.Thread(target=_watch_loop, name="jitsearch-stop-watch", daemon=True)
            _watcher.start()
    if deadline is not None:
        _wake.set()
    try:
        yield
    finally:
        with _lock:
            del _watched[token]


def raise_if_stopped(stop) -> None:
    """``KeyboardInterrupt`` when ``stop`` is set: a stopped search has no result to play."""
    if stop is not None and stop.is_set():
        raise KeyboardInterrupt


def in_worker(fn, name: str, stop: threading.Event, *, time_limit=None, wait_on_interrupt=False, tick=None):
    """``fn()`` in a daemon thread, waited for in the caller's so that Ctrl-C is seen at once while
    a ``nogil`` kernel runs. ``time_limit`` (seconds): past it ``stop`` is set and None returned at
    once. Ctrl-C sets ``stop``; then ``KeyboardInterrupt`` is raised at once, or, with
    ``wait_on_interrupt`` (a kernel that reads ``stop`` through :func:`watch` returns within
    milliseconds), the result is awaited and returned: for as long as it takes (True) or for
    that many seconds, past which ``KeyboardInterrupt`` is raised and the worker abandoned.
    ``tick()`` runs about every 0.05 s of waiting (progress lines). An exception of ``fn`` is
    raised in the caller's thread."""
    box = {}
    done = threading.Event()  # not Thread.join: an interrupted join can mark a live thread as stopped

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name=name, daemon=True).start()
    end = None if time_limit is None else time.perf_counter() + time_limit
    while True:
        try:
            if done.wait(0.05 if end is None else min(0.05, max(end - time.perf_counter(), 0.0))):
                break
        except KeyboardInterrupt:
            stop.set()
            if not wait_on_interrupt or (wait_on_interrupt is not True and not done.wait(wait_on_interrupt)):
                raise
            continue
        if end is not None and time.perf_counter() >= end:
            stop.set()
            return None
        if tick is not None:
            tick()
    if "error" in box:
        raise box["error"]
    return box["result"]

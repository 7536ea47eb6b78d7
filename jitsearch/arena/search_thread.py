"""The agents' search thread: a search started from the main thread runs on a daemon thread
while the main thread waits in short slices, so a Ctrl-C raises ``KeyboardInterrupt`` at once even
inside a long ``nogil`` kernel (:func:`run_search`; every game's agents use it)."""

from __future__ import annotations

import queue
import threading


class _SearchJob:
    """One search handed to the search thread: ``fn(stop, *args)``; ``stop``
    is set when the caller gave up waiting (Ctrl-C)."""

    __slots__ = ("fn", "args", "done", "stop", "result", "error")

    def __init__(self, fn, args):
        self.fn, self.args = fn, args
        self.done = threading.Event()
        self.stop = threading.Event()
        self.result = None
        self.error = None

    def run(self) -> None:
        try:
            self.result = self.fn(self.stop, *self.args)
        except BaseException as exc:  # handed to the waiting thread
            self.error = exc
        finally:
            self.done.set()


class _SearchThread:
    """A daemon thread that runs the main thread's searches one at a time
    (started once and kept: a hand-off costs tens of microseconds, a new
    thread per move several times that)."""

    def __init__(self):
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="jitsearch-agent-search", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:  # retired (its search was abandoned): end once that search returns
                return
            job.run()
            del job  # drop the search's arrays before waiting for the next one


_search_thread: _SearchThread | None = None
#: Seconds the main thread waits per slice (a Ctrl-C is seen at once anyway: a wait is interruptible).
_WAIT_SLICE = 0.1


def run_search(fn, *args):
    """``fn(stop, *args)``, interruptible by Ctrl-C.

    From the main thread: run on the search thread while the main thread
    waits, so that ``KeyboardInterrupt`` is raised here at once even while
    ``fn`` is inside a long ``nogil`` kernel; the search is then abandoned
    (``stop``, a ``threading.Event``, is set for ``fn`` to notice if it can;
    the next search gets a fresh thread, since this one is still busy).
    From any other thread: ``fn(None, *args)`` right here.
    """
    global _search_thread
    if threading.current_thread() is not threading.main_thread():
        return fn(None, *args)
    job = _SearchJob(fn, args)
    try:
        if _search_thread is None or not _search_thread.thread.is_alive():
            _search_thread = _SearchThread()
        _search_thread.jobs.put(job)
        while not job.done.wait(_WAIT_SLICE):
            pass
    except KeyboardInterrupt:
        job.stop.set()
        if not job.done.is_set() and _search_thread is not None:
            _search_thread.jobs.put(None)  # still busy with the abandoned search: it ends after it,
            _search_thread = None  # and the next search starts a new thread
        raise
    if job.error is not None:
        raise job.error
    return job.result

"""Worker processes for tournaments and benchmarks: :func:`run_tasks`.

Tasks run in a process pool whose workers ignore Ctrl-C (only the parent
handles it) and exit by themselves when their parent dies. Ctrl-C in the
parent cancels what has not started and ends the workers at once; the
caller keeps the results it had already received.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

#: Most worker processes a tournament may start.
MAX_WORKERS = 256

_PR_SET_PDEATHSIG = 1


def _worker_init(parent_pid: int, start_method: str) -> None:
    """Pool initializer: only the parent handles Ctrl-C, and a worker exits by
    itself when its parent dies (PR_SET_PDEATHSIG on Linux; a thread that
    polls the parent pid everywhere)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    watched = os.getppid()
    if start_method in ("fork", "spawn") and watched != parent_pid:
        os._exit(1)  # the parent died before the death signal was armed
    threading.Thread(target=_watch_parent, args=(watched,), daemon=True, name="watch-parent").start()


def _watch_parent(ppid: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid:
            os._exit(1)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the worker processes now (a game
    running in a worker is abandoned, not waited for)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 1.0
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(timeout=0.5)


def run_tasks(fn, tasks: list, workers: int, on_result) -> bool:
    """Run ``fn(task)`` for each task (in ``workers`` processes when more than
    one), calling ``on_result(result)`` in this process as each finishes.

    Returns True when Ctrl-C (KeyboardInterrupt, also one raised by
    ``on_result``) stopped the run, False when every task finished. Other
    errors are raised after the workers are stopped.
    """
    try:
        if workers <= 1 or len(tasks) <= 1:
            for t in tasks:
                on_result(fn(t))
            return False
        import multiprocessing

        context = multiprocessing.get_context()
        pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=context,
                                   initializer=_worker_init, initargs=(os.getpid(), context.get_start_method()))
        try:
            futures = [pool.submit(fn, t) for t in tasks]
            for f in as_completed(futures):
                on_result(f.result())
        except BaseException:
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)
    except KeyboardInterrupt:
        return True
    return False

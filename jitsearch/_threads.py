"""The process-wide pool of worker threads that runs ``nogil`` kernels side
by side (multi-tree MCTS on the CPU, the engine's Lazy SMP helpers). One pool
for the process: threads are created on first use and reused."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_LOCK = threading.Lock()


def cpu_threads() -> int:
    """Cores this process may run on (the affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def thread_pool(workers: int) -> ThreadPoolExecutor:
    """The shared pool, grown to at least ``workers`` threads (a pool is never
    shrunk; a larger one replaces it and the old one ends when idle)."""
    global _POOL, _POOL_SIZE
    with _LOCK:
        if _POOL is None or _POOL_SIZE < workers:
            old = _POOL
            _POOL = ThreadPoolExecutor(workers, thread_name_prefix="jitsearch-pool")
            _POOL_SIZE = workers
            if old is not None:
                old.shutdown(wait=False)
        return _POOL


def run_in_pool(fn, arg_lists, workers: int | None = None) -> list:
    """Call ``fn(*args)`` for each ``args`` of ``arg_lists`` and return the
    results in order, re-raising the first exception. ``workers`` None: the
    first call runs in this thread and each other one on a pool thread;
    else at most ``workers`` run at once, all on the pool, while this
    thread waits."""
    if not arg_lists:
        return []
    if workers is not None:
        workers = max(1, int(workers))
        if workers == 1:
            return [fn(*args) for args in arg_lists]
        pool = thread_pool(workers)
        gate = threading.Semaphore(workers)

        def gated(args):
            with gate:
                return fn(*args)

        return [f.result() for f in [pool.submit(gated, args) for args in arg_lists]]
    pool = thread_pool(len(arg_lists) - 1) if len(arg_lists) > 1 else None
    futures = [pool.submit(fn, *args) for args in arg_lists[1:]] if pool else []
    first = fn(*arg_lists[0])
    return [first] + [f.result() for f in futures]


def split_trees(kernel, args: tuple, count: int, threads: int | None = None) -> None:
    """Run ``kernel(*args, first, last)`` over ``0..count`` split into
    contiguous ranges, one per thread (``threads``, default every core, at
    most ``count``): for ``nogil`` kernels whose items are independent."""
    workers = min(count, cpu_threads() if threads is None else max(1, int(threads)))
    if workers <= 1:
        kernel(*args, 0, count)
        return
    bounds = [count * i // workers for i in range(workers + 1)]
    run_in_pool(kernel, [args + (bounds[i], bounds[i + 1]) for i in range(workers)])

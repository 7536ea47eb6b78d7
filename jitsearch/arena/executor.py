"""One executor for the arena's independent work (tournament game pairs,
benchmark sweeps): in this process, or on a Dask cluster.

``run_tasks(fn, tasks, on_result, workers=..., scheduler=..., should_stop=...)``
calls ``fn(task)`` for every task and hands each result to ``on_result`` in
completion order, from the calling thread (so it may write files and update
a live table). Where the work runs:

* **in this process**, one task after another, when ``workers`` is 1 and no
  scheduler is given, or the run is tiny (fewer than ``MIN_CLUSTER_TASKS``
  tasks): no cluster to start;
* **a local Dask cluster inside this process** (``distributed.LocalCluster``,
  one single-threaded worker process per requested worker, no server to
  start, no dashboard) otherwise;
* **an existing Dask cluster** when ``scheduler`` is an address such as
  ``tcp://host:8786``: the same tasks go there, unchanged.

Dask reschedules a task whose worker dies mid-task on another worker (up to
its ``allowed-failures``), and a task that raises is retried ``retries``
times; each task's result is delivered once (a task is one future), so
nothing is lost and nothing counted twice. ``should_stop()`` is asked after
every result: True cancels the tasks still outstanding (an SPRT that reached
a bound). Ctrl-C cancels them too, closes the local cluster and returns
``True`` (interrupted); results already delivered stay delivered.
"""

from __future__ import annotations

import logging
import warnings

#: Worker processes of a local cluster at most.
MAX_WORKERS = 256
#: Fewer tasks than this run in this process even with several workers (a cluster costs about 2 s to start).
MIN_CLUSTER_TASKS = 3
#: Retries of a task that raised (a worker that died does not count here: Dask reschedules its tasks).
TASK_RETRIES = 1


class ExecutorError(ValueError):
    """The Dask cluster could not be reached or started."""


def describe(workers: int, scheduler: str | None, tasks: int) -> str:
    """Where ``run_tasks`` would run this work, in words."""
    if scheduler:
        return f"the Dask cluster at {scheduler}"
    if workers <= 1 or tasks < MIN_CLUSTER_TASKS:
        return "this process"
    return f"a local Dask cluster of {workers} worker processes"


def run_tasks(fn, tasks: list, on_result, *, workers: int = 1, scheduler: str | None = None,
              should_stop=None) -> bool:
    """Run ``fn`` over ``tasks`` (see the module docstring); True if Ctrl-C stopped it."""
    tasks = list(tasks)
    if not tasks:
        return False
    stop = should_stop or (lambda: False)
    if scheduler is None and (workers <= 1 or len(tasks) < MIN_CLUSTER_TASKS):
        return _run_here(fn, tasks, on_result, stop)
    return _run_dask(fn, tasks, on_result, stop, workers, scheduler)


def _run_here(fn, tasks, on_result, stop) -> bool:
    try:
        for task in tasks:
            on_result(fn(task))
            if stop():
                break
    except KeyboardInterrupt:
        return True
    return False


def _quiet_dask() -> None:
    for name in ("distributed", "distributed.worker", "distributed.nanny", "distributed.scheduler",
                 "distributed.core", "distributed.comm", "distributed.batched", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="distributed")


def connect(workers: int, scheduler: str | None):
    """(client, cluster or None): a client of the cluster at ``scheduler`` or of a new local one."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - distributed is a dependency
        raise ExecutorError("Dask is not installed: pip install 'dask[distributed]'") from exc
    _quiet_dask()
    if scheduler:
        try:
            return Client(scheduler, timeout=5), None
        except Exception as exc:
            raise ExecutorError(f"cannot reach the Dask scheduler at {scheduler}: {str(exc).splitlines()[0]}") \
                from None
    cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _run_dask(fn, tasks, on_result, stop, workers, scheduler) -> bool:
    from distributed import as_completed

    client, cluster = connect(workers, scheduler)
    futures = []
    interrupted = False
    try:
        futures = [client.submit(fn, task, pure=False, retries=TASK_RETRIES) for task in tasks]
        for future in as_completed(futures):
            on_result(future.result())
            if stop():
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        outstanding = [f for f in futures if not f.done()]
        if outstanding:
            try:
                client.cancel(outstanding)
            except Exception:
                pass
            if cluster is not None:  # a running task is not cancelled: end our own workers at once
                _kill_local_workers(cluster)
        try:
            client.close(timeout=2)
        except Exception:
            pass
        if cluster is not None:
            pids = _worker_pids(cluster)
            try:
                cluster.close(timeout=2)
            except Exception:
                pass
            _kill_local_workers(None, pids)
    return interrupted


def _worker_pids(cluster) -> set:
    """Process ids of a local cluster's workers."""
    pids = set()
    for nanny in list(getattr(cluster, "workers", {}).values()):
        try:
            if nanny.pid:
                pids.add(int(nanny.pid))
        except Exception:
            pass
    return pids


def _kill_local_workers(cluster, pids=None) -> None:
    """Kill our local cluster's worker processes (a kernel holding a worker's
    interpreter would otherwise outlast the run); other clusters' are left alone."""
    import multiprocessing

    pids = _worker_pids(cluster) if pids is None else pids
    for proc in multiprocessing.active_children():
        if proc.pid in pids:
            try:
                proc.kill()
                proc.join(1)
            except Exception:
                pass

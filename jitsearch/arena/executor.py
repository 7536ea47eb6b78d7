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

On a cluster the tasks travel in **chunks**: a chunk of consecutive tasks is
one Dask task that runs them one after another in its worker and brings
their results back together (each then delivered, and ``should_stop`` asked,
as if they had come one by one). The first chunks hold one task each; later
ones are sized from the measured time per task to last about
``CHUNK_SECONDS``, and never so large that fewer than two chunks per worker
remain, so Dask's per-task cost (a few milliseconds of scheduler and worker
time, as much as a small game pair with two workers on two cores) is paid
once per chunk. At most ``IN_FLIGHT_PER_WORKER`` chunks per worker are
outstanding: a stop cancels little, and a huge run does not hold a future
per task.

A local cluster's workers are started with Ctrl-C (SIGINT) ignored, so the
Ctrl-C of a terminal, sent to the whole process group, reaches only this
process, which then ends the workers itself: no worker dies with a
traceback. (They are spawned through a two-line shell script that ignores
SIGINT and execs Python, so this process never ignores a Ctrl-C itself; a
worker a nanny restarts later ignores SIGINT from a preload.) Their environment drops Dask's ``MALLOC_TRIM_THRESHOLD_`` (it
turns every large NumPy allocation into an mmap/munmap pair: seconds of
system time in a tournament), sets glibc's heap top pad (``MALLOC_TOP_PAD``,
as :func:`pad_heap` does for tasks run in this process: a search's trees of
megabytes are not given back to the system and faulted in again each time)
and gives Numba an equal share of the cores (``NUMBA_NUM_THREADS``), so
workers do not oversubscribe them.

``scheduler`` is checked before a client is made: a TCP address must answer
a connection with a Dask handshake within ``CONNECT_TIMEOUT`` seconds, so a
port that accepts and stays silent, an HTTP server or anything else is one
:class:`ExecutorError` line, never a hang or an "Unable to allocate 3 EiB".
"""

from __future__ import annotations

import logging
import math
import os
import socket
import struct
import threading
import time
import warnings

#: Worker processes of a local cluster at most.
MAX_WORKERS = 256
#: Fewer tasks than this run in this process even with several workers (a cluster costs about 2 s to start).
MIN_CLUSTER_TASKS = 3
#: Retries of a task that raised (a worker that died does not count here: Dask reschedules its tasks).
TASK_RETRIES = 1
#: Seconds to reach a Dask scheduler (the handshake probe, then the client's connection).
CONNECT_TIMEOUT = 10.0
#: A chunk of tasks (one Dask task) is sized to take about this long in its worker.
CHUNK_SECONDS = 1.0
#: Chunks outstanding per worker at most (one running, the next one waiting).
IN_FLIGHT_PER_WORKER = 2
#: glibc's M_TOP_PAD for the processes that run tasks: searches allocate and free trees of megabytes;
#: with the default pad the heap's top is given back and faulted in again for every search (about a
#: quarter of a Kalah tournament's time was system time). Kept: at most this much unused heap.
MALLOC_TOP_PAD = 64 << 20
#: A Dask handshake message is about 100 bytes: a first frame longer than this is not one.
_MAX_HANDSHAKE_BYTES = 1 << 20


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
              should_stop=None, finish=None) -> bool:
    """Run ``fn`` over ``tasks`` (see the module docstring); True if Ctrl-C stopped it. ``finish()``, when
    given, is run on every worker of a cluster before the client closes (e.g. to end processes the tasks
    started there; in this process the caller does that itself)."""
    tasks = list(tasks)
    if not tasks:
        return False
    stop = should_stop or (lambda: False)
    if scheduler is None and (workers <= 1 or len(tasks) < MIN_CLUSTER_TASKS):
        return _run_here(fn, tasks, on_result, stop)
    return _run_dask(fn, tasks, on_result, stop, workers, scheduler, finish)


_M_TOP_PAD = -2  # mallopt's parameter number (malloc.h)
_padded = False


def pad_heap() -> None:
    """Set glibc's heap top pad to ``MALLOC_TOP_PAD`` in this process (once;
    nothing where the C library is not glibc or ``MALLOC_TOP_PAD_`` is set)."""
    global _padded
    if _padded:
        return
    _padded = True
    if "MALLOC_TOP_PAD_" in os.environ:
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(_M_TOP_PAD, MALLOC_TOP_PAD)
    except (OSError, AttributeError):
        pass


def _run_here(fn, tasks, on_result, stop) -> bool:
    pad_heap()
    try:
        for task in tasks:
            on_result(fn(task))
            if stop():
                break
    except KeyboardInterrupt:
        return True
    return False


def _quiet_dask() -> None:
    _dask_logs(logging.ERROR)
    warnings.filterwarnings("ignore", module="distributed")


def _dask_logs(level: int) -> None:
    for name in ("distributed", "distributed.worker", "distributed.nanny", "distributed.scheduler",
                 "distributed.core", "distributed.comm", "distributed.batched", "distributed.client",
                 "distributed.deploy", "distributed.process", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(level)


def _split_address(address: str):
    """(host, port) of a ``tcp://`` (or scheme-less) address, None for other schemes."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp"):
        return None
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        raise ExecutorError(f"cannot reach the Dask scheduler at {address}: give an address such as "
                            f"tcp://HOST:8786")
    return host.strip("[]") or "127.0.0.1", int(port)


def _recv_exactly(sock, n: int, deadline: float) -> bytes:
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        part = sock.recv(n - len(buf))
        if not part:
            raise ConnectionError("it closed the connection")
        buf += part
    return buf


def probe(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Check that ``address`` answers like a Dask scheduler (or worker) within
    ``timeout`` seconds: its first message on a new TCP connection must be a
    Dask handshake (a little-endian uint64 length, then frames whose own
    lengths add up). Raises :class:`ExecutorError` in one line otherwise.
    Addresses of other schemes (``tls://``, ...) are left to the client."""
    where = _split_address(address)
    if where is None:
        return
    host, port = where
    deadline = time.monotonic() + timeout
    reason = None
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            (size,) = struct.unpack("<Q", _recv_exactly(sock, 8, deadline))
            if not 16 <= size <= _MAX_HANDSHAKE_BYTES:
                reason = "its reply is not a Dask handshake (is it a Dask scheduler?)"
            else:
                body = _recv_exactly(sock, size, deadline)
                (nframes,) = struct.unpack_from("<Q", body)
                head = 8 * (1 + nframes)
                if not 1 <= nframes <= 64 or head > size or \
                        sum(struct.unpack_from(f"<{nframes}Q", body, 8)) > size - head:
                    reason = "its reply is not a Dask handshake (is it a Dask scheduler?)"
    except (TimeoutError, socket.timeout):
        reason = f"no Dask reply within {timeout:g} s (is it a Dask scheduler?)"
    except ConnectionError as exc:
        if isinstance(exc, ConnectionRefusedError):
            reason = "connection refused (is a Dask scheduler running there?)"
        else:
            reason = "it closed the connection without a Dask handshake (is it a Dask scheduler?)"
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
    if reason:
        raise ExecutorError(f"cannot reach the Dask scheduler at {address}: {reason}")


def _client_within(address: str, timeout: float):
    """``distributed.Client(address)``, given up after ``timeout`` (+ a grace
    second) even where Dask's own timeout does not cover a step; any failure
    is one :class:`ExecutorError` line."""
    from distributed import Client

    box = {}

    def make():
        try:
            box["client"] = Client(address, timeout=timeout)
        except BaseException as exc:  # MemoryError from a bogus frame length, OSError, CommClosedError, ...
            box["error"] = exc

    thread = threading.Thread(target=make, name="jitsearch-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1.0)
    if "client" in box:
        return box["client"]
    exc = box.get("error")
    if exc is None:
        reason = f"no Dask reply within {timeout:g} s (is it a Dask scheduler?)"
    else:
        text = str(exc).splitlines()[0].strip() if str(exc).strip() else type(exc).__name__
        reason = f"{type(exc).__name__}: {text}" if not isinstance(exc, (OSError, TimeoutError)) else text
    raise ExecutorError(f"cannot reach the Dask scheduler at {address}: {reason}")


_wrappers: dict = {}


def _sigint_ignoring_python(python: str) -> str | None:
    """A shell script that runs ``python`` with SIGINT ignored (an ignored
    signal stays ignored across exec, and Python then installs no
    KeyboardInterrupt handler), for spawning workers: this process keeps its
    own Ctrl-C handling all along. None where there is no /bin/sh."""
    if python in _wrappers:
        return _wrappers[python]
    path = None
    if os.name == "posix" and os.path.exists("/bin/sh"):
        import shlex
        import tempfile

        import atexit
        import shutil

        folder = tempfile.mkdtemp(prefix="jitsearch-worker-")
        atexit.register(shutil.rmtree, folder, True)
        path = os.path.join(folder, "python")
        with open(path, "w") as fh:
            fh.write(f"#!/bin/sh\ntrap '' INT\nexec {shlex.quote(os.fsdecode(python))} \"$@\"\n")
        os.chmod(path, 0o755)
    _wrappers[python] = path
    return path


def _local_cluster(workers: int):
    """A local cluster of ``workers`` single-threaded worker processes that
    ignore SIGINT, with the environment described in the module docstring."""
    import dask
    from distributed import LocalCluster

    threads = str(max(1, (os.cpu_count() or 1) // int(workers)))
    env_keys = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
                "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED")
    saved_env = {k: os.environ.get(k) for k in env_keys}
    settings = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                "distributed.nanny.pre-spawn-environ.MALLOC_TOP_PAD_": str(MALLOC_TOP_PAD),
                "distributed.admin.system-monitor.gil.enabled": False,
                # a restarted worker is spawned while SIGINT is handled here: it ignores SIGINT itself. Numba's
                # thread count is set in the worker, before it imports Numba: the nanny's pre-spawn environment
                # is set in *this* process while it spawns, and a Numba compile here in that window would read it
                # (and then refuse the next compile: its thread pool cannot change size)
                "distributed.worker.preload": ["import os, signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                                               f"os.environ.setdefault('NUMBA_NUM_THREADS', '{threads}')"]}
    import multiprocessing
    import multiprocessing.spawn as mp_spawn

    old_exe = mp_spawn.get_executable()
    wrapper = _sigint_ignoring_python(old_exe)
    try:
        if wrapper:  # the workers start with SIGINT ignored from their first instruction on
            mp_spawn.set_executable(wrapper)
        from distributed.deploy.spec import SpecCluster

        before = set(SpecCluster._instances)
        children_before = {p.pid for p in multiprocessing.active_children()}
        try:
            with dask.config.set(settings):
                cluster = LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.ERROR)
        except KeyboardInterrupt:  # Ctrl-C while it starts: end the half-started cluster at once
            _dask_logs(logging.CRITICAL + 1)
            for half in set(SpecCluster._instances) - before:
                _kill_local_workers(half)
                try:
                    half.close(timeout=1)
                except BaseException:
                    pass
                _forget_cluster(half)
            for proc in multiprocessing.active_children():  # workers its nannies went on spawning
                if proc.pid not in children_before:
                    try:
                        proc.kill()
                        proc.join(1)
                    except Exception:
                        pass
            raise
    finally:
        if wrapper:
            mp_spawn.set_executable(old_exe)
        for k, v in saved_env.items():  # the nanny sets its pre-spawn environment in this process too
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return cluster


def connect(workers: int, scheduler: str | None, *, timeout: float | None = None):
    """(client, cluster or None): a client of the cluster at ``scheduler``
    (checked by :func:`probe` first, all within ``timeout`` seconds, default
    ``CONNECT_TIMEOUT``) or of a new local one."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:  # pragma: no cover - distributed is a dependency
        raise ExecutorError("Dask is not installed: pip install 'dask[distributed]'") from exc
    _quiet_dask()
    timeout = CONNECT_TIMEOUT if timeout is None else float(timeout)
    if scheduler:
        start = time.monotonic()
        probe(scheduler, timeout)
        return _client_within(scheduler, max(1.0, timeout - (time.monotonic() - start))), None
    cluster = _local_cluster(workers)
    from distributed import Client

    return Client(cluster), cluster


def _run_chunk(fn, chunk):
    """Run ``fn`` over a chunk of tasks in a worker: (results, seconds)."""
    t0 = time.perf_counter()
    results = [fn(task) for task in chunk]
    return results, time.perf_counter() - t0


class _Chunker:
    """Cuts the task list into chunks sized from the measured time per task
    (a moving average that follows the recent chunks: sweeps often sort
    their tasks by cost)."""

    def __init__(self, tasks: list, slots: int):
        self.tasks, self.next, self.slots = tasks, 0, max(1, slots)
        self.per_task = None

    def measured(self, count: int, seconds: float) -> None:
        if count:
            rate = seconds / count
            self.per_task = rate if self.per_task is None else 0.5 * (self.per_task + rate)

    def take(self) -> list:
        left = len(self.tasks) - self.next
        if left <= 0:
            return []
        size = 1
        if self.per_task is not None:
            size = int(CHUNK_SECONDS / self.per_task) if self.per_task > 0 else left
            size = max(1, min(size, math.ceil(left / self.slots)))  # keep every worker busy to the end
        chunk = self.tasks[self.next:self.next + size]
        self.next += size
        return chunk


def _worker_count(client, requested: int) -> int:
    """Worker threads of the cluster now (at least 1; ``requested`` if the scheduler does not say)."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:
        return max(1, int(requested))


def _run_dask(fn, tasks, on_result, stop, workers, scheduler, finish=None) -> bool:
    from distributed import as_completed

    try:
        client, cluster = connect(workers, scheduler)
    except KeyboardInterrupt:
        return True
    futures = set()
    interrupted = False
    error = None
    try:
        slots = _worker_count(client, workers)
        chunker = _Chunker(tasks, 2 * slots)

        def submit():
            chunk = chunker.take()
            if not chunk:
                return None
            fut = client.submit(_run_chunk, fn, chunk, pure=False, retries=TASK_RETRIES)
            futures.add(fut)
            return fut

        first = [f for f in (submit() for _ in range(IN_FLIGHT_PER_WORKER * slots)) if f is not None]
        pending = as_completed(first)
        stopped = False
        for future in pending:
            futures.discard(future)
            results, seconds = future.result()
            chunker.measured(len(results), seconds)
            for result in results:
                on_result(result)
                if stop():
                    stopped = True
                    break
            if stopped:
                break
            if scheduler:  # workers may join or leave an existing cluster while it runs
                slots = _worker_count(client, slots)
                chunker.slots = 2 * slots
            for _ in range(max(1, IN_FLIGHT_PER_WORKER * slots - len(futures))):
                nxt = submit()
                if nxt is None:
                    break
                pending.add(nxt)
    except KeyboardInterrupt:
        interrupted = True
    except BaseException as exc:  # a task's error: raised once the cluster is shut down
        error = exc
    if _shut_down(client, cluster, [f for f in futures if not f.done()], interrupted or error is not None, finish):
        interrupted = True  # a Ctrl-C during the shutdown itself
    if error is not None:
        raise error
    return interrupted


def _shut_down(client, cluster, outstanding, abort: bool, finish=None) -> bool:
    """Cancel ``outstanding``, close the client and our local cluster (its
    workers killed where tasks still run). Every step is taken even if a
    Ctrl-C comes in the middle; True if one did."""
    ctrl_c = False

    def step(fn, *args, **kw):
        nonlocal ctrl_c
        try:
            fn(*args, **kw)
        except KeyboardInterrupt:
            ctrl_c = True
        except Exception:
            pass

    if abort or outstanding:
        step(_dask_logs, logging.CRITICAL + 1)  # closing comms under running tasks is expected: no log noise
    if outstanding:
        step(client.cancel, outstanding)
        if cluster is not None:  # a running task is not cancelled: end our own workers at once
            step(_kill_local_workers, cluster)
    if finish is not None and (cluster is None or not outstanding):  # killed workers took theirs along
        step(client.run, finish, wait=True)
    step(client.close, timeout=2)
    if cluster is not None:
        pids = _worker_pids(cluster)
        step(cluster.close, timeout=2)
        step(_kill_local_workers, None, pids)
        step(_forget_cluster, cluster)
    if ctrl_c:
        _dask_logs(logging.CRITICAL + 1)
    return ctrl_c


def _forget_cluster(cluster) -> None:
    """Our cluster is closed as far as it goes (its workers are killed): Dask's
    atexit hook must not try again (it waits up to 10 s for one that did not
    close in time)."""
    try:
        from distributed.deploy.spec import SpecCluster

        SpecCluster._instances.discard(cluster)
        cluster.shutdown_on_close = False
    except Exception:
        pass


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

    if cluster is not None:
        try:  # a nanny restarts a worker that dies while it runs: these are ending, not dying
            from distributed.core import Status

            for nanny in list(getattr(cluster, "workers", {}).values()):
                nanny.status = Status.closing_gracefully
        except Exception:
            pass
    pids = _worker_pids(cluster) if pids is None else pids
    for proc in multiprocessing.active_children():
        if proc.pid in pids:
            try:
                proc.kill()
                proc.join(1)
            except Exception:
                pass

"""The arena's executor: in this process, on a local Dask cluster, on an
existing cluster; each result delivered once, a dead worker's task retried
elsewhere, a stop request cancelling what is outstanding; and against things
that are not what they claim: a --scheduler address that is not a Dask
scheduler, chunked tasks, and Ctrl-C on the benches that run on a local
cluster."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from jitsearch.arena import executor
from jitsearch.arena.executor import ExecutorError, describe, probe, run_tasks
from jitsearch.cli.app import main


def die_once(task):
    """The first attempt of task 2 kills its worker process (as a crash or OOM would)."""
    x, marker = task
    if x == 2:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.close(fd)
            os._exit(3)
        except FileExistsError:
            pass
    return x, os.getpid()


def test_in_process_delivers_every_result_in_order_and_stops_on_request():
    got = []
    assert run_tasks(square, range(6), got.append) is False
    assert got == [0, 1, 4, 9, 16, 25]
    got = []
    run_tasks(square, range(6), got.append, should_stop=lambda: len(got) >= 2)
    assert got == [0, 1]
    assert describe(1, None, 100) == "this process" and describe(4, None, 2) == "this process"
    assert "local Dask cluster of 4" in describe(4, None, 100)


def test_local_dask_cluster_delivers_each_result_once():
    got = []
    assert run_tasks(square, list(range(20)), got.append, workers=2) is False
    assert sorted(got) == [x * x for x in range(20)]


def test_stop_cancels_the_outstanding_tasks():
    got = []
    run_tasks(square, list(range(200)), got.append, workers=2, should_stop=lambda: len(got) >= 3)
    assert 3 <= len(got) < 200 and len(set(got)) == len(got)


def test_a_task_whose_worker_dies_is_retried_elsewhere_and_counted_once(tmp_path):
    marker = str(tmp_path / "died")
    got = []
    run_tasks(die_once, [(x, marker) for x in range(6)], got.append, workers=2)
    assert os.path.exists(marker)  # the worker really died
    assert sorted(x for x, _ in got) == list(range(6))


def test_an_existing_cluster_by_its_address():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        got = []
        run_tasks(square, [3, 4], got.append, scheduler=cluster.scheduler_address)
        assert sorted(got) == [9, 16]


def test_an_unreachable_scheduler_is_one_clear_error():
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        run_tasks(square, [1], lambda r: None, scheduler="tcp://127.0.0.1:9")


# -- against things that are not what they claim ------------------------------------------------


class FakeServer:
    """A TCP server on 127.0.0.1 that answers every connection as ``mode`` says:
    ``silent`` accepts and says nothing, ``http`` answers an HTTP 400 and
    closes, ``garbage`` sends bytes that are no protocol at all."""

    def __init__(self, mode: str):
        self.mode = mode
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            try:
                if self.mode == "http":
                    conn.settimeout(0.5)
                    try:
                        conn.recv(4096)
                    except OSError:
                        pass
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\nConnection: close\r\n\r\n"
                                 b"Bad Request")
                    conn.close()
                elif self.mode == "garbage":
                    conn.sendall(bytes(range(256)) * 8)
            except OSError:
                pass

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the serving thread
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


@pytest.fixture
def server(request):
    srv = FakeServer(request.param)
    yield srv
    srv.close()


def square(x):
    return x * x


@pytest.mark.parametrize("server", ["silent", "http", "garbage"], indirect=True)
def test_a_scheduler_address_that_is_not_dask_is_one_error_within_the_timeout(server, monkeypatch):
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", 2.0)
    t0 = time.monotonic()
    with pytest.raises(ExecutorError) as info:
        run_tasks(square, [1, 2, 3], lambda r: None, scheduler=server.address)
    took = time.monotonic() - t0
    message = str(info.value)
    assert took < 2.0 + 3.0, took
    assert server.accepted >= 1  # it really got that far: a connection, then no Dask
    assert message.startswith(f"cannot reach the Dask scheduler at {server.address}: "), message
    assert "\n" not in message and "EiB" not in message and "allocate" not in message
    if server.mode == "silent":
        assert "no Dask reply within 2 s" in message


def test_probe_accepts_a_real_scheduler_and_refuses_a_closed_port():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster:
        probe(cluster.scheduler_address, 5.0)  # a real handshake passes
    with socket.socket() as free:  # a port nobody listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(ExecutorError, match="connection refused"):
        probe(f"tcp://127.0.0.1:{port}", 2.0)
    with pytest.raises(ExecutorError, match="tcp://HOST:8786"):
        probe("tcp://127.0.0.1", 2.0)


def test_the_cli_says_so_in_one_line_and_exits_2_for_a_silent_port(capsys, monkeypatch):
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", 2.0)
    srv = FakeServer("silent")
    try:
        t0 = time.monotonic()
        code = main(["tournament", "--game", "kalah", "--a", "random", "--b", "random", "--pairs", "4",
                     "--scheduler", srv.address])
        took = time.monotonic() - t0
    finally:
        srv.close()
    err = capsys.readouterr().err
    assert code == 2, err
    assert took < 8.0
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and "no Dask reply within 2 s" in errors[0], err
    assert lines[-1] == errors[0]  # nothing after it (a status line before it says where it runs)


@pytest.mark.slow
def test_the_cli_process_says_so_in_one_line_and_exits_2_for_an_http_server():
    srv = FakeServer("http")
    try:
        proc = subprocess.run([sys.executable, "-m", "jitsearch", "tournament", "--game", "kalah", "--a", "random",
                               "--b", "random", "--pairs", "4", "--scheduler", srv.address],
                              capture_output=True, text=True, timeout=60)
    finally:
        srv.close()
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], proc.stderr
    assert f"cannot reach the Dask scheduler at {srv.address}" in errors[0]
    assert "EiB" not in proc.stderr and "Traceback" not in proc.stderr


# -- chunks ------------------------------------------------------------------------------------


def slow_square(x):
    time.sleep(0.01)
    return x * x, os.getpid()


@pytest.mark.slow
def test_chunks_deliver_every_result_once_and_grow_from_the_measured_time(monkeypatch):
    sizes = []
    real_take = executor._Chunker.take

    def take(self):
        chunk = real_take(self)
        if chunk:
            sizes.append(len(chunk))
        return chunk

    monkeypatch.setattr(executor._Chunker, "take", take)
    got = []
    assert run_tasks(slow_square, list(range(300)), got.append, workers=2) is False
    assert sorted(x for x, _ in got) == [x * x for x in range(300)]
    assert len({pid for _, pid in got}) == 2  # both workers worked
    assert sizes[0] == 1 and max(sizes) > 4  # first one task, then chunks of many (10 ms tasks, 1 s chunks)
    assert len(sizes) < 100


def test_chunker_sizes():
    ch = executor._Chunker(list(range(1000)), 4)
    assert ch.take() == [0]
    ch.measured(1, 0.1)  # 0.1 s a task: 10 a chunk of CHUNK_SECONDS
    assert len(ch.take()) == int(executor.CHUNK_SECONDS / 0.1)
    ch.measured(10, 10.0)  # slow tasks: one at a time
    assert len(ch.take()) == 1
    fast = executor._Chunker(list(range(100)), 4)
    fast.take()
    fast.measured(1, 1e-6)
    assert len(fast.take()) == 25  # never fewer than `slots` chunks left: ceil(99 / 4)


def test_stop_mid_chunk_delivers_nothing_after_it():
    got = []
    run_tasks(slow_square, list(range(400)), got.append, workers=2, should_stop=lambda: len(got) >= 30)
    assert len(got) == 30


def test_local_workers_ignore_sigint_and_do_not_touch_this_environment(monkeypatch):
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)  # a plain LocalCluster of another test leaves it
    before = {k: os.environ.get(k) for k in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "NUMBA_NUM_THREADS",
                                             "OMP_NUM_THREADS")}
    client, cluster = executor.connect(2, None)
    try:
        info = client.run(_worker_state)
    finally:
        client.close()
        cluster.close()
    assert len(info) == 2
    for sigint, trim, pad, numba_threads in info.values():
        assert sigint == "ignored"
        assert trim is None  # no MALLOC_TRIM_THRESHOLD_: no mmap/munmap per large array
        assert pad == str(executor.MALLOC_TOP_PAD) or "MALLOC_TOP_PAD_" in os.environ
        assert numba_threads == str(max(1, (os.cpu_count() or 1) // 2)) or "NUMBA_NUM_THREADS" in os.environ
    assert {k: os.environ.get(k) for k in before} == before
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


@pytest.mark.slow
def test_starting_workers_never_sets_numba_threads_in_this_process(monkeypatch):
    """The nanny sets its pre-spawn environment in the parent while it spawns: a Numba compile here in that
    window would read NUMBA_NUM_THREADS and every later compile would fail (its thread pool cannot change size)."""
    import numba

    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    seen = []
    real_putenv = os.putenv
    monkeypatch.setattr(os, "putenv", lambda k, v: (seen.append(k), real_putenv(k, v))[1])
    client, cluster = executor.connect(2, None)
    try:
        assert len(client.run(_worker_state)) == 2
    finally:
        client.close()
        cluster.close()
    assert "NUMBA_NUM_THREADS" not in seen
    numba.core.config.reload_config()  # what every compile does: must not raise


def _worker_state():
    handler = signal.getsignal(signal.SIGINT)
    return ("ignored" if handler == signal.SIG_IGN else str(handler), os.environ.get("MALLOC_TRIM_THRESHOLD_"),
            os.environ.get("MALLOC_TOP_PAD_"), os.environ.get("NUMBA_NUM_THREADS"))


# -- Ctrl-C on a bench running on a local cluster ------------------------------------------------


@pytest.mark.slow
def test_ctrl_c_on_fsss_paper_with_workers_is_clean(tmp_path):
    """SIGINT to the whole process group (as a terminal's Ctrl-C) while the
    workers run: exit 130 within seconds, the finished rows kept, no
    traceback and no Dask log on stderr."""
    out = tmp_path / "fsss"
    proc = subprocess.Popen([sys.executable, "-m", "jitsearch", "bench", "fsss-paper", "--out", str(out),
                             "--heights", "8-14:2", "--trees", "80", "--exp2-heights", "6-8:1", "--exp2-trees", "10",
                             "--no-cost", "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        csv = out / "experiment1_trees.csv"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if csv.exists() and csv.read_text().count("\n") >= 3:  # header and rows: the workers are running
                break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.3)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out_text, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "distributed." not in err and "Exception ignored" not in err, err
    assert "interrupted" in err
    assert took < 10, took
    assert csv.read_text().count("\n") >= 3

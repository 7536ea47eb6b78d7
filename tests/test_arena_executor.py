"""The arena's executor: in this process, on a local Dask cluster, on an
existing cluster; each result delivered once, a dead worker's task retried
elsewhere, a stop request cancelling what is outstanding."""

from __future__ import annotations

import os

import pytest

from jitsearch.arena.executor import ExecutorError, describe, run_tasks


def square(x):
    return x * x


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

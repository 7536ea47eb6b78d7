#!/usr/bin/env python
"""CPU scaling on many cores: speedup and parallel
efficiency of jitsearch's multi-threaded CPU paths at 1, 2, 4, 8, 16 threads.

Five measurements, in this order, on Kalah(6,4) (the endgame database on
m = 6), the first four at every thread count of ``--threads`` (default ``1,2,4,8,16``, clipped to the
CPUs this process may run on unless ``--force``; 1 is always added, as every
speedup is relative to the 1-thread figure measured in the same run):

1. ``playouts``: random playouts per second from the start position with the
   CPU playout engine, :func:`jitsearch.games.kalah.playouts.evaluate_cpu`
   (``threads=N``: the states split in chunks over the process-wide pool, as
   :func:`jitsearch.benchmarks.playouts_bench.measure_playouts` calls it).
   Weak scaling: ``--playouts-per-thread`` playouts per thread, in states
   of ``--playouts-per-state`` playouts each.
2. ``mcts``: root-parallel MCTS iterations per second from the start
   position, :func:`jitsearch.mcts.search.mcts_search` with ``time=T`` and
   ``workers=N`` (what the CLI agent ``mcts:time=T,workers=N`` runs: N
   independent trees on N threads, in-kernel playouts). Every run gets the
   same tree capacity, ``--mcts-capacity`` nodes a tree (default 2**22, the
   search's own cap for a time-limited search): a full tree stops expanding
   and its iterations get cheaper, so ``tree_full`` flags a run whose trees
   may have filled up (its rate is then too high: raise the capacity).
3. ``endgame``: the Kalah endgame database build,
   :func:`jitsearch.games.kalah.endgame.build_endgame_database` (in RAM,
   ``threads=N``), at ``--endgame-seeds`` seeds (default 14: 9.7 M positions
   a player, a few seconds on one thread). Each row carries the estimator's
   figures next to the measured ones: the speedup and efficiency that
   :func:`~jitsearch.games.kalah.endgame.estimate_endgame_build` assumes
   (:func:`~jitsearch.games.kalah.endgame.parallel_speedup`: the speedups
   this benchmark measured on the 16-core machine, which replaced an assumed
   ``1 + 0.9 (N - 1)``) and its seconds. Every build's values are hashed and compared with the 1-thread
   build's (``identical``).
4. ``lazy_smp``: the Kalah engine's Lazy SMP,
   :class:`jitsearch.games.kalah.engine.KalahEngine` (``threads=N``, one
   shared lock-free table of ``--lazy-table-mb`` MiB, no endgame database):
   time to finish iterative deepening to ``--lazy-depth`` plies from the
   start (a fresh engine, so an empty table, each run), and nodes per second.
5. ``endgame_serial``: the same database built serially
   (``parallel=False``, one thread): measures the estimator's
   ``PARALLEL_ONE_THREAD`` (0.8: the parallel kernel's 1-thread rate over the
   serial one's) and ``BUILD_RATE_M6`` assumptions. Last, so that it is the
   first thing the budget drops.

``--measure`` picks a subset (e.g. ``--measure endgame,lazy_smp``).

Method: every measurement first runs untimed at a small size (at 1 thread
and at the largest thread count: compiles or loads the Numba kernels and
starts the thread pools), then ``--repeats`` timed runs per thread count;
figures are medians; speedup = (1-thread figure) / (N-thread figure) for
times, the inverse for rates; efficiency = speedup / N.

Budget: the defaults should take about 100-130 s on a 16-core machine,
20-30 s of it Numba compiling into an empty cache (measured on a 2-core
EPYC: 1-thread runs of 0.65 s a playout batch, 1 s a search, 5.4 s an
endgame build, 2.7 s a Lazy SMP search, 4.2 s a serial build; three runs
each). ``--budget-seconds`` (default 150, counted from the start of the
process) is a guard: a thread count whose predicted time (its repeats at
the previous point's longest run) does not fit in what is left is skipped
and listed under ``skipped``; the JSON is rewritten after every
measurement, so a run killed from outside keeps what it had.

Run (the full measurement, meant for a 16-core machine)::

    PYTHONUNBUFFERED=1 PYTHONPATH=. python bench/many_core_scaling.py

    # a smoke run on a small machine (smaller sizes, under a minute):
    PYTHONPATH=. python bench/many_core_scaling.py --quick --threads 1,2 --out /tmp/scal.json

Writes ``--out`` (default ``bench/results/many_core_scaling.json``): machine
information (``os.cpu_count()``, the affinity mask, lscpu's model name and
topology, Python, NumPy and Numba versions, Numba's threading layer, the
relevant environment variables, load averages before and after), the
command line, the settings, and per measurement the rows (threads, every
run, median, speedup, efficiency). With matplotlib importable, also a PNG
of speedup against threads beside it (same name, ``.png``), with the ideal
line and the endgame estimator's assumed line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DEFAULT_OUT = ROOT / "bench" / "results" / "many_core_scaling.json"
MEASUREMENTS = ("playouts", "mcts", "endgame", "lazy_smp", "endgame_serial")
HOUSES, SEEDS = 6, 4
#: (default, --quick) sizes.
SIZES = {
    "playouts_per_thread": (1 << 20, 1 << 17),
    "mcts_time": (1.0, 0.3),
    "endgame_seeds": (14, 11),
    "lazy_depth": (20, 16),
}
#: Endgame database of the warm-up (m = 6): large enough for waves of the parallel kernel.
WARM_SEEDS = 9
#: Largest per-tree node pool of a time-limited search (the one mcts_search uses by default).
MCTS_MAX_CAPACITY = 1 << 22

#: Start of the run (this module's import): the budget and the log's clock count from here.
_T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - _T0:7.1f}s] {msg}", flush=True)


# --------------------------------------------------------------------------- machine


def _lscpu() -> dict:
    keys = {"Model name": "model_name", "Thread(s) per core": "threads_per_core", "Core(s) per socket":
            "cores_per_socket", "Socket(s)": "sockets", "NUMA node(s)": "numa_nodes", "CPU max MHz": "max_mhz",
            "L2 cache": "l2", "L3 cache": "l3", "Vendor ID": "vendor", "Hypervisor vendor": "hypervisor"}
    out = {}
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10,
                              env=dict(os.environ, LC_ALL="C")).stdout
    except (OSError, subprocess.SubprocessError):
        text = ""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in keys and keys[name.strip()] not in out:
            out[keys[name.strip()]] = value.strip()
    if "model_name" not in out:
        try:
            for line in Path("/proc/cpuinfo").read_text().splitlines():
                if line.startswith("model name"):
                    out["model_name"] = line.partition(":")[2].strip()
                    break
        except OSError:
            pass
    return out


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _git() -> dict:
    def run(*cmd):
        try:
            r = subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=10)
            return r.stdout.strip() if r.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            return None

    status = run("status", "--porcelain", "--untracked-files=no")
    return {"commit": run("rev-parse", "HEAD"), "dirty": None if status is None else bool(status)}


def machine_info() -> dict:
    import numba
    import numpy as np

    try:
        from jitsearch._version import __version__ as jv
    except Exception:  # noqa: BLE001 - informative only
        jv = None
    return {
        "cpu_count": os.cpu_count(), "affinity_cpus": _affinity(), "lscpu": _lscpu(),
        "processor": platform.processor(), "machine": platform.machine(), "platform": platform.platform(),
        "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
        "numba_num_threads": int(numba.config.NUMBA_NUM_THREADS),
        "numba_threading_layer_config": numba.config.THREADING_LAYER, "jitsearch": jv, "git": _git(),
        "env": {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER", "NUMBA_CACHE_DIR",
                                               "OMP_NUM_THREADS", "JITSEARCH_SIMD", "PYTHONUNBUFFERED")},
        "loadavg_before": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


# --------------------------------------------------------------------------- scaling driver


class Budget:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def left(self) -> float:
        return self.seconds - (time.perf_counter() - _T0)


def sweep(name: str, threads: list[int], repeats: int, run_once, *, metric: str, higher_is_better: bool,
          first_guess: float, weak: bool, budget: Budget, skipped: list, extra_rows=None) -> list[dict]:
    """``run_once(threads, repeat) -> dict`` (with ``seconds`` and ``metric``) at each thread count,
    ``repeats`` times; rows with medians, speedup and efficiency against the 1-thread row."""
    rows = []
    last = first_guess
    for t in threads:
        predicted = repeats * last * (1.5 if weak else 1.0)
        if predicted > budget.left():
            msg = (f"{name} at {t} threads: predicted {predicted:.1f} s, {max(budget.left(), 0):.1f} s of the "
                   f"budget left")
            log(f"SKIP {msg}")
            skipped.append(msg)
            continue
        runs = []
        for r in range(repeats):
            try:
                runs.append(run_once(t, r))
            except Exception as exc:  # noqa: BLE001 - record and go on with the other thread counts
                log(f"{name} at {t} threads failed: {exc!r}")
                rows.append({"threads": t, "error": repr(exc)})
                runs = None
                break
        if runs is None:
            continue
        last = max(x["seconds"] for x in runs)
        row = {"threads": t, "runs": runs, metric: statistics.median(x[metric] for x in runs),
               "seconds": statistics.median(x["seconds"] for x in runs)}
        for key in runs[0]:
            if key not in (metric, "seconds", "move") and isinstance(runs[0][key], (int, float)) \
                    and not isinstance(runs[0][key], bool):
                row[key] = statistics.median(x[key] for x in runs)
        base = next((x for x in rows if x["threads"] == 1 and metric in x), row if t == 1 else None)
        if base is not None:
            ratio = row[metric] / base[metric]
            row["speedup"] = ratio if higher_is_better else 1.0 / ratio
            row["efficiency"] = row["speedup"] / t
        if extra_rows is not None:
            extra_rows(row)
        rows.append(row)
        spd = f"speedup {row['speedup']:5.2f}  efficiency {row['efficiency']:5.1%}" if "speedup" in row else ""
        log(f"{name:9s} threads {t:3d}: {metric} {_fmt(row[metric])}  {spd}  (runs "
            f"{', '.join(_fmt(x[metric]) for x in runs)})")
    return rows


def _fmt(x: float) -> str:
    if abs(x) >= 1e5:
        return f"{x:.4g}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


# --------------------------------------------------------------------------- measurements


def measure_playouts(args, threads, budget, skipped, done) -> dict:
    import numpy as np

    from jitsearch.games.kalah import KalahState
    from jitsearch.games.kalah.playouts import cpu_playout_kind, evaluate_cpu

    start = KalahState.initial(HOUSES, SEEDS)
    per_state = args.playouts_per_state

    def batch(states):
        return np.repeat(start.board[None, :], states, axis=0), np.zeros(states, dtype=np.int64)

    t0 = time.perf_counter()
    b, p = batch(4 * max(threads))
    evaluate_cpu(b, p, 4, 0, threads=1)  # compiles / loads the kernel
    evaluate_cpu(b, p, 4, 0, threads=max(threads))  # grows the pool to its largest size
    warm = time.perf_counter() - t0
    log(f"playouts warm-up {warm:.1f} s (kernel {cpu_playout_kind(HOUSES)})")
    batches = {}

    def run_once(t, r):
        if t not in batches:
            batches[t] = batch(max(4 * t, args.playouts_per_thread // per_state * t))
        boards, players = batches[t]
        t1 = time.perf_counter()
        out = evaluate_cpu(boards, players, per_state, 1 + r, threads=t)
        dt = time.perf_counter() - t1
        n = boards.shape[0] * per_state
        return {"seconds": dt, "playouts": n, "playouts_per_second": n / dt,
                "plies_per_second": int(out["plies"].sum()) / dt}

    rows = sweep("playouts", threads, args.repeats, run_once, metric="playouts_per_second", higher_is_better=True,
                 first_guess=args.playouts_per_thread / 1.0e6, weak=True, budget=budget, skipped=skipped)
    return {"function": "jitsearch.games.kalah.playouts.evaluate_cpu(boards, players, playouts_per_state, seed, "
                        "threads=N)", "board": f"Kalah({HOUSES},{SEEDS}) start", "kernel": cpu_playout_kind(HOUSES),
            "scaling": "weak: playouts_per_thread x N playouts a run", "playouts_per_thread": args.playouts_per_thread,
            "playouts_per_state": per_state, "warm_seconds": warm, "rows": rows}


def measure_mcts(args, threads, budget, skipped, done) -> dict:
    from jitsearch.games.kalah import KalahState
    from jitsearch.mcts.search import mcts_search
    from jitsearch.mcts.tree import MCTSTree

    start = KalahState.initial(HOUSES, SEEDS)
    per_node = MCTSTree.bytes_per_node(HOUSES)
    capacity = args.mcts_capacity
    slack = 64 << 20
    t0 = time.perf_counter()
    mcts_search(start, iterations=64, workers=1, seed=0)  # compiles / loads the kernel
    mcts_search(start, iterations=64 * max(threads), workers=max(threads), seed=0)
    mcts_search(start, time=min(0.2, args.mcts_time), workers=1, seed=0, capacity=capacity,
                max_bytes=capacity * per_node + slack)  # a time-limited search, as timed below
    warm = time.perf_counter() - t0
    log(f"mcts warm-up {warm:.1f} s; {capacity:,} nodes a tree ({capacity * per_node / 2**20:.0f} MiB; "
        f"{max(threads) * capacity * per_node / 2**30:.1f} GiB at {max(threads)} workers)")

    def run_once(t, r):
        t1 = time.perf_counter()
        res = mcts_search(start, time=args.mcts_time, workers=t, seed=1000 * t + r, capacity=capacity,
                          max_bytes=t * capacity * per_node + slack)
        wall = time.perf_counter() - t1
        return {"seconds": wall, "search_seconds": res["seconds"], "iterations": res["iterations"],
                "iterations_per_second": res["iterations"] / res["seconds"], "nodes": res["nodes"],
                "tree_full": bool(res["nodes"] >= 0.97 * t * capacity) or res["seconds"] < 0.9 * args.mcts_time}

    rows = sweep("mcts", threads, args.repeats, run_once, metric="iterations_per_second", higher_is_better=True,
                 first_guess=args.mcts_time + 0.3, weak=False, budget=budget, skipped=skipped)
    for row in rows:
        if "runs" in row:
            row["tree_full"] = any(x["tree_full"] for x in row["runs"])
    return {"function": "jitsearch.mcts.search.mcts_search(state, time=T, workers=N, capacity=C) "
                        "(= CLI agent mcts:time=T,workers=N)", "board": f"Kalah({HOUSES},{SEEDS}) start",
            "time_per_search": args.mcts_time, "capacity_per_tree": capacity, "bytes_per_node": per_node,
            "warm_seconds": warm, "rows": rows}


def _endgame_run(build, seeds, size, hashes, t, parallel=True) -> dict:
    """One timed build (in RAM) and the SHA-256 of its values, checked against ``hashes["reference"]``."""
    t1 = time.perf_counter()
    db = build(HOUSES, seeds, threads=t if parallel else None, parallel=parallel, max_bytes=1 << 34)
    dt = time.perf_counter() - t1
    digest = hashlib.sha256(db["values"].tobytes()).hexdigest()
    hashes.setdefault("reference", digest)
    return {"seconds": dt, "positions_per_second": size / dt, "identical": digest == hashes["reference"]}


def measure_endgame(args, threads, budget, skipped, done) -> dict:
    import numba

    from jitsearch.games.kalah import endgame

    build, estimate = endgame.build_endgame_database, endgame.estimate_endgame_build
    seeds = args.endgame_seeds
    most = int(numba.config.NUMBA_NUM_THREADS)
    t0 = time.perf_counter()
    # compiles / loads the kernels; at S = 9 (294 K positions) the big waves run the parallel kernel
    build(HOUSES, WARM_SEEDS, threads=1)
    build(HOUSES, WARM_SEEDS, threads=min(max(threads), most))
    warm = time.perf_counter() - t0
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = None
    size = endgame.database_size(HOUSES, seeds)
    log(f"endgame warm-up {warm:.1f} s (Numba threading layer {layer}); m={HOUSES} S={seeds}: {size:,} positions "
        f"a player")
    hashes = {}

    def assumed(row):
        t = row["threads"]
        row["assumed_speedup"] = endgame.parallel_speedup(t)
        row["assumed_efficiency"] = row["assumed_speedup"] / t
        try:
            row["estimate_seconds"] = estimate(HOUSES, seeds, threads=t)["seconds"]
        except ValueError as exc:
            row["estimate_seconds"] = None
            row["estimate_error"] = str(exc)
        if "speedup" in row:
            log(f"endgame   threads {t:3d}: measured speedup {row['speedup']:5.2f} efficiency "
                f"{row['efficiency']:5.1%} | estimator assumes {row['assumed_speedup']:5.2f} / "
                f"{row['assumed_efficiency']:5.1%}; {row['estimate_seconds'] or float('nan'):.2f} s estimated vs "
                f"{row['seconds']:.2f} s measured")

    rows = sweep("endgame", threads, args.repeats, lambda t, r: _endgame_run(build, seeds, size, hashes, t),
                 metric="seconds", higher_is_better=False, first_guess=estimate(HOUSES, seeds, threads=1)["seconds"],
                 weak=False, budget=budget, skipped=skipped, extra_rows=assumed)
    for row in rows:
        if "runs" in row:
            row["identical"] = all(x["identical"] for x in row["runs"])
    return {"function": "jitsearch.games.kalah.endgame.build_endgame_database(6, S, threads=N) (in RAM)",
            "houses": HOUSES, "max_seeds": seeds, "positions_per_player": size, "numba_threading_layer": layer,
            "estimator": {"function": "estimate_endgame_build", "PARALLEL_SPEEDUP": endgame.PARALLEL_SPEEDUP,
                          "PARALLEL_ONE_THREAD": endgame.PARALLEL_ONE_THREAD, "BUILD_RATE_M6": endgame.BUILD_RATE_M6,
                          "assumed_speedup": "parallel_speedup(threads)"},
            "values_sha256": hashes.get("reference"), "warm_seconds": warm, "rows": rows}


def measure_endgame_serial(args, threads, budget, skipped, done) -> dict:
    """The serial build (``parallel=False``) of the same database: checks the estimator's
    PARALLEL_ONE_THREAD (the parallel kernel's 1-thread rate / the serial one's) and BUILD_RATE_M6."""
    from jitsearch.games.kalah import endgame

    build = endgame.build_endgame_database
    seeds = args.endgame_seeds
    size = endgame.database_size(HOUSES, seeds)
    t0 = time.perf_counter()
    build(HOUSES, WARM_SEEDS, parallel=False)  # compiles / loads the kernel
    warm = time.perf_counter() - t0
    log(f"endgame_serial warm-up {warm:.1f} s")
    par = done.get("endgame") if isinstance(done.get("endgame"), dict) else {}
    one = next((x for x in par.get("rows", []) if x["threads"] == 1 and "seconds" in x), None)
    hashes = {"reference": par["values_sha256"]} if par.get("values_sha256") else {}
    rows = sweep("endgame_serial", [1], args.repeats, lambda t, r: _endgame_run(build, seeds, size, hashes, t, False),
                 metric="seconds", higher_is_better=False,
                 first_guess=one["seconds"] * endgame.PARALLEL_ONE_THREAD if one else
                 endgame.estimate_endgame_build(HOUSES, seeds, parallel=False)["seconds"],
                 weak=False, budget=budget, skipped=skipped)
    out = {"function": "jitsearch.games.kalah.endgame.build_endgame_database(6, S, parallel=False) (in RAM)",
           "houses": HOUSES, "max_seeds": seeds, "positions_per_player": size, "warm_seconds": warm, "rows": rows,
           "estimator_rate": endgame.BUILD_RATE_M6 * 6 / HOUSES,
           "PARALLEL_ONE_THREAD_assumed": endgame.PARALLEL_ONE_THREAD}
    if rows and "seconds" in rows[0]:
        s = rows[0]
        for key in ("speedup", "efficiency"):  # no thread sweep here
            s.pop(key, None)
        s["identical"] = all(x["identical"] for x in s["runs"])
        if one is not None:
            out["PARALLEL_ONE_THREAD_measured"] = s["seconds"] / one["seconds"]
        log(f"endgame serial {s['seconds']:.2f} s, {size / s['seconds'] / 1e6:.2f} M positions/s (estimator's rate "
            f"{out['estimator_rate'] / 1e6:.2f}); parallel kernel on 1 thread / serial: "
            f"{out.get('PARALLEL_ONE_THREAD_measured', float('nan')):.2f} (estimator assumes "
            f"{endgame.PARALLEL_ONE_THREAD})")
    return out


def measure_lazy_smp(args, threads, budget, skipped, done) -> dict | str:
    try:
        from jitsearch.games.kalah.engine import KalahEngine
    except ImportError:
        return "not implemented"
    from jitsearch.games.kalah import KalahState

    start = KalahState.initial(HOUSES, SEEDS)
    t0 = time.perf_counter()
    KalahEngine(HOUSES, threads=1, table_mb=4).search(start, depth=8)  # compiles / loads the kernels
    KalahEngine(HOUSES, threads=max(threads), table_mb=4).search(start, depth=8)
    warm = time.perf_counter() - t0
    log(f"lazy_smp warm-up {warm:.1f} s")

    def run_once(t, r):
        engine = KalahEngine(HOUSES, threads=t, table_mb=args.lazy_table_mb)  # fresh (empty) table each run
        t1 = time.perf_counter()
        res = engine.search(start, depth=args.lazy_depth)
        dt = time.perf_counter() - t1
        return {"seconds": dt, "nodes": res["nodes"], "nodes_per_second": res["nodes"] / dt, "depth": res["depth"],
                "move": res["move"], "value": res["value"]}

    rows = sweep("lazy_smp", threads, args.repeats, run_once, metric="seconds", higher_is_better=False,
                 first_guess=3.0, weak=False, budget=budget, skipped=skipped)
    base = next((x for x in rows if x["threads"] == 1 and "nodes_per_second" in x), None)
    for row in rows:
        if base is not None and "nodes_per_second" in row:
            row["nps_speedup"] = row["nodes_per_second"] / base["nodes_per_second"]
            row["nodes_ratio"] = row["nodes"] / base["nodes"]
    return {"function": "jitsearch.games.kalah.engine.KalahEngine(6, threads=N, table_mb=MB).search(state, depth=D)",
            "board": f"Kalah({HOUSES},{SEEDS}) start", "metric": "seconds to finish depth D (time to depth)",
            "depth": args.lazy_depth, "table_mb": args.lazy_table_mb, "endgame_database": None,
            "warm_seconds": warm, "rows": rows}


RUNNERS = {"playouts": measure_playouts, "mcts": measure_mcts, "endgame": measure_endgame,
           "lazy_smp": measure_lazy_smp, "endgame_serial": measure_endgame_serial}
METRICS = {"playouts": "playouts_per_second", "mcts": "iterations_per_second", "endgame": "seconds",
           "lazy_smp": "seconds", "endgame_serial": "seconds"}


# --------------------------------------------------------------------------- output


def write_json(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result, indent=1, default=str) + "\n")
    os.replace(tmp, path)


def summary(result: dict) -> None:
    print(f"\n{'measurement':<14} {'threads':>7} {'figure':>22} {'speedup':>8} {'effic.':>7}  notes", flush=True)
    for name, m in result["measurements"].items():
        if not isinstance(m, dict):
            print(f"{name:<14} {m}", flush=True)
            continue
        if "error" in m:
            print(f"{name:<14} FAILED: {m['error']}", flush=True)
        metric = METRICS[name]
        for row in m.get("rows", []):
            if metric not in row:
                print(f"{name:<14} {row['threads']:>7} {'error: ' + row.get('error', '?')}", flush=True)
                continue
            unit = "s" if metric == "seconds" else "/s"
            note = ""
            if "assumed_speedup" in row:
                note = f"assumed {row['assumed_speedup']:.2f} / {row['assumed_efficiency']:.0%}"
            if row.get("tree_full"):
                note += " TREE FULL"
            if row.get("identical") is False:
                note += " VALUES DIFFER"
            if "PARALLEL_ONE_THREAD_measured" in m:
                note += f"parallel 1-thread / serial {m['PARALLEL_ONE_THREAD_measured']:.2f} (assumed " \
                       f"{m['PARALLEL_ONE_THREAD_assumed']})"
            spd = f"{row['speedup']:>8.2f} {row['efficiency']:>7.1%}" if "speedup" in row else f"{'-':>8} {'-':>7}"
            print(f"{name:<14} {row['threads']:>7} {_fmt(row[metric]) + ' ' + unit:>22} {spd}  {note}", flush=True)


def plot(path: Path, result: dict) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401 - ax.yaxis formatter below
    except Exception:  # noqa: BLE001 - the figure is optional
        return None
    fig, ax = plt.subplots(figsize=(7, 5))
    top = max(result["threads"])
    xs = sorted(set(result["threads"]) | {1})
    ax.plot(xs, xs, "k:", label="ideal")
    for name, m in result["measurements"].items():
        if not isinstance(m, dict):
            continue
        rows = [r for r in m.get("rows", []) if "speedup" in r]
        if rows:
            ax.plot([r["threads"] for r in rows], [r["speedup"] for r in rows], "o-", label=name)
        if name == "endgame" and rows:
            ax.plot([r["threads"] for r in rows], [r["assumed_speedup"] for r in rows], "--", color="grey",
                    label="endgame estimator")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlim(0.9, top * 1.1)
    ax.set_xlabel("threads")
    ax.set_ylabel("speedup over 1 thread")
    model = result["machine"]["lscpu"].get("model_name") or result["machine"]["processor"] or "?"
    ax.set_title(f"jitsearch CPU scaling, {model} ({result['machine']['cpu_count']} CPUs)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    png = path.with_suffix(".png")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    return png


# --------------------------------------------------------------------------- main


def parse_threads(text: str) -> list[int]:
    try:
        out = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"error: --threads must be comma-separated integers, got {text!r}") from None
    if not out or out[0] < 1:
        raise SystemExit("error: --threads must be integers >= 1")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2,4,8,16", help="comma-separated thread counts (1 is always added)")
    ap.add_argument("--force", action="store_true", help="keep thread counts above the CPUs this process may use")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per thread count (median)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run on a small machine)")
    ap.add_argument("--measure", default=",".join(MEASUREMENTS),
                    help=f"comma-separated subset of {','.join(MEASUREMENTS)}")
    ap.add_argument("--budget-seconds", type=float, default=150.0,
                    help="skip thread counts predicted to end past this many seconds from the start (default 150)")
    ap.add_argument("--playouts-per-thread", type=int, default=None, help="playouts a run per thread "
                    f"(default {SIZES['playouts_per_thread'][0]}, --quick {SIZES['playouts_per_thread'][1]})")
    ap.add_argument("--playouts-per-state", type=int, default=1024)
    ap.add_argument("--mcts-time", type=float, default=None, help="seconds a search "
                    f"(default {SIZES['mcts_time'][0]}, --quick {SIZES['mcts_time'][1]})")
    ap.add_argument("--mcts-capacity", type=int, default=MCTS_MAX_CAPACITY,
                    help=f"nodes a tree, every run (default {MCTS_MAX_CAPACITY:,}: mcts_search's own cap for a "
                         f"time-limited search; one second on a fast core fills about half of it)")
    ap.add_argument("--endgame-seeds", type=int, default=None, help="database seeds, m = 6 "
                    f"(default {SIZES['endgame_seeds'][0]}, --quick {SIZES['endgame_seeds'][1]})")
    ap.add_argument("--lazy-depth", type=int, default=None, help="Lazy SMP search depth "
                    f"(default {SIZES['lazy_depth'][0]}, --quick {SIZES['lazy_depth'][1]})")
    ap.add_argument("--lazy-table-mb", type=float, default=64.0)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    q = 1 if args.quick else 0
    for key, sizes in SIZES.items():
        if getattr(args, key) is None:
            setattr(args, key, sizes[q])
    if args.repeats < 1:
        raise SystemExit("error: --repeats must be >= 1")
    wanted = [x.strip() for x in args.measure.split(",") if x.strip()]
    bad = [x for x in wanted if x not in MEASUREMENTS]
    if bad:
        raise SystemExit(f"error: unknown measurement(s) {', '.join(bad)}; known: {', '.join(MEASUREMENTS)}")
    if args.playouts_per_state < 1 or args.playouts_per_thread < args.playouts_per_state:
        raise SystemExit("error: need 1 <= --playouts-per-state <= --playouts-per-thread")

    asked = sorted(set(parse_threads(args.threads)) | {1})
    cpus = _affinity()
    threads = asked if args.force else [t for t in asked if t <= cpus]
    dropped = [t for t in asked if t not in threads]

    import numba

    info = machine_info()
    result = {
        "benchmark": "many_core_scaling", "issue": "24 part 5",
        "command": " ".join(shlex.quote(x) for x in [sys.executable, *sys.argv]),
        "argv": list(sys.argv if argv is None else argv), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "quick": args.quick, "threads": threads, "threads_asked": asked, "threads_dropped": dropped,
        "repeats": args.repeats, "budget_seconds": args.budget_seconds,
        "settings": {k: getattr(args, k) for k in ("playouts_per_thread", "playouts_per_state", "mcts_time",
                                                   "endgame_seeds", "lazy_depth",
                                                   "lazy_table_mb")},
        "machine": info, "measurements": {}, "skipped": [], "errors": {},
    }
    lscpu = info["lscpu"]
    log(f"{lscpu.get('model_name', platform.processor() or '?')}: os.cpu_count()={os.cpu_count()}, affinity "
        f"{cpus}, {lscpu.get('sockets', '?')} socket(s) x {lscpu.get('cores_per_socket', '?')} core(s) x "
        f"{lscpu.get('threads_per_core', '?')} thread(s); Python {info['python']}, Numba {numba.__version__} "
        f"(NUMBA_NUM_THREADS={info['numba_num_threads']})")
    log(f"threads {threads}" + (f" (dropped {dropped}: above the {cpus} CPUs; --force keeps them)" if dropped
                                 else "") + f", repeats {args.repeats}, budget {args.budget_seconds:.0f} s, "
        f"measurements {', '.join(wanted)}")
    budget = Budget(args.budget_seconds)
    for name in MEASUREMENTS:
        if name not in wanted:
            continue
        if budget.left() <= 0:
            result["skipped"].append(f"{name}: no budget left")
            log(f"SKIP {name}: no budget left")
            continue
        log(f"--- {name}")
        t0 = time.perf_counter()
        try:
            out = RUNNERS[name](args, threads, budget, result["skipped"], result["measurements"])
        except Exception as exc:  # noqa: BLE001 - one failing measurement must not lose the others
            log(f"{name} FAILED: {exc!r}")
            result["errors"][name] = traceback.format_exc()
            out = {"error": repr(exc)}
        if isinstance(out, dict):
            out["total_seconds"] = time.perf_counter() - t0
        result["measurements"][name] = out
        result["elapsed_seconds"] = time.perf_counter() - _T0
        write_json(args.out, result)
    result["elapsed_seconds"] = time.perf_counter() - _T0
    result["machine"]["loadavg_after"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    png = None
    try:
        png = plot(args.out, result)
    except Exception as exc:  # noqa: BLE001 - the figure is optional
        log(f"figure skipped: {exc!r}")
    result["figure"] = str(png) if png else None
    write_json(args.out, result)
    summary(result)
    log(f"wrote {args.out}" + (f" and {png}" if png else "") + f"; total {result['elapsed_seconds']:.1f} s")
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Leaves per second of the Numba alpha-beta against the plain-Python one.

Same binary implicit trees for both, timed in the same run after JIT
warm-up; the speed-up is the ratio of times on identical trees (so of
leaves per second), median over repeats. Also measures the first call of a
fresh process, with an empty Numba cache (compilation) and with a warm one.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from .. import naive
from ..search.depth_first import _search_kernel
from ..trees import UniformTree

_FIRST_CALL_SCRIPT = r"""
import json, time
t0 = time.perf_counter()
import jitsearch
t1 = time.perf_counter()
r = jitsearch.alphabeta(jitsearch.UniformTree(2, 16, seed=1))
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_solve_s": t2 - t1}))
"""


def _kernel_time(datas, buf) -> tuple[float, int]:
    """Seconds and leaves for one pass of the kernel over ``datas``."""
    leaves = 0
    t0 = time.perf_counter()
    for t in datas:
        leaves += _search_kernel(t, -math.inf, math.inf, True, 1, buf)[2]
    return time.perf_counter() - t0, leaves


def _python_time(trees) -> tuple[float, int]:
    leaves = 0
    t0 = time.perf_counter()
    for tree in trees:
        leaves += len(naive.alphabeta(tree)[2])
    return time.perf_counter() - t0, leaves


def first_call_times() -> dict:
    """Wall time of import + first solve in fresh processes (cold, warm cache)."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold_cache", "warm_cache"):
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL_SCRIPT], env=env, capture_output=True, text=True
            )
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                raise RuntimeError(f"first-call probe failed: {proc.stderr.strip()[-400:]}")
            inner = json.loads(proc.stdout.strip().splitlines()[-1])
            out[label] = {"process_s": wall, **inner}
    return out


def run_throughput(
    heights=(10, 12, 14, 16, 18, 20, 22, 24),
    trees_per_height: int = 20,
    repeats: int = 5,
    python_max_height: int = 20,
    python_trees: int = 3,
    seed: int = 0,
    first_call: bool = True,
    progress=None,
) -> dict:
    """Run the benchmark and return a JSON-ready dict.

    ``progress(step_description)`` is called before each step when given.
    """
    heights = [int(h) for h in heights]
    if not heights or min(heights) < 1 or max(heights) > 40:
        raise ValueError("heights must lie in 1..40")
    if trees_per_height < 1 or repeats < 1 or python_trees < 1:
        raise ValueError("trees, repeats and python trees must be >= 1")
    buf = np.zeros(0, dtype=np.int64)
    # JIT warm-up (compiles or loads from cache)
    _search_kernel(UniformTree(2, 4, seed=seed).data(), -math.inf, math.inf, True, 1, buf)
    rows = []
    for h in heights:
        if progress:
            progress(f"height {h}")
        trees = [UniformTree(2, h, seed=seed + i) for i in range(trees_per_height)]
        datas = [t.data() for t in trees]
        lps = []
        leaves = 0
        for _ in range(repeats):
            sec, leaves = _kernel_time(datas, buf)
            lps.append(leaves / sec)
        row = {
            "height": h,
            "trees": trees_per_height,
            "mean_leaves_expanded": leaves / trees_per_height,
            "numba_leaves_per_second": statistics.median(lps),
            "python_leaves_per_second": None,
            "speedup_vs_python": None,
        }
        if h <= python_max_height:
            sub = trees[:python_trees]
            sub_data = datas[:python_trees]
            ratios, py_lps = [], []
            for _ in range(repeats if h <= 16 else max(1, min(repeats, 3))):
                py_sec, py_leaves = _python_time(sub)
                nb_sec, nb_leaves = _kernel_time(sub_data, buf)
                assert py_leaves == nb_leaves, "reference and kernel expanded different leaves"
                ratios.append(py_sec / nb_sec)
                py_lps.append(py_leaves / py_sec)
            row["python_leaves_per_second"] = statistics.median(py_lps)
            row["speedup_vs_python"] = statistics.median(ratios)
        rows.append(row)
    speedups = [r["speedup_vs_python"] for r in rows if r["speedup_vs_python"] is not None]
    result = {
        "benchmark": "throughput",
        "tree": "uniform binary, integer leaves in [-2**31, 2**31]",
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
        },
        "repeats": repeats,
        "rows": rows,
        "speedup_vs_python": statistics.median(speedups) if speedups else None,
        "leaves_per_second": statistics.median(r["numba_leaves_per_second"] for r in rows),
    }
    if first_call:
        if progress:
            progress("first call in fresh processes")
        result["first_call"] = first_call_times()
    return result

"""Leaves per second of the Numba alpha-beta against the plain-Python one.

Same binary implicit trees for both, timed in the same run after JIT
warm-up; the speed-up is the ratio of times on identical trees (so of
leaves per second), median over repeats. Also measures the first call of a
fresh process, with an empty Numba cache (compilation) and with a warm one.

When a C compiler is present, every height is also searched by the
hand-written C alpha-beta of ``bench/c_reference/`` (``plain``: the
kernel's explicit-stack algorithm; ``tuned``: recursive with the branching
and the value span as constants; see :mod:`jitsearch.benchmarks.c_reference`)
on the same trees, in the same repeats: its value, leaves expanded and nodes
visited must equal ``jitsearch.alphabeta``'s (``c_identical``), and
jitsearch's ratio to each is the median of the per-repeat ratios. Without a
compiler the C keys are None and ``c_note`` says why.
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
from ..search import alphabeta
from ..search.depth_first import search_kernel
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
        leaves += search_kernel(t, -math.inf, math.inf, True, 1, buf)[2]
    return time.perf_counter() - t0, leaves


def _python_time(trees) -> tuple[float, int]:
    leaves = 0
    t0 = time.perf_counter()
    for tree in trees:
        leaves += len(naive.alphabeta(tree)[2])
    return time.perf_counter() - t0, leaves


def _c_identical(trees) -> bool:
    """True when the C alpha-beta (both variants) gives jitsearch.alphabeta's value, leaves and nodes."""
    from .c_reference import run_alphabeta

    lo, hi = trees[0].value_range
    want = [alphabeta(t) for t in trees]
    for variant in ("plain", "tuned"):
        got = run_alphabeta(variant, trees[0].branching, trees[0].height, [t.seed for t in trees], lo=lo, hi=hi)
        for w, g in zip(want, got):
            if (w.value, w.leaves_expanded, w.nodes_visited) != (g["value"], g["leaves_expanded"],
                                                                 g["nodes_visited"]):
                return False
    return True


def _c_rate(variant: str, trees) -> float:
    """Leaves per second of the C alpha-beta over ``trees`` (its own search time)."""
    from .c_reference import run_alphabeta

    lo, hi = trees[0].value_range
    got = run_alphabeta(variant, trees[0].branching, trees[0].height, [t.seed for t in trees], lo=lo, hi=hi)
    return sum(g["leaves_expanded"] for g in got) / sum(g["seconds"] for g in got)


def _c_row(c_same, lps, c_lps) -> dict:
    row = {"c_identical": c_same}
    for variant in ("plain", "tuned"):
        runs = c_lps[variant]
        ratios = [a / b for a, b in zip(lps, runs)]
        row[f"c_{variant}_leaves_per_second"] = statistics.median(runs) if runs else None
        row[f"ratio_to_c_{variant}"] = statistics.median(ratios) if ratios else None
        row[f"ratio_to_c_{variant}_range"] = [min(ratios), max(ratios)] if ratios else None
    return row


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
    c_reference: bool = True,
) -> dict:
    """Run the benchmark and return a JSON-ready dict.

    ``progress(step_description)`` is called before each step when given.

    C reference keys (see the module docstring): top level ``c_note`` (None,
    or why the C rows were skipped), ``c_compiler``, ``c_identical`` (every
    height); per row ``c_identical``, ``c_plain_leaves_per_second`` /
    ``c_tuned_leaves_per_second`` (medians over repeats of all trees),
    ``ratio_to_c_plain`` / ``ratio_to_c_tuned`` (numba kernel / C, median
    of per-repeat ratios) and ``ratio_to_c_tuned_range`` ([min, max]).
    """
    heights = [int(h) for h in heights]
    if not heights or min(heights) < 1 or max(heights) > 40:
        raise ValueError("heights must lie in 1..40")
    if trees_per_height < 1 or repeats < 1 or python_trees < 1:
        raise ValueError("trees, repeats and python trees must be >= 1")
    if not isinstance(c_reference, bool):
        raise ValueError(f"c_reference must be True or False, got {c_reference!r}")
    from .c_reference import unavailable_reason

    c_note = unavailable_reason() if c_reference else "C reference not asked for"
    buf = np.zeros(0, dtype=np.int64)
    # JIT warm-up (compiles or loads from cache)
    search_kernel(UniformTree(2, 4, seed=seed).data(), -math.inf, math.inf, True, 1, buf)
    rows = []
    for h in heights:
        if progress:
            progress(f"height {h}")
        trees = [UniformTree(2, h, seed=seed + i) for i in range(trees_per_height)]
        datas = [t.data() for t in trees]
        lps = []
        leaves = 0
        c_lps = {"plain": [], "tuned": []}
        c_same = None
        if c_note is None:
            c_same = _c_identical(trees)
        for _ in range(repeats):
            sec, leaves = _kernel_time(datas, buf)
            lps.append(leaves / sec)
            if c_note is None:
                for variant in ("plain", "tuned"):
                    c_lps[variant].append(_c_rate(variant, trees))
        row = {
            "height": h,
            "trees": trees_per_height,
            "mean_leaves_expanded": leaves / trees_per_height,
            "numba_leaves_per_second": statistics.median(lps),
            "python_leaves_per_second": None,
            "speedup_vs_python": None,
        }
        row.update(_c_row(c_same, lps, c_lps))
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
        "c_note": c_note,
        "c_compiler": None,
        "c_identical": None if c_note else all(r["c_identical"] for r in rows),
    }
    if c_note is None:
        from .c_reference import compile_flags, compiler

        result["c_compiler"] = f"{compiler()} {compile_flags()}"
    if first_call:
        if progress:
            progress("first call in fresh processes")
        result["first_call"] = first_call_times()
    return result

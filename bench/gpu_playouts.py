#!/usr/bin/env python
"""Random playouts per second from the start of Kalah(6,4) and Kalah(6,6):
the CPU twin on one core and on all cores, and the CUDA kernel when a GPU is
present; then MCTS playouts per second of search with GPU leaf evaluation
against the one-core CPU MCTS. Every timed function runs once untimed first
(the JIT compile, cache loading, the CUDA context), every figure is the
median of --repeats timed runs, and ratios compare those warm medians.
Prints a table and writes bench/results/gpu_playouts.json (with the device
name).

    python bench/gpu_playouts.py [--states 65536 --playouts 64] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from jitsearch.benchmarks.playouts_bench import measure_playouts
from jitsearch.kernels.backend import cuda_status, device_name


def _warm_median(search, repeats: int) -> dict:
    """Run ``search(seed)`` once untimed (compilation, cache loading, device
    set-up), then ``repeats`` timed runs; median playouts/s and iterations/s."""
    search(0)
    runs = []
    for k in range(repeats):
        t0 = time.perf_counter()
        r = search(1 + k)
        dt = time.perf_counter() - t0
        runs.append({"seconds": dt, "playouts_per_second": r["simulations"] / dt,
                     "iterations_per_second": r["iterations"] / dt})
    return {"playouts_per_second": statistics.median(x["playouts_per_second"] for x in runs),
            "iterations_per_second": statistics.median(x["iterations_per_second"] for x in runs), "runs": runs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=65536, help="states per GPU launch")
    ap.add_argument("--playouts", type=int, default=64, help="playouts per state on the GPU")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "gpu_playouts.json")
    args = ap.parse_args(argv)
    cores = os.cpu_count() or 1
    cpu_states, cpu_playouts = (64, 16) if args.quick else (1024, 64)
    gpu_states, gpu_playouts = (256, 16) if args.quick else (args.states, args.playouts)
    rows = []
    has_gpu, why = cuda_status()
    for houses, seeds in ((6, 4), (6, 6)):
        one = measure_playouts("cpu", houses, seeds, cpu_states, cpu_playouts, args.repeats, 1)
        allc = measure_playouts("cpu", houses, seeds, cpu_states, cpu_playouts, args.repeats, cores)
        row = {"board": f"Kalah({houses},{seeds})", "cpu_1core": one, "cpu_all_cores": allc}
        if has_gpu:
            g = measure_playouts("cuda", houses, seeds, gpu_states, gpu_playouts, args.repeats)
            row["gpu"] = g
            row["gpu_vs_1core"] = g["playouts_per_second"] / one["playouts_per_second"]
        rows.append(row)
        print(f"{row['board']}: CPU 1 core {one['playouts_per_second']:,.0f}/s, CPU {cores} cores "
              f"{allc['playouts_per_second']:,.0f}/s"
              + (f", GPU {row['gpu']['playouts_per_second']:,.0f}/s ({row['gpu_vs_1core']:.0f}x one core)"
                 if has_gpu else f", GPU: not measured ({why})"), flush=True)
    # MCTS: every timed search runs once untimed first (JIT compile or cache load, CUDA context and buffers),
    # then the median of --repeats timed runs; the ratio compares those warm medians
    from jitsearch.games.kalah import KalahState
    from jitsearch.mcts.search import mcts_search

    s = KalahState.initial(6, 4)
    n = 2000 if args.quick else 20000
    cpu = _warm_median(lambda seed: mcts_search(s, iterations=n, c=2.0, seed=seed), args.repeats)
    mcts = {"repeats": args.repeats, "cpu_iterations": n, "cpu_playouts_per_second": cpu["playouts_per_second"],
            "cpu_iterations_per_second": cpu["iterations_per_second"], "cpu_runs": cpu["runs"]}
    if has_gpu:
        iters, per_leaf = (512, 16) if args.quick else (4096, 256)
        gpu = _warm_median(lambda seed: mcts_search(s, iterations=iters, backend="cuda", batch=256,
                                                    playouts=per_leaf, seed=seed), args.repeats)
        mcts.update(gpu_iterations=iters, gpu_playouts_per_leaf=per_leaf, gpu_batch=256,
                    gpu_playouts_per_second=gpu["playouts_per_second"],
                    gpu_iterations_per_second=gpu["iterations_per_second"], gpu_runs=gpu["runs"])
        mcts["gpu_vs_cpu"] = mcts["gpu_playouts_per_second"] / mcts["cpu_playouts_per_second"]
        mcts["gpu_vs_cpu_iterations"] = mcts["gpu_iterations_per_second"] / mcts["cpu_iterations_per_second"]
    print("MCTS playouts/s of search (warm, median of {}): CPU one core {:,.0f} ({:,.0f} iterations/s)".format(
              args.repeats, mcts["cpu_playouts_per_second"], mcts["cpu_iterations_per_second"])
          + (", GPU leaf evaluation {:,.0f} ({:.0f}x; {:,.0f} iterations/s, {:.2f}x)".format(
              mcts["gpu_playouts_per_second"], mcts["gpu_vs_cpu"], mcts["gpu_iterations_per_second"],
              mcts["gpu_vs_cpu_iterations"]) if has_gpu else ""))
    result = {"benchmark": "gpu-playouts", "device": device_name("cuda") if has_gpu else None,
              "cpu": device_name("cpu"), "cores": cores, "gpu_available": has_gpu,
              "gpu_unavailable_reason": None if has_gpu else why, "rows": rows, "mcts": mcts}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

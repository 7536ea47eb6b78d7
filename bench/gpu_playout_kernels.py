#!/usr/bin/env python
"""Kernel-only GPU playout rates of every playout kernel,
and the tree-parallel MCTS iterations that follow.

1. Kernel only: random playouts per second from the start of Kalah(6,4)
   (and Kalah(6,6)) for each kernel of
   :data:`jitsearch.games.kalah.cuda_playouts.KERNEL_KINDS` ("registers": the
   board in registers, a thread starting its next game as soon as one ends;
   "registers-playout": the same board, one game per loop iteration;
   "generic": the board in local memory; "packed": the CPU's packed board),
   the states and counters already on the device, timed from launch to
   synchronize (each shape launched once untimed first: the compile), the
   median of ``--repeats`` launches per (kernel, threads per block), with
   the ratio against the generic kernel measured in the same run. Every
   kernel's counters are compared with the generic kernel's (bit-identical
   or the run fails).
2. Tree-parallel MCTS (``backend=cuda, parallel=tree``, one tree, the
   default 8 blocks per SM, 32 playouts per leaf) from the start of
   Kalah(6,4): iterations per second of ``--search-seconds`` searches with
   the register-board kernel against the generic one, the median of
   ``--repeats`` after a warm-up search each.

Writes ``--out`` (default bench/results/gpu_playout_kernels.json). Needs a
CUDA GPU (numba-cuda with numpy < 2.5).

    python bench/gpu_playout_kernels.py [--states 262144 --playouts 64] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def kernel_rates(houses, seeds, states, per, repeats, tpbs, log, quick=False):
    from numba import cuda

    from jitsearch.games.kalah import KalahState
    from jitsearch.games.kalah import cuda_playouts as cp

    board = np.asarray(KalahState.initial(houses, seeds).board, np.int32)
    d_b = cuda.to_device(np.repeat(board[None, :], states, axis=0))
    d_p = cuda.to_device(np.zeros(states, np.int64))
    outs = [cuda.to_device(np.zeros(states, np.int64)) for _ in cp.OUTPUTS]
    zeros = np.zeros(states, np.int64)
    sms = 1 if quick else cuda.get_current_device().MULTIPROCESSOR_COUNT
    kernels = {"generic": cp.playout_kernel, "packed": cp.packed_kernel(houses),
               "registers-playout": cp.register_kernel(houses, "playout"), "registers": cp.register_kernel(houses)}

    def launch(k, blocks, tpb, seed):
        for o in outs:
            o.copy_to_device(zeros)
        cuda.synchronize()
        t0 = time.perf_counter()
        k[blocks, tpb](d_b, d_p, houses, False, per, np.uint64(seed), *outs)
        cuda.synchronize()
        return time.perf_counter() - t0

    rows = []
    for tpb in tpbs:
        blocks = 2 if quick else sms * 2048 // tpb  # one full wave of resident threads (2,048 per SM)
        for name, k in kernels.items():
            t0 = time.perf_counter()
            launch(k, blocks, tpb, 0)
            warm = time.perf_counter() - t0
            times = [launch(k, blocks, tpb, 1 + r) for r in range(repeats)]
            rates = [states * per / t for t in times]
            rows.append({"board": f"Kalah({houses},{seeds})", "kernel": name, "threads_per_block": tpb,
                         "blocks": blocks, "first_launch_seconds": warm,
                         "median_playouts_per_second": statistics.median(rates), "runs": rates})
            log(f"Kalah({houses},{seeds}) {name:18s} tpb {tpb:4d}: {statistics.median(rates) / 1e6:9.1f} M playouts/s"
                f" (first launch {warm:.1f} s)")
    base = {r["threads_per_block"]: r["median_playouts_per_second"] for r in rows if r["kernel"] == "generic"}
    for r in rows:
        r["x_generic"] = r["median_playouts_per_second"] / base[r["threads_per_block"]]
        log(f"Kalah({houses},{seeds}) {r['kernel']:18s} tpb {r['threads_per_block']:4d}: {r['x_generic']:.2f}x "
            "the generic kernel (same run)")
    # the same counters from every kernel (one seed, a launch of fewer threads than jobs)
    results = {}
    for name, k in kernels.items():
        for o in outs:
            o.copy_to_device(zeros)
        k[2 if quick else sms * 4, 128](d_b, d_p, houses, False, per, np.uint64(12345), *outs)
        cuda.synchronize()
        results[name] = [o.copy_to_host() for o in outs]
    identical = {name: all((a == b).all() for a, b in zip(results["generic"], res)) for name, res in results.items()}
    plies = results["generic"][4].sum() / (states * per)
    return rows, identical, float(plies)


def tree_parallel_rates(seconds, repeats, log):
    from jitsearch.games.kalah import KalahState
    from jitsearch.kernels.cuda_game_shared_tree import DeviceSharedTrees
    from jitsearch.mcts.shared import tree_parallel_search

    s = KalahState.initial(6, 4)
    out = {}
    for label, registers in (("generic", False), ("registers", True)):
        DeviceSharedTrees.registers = registers
        tree_parallel_search(s, time=0.2, trees=1, backend="cuda", playouts=32, seed=0)  # compile, warm
        runs = []
        for r in range(repeats):
            res = tree_parallel_search(s, time=seconds, trees=1, backend="cuda", playouts=32, seed=1 + r)
            runs.append(res["iterations"] / res["seconds"] if res.get("seconds") else res["iterations"] / seconds)
        out[label] = {"median_iterations_per_second": statistics.median(runs), "runs": runs}
        log(f"tree-parallel MCTS, {label} kernel: {statistics.median(runs):,.0f} iterations/s")
    DeviceSharedTrees.registers = True
    out["x_generic"] = out["registers"]["median_iterations_per_second"] / out["generic"]["median_iterations_per_second"]
    log(f"tree-parallel MCTS: registers {out['x_generic']:.2f}x the generic kernel's iterations/s (same run)")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=262144)
    ap.add_argument("--playouts", type=int, default=64, help="playouts per state")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tpb", default="128,256", help="threads per block to try")
    ap.add_argument("--search-seconds", type=float, default=0.5)
    ap.add_argument("--no-search", action="store_true", help="kernel rates only")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "gpu_playout_kernels.json")
    a = ap.parse_args(argv)
    from jitsearch.kernels.backend import cuda_status, device_name

    ok, why = cuda_status()
    if not ok:
        print(f"error: no CUDA GPU: {why}", file=sys.stderr)
        return 2
    if a.quick:
        a.states, a.playouts, a.repeats, a.search_seconds = 256, 4, 1, 0.1

    def log(msg):
        print(msg, flush=True)

    tpbs = [int(x) for x in a.tpb.split(",") if x]
    result = {"benchmark": "gpu-playout-kernels", "device": device_name("cuda"), "states": a.states,
              "playouts_per_state": a.playouts, "repeats": a.repeats, "command": " ".join(sys.argv)}
    rows, identical, plies = [], {}, {}
    for houses, seeds in ((6, 4), (6, 6)):
        r, same, mean_plies = kernel_rates(houses, seeds, a.states, a.playouts, a.repeats, tpbs, log, a.quick)
        rows += r
        identical[f"Kalah({houses},{seeds})"] = same
        plies[f"Kalah({houses},{seeds})"] = mean_plies
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(dict(result, kernels=rows, identical=identical, mean_plies=plies), indent=2))
    result.update(kernels=rows, identical=identical, mean_plies=plies)
    log(f"identical counters: {identical}")
    if not a.no_search:
        result["tree_parallel"] = tree_parallel_rates(a.search_seconds, a.repeats, log)
    a.out.write_text(json.dumps(result, indent=2) + "\n")
    log(f"written to {a.out}")
    return 0 if all(all(v.values()) for v in identical.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

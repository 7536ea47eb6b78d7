#!/usr/bin/env python
"""Device-resident MCTS vs CPU MCTS: rates, positions analysed per second and
strength at equal time per move (same as ``jitsearch bench gpu-mcts``).

Writes ``gpu_mcts.json`` and ``gpu_mcts.md`` (and the games as JSONL) into
``--out`` (default bench/results/gpu_mcts). Without a GPU the multi-tree
search runs on the CPU twin and the output says ``backend: cpu``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jitsearch.benchmarks.gpu_mcts_bench import format_table, run_gpu_mcts_bench


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "gpu_mcts")
    ap.add_argument("--rate-seconds", type=float, default=1.0)
    ap.add_argument("--rates", default="1x32,64x32,256x32,256x64,1024x32", help="TREESxPLAYOUTS,...")
    ap.add_argument("--positions", type=int, default=10_000)
    ap.add_argument("--analyse-iterations", type=int, default=1000)
    ap.add_argument("--move-times", default="0.05,0.2,1.0")
    ap.add_argument("--pairs", default="10,8,2", help="pairs per move time (each against both CPU opponents)")
    ap.add_argument("--trees", type=int, default=None)
    ap.add_argument("--playouts", type=int, default=32)
    ap.add_argument("--leaves", type=int, default=None, help="leaves per step (default: 8 on a GPU, 1 on the CPU)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--parallel", choices=("root", "tree"), default="root",
                    help="the device agent in the games: multi-tree (root) or tree-parallel (tree)")
    ap.add_argument("--blocks", type=int, default=None, help="tree-parallel: blocks per tree (default 8 per SM)")
    ap.add_argument("--shared-rates", default="", help="tree-parallel rates: TREESxBLOCKSxPLAYOUTS,...")
    ap.add_argument("--opponents", default="one,all", help="one (CPU MCTS on one core), all (every core)")
    a = ap.parse_args()
    settings = [tuple(int(x) for x in s.split("x")) for s in a.rates.split(",") if s]
    times = [float(x) for x in a.move_times.split(",") if x]
    pairs = [int(x) for x in a.pairs.split(",") if x]
    a.out.mkdir(parents=True, exist_ok=True)
    r = run_gpu_mcts_bench(backend=a.backend, rate_settings=settings, rate_seconds=a.rate_seconds,
                           positions=a.positions, analyse_iterations=a.analyse_iterations, move_times=times,
                           pairs=pairs, trees=a.trees, playouts=a.playouts, leaves=a.leaves, workers=a.workers,
                           games_dir=a.out / "games", progress=lambda msg: print(msg, file=sys.stderr, flush=True),
                           parallel=a.parallel, blocks=a.blocks,
                           shared_settings=[tuple(int(x) for x in s.split("x")) for s in a.shared_rates.split(",") if s],
                           opponents=tuple(x for x in a.opponents.split(",") if x))
    (a.out / "gpu_mcts.json").write_text(json.dumps(r, indent=2) + "\n")
    table = format_table(r)
    (a.out / "gpu_mcts.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

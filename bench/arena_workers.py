#!/usr/bin/env python
"""Tournament wall time with 1 and with N workers (the arena's executor).

Runs the same ``jitsearch tournament`` as a fresh process (the way a user
runs it: imports, cluster start and JIT cache loads included) with
``--workers 1`` and with ``--workers N``, interleaved (1, N, then N, 1, ...)
``--runs`` times each after one small warm-up run that fills Numba's cache.
Reports the median wall, user and system time of each (user and system
include the worker processes) and the speed-up median(1) / median(N), and
checks that every run scored the same games (results do not depend on the
worker count). Writes JSON to bench/results/arena_workers.json.

Run: ``python bench/arena_workers.py [--pairs 400] [--runs 3] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "arena_workers.json"


def tournament(args, workers: int, pairs: int) -> dict:
    cmd = [sys.executable, "-m", "jitsearch", "tournament", "--game", "kalah", "--a", args.a, "--b", args.b,
           "--pairs", str(pairs), "--workers", str(workers), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    res = json.loads(proc.stdout)
    return {"workers": workers, "wall_s": wall, "user_s": after.ru_utime - before.ru_utime,
            "sys_s": after.ru_stime - before.ru_stime,
            "score": [res["games"], res["a_wins"], res["draws"], res["b_wins"], res["mean_plies"]]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", default="alphabeta:depth=4")
    ap.add_argument("--b", default="mcts:iterations=2000")
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    if args.runs < 1 or args.pairs < 1 or args.workers < 2:
        ap.error("--runs and --pairs must be >= 1 and --workers >= 2")
    load_start = os.getloadavg()
    tournament(args, 1, 2)  # warm-up: Numba's cache filled, files in the page cache
    runs = []
    for r in range(args.runs):
        order = (1, args.workers) if r % 2 == 0 else (args.workers, 1)
        for w in order:
            row = tournament(args, w, args.pairs)
            row["round"] = r
            runs.append(row)
            print(f"round {r} workers {w}: wall {row['wall_s']:.1f} s, user {row['user_s']:.1f} s, "
                  f"sys {row['sys_s']:.1f} s", flush=True)
    scores = {json.dumps(row["score"]) for row in runs}
    if len(scores) != 1:
        raise SystemExit(f"the runs scored different games: {sorted(scores)}")

    def med(w, key):
        return statistics.median(row[key] for row in runs if row["workers"] == w)

    summary = {w: {k: med(w, k) for k in ("wall_s", "user_s", "sys_s")} for w in (1, args.workers)}
    speedup = summary[1]["wall_s"] / summary[args.workers]["wall_s"]
    out = {"command": f"jitsearch tournament --game kalah --a {args.a} --b {args.b} --pairs {args.pairs} "
                      f"--workers W --json",
           "pairs": args.pairs, "games": 2 * args.pairs, "runs_each": args.runs,
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                       "load_at_start": load_start, "load_at_end": os.getloadavg()},
           "median": {str(w): v for w, v in summary.items()}, "speedup": speedup, "score": runs[0]["score"],
           "runs": runs}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    for w, v in summary.items():
        print(f"workers {w}: median wall {v['wall_s']:.1f} s, user {v['user_s']:.1f} s, sys {v['sys_s']:.1f} s")
    print(f"speed-up with {args.workers} workers: {speedup:.2f}x (median of {args.runs} interleaved runs each); "
          f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

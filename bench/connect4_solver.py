#!/usr/bin/env python
"""The Connect Four solver on Pascal Pons's six test sets: time per position and nodes.

For each set (End-Easy L3_R1, Middle-Easy L2_R1, Middle-Medium L2_R2, Begin-Easy L1_R1,
Begin-Medium L1_R2, Begin-Hard L1_R3) solves the first N positions (``--positions``; the
hard sets take ``--hard-positions``, and stop at ``--budget`` seconds a set) with an empty
table each (``fresh``: node counts do not depend on the order), checks every score against
the file, and reports the mean, median and largest time per position (the solve only, the
text parsed before the clock starts) and the mean nodes (negamax calls). Prints a table and
writes bench/results/connect4_solver.json with the load average before and after (the box is
shared) and the machine.

    python bench/connect4_solver.py [--positions 1000] [--hard-positions 20] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from jitsearch.games.connect4.solver import Connect4Solver
from jitsearch.games.connect4.state import Connect4State

SETS = [("L3_R1", "End-Easy", False), ("L2_R1", "Middle-Easy", False), ("L2_R2", "Middle-Medium", False),
        ("L1_R1", "Begin-Easy", False), ("L1_R2", "Begin-Medium", True), ("L1_R3", "Begin-Hard", True)]


def default_data() -> Path | None:
    for up in Path(__file__).resolve().parents:
        if (up / "shared" / "data" / "connect4").is_dir():
            return up / "shared" / "data" / "connect4"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=os.environ.get("JITSEARCH_CONNECT4_DATA") or default_data())
    ap.add_argument("--positions", type=int, default=1000, help="positions of each easy or medium set")
    ap.add_argument("--hard-positions", type=int, default=20, help="positions of L1_R2 and L1_R3")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds a set at most (stops after a position)")
    ap.add_argument("--table-bits", type=int, default=22)
    ap.add_argument("--sets", default=",".join(s for s, _, _ in SETS))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "connect4_solver.json")
    args = ap.parse_args(argv)
    if args.data is None or not Path(args.data).is_dir():
        raise SystemExit("error: no data folder: give --data DIR (Pons's Test_L*_R*.txt files)")
    wanted = args.sets.split(",")
    solver = Connect4Solver(table_bits=args.table_bits)
    solver.solve("4455")  # compile (or load the cache) before any clock
    for table in (solver.table,):
        table.fill(0)  # np.zeros maps its pages on first write: fault them in now, not in the first positions
    load_before = os.getloadavg()
    rows = []
    print(f"{'set':<6} {'name':<14} {'solved':>6} {'mean ms':>10} {'median ms':>10} {'max ms':>10} {'mean nodes':>12} "
          f"{'Mnodes/s':>9} wrong")
    for name, title, hard in SETS:
        if name not in wanted:
            continue
        pairs = [ln.split() for ln in (Path(args.data) / f"Test_{name}.txt").read_text().splitlines() if ln]
        pairs = pairs[:args.hard_positions if hard else args.positions]
        times, nodes, wrong = [], [], 0
        start = time.perf_counter()
        for moves, score in pairs:
            state = Connect4State.from_moves(moves)
            r = solver.solve(state, fresh=True)
            times.append(r.seconds)
            nodes.append(r.nodes)
            wrong += r.score != int(score)
            if time.perf_counter() - start > args.budget:
                break
        row = {"set": name, "name": title, "positions": len(times), "of": len(pairs), "wrong": wrong,
               "mean_ms": 1e3 * statistics.fmean(times), "median_ms": 1e3 * statistics.median(times),
               "max_ms": 1e3 * max(times), "mean_nodes": statistics.fmean(nodes),
               "nodes_per_second": sum(nodes) / max(sum(times), 1e-12)}
        rows.append(row)
        print(f"{name:<6} {title:<14} {len(times):>6} {row['mean_ms']:>10.3f} {row['median_ms']:>10.3f} "
              f"{row['max_ms']:>10.1f} {row['mean_nodes']:>12.0f} {row['nodes_per_second'] / 1e6:>9.2f} {wrong}",
              flush=True)
    out = {"bench": "connect4_solver", "table_bits": args.table_bits, "fresh_table_each_position": True,
           "load_before": load_before, "load_after": os.getloadavg(), "machine": platform.machine(),
           "processor": platform.processor(), "cpus": os.cpu_count(), "python": sys.version.split()[0],
           "sets": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 1 if any(r["wrong"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""The exact Kalah solver's enhancements, each measured against the solver
without them in the same run: prefetching the children's table buckets and
database entries, and the endgame database's enhanced transposition
cutoffs (``db_etc_window``).

Every variant solves the same boards from the start with the same
endgame database (built once and cached) and the same first guess; the
runs are interleaved (variant A, B, C, A, B, C, ...) so that a noisy
machine hurts them alike, and the table reports medians. Node counts are
exact (the same in every repeat); the margins must all agree.

    python bench/kalah_solver_variants.py --boards 6,4 --endgame-seeds 20 --repeats 3

Writes ``solver_variants.json`` and ``.csv`` to ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import statistics
import sys
import time
from pathlib import Path

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.endgame_files import default_cache_dir
from jitsearch.games.kalah.solver import solve_exact

# name: (prefetch, db_etc_window); the first is the baseline ("before")
VARIANTS = {
    "baseline (no prefetch, no database cutoffs)": (False, -1),
    "prefetch": (True, -1),
    "database cutoffs (window 4)": (False, 4),
    "prefetch + database cutoffs (window 4)": (True, 4),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", default="6,4", help="m,n;m,n;... (from the start)")
    ap.add_argument("--rules", default="standard", choices=["standard", "empty-capture", "both"])
    ap.add_argument("--endgame-seeds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--table-size", type=int, default=1 << 24)
    ap.add_argument("--out", type=Path, default=Path("jitsearch-results") / "kalah_solver_variants")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"writing to {args.out}", file=sys.stderr)
    rules = ["standard", "empty-capture"] if args.rules == "both" else [args.rules]
    boards = [tuple(int(x) for x in b.split(",")) for b in args.boards.split(";") if b.strip()]
    solve_exact(KalahState.initial(3, 3), endgame_db=build_endgame_database(3, 4, False))  # compile first
    rows = []
    for m, n in boards:
        for rule in rules:
            ec = rule == "empty-capture"
            state = KalahState.initial(m, n, empty_capture=ec)
            db = build_endgame_database(m, args.endgame_seeds, ec, cache_dir=default_cache_dir(), max_bytes=16 << 30)
            guess = solve_exact(state, endgame_db=db, tt_capacity=args.table_size, time_limit=1e6)["margin"]
            times = {name: [] for name in VARIANTS}
            result = {}
            for _ in range(args.repeats):
                for name, (prefetch, window) in VARIANTS.items():
                    t = time.perf_counter()
                    r = solve_exact(state, endgame_db=db, tt_capacity=args.table_size, first_guess=guess,
                                    prefetch=prefetch, db_etc_window=window)
                    times[name].append(time.perf_counter() - t)
                    result[name] = r
            margins = {r["margin"] for r in result.values()}
            if len(margins) != 1:
                raise SystemExit(f"Kalah({m},{n}) {rule}: the variants disagree: {margins}")
            base = statistics.median(times[next(iter(VARIANTS))])
            for name in VARIANTS:
                med = statistics.median(times[name])
                rows.append({"houses": m, "seeds": n, "rules": rule, "endgame_seeds": args.endgame_seeds,
                             "variant": name, "margin": result[name]["margin"], "nodes": result[name]["nodes"],
                             "median_seconds": round(med, 3), "seconds": [round(x, 3) for x in times[name]],
                             "speedup_vs_baseline": round(base / med, 3),
                             "nodes_per_second": round(result[name]["nodes"] / med)})
    print(f"{'board':<22} {'variant':<42} {'nodes':>12} {'median s':>9} {'x baseline':>10}")
    for r in rows:
        print(f"Kalah({r['houses']},{r['seeds']}) {r['rules']:<12} {r['variant']:<42} {r['nodes']:>12,} "
              f"{r['median_seconds']:>9.2f} {r['speedup_vs_baseline']:>10.2f}")
    meta = {"machine": platform.machine(), "python": platform.python_version(), "repeats": args.repeats,
            "table_slots": args.table_size}
    (args.out / "solver_variants.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    with open(args.out / "solver_variants.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, [k for k in rows[0] if k != "seconds"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

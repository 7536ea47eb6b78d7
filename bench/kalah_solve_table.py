#!/usr/bin/env python
"""Solve Kalah(m, n) from the start for every board that fits a time limit,
under both rule variants; writes bench/results/kalah_solve/solve_table.csv
(one row per board as it finishes; ``--resume`` continues) and
solve_table.md.

A board is skipped (``skipped``) when a smaller board of the same rules (one
house or one seed fewer) already ran out of time. Boards run on the arena's
executor in waves of equal m + n (a board's two smaller neighbours are in
earlier waves): ``--workers N`` solves a wave's boards in N local processes
(a Dask cluster; their timings then share the machine), ``--scheduler
tcp://HOST:PORT`` on an existing Dask cluster.

    python bench/kalah_solve_table.py --max-houses 6 --max-seeds 6 --time-limit 200
"""

from __future__ import annotations

import argparse
import csv
import platform
import sys
from pathlib import Path

from jitsearch.arena.executor import run_tasks
from jitsearch.benchmarks._rows import drop_partial_line
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah_search import solve_exact

FIELDS = ["houses", "seeds", "rules", "status", "margin", "best_move", "nodes", "seconds", "lower", "upper",
          "table_slots"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-houses", type=int, default=6)
    ap.add_argument("--max-seeds", type=int, default=6)
    ap.add_argument("--time-limit", type=float, default=200.0, help="seconds per board")
    ap.add_argument("--table-size", type=int, default=1 << 24, help="transposition-table slots")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "kalah_solve")
    ap.add_argument("--endgame-seeds", type=int, default=0, help="endgame database size (0: none)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--redo", default="", help="boards to solve again, e.g. '6,4,standard;6,4,empty-capture'")
    ap.add_argument("--workers", type=int, default=1, help="boards solved at once (local Dask processes)")
    ap.add_argument("--scheduler", default=None, help="an existing Dask cluster (tcp://HOST:PORT)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "solve_table.csv"
    rows = []
    if args.resume and path.exists():
        drop_partial_line(path)
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    else:
        with open(path, "w", newline="") as fh:
            csv.DictWriter(fh, FIELDS).writeheader()
    done = {(int(r["houses"]), int(r["seeds"]), r["rules"]): r for r in rows}
    redo = [tuple(x.split(",")) for x in args.redo.split(";") if x.strip()]
    for m_, n_, rules_ in redo:
        done.pop((int(m_), int(n_), rules_), None)
    if redo:  # rewrite the file without the rows to redo
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, FIELDS)
            w.writeheader()
            for r in done.values():
                w.writerow({k: r.get(k) for k in FIELDS})
    solve_exact(KalahState.initial(2, 2), tt_capacity=1 << 8)  # compile outside the timings
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)

        def keep(row):
            writer.writerow(row)
            fh.flush()
            done[(row["houses"], row["seeds"], row["rules"])] = {k: str(v) for k, v in row.items()}

        for wave in range(2, args.max_houses + args.max_seeds + 1):
            tasks = []
            for rules in ("empty-capture", "standard"):
                for m in range(1, args.max_houses + 1):
                    n = wave - m
                    if not 1 <= n <= args.max_seeds or (m, n, rules) in done:
                        continue
                    if redo and (str(m), str(n), rules) not in redo:
                        continue
                    smaller = [done.get((m - 1, n, rules)), done.get((m, n - 1, rules))]
                    if any(r is not None and r["status"] != "solved" for r in smaller):
                        keep({"houses": m, "seeds": n, "rules": rules, "status": "skipped"})
                    else:
                        tasks.append((m, n, rules, args.table_size, args.time_limit, args.endgame_seeds))
            if run_tasks(solve_board, tasks, keep, workers=args.workers, scheduler=args.scheduler):
                print("interrupted: the boards solved so far are in the CSV; --resume continues", file=sys.stderr)
                return 130
    write_markdown(done, args)
    return 0


def solve_board(task) -> dict:
    """Solve one board from the start; its CSV row."""
    m, n, rules, table_size, time_limit, endgame_seeds = task
    state = KalahState.initial(m, n, empty_capture=rules == "empty-capture")
    r = solve_exact(state, tt_capacity=table_size, time_limit=time_limit, endgame_seeds=endgame_seeds)
    row = {"houses": m, "seeds": n, "rules": rules, "status": "solved" if r["complete"] else "time limit",
           "margin": r["margin"], "best_move": r["best_move"], "nodes": r["nodes"], "seconds": f"{r['seconds']:.2f}",
           "lower": r["lower"], "upper": r["upper"], "table_slots": table_size}
    print(f"Kalah({m},{n}) {rules}: {row['status']} margin {r['margin']} [{r['lower']}, {r['upper']}] move "
          f"{r['best_move']} {r['nodes']:,} nodes {r['seconds']:.1f} s", file=sys.stderr, flush=True)
    return row


def write_markdown(done, args):
    def cell(r):
        if r is None or r["status"] == "skipped":
            return "-", "-"
        if r["status"] != "solved":
            lo = r["lower"] if r["lower"] not in ("", "None", None) else "-inf"
            up = r["upper"] if r["upper"] not in ("", "None", None) else "+inf"
            return f"in [{lo}, {up}] (time limit)", f"> {float(r['seconds']):.0f} s, {int(r['nodes']):,} nodes"
        margin = int(r["margin"])
        return f"{margin:+d} (pit {r['best_move']})", f"{float(r['seconds']):.2f} s, {int(r['nodes']):,} nodes"

    lines = [f"Kalah(m, n) from the start: player 0's margin under perfect play (best first move as a pit "
             f"index), time and nodes; {args.table_size} table slots; "
             f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
             f"{'one core' if args.workers == 1 and not args.scheduler else 'boards solved in parallel'}.", "",
             "| m | n | empty-capture | time, nodes | standard | time, nodes |", "|---|---|---|---|---|---|"]
    for m in range(1, args.max_houses + 1):
        for n in range(1, args.max_seeds + 1):
            a = cell(done.get((m, n, "empty-capture")))
            b = cell(done.get((m, n, "standard")))
            if a == ("-", "-") and b == ("-", "-"):
                continue
            lines.append(f"| {m} | {n} | {a[0]} | {a[1]} | {b[0]} | {b[1]} |")
    (args.out / "solve_table.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())

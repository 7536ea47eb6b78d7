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

``--endgame-seeds`` is one seed count for every board or one per house
count (``6:26,5:28``; boards of other house counts get none); the databases
are kept in the endgame cache (``~/.cache/jitsearch``) and built once. A
board solved elsewhere (a long checkpointed run) enters the table from its
``jitsearch solve --json`` output with ``--import FILE.json``.

    python bench/kalah_solve_table.py --max-houses 6 --max-seeds 6 --time-limit 200
    python bench/kalah_solve_table.py --resume --import bench/results/kalah_solve/k65_standard_db26.json
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
from jitsearch.games.kalah.solver import solve_exact

FIELDS = ["houses", "seeds", "rules", "status", "margin", "best_move", "nodes", "seconds", "lower", "upper",
          "table_slots", "endgame_seeds", "endgame_seconds", "source"]


def parse_endgame_seeds(text: str) -> dict:
    """``"20"`` -> {0: 20} (every house count); ``"6:26,5:28"`` -> {6: 26, 5: 28}."""
    text = str(text).strip()
    if ":" not in text:
        return {0: int(text)}
    out = {}
    for part in text.split(","):
        m, n = part.split(":")
        out[int(m)] = int(n)
    return out


def endgame_seeds_for(spec: dict, m: int, n: int) -> int:
    """The database size for Kalah(m, n): the spec's, below the board's seeds."""
    seeds = spec.get(m, spec.get(0, 0))
    return min(seeds, 2 * m * n - 1) if seeds > 0 else 0


def imported_row(path: Path) -> dict:
    """A CSV row from a ``jitsearch solve --game kalah --json`` output."""
    import json

    r = json.loads(Path(path).read_text())
    state = KalahState.from_text(r["position"], empty_capture=r["empty_capture"])
    m = r["houses"]
    n = int(state.board[1])
    if state.to_text() != KalahState.initial(m, n, empty_capture=r["empty_capture"]).to_text():
        raise SystemExit(f"{path}: not a solve from the start position")
    return {"houses": m, "seeds": n, "rules": "empty-capture" if r["empty_capture"] else "standard",
            "status": "solved" if r["complete"] else "time limit", "margin": r["margin"], "best_move": r["best_move"],
            "nodes": r["nodes"], "seconds": f"{r.get('total_seconds', r['seconds']):.2f}",
            "lower": r["lower"], "upper": r["upper"], "table_slots": r["table_slots"],
            "endgame_seeds": r["endgame_seeds"], "endgame_seconds": f"{r.get('endgame_seconds', 0):.2f}",
            "source": str(Path(path).name)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-houses", type=int, default=6)
    ap.add_argument("--max-seeds", type=int, default=6)
    ap.add_argument("--time-limit", type=float, default=200.0, help="seconds per board")
    ap.add_argument("--table-size", type=int, default=None, help="transposition-table slots (default: sized from the board)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "kalah_solve")
    ap.add_argument("--endgame-seeds", default="0", help="endgame database size: N, or per house count '6:26,5:28'")
    ap.add_argument("--import", dest="imports", action="append", default=[], type=Path,
                    help="a `jitsearch solve --json` output of a board from the start (repeatable)")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--redo", default="", help="boards to solve again, e.g. '6,4,standard;6,4,empty-capture'")
    ap.add_argument("--leave", default="", help="boards not solved here (both rules), e.g. '6,5;6,6': solved "
                                               "separately and --import-ed")
    ap.add_argument("--workers", type=int, default=1, help="boards solved at once (local Dask processes)")
    ap.add_argument("--scheduler", default=None, help="an existing Dask cluster (tcp://HOST:PORT)")
    args = ap.parse_args(argv)
    try:
        args.endgame_seeds = parse_endgame_seeds(args.endgame_seeds)
    except ValueError:
        ap.error(f"--endgame-seeds: expected N or M:N,M:N, got {args.endgame_seeds!r}")
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
    imported = [imported_row(p) for p in args.imports]
    redo = [tuple(x.split(",")) for x in args.redo.split(";") if x.strip()]
    leave = {tuple(int(v) for v in x.split(",")) for x in args.leave.split(";") if x.strip()}
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

        for row in imported:
            key = (row["houses"], row["seeds"], row["rules"])
            old = done.get(key)
            if old is None or old.get("status") != "solved" or row["status"] == "solved":
                keep(row)  # the later row of a board wins when the CSV is read back

        for wave in range(2, args.max_houses + args.max_seeds + 1):
            tasks = []
            for rules in ("empty-capture", "standard"):
                for m in range(1, args.max_houses + 1):
                    n = wave - m
                    if not 1 <= n <= args.max_seeds or (m, n, rules) in done or (m, n) in leave:
                        continue
                    if redo and (str(m), str(n), rules) not in redo:
                        continue
                    smaller = [done.get((m - 1, n, rules)), done.get((m, n - 1, rules))]
                    if any(r is not None and r["status"] != "solved" for r in smaller):
                        keep({"houses": m, "seeds": n, "rules": rules, "status": "skipped"})
                    else:
                        tasks.append((m, n, rules, args.table_size, args.time_limit,
                                      endgame_seeds_for(args.endgame_seeds, m, n)))
            if run_tasks(solve_board, tasks, keep, workers=args.workers, scheduler=args.scheduler):
                print("interrupted: the boards solved so far are in the CSV; --resume continues", file=sys.stderr)
                return 130
    write_markdown(done, args)
    return 0


def solve_board(task) -> dict:
    """Solve one board from the start; its CSV row."""
    m, n, rules, table_size, time_limit, endgame_seeds = task
    from jitsearch.games.kalah.endgame_files import default_cache_dir

    state = KalahState.initial(m, n, empty_capture=rules == "empty-capture")
    r = solve_exact(state, tt_capacity=table_size, time_limit=time_limit, endgame_seeds=endgame_seeds,
                    endgame_cache_dir=default_cache_dir() if endgame_seeds else None, max_bytes=16 << 30)
    row = {"houses": m, "seeds": n, "rules": rules, "status": "solved" if r["complete"] else "time limit",
           "margin": r["margin"], "best_move": r["best_move"], "nodes": r["nodes"], "seconds": f"{r['seconds']:.2f}",
           "lower": r["lower"], "upper": r["upper"], "table_slots": r["table_slots"], "endgame_seeds": r["endgame_seeds"],
           "endgame_seconds": f"{r['endgame_seconds']:.2f}", "source": "this table"}
    print(f"Kalah({m},{n}) {rules}: {row['status']} margin {r['margin']} [{r['lower']}, {r['upper']}] move "
          f"{r['best_move']} {r['nodes']:,} nodes {r['seconds']:.1f} s", file=sys.stderr, flush=True)
    return row


def write_markdown(done, args):
    def cell(r):
        if r is None or r["status"] == "skipped":
            return "-", "-"
        extra = ""
        if r.get("endgame_seeds") not in (None, "", "0"):
            extra = f", DB{r['endgame_seeds']}"
            built = float(r.get("endgame_seconds") or 0)
            if built >= 0.5:
                extra += f" (built here in {built:.0f} s, included)"
        mark = " *" if r.get("source") not in (None, "", "this table") else ""
        if r["status"] != "solved":
            lo = r["lower"] if r["lower"] not in ("", "None", None) else "-inf"
            up = r["upper"] if r["upper"] not in ("", "None", None) else "+inf"
            return (f"in [{lo}, {up}] (time limit){mark}",
                    f"> {float(r['seconds']):.0f} s, {int(r['nodes']):,} nodes{extra}")
        margin = int(r["margin"])
        return f"{margin:+d} (pit {r['best_move']}){mark}", f"{float(r['seconds']):.2f} s, {int(r['nodes']):,} nodes{extra}"

    lines = [f"Kalah(m, n) from the start: player 0's margin under perfect play (best first move as a pit "
             f"index), time and nodes; {args.table_size or 'default'} table slots; "
             f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
             f"{'one core' if args.workers == 1 and not args.scheduler else 'boards solved in parallel'}. "
             "DBn: an endgame database of up to n seeds in the houses (built by the first board that needs it, "
             "then loaded from the cache: its build is in that board's time only). *: a separate long run (its own table size), imported from its JSON.", "",
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

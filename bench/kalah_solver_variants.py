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

``--suite FILE --positions 0-7`` solves opening-suite positions instead
(each with the solver's own first guess, its time and nodes counted), under
the variants of ``SUITE_VARIANTS`` (``--variants`` picks some by name),
interleaved per position, a fresh table each solve; with ``--cmancala
BINARY`` (a CMancala build's ``Mancala``, kept outside this repository) its
``--api`` solve of each position is timed in the same loop, one process with
its cache kept, as it runs (its database build is not counted).

Writes ``solver_variants.json`` and ``.csv`` to ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.endgame import build_endgame_database
from jitsearch.games.kalah.endgame_files import default_cache_dir
from jitsearch.games.kalah.solver import estimate_position, new_solver_table, solve_exact

# name: (prefetch, db_etc_window); the first is the baseline ("before")
VARIANTS = {
    "baseline (no prefetch, no database cutoffs)": (False, -1),
    "prefetch": (True, -1),
    "database cutoffs (window 4)": (False, 4),
    "prefetch + database cutoffs (window 4)": (True, 4),
}


# name: solve_exact keywords, plus "estimate_nodes": the first guess's node budget (None: the solver's own)
SUITE_VARIANTS = {
    "default": {},
    "kept table": {"table": "kept"},  # one 2**25-slot table across all the positions of the run
    "etc 24": {"etc_min_seeds": 24},
    "etc 20": {"etc_min_seeds": 20},
    "table 2**22": {"tt_capacity": 1 << 22},
    "estimate 200k": {"estimate_nodes": 200_000},
    "guess 0": {"estimate_nodes": 0},
}


def suite_positions(path: Path, spec: str) -> list:
    """(index, position text) of the suite's positions ``spec`` ("0-7,12")."""
    lines = [ln.split("#")[0].strip() for ln in Path(path).read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    picked = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        picked.extend(range(int(lo), int(hi or lo) + 1))
    return [(i, lines[i]) for i in picked]


def _cmancala_code(state: KalahState) -> str:
    """CMancala's board code (``encodeBoard`` less its five leading zeros):
    the colour bit, then 8 bits a cell, cells 0-5 player 1's houses (our
    player 0), 6 its store, 7-12 the other houses, 13 the other store."""
    board = [int(x) for x in state.board]
    cells = [board[(i + 1) % 14] for i in range(14)]
    value = 1 if state.player == 0 else 0
    for i, c in enumerate(cells):
        value |= (c & 0xFF) << (1 + 8 * i)
    return f"{value:032x}"[5:]


class _CMancala:
    """A CMancala ``--api`` process (one cache for all its solves)."""

    def __init__(self, binary: str, endgame_seeds: int):
        import subprocess

        # it writes its database files (EGDB/) into its working directory: its own folder
        self.proc = subprocess.Popen([binary, "--api", "--egdb", str(endgame_seeds)], cwd=Path(binary).parent,
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.solve_line(KalahState.initial(6, 1))  # waits for its database build

    def solve_line(self, state: KalahState) -> tuple[str, float]:
        t = time.perf_counter()
        self.proc.stdin.write(f"SOLVE {_cmancala_code(state)}\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line or line.startswith(("OK", "ERROR")):
                return line.strip(), time.perf_counter() - t

    def cpu_seconds(self) -> float:
        """The process's user + system CPU seconds so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self):
        self.proc.stdin.write("QUIT\n")
        self.proc.stdin.close()
        self.proc.wait()


def suite_main(args) -> int:
    load_start = os.getloadavg()
    db = build_endgame_database(6, args.endgame_seeds, False, cache_dir=default_cache_dir(), max_bytes=16 << 30)
    solve_exact(KalahState.initial(3, 3), endgame_db=build_endgame_database(3, 4, False))  # compile first
    names = list(SUITE_VARIANTS) if not args.variants else args.variants.split(",")
    cm = _CMancala(args.cmancala, args.endgame_seeds) if args.cmancala else None
    rows = []
    kept = None
    if any(SUITE_VARIANTS[name].get("table") == "kept" for name in names):
        kept = new_solver_table(1 << 25)  # the default size of a fresh table
    for index, text in suite_positions(args.suite, args.positions):
        state = KalahState.from_text(text, empty_capture=False)
        for _ in range(args.repeats):
            for name in names:
                kw = dict(SUITE_VARIANTS[name])
                budget = kw.pop("estimate_nodes", None)
                if kw.get("table") == "kept":
                    kw["table"] = kept
                t, c = time.perf_counter(), time.process_time()
                extra = 0
                if budget is not None:
                    guess = int(state.board.sum()) % 2
                    if budget > 0:
                        est = estimate_position(state, budget)
                        guess, extra = est["margin"], est["nodes"]
                    kw["first_guess"] = guess
                r = solve_exact(state, endgame_db=db, **kw)
                rows.append({"position": index, "variant": name, "margin": r["margin"],
                             "nodes": r["nodes"] + r["estimate_nodes"] + extra, "tests": r["iterations"],
                             "seconds": round(time.perf_counter() - t, 3),
                             "cpu_seconds": round(time.process_time() - c, 3)})
                print(rows[-1], flush=True)
            if cm is not None:
                c = cm.cpu_seconds()
                line, seconds = cm.solve_line(state)
                rows.append({"position": index, "variant": "CMancala", "margin": line, "nodes": None, "tests": None,
                             "seconds": round(seconds, 3), "cpu_seconds": round(cm.cpu_seconds() - c, 3)})
                print(rows[-1], flush=True)
        _write_suite(args, load_start, rows)  # after every position: a run stopped early keeps what it solved
    if cm is not None:
        cm.close()
    print(f"{'variant':<16} {'nodes':>14} {'seconds (sum of medians)':>25} {'CPU seconds':>12}")
    for name in names + (["CMancala"] if cm else []):
        mine = [r for r in rows if r["variant"] == name]
        per_pos = {}
        for r in mine:
            per_pos.setdefault(r["position"], []).append(r)
        nodes = sum(v[0]["nodes"] or 0 for v in per_pos.values())
        secs = sum(statistics.median(x["seconds"] for x in v) for v in per_pos.values())
        cpu = sum(statistics.median(x.get("cpu_seconds", 0.0) for x in v) for v in per_pos.values())
        print(f"{name:<16} {nodes:>14,} {secs:>25.2f} {cpu:>12.2f}")
    _write_suite(args, load_start, rows)
    return 0


def _write_suite(args, load_start, rows) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.machine(), "python": platform.python_version(), "repeats": args.repeats,
            "suite": str(args.suite), "positions": args.positions, "load_start": load_start,
            "load": os.getloadavg(), "time": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    (args.out / "suite_variants.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", default="6,4", help="m,n;m,n;... (from the start)")
    ap.add_argument("--rules", default="standard", choices=["standard", "empty-capture", "both"])
    ap.add_argument("--endgame-seeds", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--table-size", type=int, default=1 << 24)
    ap.add_argument("--out", type=Path, default=Path("jitsearch-results") / "kalah_solver_variants")
    ap.add_argument("--suite", type=Path, help="an opening suite file: solve its positions instead of --boards")
    ap.add_argument("--positions", default="0-7", help="the suite's positions, 0-based: 0-7,12")
    ap.add_argument("--variants", default="", help="SUITE_VARIANTS names, comma-separated (default: all)")
    ap.add_argument("--cmancala", default="", help="a CMancala Mancala binary to time alongside")
    args = ap.parse_args(argv)
    if args.suite is not None:
        return suite_main(args)
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

"""What the web page's Oware analysis costs: the endgame database it builds
for exact values, per board size, and the MCTS it runs.

Usage: python bench/oware_web_analysis.py [RUNS]   (default 3)

* ``build_database(m, exact_seeds_limit(m))`` for m = 1..12 (the largest
  database the analysis builds on each board), and Oware(6) at 8..12 seeds
  (where the limit was chosen); medians of RUNS builds, after one warm-up.
* ``analyse_moves("oware", ...)`` (the page's analysis) on a position with 8 seeds on the board
  (database cached in the process, as in the server) and on the start of
  Oware(6,4) (no exact values), 20,000 iterations (the page's default),
  against ``analyse_game("oware", ...)`` alone on the same state, measured in the same
  run: the analysis is the MCTS plus the per-move look-ups.

Writes bench/results/oware_web_analysis.json.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from jitsearch.arena.analysis import analyse_moves
from jitsearch.games.oware import OwareState
from jitsearch.games.oware.endgame import build_database, database_size
from jitsearch.games.oware.game import exact_seeds_limit

from jitsearch.mcts.game import analyse_game

OUT = Path(__file__).resolve().parent / "results" / "oware_web_analysis.json"


def analyse_oware_position(state, **kw):
    return analyse_moves("oware", state, **kw)


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(runs: int = 3) -> dict:
    build_database(2, 4)  # warm the JIT
    builds = []
    for m in range(1, 13):
        s = exact_seeds_limit(m)
        sec = median_seconds(lambda: build_database(m, s), runs)
        builds.append({"houses": m, "seeds": s, "positions": database_size(m, s), "seconds": round(sec, 4)})
        print(builds[-1], file=sys.stderr)
    six = []
    for s in (8, 9, 10, 11, 12):
        sec = median_seconds(lambda: build_database(6, s), runs)
        six.append({"houses": 6, "seeds": s, "positions": database_size(6, s), "seconds": round(sec, 4)})
        print(six[-1], file=sys.stderr)
    late = OwareState.from_text("0,1,0,2,0,1/1,0,2,0,1,0/14,16 p0")
    start = OwareState.initial()
    analyse_oware_position(late, iterations=100)  # warm: the kernel and the database
    mcts = []
    for name, state in (("8 seeds, exact", late), ("start, no exact", start)):
        full = median_seconds(lambda: analyse_oware_position(state, iterations=20_000), runs)
        base = median_seconds(lambda: analyse_game("oware", [state], iterations=20_000, playouts=8, backend="cpu"), runs)
        mcts.append({"position": name, "iterations": 20_000, "analysis_seconds": round(full, 4),
                     "analyse_oware_seconds": round(base, 4), "ratio": round(full / base, 3)})
        print(mcts[-1], file=sys.stderr)
    result = {"bench": "oware_web_analysis", "runs": runs, "builds_at_limit": builds, "oware6_builds": six,
              "analysis": mcts, "machine": platform.machine(), "cpus": os.cpu_count(),
              "load_average": os.getloadavg(), "python": platform.python_version()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)

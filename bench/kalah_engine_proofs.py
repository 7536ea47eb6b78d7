#!/usr/bin/env python
"""The engine's proofs on the vector kernel against the resumable kernel in chunks: on fixed middle-game
positions of Kalah(6,4) (standard rules, 16-seed database), how many proofs finish inside a move of T
seconds and how long the moves take (the budget kept or overrun).

Positions: from the first ``--openings`` positions of the balanced suite, the engine at depth 6 plays
both sides; every third position from ply 6 to 42 is kept. Each position is searched by two engines (one
per proof kernel, each keeping its tables across positions, as in a game; the proven margins of earlier
moves cleared), alternately first. Written to ``<out>/proof_kernels_<T>.json``.

    python bench/kalah_engine_proofs.py --time 0.1 --openings 16
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

from jitsearch.arena.opening_suites import shipped_suite
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.engine import KalahEngine
from jitsearch.games.kalah.engine_db import load_probe

OUT = Path(__file__).parent / "results" / "engine"


def middle_game_positions(openings: int, probe) -> list[KalahState]:
    player = KalahEngine(6, probe=probe, exact=False, book=False)
    out = []
    for opening in shipped_suite(6, 4, False)[:openings]:
        s = KalahState.from_text(opening.position)
        for ply in range(43):
            if s.is_over:
                break
            if ply >= 6 and ply % 3 == 0:
                out.append(s)
            s = s.play(player.search(s, depth=6)["move"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time", type=float, default=0.1, help="seconds a move")
    ap.add_argument("--openings", type=int, default=16)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    probe = load_probe(6, 16, False)
    positions = middle_game_positions(args.openings, probe)
    engines = {}
    for name in ("vector", "resumable"):
        e = KalahEngine(6, probe=probe)
        e.vector_proof = e.vector_proof and name == "vector"
        engines[name] = e
    if not engines["vector"].vector_proof:
        raise SystemExit("the vector kernel does not run here (no AVX2/BMI2)")
    for s in positions[:3]:  # warm the JIT (not counted)
        for e in engines.values():
            e.search(s, time_limit=args.time)
    rows = {name: {"attempts": 0, "proved": 0, "seconds": [], "proof_nodes": 0, "proof_seconds": 0.0}
            for name in engines}
    load = []
    for i, s in enumerate(positions):
        order = list(engines.items())
        for name, e in (order if i % 2 == 0 else order[::-1]):
            e._proven.clear()
            t = time.perf_counter()
            r = e.search(s, time_limit=args.time)
            row = rows[name]
            row["seconds"].append(time.perf_counter() - t)
            if r["proof"] is not None:
                row["attempts"] += 1
                row["proved"] += bool(r["proof"]["complete"])
                row["proof_nodes"] += r["proof"]["nodes"]
                row["proof_seconds"] += r["proof"]["seconds"]
        load.append(os.getloadavg()[0])
    summary = {"time": args.time, "positions": len(positions), "openings": args.openings,
               "board": "Kalah(6,4) standard, 16-seed database", "machine": platform.node(),
               "cpus": os.cpu_count(), "load": [min(load), max(load)], "kernels": {}}
    for name, row in rows.items():
        secs = sorted(row["seconds"])
        summary["kernels"][name] = {
            "attempts": row["attempts"], "proved": row["proved"],
            "proved_share": round(row["proved"] / max(row["attempts"], 1), 3),
            "proof_nodes_per_second": round(row["proof_nodes"] / max(row["proof_seconds"], 1e-9)),
            "move_seconds_median": round(statistics.median(secs), 4),
            "move_seconds_p95": round(secs[int(0.95 * (len(secs) - 1))], 4), "move_seconds_max": round(secs[-1], 4)}
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"proof_kernels_{args.time:g}.json"
    path.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

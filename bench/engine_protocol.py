#!/usr/bin/env python
"""What the engine protocol costs a move: a ``cmd:`` engine against the same agent in process.

For a fixed list of positions (Kalah(6,4), from seeded random games) each
player chooses a move: the ``random`` agent called in this process, the
same agent served by ``jitsearch engine --agent random`` (``position`` +
``go`` + ``move``, a round trip through two pipes and the server), and the
20-line example engine of docs/examples/example_engine.py (the protocol's
floor: no jitsearch in the engine). Each is warmed first (engine started,
first game sent), then timed over every position, ``--runs`` times; the
median time per move of each and the protocol's overhead (median cmd:
minus median in process) are reported. Also whole matches: ``--pairs``
pairs of random against random, in process and with B as the served engine
(start-up included). Writes JSON to bench/results/engine_protocol.json.

Run: ``python bench/engine_protocol.py [--positions 400] [--runs 5] [--pairs 20]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "engine_protocol.json"


def positions(count: int, seed: int = 1):
    from jitsearch.games import get

    rng, out = random.Random(seed), []
    while len(out) < count:
        s = get("kalah").initial()
        while not s.is_over and len(out) < count:
            out.append(s)
            s = s.play(rng.choice(s.legal_moves()))
    return out


def per_move(agent, states, runs: int) -> list[float]:
    agent(states[0])  # warm: the process started, the game sent
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for s in states:
            agent(s)
        times.append((time.perf_counter() - t0) / len(states))
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    from jitsearch.arena.agents import parse_agent
    from jitsearch.arena.external_engine import EngineSettings, close_engines
    from jitsearch.arena.matches import match_of, run_tournament

    load_start = os.getloadavg()
    py = shlex.quote(sys.executable)
    served = f"cmd:{py} -m jitsearch engine --agent random"
    example = f"cmd:{py} {shlex.quote(str(ROOT / 'docs' / 'examples' / 'example_engine.py'))}"
    settings = EngineSettings(10_000, 1_000, "/tmp/jitsearch-bench-engine-logs")
    states = positions(args.positions)
    rows = {}
    for name, spec in (("in process", "random"), ("cmd: jitsearch engine", served), ("cmd: example engine", example)):
        agent = parse_agent(spec).with_seed(1)
        if hasattr(agent, "settings"):
            agent.settings = settings
        times = per_move(agent, states, args.runs)
        rows[name] = {"spec": spec, "median_s_per_move": statistics.median(times), "runs_s_per_move": times}
        close_engines()
    base = rows["in process"]["median_s_per_move"]
    for row in rows.values():
        row["overhead_us_per_move"] = (row["median_s_per_move"] - base) * 1e6
    match = match_of("kalah", {}, seed=3)
    matches = {}
    for name, b in (("in process", "random"), ("cmd: jitsearch engine", served)):
        t0 = time.perf_counter()
        r = run_tournament("random", b, match, args.pairs, engine_settings=settings)
        matches[name] = {"b": b, "wall_s": time.perf_counter() - t0, "games": r["games"],
                         "score": [r["a_wins"], r["draws"], r["b_wins"]], "mean_plies": r["mean_plies"]}
    same = matches["in process"]["score"] == matches["cmd: jitsearch engine"]["score"]
    out = {"machine": platform.platform(), "python": platform.python_version(), "load_start": load_start,
           "load_end": os.getloadavg(), "positions": args.positions, "runs": args.runs, "per_move": rows,
           "matches": matches, "same_games": same, "command": " ".join(sys.argv)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    for name, row in rows.items():
        print(f"{name:24s} {row['median_s_per_move'] * 1e6:9.1f} us/move  (+{row['overhead_us_per_move']:.1f})")
    for name, m in matches.items():
        print(f"match, B {name:22s} {m['wall_s']:.2f} s for {m['games']} games, score {m['score']}")
    print(f"same games: {same}; load {load_start[0]:.2f} -> {out['load_end'][0]:.2f}; wrote {args.out}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

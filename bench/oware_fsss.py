#!/usr/bin/env python
"""Oware FSSS-Minimax against Oware alpha-beta on the same depth-limited tree.

For seeded Oware(6,4) positions (random plies from the start, each with its
game's repetition record) and depths ``--depths``, both searches run from
each position (no table, the same move order, the same leaves), interleaved,
``--runs`` times each after a warm-up (JIT); a position's time is the median
of its runs. Reported per depth, as medians over the positions: frontier
leaves valued (alpha-beta's evaluations, FSSS's expansions), node counts
(alpha-beta: nodes generated; FSSS: node visits over all rollouts), time per
move and the ratios FSSS / alpha-beta (the median of the per-position
ratios, so each ratio is of two numbers measured in the same run). The two
values are checked equal on every search.

Writes bench/results/oware_fsss.json and oware_fsss.png.

Run: ``python bench/oware_fsss.py [--positions 50] [--depths 4-8] [--runs 7] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def positions(count: int, seed: int):
    from jitsearch.games.oware import OwareState

    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        s = OwareState.initial(6, 4)
        for _ in range(rnd.randrange(0, 41)):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            out.append(s)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=50)
    ap.add_argument("--depths", default="4-8")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    lo, _, hi = args.depths.partition("-")
    depths = list(range(int(lo), int(hi or lo) + 1))

    from jitsearch.games.oware import alphabeta as ab
    from jitsearch.games.oware import fsss

    load_start = os.getloadavg()
    states = positions(args.positions, args.seed)
    ab.search(states[0], 2), fsss.search(states[0], 2)  # warm-up (JIT)
    per_depth = []
    for depth in depths:
        rows = []
        for s in states:
            ta, tf = [], []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                a = ab.search(s, depth)
                ta.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                f = fsss.search(s, depth)
                tf.append(time.perf_counter() - t0)
            if f.value != a.value:
                raise SystemExit(f"values differ at {s.to_text()} depth {depth}: {f.value} != {a.value}")
            rows.append({"ab_leaves": a.evaluations, "fsss_leaves": f.evaluations, "ab_nodes": a.nodes,
                         "fsss_visits": f.nodes, "ab_s": statistics.median(ta), "fsss_s": statistics.median(tf)})
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        med["leaf_ratio"] = statistics.median(r["fsss_leaves"] / r["ab_leaves"] for r in rows)
        med["time_ratio"] = statistics.median(r["fsss_s"] / r["ab_s"] for r in rows)
        med["depth"] = depth
        per_depth.append(med)
        print(f"depth {depth}: leaves ab {med['ab_leaves']:.0f} fsss {med['fsss_leaves']:.0f} "
              f"(ratio {med['leaf_ratio']:.3f}); time ab {med['ab_s'] * 1e3:.3f} ms fsss "
              f"{med['fsss_s'] * 1e3:.3f} ms (ratio {med['time_ratio']:.2f})", flush=True)
    result = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load_start": load_start,
                          "load_end": os.getloadavg()},
              "positions": args.positions, "seed": args.seed, "runs": args.runs, "game": "oware(6,4)",
              "side_weight": ab.DEFAULT_SIDE_WEIGHT, "per_depth": per_depth,
              "command": f"python bench/oware_fsss.py --positions {args.positions} --depths {args.depths} "
                         f"--runs {args.runs} --seed {args.seed}"}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "oware_fsss.json").write_text(json.dumps(result, indent=1) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - the plot is optional
        return 0
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ds = [r["depth"] for r in per_depth]
    ax1.semilogy(ds, [r["ab_leaves"] for r in per_depth], "o-", label="alpha-beta")
    ax1.semilogy(ds, [r["fsss_leaves"] for r in per_depth], "s-", label="FSSS")
    ax1.set(xlabel="depth", ylabel="frontier leaves (median)", title="Oware(6,4): leaves")
    ax2.semilogy(ds, [r["ab_s"] * 1e3 for r in per_depth], "o-", label="alpha-beta")
    ax2.semilogy(ds, [r["fsss_s"] * 1e3 for r in per_depth], "s-", label="FSSS")
    ax2.set(xlabel="depth", ylabel="ms per move (median)", title="time per move")
    ax1.legend()
    fig.tight_layout()
    fig.savefig(out / "oware_fsss.png", dpi=100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

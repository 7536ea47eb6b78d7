#!/usr/bin/env python
"""Board-vector (SIMD) playouts against the scalar kernel and the tuned C, one core.

For each board, :func:`jitsearch.benchmarks.playouts_bench.measure_playouts`
(the ``jitsearch bench playouts`` measurement) times, in every repeat and
with the same seed: the default CPU kernel (``simd`` where the CPU has AVX2
and BMI2), the scalar kernel JITSEARCH_SIMD=0 would run (packed boards from
m = 4, else generic), and both C references of ``bench/c_reference``; every
per-state result must be identical. Figures are medians of the repeats,
ratios medians of the per-repeat ratios. Prints a table and writes
bench/results/simd_playouts.json (with the load average before and after,
the box being shared).

    python bench/simd_playouts.py [--repeats 7] [--boards 6x4,4x4,7x4,6x6] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from jitsearch.benchmarks.playouts_bench import measure_playouts

ROWS = ("kernel", "playouts_per_second", "scalar_kernel", "scalar_playouts_per_second", "ratio_to_scalar",
        "c_tuned_playouts_per_second", "ratio_to_c_tuned", "ratio_to_c_tuned_range", "c_plain_playouts_per_second",
        "ratio_to_c_plain", "scalar_identical", "c_identical")


def _boards(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        try:
            m, n = (int(x) for x in part.lower().split("x"))
        except ValueError:
            raise SystemExit(f"error: --boards entry {part!r} is not MxN (houses x seeds)") from None
        out.append((m, n))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", default="6x4,4x4,7x4,6x6,3x4", help="comma-separated MxN (houses x seeds)")
    ap.add_argument("--states", type=int, default=1024)
    ap.add_argument("--playouts", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "simd_playouts.json")
    args = ap.parse_args(argv)
    if args.repeats < 5 and not args.quick:
        raise SystemExit("error: --repeats must be >= 5 (medians of at least five runs)")
    states, playouts = (64, 16) if args.quick else (args.states, args.playouts)
    load_before = os.getloadavg()
    results = []
    print(f"{'board':<11} {'kernel':<7} {'playouts/s':>12} {'scalar/s':>12} {'x scalar':>8} "
          f"{'tuned C/s':>12} {'x tuned C':>9} {'x plain C':>9}  identical")
    for m, n in _boards(args.boards):
        r = measure_playouts("cpu", m, n, states, playouts, args.repeats, 1, 0)
        row = {"board": f"Kalah({m},{n})", **{k: r.get(k) for k in ROWS}, "full": r}
        results.append(row)

        def fmt(x, spec):
            return format(x, spec) if x is not None else "-"

        print(f"{row['board']:<11} {row['kernel']:<7} {fmt(row['playouts_per_second'], ',.0f'):>12} "
              f"{fmt(row['scalar_playouts_per_second'], ',.0f'):>12} {fmt(row['ratio_to_scalar'], '.2f'):>8} "
              f"{fmt(row['c_tuned_playouts_per_second'], ',.0f'):>12} {fmt(row['ratio_to_c_tuned'], '.2f'):>9} "
              f"{fmt(row['ratio_to_c_plain'], '.2f'):>9}  scalar {row['scalar_identical']}, C {row['c_identical']}",
              flush=True)
    doc = {"machine": f"{platform.machine()} {platform.processor() or ''}".strip(), "cores": os.cpu_count(),
           "python": platform.python_version(), "states": states, "playouts": playouts, "repeats": args.repeats,
           "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
           "simd_env": os.environ.get("JITSEARCH_SIMD"), "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"written to {args.out}")
    bad = [r["board"] for r in results if r["scalar_identical"] is False or r["c_identical"] is False]
    if bad:
        print(f"error: results differ on {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

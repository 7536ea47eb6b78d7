#!/usr/bin/env python
"""First-run wall times: what a newcomer waits for on a fresh clone.

Each command runs in a new process with an EMPTY Numba cache (a fresh
``NUMBA_CACHE_DIR`` per run), then once more with the cache that run left
(the second run), ``--runs`` times; medians are reported. With
``--baseline PATH`` (a checkout of another revision, e.g. made with
``git worktree add /tmp/base <rev>``) the same commands run with that tree on
``PYTHONPATH`` in the same session, interleaved run by run, and the ratio
new/baseline is printed. The README's Python blocks run as one script in a
temporary directory, as a reader pasting them would.

    python bench/cold_start.py                      # this checkout, 3 runs
    python bench/cold_start.py --baseline /tmp/base --runs 3

Writes ``bench/results/cold_start/cold_start.json`` (``--out``). Targets
(issue 24): each command under 10 s, the README's Python blocks under 20 s, on
the 2-core box. The machine's load average is recorded: on a shared box the
absolute times are high, the ratios less so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "tournament (2 MCTS agents, 2 games)": (
        ["tournament", "--game", "kalah", "--a", "mcts:time=0.02,backend=cpu", "--b", "mcts:time=0.02,workers=2",
         "--pairs", "1"], 10.0),
    "solve --game kalah --houses 4 --seeds 3": (["solve", "--game", "kalah", "--houses", "4", "--seeds", "3"], 10.0),
    "solve --random uniform --height 20": (["solve", "--random", "uniform", "--height", "20"], 10.0),
}
README_TARGET = 20.0


def readme_python() -> str:
    """The README's ```python blocks (not those titled: those need a GPU or never run), joined."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    return "\n".join(blocks)


def timed(argv, tree: Path, cache: Path, cwd: Path) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(tree))
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return wall


def measure(name: str, argv, tree: Path, work: Path) -> tuple[float, float]:
    cache = Path(tempfile.mkdtemp(prefix="cold-cache-", dir=work))
    first = timed(argv, tree, cache, work)
    second = timed(argv, tree, cache, work)
    return first, second


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to time beside this one")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "cold_start")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    trees = {"this": ROOT}
    if args.baseline is not None:
        if not (args.baseline / "jitsearch" / "__init__.py").exists():
            ap.error(f"--baseline {args.baseline} is not a jitsearch checkout")
        trees["baseline"] = args.baseline.resolve()
    work = Path(tempfile.mkdtemp(prefix="jitsearch-cold-"))
    script = work / "readme_blocks.py"
    script.write_text(readme_python())
    jobs = {name: [sys.executable, "-m", "jitsearch", *argv] for name, (argv, _) in COMMANDS.items()}
    jobs["README's Python blocks"] = [sys.executable, str(script)]
    targets = {**{name: t for name, (_, t) in COMMANDS.items()}, "README's Python blocks": README_TARGET}
    times = {tree: {name: {"first": [], "second": []} for name in jobs} for tree in trees}
    loads = []
    for run in range(args.runs):
        for name, argv in jobs.items():
            for tree, path in trees.items():
                first, second = measure(name, argv, path, work)
                times[tree][name]["first"].append(first)
                times[tree][name]["second"].append(second)
                loads.append(os.getloadavg()[0])
                print(f"run {run + 1}/{args.runs} {tree:8s} {name}: first {first:.1f} s, second {second:.1f} s",
                      flush=True)
    rows = []
    for name in jobs:
        row = {"command": name, "target_seconds": targets[name]}
        for tree in trees:
            row[tree] = {k: statistics.median(v) for k, v in times[tree][name].items()}
            row[tree]["runs"] = times[tree][name]
        row["met"] = row["this"]["first"] < targets[name]
        if "baseline" in trees:
            row["ratio_first"] = row["this"]["first"] / row["baseline"]["first"]
        rows.append(row)
    print()
    head = f"{'command':42s} {'first run':>10s} {'second':>8s}" + (f" {'baseline':>9s} {'ratio':>6s}" if "baseline" in trees
                                                                   else "") + "  target"
    print(head)
    for r in rows:
        line = f"{r['command']:42s} {r['this']['first']:9.1f}s {r['this']['second']:7.1f}s"
        if "baseline" in trees:
            line += f" {r['baseline']['first']:8.1f}s {r['ratio_first']:6.2f}"
        line += f"  < {r['target_seconds']:.0f} s: {'met' if r['met'] else 'NOT met'}"
        print(line)
    args.out.mkdir(parents=True, exist_ok=True)
    out = {"rows": rows, "runs": args.runs, "load_average_during": [min(loads), statistics.median(loads), max(loads)],
           "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                       "platform": platform.platform()},
           "baseline": str(trees.get("baseline", "")), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (args.out / "cold_start.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"\nload average during the runs: min {min(loads):.1f}, median {statistics.median(loads):.1f}, "
          f"max {max(loads):.1f}; wrote {args.out / 'cold_start.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""The Kalah engine (``alphabeta:time=T``) measured: strength against the plain
alpha-beta it replaced (``alphabeta:time=T,plain=1``), against its own
variants (evaluation, endgame database, Lazy SMP threads), and its search
speed (nodes and seconds to a fixed depth against the plain search).

Every match is paired games (seats swapped) from balanced openings, with the
pentanomial Elo interval; records go to ``<out>/<name>.jsonl`` (rerun to
resume) and the summary to ``<out>/engine.json`` and ``engine.md``.

    python bench/kalah_engine.py speed
    python bench/kalah_engine.py match --a alphabeta:time=0.2 --b alphabeta:time=0.2,plain=1 --pairs 200
    python bench/kalah_engine.py match --a alphabeta:time=0.1,threads=2 --b alphabeta:time=0.1 --workers 1

``--openings balanced`` (the default) uses the suite shipped for the board
(exact values within 2 seeds, see ``jitsearch openings``), else
``--random-openings`` balanced positions (depth-6 search within 2 seeds).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from jitsearch.arena.matches import run_kalah_tournament
from jitsearch.arena.kalah_tournament import KalahMatch
from jitsearch.arena.openings import random_openings
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.alphabeta import search as plain_search
from jitsearch.games.kalah.engine import KalahEngine

OUT = Path(__file__).parent / "results" / "engine"


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def update(out: Path, key: str, row: dict) -> None:
    path = out / "engine.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = row
    path.write_text(json.dumps(data, indent=2) + "\n")
    lines = ["# Kalah engine measurements", "", "Written by `bench/kalah_engine.py`; each row names its command.", ""]
    for k, r in data.items():
        if r.get("kind") == "match":
            st = r["statistics"]
            lo, hi, elo = (("n/a" if x is None else f"{x:+.0f}") for x in (*st["elo_interval"], st["elo"]))
            lines.append(f"- **{r['a']}** vs **{r['b']}**, Kalah({r['houses']},{r['seeds']})"
                         f"{' empty-capture' if r['empty_capture'] else ''}: {st['wins']}-{st['draws']}-"
                         f"{st['losses']} in {st['games']} games ({st['pairs']} pairs), score {st['score']:.3f}, "
                         f"Elo {elo} [{lo}, {hi}] (95%; n/a: a score of 0 or 1), pentanomial {st['pentanomial']}; "
                         f"{r['machine']}, {r['workers']} games at once, {r['when']}; "
                         f"`{r['command']}`")
        elif r.get("kind") == "speed":
            lines.append(f"- speed ({r['machine']}, {r['when']}, `{r['command']}`):")
            lines.append("")
            lines.append("  | position | depth | engine nodes | engine s | plain nodes | plain s | time ratio |")
            lines.append("  |---|---|---|---|---|---|---|")
            for x in r["rows"]:
                lines.append(f"  | {x['position']} | {x['depth']} | {x['engine_nodes']:,} | {x['engine_s']:.3f} | "
                             f"{x['plain_nodes']:,} | {x['plain_s']:.3f} | {x['plain_s'] / x['engine_s']:.2f}x |")
            lines.append("")
    (out / "engine.md").write_text("\n".join(lines) + "\n")


def cmd_speed(a) -> dict:
    """Median seconds (of ``--repeats``) and nodes to a fixed depth, fresh tables, one thread, no database."""
    positions = [KalahState.initial(6, 4)]
    for text in random_openings(3, 6, 4, False, 7, balanced=2):
        positions.append(KalahState.from_text(text))
    rows = []
    KalahEngine(6, eval="fitted", table_mb=4).search(positions[0], depth=3)  # compile / load the kernels
    plain_search(positions[0], 3)
    for s in positions:
        for depth in a.depths:
            te, tp = [], []
            for _ in range(a.repeats):
                e = KalahEngine(6, eval="store", table_mb=64)
                t0 = time.perf_counter()
                r = e.search(s, depth=depth)
                te.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                p = plain_search(s, depth, tt_capacity=1 << 22)
                tp.append(time.perf_counter() - t0)
            rows.append({"position": s.to_text(), "depth": depth, "engine_nodes": r["nodes"],
                         "engine_s": sorted(te)[len(te) // 2], "plain_nodes": p["nodes"],
                         "plain_s": sorted(tp)[len(tp) // 2], "engine_value": r["value"] / 100,
                         "plain_value": p["value"] if s.player == 0 else -p["value"]})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return {"kind": "speed", "rows": rows}


def cmd_match(a) -> dict:
    suite = ()  # (the engines' databases are built before the first game by run_kalah_tournament)
    if a.openings == "balanced":
        from jitsearch.arena.opening_suites import shipped_suite

        try:
            suite = tuple(o.position for o in shipped_suite(a.houses, a.seeds, a.empty_capture))
        except ValueError:  # no suite shipped for this board
            suite = ()
    if not suite:
        suite = random_openings(a.random_openings, a.houses, a.seeds, a.empty_capture, a.seed, balanced=2)
    match = KalahMatch(a.houses, a.seeds, a.empty_capture, 300, 0, seed=a.seed, suite=tuple(suite))
    name = a.name or f"{a.a}__vs__{a.b}".replace(":", "_").replace(",", "_").replace("=", "")
    done = [0]

    def progress(d, total):
        done[0] = d
        print(f"\r{name}: {d}/{total} games", end="", file=sys.stderr, flush=True)

    r = run_kalah_tournament(a.a, a.b, match, a.pairs, out=a.out / f"{name}.jsonl", resume=True,
                             workers=a.workers, progress=progress)
    print(file=sys.stderr)
    return {"kind": "match", "a": a.a, "b": a.b, "houses": a.houses, "seeds": a.seeds,
            "empty_capture": a.empty_capture, "workers": a.workers, "openings": len(suite),
            "statistics": r["statistics"], "name": name, "exact": r.get("exact"),
            "terminations": r.get("terminations"), "interrupted": bool(r.get("interrupted"))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("--depths", type=int, nargs="+", default=[10, 12, 14, 16])
    sp.add_argument("--repeats", type=int, default=3)
    mp = sub.add_parser("match")
    mp.add_argument("--a", required=True)
    mp.add_argument("--b", required=True)
    mp.add_argument("--pairs", type=int, default=200)
    mp.add_argument("--workers", type=int, default=2)
    mp.add_argument("--houses", type=int, default=6)
    mp.add_argument("--seeds", type=int, default=4)
    mp.add_argument("--empty-capture", action="store_true")
    mp.add_argument("--openings", choices=["balanced", "random"], default="balanced")
    mp.add_argument("--random-openings", type=int, default=200)
    mp.add_argument("--seed", type=int, default=2023)
    mp.add_argument("--name", default=None)
    for p in (sp, mp):
        p.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    row = cmd_speed(a) if a.cmd == "speed" else cmd_match(a)
    row.update(machine=machine(), when=time.strftime("%Y-%m-%d"), seconds=round(time.perf_counter() - t0, 1),
               command="python bench/kalah_engine.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    update(a.out, row.get("name", "speed"), row)
    print(json.dumps(row if a.cmd == "speed" else row["statistics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Strength of Oware MCTS with leaf evaluations: paired games from seeded
random openings (``GameMatch.of("oware", {}, openings=2, ...)``) at a fixed time per move.

1. A short sweep (``--sweep-pairs`` pairs at ``--sweep-time`` s a move) of
   ``mcts:eval=capture,eval_plies=k,imm=alpha`` against ``--sweep-against``
   (``alphabeta``, default, or ``mcts``: the random-playout MCTS; both at
   the sweep's time) for k in ``--plies`` and alpha in ``--imms``; the best
   score picks (k, alpha) (ties: the first).
2. ``mcts:time=T`` (random playouts to the end) vs the picked
   ``mcts:time=T,eval=capture,...``, ``--pairs`` pairs.
3. The better MCTS of match 2 vs ``alphabeta:time=T``, ``--pairs`` pairs.

Pairs are split over ``--procs`` processes (each its own match seed, so its
own openings; the pairs are pooled into one pentanomial). Writes
bench/results/oware_mcts_strength.json (``--out``) with every match's summary and the
box's load (``os.getloadavg``) before and after. Run:
``python bench/oware_mcts_strength.py [--time 0.2] [--pairs 10] [--procs 2] [--sweep-against mcts]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jitsearch.arena.game_match import GameMatch  # noqa: E402
from jitsearch.arena.matches import run_tournament  # noqa: E402
from jitsearch.arena.stats import pentanomial_from_pairs, summary  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "oware_mcts_strength.json"


def _worker(job):
    a, b, pairs, seed, out = job
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    run_tournament(a, b, GameMatch.of("oware", {}, openings=2, seed=seed), pairs, out=out)
    return out


def match(a: str, b: str, pairs: int, procs: int, seed: int) -> dict:
    """Paired games of a vs b over ``procs`` processes (seeds seed, seed + 1, ...), pooled."""
    procs = max(1, min(procs, pairs))
    split = [pairs // procs + (i < pairs % procs) for i in range(procs)]
    tmp = tempfile.mkdtemp(prefix="oware_strength_")
    jobs = [(a, b, n, seed + i, os.path.join(tmp, f"{i}.jsonl")) for i, n in enumerate(split) if n]
    start = time.perf_counter()
    with get_context("spawn").Pool(len(jobs)) as pool:
        outs = pool.map(_worker, jobs)
    seconds = time.perf_counter() - start
    scores, plies = [], []
    for out in outs:
        games = [json.loads(line) for line in open(out)]
        by_pair: dict = {}
        for g in games:
            by_pair.setdefault(g["pair"], [None, None])[g["a_seat"]] = g["a_score"]
            plies.append(len(g.get("moves", [])))
        scores += [tuple(v) for _, v in sorted(by_pair.items())]
    result = summary(pentanomial_from_pairs(scores))
    result.update(a=a, b=b, seconds=round(seconds, 1), mean_plies=sum(plies) / max(1, len(plies)))
    print(f"{a} vs {b}: score {result['score']:.3f} {result['score_interval']} "
          f"W/D/L {result['wins']}/{result['draws']}/{result['losses']} in {seconds:.0f} s", flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=0.2)
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--sweep-time", type=float, default=0.05)
    ap.add_argument("--sweep-pairs", type=int, default=4)
    ap.add_argument("--plies", default="0,4")
    ap.add_argument("--imms", default="0,0.3")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sweep-against", choices=("alphabeta", "mcts"), default="alphabeta")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    load_before = os.getloadavg()
    t = args.time
    sweep = []
    for k in (int(x) for x in args.plies.split(",")):
        for alpha in (float(x) for x in args.imms.split(",")):
            spec = f"mcts:time={args.sweep_time},eval=capture,eval_plies={k}" + (f",imm={alpha}" if alpha else "")
            r = match(spec, f"{args.sweep_against}:time={args.sweep_time}", args.sweep_pairs, args.procs,
                      args.seed + 100)
            sweep.append({"eval_plies": k, "imm": alpha, **r})
    best = max(sweep, key=lambda r: r["score"])  # first of the best on ties
    opts = f"eval=capture,eval_plies={best['eval_plies']}" + (f",imm={best['imm']}" if best["imm"] else "")
    plain, evald = f"mcts:time={t}", f"mcts:time={t},{opts}"
    vs_plain = match(evald, plain, args.pairs, args.procs, args.seed)
    better = evald if vs_plain["score"] >= 0.5 else plain
    vs_ab = match(better, f"alphabeta:time={t}", args.pairs, args.procs, args.seed + 10)
    out = {"time_per_move": t, "openings_plies": 2, "procs": args.procs, "sweep_time": args.sweep_time,
           "sweep_pairs": args.sweep_pairs, "sweep_against": args.sweep_against, "sweep": sweep, "picked": opts,
           "eval_vs_plain": vs_plain,
           "best_vs_alphabeta": vs_ab, "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
           "cpu_count": os.cpu_count()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Our best one-core agents against OpenSpiel's C++ MCTSBot (random rollouts,
uct_c 2) at equal time per move, Kalah(6,4) standard rules, paired games from
2 random opening plies; writes bench/results/openspiel/strength.json and .md
and the games (JSONL, resumable: rerun to continue).

    python bench/openspiel_strength.py [--seconds 0.1] [--pairs 20] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

from jitsearch.arena.matches import match_of, run_tournament

OURS = ("mcts:time={t}", "alphabeta:time={t},plain=1", "mcts:time={t},solver=1", "alphabeta:time={t}",
        "alphabeta:time={t},threads=2")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.1)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "openspiel")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    t = a.seconds
    opponent = f"openspiel:mcts,time={t},rollouts=1,simulations=100000000"
    rows = []
    for i, spec in enumerate(x.format(t=t) for x in OURS):
        r = run_tournament(spec, opponent, match_of("kalah", {}, openings=2, seed=31 + i), a.pairs,
                           out=a.out / f"games_{i}.jsonl", resume=True, workers=a.workers)
        st = r["statistics"]
        rows.append({"agent": spec, "opponent": opponent, "games": r["games"], "wins": r["a_wins"],
                     "draws": r["draws"], "losses": r["b_wins"], "score": r["a_score"],
                     "score_ci95": r["a_score_ci95"], "elo": st["elo"], "elo_interval": st["elo_interval"],
                     "pentanomial": st["pentanomial"]})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    result = {"machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
              "seconds_per_move": t, "workers": a.workers, "rows": rows}
    (a.out / "strength.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"Against OpenSpiel's C++ MCTSBot ({opponent}), {t} s per move, Kalah(6,4) standard, paired games from "
             f"2 random opening plies; {result['machine']}, {a.workers} games at once.", "",
             "| our agent | games | W-D-L | score (95% CI) | Elo (95% CI) |", "|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["score_ci95"]
        e, (elo_lo, elo_hi) = r["elo"], r["elo_interval"]
        elo = "-" if e is None else f"{e:+.0f} ({'-inf' if elo_lo is None else f'{elo_lo:+.0f}'}, " \
                                    f"{'+inf' if elo_hi is None else f'{elo_hi:+.0f}'})"
        lines.append(f"| `{r['agent']}` | {r['games']} | {r['wins']}-{r['draws']}-{r['losses']} | "
                     f"{r['score']:.3f} ({lo:.3f}-{hi:.3f}) | {elo} |")
    (a.out / "strength.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

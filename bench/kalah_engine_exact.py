#!/usr/bin/env python
"""The engine's exact mode measured: how many of its moves it proves, how
early in a game, whether a proven result is ever thrown away, and its score
against the same engine with ``exact=0``.

Each configuration is a match ``alphabeta:time=T[,exact_share=S]`` (A)
against ``alphabeta:time=T,exact=0`` (B) from the balanced suite of
Kalah(6,4), standard rules (paired games, seats swapped). From the records
(``<out>/exact_<T>_<S>.jsonl``; rerun to resume): the share of each side's
moves reported exact (A: proofs and database positions; B: database
positions only), the mean ply of A's first proof (counted from the suite
position), the proven results thrown away (a proven margin the final one fell
below), A's score. Written to ``<out>/exact.json`` and ``exact.md``.

    python bench/kalah_engine_exact.py --config 0.1:0.25:24 --config 0.1:0.5:24 --config 0.5:0.25:8 --config 0.5:0.5:8
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

from jitsearch.arena.matches import match_of, run_kalah_tournament

try:  # (where the record reader lives: arena.records, or the older arena.kalah_tournament)
    from jitsearch.arena.records import read_records
except ImportError:
    from jitsearch.arena.kalah_tournament import read_records
from jitsearch.arena.opening_suites import shipped_suite
from jitsearch.games.kalah import KalahState

OUT = Path(__file__).parent / "results" / "engine"


def shares(records: list[dict]) -> dict:
    """Moves and exact moves per side, and A's first proven ply (index into the moves after the opening)."""
    out = {side: {"moves": 0, "exact": 0} for side in ("a", "b")}
    first = []
    for r in records:
        s = KalahState.from_text(r["start"])
        for mv in r["opening"]:
            s = s.play(mv)
        for mv in r["moves"]:
            out["a" if s.player == r["a_player"] else "b"]["moves"] += 1
            s = s.play(mv)
        for ply, side, _ in r.get("exact_moves", ()):
            out[side]["exact"] += 1
        a_plies = [ply for ply, side, _ in r.get("exact_moves", ()) if side == "a"]
        if a_plies:
            first.append(a_plies[0])
    for v in out.values():
        v["share"] = v["exact"] / max(v["moves"], 1)
    out["a_first_proof_ply"] = sum(first) / len(first) if first else None
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=16)
    p.add_argument("--config", action="append", default=None,
                   help="TIME:SHARE[:PAIRS] (seconds a move, exact_share, pairs: default --pairs)")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args()
    configs = args.config or ["0.1:0.25:24", "0.1:0.5:24", "0.5:0.25:8", "0.5:0.5:8"]
    suite = tuple(o.position for o in shipped_suite(6, 4, False))
    match = match_of("kalah", {"houses": 6, "seeds": 4, "empty_capture": False}, max_plies=300, suite=suite)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for cfg in configs:
        t, share, *rest = cfg.split(":")
        pairs = int(rest[0]) if rest else args.pairs
        a = f"alphabeta:time={t},exact_share={share}"
        b = f"alphabeta:time={t},exact=0"
        path = args.out / f"exact_{t}_{share}.jsonl"
        res = run_kalah_tournament(a, b, match, pairs, out=path, resume=path.exists())
        sh = shares(read_records(path))
        rows.append({"a": a, "b": b, "games": res["games"], "a_score": res["a_score"],
                     "elo": res["statistics"].get("elo"), "elo_interval": res["statistics"].get("elo_interval"),
                     "exact": res.get("exact"), "shares": sh})
        print(json.dumps(rows[-1]), flush=True)
    (args.out / "exact.json").write_text(json.dumps({"machine": platform.processor() or platform.machine(),
                                                     "rows": rows}, indent=1) + "\n")
    lines = ["# Exact mode: proven moves (Kalah(6,4), standard rules, balanced suite)", "",
             "Written by `bench/kalah_engine_exact.py`. A: the engine with exact mode; B: `exact=0`. "
             "`exact`: moves whose value is the proven final margin (A: proofs and database positions; B: "
             "database positions only). First proof: mean ply of A's first proven move after the suite position. "
             "Thrown: proven margins the game's final margin fell below.", "",
             "| A | games | A exact | B exact | A's first proof (ply) | thrown (A, B) | A score | Elo (95%) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sh, ex = r["shares"], r["exact"] or {"a": {"thrown": 0}, "b": {"thrown": 0}}
        elo = "" if r["elo"] is None else f"{r['elo']:+.0f} [{r['elo_interval'][0]:+.0f}, {r['elo_interval'][1]:+.0f}]"
        first = "" if sh["a_first_proof_ply"] is None else f"{sh['a_first_proof_ply']:.1f}"
        lines.append(f"| `{r['a']}` | {r['games']} | {sh['a']['share']:.0%} | {sh['b']['share']:.0%} | {first} | "
                     f"{ex['a']['thrown']}, {ex['b']['thrown']} | {r['a_score']:.3f} | {elo} |")
    (args.out / "exact.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

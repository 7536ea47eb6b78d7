#!/usr/bin/env python
"""A rating list of Kalah engines at a fixed time per move: a round robin
of paired games, then maximum-likelihood ratings with 95% intervals.

Every engine plays every other over ``--pairs`` pairs (seats swapped) on
Kalah(6,4) standard rules by default, from seeded random opening plies
(``--opening-plies``, default 2), an opening suite (``--openings FILE``) or
generated balanced openings (``--random-openings K --balanced M``). Specs
may hold ``{t}``, replaced by ``--time`` (seconds per move). OpenSpiel's bots
(``openspiel:mcts,...``, ``openspiel:alphabeta,depth=N``) take part when
``open_spiel`` is installed, and are skipped with a note when it is not or
when they cannot play the match (another board, an opening suite).

Writes into ``--out`` (default ``bench/results/ratings/<time>s/``):
``records/`` (one JSONL file per match, named after its engines, appended
as games end), ``ratings.md`` (settings and table), ``ratings.json``
(settings, the fit, the per-pair counts) and ``ratings.png`` (the ratings
with their intervals; needs matplotlib). The ratings come from every record
in ``records/``, the same as ``jitsearch rate OUT/records``. ``--resume``
continues an interrupted run (or one with more ``--pairs``, or more
engines); without it a folder that already holds records is refused.

    python bench/ratings.py [--time 0.1] [--engines SPEC ...] [--pairs 20] [--workers 2] [--resume]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

from jitsearch.arena.agents import agent_kind, parse_agent
from jitsearch.arena.matches import match_of, run_engines
from jitsearch.arena.openings import random_game_openings, read_game_openings
from jitsearch.arena.rating_list import rating_list, ratings_markdown, read_results

#: The default field: our engines at the time per move, and OpenSpiel's bots.
ENGINES = (
    "alphabeta:time={t}",
    "alphabeta:time={t},threads=2",
    "alphabeta:time={t},plain=1",
    "mcts:time={t}",
    "mcts:time={t},eval=store,eval_plies=4,imm=0.5",
    "openspiel:mcts,time={t},rollouts=1,simulations=100000000",
    "openspiel:alphabeta,depth=4",
)
RESULTS = Path(__file__).resolve().parent / "results" / "ratings"


def match_file(a: str, b: str) -> str:
    """A match's record file, named after its engines (so it stays the match's whatever the list's order)."""
    def slug(spec):
        return re.sub(r"[^A-Za-z0-9=.,_-]+", "_", spec)[:60]

    digest = hashlib.blake2b(json.dumps([a, b]).encode(), digest_size=4).hexdigest()
    return f"{slug(a)}__vs__{slug(b)}__{digest}.jsonl"


def pick_engines(specs, houses, seeds, empty_capture, suite) -> tuple[list[str], list[str]]:
    """(the engines that can play, notes on those skipped). Our engines must parse; OpenSpiel's are skipped
    with a note when OpenSpiel is missing or cannot play this match."""
    keep, notes = [], []
    for spec in specs:
        try:
            agent = parse_agent(spec)
            agent.check_match(houses, seeds, empty_capture, suite)
        except ValueError as exc:
            if agent_kind(spec) != "openspiel":
                raise
            notes.append(f"{spec}: {exc}")
            continue
        keep.append(spec)
    return keep, notes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time", type=float, default=0.1, help="seconds per move, replacing {t} in the specs")
    ap.add_argument("--engines", nargs="+", default=None,
                    help="engine specs, {t} for the time per move (default: ENGINES in this file)")
    ap.add_argument("--pairs", type=int, default=20, help="pairs of games per match")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (1: this process)")
    ap.add_argument("--houses", type=int, default=6)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--empty-capture", action="store_true")
    ap.add_argument("--max-plies", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0, help="seed of the openings and the agents' random streams")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--opening-plies", type=int, default=2, help="seeded random opening plies per pair")
    group.add_argument("--openings", type=Path, help="an opening suite file (one position a line)")
    group.add_argument("--random-openings", type=int, help="a generated suite of K positions")
    ap.add_argument("--balanced", type=float, help="with --random-openings: keep positions within M seeds of 0")
    ap.add_argument("--anchor", default=None, help="this engine ({t} allowed) at 0 (default: the mean at 0)")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: results/ratings/<time>s)")
    ap.add_argument("--resume", action="store_true", help="continue the games already in --out")
    a = ap.parse_args(argv)
    try:
        return run(a)
    except ValueError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def run(a) -> int:
    if not (a.time > 0):
        raise ValueError(f"--time must be > 0 seconds, got {a.time}")
    if a.balanced is not None and a.random_openings is None:
        raise ValueError("--balanced applies with --random-openings only")
    specs = [s.format(t=f"{a.time:g}") for s in (a.engines or ENGINES)]
    if len(set(specs)) != len(specs):
        raise ValueError("an engine is listed twice")
    out = a.out or RESULTS / f"{a.time:g}s"
    records = out / "records"
    if not a.resume and records.is_dir() and any(p.stat().st_size for p in records.glob("*.jsonl")):
        raise ValueError(f"{records} already holds games: pass --resume to continue them, or another --out")
    suite, plies = (), a.opening_plies
    variant = dict(houses=a.houses, seeds=a.seeds, empty_capture=a.empty_capture)
    if a.openings is not None:
        suite, plies = read_game_openings(a.openings, "kalah", variant), 0
    elif a.random_openings is not None:
        suite, plies = random_game_openings(a.random_openings, "kalah", variant, a.seed, balanced=a.balanced), 0
    engines, notes = pick_engines(specs, a.houses, a.seeds, a.empty_capture, suite)
    for note in notes:
        print(f"note: skipped {note}", file=sys.stderr)
    if len(engines) < 2:
        raise ValueError(f"a rating list needs at least two engines that can play; left: "
                         f"{', '.join(engines) or 'none'}")
    anchor = None if a.anchor is None else a.anchor.format(t=f"{a.time:g}")
    if anchor is not None and anchor not in engines:
        raise ValueError(f"--anchor {anchor!r} is not one of the engines that play: {', '.join(engines)}")
    match = match_of("kalah", {"houses": a.houses, "seeds": a.seeds, "empty_capture": a.empty_capture},
                     openings=plies, seed=a.seed, max_plies=a.max_plies, suite=suite)
    if a.openings is not None:
        openings = f"the {len(suite)} positions of {a.openings}"
    elif suite:
        balance = f" within {a.balanced:g} seeds of balance" if a.balanced is not None else ""
        openings = f"{len(suite)} random positions{balance}"
    else:
        openings = f"{plies} seeded random plies per pair"
    settings = {"time_per_move": a.time, "engines": engines, "skipped": notes, "pairs": a.pairs,
                "board": f"Kalah({a.houses},{a.seeds}){' empty capture' if a.empty_capture else ''}",
                "max_plies": a.max_plies, "openings": openings, "seed": a.seed, "workers": a.workers,
                "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"}
    total = len(engines) * (len(engines) - 1) * a.pairs
    print(f"{len(engines)} engines, {total} games, {a.time:g} s a move, into {out}", file=sys.stderr, flush=True)
    shown = {"at": 0.0}

    def progress(done, all_games):
        now = time.monotonic()
        if now - shown["at"] >= 10 or done == all_games:
            shown["at"] = now
            print(f"  {done}/{all_games} games", file=sys.stderr, flush=True)

    started = time.time()
    result = run_engines(engines, "round-robin", match, a.pairs, out_dir=records, resume=True, workers=a.workers,
                         progress=progress, match_file=match_file)
    settings["seconds"] = round(time.time() - started, 1)
    write_outputs(out, records, settings, anchor)
    if result["interrupted"]:
        print(f"interrupted: the games so far are in {records} and rated; rerun with --resume to continue",
              file=sys.stderr)
        return 130
    return 0


def write_outputs(out: Path, records: Path, settings: dict, anchor) -> None:
    data = read_results(records)
    fit = rating_list(data, anchor=anchor)
    for note in data.notes:
        print(f"note: {note}", file=sys.stderr)
    title = (f"Rating list: {settings['board']}, {settings['time_per_move']:g} s a move, {settings['openings']}, "
             f"{data.games} games ({settings['pairs']} pairs a match asked for)")
    md = ratings_markdown(fit, title=title)
    if settings["skipped"]:
        md += "\nSkipped: " + "; ".join(settings["skipped"]) + "\n"
    md += f"\nMachine: {settings['machine']}, {settings['workers']} worker process(es).\n"
    (out / "ratings.md").write_text(md)
    summary = data.to_dict()
    summary["files"] = [os.path.relpath(f, out) for f in summary["files"]]  # relative: the folder can move
    (out / "ratings.json").write_text(json.dumps({"settings": settings, "records": summary, "ratings": fit},
                                                 indent=2) + "\n")
    try:
        from jitsearch.arena.rating_list import plot_ratings

        plot_ratings(fit, out / "ratings.png", title=f"{settings['board']}, {settings['time_per_move']:g} s a move: "
                                                     f"ratings with 95% intervals")
    except ValueError as exc:  # no matplotlib: the table and JSON are still written
        print(f"note: no chart: {exc}", file=sys.stderr)
    print(md)


if __name__ == "__main__":
    sys.exit(main())

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
    python bench/kalah_engine.py compare --trees /work/main . --mode fixed --depth 13 --per-suite 20
    python bench/kalah_engine.py compare --trees /work/main . --mode timed --time 0.1 --per-suite 51
    python bench/kalah_engine.py compare --trees /work/main . --mode perfect --time 0.1 --repeats 3

``compare`` measures two source trees (``PYTHONPATH``) in one run, one
worker process each, alternating position by position (the order swapped
every position, so that both see the same load): ``fixed``, nodes and CPU
seconds to a fixed depth (a fresh table, the 16-seed database, no exact
mode); ``timed``, the depth, nodes and proof of ``alphabeta:time=T`` (a
fresh agent a position, as a game's first move) on the first positions of
each shipped Kalah(6,4) suite; ``perfect``, the same agent's share of
optimal moves on the fixed positions of ``perfect_play.py`` (their values
cached there: nothing is solved); ``perfect-depth``, the share of fixed-depth
searches (``--depth``, one pass a depth) on those positions.

``--openings balanced`` (the default) uses the suite shipped for the board
(exact values within 2 seeds, see ``jitsearch openings``), else
``--random-openings`` balanced positions (depth-6 search within 2 seeds).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from jitsearch.arena.matches import match_of, run_kalah_tournament
from jitsearch.arena.openings import random_game_openings
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
    for text in random_game_openings(3, "kalah", dict(houses=6, seeds=4, empty_capture=False), 7, balanced=2):
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
        suite = random_game_openings(a.random_openings, "kalah",
                                     dict(houses=a.houses, seeds=a.seeds, empty_capture=a.empty_capture), a.seed,
                                     balanced=2)
    match = match_of("kalah", {"houses": a.houses, "seeds": a.seeds, "empty_capture": a.empty_capture}, seed=a.seed,
                     max_plies=300, suite=tuple(suite))
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


SUITES = (("kalah-6-4-standard", False), ("kalah-6-4-empty-capture", True))
PERFECT_POSITIONS = Path(__file__).parent / "results" / "perfect_play_positions.json"


def cmd_worker(a) -> int:
    """One tree's worker of ``compare``: JSON requests on stdin, one JSON answer a line on stdout."""
    import jitsearch
    from jitsearch.arena.agents import parse_agent
    from jitsearch.games.kalah.engine_db import load_probe

    probes = {}
    print(json.dumps({"jitsearch": str(Path(jitsearch.__file__).resolve().parent.parent)}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "quit":
            break
        ec = bool(req.get("ec", False))
        state = KalahState.from_text(req["position"], empty_capture=ec)
        if req["op"] == "fixed":
            if ec not in probes:
                probes[ec] = load_probe(6, req.get("db", 16), ec)
            best = None
            for _ in range(req.get("best_of", 1)):  # the least CPU time of as many fresh searches
                kw = dict(dict(table_mb=64, exact=False, book=False), **req.get("kwargs", {}))
                e = KalahEngine(6, probe=probes[ec], **kw)
                c0, t0 = time.process_time(), time.perf_counter()
                r = e.search(state, depth=req["depth"])
                out = {"nodes": int(r["nodes"]), "value": int(r["value"]), "move": int(r["move"]),
                       "cpu": time.process_time() - c0, "wall": time.perf_counter() - t0}
                if best is None or out["cpu"] < best["cpu"]:
                    best = out
            out = best
        else:  # timed: a fresh agent, as the first move of a game
            agent = parse_agent(req["agent"]).with_seed(req.get("seed", 0))
            agent.prepare(state)
            engine = agent.game_engine(state)
            if req.get("book") is not None:
                engine.book = bool(req["book"])
            c0, t0 = time.process_time(), time.perf_counter()
            move = int(agent(state))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            last = agent.last if isinstance(agent.last, dict) else {}
            proof = last.get("proof") or {}
            out = {"move": move, "depth": int(last.get("depth") or 0), "nodes": int(last.get("nodes") or 0),
                   "exact": bool(last.get("exact")), "proved": bool(proof.get("complete")),
                   "proof_nodes": int(proof.get("nodes") or 0), "wall": wall, "cpu": cpu}
        print(json.dumps(out), flush=True)
    return 0


def _compare_jobs(a) -> list[dict]:
    """The requests of a compare run, each once (the driver sends each to every tree)."""
    jobs = []
    if a.mode in ("fixed", "timed"):
        from jitsearch.arena.opening_suites import shipped_suite

        for depth in (a.depth if a.mode == "fixed" else [None]):
            for name, ec in SUITES:
                for i, o in enumerate(shipped_suite(6, 4, ec)[a.first:a.first + a.per_suite]):
                    job = {"set": name, "index": a.first + i, "position": o.position, "ec": ec}
                    if a.mode == "fixed":
                        job.update(op="fixed", depth=depth, best_of=a.best_of)
                    else:
                        job.update(op="timed", seed=a.first + i)
                    jobs.append(job)
    else:
        data = json.loads(PERFECT_POSITIONS.read_text())
        groups = range(a.repeats) if a.mode == "perfect" else a.depth  # perfect-depth: one pass a depth
        for rep in groups:
            for name, ec in SUITES:
                for p in data["sets"][name]["positions"][:a.per_suite]:
                    job = {"set": name, "index": p["index"], "position": p["position"], "ec": ec,
                           "player": p["player"], "values": p["values"], "repeat": rep}
                    if a.mode == "perfect":
                        job.update(op="timed", seed=p["index"], book=False)
                    else:
                        job.update(op="fixed", depth=rep)
                    jobs.append(job)
    return jobs


def cmd_compare(a) -> dict:
    """Two (or more) trees, or two agent specs, alternating job by job; see the module's docstring."""
    trees = [str(Path(t).resolve()) for t in a.trees]
    specs = a.specs or [f"alphabeta:time={a.time:g}"] * len(trees)
    kwargs = [json.loads(k) for k in a.kwargs] if a.kwargs else [{}] * len(trees)
    if not (len(trees) == len(specs) == len(kwargs)):
        raise SystemExit("--trees, --specs and --kwargs must name as many arms")
    procs = []
    for t in trees:
        p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "worker"], text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=t))
        hello = json.loads(p.stdout.readline())
        if hello["jitsearch"] != t:
            raise SystemExit(f"worker of {t} imported jitsearch from {hello['jitsearch']}")
        procs.append(p)

    def ask(i, req):
        procs[i].stdin.write(json.dumps(req) + "\n")
        procs[i].stdin.flush()
        return json.loads(procs[i].stdout.readline())

    for i in range(len(procs)):  # compile / load the kernels and databases, not measured
        for _, ec in SUITES:
            start = "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0"
            late = "1,5,1,0,2,2/17/1,2,0,0,2,6/9 p0"  # (22 seeds in the houses: exact mode's proof compiles too)
            for position in (start, late):
                if a.mode in ("fixed", "perfect-depth"):
                    ask(i, {"op": "fixed", "position": position, "ec": ec, "depth": 5, "kwargs": kwargs[i]})
                else:
                    ask(i, {"op": "timed", "position": position, "ec": ec, "agent": specs[i], "book": False})
    jobs = _compare_jobs(a)
    loads = [os.getloadavg()[0]]
    rows = []
    t0 = time.perf_counter()
    for k, job in enumerate(jobs):
        order = list(range(len(procs)))
        if k % 2:
            order.reverse()
        row = {"job": {x: job[x] for x in ("set", "index", "position", "depth") if x in job} | (
            {"repeat": job["repeat"]} if "repeat" in job else {}), "arms": [None] * len(procs)}
        for i in order:
            req = dict(job, kwargs=kwargs[i]) if job["op"] == "fixed" else dict(job, agent=specs[i])
            req.pop("values", None)
            out = ask(i, req)
            if a.mode.startswith("perfect"):
                from perfect_play import seeds_lost  # (bench/ is the script's folder)

                out["lost"] = seeds_lost(job["values"], job["player"], out["move"])
            row["arms"][i] = out
        rows.append(row)
        loads.append(os.getloadavg()[0])
        if a.verbose:
            print(json.dumps(row), file=sys.stderr, flush=True)
        else:
            print(f"\r{k + 1}/{len(jobs)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    for p in procs:
        p.stdin.write(json.dumps({"op": "quit"}) + "\n")
        p.stdin.flush()
        p.wait()
    arms = []
    for i in range(len(procs)):
        outs = [r["arms"][i] for r in rows]
        arm = {"tree": trees[i], "spec": specs[i] if a.mode in ("timed", "perfect") else None,
               "kwargs": kwargs[i] or None,
               "cpu": round(sum(o["cpu"] for o in outs), 3), "wall": round(sum(o["wall"] for o in outs), 3)}
        if a.mode in ("fixed", "perfect-depth"):
            arm["nodes"] = sum(o["nodes"] for o in outs)
            arm["nodes_per_cpu_s"] = round(arm["nodes"] / max(arm["cpu"], 1e-9))
        else:
            arm["mean_depth"] = round(sum(o["depth"] for o in outs) / len(outs), 3)
            arm["mean_nodes"] = round(sum(o["nodes"] for o in outs) / len(outs))
            arm["proved"] = sum(o["proved"] for o in outs)
            arm["median_wall"] = round(sorted(o["wall"] for o in outs)[len(outs) // 2], 4)
            for name, _ in SUITES:
                sub = [r["arms"][i] for r in rows if r["job"]["set"] == name]
                if sub:
                    arm[f"mean_depth {name}"] = round(sum(o["depth"] for o in sub) / len(sub), 3)
        if a.mode.startswith("perfect"):
            arm["optimal"] = sum(o["lost"] == 0 for o in outs)
            arm["moves"] = len(outs)
            arm["optimal_share"] = round(arm["optimal"] / len(outs), 4)
            arm["seeds_lost_per_move"] = round(sum(o["lost"] for o in outs) / len(outs), 4)
            per_rep = []
            for rep in (range(a.repeats) if a.mode == "perfect" else a.depth):
                sub = [r["arms"][i] for r in rows if r["job"].get("repeat") == rep]
                per_rep.append(sum(o["lost"] == 0 for o in sub))
            arm["optimal_per_repeat" if a.mode == "perfect" else "optimal_per_depth"] = per_rep
        arms.append(arm)
    out = {"kind": "compare", "mode": a.mode, "jobs": len(jobs), "arms": arms,
           "load_1min": [round(min(loads), 2), round(max(loads), 2)], "load_before_after": [round(loads[0], 2),
                                                                                             round(loads[-1], 2)],
           "seconds_run": round(time.perf_counter() - t0, 1)}
    if a.mode == "fixed":
        out["value_differs"] = sum(len({(o["value"]) for o in r["arms"]}) > 1 for r in rows)
        out["nodes_ratio"] = [round(x["nodes"] / arms[0]["nodes"], 4) for x in arms]
        out["cpu_ratio"] = [round(x["cpu"] / arms[0]["cpu"], 4) for x in arms]
    if a.rows:
        out["rows"] = rows
    return out


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
    cp = sub.add_parser("compare")
    cp.add_argument("--trees", nargs="+", required=True, help="source trees (PYTHONPATH), one worker each")
    cp.add_argument("--specs", nargs="+", default=None, help="agent spec of each tree (timed, perfect)")
    cp.add_argument("--kwargs", nargs="+", default=None, help="KalahEngine options of each tree, JSON (fixed)")
    cp.add_argument("--mode", choices=("fixed", "timed", "perfect", "perfect-depth"), required=True)
    cp.add_argument("--depth", type=int, nargs="+", default=[13], help="fixed: the depths (all summed)")
    cp.add_argument("--time", type=float, default=0.1)
    cp.add_argument("--per-suite", type=int, default=20, help="positions a suite (perfect: a rule set)")
    cp.add_argument("--first", type=int, default=0)
    cp.add_argument("--best-of", type=int, default=1, help="fixed: the least CPU time of this many searches")
    cp.add_argument("--repeats", type=int, default=1, help="perfect: passes over the positions")
    cp.add_argument("--rows", action="store_true", help="keep every job's answers in the summary")
    cp.add_argument("--name", default=None, help="the summary's key in engine.json (default: not saved)")
    cp.add_argument("--save", type=Path, default=None, help="write the whole summary (with --rows: every answer) here")
    cp.add_argument("-v", "--verbose", action="store_true")
    sub.add_parser("worker")
    for p in (sp, mp, cp):
        p.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    if a.cmd == "worker":
        return cmd_worker(a)
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if a.cmd == "compare":
        row = cmd_compare(a)
        row.update(machine=machine(), when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   command="python bench/kalah_engine.py " + " ".join(argv if argv is not None else sys.argv[1:]))
        if a.name:
            update(a.out, a.name, row)
        if a.save:
            a.save.write_text(json.dumps(row, indent=1) + "\n")
        print(json.dumps({k: v for k, v in row.items() if k != "rows"}, indent=1))
        return 0
    row = cmd_speed(a) if a.cmd == "speed" else cmd_match(a)
    row.update(machine=machine(), when=time.strftime("%Y-%m-%d"), seconds=round(time.perf_counter() - t0, 1),
               command="python bench/kalah_engine.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    update(a.out, row.get("name", "speed"), row)
    print(json.dumps(row if a.cmd == "speed" else row["statistics"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

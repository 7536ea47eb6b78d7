#!/usr/bin/env python
"""Strength against perfect play: the seeds an engine gives away per move,
measured on positions whose every move is solved exactly.

Elo says who beats whom; this says how far from perfect a player is. From a
fixed set of middle-game positions whose every legal move has its exact
value (:func:`jitsearch.games.kalah.move_values`), a player's move costs
``best value - value of the move played`` seeds (from the mover's view: 0
for an optimal move); the bench reports the mean seeds lost per move and the
share of optimal moves, with 95% intervals. Each position is an independent
trial, so a change of strength shows with far fewer positions than games.

Steps::

    python bench/perfect_play.py positions --count 40            # draw and solve the fixed set (resumable)
    python bench/perfect_play.py measure --agent alphabeta:time=0.1
    python bench/perfect_play.py records games.jsonl [more.jsonl]  # seeds given away per side, in match games
    python bench/perfect_play.py book --houses 6 --seeds 4 --plies 2   # an opening book of exact move values
    python bench/perfect_play.py book-pays --agent alphabeta:time=0.1   # the engine on the book's positions

* ``positions``: for each set (a board, a rule set and the suite its
  positions start from: ``kalah-6-4-standard`` and
  ``kalah-6-4-empty-capture`` start from the shipped balanced suites, then
  2-10 random plies), position ``i`` is drawn from a generator seeded with
  ``(seed, set, i)``, so the set is the same on every machine and
  ``--count`` only extends it. Every legal move is solved with a 16-seed
  endgame database and one transposition table shared by the set's solves;
  each solved position is saved at once into
  ``bench/results/perfect_play_positions.json`` and every solved move into a
  checkpoint under ``bench/results/tmp/`` (git-ignored), so a kill loses at
  most one move's solve and a rerun continues. ``--budget SECONDS`` stops
  between moves.
* ``measure``: a fresh agent per position (its engine warmed on another
  position first, so no compile is timed), its move, the seeds it lost.
  Summary (with the machine's load) to ``bench/results/perfect_play.json``.
* ``records``: every position of the games of ``jitsearch tournament
  --out`` files solved exactly (cached by position text in
  ``bench/results/tmp/perfect_play_cache.jsonl``), the seeds each side gave
  away per move.
* ``book``: :func:`jitsearch.games.kalah.opening_book.build_book`; without
  ``--out`` into the package's books folder (the shipped books).
* ``book-pays``: the engine with its book turned off on every position of
  the shipped book (the book's values the truth): its share of optimal
  moves by ply, what the book adds there. ``measure --book both`` measures
  the fixed positions with the book and without, paired.

Conventions: a margin is player 0's final store difference under perfect
play from then on; a value is the margin from the mover's view; seeds lost
= the best value minus the played move's value (>= 0).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
POSITIONS = RESULTS / "perfect_play_positions.json"
SUMMARY = RESULTS / "perfect_play.json"
TMP = RESULTS / "tmp"
CACHE = TMP / "perfect_play_cache.jsonl"
FORMAT = "jitsearch-kalah-perfect-play-positions"
VERSION = 1
#: The endgame database the solves use (seeds in the houses; Kalah(6,n): 58 MiB, the engine's default too).
ENDGAME_SEEDS = 16
#: The transposition table a set's solves share (slots of 32 bytes: 512 MiB).
TABLE_SLOTS = 1 << 24
#: The fixed sets: name -> (houses, seeds, empty_capture, suite file or None for the start position).
SETS = {
    "kalah-6-4-standard": (6, 4, False, "kalah-6-4-standard.txt"),
    "kalah-6-4-empty-capture": (6, 4, True, "kalah-6-4-empty-capture.txt"),
    "kalah-6-5-standard": (6, 5, False, None),
    "kalah-6-5-empty-capture": (6, 5, True, None),
}
#: Random plies after the suite position (after the start for a set without a suite: the middle
#: game; Kalah(6,5) 8-16 plies from the start left one move unsolved in 300 s, 20-30 solve in 0.3-15 s).
PLIES = {None: (20, 30)}
SUITE_PLIES = (2, 10)


# -- the arithmetic ----------------------------------------------------------------------------

def seeds_lost(margins: dict, player: int, move: int) -> int:
    """Seeds ``player`` gives away by playing ``move`` where every move's
    exact margin (player 0's final store difference) is ``margins``
    ({pit: margin}): the best value for the mover minus the move's (0 for
    an optimal move, never negative)."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    if not margins:
        raise ValueError("no move values: the game is over")
    margins = {int(k): int(v) for k, v in margins.items()}
    if int(move) not in margins:
        raise ValueError(f"move {move} is not one of the valued moves {sorted(margins)}")
    sign = 1 if player == 0 else -1
    return max(sign * v for v in margins.values()) - sign * margins[int(move)]


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_mean(values, *, resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the mean of ``values`` (seeded)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    return (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))


def summarise(losses) -> dict:
    """Moves, mean seeds lost per move (bootstrap 95%), share of optimal moves (Wilson 95%), worst loss."""
    losses = [int(x) for x in losses]
    n = len(losses)
    optimal = sum(1 for x in losses if x == 0)
    lo, hi = bootstrap_mean(losses)
    olo, ohi = wilson(optimal, n)
    return {"moves": n, "seeds_lost_per_move": (sum(losses) / n) if n else None,
            "seeds_lost_interval": [lo, hi] if n else None, "optimal": optimal,
            "optimal_share": (optimal / n) if n else None, "optimal_interval": [olo, ohi] if n else None,
            "max_loss": max(losses) if n else None,
            "loss_histogram": {str(k): losses.count(k) for k in sorted(set(losses))}}


# -- shared helpers --------------------------------------------------------------------------

def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def write_json(path: Path, obj) -> None:
    """Write ``obj`` as indented JSON atomically (temporary file, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=1) + "\n")
    os.replace(tmp, path)


def endgame_cache():
    """The endgame databases' cache folder (built once there, then loaded: without it every solve builds)."""
    from jitsearch.games.kalah import default_cache_dir

    return default_cache_dir()


def suite_texts(name: str) -> list[str]:
    from jitsearch.games.kalah.openings import SUITES_DIR

    houses, seeds, ec, suite = SETS[name]
    if suite is None:
        from jitsearch.games.kalah import KalahState

        return [KalahState.initial(houses, seeds, empty_capture=ec).to_text()]
    from jitsearch.arena.openings import read_game_openings

    return list(read_game_openings(SUITES_DIR / suite, "kalah", dict(houses=houses, seeds=seeds, empty_capture=ec)))


def draw_position(name: str, index: int, seed: int = 0):
    """Position ``index`` of set ``name``: a suite position (or the start) and
    random plies, from a generator seeded with ``(seed, name, index)``; a
    draw that ends the game is drawn again (the attempt joins the seed).
    Returns (state, start text, moves)."""
    from jitsearch.games.kalah import KalahState

    houses, seeds, ec, suite = SETS[name]
    starts = suite_texts(name)
    lo, hi = SUITE_PLIES if suite is not None else PLIES[None]
    for attempt in range(1000):
        rng = random.Random(f"{seed}:{name}:{index}:{attempt}")
        start = rng.choice(starts)
        s = KalahState.from_text(start, empty_capture=ec)
        moves = []
        for _ in range(rng.randint(lo, hi)):
            if s.is_over:
                break
            mv = rng.choice(s.legal_moves())
            moves.append(mv)
            s = s.play(mv)
        if not s.is_over and len(s.legal_moves()) > 1:  # a forced move measures nothing
            return s, start, moves
    raise RuntimeError(f"no playable position drawn for {name} #{index}")


# -- positions ---------------------------------------------------------------------------------

def read_positions(path: Path = POSITIONS) -> dict:
    if not path.exists():
        return {"format": FORMAT, "version": VERSION, "sets": {}}
    data = json.loads(path.read_text())
    if data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a perfect-play positions file")
    return data


def cmd_positions(a) -> int:
    from jitsearch.games.kalah import KalahState, move_values

    data = read_positions(a.file)
    deadline = None if a.budget is None else time.monotonic() + a.budget
    tables = {}
    a.work.mkdir(parents=True, exist_ok=True)
    for i in range(a.count):
        for name in a.sets:
            houses, seeds, ec, suite = SETS[name]
            entry = data["sets"].setdefault(name, {
                "houses": houses, "seeds": seeds, "empty_capture": ec,
                "start": suite or "the start position",
                "plies": list(SUITE_PLIES if suite else PLIES[None]), "seed": a.seed,
                "endgame_seeds": a.endgame_seeds, "positions": []})
            if entry["seed"] != a.seed:
                raise ValueError(f"{a.file} holds set {name} drawn with seed {entry['seed']}, not {a.seed}")
            if entry["plies"] != list(SUITE_PLIES if suite else PLIES[None]):
                raise ValueError(f"{a.file} holds set {name} drawn {entry['plies']} plies from its start, "
                                 f"not {list(SUITE_PLIES if suite else PLIES[None])}: remove the set to draw it again")
            if any(p["index"] == i for p in entry["positions"]):
                continue
            skipped = entry.setdefault("skipped", [])
            if any(p["index"] == i for p in skipped) and not a.retry_skipped:
                continue
            if deadline is not None and time.monotonic() > deadline:
                note(f"budget of {a.budget:g} s spent: stopping (rerun to continue)")
                return 0
            state, start, moves = draw_position(name, i, a.seed)
            if name not in tables:
                tables[name] = np.zeros((a.table_slots, 4), dtype=np.int64)
            ck = a.work / f"perfect_play_{name}_{a.seed}_{i}.jsonl"
            left = None if deadline is None else max(1.0, deadline - time.monotonic())
            if a.position_limit is not None:
                left = a.position_limit if left is None else min(left, a.position_limit)
            note(f"{name} #{i}: {state.to_text()} ({len(moves)} plies after {start}); load {load()}")
            t0 = time.perf_counter()
            db = min(a.endgame_seeds, state.seeds_total)

            def progress(mv, row, done, total):
                note(f"  move {mv}: margin {row['margin']} ({row['seconds']:.1f} s, {row['nodes']:,} nodes)"
                     + (" [checkpoint]" if row["from_checkpoint"] else ""))

            r = move_values(state, endgame_seeds=db, table=tables[name],
                            endgame_cache_dir=endgame_cache() if db else None, checkpoint=ck, resume=True,
                            time_limit=left, max_bytes=8 * 1024**3, progress=progress)
            if r["interrupted"]:
                note(f"{name} #{i}: interrupted; its solved moves are kept in {ck} (rerun to continue)")
                return 130
            if not r["complete"]:
                if deadline is not None and time.monotonic() >= deadline - 1:
                    note(f"{name} #{i}: unfinished at the budget; its solved moves are kept in {ck}")
                    return 0
                skipped[:] = [p for p in skipped if p["index"] != i] + [
                    {"index": i, "position": state.to_text(), "limit_seconds": a.position_limit, "load": load()}]
                skipped.sort(key=lambda p: p["index"])
                write_json(a.file, data)
                note(f"{name} #{i}: not solved in {a.position_limit:g} s: skipped (--retry-skipped tries again; "
                     f"its solved moves are kept in {ck})")
                continue
            skipped[:] = [p for p in skipped if p["index"] != i]
            entry["positions"].append({
                "index": i, "position": state.to_text(), "player": state.player, "start": start,
                "moves": moves, "values": {str(row["move"]): row["margin"] for row in r["moves"]},
                "best_value": r["value"], "seconds": round(sum(row["seconds"] for row in r["moves"]), 2),
                "nodes": r["nodes"], "load": load(), "solved": time.strftime("%Y-%m-%d")})
            entry["positions"].sort(key=lambda p: p["index"])
            data["machine"] = machine()
            write_json(a.file, data)
            ck.unlink(missing_ok=True)
            note(f"{name} #{i}: solved in {time.perf_counter() - t0:.1f} s, value {r['value']:+d} for the mover "
                 f"({len(entry['positions'])} of the set saved)")
    return 0


# -- measure --------------------------------------------------------------------------------

def fixed_positions(data: dict, sets) -> list[tuple[str, dict]]:
    """(set name, position entry) of every saved position of ``sets``, by set then index."""
    out = []
    for name in sets:
        for p in data["sets"].get(name, {}).get("positions", []):
            out.append((name, p))
    return out


def choose_moves(spec: str, positions, *, progress=None, books=(None,)) -> list[dict]:
    """The move ``spec`` plays in each position: a fresh agent per position
    (seeded with the position's index), its database loaded and its kernels
    compiled on another position before the first timed move. ``books``: for
    each position, one move per entry, in turn (paired): None leaves the
    engine's opening book as the spec sets it, True/False turns it on/off
    (an engine agent only); each row says which (``book``) and whether the
    move came from the book (``from_book``)."""
    from jitsearch.arena.agents import parse_agent
    from jitsearch.games.kalah import KalahState

    template = parse_agent(spec)
    warmed = set()
    rows = []
    for k, (name, p) in enumerate(positions):
        houses, seeds, ec, _ = SETS[name]
        state = KalahState.from_text(p["position"], empty_capture=ec)
        if (houses, seeds, ec) not in warmed:  # database and compile, on a position not measured
            warm_state = KalahState.initial(houses, seeds, empty_capture=ec)
            w = template.with_seed(-1)
            w.prepare(warm_state)
            engine = w.game_engine(warm_state) if hasattr(w, "game_engine") else None
            if engine is not None:
                engine.book = False  # (the start is in the book: search it, so that the kernels compile)
            w(warm_state)
            warmed.add((houses, seeds, ec))
        for book in books:
            agent = template.with_seed(p["index"])
            agent.prepare(state)
            if book is not None:
                engine = agent.game_engine(state) if hasattr(agent, "game_engine") else None
                if engine is None:
                    raise ValueError(f"{spec} has no opening book to turn on or off: not the engine")
                engine.book = book  # (made now, as the first move would make it)
            elif hasattr(agent, "game_engine"):
                agent.game_engine(state)  # its tables allocated before the clock, as in a game's later moves
            t0 = time.perf_counter()
            move = int(agent(state))
            seconds = time.perf_counter() - t0
            lost = seeds_lost(p["values"], state.player, move)
            last = agent.last if isinstance(agent.last, dict) else {}
            rows.append({"set": name, "index": p["index"], "move": move, "lost": lost,
                         "seconds": round(seconds, 3), "depth": last.get("depth"), "book": book,
                         "from_book": bool(last.get("book")), "ply": p.get("ply")})
            if progress is not None:
                progress(k + 1, len(positions), rows[-1])
    return rows


def cmd_measure(a) -> int:
    data = read_positions(a.file)
    positions = fixed_positions(data, a.sets)
    if a.limit:
        positions = positions[:a.limit]
    if not positions:
        note(f"error: no solved positions of {', '.join(a.sets)} in {a.file}: run the positions step first")
        return 1
    load_before = load()
    t0 = time.perf_counter()
    books = {"spec": (None,), "on": (True,), "off": (False,), "both": (True, False)}[a.book]
    rows = choose_moves(a.agent, positions, books=books, progress=lambda d, t, r: note(
        f"{d}/{t} {r['set']} #{r['index']}{'' if r['book'] is None else ' book ' + str(r['book'])}: "
        f"move {r['move']}, lost {r['lost']} (depth {r['depth']}{', from the book' if r['from_book'] else ''}, "
        f"{r['seconds']:.2f} s)"))
    head = {"kind": "measure", "agent": a.agent, "positions_file": a.file.name}
    tail = {"load_before": load_before, "load_after": load(), "machine": machine(),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "seconds": round(time.perf_counter() - t0, 1),
            "command": "python bench/perfect_play.py " + " ".join(a.argv)}
    for book in books:
        mine = [r for r in rows if r["book"] is book]
        out = dict(head, **measure_summary(mine, a.sets), **tail)
        if book is not None:
            out["book"] = book
            if len(books) > 1:
                out["paired_with"] = "the same positions, one after the other, in the same run"
        key = a.name or f"measure {a.agent}"
        if len(books) > 1:
            key += ", book on" if book else ", book off"
        update_summary(a.out, key, out)
        print(json.dumps({k: out[k] for k in ("agent", "all", "sets", "load_before", "load_after")
                          if k in out} | {"book": book, "book_moves": out["book_moves"]}, indent=1))
    return 0


def measure_summary(rows, sets) -> dict:
    """The summary of a measure step's rows: all, per set, the losses, median time and depth, book moves."""
    return {"all": summarise(r["lost"] for r in rows),
            "sets": {name: summarise(r["lost"] for r in rows if r["set"] == name) for name in sets},
            "losses": [[r["set"], r["index"], r["move"], r["lost"]] for r in rows],
            "book_moves": sum(1 for r in rows if r["from_book"]),
            "median_move_seconds": float(np.median([r["seconds"] for r in rows])) if rows else None,
            "median_depth": float(np.median([r["depth"] for r in rows if r["depth"] is not None]
                                            or [math.nan]))}


def update_summary(path: Path, key: str, row: dict) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = row
    write_json(path, data)
    plot_summary(data, path.with_suffix(".png"))


def plot_summary(data: dict, path: Path) -> None:
    """Share of optimal moves (Wilson 95%) and seeds lost per move (bootstrap 95%) of each measured agent,
    per set, as a PNG (skipped without matplotlib)."""
    from jitsearch.benchmarks._plot import pyplot

    plt = pyplot()
    rows = [(k, r) for k, r in data.items() if r.get("kind") == "measure"]
    if plt is None or not rows:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    sets = sorted({s for _, r in rows for s in r["sets"]})
    width = 0.8 / max(1, len(rows))
    for j, (_, r) in enumerate(rows):
        xs = [i + (j - (len(rows) - 1) / 2) * width for i in range(len(sets))]
        for ax, key, interval in ((axes[0], "optimal_share", "optimal_interval"),
                                  (axes[1], "seeds_lost_per_move", "seeds_lost_interval")):
            ys = [r["sets"].get(s, {}).get(key) or 0.0 for s in sets]
            err = [[y - (r["sets"].get(s, {}).get(interval) or [y, y])[0] for s, y in zip(sets, ys)],
                   [(r["sets"].get(s, {}).get(interval) or [y, y])[1] - y for s, y in zip(sets, ys)]]
            ax.bar(xs, ys, width, yerr=err, capsize=3, label=f"{r['agent']} (load {r['load_before'][0]:g})")
    for ax, title in ((axes[0], "share of optimal moves"), (axes[1], "seeds lost per move")):
        ax.set_xticks(range(len(sets)))
        ax.set_xticklabels([s.replace("kalah-", "") for s in sets], fontsize=8)
        ax.set_title(title, fontsize=10)
    axes[0].axhline(0.95, color="grey", lw=0.8, ls="--")
    axes[0].set_ylim(0, 1.05)
    axes[1].legend(fontsize=7)
    fig.suptitle("Kalah engine against perfect play (fixed solved positions, 95% intervals)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- the solve cache and tournament records ----------------------------------------------------

class SolveCache:
    """Exact move values by position text and rule set, kept in a JSONL file
    (one checked line a position, appended as solved): the records step
    solves a position once, whatever the file or run. A line that does not
    check is ignored with a note (it is solved again)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.values: dict = {}
        if path is None or not path.exists():
            return
        from jitsearch._io import check_value

        bad = 0
        for line in path.read_text(errors="replace").splitlines():
            try:
                e = json.loads(line)
                if e.get("check") != check_value(e):
                    raise ValueError
                self.values[(e["position"], bool(e["empty_capture"]))] = {int(k): int(v)
                                                                          for k, v in e["values"].items()}
            except (ValueError, KeyError, TypeError, AttributeError):
                bad += 1
        if bad:
            note(f"note: {bad} damaged line(s) of {path} ignored (solved again)")

    def get(self, text: str, empty_capture: bool):
        return self.values.get((text, bool(empty_capture)))

    def put(self, text: str, empty_capture: bool, values: dict) -> None:
        values = {int(k): int(v) for k, v in values.items()}
        self.values[(text, bool(empty_capture))] = values
        if self.path is None:
            return
        from jitsearch._io import append_line_synced, check_value, drop_partial_line

        self.path.parent.mkdir(parents=True, exist_ok=True)
        drop_partial_line(self.path)
        e = {"position": text, "empty_capture": bool(empty_capture), "values": {str(k): v for k, v in
                                                                                 values.items()}}
        e["check"] = check_value(e)
        append_line_synced(self.path, json.dumps(e, sort_keys=True))


class Solver:
    """Exact move values of positions, through a :class:`SolveCache`, one
    shared transposition table per board and rule set."""

    def __init__(self, cache: SolveCache, endgame_seeds: int = ENDGAME_SEEDS, table_slots: int | None = None,
                 verbose: bool = False):
        self.cache, self.endgame_seeds, self.table_slots = cache, endgame_seeds, table_slots
        self.verbose = verbose
        self.tables: dict = {}
        self.solved = 0

    def values(self, state) -> dict:
        from jitsearch.games.kalah import move_values, table_slots_for

        text = state.to_text()
        got = self.cache.get(text, state.empty_capture)
        if got is not None:
            return got
        db = min(self.endgame_seeds, state.seeds_total)
        key = (state.houses, state.seeds_total, state.empty_capture)
        if key not in self.tables:
            slots = self.table_slots or table_slots_for(state, db)
            self.tables[key] = np.zeros((slots, 4), dtype=np.int64)
        t0 = time.perf_counter()
        r = move_values(state, endgame_seeds=db, table=self.tables[key], max_bytes=8 * 1024**3,
                        endgame_cache_dir=endgame_cache() if db else None)
        if self.verbose:
            note(f"  {text}: solved in {time.perf_counter() - t0:.1f} s")
        if not r["complete"]:
            raise RuntimeError(f"{text}: the solve did not finish")
        values = {row["move"]: int(row["margin"]) for row in r["moves"]}
        self.cache.put(text, state.empty_capture, values)
        self.solved += 1
        return values


def read_tournament_records(path: Path) -> list[dict]:
    """The Kalah game records of a ``jitsearch tournament --out`` file (a
    torn last line dropped; a record whose check value does not match, or an
    Oware record, refused in one line)."""
    from jitsearch.arena.records import BadRecord, verify_check

    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        raw = raw[:raw.rfind(b"\n") + 1]
    out = []
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
            if rec.get("game") == "oware":
                raise ValueError("an Oware record: this step reads Kalah games")
            verify_check(rec)
            for key in ("a", "b", "a_player", "opening", "moves", "match"):
                if key not in rec:
                    raise ValueError(f"no {key!r}: not a Kalah tournament record")
        except (ValueError, BadRecord) as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        out.append(rec)
    return out


def game_positions(rec: dict):
    """(state before, move, side 'a' or 'b') of every move the players chose in a record (the opening
    plies, which nobody chose, left out)."""
    from jitsearch.games.kalah import KalahState

    m = rec["match"]
    if "opening_moves" in rec:  # the arena's record (jitsearch.arena.game_match): the game's moves start at
        variant = dict(m["variant"])  # the position ``opening`` names
        s = KalahState.from_text(rec["opening"], empty_capture=bool(variant["empty_capture"]))
        for mv in rec["moves"]:
            yield s, mv, "a" if s.player == rec["a_player"] else "b"
            s = s.play(mv)
        return
    ec = bool(m["empty_capture"])  # the older format (arena.legacy_records): the opening's moves from ``start``
    if rec.get("start"):
        s = KalahState.from_text(rec["start"], empty_capture=ec)
    else:
        s = KalahState.initial(m["houses"], m["seeds"], empty_capture=ec)
    for mv in rec["opening"]:
        s = s.play(mv)
    for mv in rec["moves"]:
        yield s, mv, "a" if s.player == rec["a_player"] else "b"
        s = s.play(mv)


def record_losses(records, solver: Solver, *, progress=None) -> dict:
    """{player spec: [seeds lost at each move it chose with more than one legal move]} over ``records``,
    and the count of forced moves left out, as (losses, forced). A player against itself is two
    players, ``SPEC (A)`` and ``SPEC (B)``."""
    losses: dict = {}
    forced: dict = {}
    for k, rec in enumerate(records):
        for state, mv, side in game_positions(rec):
            name = rec[side] if rec["a"] != rec["b"] else f"{rec[side]} ({side.upper()})"
            losses.setdefault(name, [])
            forced.setdefault(name, 0)
            if len(state.legal_moves()) == 1:
                forced[name] += 1
                continue
            losses[name].append(seeds_lost(solver.values(state), state.player, mv))
        if progress is not None:
            progress(k + 1, len(records))
    return losses, forced


def cmd_records(a) -> int:
    try:
        records = [r for path in a.files for r in read_tournament_records(path)]
    except (OSError, ValueError) as exc:
        note(f"error: {exc}")
        return 1
    if a.max_games:
        records = records[:a.max_games]
    solver = Solver(SolveCache(a.cache), a.endgame_seeds, verbose=True)
    t0 = time.perf_counter()
    losses, forced = record_losses(records, solver, progress=lambda d, t: note(
        f"{d}/{t} games, {solver.solved} positions solved, {time.perf_counter() - t0:.0f} s"))
    out = {"kind": "records", "files": [str(p) for p in a.files], "games": len(records),
           "players": {name: dict(summarise(x), forced_moves=forced[name]) for name, x in losses.items()},
           "positions_solved": solver.solved, "load": load(), "machine": machine(),
           "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seconds": round(time.perf_counter() - t0, 1),
           "command": "python bench/perfect_play.py " + " ".join(a.argv)}
    if a.out is not None:
        update_summary(a.out, "records " + " ".join(p.name for p in a.files), out)
    print(json.dumps(out, indent=1))
    return 0


# -- the opening book --------------------------------------------------------------------------

def cmd_book(a) -> int:
    from jitsearch.games.kalah.opening_book import BOOKS_DIR, book_file_name, build_book, write_book

    cache = SolveCache(a.cache)
    ec = a.empty_capture
    solved = {t: v for (t, e), v in cache.values.items() if e == ec}
    db = min(a.endgame_seeds, 2 * a.houses * a.seeds)
    t0 = time.perf_counter()
    book = build_book(a.houses, a.seeds, ec, a.plies, endgame_seeds=db,
                      endgame_cache_dir=endgame_cache() if db else None, table_slots=a.table_slots, solved=solved,
                      on_solved=lambda text, values: cache.put(text, ec, values),
                      progress=lambda d, t, text, sec: note(f"{d}/{t} {text} ({sec:.1f} s; load {load()})"),
                      move_progress=lambda mv, row, done, total: note(
                          f"  move {mv}: margin {row['margin']} ({row['seconds']:.1f} s, {row['nodes']:,} nodes; "
                          f"load {load()})"))
    out = a.out or BOOKS_DIR / book_file_name(a.houses, a.seeds, ec)
    seconds = round(time.perf_counter() - t0, 1)
    write_book(out, book, command="python bench/perfect_play.py " + " ".join(a.argv),
               endgame_seeds=db, seconds=seconds, made=time.strftime("%Y-%m-%d"))
    note(f"{len(book)} positions in {out} ({seconds} s)")
    return 0


def cmd_book_pays(a) -> int:
    """The engine without its book on every position of a book with more than one legal move, the book's
    values the truth: the share of optimal moves by ply says what the book adds."""
    from jitsearch.games.kalah import KalahState
    from jitsearch.games.kalah.opening_book import BOOKS_DIR, book_file_name, book_positions, load_book

    load_before = load()
    t0 = time.perf_counter()
    for name in a.sets:
        houses, seeds, ec, _ = SETS[name]
        path = a.book_file or BOOKS_DIR / book_file_name(houses, seeds, ec)
        book = load_book(path, houses=houses, seeds=seeds, empty_capture=ec)
        if book is None:
            return 1
        plies = book_positions(houses, seeds, ec, book.plies)
        positions = [(name, {"index": i, "position": text, "ply": plies[text],
                             "values": {str(k): v for k, v in book.entries[text].items()}})
                     for i, text in enumerate(sorted(book.entries, key=lambda t: (plies[t], t)))
                     if len(KalahState.from_text(text, empty_capture=ec).legal_moves()) > 1]
        rows = choose_moves(a.agent, positions, books=(False,), progress=lambda d, t, r: note(
            f"{d}/{t} {r['set']} ply {r['ply']}: move {r['move']}, lost {r['lost']} (depth {r['depth']}, "
            f"{r['seconds']:.2f} s)"))
        out = {"kind": "book-pays", "agent": a.agent, "book": str(path.name), "book_plies": book.plies,
               "book_positions": len(book), "book_bytes": path.stat().st_size,
               "book_seconds": book.header.get("seconds"), "all": summarise(r["lost"] for r in rows),
               "by_ply": {str(k): summarise(r["lost"] for r in rows if r["ply"] == k)
                          for k in sorted({r["ply"] for r in rows})},
               "median_depth": float(np.median([r["depth"] for r in rows if r["depth"] is not None] or [math.nan])),
               "load_before": load_before, "load_after": load(), "machine": machine(),
               "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "seconds": round(time.perf_counter() - t0, 1),
               "command": "python bench/perfect_play.py " + " ".join(a.argv)}
        update_summary(a.out, f"book-pays {a.agent} {name}", out)
        print(json.dumps({k: out[k] for k in ("agent", "book", "all", "by_ply", "load_before", "load_after")},
                         indent=1))
    return 0


# -- CLI ----------------------------------------------------------------------------------------

def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    default_sets = ["kalah-6-4-standard", "kalah-6-4-empty-capture"]
    pp = sub.add_parser("positions", help="draw and solve the fixed positions (resumable, incremental)")
    pp.add_argument("--count", type=int, default=40, help="positions per set (extends the set)")
    pp.add_argument("--sets", nargs="+", choices=sorted(SETS), default=default_sets)
    pp.add_argument("--seed", type=int, default=0)
    pp.add_argument("--budget", type=float, default=None, help="seconds; stop (between moves) once spent")
    pp.add_argument("--table-slots", type=int, default=TABLE_SLOTS)
    pp.add_argument("--endgame-seeds", type=int, default=ENDGAME_SEEDS)
    pp.add_argument("--position-limit", type=float, default=None,
                    help="seconds; a position not solved in them is skipped (listed in the file)")
    pp.add_argument("--retry-skipped", action="store_true", help="try the skipped positions again")
    pp.add_argument("--work", type=Path, default=TMP, help="folder of the per-position checkpoints")
    mp = sub.add_parser("measure", help="seeds an agent loses per move on the fixed positions")
    mp.add_argument("--agent", required=True, help="agent spec, e.g. alphabeta:time=0.1")
    mp.add_argument("--sets", nargs="+", choices=sorted(SETS), default=default_sets)
    mp.add_argument("--limit", type=int, default=0, help="only the first N positions (0: all)")
    mp.add_argument("--out", type=Path, default=SUMMARY)
    mp.add_argument("--name", default=None, help="the summary's key (default: 'measure AGENT')")
    mp.add_argument("--book", choices=("spec", "on", "off", "both"), default="spec",
                    help="the engine's opening book: as the spec sets it, on, off, or both (paired: each position "
                         "with the book, then without)")
    rp = sub.add_parser("records", help="seeds given away per side in tournament record files")
    rp.add_argument("files", type=Path, nargs="+")
    rp.add_argument("--max-games", type=int, default=0)
    rp.add_argument("--out", type=Path, default=None, help="JSON summary to update (default: print only)")
    bp = sub.add_parser("book", help="generate an opening book of exact move values")
    bp.add_argument("--houses", type=int, default=6)
    bp.add_argument("--seeds", type=int, default=4)
    bp.add_argument("--empty-capture", action="store_true")
    bp.add_argument("--plies", type=int, default=2)
    bp.add_argument("--table-slots", type=int, default=None)
    bp.add_argument("--out", type=Path, default=None, help="default: the package's books folder")
    kp = sub.add_parser("book-pays", help="the engine without its book on the book's positions (is it needed?)")
    kp.add_argument("--agent", default="alphabeta:time=0.1", help="an engine agent spec")
    kp.add_argument("--sets", nargs="+", choices=sorted(SETS), default=default_sets)
    kp.add_argument("--book-file", type=Path, default=None, help="default: the book shipped for the set")
    kp.add_argument("--out", type=Path, default=SUMMARY)
    for p in (pp, mp):
        p.add_argument("--file", type=Path, default=POSITIONS, help="the fixed positions (JSON)")
    for p in (rp, bp):
        p.add_argument("--endgame-seeds", type=int, default=ENDGAME_SEEDS)
        p.add_argument("--cache", type=Path, default=CACHE, help="solved positions (JSONL), kept between runs")
    a = ap.parse_args(argv)
    a.argv = argv
    return {"positions": cmd_positions, "measure": cmd_measure, "records": cmd_records, "book": cmd_book,
            "book-pays": cmd_book_pays}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())

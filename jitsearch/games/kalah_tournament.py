"""Kalah tournaments between any two agents (specs of :mod:`jitsearch.games.agents`).

Games come in pairs with the seats swapped (A moves first in game 0 of a
pair, B in game 1), both games of a pair starting after the same seeded
random opening plies (``openings``, for diversity). A game stops at the end
or at ``max_plies`` (default 300, as seed 003); a capped game is scored by
the store difference at that point. Every agent's random stream is derived
from (tournament seed, pair, seat, side), so a tournament replays exactly.

Each finished game is appended to a JSONL file as it ends; ``resume=True``
skips the games already there (same players and settings), so an
interrupted tournament loses nothing. Games run in parallel processes.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path

from .._io import drop_partial_line
from ..kernels.rng import mix64_py
from .agents import parse_agent, play_game
from .kalah import KalahState
from .random_tree_game import wilson


@dataclass(frozen=True)
class KalahMatch:
    houses: int = 6
    seeds: int = 4
    empty_capture: bool = False
    max_plies: int = 300
    openings: int = 0
    seed: int = 0

    def check(self):
        KalahState.initial(self.houses, self.seeds)  # validates the board size
        if self.max_plies < 1:
            raise ValueError(f"max_plies must be >= 1, got {self.max_plies}")
        if self.openings < 0:
            raise ValueError(f"openings must be >= 0, got {self.openings}")


def config_id(a: str, b: str, match: KalahMatch) -> str:
    text = json.dumps([a, b, asdict(match)], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def opening(match: KalahMatch, pair: int) -> list[int]:
    """The seeded random opening plies of ``pair`` (shared by both seats)."""
    rng = random.Random(mix64_py(match.seed * 7919 + pair))
    s = KalahState.initial(match.houses, match.seeds, empty_capture=match.empty_capture)
    moves = []
    for _ in range(match.openings):
        if s.is_over:
            break
        mv = rng.choice(s.legal_moves())
        moves.append(mv)
        s = s.play(mv)
    return moves


def play_one(a: str, b: str, match: KalahMatch, pair: int, seat: int) -> dict:
    """Game ``seat`` (0: A is player 0, 1: B is) of ``pair``; returns its record."""
    s = KalahState.initial(match.houses, match.seeds, empty_capture=match.empty_capture)
    start = opening(match, pair)
    for mv in start:
        s = s.play(mv)
    base = mix64_py((match.seed * 1_000_003 + pair) * 4 + seat * 2)
    agent_a = parse_agent(a, seed=base)
    agent_b = parse_agent(b, seed=base + 1)
    agents = [agent_a, agent_b] if seat == 0 else [agent_b, agent_a]
    g = play_game(s, agents, max_plies=max(0, match.max_plies - len(start)))
    a_player = 0 if seat == 0 else 1
    mine = g["margin"] if a_player == 0 else -g["margin"]
    return {"pair": pair, "seat": seat, "a_player": a_player, "opening": start, "moves": g["moves"],
            "plies": len(start) + g["plies"], "margin": g["margin"], "final_board": g["final_board"],
            "capped": not g["finished"], "a_result": "win" if mine > 0 else ("loss" if mine < 0 else "draw")}


def _play_task(task):
    return play_one(*task)


def read_records(path: Path) -> list[dict]:
    out = []
    if path.exists():
        with open(path) as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return out


def summarize(records: list[dict]) -> dict:
    """Win/draw/loss counts and rates of A (95% Wilson intervals), A's score
    (wins + draws/2 over games) with a 95% normal interval from the per-game
    scores, the Elo difference 400·log10(s/(1-s)) with the interval mapped
    from the score's, and the mean game length in plies."""
    n = len(records)
    wins = sum(r["a_result"] == "win" for r in records)
    draws = sum(r["a_result"] == "draw" for r in records)
    losses = n - wins - draws
    out = {"games": n, "a_wins": wins, "draws": draws, "b_wins": losses}
    if n == 0:
        return out
    score = (wins + 0.5 * draws) / n
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score ** 2) / max(n - 1, 1)
    half = 1.96 * math.sqrt(var / n)
    lo, hi = max(0.0, score - half), min(1.0, score + half)

    def elo(s):
        if s <= 0.0:
            return -math.inf
        if s >= 1.0:
            return math.inf
        return 400.0 * math.log10(s / (1.0 - s))

    out.update(
        a_score=score, a_score_ci95=[lo, hi], elo_diff=elo(score), elo_ci95=[elo(lo), elo(hi)],
        mean_plies=sum(r["plies"] for r in records) / n, capped=sum(r["capped"] for r in records),
        a_win_rate=wins / n, a_win_rate_ci95=list(wilson(wins, n)), draw_rate=draws / n,
        draw_rate_ci95=list(wilson(draws, n)), b_win_rate=losses / n, b_win_rate_ci95=list(wilson(losses, n)),
    )
    return out


def run_kalah_tournament(a: str, b: str, match: KalahMatch, pairs: int, *, out=None, resume: bool = False,
                         workers: int = 1, progress=None) -> dict:
    """Play ``pairs`` pairs of games (2·pairs games); see the module docstring."""
    if pairs < 1:
        raise ValueError(f"pairs must be >= 1, got {pairs}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    match.check()
    parse_agent(a)
    parse_agent(b)  # spec errors before any game
    if "human" in (a.split(":")[0], b.split(":")[0]):
        raise ValueError("a tournament needs engines, not human players")
    cid = config_id(a, b, match)
    path = Path(out) if out is not None else None
    done: dict[tuple[int, int], dict] = {}
    if path is not None:
        if path.exists() and not resume and any(r.get("config") == cid for r in read_records(path)):
            raise ValueError(f"{path} already holds this tournament's games: pass --resume or another --out")
        if resume:
            drop_partial_line(path)
            for r in read_records(path):
                if r.get("config") == cid and r["pair"] < pairs:
                    done[(r["pair"], r["seat"])] = r
        path.parent.mkdir(parents=True, exist_ok=True)
    tasks = [(a, b, match, p, s) for p in range(pairs) for s in (0, 1) if (p, s) not in done]
    records = dict(done)
    total = 2 * pairs
    fh = open(path, "a") if path is not None else None

    def keep(rec):
        rec["config"] = cid
        rec["a"], rec["b"] = a, b
        records[(rec["pair"], rec["seat"])] = rec
        if fh is not None:
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
        if progress:
            progress(len(records), total)

    try:
        if progress:
            progress(len(records), total)
        if workers > 1 and len(tasks) > 1:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(_play_task, t) for t in tasks]
                for f in as_completed(futures):
                    keep(f.result())
        else:
            for t in tasks:
                keep(play_one(*t))
    finally:
        if fh is not None:
            fh.close()
    ordered = [records[(p, s)] for p in range(pairs) for s in (0, 1)]
    result = summarize(ordered)
    result.update(a=a, b=b, pairs=pairs, houses=match.houses, seeds=match.seeds,
                  empty_capture=match.empty_capture, max_plies=match.max_plies, openings=match.openings,
                  seed=match.seed)
    return result

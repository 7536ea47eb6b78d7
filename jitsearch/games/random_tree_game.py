"""Games on incremental random trees (seed 001, section 5; Korf & Chickering).

A game is a walk down a fresh incremental random tree of total depth ``D``:
MAX moves at the root, players alternate, and each chooses its move by
searching to its own horizon (``min(horizon, D - depth)``) from the current
node with alpha-beta or forward estimation. The cost of the leaf reached is
the outcome (MAX wants it large).

Every game is played twice on the same tree with the players swapping MAX
and MIN. The pair's winner is the player who played MAX in the game with
the larger outcome; equal outcomes tie the pair. A tournament is N pairs.
In the depth-increment protocol both players start at horizon 1 and, after
each tournament, the one that generated fewer nodes in total gets one more
ply of horizon.

Records (one JSON line per pair) are appended as pairs finish, so an
interrupted tournament continues with ``resume=True`` and ends with the same
totals as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numba import njit

from .._io import drop_partial_line, grouped
from ..search.forward_estimation import BOUNDS_FIXED, BOUNDS_ONLINE, incremental_search
from ..trees.incremental import (
    DEFAULT_EDGE_RANGE,
    IncrementalTree,
    inc_child_key,
    inc_edge_cost,
    inc_root_key,
)

# player parameter vector: [use_fe, bounds_mode, l, u, delta, horizon]
_P_FE, _P_MODE, _P_L, _P_U, _P_DELTA, _P_H = range(6)


@njit(cache=True, nogil=True)
def play_game(branching, random_branching, edge_lo, edge_span, tree_seed, total_depth, max_player, min_player):
    """One game; returns (outcome, generations of MAX, generations of MIN)."""
    key = inc_root_key(tree_seed)
    cost = 0.0
    gens = np.zeros(2, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    for depth in range(total_depth):
        p = max_player if depth % 2 == 0 else min_player
        horizon = min(np.int64(p[_P_H]), total_depth - depth)
        counter[0] = 0
        _, best, _, _ = incremental_search(
            branching, random_branching, edge_lo, edge_span, key, cost, depth % 2 == 0, horizon,
            p[_P_FE] > 0, np.int64(p[_P_MODE]), p[_P_L], p[_P_U], p[_P_DELTA], counter,
        )
        gens[depth % 2] += counter[0]
        key = inc_child_key(key, best)
        cost += inc_edge_cost(key, edge_lo, edge_span)
    return cost, gens[0], gens[1]


@dataclass(frozen=True)
class PlayerSpec:
    """A searcher for random-tree games: ``alphabeta`` or ``fe``.

    Spec strings: ``alphabeta:depth=3`` or ``fe:depth=3,delta=0.5,bounds=online``
    (bounds: exact, online, or ``L/U`` numbers; default online as in the
    paper's tournaments).
    """

    kind: str
    horizon: int = 1
    delta: float = 1.0
    bounds: str = "online"

    @classmethod
    def parse(cls, text: str) -> "PlayerSpec":
        kind, _, rest = text.partition(":")
        kind = kind.strip()
        if kind not in ("alphabeta", "fe"):
            raise ValueError(f"player must be alphabeta or fe, got {kind!r} in {text!r}")
        fields = {}
        for item in filter(None, (x.strip() for x in rest.split(","))):
            name, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"player option {item!r} must look like name=value in {text!r}")
            fields[name.strip()] = value.strip()
        known = {"depth", "delta", "bounds"} if kind == "fe" else {"depth"}
        unknown = set(fields) - known
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for {kind}; known: {sorted(known)}")
        try:
            spec = cls(kind, int(fields.get("depth", 1)), float(fields.get("delta", 1.0)),
                       fields.get("bounds", "online"))
        except ValueError:
            raise ValueError(f"bad number in player spec {text!r}") from None
        spec.check()
        return spec

    def check(self) -> None:
        if self.horizon < 1:
            raise ValueError(f"depth (horizon) must be >= 1, got {self.horizon}")
        if not 0 < self.delta <= 1:
            raise ValueError(f"delta must lie in (0, 1], got {self.delta}")
        if self.bounds not in ("exact", "online") and len(self.bounds.split("/")) != 2:
            raise ValueError(f"bounds must be exact, online or L/U, got {self.bounds!r}")

    def __str__(self) -> str:
        if self.kind == "alphabeta":
            return f"alphabeta:depth={self.horizon}"
        return f"fe:depth={self.horizon},delta={self.delta:g},bounds={self.bounds}"

    def params(self, tree: IncrementalTree) -> np.ndarray:
        mode, lo, hi = BOUNDS_FIXED, float(tree.edge_lo), float(tree.edge_hi)
        if self.bounds == "online":
            mode = BOUNDS_ONLINE
        elif self.bounds != "exact":
            lo, hi = (float(x) for x in self.bounds.split("/"))
        return np.array([1.0 if self.kind == "fe" else 0.0, mode, lo, hi, self.delta, self.horizon])


@dataclass(frozen=True)
class GameConfig:
    """The random trees games are played on."""

    branching: int = 5
    random_branching: bool = True
    depth: int = 10
    edge_lo: int = DEFAULT_EDGE_RANGE[0]
    edge_hi: int = DEFAULT_EDGE_RANGE[1]
    seed: int = 0

    def tree(self, pair: int) -> IncrementalTree:
        return IncrementalTree(self.branching, self.depth, seed=pair_seed(self.seed, pair),
                               random_branching=self.random_branching, edge_lo=self.edge_lo, edge_hi=self.edge_hi)


def pair_seed(seed: int, pair: int) -> int:
    """Seed of pair ``pair``'s tree: a hash, so tournaments never share trees."""
    digest = hashlib.blake2b(f"{seed}:{pair}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def pair_winner(outcome_a_max: float, outcome_b_max: float) -> str:
    """'a', 'b' or 'tie': the player that played MAX when the larger outcome came."""
    if outcome_a_max > outcome_b_max:
        return "a"
    if outcome_b_max > outcome_a_max:
        return "b"
    return "tie"


def play_pair(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pair: int) -> dict:
    tree = config.tree(pair)
    pa, pb = a.params(tree), b.params(tree)
    args = (tree.branching, tree.random_branching, tree.edge_lo, np.uint64(tree.edge_span),
            np.uint64(tree.seed), tree.depth)
    out1, a_gens1, b_gens1 = play_game(*args, pa, pb)  # a is MAX
    out2, b_gens2, a_gens2 = play_game(*args, pb, pa)  # b is MAX
    return {
        "pair": pair,
        "tree_seed": tree.seed,
        "a": str(a),
        "b": str(b),
        "outcome_a_max": float(out1),
        "outcome_b_max": float(out2),
        "winner": pair_winner(out1, out2),
        "nodes_a": int(a_gens1 + a_gens2),
        "nodes_b": int(b_gens1 + b_gens2),
    }


def tally(records) -> dict:
    """Totals of pair records: wins, ties, rates (with a Wilson interval), nodes."""
    n = len(records)
    a = sum(r["winner"] == "a" for r in records)
    b = sum(r["winner"] == "b" for r in records)
    ties = n - a - b
    score = (a + 0.5 * ties) / n if n else math.nan
    return {
        "pairs": n,
        "a_wins": a,
        "b_wins": b,
        "ties": ties,
        "a_win_rate": a / n if n else math.nan,
        "a_score": score,
        "a_win_rate_ci95": wilson(a, n),
        "nodes_a": int(sum(r["nodes_a"] for r in records)),
        "nodes_b": int(sum(r["nodes_b"] for r in records)),
    }


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def _config_id(a: PlayerSpec, b: PlayerSpec, config: GameConfig, round_no: int | None) -> str:
    text = json.dumps([str(a), str(b), config.__dict__, round_no], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def _read_records(path: Path) -> list[dict]:
    records = []
    if path.exists():
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut by an interruption
    return records


def run_tournament(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pairs: int, *, out=None,
                   resume: bool = False, round_no: int | None = None, progress=None) -> dict:
    """Play ``pairs`` pairs; append each record to ``out`` (JSONL) as it finishes.

    With ``resume``, pairs already in ``out`` for the same players, trees and
    round are not replayed. Returns :func:`tally` of this tournament's
    records plus the players.
    """
    if pairs < 1:
        raise ValueError(f"pairs must be >= 1, got {pairs}")
    a.check()
    b.check()
    cid = _config_id(a, b, config, round_no)
    done: dict[int, dict] = {}
    path = Path(out) if out is not None else None
    if path is not None:
        if path.exists() and not resume:
            existing = [r for r in _read_records(path) if r.get("config") == cid]
            if existing:
                raise ValueError(f"{path} already holds this tournament's games: pass --resume or another --out")
        if resume:
            drop_partial_line(path)
            for r in _read_records(path):
                if r.get("config") == cid and r["pair"] < pairs:
                    done[r["pair"]] = r
        path.parent.mkdir(parents=True, exist_ok=True)
    records = dict(done)
    fh = open(path, "a") if path is not None else None
    try:
        for p in range(pairs):
            if p in records:
                continue
            rec = play_pair(a, b, config, p)
            rec["config"] = cid
            if round_no is not None:
                rec["round"] = round_no
            records[p] = rec
            if fh is not None:
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
            if progress:
                progress(len(records), pairs)
    finally:
        if fh is not None:
            fh.close()
    result = tally([records[p] for p in range(pairs)])
    result.update(a=str(a), b=str(b), round=round_no)
    return result


def depth_increment_protocol(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pairs: int, *,
                             max_horizon: int = 6, max_rounds: int = 40, out=None, resume: bool = False,
                             progress=None) -> list[dict]:
    """Korf & Chickering's protocol: both start at horizon 1; after each
    tournament the player with fewer total node generations gains a ply.

    Stops once either horizon would exceed ``max_horizon`` or after
    ``max_rounds`` tournaments. Returns one summary per tournament (with
    both horizons and which player was incremented).
    """
    a = replace(a, horizon=1)
    b = replace(b, horizon=1)
    rounds = []
    for r in range(max_rounds):
        res = run_tournament(a, b, config, pairs, out=out, resume=resume, round_no=r,
                             progress=(lambda done, total, r=r: progress(r, done, total)) if progress else None)
        res["horizon_a"], res["horizon_b"] = a.horizon, b.horizon
        inc_a = res["nodes_a"] < res["nodes_b"] or (res["nodes_a"] == res["nodes_b"] and a.horizon <= b.horizon)
        res["incremented"] = "a" if inc_a else "b"
        rounds.append(res)
        if inc_a:
            a = replace(a, horizon=a.horizon + 1)
        else:
            b = replace(b, horizon=b.horizon + 1)
        if max(a.horizon, b.horizon) > max_horizon or max(a.horizon, b.horizon) > config.depth:
            break
    return rounds


def more_less_points(rounds: list[dict]) -> list[dict]:
    """Per horizon of player b: the MORE and LESS tournaments of seed 001.

    MORE: the tournament at that horizon where player a generated more
    nodes than b (after which b gained a ply); LESS: the tournament just
    before it at the same b horizon (a one ply shallower), if any.
    """
    points = []
    for h, rs in grouped(rounds, "horizon_b"):
        more = next((r for r in rs if r["nodes_a"] > r["nodes_b"]), None)
        less = None
        if more is not None:
            i = rs.index(more)
            less = rs[i - 1] if i > 0 else None
        points.append({
            "horizon_b": h,
            "more": None if more is None else {k: more[k] for k in ("horizon_a", "a_win_rate", "a_score",
                                                                     "nodes_a", "nodes_b")},
            "less": None if less is None else {k: less[k] for k in ("horizon_a", "a_win_rate", "a_score",
                                                                     "nodes_a", "nodes_b")},
        })
    return points


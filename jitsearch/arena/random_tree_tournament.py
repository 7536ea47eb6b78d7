"""Tournaments of games on incremental random trees (Zhang, "Forward Estimation for Game-Tree
Search", section 5; Korf & Chickering).

The game itself (a walk down a fresh incremental random tree, each player
searching to its own horizon with alpha-beta or forward estimation) is the
kernel :func:`jitsearch.search.forward_estimation.play_game`; this module holds
the players (:class:`PlayerSpec`), the trees (:class:`GameConfig`) and the
tournaments played with them.

Every game is played twice on the same tree with the players swapping MAX
and MIN. The pair's winner is the player who played MAX in the game with
the larger outcome; equal outcomes tie the pair. A tournament is N pairs.
In the depth-increment protocol both players start at horizon 1 and, after
each tournament, the one that generated fewer nodes in total gets one more
ply of horizon.

Records (one JSON line per pair, see :mod:`jitsearch.arena.records`) are
appended, flushed and synced as pairs finish, so an interrupted tournament
continues with ``resume=True`` and ends with the same totals as an
uninterrupted one. A resume file is checked before any game is played:
every line must be a record of this tournament (same players, trees and
protocol) that agrees with itself, else one ``ValueError`` names the file
(and ``file:line`` for a bad record). Ctrl-C (``KeyboardInterrupt``) stops a
tournament between pairs and returns the totals of the pairs finished, with
``"interrupted": True``.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from .._io import grouped
from ..search.forward_estimation import BOUNDS_FIXED, BOUNDS_ONLINE, play_game
from ..trees.incremental import DEFAULT_EDGE_RANGE, IncrementalTree
from .stats import WDL, summary
from .records import (
    MAX_PAIRS,
    BadRecord,
    ForeignRecord,
    RecordSink,
    check_count,
    check_out_path,
    check_records,
    dict_differences,
    get_field,
    is_int,
    read_record_file,
    seal,
    verify_check,
    wilson,
)

#: Most tournaments (rounds) of the depth-increment protocol.
MAX_ROUNDS = 1000
#: A player whose move would search more than about this many nodes is refused.
MAX_NODES_PER_MOVE = 1e10


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
        if not isinstance(text, str):
            raise ValueError(f"a player spec is a string such as 'alphabeta:depth=3', got {text!r}")
        kind, _, rest = text.partition(":")
        kind = kind.strip()
        if kind not in ("alphabeta", "fe"):
            raise ValueError(f"player must be alphabeta or fe, got {kind!r} in {text!r}")
        fields = {}
        for item in filter(None, (x.strip() for x in rest.split(","))):
            name, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"player option {item!r} must look like name=value in {text!r}")
            name = name.strip()
            if name in fields:
                raise ValueError(f"player option {name!r} is given twice in {text!r}")
            fields[name] = value.strip()
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
        if self.kind not in ("alphabeta", "fe"):
            raise ValueError(f"player must be alphabeta or fe, got {self.kind!r}")
        if not is_int(self.horizon) or not 1 <= self.horizon <= 64:
            raise ValueError(f"depth (horizon) must be an integer in 1..64, got {self.horizon!r}")
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)) or not 0 < self.delta <= 1:
            raise ValueError(f"delta must lie in (0, 1], got {self.delta!r}")
        if not isinstance(self.bounds, str):
            raise ValueError(f"bounds must be exact, online or L/U, got {self.bounds!r}")
        if self.bounds not in ("exact", "online"):
            parts = self.bounds.split("/")
            try:
                lo, hi = (float(x) for x in parts) if len(parts) == 2 else (math.nan, math.nan)
            except ValueError:
                lo = hi = math.nan
            if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
                raise ValueError(f"bounds must be exact, online or L/U with finite numbers L <= U, "
                                 f"got {self.bounds!r}")

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
    """The random trees games are played on (checked when built)."""

    branching: int = 5
    random_branching: bool = True
    depth: int = 10
    edge_lo: int = DEFAULT_EDGE_RANGE[0]
    edge_hi: int = DEFAULT_EDGE_RANGE[1]
    seed: int = 0

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        if not is_int(self.branching) or self.branching < 1:
            raise ValueError(f"branching must be an integer >= 1, got {self.branching!r}")
        if not isinstance(self.random_branching, (bool, np.bool_)):
            raise ValueError(f"random_branching must be True or False, got {self.random_branching!r}")
        if not is_int(self.depth) or not 1 <= self.depth <= 64:
            raise ValueError(f"the game depth must be an integer in 1..64 (plies of a game), got {self.depth!r}")
        for name in ("edge_lo", "edge_hi"):
            if not is_int(getattr(self, name)):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if not is_int(self.seed) or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        self.tree(0)  # the tree's own limits (edge range, exact float costs)

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
    """Totals of pair records: wins, ties, rates (with a Wilson interval),
    nodes, and ``statistics`` (:func:`jitsearch.arena.stats.summary` of the
    pairs' W/D/L: Elo, nElo, LOS with 95% intervals)."""
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
        # a pair is one result here (who gets more as MAX over its two games): W/D/L over pairs
        "statistics": summary(WDL(a, ties, b)),
    }


def _config_id(a: PlayerSpec, b: PlayerSpec, config: GameConfig, round_no: int | None) -> str:
    text = json.dumps([str(a), str(b), config.__dict__, round_no], sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


# -- tournaments ---------------------------------------------------------------------------

class _PairRecords:
    """Checks the records of a random-tree game file against one tournament
    (``round_no`` None) or one round of the depth-increment protocol."""

    def __init__(self, a: PlayerSpec, b: PlayerSpec, config: GameConfig, round_no: int | None):
        self.a, self.b, self.config, self.round_no = a, b, config, round_no
        self.game = asdict(config)

    def __call__(self, rec: dict):
        pair = get_field(rec, "pair", "int", low=0, high=MAX_PAIRS - 1)
        tree_seed = get_field(rec, "tree_seed", "int", low=0, high=2**64 - 1)
        a_text, b_text = get_field(rec, "a", "str"), get_field(rec, "b", "str")
        out_a = get_field(rec, "outcome_a_max", "number")
        out_b = get_field(rec, "outcome_b_max", "number")
        winner = get_field(rec, "winner", "str", choices=("a", "b", "tie"))
        get_field(rec, "nodes_a", "int", low=0)
        get_field(rec, "nodes_b", "int", low=0)
        cid = get_field(rec, "config", "str")
        round_no = rec.get("round")
        if round_no is not None:
            round_no = get_field(rec, "round", "int", low=0, high=MAX_ROUNDS - 1)
        if "game" in rec:
            get_field(rec, "game", "dict")
        if "check" in rec:
            get_field(rec, "check", "str")
        verify_check(rec)
        try:
            pa, pb = PlayerSpec.parse(a_text), PlayerSpec.parse(b_text)
        except ValueError as exc:
            raise BadRecord(f"bad player: {exc}") from None
        if (str(pa), str(pb)) != (a_text, b_text):
            raise BadRecord(f"players {a_text!r} / {b_text!r} are not written in canonical form")
        # -- is it this tournament's?
        if self.round_no is None:
            if round_no is not None:
                raise ForeignRecord(f"round {round_no} of a depth-increment protocol, this run is one tournament")
            if (a_text, b_text) != (str(self.a), str(self.b)):
                raise ForeignRecord(f"players {a_text} vs {b_text} in the file, {self.a} vs {self.b} here")
        else:
            if round_no is None:
                raise ForeignRecord("a single tournament's games, this run is the depth-increment protocol")
            if (replace(pa, horizon=1), replace(pb, horizon=1)) != (replace(self.a, horizon=1),
                                                                     replace(self.b, horizon=1)):
                raise ForeignRecord(f"players {a_text} vs {b_text} in the file, {self.a} vs {self.b} here "
                                    f"(horizons aside)")
        if "game" in rec and rec["game"] != self.game:
            raise ForeignRecord("tree settings differ: " + dict_differences(rec["game"], self.game))
        if tree_seed != pair_seed(self.config.seed, pair):
            if "game" in rec:
                raise BadRecord(f"tree_seed does not belong to pair {pair} of seed {self.config.seed}")
            raise ForeignRecord(f"its trees come from another seed (this run: seed {self.config.seed})")
        if cid != _config_id(pa, pb, self.config, round_no):
            if "game" in rec:
                raise BadRecord("its config id does not agree with its players, trees and round")
            raise ForeignRecord("its trees differ (branching, depth or edge costs): its config id does not "
                                "match this run's settings")
        # -- does it agree with itself?
        if round_no is not None and pa.horizon + pb.horizon != round_no + 2:
            raise BadRecord(f"horizons {pa.horizon} and {pb.horizon} cannot be those of round {round_no} "
                            f"(they sum to round + 2)")
        if round_no == self.round_no and (a_text, b_text) != (str(self.a), str(self.b)):
            raise BadRecord(f"round {round_no} was played as {a_text} vs {b_text} but this run's round "
                            f"{round_no} is {self.a} vs {self.b}: the file's earlier rounds disagree with it")
        if winner != pair_winner(out_a, out_b):
            raise BadRecord(f"winner {winner!r} does not agree with the outcomes {out_a:g} (A as MAX) and "
                            f"{out_b:g} (B as MAX)")
        return (round_no, pair)


def _pair_key_text(key) -> str:
    round_no, pair = key
    return f"(pair {pair})" if round_no is None else f"(round {round_no}, pair {pair})"


def _check_work(spec: PlayerSpec, config: GameConfig, horizon: int | None = None) -> None:
    h = min(spec.horizon if horizon is None else horizon, config.depth)
    nodes = float(config.branching) ** h
    if nodes > MAX_NODES_PER_MOVE:
        raise ValueError(f"{spec.kind} at depth {h} on trees of branching {config.branching} searches up to about "
                         f"{config.branching}**{h} = {nodes:.1e} nodes a move (limit {MAX_NODES_PER_MOVE:.0e}): "
                         f"use a smaller depth or branching")


def run_tournament(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pairs: int, *, out=None,
                   resume: bool = False, round_no: int | None = None, progress=None) -> dict:
    """Play ``pairs`` pairs; append each record to ``out`` (JSONL) as it finishes.

    With ``resume``, pairs already in ``out`` for the same players, trees and
    round are not replayed. Every record already in ``out`` is checked first
    (see the module docstring); without ``resume`` a file that already holds
    this tournament's games is refused. Ctrl-C stops between pairs.

    Returns :func:`tally` of the finished pairs plus the players, ``round``,
    ``interrupted`` (and ``pairs_planned`` when interrupted, ``notes`` when
    the file needed repair).
    """
    check_count("pairs", pairs, MAX_PAIRS)
    if round_no is not None:
        check_count("round_no", round_no, MAX_ROUNDS - 1, low=0)
    for spec in (a, b):
        if not isinstance(spec, PlayerSpec):
            raise ValueError(f"players must be PlayerSpec objects (PlayerSpec.parse('alphabeta:depth=2')), "
                             f"got {spec!r}")
        spec.check()
        _check_work(spec, config)
    if not isinstance(config, GameConfig):
        raise ValueError(f"config must be a GameConfig, got {config!r}")
    cid = _config_id(a, b, config, round_no)
    done: dict[int, dict] = {}
    notes: list[str] = []
    sink = None
    if out is not None:
        path = check_out_path(out)
        rf = read_record_file(path)
        checked = check_records(rf, _PairRecords(a, b, config, round_no), _pair_key_text)
        mine = [(key[1], rec) for key, rec in checked if key[0] == round_no]
        if mine and not resume:
            raise ValueError(f"{path} already holds this tournament's games: pass --resume or another --out")
        held = max((p for p, _ in mine), default=-1) + 1
        if held > pairs:  # leaving finished pairs out of the result without a word would misreport it
            raise ValueError(f"{path} holds {held} pairs, more than the {pairs} asked for: ask for {held} pairs "
                             f"or more")
        done = dict(mine)
        notes = rf.notes
        sink = RecordSink(rf)
    records = dict(done)
    interrupted = False
    try:
        for p in range(pairs):
            if p in records:
                continue
            rec = play_pair(a, b, config, p)
            rec["config"] = cid
            if round_no is not None:
                rec["round"] = round_no
            rec["game"] = asdict(config)
            seal(rec)
            records[p] = rec
            if sink is not None:
                sink.write(rec)
            if progress:
                progress(len(records), pairs)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if sink is not None:
            sink.close()
    result = tally([records[p] for p in range(pairs) if p in records])
    result.update(a=str(a), b=str(b), round=round_no, interrupted=interrupted)
    if interrupted:
        result["pairs_planned"] = pairs
    if notes:
        result["notes"] = list(notes)
    return result


def depth_increment_protocol(a: PlayerSpec, b: PlayerSpec, config: GameConfig, pairs: int, *,
                             max_horizon: int = 6, max_rounds: int = 40, out=None, resume: bool = False,
                             progress=None) -> list[dict]:
    """Korf & Chickering's protocol: both start at horizon 1; after each
    tournament the player with fewer total node generations gains a ply.

    Stops once either horizon would exceed ``max_horizon`` or after
    ``max_rounds`` tournaments. Returns one summary per tournament (with
    both horizons and which player was incremented). Ctrl-C stops it: the
    last summary then has ``"interrupted": True`` (its counts are the pairs
    finished) and ``"incremented": None``; every round's games are in
    ``out`` already, so ``resume=True`` continues.
    """
    check_count("max_horizon", max_horizon, 64)
    check_count("max_rounds", max_rounds, MAX_ROUNDS)
    check_count("pairs", pairs, MAX_PAIRS)
    a = replace(a, horizon=1)
    b = replace(b, horizon=1)
    for spec in (a, b):
        spec.check()
        _check_work(spec, config, horizon=max_horizon)
    rounds: list[dict] = []
    try:
        for r in range(max_rounds):
            res = run_tournament(a, b, config, pairs, out=out, resume=resume, round_no=r,
                                 progress=(lambda done, total, r=r: progress(r, done, total)) if progress else None)
            res["horizon_a"], res["horizon_b"] = a.horizon, b.horizon
            rounds.append(res)
            if res["interrupted"]:
                res["incremented"] = None
                break
            inc_a = res["nodes_a"] < res["nodes_b"] or (res["nodes_a"] == res["nodes_b"]
                                                        and a.horizon <= b.horizon)
            res["incremented"] = "a" if inc_a else "b"
            if inc_a:
                a = replace(a, horizon=a.horizon + 1)
            else:
                b = replace(b, horizon=b.horizon + 1)
            if max(a.horizon, b.horizon) > max_horizon or max(a.horizon, b.horizon) > config.depth:
                break
    except KeyboardInterrupt:  # between two rounds (a round catches its own)
        if not rounds:
            raise
        rounds[-1]["interrupted"] = True
    return rounds


def more_less_points(rounds: list[dict]) -> list[dict]:
    """Per horizon of player b: the MORE and LESS tournaments of Zhang's forward-estimation paper.

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

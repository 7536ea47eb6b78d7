"""Kalah tournaments between any two agents (specs of :mod:`jitsearch.arena.agents`).

Games come in pairs with the seats swapped (A moves first in game 0 of a
pair, B in game 1), both games of a pair starting after the same seeded
random opening plies (``openings``, for diversity). A game stops at the end
or at ``max_plies`` (default 300, as Siljander's Kalah tournaments); a capped game is scored by
the store difference at that point. Every agent's random stream is derived
from (tournament seed, pair, seat, side), so a tournament replays exactly.

Each finished game is appended to a JSONL file as it ends (flushed and
synced); ``resume=True`` skips the games already there, so an interrupted
tournament loses nothing. Before any game is played every line of the file
is checked: a file of another tournament (players, board, rules, ply cap,
openings or seed) is refused with one line naming it and what differs; a
line that is not a valid record of this tournament is refused with its
``file:line``. A record's moves are replayed from its opening, so its final
board, margin, length, cap flag and result must agree with them; records
carry a check value (blake2b of their other fields) so any edit is caught.
Records of files written before check values existed are accepted when
they pass the replay. Pairs run on the arena's executor (this process, or a
Dask cluster: :mod:`jitsearch.arena.matches`); Ctrl-C stops the
tournament at once and returns the summary of the games finished so far,
with ``"interrupted": True``. Pairs may start from an opening suite
(``KalahMatch.suite``, :mod:`jitsearch.arena.openings`).

An external engine (``cmd:``, :mod:`jitsearch.arena.external_engine`) that
times out, moves illegally or crashes loses the game: its record has
``termination`` ("time forfeit", "illegal move" or "crash") and ``detail``,
``final_board`` is the position it failed to move in (it is to move there),
``capped`` is false and ``a_result`` is the forfeiter's loss; the check
replays it like any other. :func:`summarize` counts them in
``terminations`` (by side), present only when a game ended so.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..games import get as get_game
from ..rng import mix64_py
from .agents import inform_move, parse_agent, play_game, start_agents
from .external_engine import TERMINATIONS, ExternalAgent, Forfeit, bind_engines
from .records import (MAX_PAIRS, BadRecord, ForeignRecord, config_id, dict_differences, get_field, is_int,
                      read_record_file, verify_check, wilson)
from .stats import elo_from_score

#: Most plies a game may be capped at.
MAX_PLIES = 1_000_000
#: Fewer games than this give no Elo estimate (``elo_note`` says why).
MIN_ELO_GAMES = 10


@dataclass(frozen=True)
class KalahMatch:
    #: The game, as a record's ``match`` settings and a result name it (not a field: config ids keep).
    game: ClassVar[str] = "kalah"
    houses: int = 6
    seeds: int = 4
    empty_capture: bool = False
    max_plies: int = 300
    openings: int = 0
    seed: int = 0
    #: An opening suite (position texts, :mod:`jitsearch.arena.openings`): pair p starts from
    #: ``suite[p % len(suite)]`` (then ``openings`` random plies, usually 0); empty: the start position.
    suite: tuple = ()

    @classmethod
    def of(cls, variant: dict, *, openings: int = 0, seed: int = 0, max_plies: int | None = None,
           suite=()) -> "KalahMatch":
        """The match of Kalah's ``variant`` (houses, seeds, empty_capture); ``max_plies`` None: 300."""
        return cls(**variant, max_plies=300 if max_plies is None else max_plies, openings=openings, seed=seed,
                   suite=tuple(suite))

    @property
    def rules(self):
        """The game (the registry's Kalah)."""
        return get_game(self.game)

    def start(self, text: str | None = None):
        """The start of this match's board, or the position ``text`` under its rules."""
        if text is None:
            return self.rules.initial(self.houses, self.seeds, self.empty_capture)
        return self.rules.from_text(text, empty_capture=self.empty_capture)

    def check(self):
        self.rules.initial(self.houses, self.seeds)  # validates the board size
        if not isinstance(self.empty_capture, (bool, np.bool_)):
            raise ValueError(f"empty_capture must be True or False, got {self.empty_capture!r}")
        if not is_int(self.max_plies) or not 1 <= self.max_plies <= MAX_PLIES:
            raise ValueError(f"max_plies must be an integer in 1..{MAX_PLIES:,}, got {self.max_plies!r}")
        if not is_int(self.openings) or self.openings < 0:
            raise ValueError(f"openings must be an integer >= 0, got {self.openings!r}")
        if self.openings >= self.max_plies:
            raise ValueError(f"openings ({self.openings}) must be below max_plies ({self.max_plies}): the "
                             f"opening plies count toward the cap and would leave nothing to play")
        if not is_int(self.seed) or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        if not isinstance(self.suite, tuple) or not all(isinstance(x, str) for x in self.suite):
            raise ValueError("suite must be a tuple of position texts")
        total = 2 * self.houses * self.seeds
        for i, text in enumerate(self.suite):
            s = self.start(text)
            if s.houses != self.houses or int(sum(int(x) for x in s.board)) != total or s.is_over:
                raise ValueError(f"opening {i + 1} ({text}) is not a live Kalah({self.houses},{self.seeds}) position")

    def describe(self) -> dict:
        """The settings a match result lists (the suite by its length)."""
        return {"houses": self.houses, "seeds": self.seeds, "empty_capture": self.empty_capture,
                "max_plies": self.max_plies, "openings": self.openings, "suite": len(self.suite), "seed": self.seed}

    def check_openings(self, pairs: int) -> None:
        """Refuse openings that end (or could end) a game: every pair's random
        opening must leave a live game."""
        if self.openings == 0:
            return
        for pair in range(pairs):
            moves, state = _opening_state(self, pair)
            if state.is_over:
                raise ValueError(f"{self.openings} random opening plies end the game in pair {pair} (after "
                                 f"{len(moves)} plies): use fewer opening plies")


def start_state(match: KalahMatch, pair: int):
    """Where ``pair`` starts before its random opening plies: its suite
    position, or the initial position."""
    return match.start(match.suite[pair % len(match.suite)] if match.suite else None)


def _opening_state(match: KalahMatch, pair: int) -> tuple:
    rng = random.Random(mix64_py(match.seed * 7919 + pair))
    s = start_state(match, pair)
    moves = []
    for _ in range(match.openings):
        if s.is_over:
            break
        mv = rng.choice(s.legal_moves())
        moves.append(mv)
        s = s.play(mv)
    return moves, s


def opening(match: KalahMatch, pair: int) -> list[int]:
    """The seeded random opening plies of ``pair`` (shared by both seats)."""
    return _opening_state(match, pair)[0]


@functools.lru_cache(maxsize=64)
def agent_template(spec: str):
    """The agent of ``spec``, parsed and checked once per process; each game
    plays with a copy of its own (:meth:`~jitsearch.arena.agents.Agent.with_seed`)."""
    return parse_agent(spec)


def check_agents(specs, match: KalahMatch, engine_settings=None) -> None:
    """Refuse, before any game, a spec or a board an agent cannot play (``ValueError`` naming the spec):
    Kalah's ``perfect`` on a board it cannot solve in seconds, an OpenSpiel bot of another size; a ``cmd:``
    engine is started and asked for the board; the engine loads its endgame database."""
    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"an agent is a spec string such as 'alphabeta:depth=3', got {spec!r}")
        if agent_template(spec).kind == "human":  # spec errors before any game; parsed once, games copy it
            raise ValueError("a tournament needs engines, not human players")
    for spec in specs:
        agent = agent_template(spec)
        extra = {"settings": engine_settings} if isinstance(agent, ExternalAgent) else {}
        try:
            agent.check_match(match.houses, match.seeds, match.empty_capture, match.suite, **extra)
        except ValueError as exc:
            raise ValueError(f"{spec}: {exc}") from None


def _setup(a: str, b: str, match: KalahMatch, pair: int, seat: int, engine_settings=None):
    """(opening plies, start state, [player 0's agent, player 1's agent]) of one game; ``engine_settings``: the
    :class:`~jitsearch.arena.external_engine.EngineSettings` of its ``cmd:`` agents (None: the defaults)."""
    start, s = _opening_state(match, pair)
    base = mix64_py((match.seed * 1_000_003 + pair) * 4 + seat * 2)
    agent_a = agent_template(a).with_seed(base)
    agent_b = agent_template(b).with_seed(base + 1)
    bind_engines([agent_a, agent_b], engine_settings)
    start_agents([agent_a, agent_b], start)
    return start, s, ([agent_a, agent_b] if seat == 0 else [agent_b, agent_a])


def _exact_entry(agent, a_agent, ply: int):
    """``[ply, side, margin]`` when ``agent``'s last move was proven (its ``last`` says ``exact`` with the
    mover's final ``margin``: the engine's exact mode, or a ``cmd:`` engine's ``info ... exact 1 margin M``);
    else None. ``side`` is ``"a"`` or ``"b"``."""
    last = getattr(agent, "last", None)
    if not isinstance(last, dict) or last.get("exact") is not True or not isinstance(last.get("margin"), int):
        return None
    if last.get("book"):  # a book move's value is perfect play's, not a proof the engine made and can follow
        return None
    return [ply, "a" if agent is a_agent else "b", int(last["margin"])]


def _record(pair, seat, start, moves, state, match: KalahMatch, forfeit: Forfeit | None = None,
            exact_moves=None) -> dict:
    """A game's record; with ``forfeit``, the player to move in ``state`` lost it by ``forfeit.termination``
    (``capped`` false, ``a_result`` from who forfeited, the margin that of ``state``). ``exact_moves``: the
    moves an agent reported proven, ``[ply, side, margin]`` (ply: index into ``moves``; margin: the mover's
    proven final margin), kept as ``"exact_moves"`` when there are any."""
    a_player = 0 if seat == 0 else 1
    result = _a_result(state.margin, a_player)
    if forfeit is not None:
        result = "loss" if state.player == a_player else "win"
    rec = {"pair": pair, "seat": seat, "a_player": a_player, "opening": start, "moves": moves,
           "plies": len(start) + len(moves), "margin": state.margin, "final_board": [int(x) for x in state.board],
           "capped": not state.is_over and forfeit is None, "a_result": result}
    if forfeit is not None:
        rec["termination"] = forfeit.termination
        rec["detail"] = forfeit.detail
    if exact_moves:
        rec["exact_moves"] = [list(e) for e in exact_moves]
    if match.suite:
        rec["start"] = match.suite[pair % len(match.suite)]
    return rec


def play_one(a: str, b: str, match: KalahMatch, pair: int, seat: int, engine_settings=None) -> dict:
    """Game ``seat`` (0: A is player 0, 1: B is) of ``pair``; returns its record. An external engine
    that forfeits (:class:`~jitsearch.arena.external_engine.Forfeit`) loses the game, recorded with its
    ``termination``; ``engine_settings``: theirs."""
    start, s, agents = _setup(a, b, match, pair, seat, engine_settings)
    moves = []
    exact_moves = []
    a_agent = agents[seat]  # A is player `seat`

    def on_move(before, pit, after, agent):
        entry = _exact_entry(agent, a_agent, len(moves))
        if entry is not None:
            exact_moves.append(entry)
        moves.append(pit)

    try:
        g = play_game(s, agents, max_plies=max(0, match.max_plies - len(start)), on_move=on_move)
    except Forfeit as forfeit:
        final = s
        for mv in moves:
            final = final.play(mv)
        return _record(pair, seat, start, moves, final, match, forfeit, exact_moves)
    final = s
    for mv in g["moves"]:
        final = final.play(mv)
    return _record(pair, seat, start, g["moves"], final, match, exact_moves=exact_moves)


def play_lockstep(a: str, b: str, match: KalahMatch, games, engine_settings=None):
    """Play the games ``games`` ((pair, seat) pairs) side by side, yielding
    each record as its game ends.

    At each step, every game whose player to move is a lockstep agent (a
    multi-tree MCTS agent with an iteration budget, see
    :attr:`jitsearch.arena.agents.Agent.lockstep`) is searched in one kernel
    launch per agent spec (:func:`jitsearch.mcts.search.mcts_search_many`);
    the other agents move one game at a time. Every search gets the seed its
    agent would use in a game played alone, so each record equals
    :func:`play_one`'s."""
    from ..mcts.search import mcts_search_many

    live = []
    for pair, seat in games:
        start, s, agents = _setup(a, b, match, pair, seat, engine_settings)
        live.append({"pair": pair, "seat": seat, "start": start, "state": s, "agents": agents, "moves": [],
                     "cap": max(0, match.max_plies - len(start)), "exact": []})
    while live:
        groups: dict[str, list[dict]] = {}
        for g in live:
            agent = g["agents"][g["state"].player]
            if agent.lockstep:
                groups.setdefault(str(agent), []).append(g)
            else:
                try:
                    g["pit"] = agent(g["state"])
                except Forfeit as forfeit:
                    g["forfeit"] = forfeit
        for members in groups.values():
            agents = [g["agents"][g["state"].player] for g in members]
            seeds = [agent.next_search_seed() for agent in agents]
            results = mcts_search_many([g["state"] for g in members], seeds, **agents[0].options)
            for g, agent, r in zip(members, agents, results):
                agent.last = r
                g["pit"] = r["move"]
        still = []
        for g in live:
            if "forfeit" in g:
                yield _record(g["pair"], g["seat"], g["start"], g["moves"], g["state"], match, g["forfeit"],
                              g["exact"])
                continue
            pit = g.pop("pit")
            if pit not in g["state"].legal_moves():
                raise RuntimeError(f"agent chose an illegal move {pit} in {g['state'].to_text()}")
            entry = _exact_entry(g["agents"][g["state"].player], g["agents"][g["seat"]], len(g["moves"]))
            if entry is not None:
                g["exact"].append(entry)
            g["state"] = g["state"].play(pit)
            g["moves"].append(pit)
            inform_move(g["agents"], pit)
            if g["state"].is_over or len(g["moves"]) >= g["cap"]:
                yield _record(g["pair"], g["seat"], g["start"], g["moves"], g["state"], match, exact_moves=g["exact"])
            else:
                still.append(g)
        live = still


def _a_result(margin: int, a_player: int) -> str:
    mine = margin if a_player == 0 else -margin
    return "win" if mine > 0 else ("loss" if mine < 0 else "draw")


def read_records(path) -> list[dict]:
    """Every JSON object line of ``path``, unchecked (for inspection; the
    tournament itself checks each record, see :func:`run_kalah_tournament`)."""
    rf = read_record_file(Path(path))
    return [rec for _, rec in rf.entries if isinstance(rec, dict)]


class GameRecords:
    """Checks the records of a Kalah game file against one tournament."""

    def __init__(self, a: str, b: str, match: KalahMatch):
        self.a, self.b, self.match = a, b, match
        self.settings = json.loads(json.dumps(asdict(match)))  # as a record holds it (tuples as lists)
        self.cid = config_id(a, b, match)
        self._openings: dict[int, list[int]] = {}

    def __call__(self, rec: dict):
        m = self.match
        if rec.get("game") not in (None, "kalah"):
            name = str(rec["game"]).capitalize()
            raise ForeignRecord(f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} game record in a Kalah match's file")
        pair = get_field(rec, "pair", "int", low=0, high=MAX_PAIRS - 1)
        seat = get_field(rec, "seat", "int", choices=(0, 1))
        a_player = get_field(rec, "a_player", "int", choices=(0, 1))
        a, b = get_field(rec, "a", "str"), get_field(rec, "b", "str")
        cid = get_field(rec, "config", "str")
        start = get_field(rec, "opening", "ints")
        moves = get_field(rec, "moves", "ints")
        plies = get_field(rec, "plies", "int", low=0)
        margin = get_field(rec, "margin", "int")
        final_board = get_field(rec, "final_board", "ints")
        capped = get_field(rec, "capped", "bool")
        a_result = get_field(rec, "a_result", "str", choices=("win", "draw", "loss"))
        termination = get_field(rec, "termination", "str", choices=TERMINATIONS) if "termination" in rec else None
        if "detail" in rec:
            get_field(rec, "detail", "str")
        exact_moves = rec.get("exact_moves", [])
        if not isinstance(exact_moves, list) or not all(
                isinstance(e, list) and len(e) == 3 and is_int(e[0]) and 0 <= e[0] < len(moves)
                and e[1] in ("a", "b") and is_int(e[2]) for e in exact_moves):
            raise BadRecord("exact_moves must be a list of [ply, 'a' or 'b', margin], ply an index into moves")
        if "match" in rec:
            get_field(rec, "match", "dict")
        if "check" in rec:
            get_field(rec, "check", "str")
        verify_check(rec)
        # -- is it this tournament's?
        if (a, b) != (self.a, self.b):
            raise ForeignRecord(f"players {a!r} vs {b!r} in the file, {self.a!r} vs {self.b!r} here")
        if "match" in rec:
            if rec["match"] != self.settings:
                raise ForeignRecord("settings differ: " + dict_differences(rec["match"], self.settings))
            if cid != self.cid:
                raise BadRecord("its config id does not agree with its players and settings")
        elif cid != self.cid:
            raise ForeignRecord(self._legacy_difference(final_board))
        # -- does it agree with itself?
        if a_player != seat:
            raise BadRecord(f"a_player {a_player} does not agree with seat {seat} (A is player 0 in seat 0)")
        if pair not in self._openings:
            self._openings[pair] = opening(m, pair)
        if start != self._openings[pair]:
            raise BadRecord(f"opening {start} is not pair {pair}'s seeded opening {self._openings[pair]}")
        if m.suite and rec.get("start") != m.suite[pair % len(m.suite)]:
            raise BadRecord(f"start {rec.get('start')!r} is not pair {pair}'s suite opening "
                            f"{m.suite[pair % len(m.suite)]!r}")
        final = self._replay(pair, start + moves)
        board, over, player = final.board, final.is_over, final.player
        if plies != len(start) + len(moves):
            raise BadRecord(f"plies {plies} does not agree with {len(start)} opening plies and {len(moves)} moves")
        if plies > m.max_plies:
            raise BadRecord(f"plies {plies} exceeds the ply cap {m.max_plies}")
        if termination is not None:  # lost by the engine to move in the last position
            if over or capped or plies >= m.max_plies:
                raise BadRecord(f"termination {termination!r} in a game that was over or capped")
        elif capped == over or (capped and plies != m.max_plies):
            raise BadRecord(f"capped {json.dumps(capped)} does not agree with the game ("
                            f"{'over' if over else 'not over'} after {plies} plies, cap {m.max_plies})")
        if final_board != [int(x) for x in board]:
            raise BadRecord(f"final_board {final_board} is not the board its moves lead to "
                            f"{[int(x) for x in board]}")
        real_margin = int(board[m.houses + 1] - board[0])
        if margin != real_margin:
            raise BadRecord(f"margin {margin} does not agree with the final board (margin {real_margin})")
        if termination is not None:
            expected = "loss" if player == a_player else "win"
            if a_result != expected:
                raise BadRecord(f"a_result {a_result!r} does not agree with a {termination} of player {player} "
                                f"(A is player {a_player})")
        elif a_result != _a_result(margin, a_player):
            raise BadRecord(f"a_result {a_result!r} does not agree with margin {margin} and A as player {a_player}")
        return (pair, seat)

    def _replay(self, pair: int, plies: list[int]):
        """The position ``plies`` lead to from ``pair``'s start; ``BadRecord`` at a ply that is not legal."""
        s = start_state(self.match, pair)
        for i, pit in enumerate(plies):
            if s.is_over:
                raise BadRecord(f"ply {i + 1} (pit {pit}) comes after the end of the game")
            if pit not in s.legal_moves():
                raise BadRecord(f"ply {i + 1} (pit {pit}) is not a legal move of player {s.player}")
            s = s.play(pit)
        return s

    def _legacy_difference(self, final_board: list[int]) -> str:
        m = self.match
        houses = len(final_board) // 2 - 1
        if len(final_board) != 2 * m.houses + 2:
            return f"boards of {houses} houses a side in the file, {m.houses} here"
        if sum(final_board) != 2 * m.houses * m.seeds:
            return f"{sum(final_board)} seeds on its boards, {2 * m.houses * m.seeds} here"
        return ("its settings (rules, ply cap, openings or seed) differ: its config id does not match this "
                f"run's {self.cid}")


def game_key_text(key) -> str:
    return f"(pair {key[0]}, seat {key[1]})"


def exact_summary(records: list[dict]) -> dict:
    """Per side (``"a"``, ``"b"``): ``moves`` reported proven (``exact_moves``) and ``thrown``, those of a
    finished game (not capped, no forfeit) whose final margin, from the side's view, is below the margin it
    had proven: a proven result thrown away (perfect play never throws one)."""
    out = {side: {"moves": 0, "thrown": 0} for side in ("a", "b")}
    for r in records:
        finished = not r.get("capped") and not r.get("termination")
        for _, side, margin in r.get("exact_moves", ()):
            out[side]["moves"] += 1
            a_is_0 = r["a_player"] == 0
            final = r["margin"] if (side == "a") == a_is_0 else -r["margin"]
            if finished and final < margin:
                out[side]["thrown"] += 1
    return out


def summarize(records: list[dict]) -> dict:
    """Win/draw/loss counts and rates of A (95% Wilson intervals), A's score
    (wins + draws/2 over games) with a 95% Wilson interval (draws counted as
    half a win, which can only widen it), the Elo difference
    400·log10(s/(1-s)) with the interval mapped from the score's, and the
    mean game length in plies.

    With fewer than ``MIN_ELO_GAMES`` games, or a score of 0 or 1, there is
    no finite Elo estimate: ``elo_diff`` is None and ``elo_note`` says why;
    a 0 or 1 score over enough games keeps the finite end of ``elo_ci95``
    (a one-sided bound), the other end None.
    """
    n = len(records)
    wins = sum(r["a_result"] == "win" for r in records)
    draws = sum(r["a_result"] == "draw" for r in records)
    losses = n - wins - draws
    out = {"games": n, "a_wins": wins, "draws": draws, "b_wins": losses}
    if any(r.get("exact_moves") for r in records):
        out["exact"] = exact_summary(records)
    forfeits = [r for r in records if r.get("termination")]
    if forfeits:  # games an external engine lost by a time forfeit, an illegal move or a crash
        out["terminations"] = {t: {"a": sum(r["termination"] == t and r["a_result"] == "loss" for r in forfeits),
                                   "b": sum(r["termination"] == t and r["a_result"] == "win" for r in forfeits)}
                               for t in TERMINATIONS if any(r["termination"] == t for r in forfeits)}
    if n == 0:
        out.update(a_score=None, a_score_ci95=[None, None], elo_diff=None, elo_ci95=[None, None],
                   elo_note="no games finished", mean_plies=None, capped=0, a_win_rate=None,
                   a_win_rate_ci95=[None, None], draw_rate=None, draw_rate_ci95=[None, None], b_win_rate=None,
                   b_win_rate_ci95=[None, None])
        return out
    score = (wins + 0.5 * draws) / n
    lo, hi = wilson(wins + 0.5 * draws, n)
    games = f"{n} game{'s' if n != 1 else ''}"
    if wins == n:
        outcome = "all won by A"
    elif losses == n:
        outcome = "all won by B"
    elif draws == n:
        outcome = "all drawn"
    else:
        outcome = f"A {wins}, draws {draws}, B {losses}"
    if n < MIN_ELO_GAMES:
        elo_diff, elo_ci, note = None, [None, None], f"sample too small for an Elo estimate ({games}, {outcome})"
    elif score == 1.0:
        elo_diff, elo_ci = None, [elo_from_score(lo), None]
        note = f"no finite Elo estimate ({games}, {outcome}); 95% interval: Elo A-B >= {elo_from_score(lo):+.0f}"
    elif score == 0.0:
        elo_diff, elo_ci = None, [None, elo_from_score(hi)]
        note = f"no finite Elo estimate ({games}, {outcome}); 95% interval: Elo A-B <= {elo_from_score(hi):+.0f}"
    else:
        elo_diff, elo_ci, note = elo_from_score(score), [elo_from_score(lo), elo_from_score(hi)], None
    out.update(
        a_score=score, a_score_ci95=[lo, hi], elo_diff=elo_diff, elo_ci95=elo_ci, elo_note=note,
        mean_plies=sum(r["plies"] for r in records) / n, capped=sum(r["capped"] for r in records),
        a_win_rate=wins / n, a_win_rate_ci95=list(wilson(wins, n)), draw_rate=draws / n,
        draw_rate_ci95=list(wilson(draws, n)), b_win_rate=losses / n, b_win_rate_ci95=list(wilson(losses, n)),
    )
    return out

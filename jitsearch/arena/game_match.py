"""Paired games of any game of the protocol (:mod:`jitsearch.games.protocol`): the match record
that carries the game and its variant, a game's record, and the replay check of a record file.

A match (:class:`GameMatch`) plays pairs of games from the same opening, A first in one game
(seat 0) and second in the other (seat 1). Pair ``p`` starts from the start position, or from
``suite[p % len(suite)]`` (position texts of the game), then ``openings`` seeded random plies
(redrawn, with the next draw of the same stream, while they end the game). A game stops at its
end or at ``max_plies`` plies from the start (0: no cap; a capped game is scored by the sign
of the margin there, as Kalah's ply cap). Everything else (the executor, SPRT, gauntlets and
round robins, ``resume``, Ctrl-C, the statistics) is :mod:`jitsearch.arena.matches`', the same
for every game (Kalah's files of the older record format are read by :mod:`.legacy_records`).
Every agent's random stream is derived from (match seed, pair, seat, side), so a match replays
exactly.

A record (:func:`play_one`) holds ``game`` (the game's name), ``pair``, ``seat`` (= ``a_seat`` =
``a_player``: the player A is), ``opening_moves`` (the opening's plies from the start or the suite
position, which ``start`` holds when there is a suite) and ``opening`` (the text of the position
they reach), ``moves`` (played from there), ``plies`` (both together), ``final`` (the text of the
last position), ``margin`` (player 0's), ``result`` (``p0``, ``p1`` or ``draw``: the margin's
sign), ``capped``, ``a_result`` and ``a_score`` (A's), the match's ``a``, ``b``, ``config``,
``match`` and a ``check`` value; ``exact_moves`` where an agent reported a move proven
(``[ply, side, margin]``: the index into ``moves``, ``"a"`` or ``"b"``, the mover's proven final
margin; Kalah's engine in exact mode, a ``cmd:`` engine's ``info ... exact 1 margin M``). An
external engine that times out, moves illegally or crashes loses the game: ``termination`` and
``detail``, ``final`` the position it failed to move in. :class:`GameRecords` replays every
record's moves before a match uses it; :func:`summarize` counts the records of a match.
"""

from __future__ import annotations

import functools
import inspect
import json
import random
from dataclasses import asdict, dataclass

from .._checks import check_int, is_int
from ..games import get as get_game
from ..rng import mix64_py
from .agents import Agent, inform_move, parse_agent, play_game
from .external_engine import TERMINATIONS, EngineSettings, Forfeit, bind_engines
from .records import (MAX_PAIRS, BadRecord, ForeignRecord, check_exact_moves, config_id, dict_differences, get_field,
                      legacy_game, result_of, verify_check, wilson)
from .stats import elo_from_score

#: Random opening plies a match may ask for.
MAX_OPENING_PLIES = 40
#: Most plies a game may be capped at.
MAX_PLIES = 1_000_000
#: Draws of a pair's opening stream before its random plies are declared to always end the game.
OPENING_TRIES = 1000
#: Fewer games than this give no Elo estimate (``elo_note`` says why).
MIN_ELO_GAMES = 10
_A_SCORE = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def variant_title(game, variant: dict) -> str:
    """The name of ``game``'s ``variant`` in result tables: the game's own title
    (:attr:`~jitsearch.games.protocol.ArenaHooks.title`, Kalah's ``Kalah(6,4) empty capture``), else its name
    and the options that differ from their defaults."""
    game = get_game(game)
    if game.arena is not None and game.arena.title is not None:
        return game.arena.title(variant)
    changed = {k: v for k, v in variant.items() if v != game.variant[k].default}
    return game.name + (f"({', '.join(f'{k}={v}' for k, v in changed.items())})" if changed else "")


@dataclass(frozen=True)
class GameMatch:
    """The settings of a match of any game (every field is part of its config id): ``game`` a registered
    name, ``variant`` the full variant as sorted ``(option, value)`` pairs, ``openings`` seeded random plies
    per pair, ``seed`` (openings and agents), ``max_plies`` (0: no cap) and ``suite`` (position texts)."""

    game: str
    variant: tuple = ()
    openings: int = 0
    seed: int = 0
    max_plies: int = 0
    suite: tuple = ()

    @classmethod
    def of(cls, game, variant: dict | None = None, **settings) -> "GameMatch":
        """The match of ``game`` (a name or a Game) and ``variant`` (defaults filled in), checked."""
        game = get_game(game)
        full = game.check_variant(**(variant or {}))
        return cls(game.name, tuple(sorted(full.items())), **settings).check()

    @property
    def rules(self):
        return get_game(self.game)

    @property
    def options(self) -> dict:
        return dict(self.variant)

    def check(self) -> "GameMatch":
        game = get_game(self.game)
        if not isinstance(self.variant, tuple):
            raise ValueError("variant must be a tuple of (option, value) pairs")
        game.initial(**game.check_variant(**self.options))  # the variant's own checks
        check_int("max_plies", self.max_plies, 0, MAX_PLIES)
        if self.max_plies and is_int(self.openings) and self.openings >= self.max_plies:
            raise ValueError(f"openings ({self.openings}) must be below max_plies ({self.max_plies}): the opening "
                             f"plies count toward the cap and would leave nothing to play")
        check_int("openings", self.openings, 0, MAX_OPENING_PLIES)
        if not is_int(self.seed) or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        if not isinstance(self.suite, tuple) or not all(isinstance(x, str) for x in self.suite):
            raise ValueError("suite must be a tuple of position texts")
        for i, text in enumerate(self.suite):
            if self.start_state(i).is_over:
                raise ValueError(f"opening {i + 1} ({text}) is a finished game")
        return self

    def describe(self) -> dict:
        """The settings a match result lists (the suite by its length)."""
        return {**self.options, "openings": self.openings, "seed": self.seed, "max_plies": self.max_plies,
                "suite": len(self.suite)}

    def start_state(self, pair: int):
        """Where ``pair`` starts before its random plies: its suite position, or the start position."""
        game = self.rules
        if self.suite:
            return game.from_text(self.suite[pair % len(self.suite)], **self.options)
        return game.initial(**self.options)

    def check_openings(self, pairs: int) -> None:
        """Every pair's opening leaves a live game (else one-line ``ValueError``)."""
        for pair in range(pairs):
            opening_line(self, pair)


@functools.lru_cache(maxsize=4096)
def _opening(match: GameMatch, pair: int):
    start = match.start_state(pair)
    rnd = random.Random(mix64_py(match.seed * 7919 + pair))
    for _ in range(OPENING_TRIES):
        s, moves = start, []
        for _ in range(match.openings):
            if s.is_over:
                break
            moves.append(rnd.choice(s.legal_moves()))
            s = s.play(moves[-1])
        if not s.is_over:
            return s, tuple(moves)
    raise ValueError(f"{match.openings} random opening plies end the game in pair {pair} whatever they draw: use "
                     f"fewer opening plies")


def opening_line(match: GameMatch, pair: int):
    """(the position pair ``pair``'s games start from, the opening plies that reach it)."""
    state, moves = _opening(match, pair)
    return state, list(moves)


def _result(margin: int) -> str:
    return "p0" if margin > 0 else ("p1" if margin < 0 else "draw")


def _exact_entry(agent, a_agent, ply: int):
    """``[ply, side, margin]`` when ``agent``'s last move was proven (its ``last`` says ``exact`` with the
    mover's final ``margin``: Kalah's engine in exact mode, or a ``cmd:`` engine's ``info ... exact 1 margin
    M``); else None. ``side`` is ``"a"`` or ``"b"``."""
    last = getattr(agent, "last", None)
    if not isinstance(last, dict) or last.get("exact") is not True or not isinstance(last.get("margin"), int):
        return None
    if last.get("book"):  # a book move's value is perfect play's, not a proof the engine made and can follow
        return None
    return [ply, "a" if agent is a_agent else "b", int(last["margin"])]


def _record(match, pair, seat, opening_moves, start, moves, state, forfeit=None, exact_moves=None) -> dict:
    if forfeit is None:
        a_result, result = result_of(state.margin, seat), _result(state.margin)
    else:
        a_result = "loss" if state.player == seat else "win"
        result = "p1" if state.player == 0 else "p0"
    rec = {"game": match.game, "pair": pair, "seat": seat, "a_seat": seat, "a_player": seat,
           "opening_moves": [int(m) for m in opening_moves], "opening": start.to_text(), "moves": moves,
           "plies": len(opening_moves) + len(moves), "final": state.to_text(), "margin": int(state.margin),
           "result": result, "capped": not state.is_over and forfeit is None, "a_result": a_result,
           "a_score": _A_SCORE[a_result]}
    if match.suite:
        rec["start"] = match.suite[pair % len(match.suite)]
    if forfeit is not None:
        rec["termination"] = forfeit.termination
        rec["detail"] = forfeit.detail
    if exact_moves:
        rec["exact_moves"] = [list(e) for e in exact_moves]
    return rec


def _parse(spec: str, game: str, seed: int, engine_settings):
    if spec.strip().startswith("cmd:") and engine_settings is not None:
        from .external_engine import engine_settings as use_engine_settings

        with use_engine_settings(engine_settings):
            return parse_agent(spec, game=game, seed=seed)
    return parse_agent(spec, game=game, seed=seed)


@functools.lru_cache(maxsize=64)
def agent_template(spec: str, game: str):
    """The agent of ``spec`` for ``game``, parsed and checked once a process (games copy it)."""
    return parse_agent(spec, game=game, seed=0)


def _agent(spec: str, game: str, seed: int, engine_settings):
    if spec.strip().startswith(("cmd:", "openspiel:")):  # they keep a process or a game of their own
        return _parse(spec, game, seed, engine_settings)
    return agent_template(spec, game).with_seed(seed)


def _start(agent, opening_moves, variant: dict) -> None:
    """A new game for an agent that keeps its own: the start plus ``opening_moves`` (the variant options its
    ``start`` names, e.g. an Oware engine's ``houses`` and ``seeds``)."""
    params = inspect.signature(agent.start).parameters
    agent.start(list(opening_moves), **{k: v for k, v in variant.items() if k in params})


def _setup(a: str, b: str, match: GameMatch, pair: int, seat: int, engine_settings):
    """(start position, opening plies, [player 0's agent, player 1's agent]) of one game."""
    start, opening_moves = opening_line(match, pair)
    base = mix64_py((match.seed * 1_000_003 + pair) * 4 + seat * 2) >> 1
    agent_a = _agent(a, match.game, base, engine_settings)
    agent_b = _agent(b, match.game, base + 1, engine_settings)
    bind_engines([agent_a, agent_b], engine_settings)  # one process per engine (two for one playing itself)
    for x in (agent_a, agent_b):
        if hasattr(x, "start"):
            _start(x, opening_moves, match.options)
    return start, opening_moves, ([agent_a, agent_b] if seat == 0 else [agent_b, agent_a])


def play_one(a: str, b: str, match: GameMatch, pair: int, seat: int, engine_settings=None) -> dict:
    """Game ``seat`` (0: A is player 0, 1: B is) of ``pair``; returns its record. An external engine that
    forfeits loses the game, recorded with its ``termination``."""
    start, opening_moves, agents = _setup(a, b, match, pair, seat, engine_settings)
    moves: list[int] = []
    exact: list = []
    now = {"state": start}

    def on_move(before, move, after, agent):
        entry = _exact_entry(agent, agents[seat], len(moves))
        if entry is not None:
            exact.append(entry)
        moves.append(int(move))
        now["state"] = after

    cap = max(1, match.max_plies - len(opening_moves)) if match.max_plies else None
    try:
        play_game(start, agents, max_plies=cap, on_move=on_move)
    except Forfeit as forfeit:
        return _record(match, pair, seat, opening_moves, start, moves, now["state"], forfeit, exact)
    return _record(match, pair, seat, opening_moves, start, moves, now["state"], exact_moves=exact)


def play_lockstep(a: str, b: str, match: GameMatch, games, engine_settings=None):
    """Play the games ``games`` ((pair, seat) pairs) side by side, yielding each record as its game ends.

    At each step, every game whose player to move is a lockstep agent (a multi-tree MCTS agent with an
    iteration budget, :attr:`jitsearch.arena.agents.Agent.lockstep`) is searched in one kernel launch per
    agent spec (:func:`jitsearch.mcts.search.mcts_search_many`); the other agents move one game at a time.
    Every search gets the seed its agent would use in a game played alone, so each record equals
    :func:`play_one`'s."""
    from ..mcts.search import mcts_search_many

    live = []
    for pair, seat in games:
        start, opening_moves, agents = _setup(a, b, match, pair, seat, engine_settings)
        cap = max(1, match.max_plies - len(opening_moves)) if match.max_plies else None
        live.append({"pair": pair, "seat": seat, "start": start, "opening_moves": opening_moves, "state": start,
                     "agents": agents, "moves": [], "cap": cap, "exact": []})
    while live:
        groups: dict[str, list[dict]] = {}
        for g in live:
            agent = g["agents"][g["state"].player]
            if getattr(agent, "lockstep", False):
                groups.setdefault(str(agent), []).append(g)
            else:
                try:
                    g["move"] = agent(g["state"])
                except Forfeit as forfeit:
                    g["forfeit"] = forfeit
        for members in groups.values():
            agents = [g["agents"][g["state"].player] for g in members]
            seeds = [agent.next_search_seed() for agent in agents]
            results = mcts_search_many([g["state"] for g in members], seeds, **agents[0].options)
            for g, agent, r in zip(members, agents, results):
                agent.last = r
                g["move"] = r["move"]
        still = []
        for g in live:
            args = (match, g["pair"], g["seat"], g["opening_moves"], g["start"], g["moves"], g["state"])
            if "forfeit" in g:
                yield _record(*args, g["forfeit"], g["exact"])
                continue
            move = g.pop("move")
            if move not in g["state"].legal_moves():
                raise RuntimeError(f"agent chose an illegal move {move} in {g['state'].to_text()}")
            entry = _exact_entry(g["agents"][g["state"].player], g["agents"][g["seat"]], len(g["moves"]))
            if entry is not None:
                g["exact"].append(entry)
            g["state"] = g["state"].play(move)
            g["moves"].append(int(move))
            inform_move(g["agents"], move)
            if g["state"].is_over or (g["cap"] is not None and len(g["moves"]) >= g["cap"]):
                yield _record(*args[:6], g["state"], exact_moves=g["exact"])
            else:
                still.append(g)
        live = still


class GameRecords:
    """Checks the records of a match file against one match (the ``check_fn`` of
    :func:`jitsearch.arena.records.check_records`): returns a record's (pair, seat), raises
    :class:`~jitsearch.arena.records.ForeignRecord` for another match's record and
    :class:`~jitsearch.arena.records.BadRecord` for one that does not agree with itself or its replay."""

    def __init__(self, a: str, b: str, match: GameMatch):
        self.a, self.b, self.match = a, b, match
        self.settings = json.loads(json.dumps(asdict(match)))  # as a record holds it (tuples as lists)
        self.cid = config_id(a, b, match)

    def __call__(self, rec: dict):
        m = self.match
        if rec.get("game") != m.game:
            name = m.game.capitalize()
            if "game" not in rec and legacy_game() == m.game:
                raise ForeignRecord(f"{name} records of the older format (no game field): rate and the web page "
                                    f"read them, a match does not resume from them")
            other = str(rec.get("game")).capitalize()
            raise ForeignRecord(f"not {_a(name)} {name} game record but {_a(other)} {other} game record")
        if "config" not in rec:
            raise ForeignRecord("its records were written by an older jitsearch (no config id or check value)")
        pair = get_field(rec, "pair", "int", low=0, high=MAX_PAIRS - 1)
        seat = get_field(rec, "seat", "int", choices=(0, 1))
        a, b = get_field(rec, "a", "str"), get_field(rec, "b", "str")
        cid = get_field(rec, "config", "str")
        settings = get_field(rec, "match", "dict")
        opening_moves = get_field(rec, "opening_moves", "ints")
        opening_text = get_field(rec, "opening", "str")
        moves = get_field(rec, "moves", "ints")
        plies = get_field(rec, "plies", "int", low=0)
        final = get_field(rec, "final", "str")
        margin = get_field(rec, "margin", "int")
        result = get_field(rec, "result", "str", choices=("p0", "p1", "draw"))
        capped = get_field(rec, "capped", "bool")
        a_result = get_field(rec, "a_result", "str", choices=tuple(_A_SCORE))
        a_score = get_field(rec, "a_score", "number")
        termination = get_field(rec, "termination", "str", choices=TERMINATIONS) if "termination" in rec else None
        if "detail" in rec:
            get_field(rec, "detail", "str")
        check_exact_moves(rec, moves)
        get_field(rec, "check", "str")
        verify_check(rec)
        # -- is it this match's?
        if (a, b) != (self.a, self.b):
            raise ForeignRecord(f"players {a!r} vs {b!r} in the file, {self.a!r} vs {self.b!r} here")
        if settings != self.settings:
            raise ForeignRecord("settings differ: " + dict_differences(_flat(settings), _flat(self.settings)))
        if cid != self.cid:
            raise BadRecord("its config id does not agree with its players and settings")
        # -- does it agree with itself and with its moves?
        for key in ("a_seat", "a_player"):
            if rec.get(key) != seat:
                raise BadRecord(f"{key} {json.dumps(rec.get(key))} does not agree with seat {seat}")
        start, expected = opening_line(m, pair)
        if opening_moves != expected:
            raise BadRecord(f"opening_moves {opening_moves} are not pair {pair}'s seeded opening {expected}")
        if m.suite and rec.get("start") != m.suite[pair % len(m.suite)]:
            raise BadRecord(f"start {rec.get('start')!r} is not pair {pair}'s suite opening")
        if opening_text != start.to_text():
            raise BadRecord(f"opening {opening_text!r} is not where its opening moves lead ({start.to_text()})")
        state = start
        for i, move in enumerate(moves):
            if state.is_over or move not in state.legal_moves():
                raise BadRecord(f"move {i + 1} ({move}) is not a legal move in {state.to_text()}")
            state = state.play(move)
        if plies != len(opening_moves) + len(moves):
            raise BadRecord(f"plies {plies} does not agree with {len(opening_moves)} opening plies and "
                            f"{len(moves)} moves")
        if final != state.to_text():
            raise BadRecord(f"final {final!r} is not the position its moves lead to ({state.to_text()})")
        if margin != state.margin:
            raise BadRecord(f"margin {margin} does not agree with the final position (margin {state.margin})")
        at_cap = bool(m.max_plies) and plies >= m.max_plies
        if termination is not None:  # lost by the engine to move in the last position
            if state.is_over or capped:
                raise BadRecord(f"termination {termination!r} in a game that was over or capped")
            expected_result = "loss" if state.player == seat else "win"
            if a_result != expected_result:
                raise BadRecord(f"a_result {a_result!r} does not agree with a {termination} of player {state.player} "
                                f"(A is player {seat})")
            if result != ("p1" if state.player == 0 else "p0"):
                raise BadRecord(f"result {result!r} does not agree with a {termination} of player {state.player}")
        else:
            if capped != (not state.is_over) or (capped and not at_cap):
                raise BadRecord(f"capped {json.dumps(capped)} does not agree with the game ("
                                f"{'over' if state.is_over else 'not over'} after {plies} plies, cap "
                                f"{m.max_plies or 'none'})")
            if result != _result(state.margin) or a_result != result_of(state.margin, seat):
                raise BadRecord(f"result {result!r} and a_result {a_result!r} do not agree with margin "
                                f"{state.margin} and A as player {seat}")
        if a_score != _A_SCORE[a_result]:
            raise BadRecord(f"a_score {a_score} does not agree with a_result {a_result!r}")
        return (pair, seat)


def _a(name: str) -> str:
    return "an" if name[:1] in "AEIOU" else "a"


def _flat(settings: dict) -> dict:
    """A match's settings with its variant options spelled out (what a difference names)."""
    out = {k: v for k, v in settings.items() if k != "variant"}
    for item in settings.get("variant") or ():
        if isinstance(item, (list, tuple)) and len(item) == 2:
            out[str(item[0])] = item[1]
    return out


def check_agents(specs, match: GameMatch, engine_settings: EngineSettings | None) -> None:
    """Parse every agent before any game; a ``cmd:`` engine is started and asked for the board (a program
    that cannot start or refuses it is one ``ValueError`` line); a human player is refused."""
    if engine_settings is not None:
        if not isinstance(engine_settings, EngineSettings):
            raise ValueError(f"engine_settings must be an EngineSettings, got {engine_settings!r}")
        engine_settings.check()
    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"an agent is a spec string such as 'alphabeta:depth=6', got {spec!r}")
        if spec.strip().partition(":")[0].strip() == "human":
            raise ValueError("a tournament needs engines, not human players")
    agents = [_agent(spec, match.game, 0, engine_settings) for spec in specs]  # parsed once a process (games copy)
    settings = {**match.options, "suite": match.suite}
    for spec, agent in zip(specs, agents):
        if hasattr(agent, "check_match"):
            params = inspect.signature(agent.check_match).parameters
            every = any(p.kind is p.VAR_KEYWORD for p in params.values())
            try:
                agent.check_match(**{k: v for k, v in settings.items() if every or k in params})
            except ValueError as exc:  # our agents' refusals name the spec; a cmd: or OpenSpiel one names its own
                raise ValueError(f"{spec}: {exc}" if isinstance(agent, Agent) else exc) from None


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

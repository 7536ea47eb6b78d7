"""Oware agents and paired matches (``jitsearch tournament --game oware``).

Agent specs: ``random``; ``alphabeta:depth=8`` or ``alphabeta:time=0.2``
(iterative deepening of :mod:`jitsearch.games.oware.alphabeta`; option
``w=`` the weight of the seeds-on-side term, default 0.25; ``db=S`` probes an
endgame database of up to S seeds on the board at the search's leaves, built
once a process in memory: :mod:`jitsearch.games.oware.endgame`);
``fsss:depth=8`` or ``fsss:time=0.2`` (FSSS-Minimax on the same tree,
:mod:`jitsearch.games.oware.fsss`; options ``w=`` and ``db=`` as
alphabeta's); ``mc:playouts=200``
(flat Monte Carlo: that many random playouts after each legal move, the move
with the best mean result for the mover, ties to the lowest house; options
``threads=`` and ``backend=cpu|cuda|auto``: the CUDA twin of the playouts,
bit-identical results); ``mcts:iterations=2000`` or ``mcts:time=0.5``
(one UCT tree, :func:`jitsearch.mcts.wrappers.search_oware`; options
``playouts=`` per leaf (default 1), ``c=`` (default sqrt 2), ``leaves=`` per
step, ``backend=cpu|cuda|auto``, and leaf evaluations ``eval=capture``
(``eval_plies=`` random plies, default 4, then the alpha-beta's evaluation
squashed) with ``imm=`` implicit minimax backups; ``parallel=tree`` grows one shared tree
with ``blocks=`` workers on a GPU, :func:`jitsearch.mcts.wrappers.tree_parallel_oware`;
a time-limited search stops on time, its compilation done before the clock
starts). Each option may be given once. An agent's random stream comes
from its seed and the number of moves it has made, so a game replays
exactly.

A match (:class:`OwareMatch`, :func:`run_oware_match`) plays ``pairs``
pairs of games from the same opening, A first in one game (seat 0) and
second in the other (seat 1); an opening is ``openings`` seeded random plies
from the start (0: the start position). It runs on the same machinery as a
Kalah match (:func:`jitsearch.arena.kalah_arena.run_match`): each finished
game is appended to a JSONL file as it ends, ``resume`` plays only the
games missing from it, a file of another match (players, board, openings or
seed) is refused in one line, Ctrl-C returns the summary of the finished
games with ``"interrupted": True``, and the statistics are Kalah's (W/D/L
from A's side, pentanomial, Elo and nElo, LOS).

A record (:func:`play_one`) holds ``game: "oware"``, ``pair``, ``seat``
(= ``a_seat`` = ``a_player``: the player A is), ``opening_moves`` (the
opening's plies from the start) and ``opening`` (the text of the position
they reach), ``moves`` (the houses played from there), ``plies`` (both
together), ``final`` (the text of the last position), ``scores``,
``margin`` (player 0's score minus player 1's), ``result`` (``p0``, ``p1``
or ``draw``), ``a_result`` and ``a_score`` (from A's side), ``capped``
(always false: an Oware game always ends, by the rules' move limit at the
latest), the match's ``a``, ``b``, ``config``, ``match`` and a ``check``
value. :class:`GameRecords` replays every record's moves from the start
before a match uses it (``rate`` too), so its final position, scores and
result must be the ones its moves lead to.

An external engine (``cmd:``, :mod:`jitsearch.arena.oware_external`) that
times out, moves illegally or crashes loses the game, as in Kalah matches:
its record has ``termination`` ("time forfeit", "illegal move" or "crash")
and ``detail``, ``final`` is the position it failed to move in (it is to
move there), ``result`` names the other player; the match goes on and its
summary counts ``terminations`` by side.

``openspiel:random``, ``openspiel:mcts,...`` and ``openspiel:alphabeta,...``
are OpenSpiel's bots on its ``oware`` (the ``openspiel`` extra;
:class:`jitsearch.arena.openspiel_agents.OwareOpenSpielAgent`): a match
starts them with the opening's moves and :func:`play_oware_game` tells them
every move (``begin``, ``observe``), so their OpenSpiel state, repetition
record included, follows the game.
"""

from __future__ import annotations

import functools
import json
import math
import random
import threading
from dataclasses import asdict, dataclass
from typing import ClassVar

from .._checks import check_float, check_int
from ..games.oware import OwareState
from ..games.oware.alphabeta import DEFAULT_SIDE_WEIGHT, MAX_DEPTH, iterative_deepening
from ..games.oware.endgame import MAX_DB_SEEDS, build_database, estimate_build
from ..trees.memory import check_bytes
from ..kernels.backend import BackendError, resolve
from ..mcts.wrappers import evaluate_states
from ..kernels.playouts import MAX_PLAYOUTS_PER_STATE
from ..mcts.config import (MAX_BLOCKS, MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREE_ITERATIONS,
                           MAX_WEIGHT)
from ..stop import check_stop, raise_if_stopped
from .agents import run_search
from .external_engine import TERMINATIONS, EngineSettings, Forfeit, close_engines
from .records import BadRecord, ForeignRecord, config_id, dict_differences, get_field, verify_check

OWARE_AGENTS = {"random": {}, "alphabeta": {"depth": int, "time": float, "w": float, "db": int},
                "fsss": {"depth": int, "time": float, "w": float, "db": int},
                "mc": {"playouts": int, "threads": int, "backend": str},
                "mcts": {"iterations": int, "time": float, "playouts": int, "c": float, "leaves": int,
                         "backend": str, "parallel": str, "blocks": int, "eval": str, "eval_plies": int,
                         "imm": float}}
#: Pairs of games a match may have.
MAX_PAIRS = 100_000
#: Random opening plies a match may ask for.
MAX_OPENING_PLIES = 40
#: Memory an agent's endgame database (``db=S``) may take.
DB_MAX_BYTES = 1 << 30


@functools.lru_cache(maxsize=4)
def endgame_database(houses: int, seeds: int, grand_slam_illegal: bool):
    """The database of an ``alphabeta:db=S`` agent, built once a process (in memory)."""
    return build_database(houses, seeds, grand_slam_illegal=grand_slam_illegal, max_bytes=DB_MAX_BYTES)


class OwareAgent:
    """A callable state -> house; ``last`` holds what its last search reported.

    Called from the main thread, the search runs on the agents' search thread
    (:func:`jitsearch.arena.agents.run_search`), so a Ctrl-C raises
    ``KeyboardInterrupt`` out of the move at once and tells the search to
    stop. :meth:`choose` (``state``, ``stop``) searches in the calling thread
    (a server's worker); ``stop``, a ``threading.Event``, ends every kind
    within about a second (alpha-beta and FSSS: a flag read every 1,024
    nodes; MCTS: between chunks of a few hundredths of a second; ``mc``: a
    flag read every 64 playouts on the CPU, the CUDA twin ends its launch
    first) and raises ``KeyboardInterrupt``: a stopped search never gives a move.
    """

    def __init__(self, spec: str, kind: str, options: dict, seed: int):
        self.spec, self.kind, self.options, self.seed = spec, kind, options, seed
        self.moves_made = 0
        self.last: dict = {}
        self.backend = resolve(options.get("backend", "cpu")) if kind in ("mc", "mcts") else "cpu"

    def __repr__(self) -> str:
        return self.spec

    def __call__(self, state: OwareState) -> int:
        self._check_state(state)
        if self.kind == "random":
            return self._search(None, state)
        return run_search(self._search, state)

    def choose(self, state: OwareState, stop: threading.Event | None = None) -> int:
        """The move in ``state``, searched in the calling thread; ``stop`` set from another thread ends the
        search within about a second and raises ``KeyboardInterrupt`` (class docstring)."""
        self._check_state(state)
        check_stop(stop)
        return self._search(stop, state)

    @staticmethod
    def _check_state(state) -> None:
        if not isinstance(state, OwareState):
            raise ValueError(f"an Oware agent plays an OwareState, got {type(state).__name__}")
        if not state.legal_moves():
            raise ValueError("the game is over: no move to choose")

    def _search(self, stop, state: OwareState) -> int:
        """The move (``KeyboardInterrupt`` once ``stop`` is set, whatever the search had found)."""
        move = self._search_move(stop, state)
        raise_if_stopped(stop)
        return move

    def _search_move(self, stop, state: OwareState) -> int:
        legal = state.legal_moves()
        rnd = random.Random(self.seed * 1_000_003 + self.moves_made)
        self.moves_made += 1
        if self.kind == "random":
            return rnd.choice(legal)
        if self.kind == "alphabeta":
            o = self.options
            r = iterative_deepening(state, time_limit=o.get("time"),
                                    max_depth=o.get("depth", MAX_DEPTH if "time" in o else 6),
                                    side_weight=o.get("w", DEFAULT_SIDE_WEIGHT),
                                    endgame=endgame_database(state.houses, o["db"], state.grand_slam_illegal)
                                    if "db" in o else None, stop=stop)
            self.last = {"depth": r.depth, "value": r.value, "nodes": r.nodes}
            return r.move
        if self.kind == "fsss":
            from ..games.oware.fsss import iterative_deepening as fsss_deepening

            o = self.options
            r = fsss_deepening(state, time_limit=o.get("time"),
                               max_depth=o.get("depth", MAX_DEPTH if "time" in o else 6),
                               side_weight=o.get("w", DEFAULT_SIDE_WEIGHT),
                               endgame=endgame_database(state.houses, o["db"], state.grand_slam_illegal)
                               if "db" in o else None, stop=stop)
            self.last = {"depth": r.depth, "value": r.value, "nodes": r.nodes, "evaluations": r.evaluations}
            return r.move
        if self.kind == "mcts":
            from ..mcts.wrappers import search_oware

            o = self.options
            common = dict(iterations=o.get("iterations"), time=o.get("time"), seed=rnd.getrandbits(63),
                          playouts=o.get("playouts", 1), c=o.get("c", math.sqrt(2)), backend=self.backend,
                          eval=o.get("eval"), eval_plies=o.get("eval_plies"), imm=o.get("imm", 0.0), stop=stop)
            if o.get("parallel") == "tree":
                from ..mcts.wrappers import tree_parallel_oware

                if common["iterations"] is None and common["time"] is None:
                    common["iterations"] = 1000
                out = tree_parallel_oware([state], blocks=o.get("blocks"), **common)
                r = {**out["positions"][0], "iterations": out["iterations"], "interrupted": out["interrupted"]}
            else:
                r = search_oware(state, leaves=o.get("leaves"), **common)
            if r["interrupted"]:  # Ctrl-C between chunks, or stop: no move from a half-grown tree
                raise KeyboardInterrupt
            self.last = {"value": r["value"], "iterations": r["iterations"], "nodes": r["nodes"]}
            return r["move"]
        # flat Monte Carlo
        playouts = self.options.get("playouts", 200)
        children = [state.play(h) for h in legal]
        live = [c for c in children if not c.is_over]
        scores = {}
        if live:
            if self.backend == "cuda":
                from ..mcts.wrappers import evaluate_states_cuda

                out = evaluate_states_cuda(live, playouts, seed=rnd.getrandbits(63))
            else:
                out = evaluate_states(live, playouts, seed=rnd.getrandbits(63),
                                      threads=self.options.get("threads", 1), stop=stop)
            for i, c in enumerate(live):  # counts are for the child's player to move: the opponent
                scores[id(c)] = (out["losses"][i] + 0.5 * out["draws"][i]) / playouts
        best, best_score = legal[0], -1.0
        for h, c in zip(legal, children):
            if c.is_over:
                mine = c.margin if state.player == 0 else -c.margin
                s = 1.0 if mine > 0 else 0.5 if mine == 0 else 0.0
            else:
                s = scores[id(c)]
            if s > best_score:
                best, best_score = h, s
        self.last = {"value": best_score}
        return best


def parse_oware_agent(spec: str, seed: int | None = None) -> OwareAgent:
    """An agent from its spec (module docstring); a bad spec raises ``ValueError`` in one line.

    Budgets: ``alphabeta`` and ``fsss`` with ``depth=D,time=T`` search for ``T`` seconds and stop at depth
    ``D`` too (a depth cap on a timed search, as Kalah's ``alphabeta``); ``mcts`` takes ``iterations=`` or
    ``time=``, not both (as Kalah's :func:`~jitsearch.arena.agents.parse_agent`)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a string such as alphabeta:depth=6, got {spec!r}")
    kind, _, rest = spec.strip().partition(":")
    if kind == "openspiel":  # OpenSpiel's bots on its oware (the openspiel extra): openspiel:mcts,simulations=N
        from .openspiel_agents import parse_openspiel_spec

        return parse_openspiel_spec(spec.strip(), rest, random.randrange(1 << 31) if seed is None
                                    else check_int("seed", seed, 0), game="oware")
    if kind == "cmd":  # an external engine speaking the line protocol: cmd:PROGRAM ARGS... (.oware_external)
        from .oware_external import OwareExternalAgent

        return OwareExternalAgent(spec, random.randrange(1 << 31) if seed is None else check_int("seed", seed, 0))
    if kind not in OWARE_AGENTS:
        raise ValueError(f"unknown Oware agent {kind!r}: one of {', '.join([*OWARE_AGENTS, 'openspiel', 'cmd'])}")
    options = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key not in OWARE_AGENTS[kind]:
            allowed = ", ".join(OWARE_AGENTS[kind]) or "none"
            raise ValueError(f"{spec}: unknown option {item!r} for {kind} (options: {allowed})")
        if key in options:
            raise ValueError(f"{spec}: option {key} given twice")
        try:
            options[key] = OWARE_AGENTS[kind][key](value)
        except ValueError:
            raise ValueError(f"{spec}: bad value {value!r} for {key}") from None
    if "depth" in options:
        check_int("depth", options["depth"], 1, MAX_DEPTH)
    if "time" in options:
        check_float("time", options["time"], 0.0, 3600.0, lo_open=True)
    if "w" in options:
        check_float("w", options["w"], -100.0, 100.0)
    if "db" in options:
        check_int("db", options["db"], 1, MAX_DB_SEEDS)
        check_bytes(estimate_build(6, options["db"])["ram_bytes"], DB_MAX_BYTES,
                    f"{spec}: an endgame database of {options['db']} seeds (6 houses)", "lower db=")
    if "playouts" in options:
        check_int("playouts", options["playouts"], 1, MAX_PLAYOUTS_PER_STATE)
    if "threads" in options:
        check_int("threads", options["threads"], 1, 64)
    if kind == "mcts":
        if "iterations" in options and "time" in options:
            raise ValueError(f"{spec}: give iterations= or time=, not both")
        if "iterations" in options:
            check_int("iterations", options["iterations"], 1, MAX_TREE_ITERATIONS)
        if "playouts" in options:
            check_int("playouts", options["playouts"], 1, MAX_LEAF_PLAYOUTS)
        if "c" in options:
            check_float("c", options["c"], 0.0, MAX_WEIGHT)
        if "leaves" in options:
            check_int("leaves", options["leaves"], 1, MAX_LEAVES)
        if options.get("parallel", "root") not in ("root", "tree"):
            raise ValueError(f"{spec}: parallel must be root (one tree) or tree (one shared tree, blocks= "
                             f"workers on a GPU), got {options['parallel']!r}")
        if options.get("parallel", "root") == "tree" and "leaves" in options:
            raise ValueError(f"{spec}: leaves= applies to parallel=root; a shared tree evaluates one leaf a worker")
        if "blocks" in options:
            if options.get("parallel") != "tree":
                raise ValueError(f"{spec}: blocks= applies only with parallel=tree")
            check_int("blocks", options["blocks"], 1, MAX_BLOCKS)
        from ..mcts.wrappers import check_oware_eval

        try:
            check_oware_eval(options.get("eval"), options.get("eval_plies"), options.get("imm", 0.0), None)
        except ValueError as exc:
            raise ValueError(f"{spec}: {exc}") from None
        if options.get("leaves", 1) * options.get("playouts", 1) > MAX_STEP_PLAYOUTS:
            raise ValueError(f"{spec}: leaves x playouts is above the limit of {MAX_STEP_PLAYOUTS} per step")
    seed = random.randrange(1 << 31) if seed is None else check_int("seed", seed, 0)
    try:
        return OwareAgent(spec.strip(), kind, options, seed)
    except BackendError as exc:
        raise ValueError(f"{spec}: {exc}") from None


def play_oware_game(state: OwareState, agents, *, on_move=None) -> dict:
    """Play ``state`` to the end with two agents (player 0's first); the game
    always ends (repetition, the move limit). ``on_move(before, house, after,
    agent)`` is called after each move."""
    if not isinstance(state, OwareState):
        raise ValueError(f"state must be an OwareState, got {type(state).__name__}")
    for x in {id(x): x for x in agents if hasattr(x, "begin")}.values():  # OpenSpiel bots: from the start only
        x.begin(state)
    moves = []
    while not state.is_over:
        agent = agents[state.player]
        house = agent(state)
        if house not in state.legal_moves():
            raise RuntimeError(f"agent {agent} chose an illegal move {house} in {state.to_text()}")
        before, state = state, state.play(house)
        moves.append(int(house))
        for x in {id(x): x for x in agents if hasattr(x, "observe")}.values():  # OpenSpiel bots keep a game
            x.observe(house)
        if on_move:
            on_move(before, house, state, agent)
    return {"moves": moves, "final": state.to_text(), "scores": list(state.scores), "margin": state.margin,
            "result": state.result, "plies": len(moves)}


def opening(houses: int, seeds: int, plies: int, seed: int, index: int) -> OwareState:
    """The ``index``-th opening: ``plies`` random plies (seeded) from the start, redrawn if the game ends."""
    return opening_line(houses, seeds, plies, seed, index)[0]


def opening_line(houses: int, seeds: int, plies: int, seed: int, index: int) -> tuple[OwareState, list[int]]:
    """:func:`opening` and the moves from the start that reach it."""
    rnd = random.Random(seed * 7919 + index)
    while True:
        s, moves = OwareState.initial(houses, seeds), []
        for _ in range(plies):
            if s.is_over:
                break
            moves.append(rnd.choice(s.legal_moves()))
            s = s.play(moves[-1])
        if not s.is_over:
            return s, moves


@dataclass(frozen=True)
class OwareMatch:
    """The settings of an Oware match (every field is part of its config id): the board, ``openings``
    seeded random plies per pair and the ``seed`` of the openings and of the agents."""

    #: The game, as a record's ``game`` and a result name it (not a field).
    game: ClassVar[str] = "oware"
    houses: int = 6
    seeds: int = 4
    openings: int = 0
    seed: int = 0

    def check(self) -> "OwareMatch":
        OwareState.initial(self.houses, self.seeds)  # validates the board size
        check_int("openings", self.openings, 0, MAX_OPENING_PLIES)
        check_int("seed", self.seed, 0)
        return self

    def describe(self) -> dict:
        """The settings a match result lists."""
        return {"houses": self.houses, "seeds": self.seeds, "openings": self.openings, "seed": self.seed}


def _seeds(match: OwareMatch, pair: int, seat: int) -> tuple[int, int]:
    """The seeds of A's and B's agents in game ``seat`` of ``pair``."""
    base = match.seed * 2 + 2 * pair + seat
    return base, base + 1_000_003


def _a_result(margin: int, a_player: int) -> str:
    mine = margin if a_player == 0 else -margin
    return "win" if mine > 0 else ("loss" if mine < 0 else "draw")


_A_SCORE = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def _record(pair: int, seat: int, opening_moves: list, start: OwareState, moves: list, state: OwareState,
            forfeit: Forfeit | None = None) -> dict:
    """A game's record (module docstring); with ``forfeit``, the player to move in ``state`` lost it."""
    if forfeit is None:
        a_result, result = _a_result(state.margin, seat), state.result
    else:
        a_result = "loss" if state.player == seat else "win"
        result = "p1" if state.player == 0 else "p0"
    rec = {"game": "oware", "pair": pair, "seat": seat, "a_seat": seat, "a_player": seat,
           "opening_moves": [int(h) for h in opening_moves], "opening": start.to_text(), "moves": moves,
           "plies": len(opening_moves) + len(moves), "final": state.to_text(), "scores": list(state.scores),
           "margin": state.margin, "result": result, "capped": False, "a_result": a_result,
           "a_score": _A_SCORE[a_result]}
    if forfeit is not None:
        rec["termination"] = forfeit.termination
        rec["detail"] = forfeit.detail
    return rec


def play_one(a: str, b: str, match: OwareMatch, pair: int, seat: int, engine_settings=None) -> dict:
    """Game ``seat`` (0: A is player 0, 1: B is) of ``pair``; returns its record. An external engine that
    forfeits (:class:`~jitsearch.arena.external_engine.Forfeit`) loses the game, recorded with its
    ``termination``; ``engine_settings``: how ``cmd:`` engines are run (None: the defaults)."""
    from .oware_external import engine_settings as use_engine_settings

    start, opening_moves = opening_line(match.houses, match.seeds, match.openings, match.seed, pair)
    seed_a, seed_b = _seeds(match, pair, seat)
    with use_engine_settings(engine_settings):
        agent_a, agent_b = parse_oware_agent(a, seed_a), parse_oware_agent(b, seed_b)
    for x in (agent_a, agent_b):
        if hasattr(x, "start"):  # an OpenSpiel bot or an external engine reaches the opening by its moves
            x.start(opening_moves, houses=match.houses, seeds=match.seeds)
    agents = [agent_a, agent_b] if seat == 0 else [agent_b, agent_a]
    moves: list[int] = []
    now = {"state": start}

    def on_move(before, house, after, agent):
        moves.append(int(house))
        now["state"] = after

    try:
        play_oware_game(start, agents, on_move=on_move)
    except Forfeit as forfeit:
        return _record(pair, seat, opening_moves, start, moves, now["state"], forfeit)
    return _record(pair, seat, opening_moves, start, moves, now["state"])


class GameRecords:
    """Checks the records of an Oware match file against one match (the ``check_fn`` of
    :func:`jitsearch.arena.records.check_records`): returns a record's (pair, seat), raises
    :class:`~jitsearch.arena.records.ForeignRecord` for another match's record and
    :class:`~jitsearch.arena.records.BadRecord` for one that does not agree with itself or its replay."""

    def __init__(self, a: str, b: str, match: OwareMatch):
        self.a, self.b, self.match = a, b, match
        self.settings = asdict(match)
        self.cid = config_id(a, b, match)
        self._openings: dict[int, tuple[OwareState, list[int]]] = {}

    def __call__(self, rec: dict):
        m = self.match
        if rec.get("game") != "oware":
            raise ForeignRecord("not an Oware game record (a Kalah or random-tree tournament's)")
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
        scores = get_field(rec, "scores", "ints")
        margin = get_field(rec, "margin", "int")
        result = get_field(rec, "result", "str", choices=("p0", "p1", "draw"))
        capped = get_field(rec, "capped", "bool")
        a_result = get_field(rec, "a_result", "str", choices=tuple(_A_SCORE))
        a_score = get_field(rec, "a_score", "number")
        termination = get_field(rec, "termination", "str", choices=TERMINATIONS) if "termination" in rec else None
        if "detail" in rec:
            get_field(rec, "detail", "str")
        get_field(rec, "check", "str")
        verify_check(rec)
        # -- is it this match's?
        if (a, b) != (self.a, self.b):
            raise ForeignRecord(f"players {a!r} vs {b!r} in the file, {self.a!r} vs {self.b!r} here")
        if settings != self.settings:
            raise ForeignRecord("settings differ: " + dict_differences(settings, self.settings))
        if cid != self.cid:
            raise BadRecord("its config id does not agree with its players and settings")
        # -- does it agree with itself and with its moves?
        for key in ("a_seat", "a_player"):
            if rec.get(key) != seat:
                raise BadRecord(f"{key} {json.dumps(rec.get(key))} does not agree with seat {seat}")
        if pair not in self._openings:
            self._openings[pair] = opening_line(m.houses, m.seeds, m.openings, m.seed, pair)
        start, expected = self._openings[pair]
        if opening_moves != expected:
            raise BadRecord(f"opening_moves {opening_moves} are not pair {pair}'s seeded opening {expected}")
        if opening_text != start.to_text():
            raise BadRecord(f"opening {opening_text!r} is not where its opening moves lead ({start.to_text()})")
        state = start
        for i, house in enumerate(moves):
            if house not in state.legal_moves():
                raise BadRecord(f"move {i + 1} (house {house}) is not legal in {state.to_text()}")
            state = state.play(house)
        if plies != len(opening_moves) + len(moves):
            raise BadRecord(f"plies {plies} does not agree with {len(opening_moves)} opening plies and "
                            f"{len(moves)} moves")
        if capped:
            raise BadRecord("capped is true, but an Oware game always ends")
        if final != state.to_text():
            raise BadRecord(f"final {final!r} is not the position its moves lead to ({state.to_text()})")
        if scores != list(state.scores) or margin != state.margin:
            raise BadRecord(f"scores {scores} and margin {margin} do not agree with the final position "
                            f"({list(state.scores)}, margin {state.margin})")
        if termination is not None:  # lost by the engine to move in the last position
            if state.is_over:
                raise BadRecord(f"termination {termination!r} in a game that was over")
            expected_result = "loss" if state.player == seat else "win"
            if a_result != expected_result or result != ("p1" if state.player == 0 else "p0"):
                raise BadRecord(f"a_result {a_result!r} and result {result!r} do not agree with a forfeit "
                                f"({termination}) of player {state.player} (A is player {seat})")
        else:
            if not state.is_over:
                raise BadRecord(f"the game is not over after its {len(moves)} moves, and no termination says why")
            if result != state.result or a_result != _a_result(state.margin, seat):
                raise BadRecord(f"result {result!r} and a_result {a_result!r} do not agree with margin "
                                f"{state.margin} and A as player {seat}")
        if a_score != _A_SCORE[a_result]:
            raise BadRecord(f"a_score {a_score} does not agree with a_result {a_result!r}")
        return (pair, seat)


def check_agents(specs, match: OwareMatch, engine_settings: EngineSettings | None) -> None:
    """Parse every agent before any game; a ``cmd:`` engine is started and asked for the board (a program
    that cannot start or refuses it is one ``ValueError`` line)."""
    from .oware_external import OwareExternalAgent, engine_settings as use_engine_settings

    if engine_settings is not None:
        if not isinstance(engine_settings, EngineSettings):
            raise ValueError(f"engine_settings must be an EngineSettings, got {engine_settings!r}")
        engine_settings.check()
    with use_engine_settings(engine_settings):
        agents = [parse_oware_agent(spec, 0) for spec in specs]
    for agent in agents:
        if isinstance(agent, OwareExternalAgent):
            agent.check_match(match.houses, match.seeds)


def run_oware_match(spec_a: str, spec_b: str, pairs: int, *, houses: int = 6, seeds: int = 4, openings: int = 0,
                    seed: int = 0, out=None, resume: bool = False, progress=None, on_update=None,
                    engine_settings: EngineSettings | None = None) -> dict:
    """Paired games of A against B (module docstring), on the machinery of Kalah matches
    (:func:`jitsearch.arena.kalah_arena.run_match`).

    Everything is checked before the first game: the arguments, both agents (a ``cmd:`` engine is started),
    the output file and every record already in it (replayed). Without ``resume`` a file that already holds
    games is refused: this match's (pass ``resume``) or another match's. ``progress(done, total)`` is called
    after each game, ``on_update(result)`` after each completed pair; ``engine_settings``: how ``cmd:``
    engines are run (their processes end with the match). Returns the result of
    :meth:`jitsearch.arena.kalah_arena.MatchRun.result`: :func:`jitsearch.arena.kalah_tournament.summarize`
    of the finished games (``a_wins``, ``draws``, ``b_wins``, ``a_score``, ``terminations`` ...), ``game``
    ("oware"), the settings, ``statistics`` (pentanomial, Elo, nElo, LOS), ``trajectory``, ``interrupted``
    (True when Ctrl-C stopped it) and ``notes`` (only when the file needed repair).
    """
    from .kalah_arena import run_match

    pairs = check_int("pairs", pairs, 1, MAX_PAIRS)
    match = OwareMatch(houses, seeds, openings, seed).check()
    for spec in (spec_a, spec_b):
        if not isinstance(spec, str):
            raise ValueError(f"an agent is a spec string such as 'alphabeta:depth=6', got {spec!r}")
    try:
        check_agents((spec_a, spec_b), match, engine_settings)
    except BaseException:
        close_engines()
        raise
    return run_match(spec_a, spec_b, match, pairs, out=out, resume=resume, progress=progress,
                     on_update=on_update, engine_settings=engine_settings)

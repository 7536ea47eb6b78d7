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
(one UCT tree, :func:`jitsearch.mcts.oware.search_oware`; options
``playouts=`` per leaf (default 1), ``c=`` (default sqrt 2), ``leaves=`` per
step, ``backend=cpu|cuda|auto``, and leaf evaluations ``eval=capture``
(``eval_plies=`` random plies, default 4, then the alpha-beta's evaluation
squashed) with ``imm=`` implicit minimax backups; ``parallel=tree`` grows one shared tree
with ``blocks=`` workers on a GPU, :func:`jitsearch.mcts.oware.tree_parallel_oware`;
a time-limited search stops on time, its compilation done before the clock
starts). Each option may be given once. An agent's random stream comes
from its seed and the number of moves it has made, so a game replays
exactly.

A match plays ``pairs`` pairs of games from the same opening, A first in
one game and second in the other; an opening is ``openings`` seeded random
plies from the start (0: the start position). Game scores are from A's
side (1 win, 0.5 draw, 0 loss), pairs are counted as a pentanomial and
summarised by :func:`jitsearch.arena.stats.summary`.

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
from pathlib import Path

from .._checks import check_float, check_int
from ..games.oware import OwareState
from ..games.oware.alphabeta import DEFAULT_SIDE_WEIGHT, MAX_DEPTH, iterative_deepening
from ..games.oware.endgame import MAX_DB_SEEDS, build_database, estimate_build
from ..trees.memory import check_bytes
from ..kernels.backend import BackendError, resolve
from ..kernels.oware_playouts import evaluate_states
from ..kernels.playouts import MAX_PLAYOUTS_PER_STATE
from ..mcts.config import (MAX_BLOCKS, MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREE_ITERATIONS,
                           MAX_WEIGHT)
from ..kernels.stop import check_stop, raise_if_stopped
from .agents import run_search
from .stats import pentanomial_from_pairs, summary

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
            from ..mcts.oware import search_oware

            o = self.options
            common = dict(iterations=o.get("iterations"), time=o.get("time"), seed=rnd.getrandbits(63),
                          playouts=o.get("playouts", 1), c=o.get("c", math.sqrt(2)), backend=self.backend,
                          eval=o.get("eval"), eval_plies=o.get("eval_plies"), imm=o.get("imm", 0.0), stop=stop)
            if o.get("parallel") == "tree":
                from ..mcts.oware import tree_parallel_oware

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
                from ..kernels.cuda_oware_playouts import evaluate_states_cuda

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
    """An agent from its spec (module docstring); a bad spec raises ``ValueError`` in one line."""
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
        from ..mcts.oware import check_oware_eval

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


def run_oware_match(spec_a: str, spec_b: str, pairs: int, *, houses: int = 6, seeds: int = 4, openings: int = 0,
                    seed: int = 0, out: Path | None = None, progress=None) -> dict:
    """Paired games of A against B (module docstring). Each game's record is
    appended to ``out`` (JSONL) as it ends. Returns :func:`summary` of A's
    pentanomial plus ``a``, ``b``, ``game``, ``houses``, ``seeds``."""
    pairs = check_int("pairs", pairs, 1, MAX_PAIRS)
    openings = check_int("openings", openings, 0, MAX_OPENING_PLIES)
    seed = check_int("seed", seed, 0)
    OwareState.initial(houses, seeds)  # validates the board size
    parse_oware_agent(spec_a, 0), parse_oware_agent(spec_b, 0)  # validates both specs before any game
    scores = []
    for p in range(pairs):
        start, start_moves = opening_line(houses, seeds, openings, seed, p)
        pair = []
        for a_seat in (0, 1):
            a = parse_oware_agent(spec_a, seed * 2 + 2 * p + a_seat)
            b = parse_oware_agent(spec_b, seed * 2 + 2 * p + a_seat + 1_000_003)
            for x in (a, b):
                if hasattr(x, "start"):  # an OpenSpiel bot reaches the opening by its moves
                    x.start(start_moves, houses=houses, seeds=seeds)
            agents = [a, b] if a_seat == 0 else [b, a]
            game = play_oware_game(start, agents)
            mine = game["margin"] if a_seat == 0 else -game["margin"]
            score = 1.0 if mine > 0 else 0.5 if mine == 0 else 0.0
            pair.append(score)
            if out is not None:
                Path(out).parent.mkdir(parents=True, exist_ok=True)
                with open(out, "a") as f:
                    f.write(json.dumps({"game": "oware", "pair": p, "a": spec_a, "b": spec_b, "a_seat": a_seat,
                                        "opening": start.to_text(), "a_score": score, **game}) + "\n")
        scores.append(tuple(pair))
        if progress:
            progress(p + 1, pairs)
    result = summary(pentanomial_from_pairs(scores))
    result.update(game="oware", a=spec_a, b=spec_b, houses=houses, seeds=seeds, openings=openings)
    return result

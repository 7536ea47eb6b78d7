"""Kalah agents: one interface, state -> move (a pit index of the board layout).

Specs (command line and API): ``random``, ``alphabeta:depth=8``,
``alphabeta:time=1.5`` (iterative deepening with a time limit),
``alphabeta:depth=6,eval=heuristic``, ``fsss:depth=5,eval=heuristic``,
``mtdf`` (exact: solves the position, small boards only; ``time=`` caps it
and falls back to the deepest alpha-beta iteration), ``human`` (the CLI
asks). ``eval`` is ``store`` (store difference, the default) or
``heuristic`` (seed 003's weighted H1..H5).

Monte Carlo agents (:mod:`jitsearch.mcts.search`): ``mcts:iterations=100``
or ``mcts:time=1`` with ``c=`` (default sqrt 2), ``formula=ucb1|sqrt|sqrtlog``,
``pb=`` (progressive bias weight), ``reward=win|heuristic``,
``playout_depth=`` (cut playouts, score by the heuristic), ``solver=1``
(MCTS-Solver), ``playouts=`` (per leaf), ``final=visits|value``,
``workers=`` (root parallelism), ``backend=cpu|cuda|auto`` with ``batch=``
(leaves per launch, chosen with virtual loss); ``hmcts:...`` is ``mcts`` with
``reward=heuristic`` (seed 003's HMCTS); ``mc:playouts=1000`` (or
``time=``) is pure Monte Carlo. Their random streams come from the agent's
seed and the number of moves it has made, so a game replays exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .kalah import KalahState
from .kalah_search import fsss_search, iterative_deepening, search, solve_exact

KINDS = ("random", "human", "alphabeta", "fsss", "mtdf", "mcts", "hmcts", "mc")
MCTS_OPTIONS = {"iterations": int, "time": float, "c": float, "formula": str, "pb": float, "reward": str,
                "playout_depth": int, "solver": int, "playouts": int, "final": str, "workers": int,
                "backend": str, "batch": int, "virtual_loss": float}


@dataclass
class Agent:
    """A move chooser. ``last`` holds the search info of the last move."""

    kind: str
    depth: int | None = None
    time: float | None = None
    eval: str = "store"
    seed: int | None = None
    last: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        self._rng = random.Random(self.seed)
        self._moves_made = 0

    def __call__(self, state: KalahState) -> int:
        if state.is_over:
            raise ValueError("the game is over")
        if self.kind == "random":
            self.last = {}
            return self._rng.choice(state.legal_moves())
        if self.kind == "alphabeta":
            if self.time is not None:
                r = iterative_deepening(state, time_limit=self.time, eval=self.eval,
                                        max_depth=self.depth or 64)
            else:
                r = search(state, self.depth, eval=self.eval)
            self.last = r
            return r["move"]
        if self.kind == "fsss":
            self.last = fsss_search(state, self.depth, eval=self.eval)
            return self.last["move"]
        if self.kind == "mtdf":
            r = solve_exact(state, time_limit=self.time)
            self.last = r
            if r["complete"] and r["best_move"] >= 0:
                return r["best_move"]
            return iterative_deepening(state, time_limit=self.time or 1.0)["move"]
        if self.kind in ("mcts", "hmcts", "mc"):
            from ..kernels.rng import mix64_py
            from ..mcts.search import mcts_search, monte_carlo_search

            seed = mix64_py((self.seed or 0) * 1_000_003 + self._moves_made)
            self._moves_made += 1
            if self.kind == "mc":
                self.last = monte_carlo_search(state, playouts=self.options.get("playouts", 1000),
                                               time_limit=self.options.get("time"), seed=seed)
            else:
                self.last = mcts_search(state, seed=seed, **self.options)
            return self.last["move"]
        raise ValueError(f"agent {self.kind!r} cannot choose moves by itself")

    def __str__(self) -> str:
        opts = []
        if self.depth is not None:
            opts.append(f"depth={self.depth}")
        if self.time is not None:
            opts.append(f"time={self.time:g}")
        if self.eval != "store":
            opts.append(f"eval={self.eval}")
        opts += [f"{k}={v}" for k, v in self.options.items() if not (self.kind == "hmcts" and k == "reward")]
        return self.kind + (":" + ",".join(opts) if opts else "")


def parse_agent(spec: str, *, seed: int | None = None) -> Agent:
    """Build an :class:`Agent` from a spec string (see module docstring)."""
    kind, _, rest = spec.strip().partition(":")
    if kind not in KINDS:
        raise ValueError(f"unknown agent {kind!r}; choose one of: {', '.join(KINDS)}")
    fields = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        name, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"agent option {item!r} must look like name=value")
        fields[name.strip()] = value.strip()
    if kind in ("mcts", "hmcts", "mc"):
        return _parse_monte_carlo(kind, fields, spec, seed)
    allowed = {"random": set(), "human": set(), "alphabeta": {"depth", "time", "eval"},
               "fsss": {"depth", "eval"}, "mtdf": {"time"}}[kind]
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)} for {kind}; known: {sorted(allowed) or 'none'}")
    try:
        depth = int(fields["depth"]) if "depth" in fields else None
        limit = float(fields["time"]) if "time" in fields else None
    except ValueError:
        raise ValueError(f"bad number in agent spec {spec!r}") from None
    evaluation = fields.get("eval", "store")
    if evaluation not in ("store", "heuristic"):
        raise ValueError(f"eval must be store or heuristic, got {evaluation!r}")
    if depth is not None and not 1 <= depth <= 64:
        raise ValueError(f"depth must lie in 1..64, got {depth}")
    if limit is not None and not limit > 0:
        raise ValueError(f"time must be > 0, got {limit}")
    if kind in ("alphabeta", "fsss") and depth is None and limit is None:
        depth = 5
    if kind == "fsss" and depth is None:
        raise ValueError("fsss needs depth=")
    return Agent(kind, depth, limit, evaluation, seed)


def _parse_monte_carlo(kind, fields, spec, seed):
    allowed = {"playouts", "time"} if kind == "mc" else set(MCTS_OPTIONS)
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)} for {kind}; known: {sorted(allowed)}")
    options = {}
    for name, value in fields.items():
        try:
            options[name] = MCTS_OPTIONS[name](value)
        except ValueError:
            raise ValueError(f"bad value {value!r} for {name} in agent spec {spec!r}") from None
    if kind == "hmcts":
        options.setdefault("reward", "heuristic")
    if kind == "mc":
        if options.get("playouts", 1) < 1:
            raise ValueError("playouts must be >= 1")
        if "time" in options and not options["time"] > 0:
            raise ValueError("time must be > 0")
    else:
        from ..mcts.search import MCTSConfig

        MCTSConfig.from_options(**options).validate()  # the same errors as the API, before any game starts
        if "backend" in options:
            from ..kernels.backend import resolve

            resolve(options["backend"])  # a CUDA request without a GPU fails here, in one line
    return Agent(kind, None, options.get("time"), "store", seed, options=options)


def play_game(state: KalahState, agents, *, max_plies: int = 300, on_move=None) -> dict:
    """Play to the end (or ``max_plies``); returns moves, final board and margin."""
    moves = []
    while not state.is_over and len(moves) < max_plies:
        agent = agents[state.player]
        pit = agent(state)
        if pit not in state.legal_moves():
            raise RuntimeError(f"agent {agent} chose an illegal move {pit} in {state.to_text()}")
        before = state
        state = state.play(pit)
        moves.append(pit)
        if on_move:
            on_move(before, pit, state, agent)
    return {"moves": moves, "final_board": [int(x) for x in state.board], "margin": state.margin,
            "result": state.result, "plies": len(moves), "final": state.to_text(), "finished": state.is_over}

"""OpenSpiel's bots as players in our arena (optional: ``pip install 'jitsearch[openspiel]'``), for every game with
an OpenSpiel counterpart (:attr:`jitsearch.games.protocol.Game.openspiel`: Kalah's ``mancala``, Oware's ``oware``,
Connect Four's ``connect_four``).

Specs: ``openspiel:random``, ``openspiel:mcts,simulations=1000,rollouts=1`` (OpenSpiel's C++ ``MCTSBot`` with a
``RandomRolloutEvaluator``; also ``time=`` seconds per move, ``c=`` its UCT constant, default 2 as in OpenSpiel,
``solve=0|1``) and ``openspiel:alphabeta,depth=N`` (OpenSpiel's Python ``minimax.alpha_beta_search``, valued at
the depth limit by our state's margin, player 0's, turned to the mover's). They play the variants OpenSpiel has
(the mapping's ``params``; Kalah(6,4) under the standard rules, any Oware(m, n) with OpenSpiel's rules, Connect
Four of any size): other variants are refused in one line.

OpenSpiel states cannot be built from a board, so the agent keeps its own OpenSpiel state in step with the game:
it starts from the opening plies (:meth:`OpenSpielAgent.start`) and is told every move of both players
(:meth:`~OpenSpielAgent.observe`, which the arena calls). Asked to move elsewhere, it reaches the position by
replaying our moves from the start where the state knows them (a Connect Four state made by moves), from the
variant's start position, and refuses with a clear error otherwise (a position it was not shown the way to, e.g.
an opening suite).
"""

from __future__ import annotations

import functools
import math

from ..games import DEFAULT_GAME, get

ALGORITHMS = ("random", "mcts", "alphabeta")
#: Options per algorithm and their types.
OPTIONS = {"random": {}, "mcts": {"simulations": int, "rollouts": int, "time": float, "c": float, "solve": bool},
           "alphabeta": {"depth": int}}
MAX_SIMULATIONS = 10**8
MAX_DEPTH = 40


def pyspiel_module():
    """``pyspiel``, or a ValueError saying how to install it."""
    try:
        import pyspiel
    except ImportError:
        raise ValueError("openspiel agents need OpenSpiel: pip install 'jitsearch[openspiel]'") from None
    return pyspiel


def openspiel_map(game):
    """The :class:`~jitsearch.games.protocol.OpenSpielMap` of ``game`` (a name or Game), or one-line
    ``ValueError``."""
    game = get(game)
    if game.openspiel is None:
        raise ValueError(f"{game.name} has no OpenSpiel counterpart: openspiel agents cannot play it")
    return game.openspiel


class _either:
    """A method that may also be called on the class (then ``self`` is None)."""

    def __init__(self, f):
        self.f = f
        functools.update_wrapper(self, f)

    def __get__(self, obj, cls):
        return functools.partial(self.f, obj)


class OpenSpielAgent:
    """An OpenSpiel bot behind our agent interface (state -> move) for ``game`` (a registered name)."""

    kind = "openspiel"
    lockstep = False

    def __init__(self, algorithm: str, options: dict, seed: int | None = None, game: str = DEFAULT_GAME):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown OpenSpiel bot {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
        unknown = sorted(set(options) - set(OPTIONS[algorithm]))
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} for openspiel:{algorithm}; known: "
                             f"{sorted(OPTIONS[algorithm]) or 'none'}")
        o = dict(options)
        if algorithm == "mcts":
            o.setdefault("rollouts", 1)
            o.setdefault("c", 2.0)
            o.setdefault("solve", False)
            if "simulations" not in o and "time" not in o:
                o["simulations"] = 1000
            if "simulations" in o and not 1 <= o["simulations"] <= MAX_SIMULATIONS:
                raise ValueError(f"simulations must lie in 1..{MAX_SIMULATIONS:,}, got {o['simulations']}")
            if not 1 <= o["rollouts"] <= 10_000:
                raise ValueError(f"rollouts must lie in 1..10,000, got {o['rollouts']}")
            if "time" in o and not (math.isfinite(o["time"]) and o["time"] > 0):
                raise ValueError(f"time must be a positive number of seconds, got {o['time']}")
            if not (math.isfinite(o["c"]) and o["c"] >= 0):
                raise ValueError(f"c must be a finite number >= 0, got {o['c']}")
        if algorithm == "alphabeta":
            o.setdefault("depth", 4)
            if not 1 <= o["depth"] <= MAX_DEPTH:
                raise ValueError(f"depth must lie in 1..{MAX_DEPTH}, got {o['depth']}")
        self.game = get(game)
        self.map = openspiel_map(self.game)
        self.algorithm, self.options, self.seed = algorithm, o, seed
        self.spec = str(self)
        self.last: dict = {}
        self._spiel = pyspiel_module()
        self._os_game = None
        self._variant = None
        self._bot = None
        self._os_state = None
        self._our_state = None

    def with_seed(self, seed: int | None) -> "OpenSpielAgent":
        """A fresh agent of this spec (its options already checked) with its own ``seed`` and no game: what a
        tournament makes for each game."""
        return OpenSpielAgent(self.algorithm, self.options, seed, self.game.name)

    @_either
    def check_match(self, *board, suite=(), position=None, **variant) -> None:
        """Refuse a game OpenSpiel does not have: the variant's options positionally in the game's order
        (Kalah's ``houses, seeds, empty_capture``) or by name; an opening suite."""
        game = get(DEFAULT_GAME) if self is None else self.game
        variant = game.check_variant(**{**dict(zip(game.variant, board[:len(game.variant)])), **variant})
        suite = board[len(game.variant)] if len(board) > len(game.variant) else suite
        try:
            openspiel_map(game).params(variant)
        except ValueError as exc:
            raise ValueError(f"openspiel agents: {exc}") from None
        if suite:
            raise ValueError("openspiel agents cannot start from an opening suite (an OpenSpiel state is reached "
                             "by moves from the start); use random opening plies (--openings N) instead")

    # -- keeping the OpenSpiel state in step ----------------------------------------------

    def start(self, moves=(), **variant) -> None:
        """A new game from the start of ``variant`` (default: the game's defaults) followed by ``moves``."""
        variant = self.game.check_variant(**variant)
        try:
            params = self.map.params(variant)
        except ValueError as exc:
            raise ValueError(f"openspiel agents: {exc}") from None
        if self._os_game is None or self._variant != variant:
            self._os_game = self._spiel.load_game(self.map.name, params)
            self._bot = None
        self._variant = variant
        self._our_state = self.game.initial(**variant)
        self._os_state = self._os_game.new_initial_state()
        self._bot = None
        for move in moves:
            self.observe(move)

    def begin(self, state) -> None:
        """A game is played from ``state``: where :meth:`start` and :meth:`observe` brought this agent, or a
        position it can reach from the start (see the module docstring); any other is refused."""
        if self._os_state is not None and state == self._our_state:
            return
        hook = self.game.engine_protocol
        variant = hook.variant_of(state) if hook is not None else self.game.defaults()
        self.check_match(**variant)
        replay = self.map.replay(state) if self.map.replay is not None else None
        if replay is not None:
            self.start(replay, **variant)
        elif state == self.game.initial(**variant):
            self.start(**variant)
        else:
            raise ValueError("openspiel agent: it was not shown how the game reached "
                             f"{state.to_text()} (start() with the moves from the start, then observe())")

    def observe(self, move: int) -> None:
        """The move ``move`` (ours) was played, by either player."""
        if self._os_state is None:
            self.start()
        s = self._our_state
        if s.is_over or move not in s.legal_moves():
            raise ValueError(f"openspiel agent: move {move} is not legal in {s.to_text()}")
        self._os_state.apply_action(self.map.action(s, int(move)))
        self._our_state = s.play(int(move))

    def _make_bot(self):
        sp, o = self._spiel, self.options
        seed = (self.seed or 0) % (2**31 - 1)
        if self.algorithm == "random":  # OpenSpiel's random bot plays one player id: one per id
            return {p: sp.make_uniform_random_bot(p, seed + p) for p in (0, 1)}
        # the bot keeps a raw reference to its evaluator: keep the Python object alive beside it
        self._evaluator = evaluator = sp.RandomRolloutEvaluator(o["rollouts"], seed)
        return sp.MCTSBot(self._os_game, evaluator, float(o["c"]), int(o.get("simulations", MAX_SIMULATIONS)),
                          1000, bool(o["solve"]), seed, False, sp.ChildSelectionPolicy.UCT,
                          float(o.get("time", -1.0)))

    def __call__(self, state) -> int:
        return self.choose(state)

    def choose(self, state, stop=None) -> int:
        """Its bot's move in ``state`` (``stop`` is not read: OpenSpiel's bots cannot be stopped)."""
        if not isinstance(state, self.game.State):
            raise ValueError(f"a {self.game.name} openspiel agent plays {self.game.State.__name__} positions, "
                             f"got {type(state).__name__}")
        if self._os_state is None or state != self._our_state:
            if self._os_state is not None and self.map.replay is None:
                raise ValueError(f"openspiel agent: asked to play from {state.to_text()} but its game is at "
                                 f"{self._our_state.to_text()}: every move must reach observe()")
            self.begin(state)
        if self.algorithm == "alphabeta":
            from open_spiel.python.algorithms import minimax

            me = self._os_state.current_player()
            value, action = minimax.alpha_beta_search(self._os_game, self._os_state.clone(),
                                                      value_function=self._margin_value(me),
                                                      maximum_depth=self.options["depth"], maximizing_player_id=me)
            self.last = {"value": value}
        else:
            if self._bot is None:
                self._bot = self._make_bot()
            bot = self._bot[self._os_state.current_player()] if isinstance(self._bot, dict) else self._bot
            action = bot.step(self._os_state)
            self.last = {}
        return int(self.map.move(self._our_state, int(action)))

    def _margin_value(self, me: int):
        """The value at the depth limit: our state's margin (player 0's) from ``me``'s side, our state read
        by replaying the OpenSpiel state's actions from the start."""
        game, variant, mapping = self.game, self._variant, self.map

        def value(os_state):
            s = game.initial(**variant)
            for a in os_state.history():
                s = s.play(mapping.move(s, int(a)))
            return float(s.margin if me == 0 else -s.margin)

        return value

    def __str__(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.options.items())
        return f"openspiel:{self.algorithm}" + (f",{opts}" if opts else "")


def parse_openspiel_spec(spec: str, rest: str, seed: int | None, *, game: str = DEFAULT_GAME) -> OpenSpielAgent:
    """``rest`` of ``openspiel:ALGORITHM[,name=value...]`` for ``game`` (a registered name)."""
    items = [x.strip() for x in rest.split(",")] if rest.strip() else []
    if not items or "=" in items[0]:
        raise ValueError(f"an openspiel agent names its bot first: openspiel:mcts,simulations=1000 "
                         f"(one of {', '.join(ALGORITHMS)}), got {spec!r}")
    algorithm = items[0]
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown OpenSpiel bot {algorithm!r} in agent spec {spec!r}; choose one of: "
                         f"{', '.join(ALGORITHMS)}")
    allowed = OPTIONS[algorithm]
    options = {}
    for item in items[1:]:
        name, eq, value = (x.strip() for x in item.partition("="))
        if not item or not eq or not value:
            raise ValueError(f"agent option {item!r} must look like name=value in agent spec {spec!r}")
        if name not in allowed:
            raise ValueError(f"unknown option {name!r} for openspiel:{algorithm} in agent spec {spec!r}; known: "
                             f"{', '.join(sorted(allowed)) or 'none'}")
        if name in options:
            raise ValueError(f"option {name} is given twice in agent spec {spec!r}")
        kind = allowed[name]
        try:
            if kind is bool:
                if value.lower() not in ("0", "1", "true", "false"):
                    raise ValueError
                options[name] = value.lower() in ("1", "true")
            else:
                options[name] = kind(value)
        except ValueError:
            raise ValueError(f"bad value {value!r} for {name} in agent spec {spec!r}") from None
    try:
        return OpenSpielAgent(algorithm, options, seed, game)
    except ValueError as exc:
        raise ValueError(f"{exc} (agent spec {spec!r})") from None

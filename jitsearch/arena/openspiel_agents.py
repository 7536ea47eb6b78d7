"""OpenSpiel's bots as players in our arena (optional: ``pip install 'jitsearch[openspiel]'``).

Specs: ``openspiel:random``, ``openspiel:mcts,simulations=1000,rollouts=1``
(OpenSpiel's C++ ``MCTSBot`` with a ``RandomRolloutEvaluator``; also
``time=`` seconds per move, ``c=`` its UCT constant, default 2 as in
OpenSpiel, ``solve=0|1``) and ``openspiel:alphabeta,depth=N`` (OpenSpiel's
Python ``minimax.alpha_beta_search`` with the store difference as the value
at the depth limit). They play OpenSpiel's ``mancala``, i.e. Kalah(6,4)
under the standard rules: other boards and the empty-capture rule are
refused.

OpenSpiel states cannot be built from a board, so the agent keeps its own
``mancala`` state in step with the game: it starts from the opening plies
(:meth:`OpenSpielAgent.start`) and is told every move of both players
(:meth:`observe`, called by :func:`jitsearch.arena.agents.play_game` and the
tournaments). Before each move it checks that its state has the board it is
asked to play from, and refuses with a clear error otherwise (a position it
was not shown the way to, e.g. an opening suite).

:class:`OwareOpenSpielAgent` is the same for OpenSpiel's ``oware`` (any
Oware(m, n) OpenSpiel builds, OpenSpiel's rules: the default move limit,
grand slams legal), the agents of ``jitsearch tournament --game oware``
(:func:`jitsearch.arena.oware_arena.parse_oware_agent`). Its OpenSpiel state
is stepped with every move, so the repetition record is the game's; its
``openspiel:alphabeta`` values the depth limit by the captured difference.
"""

from __future__ import annotations

import math

from ..games.kalah import KalahState
from ..games.oware import OPENSPIEL_MOVE_LIMIT, OwareState

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


class OpenSpielAgent:
    """An OpenSpiel bot behind our agent interface (state -> pit)."""

    kind = "openspiel"
    lockstep = False

    def __init__(self, algorithm: str, options: dict, seed: int | None = None):
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
        self.algorithm, self.options, self.seed = algorithm, o, seed
        self.last: dict = {}
        self._spiel = pyspiel_module()
        self._game = self._spiel.load_game("mancala")
        self._bot = None
        self._os_state = None
        self._our_state = None
        self._moves_made = 0

    def with_seed(self, seed: int | None) -> "OpenSpielAgent":
        """A fresh agent of this spec (its options already checked) with its
        own ``seed`` and no game: what a tournament makes for each game."""
        return OpenSpielAgent(self.algorithm, self.options, seed)

    # -- keeping the OpenSpiel state in step ----------------------------------------------

    @staticmethod
    def check_match(houses: int, seeds: int, empty_capture: bool, suite=()) -> None:
        """Refuse a game OpenSpiel's mancala cannot play."""
        if (houses, seeds) != (6, 4) or empty_capture:
            raise ValueError("openspiel agents play OpenSpiel's mancala: Kalah(6,4) under the standard rules "
                             f"only, not Kalah({houses},{seeds}){' with empty capture' if empty_capture else ''}")
        if suite:
            raise ValueError("openspiel agents cannot start from an opening suite (an OpenSpiel state is reached "
                             "by moves from the start); use random opening plies (--openings N) instead")

    def start(self, moves=()) -> None:
        """A new game from the start of Kalah(6,4) followed by ``moves``."""
        self._os_state = self._game.new_initial_state()
        self._our_state = KalahState.initial(6, 4)
        self._bot = None
        for pit in moves:
            self.observe(pit)

    def observe(self, pit: int) -> None:
        """The move ``pit`` was played (by either player)."""
        if self._os_state is None:
            self.start()
        if pit not in self._our_state.legal_moves():
            raise ValueError(f"openspiel agent: move {pit} is not legal in {self._our_state.to_text()}")
        self._os_state.apply_action(int(pit))
        self._our_state = self._our_state.play(int(pit))

    def _make_bot(self):
        sp, o = self._spiel, self.options
        seed = (self.seed or 0) % (2**31 - 1)
        if self.algorithm == "random":  # OpenSpiel's random bot plays one player id: one per id
            return {p: sp.make_uniform_random_bot(p, seed + p) for p in (0, 1)}
        if self.algorithm == "mcts":
            # the bot keeps a raw reference to its evaluator: keep the Python object alive beside it
            self._evaluator = evaluator = sp.RandomRolloutEvaluator(o["rollouts"], seed)
            return sp.MCTSBot(self._game, evaluator, float(o["c"]), int(o.get("simulations", MAX_SIMULATIONS)),
                              1000, bool(o["solve"]), seed, False, sp.ChildSelectionPolicy.UCT,
                              float(o.get("time", -1.0)))
        return None

    def __call__(self, state: KalahState) -> int:
        if self._os_state is None:
            if state.to_text() != KalahState.initial(6, 4).to_text() or state.houses != 6 or state.empty_capture:
                self.check_match(state.houses, int(sum(int(x) for x in state.board)) // (2 * state.houses),
                                 state.empty_capture)
                raise ValueError("openspiel agent: it was not shown how the game reached "
                                 f"{state.to_text()} (start() with the moves from the start, then observe())")
            self.start()
        if state.to_text() != self._our_state.to_text():
            raise ValueError(f"openspiel agent: asked to play from {state.to_text()} but its game is at "
                             f"{self._our_state.to_text()}: every move must reach observe()")
        if self.algorithm == "alphabeta":
            from open_spiel.python.algorithms import minimax

            me = self._os_state.current_player()
            value, action = minimax.alpha_beta_search(self._game, self._os_state.clone(),
                                                      value_function=_store_difference(me),
                                                      maximum_depth=self.options["depth"], maximizing_player_id=me)
            self.last = {"value": value}
            return int(action)
        if self._bot is None:
            self._bot = self._make_bot()
        bot = self._bot[self._os_state.current_player()] if isinstance(self._bot, dict) else self._bot
        action = bot.step(self._os_state)
        self._moves_made += 1
        self.last = {}
        return int(action)

    def __str__(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.options.items())
        return f"openspiel:{self.algorithm}" + (f",{opts}" if opts else "")


def _store_difference(me: int):
    """The value at the depth limit: ``me``'s store minus the opponent's, read by replaying the history."""
    def value(state):
        s = KalahState.initial(6, 4)
        for a in state.history():
            s = s.play(int(a))
        m = s.margin  # player 0's store minus player 1's
        return float(m if me == 0 else -m)

    return value


class OwareOpenSpielAgent(OpenSpielAgent):
    """An OpenSpiel bot playing OpenSpiel's ``oware`` behind our Oware agent interface (state -> house).

    It keeps an OpenSpiel state and our :class:`~jitsearch.games.oware.OwareState` stepped together:
    :meth:`start` (the board size and the opening moves) and :meth:`observe` (every move of both
    players, as :func:`jitsearch.arena.oware_arena.play_oware_game` tells it). Asked to move from a
    position that is not its game's (board, player, ply and repetition record), it refuses.
    """

    def __init__(self, algorithm: str, options: dict, seed: int | None = None):
        super().__init__(algorithm, options, seed)
        self._game = None  # loaded by start(), for the board size of the game
        self.spec = str(self)

    def with_seed(self, seed: int | None) -> "OwareOpenSpielAgent":
        return OwareOpenSpielAgent(self.algorithm, self.options, seed)

    @staticmethod
    def check_state(state: OwareState) -> None:
        """Refuse a game OpenSpiel's oware does not play (our rule options beyond OpenSpiel's)."""
        if state.grand_slam_illegal or state.move_limit != OPENSPIEL_MOVE_LIMIT:
            raise ValueError("openspiel agents play OpenSpiel's oware: grand slams legal and the move limit "
                             f"{OPENSPIEL_MOVE_LIMIT}, not grand_slam_illegal or another move limit")

    def start(self, moves=(), *, houses: int = 6, seeds: int = 4) -> None:
        """A new game from the start of Oware(``houses``, ``seeds``) followed by ``moves`` (house indices)."""
        self._our_state = OwareState.initial(houses, seeds)
        self._game = self._spiel.load_game("oware", {"num_houses_per_player": houses,
                                                     "num_seeds_per_house": seeds})
        self._os_state = self._game.new_initial_state()
        self._bot = None
        for house in moves:
            self.observe(house)

    def begin(self, state: OwareState) -> None:
        """A game is played from ``state``: the start of a game (a new one), or where :meth:`start` and
        :meth:`observe` brought this agent; any other position is refused."""
        self.check_state(state)
        if self._os_state is not None and state == self._our_state:
            return
        n = state.seeds_total // (2 * state.houses)
        if state.ply != 0 or state != OwareState.initial(state.houses, max(n, 1)):
            raise ValueError("openspiel agent: it was not shown how the game reached "
                             f"{state.to_text()} (start() with the moves from the start, then observe())")
        self.start(houses=state.houses, seeds=n)

    def observe(self, house: int) -> None:
        """The move ``house`` (a house index of our layout) was played, by either player."""
        if self._os_state is None:
            raise ValueError("openspiel agent: observe() before start()")
        s = self._our_state
        if s.is_over or house not in s.legal_moves():
            raise ValueError(f"openspiel agent: move {house} is not legal in {s.to_text()}")
        self._os_state.apply_action(s.action_of(house))
        self._our_state = s.play(int(house))

    def __call__(self, state: OwareState) -> int:
        if not isinstance(state, OwareState):
            raise ValueError(f"an Oware openspiel agent plays OwareState positions, got {type(state).__name__}")
        if self._os_state is None:
            self.begin(state)
        self.check_state(state)
        if state != self._our_state:
            raise ValueError(f"openspiel agent: asked to play from {state.to_text()} (ply {state.ply}) but its "
                             f"game is at {self._our_state.to_text()} (ply {self._our_state.ply}): every move "
                             "must reach observe()")
        if self.algorithm == "alphabeta":
            from open_spiel.python.algorithms import minimax

            me = self._os_state.current_player()
            value, action = minimax.alpha_beta_search(self._game, self._os_state.clone(),
                                                      value_function=_captured_difference(me),
                                                      maximum_depth=self.options["depth"], maximizing_player_id=me)
            self.last = {"value": value}
        else:
            if self._bot is None:
                self._bot = self._make_bot()
            bot = self._bot[self._os_state.current_player()] if isinstance(self._bot, dict) else self._bot
            action = bot.step(self._os_state)
            self._moves_made += 1
            self.last = {}
        return state.house_of(int(action))


def _captured_difference(me: int):
    """The value at the depth limit: ``me``'s captured seeds minus the opponent's (OpenSpiel's observation
    string is ``player | score0 score1 | seeds``)."""
    def value(state):
        s0, s1 = (int(x) for x in state.observation_string(0).split(" | ")[1].split())
        return float(s0 - s1 if me == 0 else s1 - s0)

    return value


def parse_openspiel_spec(spec: str, rest: str, seed: int | None, *, game: str = "kalah") -> OpenSpielAgent:
    """``rest`` of ``openspiel:ALGORITHM[,name=value...]``; ``game``: ``kalah`` (OpenSpiel's mancala) or
    ``oware``."""
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
        return (OwareOpenSpielAgent if game == "oware" else OpenSpielAgent)(algorithm, options, seed)
    except ValueError as exc:
        raise ValueError(f"{exc} (agent spec {spec!r})") from None

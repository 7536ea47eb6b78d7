"""jitsearch in OpenSpiel (optional: ``pip install 'jitsearch[openspiel]'``).

* :func:`make_bot`: any of our agent specs (``alphabeta:depth=8``, ``mtdf``,
  ``mcts:iterations=5000``, ``mcts:time=0.1,backend=cuda``, ...) as a
  ``pyspiel.Bot`` for OpenSpiel's ``mancala`` (Kalah(6,4), standard rules)
  or for our registered ``jitsearch_kalah`` game. Its actions are pit
  indices of the same board layout as ours. The bot keeps its own
  :class:`KalahState` in step with the game (``restart_at``,
  ``inform_action``); a state handed to ``step`` is converted by replaying
  its action history, and one our engine cannot reach that way is refused
  with a clear error. MCTS agents also give ``step_with_policy`` (the root's
  visit shares).
* :func:`register` / :func:`load_kalah`: Kalah(m, n) under both rule sets as
  a Python OpenSpiel game ``jitsearch_kalah(houses=m,seeds=n,empty_capture=
  false)``, so OpenSpiel's own algorithms run on boards it does not ship.
  Returns are +1 / -1 / 0 (win, loss, draw by the stores), as ``mancala``.

Layers: this package sits above :mod:`jitsearch.arena` (it wraps its
agents) and below the CLI.
"""

from __future__ import annotations

from ..arena.agents import parse_agent
from ..arena.openspiel_agents import pyspiel_module
from ..games.kalah import KalahState, MAX_HOUSES

GAME_NAME = "jitsearch_kalah"
#: Plies after which the registered game reports a draw-free cut (no Kalah game comes near it).
MAX_GAME_LENGTH = 1000
_REGISTERED = False


def _game_board(game):
    """(houses, seeds, empty_capture) of an OpenSpiel game we can play."""
    name = game.get_type().short_name
    if name == "mancala":
        return 6, 4, False
    if name == GAME_NAME:
        p = game.get_parameters()
        return int(p["houses"]), int(p["seeds"]), bool(p["empty_capture"])
    raise ValueError(f"jitsearch bots play mancala or {GAME_NAME}, not {name!r}")


class _Bot:
    """Mixin body of :func:`make_bot`'s bot (pyspiel.Bot is subclassed at runtime)."""

    def _setup(self, spec, game, seed):
        self._spec = spec
        self._houses, self._seeds, self._ec = _game_board(game)
        self._agent = parse_agent(spec, seed=seed)
        if self._agent.kind in ("human", "openspiel"):
            raise ValueError(f"make_bot wraps jitsearch's engines, not {self._agent.kind!r}")
        self._state = None
        self._history: list[int] = []

    def _initial(self):
        return KalahState.initial(self._houses, self._seeds, empty_capture=self._ec)

    def _sync(self, state):
        """Our state for the OpenSpiel ``state``: extend ours by the new actions, or replay its history."""
        history = [int(a) for a in state.history()]
        if self._state is None or history[:len(self._history)] != self._history:
            self._state, self._history = self._initial(), []
        for a in history[len(self._history):]:
            if self._state.is_over or a not in self._state.legal_moves():
                raise ValueError(f"jitsearch bot: action {a} is not legal in {self._state.to_text()} (history "
                                 f"{history}): this state is not a Kalah({self._houses},{self._seeds}) game our "
                                 f"engine can reach")
            self._state = self._state.play(a)
            self._history.append(a)
        if state.current_player() != (-4 if self._state.is_over else self._state.player):
            raise ValueError(f"jitsearch bot: OpenSpiel says player {state.current_player()} moves, our engine "
                             f"says {self._state.player} in {self._state.to_text()}")
        return self._state

    # -- pyspiel.Bot --------------------------------------------------------------------------

    def step(self, state):
        s = self._sync(state)
        return int(self._agent(s))

    def step_with_policy(self, state):
        s = self._sync(state)
        move = int(self._agent(s))
        children = (self._agent.last or {}).get("children") if hasattr(self._agent, "last") else None
        if children:
            total = sum(c["visits"] for c in children) or 1
            policy = [(int(c["move"]), c["visits"] / total) for c in children]
        else:
            policy = [(a, 1.0 if a == move else 0.0) for a in s.legal_moves()]
        return policy, move

    def provides_policy(self):
        return True

    def restart_at(self, state):
        self._state, self._history = None, []
        self._sync(state)

    def inform_action(self, state, player_id, action):
        # ``state`` is the state before ``action``; keep ours in step
        self._sync(state)
        self._state = self._state.play(int(action))
        self._history.append(int(action))

    def restart(self):
        self._state, self._history = None, []

    def __repr__(self):
        return f"jitsearch bot {self._spec!r}"


def make_bot(spec: str, game=None, seed: int | None = None):
    """A ``pyspiel.Bot`` playing agent ``spec`` in ``game`` (default: OpenSpiel's mancala)."""
    pyspiel = pyspiel_module()
    game = game if game is not None else pyspiel.load_game("mancala")

    class JitsearchBot(_Bot, pyspiel.Bot):
        def __init__(self):
            pyspiel.Bot.__init__(self)
            self._setup(spec, game, seed)

    return JitsearchBot()


# -- Kalah(m, n) as a Python OpenSpiel game ---------------------------------------------------

def register() -> None:
    """Register ``jitsearch_kalah`` with OpenSpiel (once per process)."""
    global _REGISTERED
    if _REGISTERED:
        return
    pyspiel = pyspiel_module()
    if GAME_NAME in pyspiel.registered_names():
        _REGISTERED = True
        return
    game_type = pyspiel.GameType(
        short_name=GAME_NAME, long_name="Kalah(m, n) (jitsearch)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL, chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION, utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=2, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=False,
        parameter_specification={"houses": 6, "seeds": 4, "empty_capture": False})

    class KalahGame(pyspiel.Game):
        def __init__(self, params=None):
            params = dict(params or {})
            houses, seeds = int(params.get("houses", 6)), int(params.get("seeds", 4))
            KalahState.initial(houses, seeds)  # validates the board
            info = pyspiel.GameInfo(num_distinct_actions=2 * houses + 2, max_chance_outcomes=0, num_players=2,
                                    min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                                    max_game_length=MAX_GAME_LENGTH)
            super().__init__(game_type, info, params)
            self.houses, self.seeds = houses, seeds
            self.empty_capture = bool(params.get("empty_capture", False))

        def new_initial_state(self):
            return KalahSpielState(self)

        def make_py_observer(self, iig_obs_type=None, params=None):
            return _Observer()

    class KalahSpielState(pyspiel.State):
        def __init__(self, game):
            super().__init__(game)
            self.kalah = KalahState.initial(game.houses, game.seeds, empty_capture=game.empty_capture)
            self._plies = 0

        def current_player(self):
            if self.is_terminal():
                return pyspiel.PlayerId.TERMINAL
            return self.kalah.player

        def _legal_actions(self, player):
            return [] if self.is_terminal() else list(self.kalah.legal_moves())

        def _apply_action(self, action):
            self.kalah = self.kalah.play(int(action))
            self._plies += 1

        def _action_to_string(self, player, action):
            return f"p{player} pit {action}"

        def is_terminal(self):
            return self.kalah.is_over or self._plies >= MAX_GAME_LENGTH

        def returns(self):
            if not self.is_terminal():
                return [0.0, 0.0]
            m = self.kalah.margin
            r = 1.0 if m > 0 else (-1.0 if m < 0 else 0.0)
            return [r, -r]

        def __str__(self):
            return self.kalah.to_text()

    class _Observer:
        def __init__(self):
            self.tensor = None
            self.dict = {}

        def set_from(self, state, player):
            pass

        def string_from(self, state, player):
            return str(state)

    pyspiel.register_game(game_type, KalahGame)
    _REGISTERED = True


def load_kalah(houses: int = 6, seeds: int = 4, empty_capture: bool = False):
    """OpenSpiel's handle of Kalah(houses, seeds) under our rules (registered on first use)."""
    if not isinstance(houses, int) or not 1 <= houses <= MAX_HOUSES:
        raise ValueError(f"houses must be an integer in 1..{MAX_HOUSES}, got {houses!r}")
    register()
    pyspiel = pyspiel_module()
    return pyspiel.load_game(GAME_NAME, {"houses": houses, "seeds": seeds, "empty_capture": bool(empty_capture)})

"""jitsearch in OpenSpiel (optional: ``pip install 'jitsearch[openspiel]'``), for every registered game.

* :func:`make_bot`: any of our agent specs (``alphabeta:depth=8``, ``mtdf``, ``mcts:iterations=5000``, ...) as a
  ``pyspiel.Bot`` for the OpenSpiel game of one of our games' mappings
  (:attr:`jitsearch.games.protocol.Game.openspiel`: ``mancala``, ``oware``, ``connect_four``) or for one of our
  games registered in OpenSpiel (:func:`load_game`). The bot keeps its own state of our game in step with
  OpenSpiel's (``restart_at``, ``inform_action``); a state handed to ``step`` is converted by replaying its action
  history through the mapping, and one our rules cannot reach that way is refused with a clear error. MCTS agents
  also give ``step_with_policy`` (the root's visit shares).
* :func:`register` / :func:`load_game`: any registered game of ours, every variant, as a Python OpenSpiel game
  ``jitsearch_<name>`` whose parameters are the game's variant options and whose actions are our moves, so
  OpenSpiel's own algorithms run on variants it does not ship (Kalah(m, n) under both capture rules, Oware with
  grand slams illegal). Returns are +1 / -1 / 0 by the sign of the final margin, as OpenSpiel's games.

Layers: this package sits above :mod:`jitsearch.arena` (it wraps its agents) and below the CLI.
"""

from __future__ import annotations

from types import SimpleNamespace

from ..arena.engine_protocol import served_agent
from ..arena.openspiel_agents import pyspiel_module
from ..games import GAMES, get

PREFIX = "jitsearch_"
#: Plies after which a registered game with no bound of its own (Kalah) is cut (no game comes near it).
MAX_GAME_LENGTH = 1000
_REGISTERED: set = set()


#: The mapping of our games registered in OpenSpiel: an action is our move.
_IDENTITY = SimpleNamespace(action=lambda state, move: int(move), move=lambda state, action: int(action))


def game_of(os_game):
    """``(our Game, its variant, the action mapping)`` of an OpenSpiel game we can play."""
    name = os_game.get_type().short_name
    params = dict(os_game.get_parameters())
    if name.startswith(PREFIX) and name[len(PREFIX):] in GAMES:
        game = get(name[len(PREFIX):])
        return game, game.check_variant(**{k: game.variant[k].type(v) for k, v in params.items()}), _IDENTITY
    for game in GAMES.values():
        if game.openspiel is not None and game.openspiel.name == name:
            return game, game.check_variant(**game.openspiel.variant(params)), game.openspiel
    known = [g.openspiel.name for g in GAMES.values() if g.openspiel is not None]
    raise ValueError(f"jitsearch bots play {', '.join(known)} or {PREFIX}<game>, not {name!r}")


class _Bot:
    """Mixin body of :func:`make_bot`'s bot (pyspiel.Bot is subclassed at runtime)."""

    def _setup(self, spec, os_game, seed):
        self._spec = spec
        self._game, self._variant, self._map = game_of(os_game)
        self._agent = served_agent(self._game.name, spec, seed=seed)
        self._state = None
        self._history: list[int] = []

    def _sync(self, state):
        """Our state for the OpenSpiel ``state``: extend ours by the new actions, or replay its history."""
        history = [int(a) for a in state.history()]
        if self._state is None or history[:len(self._history)] != self._history:
            self._state, self._history = self._game.initial(**self._variant), []
        for a in history[len(self._history):]:
            s = self._state
            try:
                move = None if s.is_over else self._map.move(s, a)
            except ValueError:
                move = None
            if move is None or move not in s.legal_moves():
                raise ValueError(f"jitsearch bot: action {a} is not legal in {s.to_text()} (history {history}): "
                                 f"this state is not a {self._game.name} game our rules reach")
            self._state = s.play(move)
            self._history.append(a)
        if state.current_player() != (-4 if self._state.is_over else self._state.player):
            raise ValueError(f"jitsearch bot: OpenSpiel says player {state.current_player()} moves, our rules "
                             f"say {self._state.player} in {self._state.to_text()}")
        return self._state

    # -- pyspiel.Bot --------------------------------------------------------------------------

    def step(self, state):
        s = self._sync(state)
        return self._map.action(s, int(self._agent(s)))

    def step_with_policy(self, state):
        s = self._sync(state)
        move = int(self._agent(s))
        children = (getattr(self._agent, "last", None) or {}).get("children")
        if children:
            total = sum(c["visits"] for c in children) or 1
            policy = [(self._map.action(s, int(c["move"])), c["visits"] / total) for c in children]
        else:
            policy = [(self._map.action(s, m), 1.0 if m == move else 0.0) for m in s.legal_moves()]
        return policy, self._map.action(s, move)

    def provides_policy(self):
        return True

    def restart_at(self, state):
        self._state, self._history = None, []
        self._sync(state)

    def inform_action(self, state, player_id, action):
        # ``state`` is the state before ``action``; keep ours in step
        s = self._sync(state)
        self._state = s.play(self._map.move(s, int(action)))
        self._history.append(int(action))

    def restart(self):
        self._state, self._history = None, []

    def __repr__(self):
        return f"jitsearch bot {self._spec!r}"


def make_bot(spec: str, game=None, seed: int | None = None):
    """A ``pyspiel.Bot`` playing agent ``spec`` in ``game`` (an OpenSpiel game; default: OpenSpiel's
    mancala). ``human``, ``openspiel:`` and ``cmd:`` specs are refused."""
    pyspiel = pyspiel_module()
    game = game if game is not None else pyspiel.load_game("mancala")

    class JitsearchBot(_Bot, pyspiel.Bot):
        def __init__(self):
            pyspiel.Bot.__init__(self)
            self._setup(spec, game, seed)

    return JitsearchBot()


# -- our games as Python OpenSpiel games ----------------------------------------------------------

def register(name: str) -> str:
    """Register our game ``name`` with OpenSpiel as ``jitsearch_<name>`` (once per process); returns that."""
    game = get(name)
    short = PREFIX + game.name
    pyspiel = pyspiel_module()
    if short in _REGISTERED or short in pyspiel.registered_names():
        _REGISTERED.add(short)
        return short
    game_type = pyspiel.GameType(
        short_name=short, long_name=f"{game.name} (jitsearch)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL, chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION, utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=2, min_num_players=2,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=False,
        parameter_specification=game.defaults())

    class SpielGame(pyspiel.Game):
        def __init__(self, params=None):
            given = dict(params or {})
            variant = game.check_variant(**{k: game.variant[k].type(v) for k, v in given.items()})
            start = game.initial(**variant)  # validates the variant
            sizes = game.sizes(game.cfg(start))
            self.length = sizes.plies if sizes.plies > 0 else MAX_GAME_LENGTH
            # an action is our move: below the board's cells or its move count (Kalah's pits, Oware's
            # houses, Connect Four's columns)
            info = pyspiel.GameInfo(num_distinct_actions=max(sizes.cells, sizes.moves), max_chance_outcomes=0,
                                    num_players=2, min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                                    max_game_length=self.length)
            super().__init__(game_type, info, {**game.defaults(), **given})
            self.variant = variant

        def new_initial_state(self):
            return SpielState(self)

        def make_py_observer(self, iig_obs_type=None, params=None):
            return _Observer()

    class SpielState(pyspiel.State):
        def __init__(self, spiel_game):
            super().__init__(spiel_game)
            self.ours = game.initial(**spiel_game.variant)
            self._plies, self._length = 0, spiel_game.length

        def current_player(self):
            if self.is_terminal():
                return pyspiel.PlayerId.TERMINAL
            return self.ours.player

        def _legal_actions(self, player):
            return [] if self.is_terminal() else [int(m) for m in self.ours.legal_moves()]

        def _apply_action(self, action):
            self.ours = self.ours.play(int(action))
            self._plies += 1

        def _action_to_string(self, player, action):
            return f"p{player} {action}"

        def is_terminal(self):
            return self.ours.is_over or self._plies >= self._length

        def returns(self):
            if not self.is_terminal():
                return [0.0, 0.0]
            m = self.ours.margin
            r = 1.0 if m > 0 else (-1.0 if m < 0 else 0.0)
            return [r, -r]

        def __str__(self):
            return self.ours.to_text()

    pyspiel.register_game(game_type, SpielGame)
    _REGISTERED.add(short)
    return short


class _Observer:
    def __init__(self):
        self.tensor = None
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return str(state)


def load_game(name: str, **variant):
    """OpenSpiel's handle of our game ``name`` with ``variant`` (registered on first use); a bad variant is a
    one-line ``ValueError``."""
    game = get(name)
    variant = game.check_variant(**variant)
    game.initial(**variant)  # validates the variant here, in one line
    short = register(game.name)
    return pyspiel_module().load_game(short, variant)

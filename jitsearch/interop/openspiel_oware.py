"""Our Oware agents as ``pyspiel.Bot`` for OpenSpiel's ``oware`` (optional:
``pip install 'jitsearch[openspiel]'``).

:func:`make_oware_bot` wraps any spec of :mod:`jitsearch.arena.oware_arena`
(``alphabeta:time=0.2``, ``mc:playouts=200``, ...). The bot keeps its own
:class:`~jitsearch.games.oware.OwareState` in step with the OpenSpiel state
by replaying its action history from the start (OpenSpiel's actions are
house numbers 0..m-1 of the player to move), so its repetition record is
the game's; a history our rules refuse raises a clear error. OpenSpiel's
bots as agents in our arena are not built yet.
"""

from __future__ import annotations

from ..arena.openspiel_agents import pyspiel_module
from ..arena.oware_arena import parse_oware_agent
from ..games.oware import OwareState


def oware_state_of(state, game=None) -> OwareState:
    """Our state for an OpenSpiel ``oware`` state, by replaying its action history."""
    game = game if game is not None else state.get_game()
    if game.get_type().short_name != "oware":
        raise ValueError(f"an Oware bot plays OpenSpiel's oware, not {game.get_type().short_name!r}")
    p = game.get_parameters()
    s = OwareState.initial(int(p["num_houses_per_player"]), int(p["num_seeds_per_house"]))
    for a in state.history():
        if s.is_over or s.house_of(int(a)) not in s.legal_moves():
            raise ValueError(f"action {a} is not legal in {s.to_text()}: not an Oware game our rules reach")
        s = s.play(s.house_of(int(a)))
    if (-4 if s.is_over else s.player) != state.current_player():
        raise ValueError(f"OpenSpiel says player {state.current_player()} moves, our rules say {s.player}")
    return s


def make_oware_bot(spec: str, game=None, seed: int | None = None):
    """A ``pyspiel.Bot`` playing our Oware agent ``spec`` (default game: ``oware``)."""
    pyspiel = pyspiel_module()
    game = game if game is not None else pyspiel.load_game("oware")
    if game.get_type().short_name != "oware":
        raise ValueError(f"an Oware bot plays OpenSpiel's oware, not {game.get_type().short_name!r}")
    agent = parse_oware_agent(spec, seed=seed)

    class OwareBot(pyspiel.Bot):
        def __init__(self):
            pyspiel.Bot.__init__(self)

        def step(self, state):
            s = oware_state_of(state, game)
            return s.action_of(agent(s))

        def restart_at(self, state):
            pass

        def inform_action(self, state, player_id, action):
            pass

        def __repr__(self):
            return f"jitsearch Oware bot {spec!r}"

    return OwareBot()

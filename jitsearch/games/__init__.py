"""Games: Kalah (:mod:`jitsearch.games.kalah`, a package: rules, engines, the
exact solver and endgame databases), Oware (:mod:`jitsearch.games.oware`, OpenSpiel's
``oware`` rules, search and a small-variant solver), Connect Four
(:mod:`jitsearch.games.connect4`: rules, an exact solver) and the random-tree game of Zhang's forward-estimation
paper
(:mod:`jitsearch.games.random_tree_game`).

Every game is also a value of the game protocol (:mod:`jitsearch.games.protocol`, which
states the conventions), found by name in the registry: ``get("kalah")``, :data:`GAMES`,
:func:`register` for a game defined outside the package.
"""

from __future__ import annotations

from .protocol import Game, check_game

#: name -> Game; the built-in games are added on first use of the registry (so that importing
#: one game's module, as the kernels do, does not import the others).
_GAMES: dict[str, Game] = {}
_LOADED = []


def _registry() -> dict:
    if not _LOADED:
        _LOADED.append(True)
        from .connect4.game import GAME as connect4
        from .kalah.game import GAME as kalah
        from .oware.game import GAME as oware
        for game in (kalah, oware, connect4):
            _GAMES.setdefault(game.name, check_game(game))
    return _GAMES


def register(game: Game, *, replace: bool = False) -> Game:
    """Add ``game`` to :data:`GAMES` under ``game.name``; a name already taken raises
    ``ValueError`` unless ``replace``. Returns the game."""
    check_game(game)
    games = _registry()
    if game.name in games and not replace and games[game.name] is not game:
        raise ValueError(f"a game named {game.name!r} is already registered (pass replace=True)")
    games[game.name] = game
    return game


def get(name: str) -> Game:
    """The registered game called ``name``; an unknown name raises one-line ``ValueError``."""
    if isinstance(name, Game):
        return name
    games = _registry()
    try:
        return games[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(games))}") from None


def __getattr__(name: str):
    if name == "GAMES":  # the registry (name -> Game), built-in games loaded on first use
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GAMES", "Game", "game_of", "get", "register"]


def game_of(state) -> Game:
    """The registered game whose state class ``state`` is; else one-line ``ValueError``."""
    for game in _registry().values():
        if isinstance(state, game.State):
            return game
    raise ValueError(f"state must be a state of a registered game ({', '.join(sorted(_registry()))}), "
                     f"got {type(state).__name__}")

"""Games: Kalah (:mod:`jitsearch.games.kalah`, a package: rules, engines, the
exact solver and endgame databases), Oware (:mod:`jitsearch.games.oware`, OpenSpiel's
``oware`` rules, search and a small-variant solver), Connect Four
(:mod:`jitsearch.games.connect4`: rules, an exact solver) and the random-tree game of seed 001
(:mod:`jitsearch.games.random_tree_game`).

Every game is also a value of the game protocol (:mod:`jitsearch.games.protocol`, which
states the conventions), found by name in the registry: ``get("kalah")``, :data:`GAMES`,
:func:`register` for a game defined outside the package.
"""

from __future__ import annotations

from .protocol import Game, check_game

#: The registry: name -> :class:`~jitsearch.games.protocol.Game` (the built-in games, then
#: those given to :func:`register`).
GAMES: dict[str, Game] = {}


def register(game: Game, *, replace: bool = False) -> Game:
    """Add ``game`` to :data:`GAMES` under ``game.name``; a name already taken raises
    ``ValueError`` unless ``replace``. Returns the game."""
    check_game(game)
    if game.name in GAMES and not replace and GAMES[game.name] is not game:
        raise ValueError(f"a game named {game.name!r} is already registered (pass replace=True)")
    GAMES[game.name] = game
    return game


def get(name: str) -> Game:
    """The registered game called ``name``; an unknown name raises one-line ``ValueError``."""
    if isinstance(name, Game):
        return name
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}") from None


def _register_builtin() -> None:
    from .connect4.game import GAME as connect4
    from .kalah.game import GAME as kalah
    from .oware.game import GAME as oware
    for game in (kalah, oware, connect4):
        register(game)


_register_builtin()

__all__ = ["GAMES", "Game", "get", "register"]

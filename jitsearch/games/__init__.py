"""Games: Kalah (:mod:`jitsearch.games.kalah`, a package: rules, engines, the
exact solver and endgame databases), Oware (:mod:`jitsearch.games.oware`, OpenSpiel's
``oware`` rules, search and a small-variant solver), Connect Four
(:mod:`jitsearch.games.connect4`: rules, an exact solver); the random-tree game of Zhang's
forward-estimation paper is a search kernel (:func:`jitsearch.search.forward_estimation.play_game`).

Every game is also a value of the game protocol (:mod:`jitsearch.games.protocol`, which
states the conventions), found by name in the registry: ``get("kalah")``, :data:`GAMES`,
:func:`register` for a game defined outside the package.

Games from outside the package reach the command line as **plugins**, loaded once, the first time
:func:`get` is asked for a name it does not know: the entry points of the group ``jitsearch.games``
(a distribution's ``[project.entry-points."jitsearch.games"]``, each naming a module or a
:class:`~jitsearch.games.protocol.Game`), then the environment variable ``JITSEARCH_GAMES``, a
comma-separated list of module names or ``.py`` file paths. A plugin module registers its games
on import (:func:`register`) or defines ``GAME``; a plugin that fails to load is one
``ValueError`` line naming it.
"""

from __future__ import annotations

from .protocol import Game, check_game

#: name -> Game; the built-in games are added on first use of the registry (so that importing
#: one game's module, as the kernels do, does not import the others).
_GAMES: dict[str, Game] = {}
_LOADED = []
_PLUGINS_LOADED = []

#: The game a command, an agent or a page plays when none is named.
DEFAULT_GAME = "kalah"

#: Environment variable of the plugins: comma-separated module names or ``.py`` paths.
PLUGINS_ENV = "JITSEARCH_GAMES"


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


def _load_plugin(where: str, load) -> None:
    """Run ``load()`` (import a plugin); a ``Game`` it gives, or its module's ``GAME``, is registered."""
    import types

    try:
        got = load()
        if isinstance(got, types.ModuleType):
            got = getattr(got, "GAME", None)
        if isinstance(got, Game) and _GAMES.get(got.name) is not got:
            register(got)
    except Exception as exc:  # noqa: BLE001 - any failure of a user's module is one line naming it
        text = " ".join(str(exc).split()) or "no message"
        raise ValueError(f"game plugin {where} failed to load: {type(exc).__name__}: {text}") from None


def _import_path(path: str):
    import importlib.util
    import os
    import sys

    if not os.path.isfile(path):
        raise FileNotFoundError(f"no file {path}")
    name = "jitsearch_plugin_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_plugins() -> None:
    """Load the plugin games once a process: the ``jitsearch.games`` entry points, then the
    modules and ``.py`` files of ``$JITSEARCH_GAMES``; one-line ``ValueError`` naming a plugin
    that fails to load (the others loaded before it stay registered)."""
    import importlib
    import importlib.metadata
    import os

    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED.append(True)
    _registry()
    for ep in importlib.metadata.entry_points(group="jitsearch.games"):
        _load_plugin(f"{ep.name!r} (entry point {ep.value})", ep.load)
    for item in os.environ.get(PLUGINS_ENV, "").split(","):
        item = item.strip()
        if not item:
            continue
        if item.endswith(".py") or os.sep in item or "/" in item:
            _load_plugin(f"{item} ({PLUGINS_ENV})", lambda item=item: _import_path(item))
        else:
            _load_plugin(f"{item} ({PLUGINS_ENV})", lambda item=item: importlib.import_module(item))


def get(name: str) -> Game:
    """The registered game called ``name``; an unknown name loads the plugins (:func:`load_plugins`)
    once, then raises one-line ``ValueError``."""
    if isinstance(name, Game):
        return name
    games = _registry()
    if isinstance(name, str) and name not in games and not _PLUGINS_LOADED:
        load_plugins()
    try:
        return games[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(sorted(games))}") from None


def game_of(state) -> Game:
    """The registered game whose state class ``state`` is an instance of; else one-line ``ValueError``."""
    for game in _registry().values():
        if isinstance(state, game.State):
            return game
    raise ValueError(f"a state of a registered game is needed, got {type(state).__name__}")


def __getattr__(name: str):
    if name == "GAMES":  # the registry (name -> Game), built-in games loaded on first use
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_GAME", "GAMES", "Game", "game_of", "get", "load_plugins", "register"]

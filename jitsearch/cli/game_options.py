"""``--game`` and the variant options, declared once for every command.

A command takes ``--game NAME`` (a registered game, :func:`jitsearch.games.get`) and the game's
variant as ``--variant KEY=VALUE`` (repeatable; the keys and types are the game's
:attr:`~jitsearch.games.protocol.Game.variant`). The board flags commands had before
(``--houses``, ``--seeds``, ``--empty-capture``) stay as spellings of the variant options of the
same name; a flag the game has no option for is refused in one line.

    jitsearch play --game connect4 --variant width=8 --variant height=7
    jitsearch play --game kalah --houses 6 --seeds 5     # the same as -V houses=6 -V seeds=5
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..games import DEFAULT_GAME, get  # noqa: F401  (DEFAULT_GAME: the commands' default)
from ..games.protocol import Game
from ._support import UserError

GameOpt = Annotated[str, typer.Option("--game", help="The game: a registered name (kalah, oware, connect4, or "
                                                      "one added with jitsearch.games.register).")]
VariantOpt = Annotated[Optional[list[str]], typer.Option(
    "--variant", "-V", help="A variant option of the game, KEY=VALUE (repeatable): kalah houses, seeds, "
                            "empty_capture; oware houses, seeds, move_limit, grand_slam_illegal; connect4 width, "
                            "height.")]

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def resolve_game(name: str) -> Game:
    """The registered game called ``name``; an unknown one is a :class:`UserError`."""
    try:
        return get(name)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _parse(game: Game, key: str, text: str):
    kind = game.variant[key].type
    if kind is bool:
        low = text.strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
        raise UserError(f"--variant {key}={text}: {key} takes 0/1/true/false")
    try:
        return kind(text.strip())
    except ValueError:
        raise UserError(f"--variant {key}={text}: {key} takes {kind.__name__} values") from None


def resolve_variant(game: Game, pairs: list[str] | None = None, **flags) -> dict:
    """The game's full variant (defaults filled in) from ``--variant KEY=VALUE`` pairs and the
    board flags the user gave (``flags``: only those given, e.g. ``houses=6``). An unknown key, a
    bad value, a key given twice or a flag the game has no option for is a :class:`UserError`."""
    chosen: dict = {}
    for pair in pairs or ():
        key, eq, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise UserError(f"--variant {pair!r}: give KEY=VALUE")
        if key not in game.variant:
            raise UserError(f"{game.name} has no variant option {key!r}; its options: "
                            f"{', '.join(game.variant) or 'none'}")
        if key in chosen:
            raise UserError(f"--variant {key} is given twice")
        chosen[key] = _parse(game, key, value)
    for key, value in flags.items():
        if key not in game.variant:
            raise UserError(f"--{key.replace('_', '-')} does not apply to {game.name} (its variant options: "
                            f"{', '.join(game.variant) or 'none'})")
        if key in chosen and chosen[key] != value:
            raise UserError(f"--{key.replace('_', '-')} and --variant {key}= disagree")
        chosen[key] = value
    try:
        return game.check_variant(**chosen)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def initial_state(game: Game, variant: dict, position: str | None = None):
    """The start state of ``game`` (``position``: a text of its state class); a bad variant or
    text is a :class:`UserError`."""
    try:
        if position is not None:
            return game.from_text(position, **variant)
        return game.initial(**variant)
    except ValueError as exc:
        raise UserError(str(exc)) from None

"""``jitsearch engine``: one of our agents as a process speaking the engine
line protocol (:mod:`jitsearch.arena.engine_protocol`) on stdin and stdout."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._support import UserError
from .common import exit_interrupted_quietly
from .game_options import DEFAULT_GAME, GameOpt, VariantOpt, resolve_game, resolve_variant


def engine(
    agent: Annotated[str, typer.Option("--agent", help="The agent to serve: any spec, e.g. alphabeta:depth=8, "
                                                       "alphabeta:time=1, mcts:iterations=1000 (depth= with time=: "
                                                       "a timed search capped at that depth; iterations= with "
                                                       "time= is refused).")]
    = "alphabeta:time=1",
    seed: Annotated[
        Optional[int], typer.Option("--seed", help="Seed of each game's agent (a 'seed' request overrides it).",
                                    show_default=False)
    ] = None,
    name: Annotated[
        Optional[str], typer.Option("--name", help="The name 'hello' answers (default: jitsearch SPEC).",
                                    show_default=False)
    ] = None,
    game: GameOpt = DEFAULT_GAME,
    variant: VariantOpt = None,
):
    """Serve an agent over the engine protocol: one request a line on stdin, one answer a line on stdout.

    Requests: hello, game NAME KEY=VALUE..., seed S, position TEXT [moves M ...],
    go MS, quit (see docs/engine-protocol.md); the older Kalah and Oware lines
    (game M N standard|empty-capture|grand-slam-illegal) are taken too. A bad
    request is answered 'error ...' and the engine keeps running (a line has at
    most 10,000 characters). An agent whose search would not fit in memory on
    the game's board (--variant, default: the game's defaults) is refused
    before serving. End of input exits 0, quit exits 0, Ctrl-C exits 130 quietly.
    """
    from ..arena.engine_protocol import serve_stdio

    g = resolve_game(game)
    board = resolve_variant(g, variant)
    try:
        code = serve_stdio(agent, seed=seed, name=name, game=g.name, variant=board)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        exit_interrupted_quietly()
    raise typer.Exit(code)

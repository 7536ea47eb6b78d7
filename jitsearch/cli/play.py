"""``jitsearch play``: any registered game in the terminal, people against engines or engines
against each other. The board, the move names and what a person types are the game's
(:class:`~jitsearch.games.protocol.TextUI`)."""

from __future__ import annotations

import re
from typing import Annotated, Optional

import typer
from rich.text import Text

from ._support import UserError, check_positive
from .common import agent_for, check_agent_for, check_spec_for, emit_json, stderr, stop_interrupted, stdout
from .game_options import DEFAULT_GAME, GameOpt, VariantOpt, initial_state, resolve_game, resolve_variant

#: Colours of the two sides on the board (rich styles); the last move is shown reversed.
SIDE_STYLES = ("bold cyan", "bold magenta")
#: The styles of a board's markup (:class:`~jitsearch.games.protocol.TextUI`) as rich styles.
BOARD_STYLES = {"p0": SIDE_STYLES[0], "p1": SIDE_STYLES[1], "last": "reverse", "dim": "dim",
                "underline": "underline", "italic": "italic"}
#: Plies a game without a bound of its own (Kalah) is cut at, unless --max-plies says otherwise.
DEFAULT_MAX_PLIES = 300


def _spec_error(option: str, spec: str, exc: Exception) -> str:
    """``--p0 SPEC: why``, the spec said once (the agents' errors may begin with it)."""
    text = str(exc)
    if option in text:
        return text
    if text.startswith(spec.strip() + ":"):
        return f"{option} {text}"
    return f"{option} {spec}: {text}"


def _text_ui(game):
    """The game's text forms, or plain ones (its text form, moves as numbers) when it has none."""
    if game.ui is not None:
        return game.ui

    def parse(state, text):
        try:
            move = int(text)
        except ValueError:
            move = None
        if move not in state.legal_moves():
            raise ValueError(f"type one of {' '.join(map(str, state.legal_moves()))}")
        return move

    from ..games.protocol import TextUI

    return TextUI(board=lambda s, last=None, markup=False: s.to_text(), move_name=lambda s, m: f"plays {m}",
                  ask=lambda s: "a move", parse_move=parse, board_json=lambda s: {"text": s.to_text()})


def render_board(game, state, last=None) -> Text:
    """``state``'s board as the game draws it, coloured (a rich ``Text``; ``last``: the move just played)."""
    markup = _text_ui(game).board(state, last, True)

    def style(m):
        return f"[{m.group(1)}{BOARD_STYLES.get(m.group(2), m.group(2))}]"

    return Text.from_markup(re.sub(r"\[(/?)(\w+)\]", style, markup))


def result_json(game, moves, final) -> dict:
    """What ``--json`` prints: the moves, the final text, margin (player 0's), result, plies,
    ``finished``, ``final_board`` and the game's drawing fields of the final position."""
    drawn = _text_ui(game).board_json(final)
    return {**drawn, "game": game.name, "moves": [int(m) for m in moves], "final": final.to_text(),
            "final_board": drawn.get("board"), "margin": final.margin, "result": final.result, "plies": len(moves),
            "finished": final.is_over}


def play(
    game_name: GameOpt = DEFAULT_GAME,
    variant: VariantOpt = None,
    p0: Annotated[str, typer.Option("--p0", help="Player 0: human, random, alphabeta:depth=8, mcts:iterations=N, "
                                                 "...")] = "human",
    p1: Annotated[str, typer.Option("--p1", help="Player 1 (same specs).")] = "alphabeta:depth=8",
    houses: Annotated[Optional[int], typer.Option("--houses", help="Kalah, Oware: houses per side (-V houses=).",
                                                  show_default=False)] = None,
    seeds: Annotated[Optional[int], typer.Option("--seeds", help="Kalah, Oware: seeds per house (-V seeds=).",
                                                 show_default=False)] = None,
    empty_capture: Annotated[bool, typer.Option("--empty-capture", help="Kalah: the empty-capture rule "
                                                                      "(-V empty_capture=1).")] = False,
    position: Annotated[Optional[str], typer.Option("--position", help="Start from this position (the game's "
                                                                       "text form).")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for random agents.")] = None,
    max_plies: Annotated[Optional[int], typer.Option(
        "--max-plies", help=f"Stop after this many plies [default: {DEFAULT_MAX_PLIES} for a game without an end "
                            "of its own (Kalah), else none].", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (moves, final, margin, result, "
                                                         "final_board).")] = False,
):
    """Play any game (--game kalah, oware, connect4, ...) in the terminal: people against engines, or engines
    against each other.

    The variant is --variant KEY=VALUE (repeatable); --houses, --seeds and
    --empty-capture are spellings of the variant options of those names.
    A person types the move as the game names it (a house number, a
    letter, a column); a bad one is asked again.

    Ctrl-C stops the game within a second, even in the middle of an
    engine's search: the moves played so far are printed (with --json, the
    result with "interrupted": true) and the exit status is 130.
    """
    check_positive({"--max-plies": max_plies})
    game = resolve_game(game_name)
    flags = {k: v for k, v in (("houses", houses), ("seeds", seeds)) if v is not None}
    if empty_capture:
        flags["empty_capture"] = True
    chosen = resolve_variant(game, variant, **flags)
    specs = (("--p0", p0), ("--p1", p1))
    agents = []
    for i, (option, spec) in enumerate(specs):
        if spec.strip() == "human":
            agents.append(None)
            continue
        try:
            check_spec_for(game.name, spec, chosen, position is not None)
            agents.append(agent_for(game.name, spec, None if seed is None else seed + i))
        except ValueError as exc:
            raise UserError(_spec_error(option, spec, exc)) from None
    if as_json and None in agents:
        raise UserError("--json needs two engine players (no human)")
    state = initial_state(game, chosen, position)
    if state.is_over:
        raise UserError("the position is already finished")
    for (option, spec), a in zip(specs, agents):
        if a is not None:
            try:
                check_agent_for(game.name, a, state, chosen)
            except ValueError as exc:
                raise UserError(_spec_error(option, spec, exc)) from None
    if max_plies is None and game.max_plies < 0:
        max_plies = DEFAULT_MAX_PLIES
    ui = _text_ui(game)
    last = {"move": None}

    def human(st):
        stdout.print(render_board(game, st, last["move"]))
        while True:
            try:
                text = input(f"player {st.player}, {ui.ask(st)} (q quits): ").strip()
            except EOFError:
                raise UserError("input ended before the game did") from None
            if text.lower() in ("q", "quit", "exit"):
                raise typer.Exit(0)
            try:
                return ui.parse_move(st, text)
            except ValueError as exc:
                stdout.print(f"  {exc}")

    players = [human if a is None else a for a in agents]
    played = []  # (move, position after it): what a Ctrl-C or a forfeit prints

    def on_move(before, move, after, agent):
        last["move"] = move
        if as_json:
            return
        info = getattr(agent, "last", None) or {}
        extra = f" (depth {info.get('depth', '?')}, value {info['value']})" if "value" in info else ""
        if info.get("exact") is True and isinstance(info.get("margin"), int):  # the engine proved the game
            extra = f" (proven: final margin {info['margin']:+d} for the mover)"
        stdout.print(f"player {before.player} {ui.move_name(before, move)}{extra}")
        if human not in players or after.is_over:
            stdout.print(render_board(game, after, move))

    from ..arena.external_engine import Forfeit

    try:
        final = _play_out(state, players, max_plies, played, on_move)
    except Forfeit as lost:  # an external (cmd:) engine that timed out, moved illegally or crashed
        final = played[-1][1] if played else state
        if as_json:
            emit_json({**result_json(game, [m for m, _ in played], final), "termination": lost.termination,
                       "detail": lost.detail})
        stderr.print(f"error: player {final.player} ({[p0, p1][final.player]}) loses by {lost}", soft_wrap=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        final = played[-1][1] if played else state
        if as_json:
            emit_json({**result_json(game, [m for m, _ in played], final), "interrupted": True})
        stop_interrupted(f"the game was stopped after {len(played)} plies")
    result = result_json(game, [m for m, _ in played], final)
    if as_json:
        emit_json(result)
        return
    stdout.print(f"result: {result['result'] or 'unfinished'}, margin {result['margin']:+d} after "
                 f"{result['plies']} plies")


def _play_out(state, players, max_plies, played, on_move):
    """Play ``state`` to the end (or ``max_plies``) with two callables state -> move; appends
    ``(move, after)`` to ``played``. Agents that keep a game of their own (OpenSpiel bots, external
    engines) are told the start (``begin``) and every move (``observe``)."""
    keepers = {id(a): a for a in players}.values()
    for a in keepers:
        if hasattr(a, "begin"):
            a.begin(state)
    while not state.is_over and (max_plies is None or len(played) < max_plies):
        agent = players[state.player]
        move = int(agent(state))
        if move not in state.legal_moves():
            raise RuntimeError(f"agent {agent} chose an illegal move {move} in {state.to_text()}")
        before, state = state, state.play(move)
        played.append((move, state))
        for a in keepers:
            if hasattr(a, "observe"):
                a.observe(move)
        on_move(before, move, state, agent)
    return state

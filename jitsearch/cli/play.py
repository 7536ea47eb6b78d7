"""``jitsearch play``: Kalah (or Oware, ``--game oware``) in the terminal,
people against engines or engines against each other."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._support import UserError, check_positive
from .common import emit_json, kalah_state, stderr, stop_interrupted, stdout

#: Colours of the two sides on the board (rich styles); the last sown house is shown reversed.
SIDE_STYLES = ("bold cyan", "bold magenta")


def kalah_board(state, last: int | None = None):
    """The board as a rich table, as the players see it: player 1's houses on
    top (numbered from its left, so right to left here) and its store on the
    left, player 0's houses below and its store on the right, each side in its
    colour; ``last`` (a pit) is the house just sown. A rich renderable."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    m, b = state.houses, state.board

    def pit(i, player):
        style = SIDE_STYLES[player] + (" reverse" if i == last else "")
        return Text(f"{int(b[i]):>2}", style=style)

    who = "game over" if state.is_over else f"player {state.player} to move"
    table = Table(show_header=False, box=None, padding=(0, 1))
    for _ in range(m + 2):
        table.add_column(justify="right")
    mover = None if state.is_over else state.player
    tag = [Text("p0 >" if mover == 0 else "p0", style=SIDE_STYLES[0]),
           Text("p1 >" if mover == 1 else "p1", style=SIDE_STYLES[1])]
    table.add_row(tag[1], *[Text(str(i), style="dim") for i in range(m, 0, -1)], "")
    table.add_row("", *[pit(i, 1) for i in range(2 * m + 1, m + 1, -1)], "")
    table.add_row(Text(f"{int(b[0]):>2}", style=SIDE_STYLES[1] + " underline"), *[""] * m,
                  Text(f"{int(b[m + 1]):>2}", style=SIDE_STYLES[0] + " underline"))
    table.add_row("", *[pit(i, 0) for i in range(1, m + 1)], "")
    table.add_row(tag[0], *[Text(str(i), style="dim") for i in range(1, m + 1)], "")
    return Group(table, Text(f"  {who}; margin {state.margin:+d}", style="italic"))


def play(
    game: Annotated[str, typer.Option("--game", help="Game: kalah or oware (agents: random, alphabeta:depth=N|"
                                                     "time=S, fsss:depth=N|time=S, mc:playouts=N, "
                                                     "mcts:iterations=N|time=S).")] = "kalah",
    p0: Annotated[str, typer.Option("--p0", help="Player 0: human, random, alphabeta:depth=8, fsss:depth=5, ...")]
    = "human",
    p1: Annotated[str, typer.Option("--p1", help="Player 1 (same specs).")] = "alphabeta:depth=8",
    houses: Annotated[int, typer.Option("--houses", help="Houses per side (m).")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per house (n).")] = 4,
    empty_capture: Annotated[bool, typer.Option("--empty-capture", help="Kalah: the empty-capture rule variant "
                                                                      "(refused with --game oware).")] = False,
    position: Annotated[Optional[str], typer.Option("--position", help="Start from this position.")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for random agents.")] = None,
    max_plies: Annotated[int, typer.Option("--max-plies", help="Kalah: stop after this many plies (refused with "
                                                               "--game oware, whose games end by its own rules).")]
    = 300,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (moves, final_board, margin).")]
    = False,
):
    """Play Kalah or Oware (--game oware) in the terminal: people against engines, or engines against each other.

    Both games take --houses, --seeds, --position, --seed and --json;
    --empty-capture and --max-plies are Kalah's and refused for Oware.

    Ctrl-C stops the game within a second, even in the middle of an
    engine's search: the moves played so far are printed (with --json, the
    result with "interrupted": true) and the exit status is 130.
    """
    check_positive({"--max-plies": max_plies})
    if game not in ("kalah", "oware"):
        raise UserError(f"--game must be kalah or oware, got {game!r}")
    if game == "oware":
        if empty_capture or max_plies != 300:
            raise UserError(f"{'--empty-capture' if empty_capture else '--max-plies'} does not apply to --game oware")
        _play_oware(p0, p1, houses, seeds, position, seed, as_json)
        return
    from ..arena.agents import agent_kind, game_result, parse_agent, play_game
    from ..arena.external_engine import Forfeit
    from ..arena.openspiel_agents import OpenSpielAgent

    for option, spec in (("--p0", p0), ("--p1", p1)):
        if agent_kind(spec) == "openspiel":  # told by the spec, whether OpenSpiel is installed or not
            if position is not None:
                raise UserError(f"{option} {spec}: an openspiel agent plays from the start of Kalah(6,4) only "
                                "(OpenSpiel reaches a position by its moves), not from --position")
            try:
                OpenSpielAgent.check_match(houses, seeds, empty_capture)
            except ValueError as exc:
                raise UserError(f"{option} {spec}: {exc}") from None
    agents = [parse_agent(p0, seed=seed), parse_agent(p1, seed=None if seed is None else seed + 1)]
    if as_json and any(a.kind == "human" for a in agents):
        raise UserError("--json needs two engine players (no human)")
    state = kalah_state(houses, seeds, empty_capture, position)
    if state.is_over:
        raise UserError("the position is already finished")
    for option, a in zip(("--p0", "--p1"), agents):
        if hasattr(a, "check_match") and a.kind != "openspiel":
            try:
                a.check_match(state.houses, seeds, state.empty_capture, position=state)
            except ValueError as exc:
                raise UserError(f"{option} {a}: {exc}") from None

    last = {"pit": None}

    def human(st):
        stdout.print(kalah_board(st, last["pit"]))
        while True:
            try:
                text = input(f"player {st.player}, house 1-{st.houses} (q quits): ").strip()
            except EOFError:
                raise UserError("input ended before the game did") from None
            if text.lower() in ("q", "quit", "exit"):
                raise typer.Exit(0)
            try:
                pit = st.house_number_to_pit(int(text))
            except ValueError:
                stdout.print(f"  type a number from 1 to {st.houses}")
                continue
            if pit not in st.legal_moves():
                stdout.print("  that house is empty")
                continue
            return pit

    for i, a in enumerate(agents):
        if a.kind == "human":
            agents[i] = human

    def on_move(before, pit, after, agent):
        last["pit"] = pit
        if as_json:
            return
        number = pit if before.player == 0 else pit - before.houses - 1
        info = getattr(agent, "last", None) or {}
        extra = f" ({info.get('depth', '')} plies, value {info.get('value')})" if "value" in info else ""
        if info.get("exact") is True and isinstance(info.get("margin"), int):  # the engine proved the game
            extra = f" (proven: final margin {info['margin']:+d} for the mover)"
        stdout.print(f"player {before.player} sows house {number} (pit {pit}){extra}")
        if not any(getattr(x, "kind", "human") == "human" for x in agents) or after.is_over:
            stdout.print(kalah_board(after, pit))

    played = []

    def on_move_kept(before, pit, after, agent):
        played.append((pit, after))
        on_move(before, pit, after, agent)

    try:
        result = play_game(state, agents, max_plies=max_plies, on_move=on_move_kept)
    except Forfeit as lost:  # an external (cmd:) engine that timed out, moved illegally or crashed
        final = played[-1][1] if played else state
        if as_json:
            emit_json({**game_result([pit for pit, _ in played], final), "termination": lost.termination,
                       "detail": lost.detail})
        stderr.print(f"error: player {final.player} ({[p0, p1][final.player]}) loses by {lost}", soft_wrap=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        final = played[-1][1] if played else state
        if as_json:
            emit_json({**game_result([pit for pit, _ in played], final), "interrupted": True})
        stop_interrupted(f"the game was stopped after {len(played)} plies")
    if as_json:
        emit_json(result)
        return
    stdout.print(f"result: {result['result'] or 'unfinished'}, margin {result['margin']:+d} after {result['plies']} plies")


def _play_oware(p0, p1, houses, seeds, position, seed, as_json):
    from ..arena.oware_arena import parse_oware_agent, play_oware_game
    from ..games.oware import OwareState

    try:
        state = OwareState.from_text(position) if position is not None else OwareState.initial(houses, seeds)
        agents = [None if spec == "human" else parse_oware_agent(spec, None if seed is None else seed + i)
                  for i, spec in enumerate((p0, p1))]
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if state.is_over:
        raise UserError("the position is already finished")
    if as_json and None in agents:
        raise UserError("--json needs two engine players (no human)")

    def human(st):
        stdout.print(st.ascii())
        letters = "ABCDEFGHIJKL"[:st.houses] if st.player == 0 else "abcdefghijkl"[:st.houses]
        while True:
            try:
                text = input(f"player {st.player}, house {letters[0]}-{letters[-1]} (q quits): ").strip()
            except EOFError:
                raise UserError("input ended before the game did") from None
            if text.lower() in ("q", "quit", "exit"):
                raise typer.Exit(0)
            if len(text) != 1 or text not in letters:
                stdout.print(f"  type one of {' '.join(letters)}")
                continue
            house = st.house_of(letters.index(text))
            if house not in st.legal_moves():
                stdout.print("  not a legal move (empty, or it does not feed the opponent)")
                continue
            return house

    agents = [human if a is None else a for a in agents]

    played = []  # (house, position after it): what a Ctrl-C prints

    def on_move(before, house, after, agent):
        played.append((int(house), after))
        if as_json:
            return
        letter = chr((ord("A") if before.player == 0 else ord("a")) + before.action_of(house))
        last = getattr(agent, "last", None) or {}
        extra = f" (depth {last['depth']}, value {last['value']:+.2f})" if "depth" in last else ""
        stdout.print(f"player {before.player} sows {letter} (house {house}){extra}")
        if after.is_over or human not in agents:
            stdout.print(after.ascii())

    try:
        result = play_oware_game(state, agents, on_move=on_move)
    except KeyboardInterrupt:
        if as_json:
            final = played[-1][1] if played else state
            emit_json({"moves": [h for h, _ in played], "final": final.to_text(), "scores": list(final.scores),
                       "margin": final.margin, "result": final.result, "plies": len(played), "interrupted": True})
        stop_interrupted(f"the game was stopped after {len(played)} plies")
    if as_json:
        emit_json(result)
        return
    stdout.print(f"result: {result['result']}, scores {result['scores'][0]}-{result['scores'][1]} after "
                 f"{result['plies']} plies")

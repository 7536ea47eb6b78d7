"""``jitsearch analyse``: MCTS analysis of many positions of any registered game in one launch."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ._support import (UserError, check_output_file, check_positive, check_seconds, given_options, refuse_options,
                       timed, write_text_atomic)
from .common import emit_json, json_safe, parse_bytes, stop_interrupted, stdout
from .game_options import DEFAULT_GAME, GameOpt, VariantOpt, initial_state, resolve_game, resolve_variant

#: Longest position line read, in bytes (a longer one is refused, not read into memory).
MAX_LINE = 4096
#: Random playouts per leaf when --playouts is not given.
DEFAULT_PLAYOUTS = 8
#: Board flags (spellings of variant options) a positions file fixes itself: refused beside a file.
FILE_FIXES = ("houses", "seeds")


def _read_positions(path: Path, game, variant: dict):
    """(line number, state) for each position line of ``path`` (``-``: stdin; blank lines and ``#``
    comments skipped), read with the game's text form; a bad line is one ``FILE:LINE:`` error."""
    import contextlib
    import sys

    from ..mcts.config import MAX_TREES

    if str(path) == "-":
        fh = contextlib.nullcontext(sys.stdin.buffer)  # not closed: stdin is not ours
        path = "<stdin>"
    else:
        try:
            fh = open(path, "rb")  # decoded line by line, so a bad byte is reported on its own line
        except OSError as exc:
            raise UserError(f"{path}: {exc.strerror or exc}") from None
    found: list = []
    number = 0
    with fh as fh:
        while True:
            number += 1
            try:
                data = fh.readline(MAX_LINE + 2)  # bounded: a huge line is refused, not read into memory
            except OSError as exc:
                raise UserError(f"{path}: {exc.strerror or exc}") from None
            if not data:
                break
            if len(data) > MAX_LINE and not data.endswith(b"\n"):
                raise UserError(f"{path}:{number}: line longer than {MAX_LINE} bytes")
            try:
                raw = data.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte-order mark is allowed
            except UnicodeDecodeError:
                raise UserError(f"{path}:{number}: not UTF-8 text") from None
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            try:
                state = game.from_text(text, **variant)
            except ValueError as exc:
                raise UserError(f"{path}:{number}: {exc}") from None
            if state.is_over:
                raise UserError(f"{path}:{number}: the game is over in this position ('end'): no move to analyse")
            if not state.legal_moves():
                raise UserError(f"{path}:{number}: the player to move has no legal move")
            if found and game.cfg(state) != game.cfg(found[0][1]):
                raise UserError(f"{path}:{number}: {_shown(game, state)} but line {found[0][0]} has "
                                f"{_shown(game, found[0][1])}: analyse one board size per file")
            if len(found) >= MAX_TREES:
                raise UserError(f"{path}:{number}: more than {MAX_TREES:,} positions (one launch's limit); "
                                "split the file")
            found.append((number, state))
    if not found:
        raise UserError(f"{path}: no positions (one a line, e.g. '{game.initial().to_text()}')")
    return found


def _fixed(game, state) -> dict:
    """The variant options a position shows itself (its drawing's fields named as options: Kalah's houses
    and rule, Connect Four's width and height)."""
    drawn = game.ui.board_json(state) if game.ui is not None else {}
    return {k: drawn[k] for k in game.variant if k in drawn}


def _shown(game, state) -> str:
    words = [f"{v} {k.replace('_', ' ')}" if not isinstance(v, bool) else k.replace("_", " ")
             for k, v in _fixed(game, state).items() if v is not False]
    return ", ".join(words) or state.to_text()


def analyse(
    ctx: typer.Context,
    positions_file: Annotated[
        Optional[Path], typer.Argument(metavar="POSITIONS_FILE", help="Positions, one a line in the game's text form "
                                       "(Kalah: 4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0; Oware: 4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0; "
                                       "Connect Four: 4455 or its board), '-' for stdin; blank lines and lines "
                                       "starting with # are skipped. Without a file: the start position of the "
                                       "variant.", show_default=False)
    ] = None,
    game_name: GameOpt = DEFAULT_GAME,
    variant: VariantOpt = None,
    houses: Annotated[Optional[int], typer.Option("--houses", help="Without POSITIONS_FILE: houses per side "
                                                  "(-V houses=).", show_default=False)] = None,
    seeds: Annotated[Optional[int], typer.Option("--seeds", help="Without POSITIONS_FILE: seeds per house "
                                                 "(-V seeds=).", show_default=False)] = None,
    empty_capture: Annotated[
        bool, typer.Option("--empty-capture", help="Kalah: capture even when the opposite house is empty "
                                                   "(-V empty_capture=1).")
    ] = False,
    iterations: Annotated[
        Optional[int], typer.Option("--iterations", help="MCTS iterations per position [default: 2000].",
                                    show_default=False)
    ] = None,
    time_limit: Annotated[
        Optional[float], typer.Option("--time", help="Seconds for the whole batch instead of --iterations.")
    ] = None,
    playouts: Annotated[
        Optional[int], typer.Option("--playouts", help=f"Random playouts per leaf [default: {DEFAULT_PLAYOUTS}].",
                                    show_default=False)
    ] = None,
    leaves: Annotated[
        Optional[int], typer.Option("--leaves", help="Leaves per step of a tree [default: 8 on cuda, 1 on cpu].",
                                    show_default=False)
    ] = None,
    c: Annotated[float, typer.Option("--c", help="UCT exploration constant.")] = math.sqrt(2),
    formula: Annotated[str, typer.Option("--formula", help="UCT formula: ucb1, sqrt or sqrtlog.")] = "ucb1",
    reward: Annotated[str, typer.Option("--reward", help="Playout reward: win, or heuristic (Kalah's HMCTS "
                                                         "store difference).")] = "win",
    backend: Annotated[str, typer.Option("--backend", help="auto, cpu or cuda.")] = "auto",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the trees' random streams.")] = 0,
    max_memory: Annotated[
        str, typer.Option("--max-memory", help="Refuse trees larger than this (e.g. 2GiB).")
    ] = "2GiB",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result to this file.")] = None,
):
    """MCTS analysis of many positions of any game (--game kalah, oware, connect4, ...) in one launch: best move,
    visits and value of every move.

    One tree per position, all grown together (one thread block each on a
    GPU, all cores on the CPU). A move's value is the mean reward (win 1,
    draw 1/2, loss 0) of the player to move; moves are the game's move
    numbers. Ctrl-C stops the search, prints what the trees hold and exits
    with status 130.
    """
    game = resolve_game(game_name)
    given = given_options(ctx)
    if positions_file is not None:
        refuse_options(given, FILE_FIXES, "gives the start position when no POSITIONS_FILE is given; drop it or "
                                          "the file")
    flags = {k: v for k, v in (("houses", houses), ("seeds", seeds)) if v is not None}
    if empty_capture:
        flags["empty_capture"] = True
    chosen = resolve_variant(game, variant, **flags)
    if reward not in ("win", "heuristic"):
        raise UserError(f"--reward must be win or heuristic, got {reward!r}")
    heuristic = reward == "heuristic"
    if heuristic and not game.config_agents:  # MERGE: the generic MCTS's evaluation options
        raise UserError(f"--reward does not apply to --game {game.name} (its playouts score win, draw or loss)")
    if playouts is None:
        playouts = DEFAULT_PLAYOUTS
    if iterations is not None and time_limit is not None:
        raise UserError("give --iterations or --time, not both")
    check_seconds(time_limit, "--time")
    check_positive({"--iterations": iterations, "--playouts": playouts, "--leaves": leaves})
    if not 0 <= seed < 2**64:
        raise UserError(f"--seed must lie in [0, 2**64), got {seed}")
    max_bytes = parse_bytes(max_memory)
    if out is not None:
        check_output_file(out)
    if time_limit is None and iterations is None:
        iterations = 2000
    if positions_file is None:
        found = [(None, initial_state(game, chosen))]
    else:
        found = _read_positions(positions_file, game, chosen)
    states = [s for _, s in found]
    options = dict(c=c, formula=formula, playouts=playouts, leaves=leaves, backend=backend, max_bytes=max_bytes,
                   memory_hint="lower --iterations (or --time), analyse fewer positions or raise --max-memory")
    if heuristic:
        from ..mcts.game import analyse_positions as search

        options["reward"] = reward
    else:
        from ..mcts.game import analyse_game

        def search(states, **kw):
            hint = kw.pop("memory_hint")
            try:
                return analyse_game(game, states, **kw)
            except ValueError as exc:  # the library's hint names its arguments; the command's, its options
                text = str(exc)
                raise ValueError(text.rsplit(": ", 1)[0] + ": " + hint if "above the limit" in text else text) \
                    from None

    def run():
        # compile (or load) the kernel first, so that neither the time budget nor `seconds` pays for it
        try:
            warm = search(states[:1], iterations=1, seed=seed, **options)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if warm["interrupted"]:
            return warm, True
        return search(states, iterations=iterations, time=time_limit, seed=seed, **options), False

    (r, warm_only), _, jit_seconds = timed(run)
    if warm_only:
        stop_interrupted("before the search started; nothing to show")
    seconds = r["seconds"]
    result = {
        **{k: v for k, v in chosen.items() if k not in FILE_FIXES or positions_file is None},
        **_fixed(game, states[0]), "game": game.name,
        "file": None if positions_file is None else str(positions_file),
        "positions": [{"line": number, "position": state.to_text(), "player": state.player, **pos}
                      for (number, state), pos in zip(found, r["positions"])],
        "iterations": r["iterations"], "playouts": r["playouts"], "leaves": r["leaves"],
        "playouts_total": r["playouts_total"], "seconds": seconds, "compile_seconds": jit_seconds,
        "positions_per_second": len(states) / seconds if seconds > 0 else None, "backend": r["backend"],
        "c": c, "formula": formula, "reward": reward, "seed": seed, "interrupted": r["interrupted"],
        "title": f"{game.name.capitalize()}, {_shown(game, states[0])}",
    }
    if out is not None:
        write_text_atomic(out, json.dumps(json_safe(result), indent=2) + "\n")
    if as_json:
        emit_json(result)
    else:
        _print_analysis(result)
    if r["interrupted"]:
        stop_interrupted(f"after {r['iterations']:,} iterations per position; the figures above are from those")


def _print_analysis(result: dict) -> None:
    table = Table(title=f"{result['title']}: {len(result['positions']):,} positions, "
                        f"{result['iterations']:,} iterations x {result['playouts']} playouts each "
                        f"({result['backend']})")
    for col, justify in (("line", "right"), ("position", "left"), ("best", "right"), ("move", "right"),
                         ("visits", "right"), ("value", "right")):
        table.add_column(col, justify=justify)
    for pos in result["positions"]:
        kids = pos["children"]
        col = {k: "\n".join(f(ch) for ch in kids) for k, f in (
            ("move", lambda ch: f"{'*' if ch['move'] == pos['move'] else ''}{ch['move']}"),
            ("visits", lambda ch: f"{ch['visits']:,}"),
            ("value", lambda ch: "-" if ch["value"] is None else f"{ch['value']:.3f}"))}
        line = "-" if pos["line"] is None else str(pos["line"])
        table.add_row(line, pos["position"], str(pos["move"]), col["move"], col["visits"], col["value"])
    pps = result["positions_per_second"]
    stdout.print(table)
    reward = "the heuristic, in [0, 1]" if result["reward"] == "heuristic" else "win 1, draw 1/2, loss 0"
    stdout.print(f"* best move; value: the player to move's mean reward ({reward}). "
                 f"{result['seconds']:.3f} s, {'-' if pps is None else f'{pps:,.1f}'} positions/s, "
                 f"{result['playouts_total']:,} playouts")

"""``jitsearch analyse``: MCTS analysis of many Kalah or Oware positions in one launch."""

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


_POSITION_EXAMPLE = "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0"
_OWARE_EXAMPLE = "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0"
#: analyse options that do not apply to --game oware, and those that only Oware has.
NOT_FOR_OWARE = ("reward", "empty_capture")
ONLY_OWARE = ("houses", "seeds")


def _read_positions(path: Path, empty_capture: bool, game: str = "kalah"):
    """(line number, state) for each position line of ``path`` (``-``: stdin;
    blank lines and ``#`` comments skipped); a bad line is one ``FILE:LINE:``
    error."""
    import contextlib
    import sys

    from ..games.kalah import MAX_TEXT, KalahState
    from ..games.oware import OwareState
    from ..mcts.config import MAX_TREES

    if game == "oware":
        parse = OwareState.from_text
        example = _OWARE_EXAMPLE
    else:
        def parse(text):
            return KalahState.from_text(text, empty_capture=empty_capture)
        example = _POSITION_EXAMPLE
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
                data = fh.readline(MAX_TEXT + 2)  # bounded: a huge line is refused, not read into memory
            except OSError as exc:
                raise UserError(f"{path}: {exc.strerror or exc}") from None
            if not data:
                break
            if len(data) > MAX_TEXT and not data.endswith(b"\n"):
                raise UserError(f"{path}:{number}: line longer than {MAX_TEXT} bytes")
            try:
                raw = data.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte-order mark is allowed
            except UnicodeDecodeError:
                raise UserError(f"{path}:{number}: not UTF-8 text") from None
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            try:
                state = parse(text)
            except ValueError as exc:
                raise UserError(f"{path}:{number}: {exc}") from None
            if state.is_over:
                raise UserError(f"{path}:{number}: the game is over in this position ('end'): no move to analyse")
            if found and state.houses != found[0][1].houses:
                raise UserError(f"{path}:{number}: {state.houses} houses per side, but line {found[0][0]} has "
                                f"{found[0][1].houses}: analyse one board size per file")
            if len(found) >= MAX_TREES:
                raise UserError(f"{path}:{number}: more than {MAX_TREES:,} positions (one launch's limit); "
                                "split the file")
            found.append((number, state))
    if not found:
        raise UserError(f"{path}: no positions (one a line, e.g. '{example}')")
    return found


def analyse(
    ctx: typer.Context,
    positions_file: Annotated[
        Optional[Path], typer.Argument(metavar="POSITIONS_FILE", help=f"Positions, one a line in the game's text form "
                                       f"(Kalah: {_POSITION_EXAMPLE}; Oware: {_OWARE_EXAMPLE}), '-' for stdin; "
                                       "blank lines and lines starting with # are skipped. Oware without a file: "
                                       "the start position of --houses/--seeds.", show_default=False)
    ] = None,
    game: Annotated[str, typer.Option("--game", help="Game: kalah or oware.")] = "kalah",
    houses: Annotated[int, typer.Option("--houses", help="Oware without POSITIONS_FILE: houses per side.")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="Oware without POSITIONS_FILE: seeds per house.")] = 4,
    iterations: Annotated[
        Optional[int], typer.Option("--iterations", help="MCTS iterations per position [default: 2000].",
                                    show_default=False)
    ] = None,
    time_limit: Annotated[
        Optional[float], typer.Option("--time", help="Seconds for the whole batch instead of --iterations.")
    ] = None,
    playouts: Annotated[
        Optional[int], typer.Option("--playouts", help="Random playouts per leaf [default: 32 Kalah, 8 Oware].",
                                    show_default=False)
    ] = None,
    leaves: Annotated[
        Optional[int], typer.Option("--leaves", help="Leaves per step of a tree [default: 8 on cuda, 1 on cpu].",
                                    show_default=False)
    ] = None,
    c: Annotated[float, typer.Option("--c", help="UCT exploration constant.")] = math.sqrt(2),
    formula: Annotated[str, typer.Option("--formula", help="UCT formula: ucb1, sqrt or sqrtlog.")] = "ucb1",
    reward: Annotated[str, typer.Option("--reward", help="Playout reward: win or heuristic (HMCTS).")] = "win",
    empty_capture: Annotated[
        bool, typer.Option("--empty-capture", help="Capture even when the opposite house is empty.")
    ] = False,
    backend: Annotated[str, typer.Option("--backend", help="auto, cpu or cuda.")] = "auto",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the trees' random streams.")] = 0,
    max_memory: Annotated[
        str, typer.Option("--max-memory", help="Refuse trees larger than this (e.g. 2GiB).")
    ] = "2GiB",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result to this file.")] = None,
):
    """MCTS analysis of many Kalah or Oware positions in one launch: best move, visits and value of every move.

    One tree per position, all grown together (one thread block each on a
    GPU, all cores on the CPU). A move's value is the mean reward (win 1,
    draw 1/2, loss 0) of the player to move; moves are pit (house) indices.
    Ctrl-C stops the search, prints what the trees hold and exits with
    status 130.
    """
    from ..mcts.multi import analyse_positions

    if game not in ("kalah", "oware"):
        raise UserError(f"--game must be kalah or oware, got {game!r}")
    given = given_options(ctx)
    if game == "oware":
        refuse_options(given, NOT_FOR_OWARE, "does not apply to --game oware")
        if positions_file is not None:
            refuse_options(given, ONLY_OWARE, "gives the start position when no POSITIONS_FILE is given; "
                                              "drop it or the file")
    else:
        refuse_options(given, ONLY_OWARE, "applies only to --game oware without POSITIONS_FILE")
        if positions_file is None:
            raise UserError("missing POSITIONS_FILE: the Kalah positions to analyse, one a line ('-' for stdin)")
    if playouts is None:
        playouts = 8 if game == "oware" else 32
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
    if game == "oware":
        _analyse_oware(positions_file, houses, seeds, iterations=iterations, time_limit=time_limit,
                       playouts=playouts, leaves=leaves, c=c, formula=formula, backend=backend, seed=seed,
                       max_bytes=max_bytes, as_json=as_json, out=out)
        return
    found = _read_positions(positions_file, empty_capture)
    states = [s for _, s in found]
    options = dict(c=c, formula=formula, reward=reward, playouts=playouts, leaves=leaves, backend=backend,
                   max_bytes=max_bytes, memory_hint="lower --iterations (or --time) or raise --max-memory")

    def run():
        # compile (or load) the kernel first, so that neither the time budget nor `seconds` pays for it
        warm = analyse_positions(states[:1], iterations=1, seed=seed, **options)
        if warm["interrupted"]:
            return warm, True
        return analyse_positions(states, iterations=iterations, time=time_limit, seed=seed, **options), False

    (r, warm_only), _, jit_seconds = timed(run)
    if warm_only:
        stop_interrupted("before the search started; nothing to show")
    seconds = r["seconds"]
    result = {
        "game": "kalah", "houses": states[0].houses, "empty_capture": empty_capture, "file": str(positions_file),
        "positions": [{"line": number, "position": state.to_text(), "player": state.player, **pos}
                      for (number, state), pos in zip(found, r["positions"])],
        "iterations": r["iterations"], "playouts": r["playouts"], "leaves": r["leaves"],
        "playouts_total": r["playouts_total"], "seconds": seconds, "compile_seconds": jit_seconds,
        "positions_per_second": len(states) / seconds if seconds > 0 else None, "backend": r["backend"],
        "c": c, "formula": formula, "reward": reward, "seed": seed, "interrupted": r["interrupted"],
    }
    if out is not None:
        write_text_atomic(out, json.dumps(json_safe(result), indent=2) + "\n")
    if as_json:
        emit_json(result)
    else:
        _print_analysis(result)
    if r["interrupted"]:
        stop_interrupted(f"after {r['iterations']:,} iterations per position; the figures above are from those")


def _analyse_oware(positions_file, houses, seeds, *, iterations, time_limit, playouts, leaves, c, formula, backend,
                   seed, max_bytes, as_json, out):
    """``analyse --game oware``: one tree per position (:func:`jitsearch.mcts.wrappers.analyse_oware`)."""
    from ..games.oware import OwareState
    from ..mcts.wrappers import analyse_oware

    if positions_file is None:
        try:
            found = [(None, OwareState.initial(houses, seeds))]
        except ValueError as exc:
            raise UserError(str(exc)) from None
    else:
        found = _read_positions(positions_file, False, "oware")
    states = [s for _, s in found]
    options = dict(c=c, formula=formula, playouts=playouts, leaves=leaves, backend=backend, max_bytes=max_bytes,
                   memory_hint="lower --iterations or analyse fewer positions (or raise --max-memory)")

    def run():
        warm = analyse_oware(states[:1], iterations=1, seed=seed, **options)  # validates; compiles before the clock
        if warm["interrupted"]:
            return warm, True
        return analyse_oware(states, iterations=iterations, time=time_limit, seed=seed, **options), False

    (r, warm_only), _, jit_seconds = timed(run)
    if warm_only:
        stop_interrupted("before the search started; nothing to show")
    seconds = r["seconds"]
    result = {
        "game": "oware", "houses": states[0].houses, "empty_capture": False,
        "file": None if positions_file is None else str(positions_file),
        "positions": [{"line": number, "position": state.to_text(), "player": state.player, **pos}
                      for (number, state), pos in zip(found, r["positions"])],
        "iterations": r["iterations"], "playouts": r["playouts"], "leaves": r["leaves"],
        "playouts_total": r["playouts_total"], "seconds": seconds, "compile_seconds": jit_seconds,
        "positions_per_second": len(states) / seconds if seconds > 0 else None, "backend": r["backend"],
        "c": c, "formula": formula, "reward": "win", "seed": seed, "interrupted": r["interrupted"],
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
    if result["game"] == "oware":
        title = f"Oware, {result['houses']} houses"
    else:
        title = f"Kalah, {result['houses']} houses, {'empty-capture' if result['empty_capture'] else 'standard'} rules"
    table = Table(title=f"{title}: {len(result['positions']):,} positions, "
                        f"{result['iterations']:,} iterations x {result['playouts']} playouts each "
                        f"({result['backend']})")
    unit = "house" if result["game"] == "oware" else "pit"
    for col, justify in (("line", "right"), ("position", "left"), ("best", "right"), (unit, "right"),
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

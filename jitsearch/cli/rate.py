"""``jitsearch rate``: a rating list (maximum-likelihood Elo with intervals,
as Ordo and BayesElo make one) from tournament record files
(:mod:`jitsearch.arena.rating_list`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ._support import UserError, check_output_file
from .common import emit_json, stderr, stdout


def ratings_table(fit: dict, title: str | None = None, unit: str = "game") -> Table:
    """Rank, engine, Elo, ± error, games (or pairs: ``unit``), score, draws
    and LOS over the next engine of :func:`jitsearch.arena.rating_list.rating_list`."""
    from ..arena.rating_list import COLUMNS, describe_fit, table_rows

    table = Table(title=title or "ratings")
    for col in COLUMNS:
        if col == "engine":
            table.add_column(col, justify="left", overflow="fold")
        else:
            table.add_column(f"{unit}s" if col == "games" else col, justify="right")
    for row in table_rows(fit):
        table.add_row(*row)
    caption = describe_fit(fit)
    if fit["prior"]:
        caption += f"; prior: {fit['prior']['method']} ({fit['prior']['reason']})"
    table.caption = caption
    return table


def check_plot_output(path: Path, option: str) -> None:
    """Refuse, before any work, a chart path that cannot be written, or a missing matplotlib."""
    from ..arena.rating_list import PLOT_SUFFIXES

    check_output_file(path, option, PLOT_SUFFIXES)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(f"{option} needs matplotlib: pip install 'jitsearch[bench]'") from None


def write_plot(fit: dict, path: Path, option: str, quiet: bool) -> None:
    from ..arena.rating_list import plot_ratings

    try:
        plot_ratings(fit, path)
    except OSError as exc:
        raise UserError(f"{option} {path}: {exc.strerror or exc}") from None
    if not quiet:
        stderr.print(f"ratings chart written to {path}", soft_wrap=True)


#: How the fit's messages name its arguments, and the options that set them here.
_OPTION_NAMES = (("allow virtual_draws > 0", "give --virtual-draws above 0"),
                 ("draw_model='half'", "--draw-model half"), ("virtual_draws", "--virtual-draws"),
                 ("draw_model", "--draw-model"), ("anchor_elo", "--anchor-elo"))


def _option_names(message: str) -> str:
    """A message of the rating fit with its argument names replaced by this command's option names."""
    for api, option in _OPTION_NAMES:
        message = message.replace(api, option)
    return message


def rate(
    records: Annotated[
        list[Path], typer.Argument(metavar="RECORDS", help="Record files (JSONL) as 'jitsearch tournament --out' "
                                                           "writes them for --game kalah, oware or random-tree, "
                                                           "or folders of them (searched for *.jsonl, e.g. the "
                                                           "--out folder of --engines).", show_default=False)
    ],
    anchor: Annotated[
        Optional[str], typer.Option("--anchor", help="Give this engine the rating --anchor-elo (default: the mean "
                                                     "is --anchor-elo).", show_default=False)
    ] = None,
    anchor_elo: Annotated[
        float, typer.Option("--anchor-elo", help="Rating of the anchor, or of the mean without --anchor.")
    ] = 0.0,
    draw_model: Annotated[
        str, typer.Option("--draw-model", help="davidson (a fitted draw rate: a draw is evidence of equal "
                                               "strength) or half (a draw is half a win).")
    ] = "davidson",
    confidence: Annotated[float, typer.Option("--confidence", help="Two-sided confidence of the intervals.")] = 0.95,
    virtual_draws: Annotated[
        float, typer.Option("--virtual-draws", help="Prior used only when some rating would be infinite (an engine "
                                                    "won or lost everything): draws of each engine against a virtual "
                                                    "one of the mean rating; 0 refuses such results.")
    ] = 1.0,
    png: Annotated[
        Optional[Path], typer.Option("--png", help="Draw the ratings and their intervals to this file (.png, .svg "
                                                   "or .pdf; needs matplotlib).", show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Rate the engines of tournament record files.

    Maximum-likelihood Elo ratings (Bradley-Terry) of every engine from the
    games of the given files, grouped by engine spec as recorded; a table of
    rank, Elo with its interval, games, score, draws and the likelihood of
    superiority over the next engine. Reads every file that 'jitsearch
    tournament --out' writes: Kalah and Oware records count games (a game a
    cmd: engine lost by a forfeit is its loss; records are replayed and
    checked), random-tree records game pairs; one game's records at a time.
    """
    from ..arena.rating_list import read_results, rating_list

    from ..arena.ratings import DRAW_MODELS

    if draw_model not in DRAW_MODELS:
        raise UserError(f"--draw-model must be {' or '.join(DRAW_MODELS)}, got {draw_model!r}")
    if not 0.0 < confidence < 1.0:
        raise UserError(f"--confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence:g}")
    if not 0.0 <= virtual_draws < float("inf"):
        raise UserError(f"--virtual-draws must be a number >= 0, got {virtual_draws:g}")
    if not abs(anchor_elo) < float("inf"):
        raise UserError(f"--anchor-elo must be a finite number, got {anchor_elo:g}")
    if png is not None:
        check_plot_output(png, "--png")
    try:
        data = read_results(records)
        if anchor is not None and anchor not in data.engines:
            raise UserError(f"--anchor {anchor!r} is not an engine of these records: "
                            f"{', '.join(data.engines)}")
        fit = rating_list(data, draw_model=draw_model, anchor=anchor, anchor_elo=anchor_elo, confidence=confidence,
                          virtual_draws=virtual_draws)
    except (ValueError, RuntimeError) as exc:
        raise UserError(_option_names(str(exc))) from None
    for note in data.notes:
        stderr.print(f"note: {note}", soft_wrap=True)
    if as_json:
        emit_json({**fit, "records": {k: v for k, v in data.to_dict().items() if k != "results"},
                   "results": [list(r) for r in data.results]})
    else:
        games = f"{data.games} {data.unit}{'s' if data.games != 1 else ''}"
        stdout.print(ratings_table(fit, f"{len(fit['players'])} engines, {games} from {len(data.files)} "
                                        f"file{'s' if len(data.files) != 1 else ''}", data.unit))
    if png is not None:
        write_plot(fit, png, "--png", as_json)


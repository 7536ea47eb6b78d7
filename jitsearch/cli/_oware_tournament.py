"""``jitsearch tournament --game oware``: paired games of two Oware agents
(:mod:`jitsearch.arena.oware_arena`)."""

from __future__ import annotations

from rich.table import Table

from ._support import UserError, refuse_options
from .common import emit_json, stderr, stdout

#: tournament options that do not apply to Oware (the Kalah-only and random-tree ones).
NOT_FOR_OWARE = ("empty_capture", "random_openings", "balanced", "balance_depth", "max_plies", "workers",
                 "scheduler", "engines", "fmt", "sprt", "alpha", "beta", "sprt_model", "plot", "ratings",
                 "lockstep", "branching", "fixed_branching", "tree_depth", "depth_increment", "max_horizon",
                 "resume")


def oware_tournament(given, *, a, b, pairs, houses, seeds, openings, seed, out, as_json, movetime=None,
                     timemargin=None, engine_logs=None, engine_start_timeout=None):
    """``cmd:`` agents (external engines) get ``--movetime``/``--timemargin``/``--engine-logs`` as in Kalah
    tournaments; their processes end with the match."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..arena.external_engine import close_engines
    from ..arena.oware_arena import run_oware_match
    from ..arena.oware_external import engine_settings as use_engine_settings
    from ._kalah_tournament import engine_settings

    refuse_options(given, NOT_FOR_OWARE, "does not apply to --game oware")
    try:
        plies = int(openings)
    except ValueError:
        raise UserError(f"--openings for --game oware is a number of random opening plies, got {openings!r}") \
            from None
    settings = engine_settings(given, [a, b], movetime=movetime, timemargin=timemargin, engine_logs=engine_logs,
                               out=out, multi=False, start_timeout=engine_start_timeout)
    try:
        with use_engine_settings(settings), Progress(TextColumn("pairs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=stderr,
                      transient=True) as bar:
            task = bar.add_task("pairs", total=pairs)
            result = run_oware_match(a, b, pairs, houses=houses, seeds=seeds, openings=plies, seed=seed, out=out,
                                     progress=lambda done, total: bar.update(task, completed=done))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    finally:
        close_engines()
    if as_json:
        emit_json(result)
        return
    table = Table(title=f"Oware({houses},{seeds}): A = {a} vs B = {b}")
    for col in ("games", "A wins", "draws", "B wins", "A score", "Elo (95%)", "Ptnml(0-2)"):
        table.add_column(col)
    low, high = result["elo_interval"]
    elo = "n/a" if result["elo"] is None else f"{result['elo']:+.0f}"
    span = "" if low is None or high is None else f" [{low:+.0f}, {high:+.0f}]"
    table.add_row(str(result["games"]), str(result["wins"]), str(result["draws"]), str(result["losses"]),
                  f"{result['score']:.3f}", elo + span, str(result["pentanomial"]))
    stdout.print(table)

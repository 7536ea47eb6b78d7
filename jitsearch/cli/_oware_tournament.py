"""``jitsearch tournament --game oware``: paired games of two Oware agents
(:mod:`jitsearch.arena.oware_arena`), on the machinery of Kalah matches:
records in --out (a file of another match refused), --resume, Ctrl-C with
the summary of the finished games, external engines that lose a game by a
forfeit, and the same table and JSON keys as a Kalah match."""

from __future__ import annotations

from ._support import UserError, refuse_options
from .common import emit_json, stop_interrupted, stderr, stdout

#: tournament options that do not apply to Oware (the Kalah-only and random-tree ones).
NOT_FOR_OWARE = ("empty_capture", "random_openings", "balanced", "balance_depth", "max_plies", "workers",
                 "scheduler", "engines", "fmt", "sprt", "alpha", "beta", "sprt_model", "plot", "ratings",
                 "lockstep", "branching", "fixed_branching", "tree_depth", "depth_increment", "max_horizon")


def oware_tournament(given, *, a, b, pairs, houses, seeds, openings, seed, out, as_json, resume=False,
                     movetime=None, timemargin=None, engine_logs=None, engine_start_timeout=None):
    """``cmd:`` agents (external engines) get ``--movetime``/``--timemargin``/``--engine-logs`` as in Kalah
    tournaments; their processes end with the match."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..arena.external_engine import close_engines
    from ..arena.oware_arena import OwareMatch, check_agents, run_oware_match
    from ._kalah_tournament import engine_settings, match_table, print_match_notes

    refuse_options(given, NOT_FOR_OWARE, "does not apply to --game oware")
    try:
        plies = int(openings)
    except ValueError:
        raise UserError(f"--openings for --game oware is a number of random opening plies, got {openings!r}") \
            from None
    settings = engine_settings(given, [a, b], movetime=movetime, timemargin=timemargin, engine_logs=engine_logs,
                               out=out, multi=False, start_timeout=engine_start_timeout)
    try:  # both agents before anything is printed; a cmd: engine is started and asked for the board
        check_agents((a, b), OwareMatch(houses, seeds, plies, seed).check(), settings)
    except ValueError as exc:
        close_engines()
        raise UserError(str(exc)) from None
    if settings is not None and not as_json:
        stderr.print(f"cmd: engines: {settings.movetime_ms} ms a move + {settings.margin_ms} ms margin; their "
                     f"stderr goes to {settings.log_dir}", soft_wrap=True)
    try:
        with Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=stderr,
                      transient=True) as bar:
            task = bar.add_task("games", total=2 * pairs)
            r = run_oware_match(a, b, pairs, houses=houses, seeds=seeds, openings=plies, seed=seed, out=out,
                                resume=resume, engine_settings=settings,
                                progress=lambda done, total: bar.update(task, completed=done))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    finally:
        close_engines()
    print_match_notes([r], settings)
    if as_json:
        emit_json(r)
    else:
        stdout.print(match_table(r, f"Oware({houses},{seeds}): A = {a} vs B = {b}"))
        if r.get("elo_note"):
            stderr.print(f"note: {r['elo_note']}")
    if r.get("interrupted"):
        stop_interrupted(f"{r['games']} games were played" + (f" and saved in {out}; add --resume to continue"
                                                              if out is not None else "; use --out to keep them"))

"""``jitsearch tournament --game GAME`` for every registered game: one match
(--a/--b) or several engines (--engines, gauntlet or round robin), with
opening suites, an SPRT, a live table, a plot and the arena's executor (local
or Dask). The match is :func:`jitsearch.arena.matches.match_of`'s."""

from __future__ import annotations

import math
import os
from pathlib import Path

from rich.live import Live
from rich.table import Table

from ._support import UserError, refuse_options
from .common import emit_json, stop_interrupted, stderr, stdout
from .rate import ratings_table, write_plot


def _fmt(x, spec="+.0f", none="-"):
    return none if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def _interval(pair, spec="+.0f"):
    lo, hi = pair
    return f"[{_fmt(lo, spec, '-inf')}, {_fmt(hi, spec, '+inf')}]"


def _parse_sprt(text: str):
    parts = [p.strip() for p in text.split(",")]
    try:
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise UserError(f"--sprt takes ELO0,ELO1 (two numbers), got {text!r}") from None
    return elo0, elo1


def _engine_list(engines) -> list[str]:
    """The specs of ``--engines`` values: separated by spaces, except that a ``cmd:`` spec (an external
    engine, whose command has spaces) runs to the end of its value."""
    out = []
    for item in engines:
        rest = item.strip()
        while rest:
            if rest.startswith("cmd:"):
                out.append(rest)
                break
            word, _, rest = rest.partition(" ")
            out.append(word)
            rest = rest.strip()
    return out


def engine_settings(given, specs, *, movetime, timemargin, engine_logs, out, multi, start_timeout=None):
    """The :class:`~jitsearch.arena.external_engine.EngineSettings` of a run's ``cmd:`` engines, or None
    (without one, ``--movetime``, ``--timemargin``, ``--engine-logs`` and ``--engine-start-timeout`` are
    refused)."""
    from ..arena.external_engine import (DEFAULT_MARGIN_MS, DEFAULT_MOVETIME_MS, MAX_MS, MAX_START_TIMEOUT,
                                         EngineSettings, default_log_dir, is_cmd_spec)

    if not any(is_cmd_spec(s) for s in specs):
        refuse_options(given, ("movetime", "timemargin", "engine_logs", "engine_start_timeout"),
                       "applies to cmd: engines only")
        return None
    if start_timeout is not None and not 0 < start_timeout <= MAX_START_TIMEOUT:  # (NaN fails too)
        raise UserError(f"--engine-start-timeout must be above 0 and at most {MAX_START_TIMEOUT:g} seconds, "
                        f"got {start_timeout:g}")
    movetime = DEFAULT_MOVETIME_MS if movetime is None else movetime
    timemargin = DEFAULT_MARGIN_MS if timemargin is None else timemargin
    if not 1 <= movetime <= MAX_MS:
        raise UserError(f"--movetime must be 1..{MAX_MS} milliseconds, got {movetime}")
    if not 0 <= timemargin <= MAX_MS:
        raise UserError(f"--timemargin must be 0..{MAX_MS} milliseconds, got {timemargin}")
    if engine_logs is None:
        engine_logs = (out if multi else out.parent) if out is not None else default_log_dir()
    engine_logs = Path(engine_logs)
    if engine_logs.exists() and not engine_logs.is_dir():
        raise UserError(f"--engine-logs {engine_logs} is a file, not a directory")
    try:
        engine_logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--engine-logs {engine_logs}: {exc.strerror or exc}") from None
    if not os.access(engine_logs, os.W_OK):
        raise UserError(f"--engine-logs {engine_logs}: not writable")
    return EngineSettings(movetime, timemargin, str(engine_logs.resolve()), start_timeout)


def print_match_notes(matches, settings) -> None:
    """The notes of match results on stderr: each file's repairs, and the games each ``cmd:`` engine lost
    by a time forfeit, an illegal move or a crash."""
    lost: dict[tuple[str, str], int] = {}  # (engine, termination): games a cmd: engine lost by misbehaving
    for m in matches:
        for note in m.get("notes") or []:
            stderr.print(f"note: {note}")
        for term, by in (m.get("terminations") or {}).items():
            for side in ("a", "b"):
                lost[(m[side], term)] = lost.get((m[side], term), 0) + by[side]
    for (spec, term), count in lost.items():
        if count:
            stderr.print(f"note: {spec} lost {count} game{'s' if count != 1 else ''} by {term} (see the records' "
                         f"detail{'' if settings is None else ' and the logs in ' + settings.log_dir})",
                         soft_wrap=True)


def match_table(r: dict, title: str) -> Table:
    """The live (and final) table of one match."""
    st = r["statistics"]
    table = Table(title=title)
    for col in ("games", "W-D-L (A)", "pentanomial LL,LD,DD+WL,WD,WW", "score", "Elo A-B [95%]", "nElo [95%]",
                "LOS"):
        table.add_column(col, justify="right")
    pent = "-" if st["pentanomial"] is None else ",".join(str(x) for x in st["pentanomial"])
    table.add_row(f"{r['games']}/{2 * r['pairs']}", f"{r['a_wins']}-{r['draws']}-{r['b_wins']}", pent,
                  _fmt(r.get("a_score"), ".3f"), f"{_fmt(st['elo'])} {_interval(st['elo_interval'])}",
                  f"{_fmt(st['nelo'])} {_interval(st['nelo_interval'])}", _fmt(st["los"], ".1%"))
    if r.get("sprt"):
        sp = r["sprt"]
        table.caption = (f"SPRT {sp['model']} [{sp['elo0']:g}, {sp['elo1']:g}] alpha {sp['alpha']:g} beta "
                         f"{sp['beta']:g}: LLR {sp['llr']:+.2f} in ({sp['bounds'][0]:+.2f}, {sp['bounds'][1]:+.2f})"
                         f" - {sp['decision']}" + (f" after {sp['pairs_played']} pairs"
                                                    if sp["decision"] == "undecided" else ""))
    return table


def standings_table(r: dict, title: str) -> Table:
    table = Table(title=title)
    for col in ("#", "engine", "points", "games", "score"):
        table.add_column(col, justify="right" if col != "engine" else "left")
    for i, e in enumerate(r["standings"]):
        table.add_row(str(i + 1), e["engine"], f"{e['points']:g}", str(e["games"]), _fmt(e["score"], ".3f"))
    return table


def crosstable(r: dict) -> Table:
    engines = r["engines"]
    table = Table(title=f"crosstable ({r['format']}): row's W-D-L against column")
    table.add_column("engine")
    for j in range(len(engines)):
        table.add_column(str(j + 1), justify="right")
    for i, name in enumerate(engines):
        cells = []
        for j in range(len(engines)):
            c = r["crosstable"][i][j]
            cells.append("" if i == j else ("." if c is None else f"{c['wins']}-{c['draws']}-{c['losses']}"))
        table.add_row(f"{i + 1} {name}", *cells)
    return table


def _fit(r: dict):
    """The ratings of a multi-engine result, or None (with a note) where the games do not determine them."""
    from ..arena.rating_list import rating_list
    from ..arena.ratings import results_from_crosstable

    try:
        fit = rating_list(results_from_crosstable(r))
    except (ValueError, RuntimeError) as exc:
        stderr.print(f"note: no ratings: {exc}", soft_wrap=True)
        return None
    if fit["prior"]:
        stderr.print(f"note: ratings: {fit['prior']['reason']}; {fit['prior']['method']}", soft_wrap=True)
    return fit


def _suite(game, variant, openings: str, given, random_openings, balanced, balance_depth, seed):
    """(random opening plies, suite) of ``--openings`` / ``--random-openings``."""
    from ..arena.opening_suites import RESERVED_NAME, shipped_suite_path
    from ..arena.openings import random_game_openings, read_game_openings

    plies, suite = 0, ()
    if openings.strip().isdigit():
        plies = int(openings)
    else:
        if random_openings is not None:
            raise UserError("give either --openings FILE or --random-openings K, not both")
        try:
            # the suite shipped for this board (./balanced reads a file)
            path = (shipped_suite_path(game=game, **variant) if openings.strip() == RESERVED_NAME
                    else Path(openings))
            suite = read_game_openings(path, game, variant)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    if random_openings is not None:
        if random_openings < 1:
            raise UserError(f"--random-openings must be >= 1, got {random_openings}")
        if balance_depth < 1 or balance_depth > 20:
            raise UserError(f"--balance-depth must lie in 1..20, got {balance_depth}")
        if balanced is not None and not balanced >= 0:
            raise UserError(f"--balanced must be >= 0, got {balanced}")
        if balanced is not None and game.balance is None:
            raise UserError(f"--balanced needs a search value of {game.name} positions, which it lacks")
        with stderr.status("generating openings"):
            try:
                suite = random_game_openings(random_openings, game, variant, seed, balanced=balanced,
                                             depth=balance_depth)
            except ValueError as exc:
                raise UserError(str(exc)) from None
    else:
        refuse_options(given, ("balanced", "balance_depth"), "applies with --random-openings only")
    return plies, suite


def match_tournament(given, *, game, variant, a, b, pairs, openings, random_openings, balanced, balance_depth,
                     max_plies, seed, workers, scheduler, engines, fmt, sprt, alpha, beta, sprt_model, plot, out,
                     resume, as_json, lockstep, ratings=False, movetime=None, timemargin=None, engine_logs=None,
                     engine_start_timeout=None):
    """A tournament of ``game`` (a Game) in ``variant`` (its full variant); ``max_plies`` None: the game's
    default cap (Kalah 300, every other game none)."""
    from ..arena.agents import agent_kind, parse_agent
    from ..arena.game_match import variant_title
    from ..arena.matches import (FORMATS, check_agents, engine_pairs, match_of, plot_trajectory, run_engines,
                                 run_tournament)
    from ..arena.stats import SPRT

    # -- every user error before anything runs
    plies, suite = _suite(game, variant, openings, given, random_openings, balanced, balance_depth, seed)
    multi = engines is not None
    if multi:
        refuse_options(given, ("a", "b"), "and --engines exclude each other")
        refuse_options(given, ("sprt", "alpha", "beta", "sprt_model", "lockstep"),
                       "applies to one match (--a/--b), not to --engines")
        ratings = ratings or plot is not None  # --plot draws the ratings of several engines
        names = _engine_list(engines)
        if fmt not in FORMATS:
            raise UserError(f"--format must be gauntlet or round-robin, got {fmt!r}")
        try:
            engine_pairs(names, fmt)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        specs = names
    else:
        refuse_options(given, ("fmt", "ratings"), "applies with --engines only")
        specs = [a, b]
    if not game.config_agents:
        refuse_options(given, ("lockstep",), "plays Kalah's multi-tree MCTS agents only (--game kalah)")
    for spec in specs:
        if agent_kind(spec) == "human":
            raise UserError("a tournament needs engines, not human players")
    for spec in specs:  # spec errors before anything runs
        parse_agent(spec, game=game)
    test = None
    if sprt is not None:
        elo0, elo1 = _parse_sprt(sprt)
        try:
            test = SPRT(elo0, elo1, alpha=alpha, beta=beta, model=sprt_model)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    else:
        refuse_options(given, ("alpha", "beta", "sprt_model"), "applies with --sprt only")
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UserError("--plot needs matplotlib: pip install 'jitsearch[bench]'") from None
    if scheduler is not None and not scheduler.strip():
        raise UserError("--scheduler needs an address such as tcp://HOST:8786")
    settings = engine_settings(given, specs, movetime=movetime, timemargin=timemargin, engine_logs=engine_logs,
                               out=out, multi=multi, start_timeout=engine_start_timeout)
    from ..arena.external_engine import close_engines

    try:
        match = match_of(game, variant, openings=plies, seed=seed, max_plies=max_plies, suite=suite)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:  # a board an agent cannot play, before the first game; a cmd: engine is started and asked for it
        check_agents(specs, match, settings)
    except ValueError as exc:
        close_engines()
        raise UserError(str(exc)) from None
    if settings is not None and not as_json:
        stderr.print(f"cmd: engines: {settings.movetime_ms} ms a move + {settings.margin_ms} ms margin; their "
                     f"stderr goes to {settings.log_dir}", soft_wrap=True)
    if suite and pairs % len(suite):
        stderr.print(f"note: {pairs} pairs over {len(suite)} openings: the first {pairs % len(suite)} openings are "
                     f"played once more than the others", soft_wrap=True)

    # -- run, with a live table
    from ..arena.executor import ExecutorError, describe

    where = describe(workers, scheduler, pairs * (len(engine_pairs(specs, fmt)) if multi else 1))
    state = {"result": None}
    title = variant_title(game, variant) + ": " + (f"{len(specs)} engines, {fmt}" if multi else f"A = {a} vs B = {b}")

    def render():
        r = state["result"]
        if r is None:
            return Table(title=f"{title} (starting on {where})")
        return standings_table(r, title) if multi else match_table(r, title)

    live = Live(render(), console=stderr, transient=True, refresh_per_second=4) if not as_json else None

    def on_update(r):
        state["result"] = r
        if live is not None:
            live.update(render())

    try:
        if live is not None:
            live.start()
        if multi:
            r = run_engines(specs, fmt, match, pairs, out_dir=out, resume=resume, workers=workers,
                            scheduler=scheduler, on_update=on_update, engine_settings=settings)
        else:
            r = run_tournament(a, b, match, pairs, out=out, resume=resume, workers=workers, lockstep=lockstep,
                               scheduler=scheduler, sprt=test, on_update=on_update, engine_settings=settings)
    except (ExecutorError, ValueError) as exc:
        raise UserError(str(exc)) from None
    finally:
        if live is not None:
            live.stop()
    r["game"] = game.name
    print_match_notes(r["matches"] if multi else [r], settings)
    if ratings:
        r["ratings"] = _fit(r)
    if as_json:
        emit_json(r)
    elif multi:
        stdout.print(standings_table(r, title))
        stdout.print(crosstable(r))
        if r.get("ratings"):
            stdout.print(ratings_table(r["ratings"]))
    else:
        stdout.print(match_table(r, title))
        if r.get("elo_note"):
            stderr.print(f"note: {r['elo_note']}")
    if plot is not None and multi:  # after the results: a chart that cannot be written loses nothing else
        if r.get("ratings"):
            write_plot(r["ratings"], plot, "--plot", as_json)
        else:
            stderr.print("note: no ratings chart: the games do not determine the ratings", soft_wrap=True)
    elif plot is not None:
        try:
            plot_trajectory(r, plot)
        except OSError as exc:
            raise UserError(f"--plot {plot}: {exc.strerror or exc}") from None
        if not as_json:
            stderr.print(f"plot written to {plot}")
    if r.get("interrupted"):
        games = sum(m["games"] for m in r["matches"]) if multi else r["games"]
        stop_interrupted(f"{games} games were played" + (f" and saved in {out}; add --resume to continue"
                                                           if out is not None else "; use --out to keep them"))

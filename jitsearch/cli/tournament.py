"""``jitsearch tournament``: paired games between two searchers, on random trees
(:mod:`jitsearch.arena.random_tree_tournament`) or any registered game
(``--game NAME --variant KEY=VALUE``: :mod:`jitsearch.arena.matches`,
every option for every game). Every game writes its records as it ends,
refuses a file of another tournament, stops on Ctrl-C with the summary of
the finished games (exit 130) and continues with --resume."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ._support import UserError, check_output_dir, check_output_file, check_positive, given_options, refuse_options
from .common import emit_json, stop_interrupted, stderr, stdout
from .game_options import VariantOpt, resolve_game, resolve_variant


_GAME_TOURNAMENT_OPTIONS = ("variant", "houses", "seeds", "empty_capture", "openings", "max_plies", "workers",
                            "lockstep",
                             "engines", "fmt", "sprt", "alpha", "beta", "sprt_model", "random_openings", "balanced",
                             "balance_depth", "scheduler", "plot", "ratings", "movetime", "timemargin", "engine_logs",
                             "engine_start_timeout")
#: File types ``--plot`` writes (matplotlib picks the format from the suffix).
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
_TREE_GAME_OPTIONS = ("branching", "fixed_branching", "tree_depth", "depth_increment", "max_horizon")


def tournament(
    ctx: typer.Context,
    game: Annotated[str, typer.Option("--game", help="random-tree, or a registered game (kalah, oware, connect4, or "
                                                     "one added with jitsearch.games.register).")] = "random-tree",
    variant: VariantOpt = None,
    a: Annotated[Optional[str], typer.Option("--a", help="Player A, e.g. fe:depth=3,delta=0.5 or alphabeta:depth=5 "
                                                         "(default: fe on random trees, mcts in a game).",
                                             show_default=False)] = None,
    b: Annotated[Optional[str], typer.Option("--b", help="Player B, e.g. alphabeta:depth=3 or mcts:iterations=100 "
                                                         "(default: alphabeta on random trees, random in a game).",
                                             show_default=False)] = None,
    pairs: Annotated[int, typer.Option("--pairs", help="Pairs of games (seats swapped) per tournament.")] = 100,
    houses: Annotated[Optional[int], typer.Option("--houses", help="Kalah, Oware: houses per side (= --variant "
                                                                   "houses=N).", show_default=False)] = None,
    seeds: Annotated[Optional[int], typer.Option("--seeds", help="Kalah, Oware: seeds per house (= --variant "
                                                                 "seeds=N).", show_default=False)] = None,
    empty_capture: Annotated[bool, typer.Option("--empty-capture", help="Kalah: the empty-capture variant (= "
                                                                        "--variant empty_capture=1).")] = False,
    openings: Annotated[
        str, typer.Option("--openings", help="N seeded random opening plies per pair (0-40 but Kalah), or an "
                                             "opening suite FILE (one position per line in the game's text form, "
                                             "each played with both seats), or for Kalah 'balanced': the suite "
                                             "shipped for the board (positions 2-6 plies deep valued within 2 "
                                             "seeds of 0, exactly for Kalah(6,4) and its empty-capture "
                                             "variant, by a deep search for Kalah(6,6); see 'jitsearch "
                                             "openings').")
    ] = "0",
    random_openings: Annotated[
        Optional[int], typer.Option("--random-openings", help="A suite of K positions after 2-8 seeded "
                                                              "random plies.", show_default=False)
    ] = None,
    balanced: Annotated[
        Optional[float], typer.Option("--balanced", help="With --random-openings (Kalah, Oware): keep only positions "
                                                         "whose depth-limited search value is within MARGIN of 0.",
                                      show_default=False)
    ] = None,
    balance_depth: Annotated[int, typer.Option("--balance-depth", help="Search depth of --balanced.")] = 6,
    max_plies: Annotated[Optional[int], typer.Option("--max-plies", help="Ply cap, a capped game scored by the "
                                                                         "margin's sign there (default: Kalah 300, "
                                                                         "other games none).", show_default=False)]
    = None,
    workers: Annotated[
        int, typer.Option("--workers", help="Worker processes (above 1: a local Dask cluster).")
    ] = 1,
    scheduler: Annotated[
        Optional[str], typer.Option("--scheduler", help="Run the games on the Dask cluster at this address "
                                                        "(tcp://HOST:PORT).", show_default=False)
    ] = None,
    engines: Annotated[
        Optional[list[str]], typer.Option("--engines", help="Two or more engines (repeat the option or "
                                                            "separate specs by spaces) instead of --a/--b; a "
                                                            "cmd:PROGRAM ARGS... spec runs to the end of its "
                                                            "--engines value (quote it).",
                                          show_default=False)
    ] = None,
    movetime: Annotated[
        Optional[int], typer.Option("--movetime", help="cmd: engines: milliseconds a cmd: engine is given per move "
                                                       "('go MS'; default 1000).", show_default=False)
    ] = None,
    timemargin: Annotated[
        Optional[int], typer.Option("--timemargin", help="cmd: engines: milliseconds past --movetime before a "
                                                         "cmd: engine's move is late: a time forfeit, which loses "
                                                         "that game (default 200).",
                                    show_default=False)
    ] = None,
    engine_logs: Annotated[
        Optional[Path], typer.Option("--engine-logs", help="cmd: engines: directory of the cmd: engines' stderr logs "
                                                           "(default: the --out directory, else the temp dir).",
                                     show_default=False)
    ] = None,
    engine_start_timeout: Annotated[
        Optional[float], typer.Option("--engine-start-timeout", help="cmd: engines: seconds a cmd: engine has to "
                                                                     "answer hello and each game (default 30, or ten "
                                                                     "moves' time if longer).",
                                      show_default=False)
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="With --engines: gauntlet (the first against each other) or "
                                           "round-robin.")
    ] = "round-robin",
    sprt: Annotated[
        Optional[str], typer.Option("--sprt", help="Stop at a sequential test of H0 elo0 against H1 elo1, "
                                                   "given as ELO0,ELO1.", show_default=False)
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="--sprt: false positive rate.")] = 0.05,
    beta: Annotated[float, typer.Option("--beta", help="--sprt: false negative rate.")] = 0.05,
    sprt_model: Annotated[
        str, typer.Option("--sprt-model", help="--sprt: normalized (nElo, as fishtest) or logistic (Elo).")
    ] = "normalized",
    plot: Annotated[
        Optional[Path], typer.Option("--plot", help="A PNG (.svg, .pdf) of the Elo estimate and the LLR "
                                                    "over games; with --engines, of the ratings and their intervals "
                                                    "(implies --ratings).",
                                     show_default=False)
    ] = None,
    ratings: Annotated[
        bool, typer.Option("--ratings", help="With --engines: fit maximum-likelihood Elo ratings of every "
                                             "engine from the crosstable (Davidson draws) and print them.")
    ] = False,
    lockstep: Annotated[
        bool, typer.Option("--lockstep", help="Kalah: play every game side by side; a multi-tree MCTS agent "
                                              "(mcts:iterations=N,backend=cuda) searches all its games in one launch.")
    ] = False,
    branching: Annotated[int, typer.Option("--branching", "-b", help="Random tree: (mean) branching.")] = 5,
    fixed_branching: Annotated[
        bool, typer.Option("--fixed-branching", help="Random tree: fixed instead of random branching.")
    ] = False,
    tree_depth: Annotated[int, typer.Option("--tree-depth", help="Random tree: total depth of a game.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the game trees.")] = 0,
    depth_increment: Annotated[
        bool, typer.Option("--depth-increment", help="Run the depth-increment protocol (horizons start at 1).")
    ] = False,
    max_horizon: Annotated[int, typer.Option("--max-horizon", help="Protocol: stop past this horizon.")] = 6,
    out: Annotated[Optional[Path], typer.Option("--out", help="JSONL file of game records, each written as its "
                                                       "game ends; with --engines a directory, one file per "
                                                       "match. A file holding another tournament's games is "
                                                       "refused, one holding this one's needs --resume.")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the games already in --out: only the missing "
                                                          "games are played, and the result is that of an "
                                                          "uninterrupted run. --pairs must cover every pair in "
                                                          "the file (fewer is refused).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Play paired games between two searchers and report who wins.

    For every game (random-tree or a registered one): each finished game is
    appended to --out as it ends; Ctrl-C stops the tournament, prints the
    summary of the games played so far (table or --json, with
    "interrupted": true) and exits with status 130; --resume continues it.
    A cmd: engine that answers late, moves illegally or
    crashes loses that game and the match goes on; the records name the
    termination, and 'jitsearch rate' reads every file written here.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..arena.random_tree_tournament import GameConfig, PlayerSpec, depth_increment_protocol, run_tournament

    given = given_options(ctx)
    if resume and out is None:
        raise UserError("--resume needs --out")
    check_positive({"--pairs": pairs, "--workers": workers, "--max-plies": 1 if max_plies is None else max_plies,
                    "--max-horizon": max_horizon})
    if out is not None:  # every output path before the first game
        if engines is None:
            check_output_file(out)
        else:
            check_output_dir(out)
    if plot is not None:
        check_output_file(plot, "--plot", PLOT_SUFFIXES)
    if game != "random-tree":
        a, b = a or "mcts", b or "random"
        try:
            rules = resolve_game(game)
        except UserError as exc:
            raise UserError(f"--game must be random-tree or a registered game: {exc}") from None
        refuse_options(given, _TREE_GAME_OPTIONS, "applies to --game random-tree only")
        flags = {k: v for k, v in (("houses", houses), ("seeds", seeds), ("empty_capture", empty_capture))
                 if k in given}
        from ._game_tournament import match_tournament

        match_tournament(given, game=rules, variant=resolve_variant(rules, variant, **flags), a=a, b=b, pairs=pairs,
                         openings=openings, random_openings=random_openings, balanced=balanced,
                         balance_depth=balance_depth, max_plies=max_plies, seed=seed, workers=workers,
                         scheduler=scheduler, engines=engines, fmt=fmt, sprt=sprt, alpha=alpha, beta=beta,
                         sprt_model=sprt_model, plot=plot, out=out, resume=resume, as_json=as_json,
                         lockstep=lockstep, ratings=ratings, movetime=movetime, timemargin=timemargin,
                         engine_logs=engine_logs, engine_start_timeout=engine_start_timeout)
        return
    a, b = a or "fe", b or "alphabeta"
    refuse_options(given, _GAME_TOURNAMENT_OPTIONS, "applies to a registered game (--game kalah, oware, ...), "
                                                    "not to --game random-tree")
    if not depth_increment:
        refuse_options(given, ("max_horizon",), "applies with --depth-increment only")
    spec_a, spec_b = PlayerSpec.parse(a), PlayerSpec.parse(b)
    config = GameConfig(branching=branching, random_branching=not fixed_branching, depth=tree_depth, seed=seed)
    config.tree(0)  # validates the tree parameters
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("pairs", total=pairs)
        if depth_increment:
            def progress(r, done, total):
                bar.update(task, description=f"tournament {r + 1}", completed=done, total=total)

            rounds = depth_increment_protocol(spec_a, spec_b, config, pairs, max_horizon=max_horizon, out=out,
                                              resume=resume, progress=progress)
            result = {"game": game, "protocol": "depth-increment", "rounds": rounds}
        else:
            result = run_tournament(spec_a, spec_b, config, pairs, out=out, resume=resume,
                                    progress=lambda done, total: bar.update(task, completed=done))
            result["game"] = game
            rounds = [result]
    interrupted = bool(result.get("interrupted")) or any(r.get("interrupted") for r in rounds)
    for note in [n for r in [result, *rounds] for n in (r.get("notes") or [])]:
        stderr.print(f"note: {note}")
    if as_json:
        emit_json(result)
    elif rounds:
        _print_tree_rounds(game, rounds, spec_a, spec_b)
    if interrupted:
        stop_interrupted("the games above were played" + (f" and saved in {out}; add --resume to continue"
                                                            if out is not None else "; use --out to keep them"))


def _print_tree_rounds(game, rounds, spec_a, spec_b):
    table = Table(title=f"{game}: A = {rounds[-1]['a']} vs B = {rounds[-1]['b']}")
    for col in ("#", "h A", "h B", "pairs", "A", "tie", "B", "A win% (95% CI)", "nodes A", "nodes B"):
        table.add_column(col, justify="right")
    for i, r in enumerate(rounds):
        lo, hi = r["a_win_rate_ci95"]
        table.add_row(str(i + 1), str(r.get("horizon_a", spec_a.horizon)), str(r.get("horizon_b", spec_b.horizon)),
                      str(r["pairs"]), str(r["a_wins"]), str(r["ties"]), str(r["b_wins"]),
                      f"{100 * r['a_win_rate']:.0f} ({100 * lo:.0f}-{100 * hi:.0f})", str(r["nodes_a"]),
                      str(r["nodes_b"]))
    stdout.print(table)

"""``jitsearch tournament``: paired games between two searchers, on random trees
(:mod:`jitsearch.arena.random_tree_tournament`) or Kalah
(:mod:`jitsearch.arena.kalah_tournament`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from ._support import UserError, check_output_file, check_positive, given_options, refuse_options
from .common import _emit_json, _stop_interrupted, stderr, stdout


_KALAH_TOURNAMENT_OPTIONS = ("houses", "seeds", "empty_capture", "openings", "max_plies", "workers", "lockstep")
_TREE_GAME_OPTIONS = ("branching", "fixed_branching", "tree_depth", "depth_increment", "max_horizon")


def tournament(
    ctx: typer.Context,
    game: Annotated[str, typer.Option("--game", help="Game: random-tree or kalah.")] = "random-tree",
    a: Annotated[str, typer.Option("--a", help="Player A, e.g. fe:depth=3,delta=0.5 or alphabeta:depth=5.")] = "fe",
    b: Annotated[str, typer.Option("--b", help="Player B, e.g. alphabeta:depth=3 or mcts:iterations=100.")]
    = "alphabeta",
    pairs: Annotated[int, typer.Option("--pairs", help="Pairs of games (seats swapped) per tournament.")] = 100,
    houses: Annotated[int, typer.Option("--houses", help="Kalah: houses per side.")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="Kalah: seeds per house.")] = 4,
    empty_capture: Annotated[bool, typer.Option("--empty-capture", help="Kalah: the empty-capture variant.")]
    = False,
    openings: Annotated[int, typer.Option("--openings", help="Kalah: seeded random opening plies per pair.")] = 0,
    max_plies: Annotated[int, typer.Option("--max-plies", help="Kalah: ply cap (scored by stores).")] = 300,
    workers: Annotated[int, typer.Option("--workers", help="Kalah: games played in parallel processes.")] = 1,
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
    out: Annotated[Optional[Path], typer.Option("--out", help="JSONL file of game records (appended).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the games already in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Play paired games between two searchers and report who wins.

    Every finished game is appended to --out as it ends; Ctrl-C stops the
    tournament within a second or two, prints the games played so far and
    exits with status 130, and --resume continues it.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..arena.random_tree_tournament import GameConfig, PlayerSpec, depth_increment_protocol, run_tournament

    given = given_options(ctx)
    if game not in ("random-tree", "kalah"):
        raise UserError(f"--game must be random-tree or kalah, got {game!r}")
    if resume and out is None:
        raise UserError("--resume needs --out")
    check_positive({"--pairs": pairs, "--workers": workers, "--max-plies": max_plies, "--max-horizon": max_horizon})
    if openings < 0:
        raise UserError(f"--openings must be >= 0, got {openings}")
    if out is not None:
        check_output_file(out)
    if game == "kalah":
        refuse_options(given, _TREE_GAME_OPTIONS, "applies to --game random-tree only")
    else:
        refuse_options(given, _KALAH_TOURNAMENT_OPTIONS, "applies to --game kalah only")
    if not depth_increment:
        refuse_options(given, ("max_horizon",), "applies with --depth-increment only")
    if game == "kalah":
        _kalah_tournament(a, b, pairs, houses, seeds, empty_capture, openings, max_plies, seed, workers, out,
                          resume, as_json, lockstep)
        return
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
        _emit_json(result)
    elif rounds:
        _print_tree_rounds(game, rounds, spec_a, spec_b)
    if interrupted:
        _stop_interrupted("the games above were played" + (f" and saved in {out}; add --resume to continue"
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


def _kalah_tournament(a, b, pairs, houses, seeds, empty_capture, openings, max_plies, seed, workers, out, resume,
                      as_json, lockstep=False):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..arena.kalah_tournament import KalahMatch, run_kalah_tournament

    from ..arena.agents import parse_agent

    match = KalahMatch(houses, seeds, empty_capture, max_plies, openings, seed)
    match.check()
    for spec in (a, b):  # every user error before the progress bar starts
        if parse_agent(spec).kind == "human":
            raise UserError("a tournament needs engines, not human players")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("games", total=2 * pairs)
        r = run_kalah_tournament(a, b, match, pairs, out=out, resume=resume, workers=workers, lockstep=lockstep,
                                 progress=lambda done, total: bar.update(task, completed=done, total=total))
    r["game"] = "kalah"
    for note in r.get("notes") or []:
        stderr.print(f"note: {note}")
    if as_json:
        _emit_json(r)
    else:
        _print_kalah_summary(r, a, b, houses, seeds, pairs)
    if r.get("interrupted"):
        _stop_interrupted(f"{r['games']} games were played" + (f" and saved in {out}; add --resume to continue"
                                                                if out is not None else "; use --out to keep them"))


def _print_kalah_summary(r, a, b, houses, seeds, pairs):
    table = Table(title=f"Kalah({houses},{seeds}): A = {a} vs B = {b}, {pairs} pairs")
    for col in ("games", "A wins", "draws", "B wins", "A score (95% CI)", "Elo A-B (95% CI)", "mean plies"):
        table.add_column(col, justify="right")
    lo, hi = r["a_score_ci95"]
    elo_lo, elo_hi = r["elo_ci95"]
    if r.get("elo_diff") is None:
        elo = "n/a: sample too small"
    else:
        elo = (f"{r['elo_diff']:+.0f} ({'-inf' if elo_lo is None else f'{elo_lo:+.0f}'}, "
               f"{'+inf' if elo_hi is None else f'{elo_hi:+.0f}'})")
    score = "-" if r.get("a_score") is None else f"{r['a_score']:.3f} ({lo:.3f}-{hi:.3f})"
    mean_plies = "-" if r.get("mean_plies") is None else f"{r['mean_plies']:.1f}"
    table.add_row(str(r["games"]), str(r["a_wins"]), str(r["draws"]), str(r["b_wins"]), score, elo, mean_plies)
    stdout.print(table)
    if r.get("elo_note"):
        stderr.print(f"note: {r['elo_note']}")

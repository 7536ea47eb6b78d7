"""The ``jitsearch`` command line (typer + rich).

Commands are thin adapters over library functions. Data goes to stdout,
progress and errors to stderr. A user error (bad file, bad option value,
unknown algorithm, tree too large) prints one ``error: ...`` line and exits
with status 2; no traceback is shown for it.
"""

from __future__ import annotations

import json
import math
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Annotated, List, Optional, Tuple

import typer
from rich.console import Console
from rich.table import Table

from .._version import __version__
from ._support import (
    Interrupted,
    UserError,
    check_output_dir,
    check_output_file,
    check_positive,
    check_seconds,
    given_options,
    refuse_options,
    run_interruptibly,
    timed,
    write_text_atomic,
)

app = typer.Typer(
    name="jitsearch",
    help="Game-tree search at compiled speed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
bench_app = typer.Typer(help="Benchmarks (print a table; --json for scripts).", no_args_is_help=True)
app.add_typer(bench_app, name="bench")

# Typer either re-exports click's exceptions or vendors its own copy of click:
# take the classes from the exception hierarchy so both work.
_CLICK_EXCEPTION = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
_EXIT = typer.Exit
_ABORT = typer.Abort

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def _version(value: bool):
    if value:
        print(f"jitsearch {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
):
    """jitsearch: exact game-tree solvers, games and MCTS compiled with Numba."""


def _parse_bytes(text: str) -> int:
    units = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2,
             "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3, "t": 1024**4, "tb": 1024**4,
             "tib": 1024**4}
    t = text.strip().lower()
    num = t.rstrip("abgikmt ")
    unit = t[len(num):].strip()
    try:
        value = float(num)
    except ValueError:
        raise UserError(f"--max-memory must look like 512MiB or 4GiB, got {text!r}") from None
    if unit not in units or not value > 0 or not math.isfinite(value) or value * units[unit] > 2**62:
        raise UserError(f"--max-memory must look like 512MiB or 4GiB, got {text!r}")
    return int(value * units[unit])


def _json_safe(obj):
    """Replace non-finite floats (not valid JSON) by null: an unbounded bound."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def _emit_json(obj) -> None:
    sys.stdout.write(json.dumps(_json_safe(obj), allow_nan=False) + "\n")


_TREE_OPTIONS = ("tree_file", "random", "branching", "height", "seed", "values", "lo", "hi", "root", "algorithm",
                 "trace", "depth", "random_branching", "edge_lo", "edge_hi", "search_depth", "delta", "bounds",
                 "bounds_file", "likely", "loss_threshold", "restart_deepest", "stop_when_proven", "max_leaves",
                 "max_seconds", "value_range", "first_guess", "storage")
_KALAH_SOLVE_OPTIONS = ("houses", "seeds", "empty_capture", "position", "time_limit", "table_size", "endgame_seeds",
                        "endgame_cache")


@app.command()
def solve(
    ctx: typer.Context,
    tree_file: Annotated[
        Optional[Path], typer.Argument(help="Tree as .json (nested lists or uniform form) or .npz.", show_default=False)
    ] = None,
    random: Annotated[
        Optional[str], typer.Option("--random", help="Generate a tree instead: 'uniform' or 'incremental'.")
    ] = None,
    branching: Annotated[int, typer.Option("--branching", "-b", help="Branching factor of a random tree.")] = 2,
    height: Annotated[int, typer.Option("--height", help="Height of a random tree (0 = a single leaf).")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random tree's leaf hash.")] = 0,
    values: Annotated[str, typer.Option("--values", help="Random leaf values: int, binary or float.")] = "int",
    lo: Annotated[Optional[float], typer.Option("--lo", help="Lowest leaf value (int: default -2**31).")] = None,
    hi: Annotated[Optional[float], typer.Option("--hi", help="Highest leaf value (int: default 2**31).")] = None,
    root: Annotated[str, typer.Option("--root", help="Who moves at the root of a random tree: max or min.")] = "max",
    algorithm: Annotated[
        str,
        typer.Option("--algorithm", "-a",
                     help="minimax, alphabeta, andor, two-agent, fsss, mtd-inf, mtdf or fe (incremental trees)."),
    ] = "alphabeta",
    trace: Annotated[bool, typer.Option("--trace", help="Also report leaf numbers in expansion order.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    depth: Annotated[
        Optional[int],
        typer.Option("--depth", help="incremental trees: tree depth (default 10); two-agent: search depth."),
    ] = None,
    random_branching: Annotated[
        bool, typer.Option("--random-branching", help="incremental: branching uniform on 1..2B-1 (mean B).")
    ] = False,
    edge_lo: Annotated[Optional[int], typer.Option("--edge-lo", help="incremental: lowest edge cost.")] = None,
    edge_hi: Annotated[Optional[int], typer.Option("--edge-hi", help="incremental: highest edge cost.")] = None,
    search_depth: Annotated[
        Optional[int], typer.Option("--search-depth", help="fe/alphabeta on incremental trees: horizon.")
    ] = None,
    delta: Annotated[Optional[float], typer.Option("--delta", help="fe: selectivity delta in (0, 1].")] = None,
    bounds: Annotated[
        Optional[str], typer.Option("--bounds", help="fe: edge-cost bounds exact, online or offline.")
    ] = None,
    bounds_file: Annotated[
        Optional[Path], typer.Option("--bounds-file", help="fe --bounds offline: learned bounds (JSON).")
    ] = None,
    likely: Annotated[
        Optional[float],
        typer.Option("--likely", help="fe --bounds offline: use the Q and 1-Q quantiles (conditions 2)."),
    ] = None,
    loss_threshold: Annotated[
        Optional[float], typer.Option("--loss-threshold", help="two-agent: section 3.3.1's loss threshold.")
    ] = None,
    restart_deepest: Annotated[
        bool, typer.Option("--restart-deepest", help="fsss: restart rollouts from the deepest unchanged node.")
    ] = False,
    stop_when_proven: Annotated[
        bool, typer.Option("--stop-when-proven", help="fsss: stop once the best root move is proven.")
    ] = False,
    max_leaves: Annotated[
        Optional[int], typer.Option("--max-leaves", help="fsss: anytime budget of leaf expansions.")
    ] = None,
    max_seconds: Annotated[
        Optional[float], typer.Option("--max-seconds", help="fsss: anytime budget in seconds.")
    ] = None,
    value_range: Annotated[
        Optional[Tuple[float, float]],
        typer.Option("--value-range", help="fsss: admissible leaf-value range LO HI as initial bounds."),
    ] = None,
    first_guess: Annotated[Optional[float], typer.Option("--first-guess", help="mtdf: first guess.")] = None,
    storage: Annotated[
        Optional[str],
        typer.Option("--storage", help="fsss: pool|auto|dense|hash; mtd-inf/mtdf: auto|dense|hash."),
    ] = None,
    max_memory: Annotated[
        str, typer.Option("--max-memory", help="Refuse to allocate more than this (e.g. 2GiB).")
    ] = "2GiB",
    game: Annotated[Optional[str], typer.Option("--game", help="Solve a game instead of a tree: kalah.")] = None,
    houses: Annotated[int, typer.Option("--houses", help="kalah: houses per side (m).")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="kalah: seeds per house (n).")] = 4,
    empty_capture: Annotated[
        bool, typer.Option("--empty-capture", help="kalah: capture even when the opposite house is empty.")
    ] = False,
    position: Annotated[
        Optional[str], typer.Option("--position", help="kalah: start from this position (text form).")
    ] = None,
    time_limit: Annotated[
        Optional[float], typer.Option("--time-limit", help="kalah: stop after this many seconds.")
    ] = None,
    table_size: Annotated[
        Optional[int],
        typer.Option("--table-size", help="kalah: transposition-table slots (power of two; 32 bytes each; "
                                          "default: sized from the board, at most 2**24).", show_default=False),
    ] = None,
    endgame_seeds: Annotated[
        int, typer.Option("--endgame-seeds", help="kalah: build an endgame database up to this many seeds (0: none).")
    ] = 0,
    endgame_cache: Annotated[
        bool, typer.Option("--endgame-cache/--no-endgame-cache",
                           help="kalah: keep built endgame databases in ~/.cache/jitsearch (or $XDG_CACHE_HOME).")
    ] = True,
):
    """Solve a game tree (or Kalah) exactly and report value, best move and work done.

    Ctrl-C stops a solve within a second or two with exit status 130; a Kalah
    solve first prints the bounds and move found so far.
    """
    given = given_options(ctx)
    max_bytes = _parse_bytes(max_memory)
    if game is not None:
        refuse_options(given, _TREE_OPTIONS, "does not apply to --game kalah (it solves the game, not a tree)")
        if position is not None:
            refuse_options(given, ("houses", "seeds"), "does not apply with --position (the position sets the board)")
        check_seconds(time_limit, "--time-limit")
        _solve_game(game, houses, seeds, empty_capture, position, time_limit, table_size, endgame_seeds, as_json,
                    max_bytes, endgame_cache)
        return
    refuse_options(given, _KALAH_SOLVE_OPTIONS, "applies to --game kalah only")
    from ..search import ALGORITHMS, solve as solve_tree
    from ..trees import UniformTree, load_tree

    if algorithm not in ALGORITHMS:
        raise UserError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
    if tree_file is not None and random is not None:
        raise UserError("give either a TREE_FILE or --random, not both")
    if tree_file is None and random is None:
        raise UserError("give a TREE_FILE or --random uniform")
    if random is not None and random not in ("uniform", "incremental"):
        raise UserError(f"--random must be 'uniform' or 'incremental', got {random!r}")
    if tree_file is not None:
        refuse_options(given, ("branching", "height", "seed", "values", "lo", "hi", "root"),
                       "applies to --random trees only, not to a TREE_FILE")
    elif random == "incremental":
        refuse_options(given, ("height", "values", "lo", "hi", "root"),
                       "applies to --random uniform only (incremental trees take --depth, --edge-lo, --edge-hi)")
    check_seconds(max_seconds, "--max-seconds")
    incremental = random == "incremental"
    if incremental:
        from ..trees import IncrementalTree

        kw = {}
        if edge_lo is not None:
            kw["edge_lo"] = edge_lo
        if edge_hi is not None:
            kw["edge_hi"] = edge_hi
        tree = IncrementalTree(branching, 10 if depth is None else depth, seed=seed,
                               random_branching=random_branching, **kw)
    elif random is not None:
        ints = values == "int"
        tree = UniformTree(
            branching,
            height,
            seed=seed,
            values=values,
            lo=int(lo) if ints and lo is not None and float(lo).is_integer() else lo,
            hi=int(hi) if ints and hi is not None and float(hi).is_integer() else hi,
            root=root,
        )
    else:
        tree = load_tree(tree_file, max_bytes=max_bytes)
    options = {"trace": trace, "max_bytes": max_bytes}
    if incremental and algorithm in ("fe", "alphabeta"):
        if search_depth is not None:
            options["depth"] = search_depth
    elif search_depth is not None:
        raise UserError("--search-depth applies to --algorithm fe or alphabeta on --random incremental trees")
    if not incremental and (random_branching or edge_lo is not None or edge_hi is not None):
        raise UserError("--random-branching, --edge-lo and --edge-hi apply to --random incremental only")
    if algorithm == "fe":
        options["delta"] = 1.0 if delta is None else delta
        options["bounds"] = _fe_bounds(tree, bounds or "exact", bounds_file, likely)
    elif delta is not None or bounds is not None or bounds_file is not None or likely is not None:
        raise UserError("--delta, --bounds, --bounds-file and --likely apply to --algorithm fe only")
    if incremental:
        depth = None  # consumed as the tree depth
    per_algorithm = {
        "--depth": (depth is not None, "depth", depth, ("two-agent",)),
        "--loss-threshold": (loss_threshold is not None, "loss_threshold", loss_threshold, ("two-agent",)),
        "--restart-deepest": (restart_deepest, "restart_deepest", True, ("fsss",)),
        "--stop-when-proven": (stop_when_proven, "stop_when_proven", True, ("fsss",)),
        "--max-leaves": (max_leaves is not None, "max_leaves", max_leaves, ("fsss",)),
        "--max-seconds": (max_seconds is not None, "max_seconds", max_seconds, ("fsss",)),
        "--value-range": (value_range is not None, "value_range", value_range, ("fsss",)),
        "--first-guess": (first_guess is not None, "first_guess", first_guess, ("mtdf",)),
        "--storage": (storage is not None, "storage", storage, ("fsss", "mtd-inf", "mtdf")),
    }
    for flag, (present, key, value, algorithms) in per_algorithm.items():
        if present:
            if algorithm not in algorithms:
                raise UserError(f"{flag} applies to --algorithm {' or '.join(algorithms)} only")
            options[key] = value
    cancel = None
    if algorithm in ("fsss", "mtd-inf", "mtdf"):  # anytime: Ctrl-C returns the bounds found so far
        import threading

        cancel = threading.Event()
        options["cancel"] = cancel
    try:
        result, seconds, jit_seconds = timed(run_interruptibly, solve_tree, tree, algorithm, stop_event=cancel,
                                             **options)
    except Interrupted:
        _stop_interrupted(f"{algorithm} keeps no partial result on a tree; for an anytime answer use "
                          "--algorithm fsss (or mtdf) and press Ctrl-C, or give fsss --max-seconds N")
    desc = tree.describe()
    if tree_file is not None:
        desc["file"] = str(tree_file)
    out = result.to_dict(integral=tree.integral)
    out["seconds"] = seconds  # the search itself: JIT compilation and cache loading are in compile_seconds
    out["compile_seconds"] = jit_seconds
    out["tree"] = desc
    if as_json:
        _emit_json(out)
        if result.extra.get("interrupted"):
            _stop_interrupted(f"{algorithm} stopped early; the JSON holds the bounds found so far")
        return
    table = Table(title=f"{algorithm} on {_tree_title(desc)}", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    for key in ("value", "best_move", "leaves_expanded", "nodes_visited"):
        if out[key] != -1 or key != "leaves_expanded":
            table.add_row(key, str(out[key]))
    for key, val in result.extra.items():
        table.add_row(key, str(val))
    table.add_row("seconds", f"{seconds:.6f}")
    stdout.print(table)
    if trace:
        stdout.print("trace: " + " ".join(str(x) for x in out["trace"]))
    if result.extra.get("interrupted"):
        _stop_interrupted(f"{algorithm} stopped early: the value lies in [{_bound_text(result.extra.get('lower'))}, "
                          f"{_bound_text(result.extra.get('upper'))}]")


def _bound_text(x) -> str:
    if x is None or (isinstance(x, float) and math.isinf(x)):
        return "-inf" if x is not None and x < 0 else "+inf" if x is not None else "?"
    return f"{x:g}" if isinstance(x, float) else str(x)


_KALAH_TOURNAMENT_OPTIONS = ("houses", "seeds", "empty_capture", "openings", "max_plies", "workers", "lockstep")
_TREE_GAME_OPTIONS = ("branching", "fixed_branching", "tree_depth", "depth_increment", "max_horizon")


@app.command()
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

    from ..games.random_tree_game import GameConfig, PlayerSpec, depth_increment_protocol, run_tournament

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


def _kalah_state(houses, seeds, empty_capture, position):
    from ..games.kalah import KalahState

    if position is not None:
        return KalahState.from_text(position, empty_capture=empty_capture)
    return KalahState.initial(houses, seeds, empty_capture=empty_capture)


def _solve_game(game, houses, seeds, empty_capture, position, time_limit, table_size, endgame_seeds, as_json,
                max_bytes, endgame_cache=True):
    from ..games.kalah_search import solve_exact

    if game != "kalah":
        raise UserError(f"--game must be kalah, got {game!r}")
    if table_size is not None and not 16 <= table_size <= 2**40:
        raise UserError(f"--table-size must lie in 16..2**40 slots, got {table_size}")
    state = _kalah_state(houses, seeds, empty_capture, position)
    shown = {"iteration": -1}

    def progress(iteration, lo, up, nodes, seconds):
        # after each finished null-window test, and about every second while one runs
        if iteration != shown["iteration"]:
            shown["iteration"] = iteration
            label = f"test {iteration}" if iteration else "first test"
        else:
            label = "  running"
        stderr.print(f"{label}: margin in [{lo}, {up}], {nodes:,} nodes, {seconds:.1f} s")

    def endgame_progress(done, total, seconds):
        stderr.print(f"endgame database: {done:,} of {total:,} positions, {seconds:.1f} s")

    if endgame_seeds:
        stderr.print(f"endgame database: <= {endgame_seeds} seeds in the houses (built once, then cached)"
                     if endgame_cache else f"building the endgame database (<= {endgame_seeds} seeds in the houses)")
    from ..games.kalah_endgame import default_cache_dir

    result, _, jit_seconds = timed(
        solve_exact, state, tt_capacity=table_size, time_limit=time_limit, progress=progress, max_bytes=max_bytes,
        endgame_seeds=endgame_seeds, endgame_cache_dir=default_cache_dir() if endgame_cache else None,
        endgame_progress=endgame_progress)
    # the solver's own clock, less the time Numba spent compiling or loading kernels
    result["compile_seconds"] = jit_seconds
    result["seconds"] = max(result["seconds"] - jit_seconds, 0.0)
    result.update(game="kalah", houses=state.houses, empty_capture=state.empty_capture, position=state.to_text(),
                  player_to_move=state.player)
    interrupted = bool(result.get("interrupted"))
    if as_json:
        _emit_json(result)
    else:
        table = Table(title=f"Kalah({state.houses}, {seeds if position is None else '?'}) "
                            f"{'empty-capture' if state.empty_capture else 'standard'} rules", show_header=False)
        table.add_column("key", style="bold")
        table.add_column("value")
        for key in ("position", "margin", "best_move", "best_move_source", "complete", "lower", "upper", "nodes",
                    "iterations", "table_slots", "endgame_seeds"):
            if key in result:
                table.add_row(key, str(result[key]))
        table.add_row("seconds", f"{result['seconds']:.2f}")
        stdout.print(table)
    if interrupted:
        _stop_interrupted(f"the margin lies in [{result.get('lower')}, {result.get('upper')}] "
                          f"(best move so far: pit {result.get('best_move')}, {result.get('best_move_source')}); "
                          "run again to solve it")
    elif not result.get("complete") and result.get("stop_reason") == "time_limit" and not as_json:
        stderr.print(f"time limit reached: the margin lies in [{result.get('lower')}, {result.get('upper')}]")


@app.command()
def play(
    p0: Annotated[str, typer.Option("--p0", help="Player 0: human, random, alphabeta:depth=8, fsss:depth=5, ...")]
    = "human",
    p1: Annotated[str, typer.Option("--p1", help="Player 1 (same specs).")] = "alphabeta:depth=8",
    houses: Annotated[int, typer.Option("--houses", help="Houses per side (m).")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per house (n).")] = 4,
    empty_capture: Annotated[bool, typer.Option("--empty-capture", help="The empty-capture rule variant.")] = False,
    position: Annotated[Optional[str], typer.Option("--position", help="Start from this position.")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for random agents.")] = None,
    max_plies: Annotated[int, typer.Option("--max-plies", help="Stop after this many plies.")] = 300,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (moves, final_board, margin).")]
    = False,
):
    """Play Kalah in the terminal: people against engines, or engines against each other."""
    from ..arena.agents import parse_agent, play_game

    check_positive({"--max-plies": max_plies})
    agents = [parse_agent(p0, seed=seed), parse_agent(p1, seed=None if seed is None else seed + 1)]
    if as_json and any(a.kind == "human" for a in agents):
        raise UserError("--json needs two engine players (no human)")
    state = _kalah_state(houses, seeds, empty_capture, position)
    if state.is_over:
        raise UserError("the position is already finished")

    def human(st):
        stdout.print(st.ascii())
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
        if as_json:
            return
        number = pit if before.player == 0 else pit - before.houses - 1
        extra = f" ({agent.last.get('depth', '')} plies, value {agent.last.get('value')})" \
            if getattr(agent, "last", None) and "value" in agent.last else ""
        stdout.print(f"player {before.player} sows house {number} (pit {pit}){extra}")
        if not any(getattr(x, "kind", "human") == "human" for x in agents) or after.is_over:
            stdout.print(after.ascii())

    result = play_game(state, agents, max_plies=max_plies, on_move=on_move)
    if as_json:
        _emit_json(result)
        return
    stdout.print(f"result: {result['result'] or 'unfinished'}, margin {result['margin']:+d} after {result['plies']} plies")


_POSITION_EXAMPLE = "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0"


def _read_positions(path: Path, empty_capture: bool):
    """(line number, KalahState) for each position line of ``path`` (blank
    lines and ``#`` comments skipped); a bad line is one ``FILE:LINE:`` error."""
    from ..games.kalah import MAX_TEXT, KalahState
    from ..mcts.multi import MAX_TREES

    try:
        fh = open(path, "rb")  # decoded line by line, so a bad byte is reported on its own line
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    found: list = []
    number = 0
    with fh:
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
                state = KalahState.from_text(text, empty_capture=empty_capture)
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
        raise UserError(f"{path}: no positions (one a line, e.g. '{_POSITION_EXAMPLE}')")
    return found


@app.command()
def analyse(
    positions_file: Annotated[
        Path, typer.Argument(metavar="POSITIONS_FILE", help=f"Positions, one a line in the text form ({_POSITION_EXAMPLE}); blank lines and "
                                  "lines starting with # are skipped.", show_default=False)
    ],
    game: Annotated[str, typer.Option("--game", help="Game: kalah.")] = "kalah",
    iterations: Annotated[
        Optional[int], typer.Option("--iterations", help="MCTS iterations per position [default: 2000].",
                                    show_default=False)
    ] = None,
    time_limit: Annotated[
        Optional[float], typer.Option("--time", help="Seconds for the whole batch instead of --iterations.")
    ] = None,
    playouts: Annotated[int, typer.Option("--playouts", help="Random playouts per leaf.")] = 32,
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
    """MCTS analysis of many Kalah positions in one launch: best move, visits and value of every move.

    One tree per position, all grown together (one thread block each on a
    GPU, all cores on the CPU). A move's value is the mean reward (win 1,
    draw 1/2, loss 0) of the player to move; moves are pit indices. Ctrl-C
    stops the search, prints what the trees hold and exits with status 130.
    """
    from ..mcts.multi import analyse_positions

    if game != "kalah":
        raise UserError(f"--game must be kalah, got {game!r}")
    if iterations is not None and time_limit is not None:
        raise UserError("give --iterations or --time, not both")
    check_seconds(time_limit, "--time")
    check_positive({"--iterations": iterations, "--playouts": playouts, "--leaves": leaves})
    if not 0 <= seed < 2**64:
        raise UserError(f"--seed must lie in [0, 2**64), got {seed}")
    max_bytes = _parse_bytes(max_memory)
    if out is not None:
        check_output_file(out)
    if time_limit is None and iterations is None:
        iterations = 2000
    found = _read_positions(positions_file, empty_capture)
    states = [s for _, s in found]
    options = dict(c=c, formula=formula, reward=reward, playouts=playouts, leaves=leaves, backend=backend,
                   max_bytes=max_bytes)

    def run():
        # compile (or load) the kernel first, so that neither the time budget nor `seconds` pays for it
        warm = analyse_positions(states[:1], iterations=1, seed=seed, **options)
        if warm["interrupted"]:
            return warm, True
        return analyse_positions(states, iterations=iterations, time=time_limit, seed=seed, **options), False

    (r, warm_only), _, jit_seconds = timed(run)
    if warm_only:
        _stop_interrupted("before the search started; nothing to show")
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
        write_text_atomic(out, json.dumps(_json_safe(result), indent=2) + "\n")
    if as_json:
        _emit_json(result)
    else:
        _print_analysis(result)
    if r["interrupted"]:
        _stop_interrupted(f"after {r['iterations']:,} iterations per position; the figures above are from those")


def _print_analysis(result: dict) -> None:
    rules = "empty-capture" if result["empty_capture"] else "standard"
    table = Table(title=f"Kalah, {result['houses']} houses, {rules} rules: {len(result['positions']):,} positions, "
                        f"{result['iterations']:,} iterations x {result['playouts']} playouts each "
                        f"({result['backend']})")
    for col, justify in (("line", "right"), ("position", "left"), ("best", "right"), ("pit", "right"),
                         ("visits", "right"), ("value", "right")):
        table.add_column(col, justify=justify)
    for pos in result["positions"]:
        kids = pos["children"]
        col = {k: "\n".join(f(ch) for ch in kids) for k, f in (
            ("pit", lambda ch: f"{'*' if ch['move'] == pos['move'] else ''}{ch['move']}"),
            ("visits", lambda ch: f"{ch['visits']:,}"),
            ("value", lambda ch: "-" if ch["value"] is None else f"{ch['value']:.3f}"))}
        table.add_row(str(pos["line"]), pos["position"], str(pos["move"]), col["pit"], col["visits"], col["value"])
    pps = result["positions_per_second"]
    stdout.print(table)
    reward = "the heuristic, in [0, 1]" if result["reward"] == "heuristic" else "win 1, draw 1/2, loss 0"
    stdout.print(f"* best move; value: the player to move's mean reward ({reward}). "
                 f"{result['seconds']:.3f} s, {'-' if pps is None else f'{pps:,.1f}'} positions/s, "
                 f"{result['playouts_total']:,} playouts")


def _fe_bounds(tree, mode: str, bounds_file, likely):
    """The ``bounds`` argument of forward estimation from the CLI options."""
    from ..search import EdgeBounds

    if mode in ("exact", "online"):
        if bounds_file is not None or likely is not None:
            raise UserError("--bounds-file and --likely apply to --bounds offline only")
        return mode
    if mode != "offline":
        raise UserError(f"--bounds must be exact, online or offline, got {mode!r}")
    if bounds_file is not None:
        learned = EdgeBounds.load(bounds_file)
    else:
        learned = EdgeBounds.learn(tree.branching, random_branching=tree.random_branching,
                                   edge_lo=tree.edge_lo, edge_hi=tree.edge_hi)
    if likely is not None:
        try:
            return learned.likely(likely)
        except ValueError as exc:
            raise UserError(f"--likely: {exc}") from None
    return learned


def _tree_title(desc: dict) -> str:
    if desc["kind"] == "incremental":
        return (
            f"incremental tree b={desc['branching']}{' (random)' if desc['random_branching'] else ''} "
            f"d={desc['depth']} seed={desc['seed']}"
        )
    if desc["kind"] == "uniform":
        return (
            f"uniform tree b={desc['branching']} h={desc['height']} seed={desc['seed']} "
            f"values={desc['values']}"
        )
    return f"{desc.get('file', 'tree')} ({desc['num_nodes']} nodes, {desc['num_leaves']} leaves)"


def _announce_out_dir(out: Path) -> None:
    """Check an output directory before a long run and say where results go."""
    check_output_dir(out)
    stderr.print(f"writing results to {out.resolve()}")


def _parse_heights(text: str, option: str = "--heights", most: int = 64) -> list[int]:
    """'10-24' (step 2), '10-24:1', or '10,12,16'; each in 0..most."""
    try:
        if "-" in text:
            rng, _, step = text.partition(":")
            a, b = (int(x) for x in rng.split("-"))
            step = int(step) if step else 2
            if step < 1:
                raise ValueError
            values = list(range(a, min(b, most + 1) + 1, step)) if a <= most else [a]
        else:
            values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"{option} must look like 10-24, 10-24:1 or 10,12,16; got {text!r}") from None
    if not values:
        raise UserError(f"{option} {text!r} names no value")
    bad = [v for v in values if not 0 <= v <= most]
    if bad or (("-" in text) and int(text.partition(":")[0].split("-")[1]) > most):
        raise UserError(f"{option} values must lie in 0..{most}; got {text!r}")
    return values


@bench_app.command("throughput")
def bench_throughput(
    heights: Annotated[str, typer.Option("--heights", help="Tree heights: 10-24 (step 2), 10-24:1 or 10,14,18.")] = "10-24",
    trees: Annotated[int, typer.Option("--trees", help="Trees per height.")] = 20,
    repeats: Annotated[int, typer.Option("--repeats", help="Timed repeats (median reported).")] = 5,
    python_max_height: Annotated[
        int, typer.Option("--python-max-height", help="Largest height timed with plain Python.")
    ] = 20,
    python_trees: Annotated[int, typer.Option("--python-trees", help="Trees per height for plain Python.")] = 3,
    first_call: Annotated[bool, typer.Option("--first-call/--no-first-call", help="Time fresh processes.")] = True,
    c_reference: Annotated[
        bool, typer.Option("--c/--no-c", help="Also time the C reference alpha-beta (bench/c_reference).")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result to this file.")] = None,
):
    """Leaves/s of Numba alpha-beta vs the plain-Python reference on binary trees."""
    from ..benchmarks.throughput import run_throughput

    hs = _parse_heights(heights)
    check_positive({"--trees": trees, "--repeats": repeats, "--python-trees": python_trees})
    if out is not None:
        check_output_file(out)
    with stderr.status("benchmarking") as status:
        result = run_throughput(
            heights=hs,
            trees_per_height=trees,
            repeats=repeats,
            python_max_height=python_max_height,
            python_trees=python_trees,
            first_call=first_call,
            c_reference=c_reference,
            progress=lambda msg: status.update(f"benchmarking: {msg}"),
        )
    if out is not None:
        write_text_atomic(out, json.dumps(_json_safe(result), indent=2) + "\n")
    if as_json:
        _emit_json(result)
        return
    print_throughput_table(result, stdout)


@bench_app.command("fsss-paper")
def bench_fsss_paper(
    out: Annotated[Path, typer.Option("--out", help="Directory for CSV, JSON, markdown and PNG.")] = Path("jitsearch-results/fsss_paper"),
    heights: Annotated[str, typer.Option("--heights", help="Experiment 1 heights (4-24:1).")] = "4-24:1",
    trees: Annotated[int, typer.Option("--trees", help="Experiment 1 trees per height.")] = 500,
    exp2_heights: Annotated[str, typer.Option("--exp2-heights", help="Experiment 2 heights.")] = "4-20:1",
    exp2_trees: Annotated[int, typer.Option("--exp2-trees", help="Experiment 2 trees per height.")] = 500,
    cost: Annotated[bool, typer.Option("--cost/--no-cost", help="Also run the cost measurements.")] = True,
    cost_heights: Annotated[str, typer.Option("--cost-heights", help="Heights for the cost table.")] = "16,20,22",
    resume: Annotated[bool, typer.Option("--resume", help="Continue from the CSV files in --out.")] = False,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Processes (default: all cores).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
):
    """Reproduce section 4 of the FSSS paper (Figure 4.1 a/b) and measure the cost."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..benchmarks.fsss_paper import run_fsss_paper

    if workers is not None and workers < 1:
        raise UserError("--workers must be >= 1")
    hs, hs2 = _parse_heights(heights), _parse_heights(exp2_heights, "--exp2-heights")
    chs = _parse_heights(cost_heights, "--cost-heights")
    check_positive({"--trees": trees, "--exp2-trees": exp2_trees})
    _announce_out_dir(out)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=stderr, transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def progress(desc, done, total):
            bar.update(task, description=desc, completed=done, total=total or None)

        try:
            result = run_fsss_paper(
                out, heights=hs, trees=trees, exp2_heights=hs2, exp2_trees=exp2_trees, cost=cost,
                cost_heights=chs, resume=resume, workers=workers, progress=progress,
                command=(
                    f"jitsearch bench fsss-paper --heights {heights} --trees {trees} --exp2-heights {exp2_heights} "
                    f"--exp2-trees {exp2_trees} --cost-heights {cost_heights}" + ("" if cost else " --no-cost")
                ),
            )
        except KeyboardInterrupt:
            bar.stop()
            _stop_interrupted(f"the finished rows and games are in {out}; rerun with --resume to continue")
    if as_json:
        _emit_json(result)
        return
    sys.stdout.write((out / "summary.md").read_text())
    stdout.print(f"written to {out}/ (experiment1_trees.csv, experiment2_trees.csv, summary.json, summary.md, "
                 f"{', '.join(result['plots']) or 'no plots: install the bench extra for matplotlib'})")


@bench_app.command("fe-paper")
def bench_fe_paper(
    out: Annotated[Path, typer.Option("--out", help="Directory for CSV, JSONL, JSON, markdown and PNG.")] = Path("jitsearch-results/fe_paper"),
    fig1_trees: Annotated[int, typer.Option("--fig1-trees", help="Figure 1 trees per point (fewer when deep).")] = 1000,
    fig2_trees: Annotated[int, typer.Option("--fig2-trees", help="Figure 2 trees.")] = 1000,
    fig3: Annotated[bool, typer.Option("--fig3/--no-fig3", help="Also play figure 3(a)'s tournaments.")] = True,
    fig3_pairs: Annotated[int, typer.Option("--fig3-pairs", help="Pairs per tournament.")] = 100,
    fig3_max_horizon: Annotated[int, typer.Option("--fig3-max-horizon", help="Protocol: largest horizon.")] = 6,
    quick: Annotated[bool, typer.Option("--quick", help="Small depths only (a smoke run in seconds).")] = False,
    resume: Annotated[bool, typer.Option("--resume", help="Continue from the files in --out.")] = False,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Processes (default: all cores).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
):
    """Reproduce Zhang's forward-estimation figures 1, 2 and 3(a)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..benchmarks.fe_paper import run_fe_paper

    if workers is not None and workers < 1:
        raise UserError("--workers must be >= 1")
    check_positive({"--fig1-trees": fig1_trees, "--fig2-trees": fig2_trees, "--fig3-pairs": fig3_pairs,
                    "--fig3-max-horizon": fig3_max_horizon})
    depths = {2: [2, 4, 6], 5: [2, 3, 4], 10: [2, 3]} if quick else None
    _announce_out_dir(out)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("starting", total=None)
        try:
            result = run_fe_paper(
                out, fig1_trees=fig1_trees, fig1_depths=depths, fig2_trees=fig2_trees, fig3=fig3,
                fig3_pairs=fig3_pairs, fig3_max_horizon=3 if quick else fig3_max_horizon, resume=resume,
                workers=workers,
                progress=lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total or None),
                command=f"jitsearch bench fe-paper --fig1-trees {fig1_trees} --fig2-trees {fig2_trees} "
                        f"--fig3-pairs {fig3_pairs} --fig3-max-horizon {fig3_max_horizon}" + (" --quick" if quick else ""),
            )
        except KeyboardInterrupt:
            bar.stop()
            _stop_interrupted(f"the finished rows and games are in {out}; rerun with --resume to continue")
    if as_json:
        _emit_json(result)
        return
    sys.stdout.write((out / "summary.md").read_text())
    stdout.print(f"written to {out}/ ({', '.join(result['plots']) or 'no plots: install the bench extra'})")


@bench_app.command("mancala-paper")
def bench_mancala_paper(
    out: Annotated[Path, typer.Option("--out", help="Directory for JSONL, JSON, markdown and PNG.")] = Path("jitsearch-results/mancala_paper"),
    pairs: Annotated[int, typer.Option("--pairs", help="Pairs per cell in the full phase.")] = 200,
    paper_games: Annotated[int, typer.Option("--paper-games", help="Games per cell in the paper phase.")] = 50,
    iterations: Annotated[str, typer.Option("--iterations", help="Extension: MCTS/HMCTS iterations.")]
    = "1000,10000,100000",
    ext_pairs: Annotated[str, typer.Option("--ext-pairs", help="Extension: pairs per iteration count.")]
    = "100,100,25",
    workers: Annotated[int, typer.Option("--workers", help="Games played in parallel processes.")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
):
    """Reproduce seed 003's four Kalah tables (and MCTS at more iterations); resumes by itself."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..benchmarks.mancala_paper import run_mancala_paper

    try:
        iters = [int(x) for x in iterations.split(",") if x.strip()]
        ext = [int(x) for x in ext_pairs.split(",") if x.strip()]
    except ValueError:
        raise UserError("--iterations and --ext-pairs take comma-separated integers") from None
    if len(iters) != len(ext):
        raise UserError("--iterations and --ext-pairs need the same number of entries")
    if pairs < 1 or paper_games < 2 or workers < 1 or any(x < 1 for x in iters + ext):
        raise UserError("--pairs, --ext-pairs, --iterations and --workers must be >= 1, --paper-games >= 2")
    _announce_out_dir(out)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("starting", total=None)
        try:
            result = run_mancala_paper(
                out, pairs=pairs, paper_games=paper_games, ext_iterations=tuple(iters), ext_pairs=tuple(ext),
                workers=workers,
                progress=lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total),
                command=f"jitsearch bench mancala-paper --pairs {pairs} --paper-games {paper_games} "
                        f"--iterations {iterations} --ext-pairs {ext_pairs}",
            )
        except KeyboardInterrupt:
            bar.stop()
            _stop_interrupted(f"the finished rows and games are in {out}; rerun the same command to continue")
    if as_json:
        _emit_json(result)
        return
    sys.stdout.write((out / "summary.md").read_text())
    stdout.print(f"written to {out}/ ({', '.join(result['plots']) or 'no plots: install the bench extra'})")


@bench_app.command("playouts")
def bench_playouts(
    backend: Annotated[str, typer.Option("--backend", help="cpu, cuda or auto.")] = "auto",
    houses: Annotated[int, typer.Option("--houses", help="Houses per side (m).")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds per house (n).")] = 4,
    states: Annotated[int, typer.Option("--states", help="States per launch (N).")] = 1024,
    playouts: Annotated[int, typer.Option("--playouts", help="Playouts per state (P).")] = 64,
    repeats: Annotated[int, typer.Option("--repeats", help="Timed launches (median).")] = 5,
    threads: Annotated[int, typer.Option("--threads", help="CPU threads (cpu backend).")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the playouts.")] = 0,
    c_reference: Annotated[
        bool, typer.Option("--c/--no-c", help="cpu: also time the C reference (bench/c_reference) in the same run.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Random Kalah playouts per second on the CPU twin or the CUDA kernel (and the C reference)."""
    from ..benchmarks.playouts_bench import measure_playouts
    from ..games.kalah import KalahState
    from ..kernels.backend import BackendError

    KalahState.initial(houses, seeds)  # validates the board
    if states < 1 or playouts < 1 or repeats < 1 or threads < 1:
        raise UserError("--states, --playouts, --repeats and --threads must be >= 1")
    if not 0 <= seed < 2**64:
        raise UserError("--seed must lie in [0, 2**64)")
    try:
        r = measure_playouts(backend, houses, seeds, states, playouts, repeats, threads, seed,
                             c_reference=c_reference)
    except BackendError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        _emit_json(r)
        return
    stdout.print(f"{r['backend']} ({r['device']}): {r['playouts_per_second']:,.0f} playouts/s, "
                 f"{r['plies_per_second']:,.0f} plies/s  [Kalah({houses},{seeds}), {states} states x "
                 f"{playouts} playouts, median of {repeats}]")
    if r.get("c_plain_playouts_per_second"):
        stdout.print(f"C reference, one core ({r.get('c_compiler')}): plain {r['c_plain_playouts_per_second']:,.0f}/s, "
                     f"tuned {r['c_tuned_playouts_per_second']:,.0f}/s; jitsearch = {r['ratio_to_c_plain']:.2f}x "
                     f"plain, {r['ratio_to_c_tuned']:.2f}x tuned (medians of per-run ratios); identical results: "
                     f"{r.get('c_identical')}")
    elif r.get("c_note"):
        stderr.print(f"note: {r['c_note']}")


@bench_app.command("mcts")
def bench_mcts(
    simulations: Annotated[int, typer.Option("--simulations", help="MCTS simulations per timed search.")] = 20000,
    repeats: Annotated[int, typer.Option("--repeats", help="Timed runs per figure (median).")] = 5,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Threads for the parallel figures.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """MCTS simulations/s and random playouts/s on Kalah(6,4), vs OpenSpiel's MCTSBot if installed."""
    from ..benchmarks.mcts_bench import run_mcts_bench

    if simulations < 1 or repeats < 1 or (workers is not None and workers < 1):
        raise UserError("--simulations, --repeats and --workers must be >= 1")
    if out is not None:
        check_output_file(out)
    with stderr.status("benchmarking") as status:
        r = run_mcts_bench(simulations=simulations, repeats=repeats, workers=workers,
                           progress=lambda msg: status.update(f"benchmarking: {msg}"))
    if out is not None:
        write_text_atomic(out, json.dumps(_json_safe(r), indent=2) + "\n")
    if as_json:
        _emit_json(r)
        return
    table = Table(title=f"Kalah(6,4) from the start; median of {repeats} runs; {r['machine']}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("ratio", justify="right")
    os_rate = (r.get("openspiel") or {}).get("mcts_sims_per_second")
    table.add_row("random playouts/s, one core", f"{r['playouts_per_second_1core']:,.0f}", "")
    table.add_row(f"random playouts/s, {r['workers']} threads", f"{r['playouts_per_second_all_cores']:,.0f}",
                  f"{r['playouts_per_second_all_cores'] / r['playouts_per_second_1core']:.2f}x one core")
    table.add_row("MCTS sims/s, one core", f"{r['mcts_sims_per_second_1core']:,.0f}",
                  f"{r['mcts_sims_per_second_1core'] / os_rate:.2f}x OpenSpiel" if os_rate else "")
    table.add_row(f"MCTS sims/s, root parallel ({r['workers']} threads)",
                  f"{r['mcts_sims_per_second_root_parallel']:,.0f}",
                  f"{r['root_parallel_speedup']:.2f}x one core")
    if os_rate:
        table.add_row("OpenSpiel MCTSBot sims/s (C++)", f"{os_rate:,.0f}", "1.00x")
    stdout.print(table)


def _parse_list(text: str, option: str, kind, example: str) -> list:
    """Comma-separated values of ``kind`` (int or float); one line on error."""
    try:
        values = [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"{option} takes comma-separated {'integers' if kind is int else 'numbers'} like "
                        f"{example}, got {text!r}") from None
    if not values:
        raise UserError(f"{option} {text!r} names no value")
    return values


def _parse_rates(text: str, leaves: Optional[int], backend: str) -> list[tuple]:
    """--rates: TREESxPLAYOUTS or TREESxLEAVESxPLAYOUTS entries, each checked
    against the multi-tree search's limits."""
    from ..mcts.multi import MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREES, default_leaves

    settings = []
    for entry in (x.strip() for x in text.split(",")):
        if not entry:
            continue
        try:
            parts = tuple(int(x) for x in entry.lower().split("x"))
            if len(parts) not in (2, 3):
                raise ValueError
        except ValueError:
            raise UserError(f"--rates entries look like TREESxPLAYOUTS or TREESxLEAVESxPLAYOUTS (e.g. 256x32 or "
                            f"256x8x32), got {entry!r}") from None
        trees, step_leaves, playouts = (parts[0], leaves, parts[1]) if len(parts) == 2 else parts
        shown = default_leaves(backend) if step_leaves is None else step_leaves
        if not 1 <= trees <= MAX_TREES or not 1 <= playouts <= MAX_LEAF_PLAYOUTS or not 1 <= shown <= MAX_LEAVES:
            raise UserError(f"--rates {entry}: trees must lie in 1..{MAX_TREES}, leaves in 1..{MAX_LEAVES}, "
                            f"playouts in 1..{MAX_LEAF_PLAYOUTS}")
        if shown * playouts > MAX_STEP_PLAYOUTS:
            raise UserError(f"--rates {entry}: leaves x playouts = {shown} x {playouts} is above the limit of "
                            f"{MAX_STEP_PLAYOUTS} playouts per step")
        settings.append(parts)
    if not settings:
        raise UserError(f"--rates {text!r} names no setting")
    return settings


@bench_app.command("gpu-mcts")
def bench_gpu_mcts(
    backend: Annotated[str, typer.Option("--backend", help="auto, cpu (the CPU twin) or cuda.")] = "auto",
    rates: Annotated[
        str, typer.Option("--rates", help="Rate settings: TREESxPLAYOUTS or TREESxLEAVESxPLAYOUTS, comma-separated.")
    ] = "1x32,64x32,256x32,256x64,1024x32",
    rate_seconds: Annotated[float, typer.Option("--rate-seconds", help="Seconds per rate setting.")] = 1.0,
    positions: Annotated[
        int, typer.Option("--positions", help="Random positions analysed in one batch (0: skip).")
    ] = 10_000,
    analyse_iterations: Annotated[
        int, typer.Option("--analyse-iterations", help="Iterations per analysed position.")
    ] = 1000,
    move_times: Annotated[str, typer.Option("--move-times", help="Seconds per move of the games.")] = "0.05,0.2,1.0",
    pairs: Annotated[
        str, typer.Option("--pairs", help="Pairs per move time (each against both CPU opponents).")
    ] = "10,8,2",
    trees: Annotated[
        Optional[int], typer.Option("--trees", help="Trees of the device agent [default: parallel tree 1; root "
                                                    "256 on cuda, one per core on cpu].", show_default=False)
    ] = None,
    playouts: Annotated[int, typer.Option("--playouts", help="Playouts per leaf (analysis and games).")] = 32,
    leaves: Annotated[
        Optional[int], typer.Option("--leaves", help="Leaves per step [default: 8 on cuda, 1 on cpu].",
                                    show_default=False)
    ] = None,
    workers: Annotated[
        Optional[int], typer.Option("--workers", help="Threads of CPU root parallelism [default: all cores].",
                                    show_default=False)
    ] = None,
    parallel: Annotated[
        str, typer.Option("--parallel", help="Device agent of the games: tree (one tree, many blocks) or root "
                                             "(many trees, one block each).")
    ] = "tree",
    blocks: Annotated[
        Optional[int], typer.Option("--blocks", help="parallel tree: blocks per tree [default: 8 per SM].",
                                    show_default=False)
    ] = None,
    shared_rates: Annotated[
        str, typer.Option("--shared-rates", help="Tree-parallel rate settings: TREESxBLOCKSxPLAYOUTS, "
                                                 "comma-separated (blocks above 1 need a GPU).")
    ] = "",
    opponents: Annotated[
        str, typer.Option("--opponents", help="CPU opponents of the games: one (one core), all (every core), "
                                              "or one,all.")
    ] = "one,all",
    out: Annotated[Path, typer.Option("--out", help="Directory for JSON, markdown and the games (JSONL).")]
    = Path("jitsearch-results/gpu_mcts"),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Device-resident MCTS vs CPU MCTS: rates, positions analysed per second, strength at equal time per move.

    Without a GPU (or with --backend cpu) the multi-tree search runs on the
    CPU twin: the figures are then CPU figures, not GPU figures. The games
    are appended to --out/games; rerunning the same command continues them.
    """
    from ..benchmarks.gpu_mcts_bench import format_table, run_gpu_mcts_bench
    from ..games.kalah import max_threads
    from ..kernels.backend import BackendError, resolve
    from ..mcts.multi import MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREE_ITERATIONS, MAX_TREES

    try:
        resolved = resolve(backend)
    except BackendError as exc:
        raise UserError(str(exc)) from None
    check_seconds(rate_seconds, "--rate-seconds")
    check_positive({"--analyse-iterations": analyse_iterations, "--trees": trees, "--playouts": playouts,
                    "--leaves": leaves, "--workers": workers})
    if positions < 0 or positions > MAX_TREES:
        raise UserError(f"--positions must lie in 0..{MAX_TREES} (one launch), got {positions}")
    for option, value, most in (("--analyse-iterations", analyse_iterations, MAX_TREE_ITERATIONS),
                                ("--trees", trees, MAX_TREES), ("--playouts", playouts, MAX_LEAF_PLAYOUTS),
                                ("--leaves", leaves, MAX_LEAVES), ("--workers", workers, max_threads())):
        if value is not None and value > most:
            raise UserError(f"{option} must be at most {most}, got {value}")
    if leaves is not None and leaves * playouts > MAX_STEP_PLAYOUTS:
        raise UserError(f"--leaves x --playouts = {leaves} x {playouts} is above the limit of {MAX_STEP_PLAYOUTS} "
                        "playouts per step")
    settings = _parse_rates(rates, leaves, resolved)
    if parallel not in ("tree", "root"):
        raise UserError(f"--parallel must be tree or root, got {parallel!r}")
    check_positive({"--blocks": blocks})
    from ..mcts.shared import MAX_BLOCKS

    if blocks is not None and blocks > MAX_BLOCKS:
        raise UserError(f"--blocks must be at most {MAX_BLOCKS}, got {blocks}")
    if parallel == "tree" and leaves is not None and move_times:
        stderr.print("note: --leaves sets the rates and the analysis; the tree-parallel games evaluate one leaf "
                     "per block", soft_wrap=True)
    shared_settings = []
    for item in (x.strip() for x in shared_rates.split(",") if x.strip()):
        parts = item.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise UserError(f"--shared-rates takes TREESxBLOCKSxPLAYOUTS settings (positive integers), got {item!r}")
        t_, b_, p_ = (int(p) for p in parts)
        if resolved == "cpu" and b_ != 1:
            raise UserError(f"--shared-rates {item}: more than one block per tree needs a GPU (backend cpu grows "
                            "each tree with one worker)")
        if b_ * t_ > MAX_BLOCKS or p_ > MAX_LEAF_PLAYOUTS:
            raise UserError(f"--shared-rates {item}: at most {MAX_BLOCKS} blocks in all and {MAX_LEAF_PLAYOUTS} "
                            "playouts per leaf")
        shared_settings.append((t_, b_, p_))
    opponent_keys = tuple(x.strip() for x in opponents.split(",") if x.strip())
    if not opponent_keys or any(x not in ("one", "all") for x in opponent_keys):
        raise UserError(f"--opponents takes one, all or one,all, got {opponents!r}")
    if parallel == "tree" and resolved == "cpu" and blocks not in (None, 1):
        raise UserError("--blocks above 1 needs a GPU (backend cpu grows each tree with one worker)")
    times = _parse_list(move_times, "--move-times", float, "0.05,0.2,1.0")
    for t in times:
        check_seconds(t, "--move-times")
    n_pairs = _parse_list(pairs, "--pairs", int, "10,8,2")
    check_positive({"--pairs": min(n_pairs)})
    if len(times) != len(n_pairs):
        raise UserError(f"--move-times and --pairs need the same number of entries, got {len(times)} and "
                        f"{len(n_pairs)}")
    _announce_out_dir(out)
    if resolved == "cpu":
        stderr.print("note: backend cpu: the device searches run on their CPU twins; these are CPU-twin figures, "
                     "not GPU figures (no GPU is measured)", soft_wrap=True)
    try:
        with stderr.status("benchmarking") as status:
            r = run_gpu_mcts_bench(backend=resolved, rate_settings=settings, rate_seconds=rate_seconds,
                                   positions=positions, analyse_iterations=analyse_iterations, move_times=times,
                                   pairs=n_pairs, trees=trees, playouts=playouts, leaves=leaves, workers=workers,
                                   games_dir=out / "games", progress=lambda msg: status.update(f"benchmarking: {msg}"),
                                   parallel=parallel, blocks=blocks, shared_settings=shared_settings,
                                   opponents=opponent_keys)
    except KeyboardInterrupt:
        _stop_interrupted(f"the games played so far are in {out / 'games'}; rerun the same command to continue")
    table = format_table(r)
    write_text_atomic(out / "gpu_mcts.json", json.dumps(_json_safe(r), indent=2) + "\n")
    write_text_atomic(out / "gpu_mcts.md", table)
    if as_json:
        _emit_json(r)
    else:
        sys.stdout.write(table)
        stdout.print(f"written to {out}/ (gpu_mcts.json, gpu_mcts.md, games/)")
    if any(g.get("interrupted") for g in r["games"]):
        _stop_interrupted(f"the games played so far are in {out / 'games'}; rerun the same command to continue")


@bench_app.command("kalah")
def bench_kalah(
    depths: Annotated[str, typer.Option("--depths", help="Search depths (4-9:1).")] = "4-9:1",
    python_max_depth: Annotated[
        int, typer.Option("--python-max-depth", help="Deepest search timed in Python / OpenSpiel.")
    ] = 7,
    solve: Annotated[bool, typer.Option("--solve/--no-solve", help="Also time exact solves of small boards.")] = True,
    time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve.")] = 60.0,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Kalah: alpha-beta nodes/s vs plain Python and OpenSpiel; exact solve times."""
    from ..benchmarks.kalah_bench import run_kalah_bench

    check_seconds(time_limit, "--time-limit")
    if out is not None:
        check_output_file(out)

    with stderr.status("benchmarking") as status:
        result = run_kalah_bench(_parse_heights(depths, "--depths"), python_max_depth, solve, time_limit,
                                 progress=lambda msg: status.update(f"benchmarking: {msg}"))
    if out is not None:
        write_text_atomic(out, json.dumps(_json_safe(result), indent=2) + "\n")
    if as_json:
        _emit_json(result)
        return
    table = Table(title="Kalah(6,4) alpha-beta from the start, store difference, no ordering, no table")
    for col in ("depth", "nodes", "numba nodes/s", "python nodes/s", "x python", "OpenSpiel nodes/s", "x OpenSpiel",
                "ordered+TT nodes"):
        table.add_column(col, justify="right")
    for r in result["nodes_per_second"]["rows"]:
        table.add_row(str(r["depth"]), f"{r['nodes']:,}", f"{r['numba_nodes_per_second'] / 1e6:.2f} M",
                      f"{r['python_nodes_per_second'] / 1e6:.3f} M" if "python_nodes_per_second" in r else "-",
                      f"{r['speedup_vs_python']:.0f}x" if "speedup_vs_python" in r else "-",
                      f"{r['openspiel_nodes_per_second'] / 1e6:.3f} M" if "openspiel_nodes_per_second" in r else "-",
                      f"{r['speedup_vs_openspiel']:.0f}x" if "speedup_vs_openspiel" in r else "-",
                      f"{r['numba_ordered_tt_nodes']:,}")
    stdout.print(table)
    if result.get("solve"):
        st = Table(title="exact solves (MTD(f) + table)")
        for col in ("m", "n", "rules", "margin", "best move", "nodes", "seconds"):
            st.add_column(col, justify="right")
        for r in result["solve"]:
            margin = r["margin"] if r["complete"] else f"[{r['lower']}, {r['upper']}] (time limit)"
            st.add_row(str(r["houses"]), str(r["seeds"]), r["rules"], str(margin), str(r["best_move"]),
                       f"{r['nodes']:,}", f"{r['seconds']:.2f}")
        stdout.print(st)


def print_throughput_table(result: dict, console: Console) -> None:
    table = Table(title="alpha-beta throughput: Numba vs plain Python and C (binary trees, median)")
    for col in ("height", "mean leaves", "numba leaves/s", "python leaves/s", "x python", "C plain leaves/s",
                "C tuned leaves/s", "x C plain", "x C tuned"):
        table.add_column(col, justify="right")
    for r in result["rows"]:
        py = r["python_leaves_per_second"]
        sp = r["speedup_vs_python"]
        cp, ct = r.get("c_plain_leaves_per_second"), r.get("c_tuned_leaves_per_second")
        table.add_row(
            str(r["height"]),
            f"{r['mean_leaves_expanded']:.0f}",
            f"{r['numba_leaves_per_second'] / 1e6:.1f} M",
            "-" if py is None else f"{py / 1e6:.3f} M",
            "-" if sp is None else f"{sp:.0f}x",
            "-" if not cp else f"{cp / 1e6:.1f} M",
            "-" if not ct else f"{ct / 1e6:.1f} M",
            "-" if r.get("ratio_to_c_plain") is None else f"{r['ratio_to_c_plain']:.2f}",
            "-" if r.get("ratio_to_c_tuned") is None else f"{r['ratio_to_c_tuned']:.2f}",
        )
    console.print(table)
    if result.get("c_note"):
        console.print(f"C reference: {result['c_note']}")
    sp = result["speedup_vs_python"]
    console.print(
        f"median speed-up vs Python: {'-' if sp is None else f'{sp:.0f}x'}; "
        f"median Numba leaves/s: {result['leaves_per_second'] / 1e6:.1f} M"
    )
    fc = result.get("first_call")
    if fc:
        console.print(
            f"first call in a fresh process (import + solve): cold cache {fc['cold_cache']['process_s']:.2f} s, "
            f"warm cache {fc['warm_cache']['process_s']:.2f} s"
        )


def main(argv: Optional[List[str]] = None) -> int:
    """Console-script entry point; returns the exit status.

    0: done. 2: a usage error (unknown option, bad option type) or a domain
    error (``ValueError`` from the library, a file that cannot be read or
    written, too much memory asked for): one ``error:`` line, no traceback.
    130: interrupted (Ctrl-C); commands print what they had found first.
    """
    global _INTERRUPT_REPORTED
    _INTERRUPT_REPORTED = False
    command = typer.main.get_command(app)
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        rv = command.main(args=args, prog_name="jitsearch", standalone_mode=False)
    except _EXIT as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except _ABORT:
        _error("aborted")
        return 130
    except _CLICK_EXCEPTION as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.stdout.write(exc.format_message().rstrip() + "\n")
            return 0
        _error(exc.format_message())
        return 2
    except (UserError, ValueError) as exc:
        _error(str(exc))
        return 2
    except Interrupted:
        _error("interrupted")
        return 130
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        _error("out of memory: ask for a smaller problem (or lower --max-memory / the sizes given)")
        return 2
    except OverflowError as exc:
        _error(f"a number is too large: {exc}")
        return 2
    except OSError as exc:
        if exc.filename is None:
            raise
        _error(f"{exc.filename}: {exc.strerror or exc}")
        return 2
    # typer turns a KeyboardInterrupt (and typer.Exit(code)) into a returned code
    if isinstance(rv, int) and not isinstance(rv, bool) and rv:
        if rv == 130 and not _INTERRUPT_REPORTED:
            _error("interrupted")
        return rv
    return 0


_INTERRUPT_REPORTED = False


def _stop_interrupted(message: str):
    """Print ``interrupted: message`` on stderr and exit with status 130."""
    global _INTERRUPT_REPORTED
    _INTERRUPT_REPORTED = True
    sys.stderr.write("interrupted: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()
    raise typer.Exit(130)


def _error(message: str) -> None:
    line = " ".join(str(message).split())
    sys.stderr.write(f"error: {line}\n")


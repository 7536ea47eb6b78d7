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


class UserError(Exception):
    """A problem with what the user asked for: one line, exit status 2."""


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
             "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3}
    t = text.strip().lower()
    num = t.rstrip("abgikm ")
    unit = t[len(num):].strip()
    try:
        value = float(num)
    except ValueError:
        raise UserError(f"--max-memory must look like 512MiB or 4GiB, got {text!r}") from None
    if unit not in units or not value > 0 or not math.isfinite(value):
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


@app.command()
def solve(
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
        typer.Option("--algorithm", "-a", help="minimax, alphabeta, andor, two-agent, fsss, mtd-inf or mtdf."),
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
        int, typer.Option("--table-size", help="kalah: transposition-table slots (power of two; 32 bytes each).")
    ] = 1 << 24,
    endgame_seeds: Annotated[
        int, typer.Option("--endgame-seeds", help="kalah: build an endgame database up to this many seeds (0: none).")
    ] = 0,
    endgame_cache: Annotated[
        bool, typer.Option("--endgame-cache/--no-endgame-cache",
                           help="kalah: keep built endgame databases in ~/.cache/jitsearch (or $XDG_CACHE_HOME).")
    ] = True,
):
    """Solve a game tree (or Kalah) exactly and report value, best move and work done."""
    if game is not None:
        _solve_game(game, houses, seeds, empty_capture, position, time_limit, table_size, endgame_seeds, as_json,
                    _parse_bytes(max_memory), endgame_cache)
        return
    from ..search import ALGORITHMS, solve as solve_tree
    from ..trees import UniformTree, load_tree

    max_bytes = _parse_bytes(max_memory)
    if algorithm not in ALGORITHMS:
        raise UserError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
    if tree_file is not None and random is not None:
        raise UserError("give either a TREE_FILE or --random, not both")
    if tree_file is None and random is None:
        raise UserError("give a TREE_FILE or --random uniform")
    incremental = random == "incremental"
    if random is not None and random not in ("uniform", "incremental"):
        raise UserError(f"--random must be 'uniform' or 'incremental', got {random!r}")
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
        options.pop("max_bytes")
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
    given = {
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
    for flag, (present, key, value, algorithms) in given.items():
        if present:
            if algorithm not in algorithms:
                raise UserError(f"{flag} applies to --algorithm {' or '.join(algorithms)} only")
            options[key] = value
    t0 = time.perf_counter()
    result = solve_tree(tree, algorithm, **options)
    seconds = time.perf_counter() - t0
    desc = tree.describe()
    if tree_file is not None:
        desc["file"] = str(tree_file)
    out = result.to_dict(integral=tree.integral)
    out["seconds"] = seconds
    out["tree"] = desc
    if as_json:
        _emit_json(out)
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


@app.command()
def tournament(
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
    """Play paired games between two searchers and report who wins."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..games.random_tree_game import GameConfig, PlayerSpec, depth_increment_protocol, run_tournament

    if game not in ("random-tree", "kalah"):
        raise UserError(f"--game must be random-tree or kalah, got {game!r}")
    if resume and out is None:
        raise UserError("--resume needs --out")
    if game == "kalah":
        _kalah_tournament(a, b, pairs, houses, seeds, empty_capture, openings, max_plies, seed, workers, out,
                          resume, as_json)
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
    if as_json:
        _emit_json(result)
        return
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
                      as_json):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..games.kalah_tournament import KalahMatch, run_kalah_tournament

    from ..games.agents import parse_agent

    match = KalahMatch(houses, seeds, empty_capture, max_plies, openings, seed)
    match.check()
    for spec in (a, b):  # every user error before the progress bar starts
        if parse_agent(spec).kind == "human":
            raise UserError("a tournament needs engines, not human players")
    if pairs < 1 or workers < 1:
        raise UserError("--pairs and --workers must be >= 1")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("games", total=2 * pairs)
        r = run_kalah_tournament(a, b, match, pairs, out=out, resume=resume, workers=workers,
                                 progress=lambda done, total: bar.update(task, completed=done, total=total))
    r["game"] = "kalah"
    if as_json:
        _emit_json(r)
        return
    table = Table(title=f"Kalah({houses},{seeds}): A = {a} vs B = {b}, {pairs} pairs")
    for col in ("games", "A wins", "draws", "B wins", "A score (95% CI)", "Elo A-B (95% CI)", "mean plies"):
        table.add_column(col, justify="right")
    lo, hi = r["a_score_ci95"]
    elo_lo, elo_hi = r["elo_ci95"]
    table.add_row(str(r["games"]), str(r["a_wins"]), str(r["draws"]), str(r["b_wins"]),
                  f"{r['a_score']:.3f} ({lo:.3f}-{hi:.3f})", f"{r['elo_diff']:+.0f} ({elo_lo:+.0f}, {elo_hi:+.0f})",
                  f"{r['mean_plies']:.1f}")
    stdout.print(table)


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
    if time_limit is not None and not time_limit > 0:
        raise UserError("--time-limit must be > 0")
    if table_size < 16:
        raise UserError("--table-size must be >= 16")
    if not 0 <= endgame_seeds <= 127:
        raise UserError("--endgame-seeds must lie in 0..127")
    state = _kalah_state(houses, seeds, empty_capture, position)

    def progress(iteration, lo, up, nodes, seconds):
        stderr.print(f"iteration {iteration}: margin in [{lo:g}, {up:g}], {nodes:,} nodes, {seconds:.1f} s")

    if endgame_seeds:
        stderr.print(f"endgame database: <= {endgame_seeds} seeds in the houses (built once, then cached)"
                     if endgame_cache else f"building the endgame database (<= {endgame_seeds} seeds in the houses)")
    from ..games.kalah_endgame import default_cache_dir

    result = solve_exact(state, tt_capacity=table_size, time_limit=time_limit, progress=progress,
                         max_bytes=max_bytes, endgame_seeds=endgame_seeds,
                         endgame_cache_dir=default_cache_dir() if endgame_cache else None)
    result.update(game="kalah", houses=state.houses, empty_capture=state.empty_capture, position=state.to_text(),
                  player_to_move=state.player)
    if as_json:
        _emit_json(result)
        return
    table = Table(title=f"Kalah({state.houses}, {seeds if position is None else '?'}) "
                        f"{'empty-capture' if empty_capture else 'standard'} rules", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value")
    for key in ("position", "margin", "best_move", "complete", "lower", "upper", "nodes", "iterations",
                "endgame_seeds"):
        table.add_row(key, str(result[key]))
    table.add_row("seconds", f"{result['seconds']:.2f}")
    stdout.print(table)


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
    from ..games.agents import parse_agent, play_game

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


def _parse_heights(text: str) -> list[int]:
    """'10-24' (step 2), '10-24:1', or '10,12,16'."""
    try:
        if "-" in text:
            rng, _, step = text.partition(":")
            a, b = (int(x) for x in rng.split("-"))
            return list(range(a, b + 1, int(step) if step else 2))
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--heights must look like 10-24, 10-24:1 or 10,12,16; got {text!r}") from None


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
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result to this file.")] = None,
):
    """Leaves/s of Numba alpha-beta vs the plain-Python reference on binary trees."""
    from ..benchmarks.throughput import run_throughput

    hs = _parse_heights(heights)
    with stderr.status("benchmarking") as status:
        result = run_throughput(
            heights=hs,
            trees_per_height=trees,
            repeats=repeats,
            python_max_height=python_max_height,
            python_trees=python_trees,
            first_call=first_call,
            progress=lambda msg: status.update(f"benchmarking: {msg}"),
        )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    if as_json:
        _emit_json(result)
        return
    print_throughput_table(result, stdout)


@bench_app.command("fsss-paper")
def bench_fsss_paper(
    out: Annotated[Path, typer.Option("--out", help="Directory for CSV, JSON, markdown and PNG.")] = Path(
        "bench/results/fsss_paper"
    ),
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
    hs, hs2, chs = _parse_heights(heights), _parse_heights(exp2_heights), _parse_heights(cost_heights)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=stderr, transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def progress(desc, done, total):
            bar.update(task, description=desc, completed=done, total=total or None)

        result = run_fsss_paper(
            out, heights=hs, trees=trees, exp2_heights=hs2, exp2_trees=exp2_trees, cost=cost,
            cost_heights=chs, resume=resume, workers=workers, progress=progress,
            command=(
                f"jitsearch bench fsss-paper --heights {heights} --trees {trees} --exp2-heights {exp2_heights} "
                f"--exp2-trees {exp2_trees} --cost-heights {cost_heights}" + ("" if cost else " --no-cost")
            ),
        )
    if as_json:
        _emit_json(result)
        return
    sys.stdout.write((out / "summary.md").read_text())
    stdout.print(f"written to {out}/ (experiment1_trees.csv, experiment2_trees.csv, summary.json, summary.md, "
                 f"{', '.join(result['plots']) or 'no plots: install the bench extra for matplotlib'})")


@bench_app.command("fe-paper")
def bench_fe_paper(
    out: Annotated[Path, typer.Option("--out", help="Directory for CSV, JSONL, JSON, markdown and PNG.")] = Path(
        "bench/results/fe_paper"
    ),
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
    depths = {2: [2, 4, 6], 5: [2, 3, 4], 10: [2, 3]} if quick else None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("starting", total=None)
        result = run_fe_paper(
            out, fig1_trees=fig1_trees, fig1_depths=depths, fig2_trees=fig2_trees, fig3=fig3,
            fig3_pairs=fig3_pairs, fig3_max_horizon=3 if quick else fig3_max_horizon, resume=resume,
            workers=workers,
            progress=lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total or None),
            command=f"jitsearch bench fe-paper --fig1-trees {fig1_trees} --fig2-trees {fig2_trees} "
                    f"--fig3-pairs {fig3_pairs} --fig3-max-horizon {fig3_max_horizon}" + (" --quick" if quick else ""),
        )
    if as_json:
        _emit_json(result)
        return
    sys.stdout.write((out / "summary.md").read_text())
    stdout.print(f"written to {out}/ ({', '.join(result['plots']) or 'no plots: install the bench extra'})")


@bench_app.command("mancala-paper")
def bench_mancala_paper(
    out: Annotated[Path, typer.Option("--out", help="Directory for JSONL, JSON, markdown and PNG.")] = Path(
        "bench/results/mancala_paper"
    ),
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
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("starting", total=None)
        result = run_mancala_paper(
            out, pairs=pairs, paper_games=paper_games, ext_iterations=tuple(iters), ext_pairs=tuple(ext),
            workers=workers,
            progress=lambda desc, done, total: bar.update(task, description=desc, completed=done, total=total),
            command=f"jitsearch bench mancala-paper --pairs {pairs} --paper-games {paper_games} "
                    f"--iterations {iterations} --ext-pairs {ext_pairs}",
        )
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
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Random Kalah playouts per second on the CPU twin or the CUDA kernel."""
    from ..benchmarks.playouts_bench import measure_playouts
    from ..games.kalah import KalahState
    from ..kernels.backend import BackendError

    KalahState.initial(houses, seeds)  # validates the board
    if states < 1 or playouts < 1 or repeats < 1 or threads < 1:
        raise UserError("--states, --playouts, --repeats and --threads must be >= 1")
    if not 0 <= seed < 2**64:
        raise UserError("--seed must lie in [0, 2**64)")
    try:
        r = measure_playouts(backend, houses, seeds, states, playouts, repeats, threads, seed)
    except BackendError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        _emit_json(r)
        return
    stdout.print(f"{r['backend']} ({r['device']}): {r['playouts_per_second']:,.0f} playouts/s, "
                 f"{r['plies_per_second']:,.0f} plies/s  [Kalah({houses},{seeds}), {states} states x "
                 f"{playouts} playouts, median of {repeats}]")


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
    with stderr.status("benchmarking") as status:
        r = run_mcts_bench(simulations=simulations, repeats=repeats, workers=workers,
                           progress=lambda msg: status.update(f"benchmarking: {msg}"))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(_json_safe(r), indent=2) + "\n")
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

    with stderr.status("benchmarking") as status:
        result = run_kalah_bench(_parse_heights(depths), python_max_depth, solve, time_limit,
                                 progress=lambda msg: status.update(f"benchmarking: {msg}"))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(_json_safe(result), indent=2) + "\n")
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
    table = Table(title="alpha-beta throughput: Numba vs plain Python (binary trees, median)")
    for col in ("height", "mean leaves", "numba leaves/s", "python leaves/s", "speed-up"):
        table.add_column(col, justify="right")
    for r in result["rows"]:
        py = r["python_leaves_per_second"]
        sp = r["speedup_vs_python"]
        table.add_row(
            str(r["height"]),
            f"{r['mean_leaves_expanded']:.0f}",
            f"{r['numba_leaves_per_second'] / 1e6:.1f} M",
            "-" if py is None else f"{py / 1e6:.3f} M",
            "-" if sp is None else f"{sp:.0f}x",
        )
    console.print(table)
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

    Usage errors (unknown option, bad option type) and domain errors
    (``ValueError`` from the library) become one ``error:`` line and status 2.
    """
    command = typer.main.get_command(app)
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        command.main(args=args, prog_name="jitsearch", standalone_mode=False)
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
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    return 0

def _error(message: str) -> None:
    line = " ".join(str(message).split())
    sys.stderr.write(f"error: {line}\n")


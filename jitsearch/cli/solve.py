"""``jitsearch solve``: solve a game tree (a file or a random tree), or a position of a game
exactly (``--game NAME``: the game's :attr:`~jitsearch.games.protocol.Game.exact` solve, or its
:attr:`~jitsearch.games.protocol.Game.solver`), with its endgame database
(:attr:`~jitsearch.games.protocol.Game.database`) announced before it is built."""

from __future__ import annotations

import functools
import math
import re
import time
from pathlib import Path
from typing import Annotated, Optional, Tuple

import typer
from rich.table import Table

from ._support import flag as option_flag
from ._support import (Interrupted, JitWatch, UserError, check_seconds, given_options, refuse_options,
                       run_interruptibly, timed)
from .common import emit_json, parse_bytes, stop_interrupted, stderr, stdout
from ..games.protocol import ExactSolve
from .game_options import VariantOpt, initial_state, resolve_game, resolve_variant


_TREE_OPTIONS = ("tree_file", "random", "branching", "height", "seed", "values", "lo", "hi", "root", "algorithm",
                 "trace", "depth", "random_branching", "edge_lo", "edge_hi", "search_depth", "delta", "bounds",
                 "bounds_file", "likely", "loss_threshold", "restart_deepest", "stop_when_proven", "max_leaves",
                 "max_seconds", "value_range", "first_guess", "storage")
#: Options of ``--game`` that a game takes when its exact solve has them (see :func:`_takes`).
_GAME_OPTIONS = ("houses", "seeds", "empty_capture", "variant", "position", "time_limit", "table_size", "endgame_seeds",
                 "checkpoint_every", "endgame_cache", "endgame_cache_dir", "all_moves", "checkpoint", "resume")
_DATABASE_OPTIONS = ("endgame_seeds", "endgame_cache", "endgame_cache_dir")


_API_WORDS = ((re.compile(r"\bmax_bytes\b(?: \(--max-memory\))?"), "--max-memory"),
              (re.compile(r"\(tt_capacity, --table-size\)"), "(--table-size)"),
              (re.compile(r", (?:or )?endgame_cache_dir=(?:None| in the API)"), ""),
              (re.compile(r"\bendgame_cache_dir\b"), "--endgame-cache-dir"),
              (re.compile(r"\bmax_seeds\b"), "--endgame-seeds"),
              (re.compile(r"\btable_size\b"), "--table-size"),
              (re.compile(r"\bdrop trace\b"), "drop --trace"))


def cli_words(message: str) -> str:
    """A library message in the words of ``solve``'s options: the library
    names its arguments (``raise max_bytes``), the user typed
    ``--max-memory``."""
    for pattern, words in _API_WORDS:
        message = pattern.sub(words, message)
    return message


def in_cli_words(command):
    """``command``, with its error messages (the library's ``ValueError``
    included) in :func:`cli_words`: one home for the translation, at the
    CLI's boundary."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (UserError, ValueError) as exc:
            raise UserError(cli_words(str(exc))) from None

    return wrapper


@in_cli_words
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
    game: Annotated[
        Optional[str], typer.Option("--game", help="Solve a position of a game instead of a tree: a registered "
                                                   "game with an exact solver (kalah, oware, connect4, ...).")
    ] = None,
    variant: VariantOpt = None,
    houses: Annotated[int, typer.Option("--houses", help="The variant option houses (-V houses=N).")] = 6,
    seeds: Annotated[int, typer.Option("--seeds", help="The variant option seeds (-V seeds=N).")] = 4,
    empty_capture: Annotated[
        bool, typer.Option("--empty-capture", help="The variant option empty_capture (kalah).")
    ] = False,
    position: Annotated[
        Optional[str], typer.Option("--position", help="Start from this position (the game's text form).")
    ] = None,
    time_limit: Annotated[
        Optional[float], typer.Option("--time-limit", help="Stop after this many seconds (kalah, oware).")
    ] = None,
    table_size: Annotated[
        Optional[int],
        typer.Option("--table-size", help="kalah: transposition-table slots (power of two; 16 bytes each; "
                                          "default: sized from the board, at most 2**25).", show_default=False),
    ] = None,
    endgame_seeds: Annotated[
        int, typer.Option("--endgame-seeds", help="Build an endgame database up to this many seeds (0: none; "
                                                  "kalah, oware).")
    ] = 0,
    endgame_cache: Annotated[
        bool, typer.Option("--endgame-cache/--no-endgame-cache",
                           help="Keep built endgame databases in ~/.cache/jitsearch (or $XDG_CACHE_HOME).")
    ] = True,
    endgame_cache_dir: Annotated[
        Optional[Path], typer.Option("--endgame-cache-dir", help="Keep endgame databases in this directory instead "
                                                                 "(default: $XDG_CACHE_HOME/jitsearch/GAME-endgame, "
                                                                 "or ~/.cache/...).",
                                     show_default=False)
    ] = None,
    all_moves: Annotated[
        bool, typer.Option("--all-moves", help="kalah: the exact final margin of every legal move (a tablebase's "
                                               "answer), from the databases where they cover it, else by search.")
    ] = False,
    checkpoint: Annotated[
        Optional[Path], typer.Option("--checkpoint", help="kalah: save the solve's state (table, bounds, the test "
                                                          "in progress) in this directory every --checkpoint-every "
                                                          "seconds and on stopping; with --all-moves, a file that "
                                                          "gets each solved move. --resume continues.",
                                     show_default=False)
    ] = None,
    checkpoint_every: Annotated[
        float, typer.Option("--checkpoint-every", help="kalah: seconds between two saves of --checkpoint.")
    ] = 600.0,
    resume: Annotated[bool, typer.Option("--resume", help="kalah: continue the solve saved in --checkpoint.")]
    = False,
):
    """Solve a game tree, or a position of a game, exactly and report value, best move and work done.

    Ctrl-C stops a solve within a second or two with exit status 130; a Kalah
    solve first prints the bounds and move found so far.
    """
    given = given_options(ctx)
    max_bytes = parse_bytes(max_memory)
    if game is not None:
        refuse_options(given, _TREE_OPTIONS, f"does not apply to --game {game} (it solves the game, not a tree)")
        flags = {k: v for k, v in (("houses", houses), ("seeds", seeds), ("empty_capture", empty_capture))
                 if k in given}
        _solve_game(resolve_game(game), given, variant, flags, position, as_json, max_bytes, dict(
            time_limit=time_limit, table_size=table_size, endgame_seeds=endgame_seeds, endgame_cache=endgame_cache,
            endgame_cache_dir=endgame_cache_dir, all_moves=all_moves, checkpoint=checkpoint,
            checkpoint_every=checkpoint_every, resume=resume))
        return
    for name in _GAME_OPTIONS:
        if name in given:
            raise UserError(f"{option_flag(name)} applies to --game {_takers(name)} only")
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
        stop_interrupted(f"{algorithm} keeps no partial result on a tree; for an anytime answer use "
                          "--algorithm fsss (or mtdf) and press Ctrl-C, or give fsss --max-seconds N")
    desc = tree.describe()
    if tree_file is not None:
        desc["file"] = str(tree_file)
    out = result.to_dict(integral=tree.integral)
    out["seconds"] = seconds  # the search itself: JIT compilation and cache loading are in compile_seconds
    out["compile_seconds"] = jit_seconds
    out["tree"] = desc
    if as_json:
        emit_json(out)
        if result.extra.get("interrupted"):
            stop_interrupted(f"{algorithm} stopped early; the JSON holds the bounds found so far")
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
        stop_interrupted(f"{algorithm} stopped early: the value lies in [{_bound_text(result.extra.get('lower'))}, "
                          f"{_bound_text(result.extra.get('upper'))}]")


def _bound_text(x) -> str:
    if x is None or (isinstance(x, float) and math.isinf(x)):
        return "-inf" if x is not None and x < 0 else "+inf" if x is not None else "?"
    return f"{x:g}" if isinstance(x, float) else str(x)


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


def _check_writable_file(path: Path) -> None:
    """A file the command will write: its directory must exist (or be creatable) and take a new file."""
    from .._io import ensure_writable_dir

    try:
        ensure_writable_dir(path.parent if str(path.parent) else Path("."))
    except OSError as exc:
        raise UserError(f"cannot write {path} ({exc.strerror or type(exc).__name__}): choose a writable "
                        "directory") from None


# -- --game: a position of a game, over the game's hooks ----------------------------------------

def _takes(game) -> set:
    """The ``--game`` options ``game`` takes: the variant flags it has, and its exact solve's."""
    out = {"variant", "position"} | {k for k in ("houses", "seeds", "empty_capture") if k in game.variant}
    if game.exact is not None:
        out |= {"time_limit", *game.exact.options}
    if game.database is not None:
        out |= set(_DATABASE_OPTIONS)
    return out


def _takers(option: str) -> str:
    """The registered games that take ``option``: ``kalah or oware``."""
    from ..games import GAMES

    return " or ".join(sorted(name for name, g in GAMES.items() if option in _takes(g))) or "none"


def _solve_game(g, given, pairs, flags, position, as_json, max_bytes, opts):
    """``solve --game``: checks the options against what ``g`` takes, then :func:`_run_exact`
    (``g.exact``, ``g.exact.moves`` with --all-moves; a game with ``g.solver`` alone as :func:`_solver_only`)."""
    if g.exact is None and g.solver is None:
        from ..games import GAMES

        raise UserError(f"{g.name} has no exact solver; solve takes --game "
                        f"{' or '.join(sorted(n for n, x in GAMES.items() if x.solver or x.exact))}")
    takes = _takes(g)
    for name in _GAME_OPTIONS:
        if name in given and name not in takes:
            raise UserError(f"{option_flag(name)} applies to --game {_takers(name)} only")
    if position is not None:
        refuse_options(given, ("houses", "seeds"), "does not apply with --position (the position sets the board)")
    check_seconds(opts["time_limit"], "--time-limit")
    if opts["resume"] and opts["checkpoint"] is None:
        raise UserError("--resume needs --checkpoint")
    if "checkpoint_every" in given and (opts["checkpoint"] is None or opts["all_moves"]):
        raise UserError("--checkpoint-every applies to a --checkpoint of a solve without --all-moves")
    check_seconds(opts["checkpoint_every"], "--checkpoint-every")
    cache_dir, endgame_cache = opts.pop("endgame_cache_dir"), opts.pop("endgame_cache")
    if cache_dir is not None and not endgame_cache:
        raise UserError("--endgame-cache-dir and --no-endgame-cache contradict each other: give one")
    if "endgame_cache_dir" in given and not opts["endgame_seeds"]:
        raise UserError("--endgame-cache-dir applies with --endgame-seeds S (a database to build or load)")
    if opts["endgame_seeds"] < 0:
        raise UserError(f"--endgame-seeds must be >= 0, got {opts['endgame_seeds']}")
    if cache_dir is not None and cache_dir.exists() and not cache_dir.is_dir():
        raise UserError(f"--endgame-cache-dir {cache_dir} is a file, not a directory")
    if endgame_cache and cache_dir is None and g.database is not None:
        cache_dir = g.database.default_dir()
    state = initial_state(g, resolve_variant(g, pairs, **flags), position)
    if state.is_over:
        raise UserError("the game is over in this position: nothing to solve")
    all_moves = opts["all_moves"]
    opts = {k: opts[k] for k in takes & set(opts) if k != "all_moves"}
    opts.update(max_bytes=max_bytes, endgame_cache_dir=cache_dir)
    if g.database is not None and opts["endgame_seeds"]:
        path = None if cache_dir is None else g.database.cache_path(cache_dir, state, opts["endgame_seeds"])
        est = g.database.estimate(state, opts["endgame_seeds"], max_bytes)
        opts["building"] = announce_endgame_build(g.database.cached(path) if path is not None else None, est,
                                                  f"<= {opts['endgame_seeds']} seeds {g.database.holds}", path)
        opts.update(endgame_path=path, endgame_progress=endgame_progress_printer())
    if all_moves:
        return _run_moves(g, state, as_json, opts)
    return _run_exact(g, g.exact or _solver_only(g), state, position is None, as_json, opts)


def _report(line: str) -> None:
    stderr.print(line, soft_wrap=True)


def _game_json(g, state, result: dict) -> dict:
    return {"game": g.name, "position": state.to_text(), "player_to_move": state.player, **result}


def _run_exact(g, exact, state, from_start, as_json, opts):
    """The game's exact solve (``exact.solve``): its result as JSON or a table; Ctrl-C its line."""
    call = {k: v for k, v in opts.items() if k not in ("building", "endgame_path")}
    result, _, jit_seconds = timed(exact.solve, state, report=_report, **call)
    # the solve's own clock, less the time Numba spent compiling or loading kernels
    result["compile_seconds"] = jit_seconds
    result["seconds"] = max(result.get("seconds", 0.0) - jit_seconds, 0.0)
    result = _game_json(g, state, result)
    if as_json:
        emit_json(result)
    else:
        table = Table(title=exact.title(state, from_start), show_header=False)
        table.add_column("key", style="bold")
        table.add_column("value")
        for key in exact.rows:
            if key in result:
                table.add_row(key, "-" if result[key] is None else str(result[key]))
        table.add_row("seconds", f"{result['seconds']:.2f}")
        stdout.print(table)
    if result.get("interrupted"):
        stop_interrupted(exact.stopped(result, opts))
    if not result.get("complete") and result.get("stop_reason") == "time_limit" and not as_json:
        if result.get("lower") is not None:
            stderr.print(f"time limit reached: the margin lies in [{result['lower']}, {result['upper']}]")
        else:
            stderr.print(f"time limit reached: the exact solve did not finish in {opts['time_limit']:g} s")


def _solver_only(g) -> ExactSolve:
    """A game with a solver alone (``g.solver``) as an exact solve: player 0's exact ``value`` in
    the game's units, nothing kept on Ctrl-C."""
    def solve(state, *, report, **_):
        t0 = time.perf_counter()
        try:
            return {"value": int(run_interruptibly(g.solver, state)), "complete": True,
                    "seconds": time.perf_counter() - t0}
        except Interrupted:
            return {"complete": False, "interrupted": True, "seconds": time.perf_counter() - t0}

    return ExactSolve(solve=solve, title=lambda state, from_start: f"{g.name} {state.to_text()}",
                      rows=("position", "player_to_move", "value"),
                      stopped=lambda result, options: f"{g.name}'s solver keeps no partial result")


def _run_moves(g, state, as_json, opts):
    """``--all-moves``: every legal move solved exactly (``g.exact.moves``), a file checkpoint."""
    checkpoint = opts.get("checkpoint")
    if checkpoint is not None:
        if checkpoint.exists() and checkpoint.is_dir():
            raise UserError(f"--checkpoint {checkpoint} is a directory")
        _check_writable_file(checkpoint)
    call = {k: v for k, v in opts.items() if k not in ("building", "endgame_path", "checkpoint_every")}
    with JitWatch():  # "compiling (first run only)..." on a cold cache; move times leave the compilation out
        result = g.exact.moves(state, report=_report, steps=not as_json, **call)
    result = _game_json(g, state, result)
    if as_json:
        emit_json(result)
    else:
        table = Table(title=f"{g.exact.title(state, False)}, p{state.player} to move")
        for col in ("move", "final margin (player 0)", "value for the mover", "nodes", "seconds"):
            table.add_column(col, justify="right")
        for row in result["moves"]:
            best = " *" if row["move"] == result["best_move"] else ""
            margin = "?" if row["margin"] is None else f"{row['margin']:+d}"
            value = "?" if row["value"] is None else f"{row['value']:+d}{best}"
            table.add_row(str(row["move"]), margin, value, f"{row['nodes']:,}",
                          "-" if row["from_checkpoint"] else f"{row['seconds']:.2f}")
        stdout.print(table)
        if result["complete"]:
            named = "" if g.ui is None else f", {g.ui.move_name(state, result['best_move'])}"
            stdout.print(f"value {result['value']:+d} for p{state.player} (player 0's margin {result['margin']:+d}); "
                         f"best move: {result['best_move']}{named}")
    if result["interrupted"]:
        stop_interrupted("the solved moves " + (f"are saved in {checkpoint}; add --resume to continue"
                                                 if checkpoint is not None else "are above; use --checkpoint to keep "
                                                                               "them"))
    elif not result["complete"] and not as_json:
        stderr.print("time limit reached: some moves are not solved" + (f"; --resume continues from {checkpoint}"
                                                                         if checkpoint is not None else ""))


# -- endgame databases: what the CLI prints around a build (solve, openings --exact) ------------

def announce_endgame_build(cached, est: dict, what: str, path) -> bool:
    """One line on stderr before an endgame database is built: ``what`` it holds, its positions,
    its size on disk and in memory, the estimated time (``est``: :attr:`EndgameFiles.estimate`'s)
    and where it is cached (``path``, None: not cached); or, when ``path`` already holds a
    database (``cached``: :attr:`EndgameFiles.cached`'s answer), that a big one is verified
    first. Returns whether a build is announced."""
    from ..trees.memory import format_bytes

    if cached is not None:
        if cached == "verify":
            stderr.print(f"endgame database: {path} ({format_bytes(est['file_bytes'])}), verifying its checksums "
                         "first (once a process)", soft_wrap=True)
        return False
    threads = est.get("threads", 1)
    stderr.print(f"endgame database: {what}, {est['positions']:,} positions, "
                 f"{format_bytes(est['file_bytes'])} on disk, {format_bytes(est['ram_bytes'])} of memory to build, "
                 f"about {_duration(est['seconds'])} on {threads} thread{'s' if threads != 1 else ''} (measured on "
                 "an idle 2-core machine: a busy one takes longer)"
                 + (f" (built once, then cached in {path.parent} and memory-mapped)" if path is not None else ""),
                 soft_wrap=True)
    return True


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def endgame_progress_printer(label: str = "endgame database"):
    """A ``progress(done, total, seconds, detail="")`` for an endgame build: one line on stderr
    with the time left, from the rate measured since the first report (which may include
    compiling the build's kernels: the estimate printed before the build assumes an idle machine)."""
    first_report = []

    def progress(done, total, seconds, detail=""):
        if not first_report:
            first_report.append((done, seconds))
        done0, seconds0 = first_report[0]
        left = ""
        if done0 < done < total and seconds - seconds0 > 2:
            left = f", about {(total - done) * (seconds - seconds0) / (done - done0):.0f} s left"
        stderr.print(f"{label}: {detail}{done:,} of {total:,} positions, {seconds:.1f} s{left}", soft_wrap=True)

    return progress

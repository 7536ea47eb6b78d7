"""``jitsearch bench ...``: the benchmark commands (the ``bench_app`` sub-app).

Each prints a table, or one JSON object with ``--json``; the work is done by
:mod:`jitsearch.benchmarks`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from ._support import UserError, check_output_dir, check_output_file, check_positive, check_seconds, write_text_atomic
from .common import emit_json, json_safe, stop_interrupted, stderr, stdout
from .game_options import DEFAULT_GAME, GameOpt, VariantOpt


class _BenchGroup(TyperGroup):
    """The ``bench`` commands, and ``bench NAME`` for each registered game with its own benchmark
    (:attr:`~jitsearch.games.protocol.Game.bench`), looked up only when asked for: loading the game
    registry costs half a second, which no other command should pay."""

    def _benched_games(self) -> dict:
        """name -> game of the registered games (plugins loaded: one that fails is its one-line
        ``ValueError``) with a benchmark of their own and a name no built-in command has."""
        from ..games import GAMES, load_plugins

        load_plugins()
        builtin = set(super().list_commands(None))
        return {name: game for name, game in GAMES.items() if game.bench is not None and name not in builtin}

    def list_commands(self, ctx):
        try:
            games = sorted(self._benched_games())
        except ValueError:  # a game plugin that fails to load: reported by the command that names it
            games = []
        return [*super().list_commands(ctx), *games]

    def get_command(self, ctx, cmd_name):
        command = super().get_command(ctx, cmd_name)
        if command is None and not cmd_name.startswith("-"):
            game = self._benched_games().get(cmd_name)
            if game is not None:
                sub = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False)
                sub.command(cmd_name)(_game_bench_command(cmd_name, game.bench))
                command = typer.main.get_command(sub)
        return command


bench_app = typer.Typer(cls=_BenchGroup, help="Benchmarks (print a table; --json for scripts).",
                        no_args_is_help=True)


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
    result = _measured(lambda progress: run_throughput(
        heights=hs, trees_per_height=trees, repeats=repeats, python_max_height=python_max_height,
        python_trees=python_trees, first_call=first_call, c_reference=c_reference, progress=progress), out, as_json)
    if result is not None:
        print_throughput_table(result, stdout)


def _measured(run, out: Optional[Path], as_json: bool):
    """``run(progress)`` under a "benchmarking" status line on stderr; its result written to ``out``
    (JSON) when given, and printed as JSON with ``as_json`` (then None is returned: nothing to draw)."""
    with stderr.status("benchmarking") as status:
        result = run(lambda msg: status.update(f"benchmarking: {msg}"))
    if out is not None:
        write_text_atomic(out, json.dumps(json_safe(result), indent=2) + "\n")
    if as_json:
        emit_json(result)
        return None
    return result


#: ``--workers`` and ``--scheduler`` of the paper reproductions (local processes or a Dask cluster).
WorkersOpt = Annotated[Optional[int], typer.Option("--workers", help="Processes (default: all cores).")]
SchedulerOpt = Annotated[Optional[str], typer.Option(
    "--scheduler", help="Run on the Dask cluster at this address (tcp://HOST:PORT) instead of local processes.",
    show_default=False)]


def _paper_run(out: Path, again: str, run):
    """``run(progress)`` of a paper reproduction writing to ``out``, under a progress bar on stderr; Ctrl-C:
    one line saying that the finished rows are in ``out`` and how to continue (``again``), status 130."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    _announce_out_dir(out)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        task = bar.add_task("starting", total=None)
        try:
            return run(lambda desc, done, total: bar.update(task, description=desc, completed=done,
                                                              total=total or None))
        except KeyboardInterrupt:
            bar.stop()
            stop_interrupted(f"the finished rows and games are in {out}; {again}")


def _paper_summary(out: Path, result: dict, as_json: bool, files: str = "",
                   no_plots: str = "no plots: install the bench extra") -> None:
    """A paper reproduction's summary: its JSON, or its ``summary.md`` and where its files are."""
    if as_json:
        emit_json(result)
        return
    sys.stdout.write((out / "summary.md").read_text())
    stdout.print(f"written to {out}/ ({files}{', '.join(result['plots']) or no_plots})")


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
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
):
    """Reproduce section 4 of the FSSS paper (Figure 4.1 a/b) and measure the cost."""
    from ..benchmarks.fsss_paper import run_fsss_paper

    if workers is not None and workers < 1:
        raise UserError("--workers must be >= 1")
    hs, hs2 = _parse_heights(heights), _parse_heights(exp2_heights, "--exp2-heights")
    chs = _parse_heights(cost_heights, "--cost-heights")
    check_positive({"--trees": trees, "--exp2-trees": exp2_trees})
    result = _paper_run(out, "rerun with --resume to continue", lambda progress: run_fsss_paper(
        out, heights=hs, trees=trees, exp2_heights=hs2, exp2_trees=exp2_trees, cost=cost, cost_heights=chs,
        resume=resume, workers=workers, progress=progress, scheduler=scheduler,
        command=(f"jitsearch bench fsss-paper --heights {heights} --trees {trees} --exp2-heights {exp2_heights} "
                 f"--exp2-trees {exp2_trees} --cost-heights {cost_heights}" + ("" if cost else " --no-cost"))))
    _paper_summary(out, result, as_json, "experiment1_trees.csv, experiment2_trees.csv, summary.json, summary.md, ",
                   "no plots: install the bench extra for matplotlib")


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
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
):
    """Reproduce Zhang's forward-estimation figures 1, 2 and 3(a)."""
    from ..benchmarks.fe_paper import run_fe_paper

    if workers is not None and workers < 1:
        raise UserError("--workers must be >= 1")
    check_positive({"--fig1-trees": fig1_trees, "--fig2-trees": fig2_trees, "--fig3-pairs": fig3_pairs,
                    "--fig3-max-horizon": fig3_max_horizon})
    depths = {2: [2, 4, 6], 5: [2, 3, 4], 10: [2, 3]} if quick else None
    result = _paper_run(out, "rerun with --resume to continue", lambda progress: run_fe_paper(
        out, fig1_trees=fig1_trees, fig1_depths=depths, fig2_trees=fig2_trees, fig3=fig3, fig3_pairs=fig3_pairs,
        fig3_max_horizon=3 if quick else fig3_max_horizon, resume=resume, workers=workers, scheduler=scheduler,
        progress=progress, command=f"jitsearch bench fe-paper --fig1-trees {fig1_trees} --fig2-trees {fig2_trees} "
                                   f"--fig3-pairs {fig3_pairs} --fig3-max-horizon {fig3_max_horizon}"
                                   + (" --quick" if quick else "")))
    _paper_summary(out, result, as_json)


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
    scheduler: SchedulerOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
):
    """Reproduce the four Kalah tables of Siljander's HMCTS paper (and MCTS at more iterations); resumes by itself."""
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
    result = _paper_run(out, "rerun the same command to continue", lambda progress: run_mancala_paper(
        out, pairs=pairs, paper_games=paper_games, ext_iterations=tuple(iters), ext_pairs=tuple(ext), workers=workers,
        scheduler=scheduler, progress=progress,
        command=f"jitsearch bench mancala-paper --pairs {pairs} --paper-games {paper_games} "
                f"--iterations {iterations} --ext-pairs {ext_pairs}"))
    _paper_summary(out, result, as_json)


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
    from ..kernels.backend import BackendError

    if states < 1 or playouts < 1 or repeats < 1 or threads < 1:
        raise UserError("--states, --playouts, --repeats and --threads must be >= 1")
    if not 0 <= seed < 2**64:
        raise UserError("--seed must lie in [0, 2**64)")
    try:
        r = measure_playouts(backend, houses, seeds, states, playouts, repeats, threads, seed,
                             c_reference=c_reference)
    except (BackendError, ValueError) as exc:  # (every argument, the board first, is checked before a kernel runs)
        raise UserError(str(exc)) from None
    if as_json:
        emit_json(r)
        return
    stdout.print(f"{r['backend']} ({r['device']}): {r['playouts_per_second']:,.0f} playouts/s, "
                 f"{r['plies_per_second']:,.0f} plies/s  [Kalah({houses},{seeds}), {states} states x "
                 f"{playouts} playouts, median of {repeats}]")
    if r.get("scalar_playouts_per_second"):
        stdout.print(f"kernel {r['kernel']}; the scalar kernel ({r['scalar_kernel']}, JITSEARCH_SIMD=0): "
                     f"{r['scalar_playouts_per_second']:,.0f} playouts/s; {r['kernel']} = {r['ratio_to_scalar']:.2f}x "
                     f"scalar; identical results: {r['scalar_identical']}")
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
    r = _measured(lambda progress: run_mcts_bench(simulations=simulations, repeats=repeats, workers=workers,
                                                  progress=progress), out, as_json)
    if r is None:
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
    from ..mcts.config import MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREES
    from ..mcts.multi import default_leaves

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
    from .._checks import max_threads
    from ..kernels.backend import BackendError, resolve
    from ..mcts.config import MAX_LEAF_PLAYOUTS, MAX_LEAVES, MAX_STEP_PLAYOUTS, MAX_TREE_ITERATIONS, MAX_TREES

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
    from ..mcts.config import MAX_BLOCKS

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
        stop_interrupted(f"the games played so far are in {out / 'games'}; rerun the same command to continue")
    table = format_table(r)
    write_text_atomic(out / "gpu_mcts.json", json.dumps(json_safe(r), indent=2) + "\n")
    write_text_atomic(out / "gpu_mcts.md", table)
    if as_json:
        emit_json(r)
    else:
        sys.stdout.write(table)
        stdout.print(f"written to {out}/ (gpu_mcts.json, gpu_mcts.md, games/)")
    if any(g.get("interrupted") for g in r["games"]):
        stop_interrupted(f"the games played so far are in {out / 'games'}; rerun the same command to continue")


@bench_app.command("alphabeta")
def bench_alphabeta(
    game: GameOpt = DEFAULT_GAME,
    variant: VariantOpt = None,
    depths: Annotated[str, typer.Option("--depths", help="Search depths (1-6:1).")] = "1-6:1",
    python_max_depth: Annotated[
        int, typer.Option("--python-max-depth", help="Deepest search also timed in plain Python.")
    ] = 4,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Any game: nodes/s of the alpha-beta over the game protocol, Numba against the same source in plain Python."""
    from ..benchmarks.alphabeta_bench import run_alphabeta_bench
    from .game_options import resolve_game, resolve_variant

    g = resolve_game(game)
    chosen = resolve_variant(g, variant)
    with stderr.status("benchmarking") as status:
        result = run_alphabeta_bench(g, chosen, _parse_heights(depths, "--depths"), python_max_depth,
                                     progress=lambda msg: status.update(f"benchmarking: {msg}"))
    if as_json:
        emit_json(result)
        return
    table = Table(title=f"{g.name} alpha-beta from {result['position']}: the rules' order, no table (the same tree "
                        "in Numba and plain Python)")
    for col in ("depth", "nodes", "numba nodes/s", "python nodes/s", "x python", "game's order+table nodes"):
        table.add_column(col, justify="right")
    for r in result["rows"]:
        table.add_row(str(r["depth"]), f"{r['nodes']:,}", f"{r['numba_nodes_per_second'] / 1e6:.2f} M",
                      f"{r['python_nodes_per_second'] / 1e6:.3f} M" if "python_nodes_per_second" in r else "-",
                      f"{r['speedup_vs_python']:.0f}x" if "speedup_vs_python" in r else "-",
                      f"{r['ordered_nodes']:,}")
    stdout.print(table)


def _game_bench_command(name: str, hook):
    """``jitsearch bench NAME``: the game's own benchmark (:attr:`~jitsearch.games.protocol.Game.bench`)."""

    def command(
        depths: Annotated[str, typer.Option("--depths", help="Search depths (4-9:1).")] = "4-9:1",
        python_max_depth: Annotated[
            int, typer.Option("--python-max-depth", help="Deepest search timed in Python / OpenSpiel.")
        ] = 7,
        solve: Annotated[bool, typer.Option("--solve/--no-solve", help="Also time exact solves of small boards.")
                         ] = True,
        time_limit: Annotated[float, typer.Option("--time-limit", help="Seconds per exact solve.")] = 60.0,
        out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON result here.")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
    ):
        check_seconds(time_limit, "--time-limit")
        if out is not None:
            check_output_file(out)
        heights = _parse_heights(depths, "--depths")
        result = _measured(lambda progress: hook(heights, python_max_depth, solve, time_limit, progress=progress),
                           out, as_json)
        if result is not None:
            _print_game_bench(name, result)

    command.__doc__ = (hook.__doc__ or f"{name}'s benchmark.").strip().split("\n\n")[0]
    return command


def _print_game_bench(name: str, result: dict) -> None:
    """A game benchmark's tables: nodes a second by depth, and its exact solves when it timed any."""
    table = Table(title=result.get("title", f"{name} alpha-beta"))
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

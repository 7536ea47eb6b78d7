"""Kalah's exact solve as ``jitsearch solve`` reports it (protocol: :attr:`Game.exact`,
:attr:`Game.database`): :func:`.solver.solve_exact` with progress lines, a table and
checkpoints (Ctrl-C saves one, ``resume`` continues it); :func:`.moves.move_values` for every move."""

from __future__ import annotations

from pathlib import Path

from ..protocol import EndgameFiles, ExactSolve

#: Options of the solve beyond the time limit and the endgame database.
OPTIONS = ("table_size", "checkpoint", "resume", "checkpoint_every", "all_moves")


def _check_table_size(table_size) -> None:
    if table_size is not None and not 16 <= table_size <= 2**40:
        raise ValueError(f"table_size must lie in 16..2**40 slots, got {table_size}")


def solve(state, *, report, time_limit=None, max_bytes=4 * 1024**3, endgame_seeds=0, endgame_cache_dir=None,
          endgame_progress=None, table_size=None, checkpoint=None, resume=False, checkpoint_every=600.0) -> dict:
    """:func:`.solver.solve_exact` (MTD(f), its table checkpointed in the directory ``checkpoint``),
    a line through ``report`` after each null-window test and about every second while one runs."""
    from . import solver
    from .checkpoint import checkpoint_exists

    _check_table_size(table_size)
    if checkpoint is not None and resume and not checkpoint_exists(checkpoint):
        report(f"nothing to resume in {checkpoint}: starting afresh")
    shown = {"iteration": -1}

    def progress(iteration, lo, up, nodes, seconds):
        if iteration != shown["iteration"]:
            shown["iteration"] = iteration
            label = f"test {iteration}" if iteration else "first test"
        else:
            label = "  running"
        report(f"{label}: margin in [{lo}, {up}], {nodes:,} nodes, {seconds:.1f} s")

    result = solver.solve_exact(
        state, tt_capacity=table_size, time_limit=time_limit, progress=progress, max_bytes=max_bytes,
        endgame_seeds=endgame_seeds, endgame_cache_dir=endgame_cache_dir, endgame_progress=endgame_progress,
        checkpoint=checkpoint, resume=resume, checkpoint_seconds=checkpoint_every)
    result.update(houses=state.houses, empty_capture=state.empty_capture)
    return result


def moves(state, *, report, steps=True, time_limit=None, max_bytes=4 * 1024**3, endgame_seeds=0,
          endgame_cache_dir=None, endgame_progress=None, table_size=None, checkpoint=None, resume=False) -> dict:
    """:func:`.moves.move_values` (each solved move appended to the file ``checkpoint``), a line
    through ``report`` after each move when ``steps``."""
    from .moves import move_values

    _check_table_size(table_size)
    if resume and checkpoint is not None and not (Path(checkpoint).exists() and Path(checkpoint).stat().st_size):
        report(f"nothing to resume in {checkpoint}: starting afresh")

    def progress(move, row, done, total):
        if not steps:
            return
        how = "from the checkpoint" if row["from_checkpoint"] else f"{row['nodes']:,} nodes, {row['seconds']:.1f} s"
        what = (f"margin {row['margin']:+d} (value {row['value']:+d} for the mover)" if row["margin"] is not None
                else f"not solved, margin in [{row['lower']}, {row['upper']}]")
        report(f"move {done}/{total}, pit {move}: {what}, {how}")

    result = move_values(state, checkpoint=checkpoint, resume=resume, time_limit=time_limit, tt_capacity=table_size,
                         endgame_seeds=endgame_seeds, endgame_cache_dir=endgame_cache_dir, max_bytes=max_bytes,
                         progress=progress)
    result.update(houses=state.houses)
    return result


def title(state, from_start: bool) -> str:
    """``Kalah(6, 4) standard rules`` from the start, else ``Kalah(6) position, 31 seeds in play ...``."""
    seeds = int(sum(int(x) for x in state.board))
    board = (f"Kalah({state.houses}, {seeds // (2 * state.houses)})" if from_start
             else f"Kalah({state.houses}) position, {seeds} seeds in play")
    return f"{board} {'empty-capture' if state.empty_capture else 'standard'} rules"


def stopped(result: dict, options: dict) -> str:
    """The bounds and move found, and what is kept (the checkpoint; never an unfinished database)."""
    unfinished = bool(options.get("endgame_seeds")) and not result.get("endgame_seeds")
    checkpoint = options.get("checkpoint")
    return (f"the margin lies in [{result.get('lower')}, {result.get('upper')}] "
            f"(best move so far: pit {result.get('best_move')}, {result.get('best_move_source')})"
            + ("; the endgame database was not finished and nothing of it was written" if unfinished else "")
            + (f"; --resume continues from the last save in {checkpoint}" if checkpoint is not None
               else "; nothing of the search is kept (--checkpoint DIR keeps it)"))


EXACT = ExactSolve(
    solve=solve, title=title, stopped=stopped, options=OPTIONS, moves=moves,
    rows=("position", "margin", "best_move", "best_move_source", "complete", "lower", "upper", "nodes", "iterations",
          "table_slots", "endgame_seeds"))


def _estimate(state, seeds: int, max_bytes: int) -> dict:
    from .endgame import estimate_endgame_build

    return estimate_endgame_build(state.houses, seeds)


def _cache_path(cache_dir, state, seeds: int) -> Path:
    from .endgame_files import cache_path

    return cache_path(cache_dir, state.houses, seeds, state.empty_capture)


def cached(path):
    """None (no database at ``path``), ``"verify"`` (a big one, hashed before use) or ``"ready"``."""
    from .endgame_files import VERIFY_ALWAYS_BYTES, needs_verification, record_path

    path = Path(path)
    if not (path.is_file() and record_path(path).is_file()):
        return None
    return "verify" if needs_verification(path) and path.stat().st_size > VERIFY_ALWAYS_BYTES else "ready"


def _default_dir() -> Path:
    from .endgame_files import default_cache_dir

    return default_cache_dir("kalah")


DATABASE = EndgameFiles(estimate=_estimate, cache_path=_cache_path, default_dir=_default_dir, cached=cached,
                        holds="in the houses")

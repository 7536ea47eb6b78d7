"""The device-resident MCTS against CPU MCTS: speed and strength at equal time.

Measured, each after a warm-up (the JIT and the CUDA kernel compiled first):

* tree iterations/s and playouts/s of the multi-tree search for several
  (trees, playouts per leaf) settings, from the start of Kalah(6,4), against
  the one-core CPU MCTS (:func:`jitsearch.mcts.search.mcts_search`) and CPU
  root parallelism on all cores in the same run;
* positions analysed per second: ``positions`` random mid-game positions x
  ``analyse_iterations`` iterations each, in one batch;
* strength at equal wall time per move: paired games from 2 random opening
  plies (:func:`jitsearch.arena.matches.run_tournament`),
  the multi-tree search against CPU MCTS on one core and against CPU root
  parallelism on every core, with the score and its 95% interval.

Without a GPU the multi-tree search runs on the CPU twin (all cores): the
figures then say ``backend: cpu`` and are no GPU figures.
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np

C_UCT = 1.4142135623730951


def _machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _random_positions(count: int, seed: int, houses: int = 6, seeds: int = 4):
    from ..games import get

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = get("kalah").initial(houses=houses, seeds=seeds)
        for _ in range(int(rng.integers(2, 24))):
            if s.is_over:
                break
            s = s.play(int(rng.choice(s.legal_moves())))
        if not s.is_over:
            out.append(s)
    return out


def parse_setting(setting, leaves: int | None = None) -> tuple[int, int | None, int]:
    """(trees, leaves, playouts) from ``(trees, playouts)`` (``leaves`` then
    fills in: None for the backend's default) or ``(trees, leaves, playouts)``."""
    setting = tuple(setting)
    if len(setting) == 2:
        return int(setting[0]), leaves, int(setting[1])
    if len(setting) == 3:
        return int(setting[0]), int(setting[1]), int(setting[2])
    raise ValueError(f"a rate setting is (trees, playouts) or (trees, leaves, playouts), got {setting!r}")


def measure_rates(backend: str, settings, seconds: float, progress=None, leaves: int | None = None) -> list[dict]:
    from ..games import get
    from ..mcts.game import multi_tree_search

    s = get("kalah").initial(houses=6, seeds=4)
    rows = []
    for setting in settings:
        trees, step_leaves, playouts = parse_setting(setting, leaves)
        if progress:
            progress(f"rate: {trees} trees x {step_leaves or 'default'} leaves x {playouts} playouts")
        multi_tree_search(s, trees=trees, iterations=2, playouts=playouts, leaves=step_leaves,
                          backend=backend)  # compile, warm
        r = multi_tree_search(s, trees=trees, time=seconds, playouts=playouts, leaves=step_leaves, backend=backend,
                              seed=1)
        rows.append({"trees": trees, "leaves": r["leaves"], "playouts": playouts, "backend": r["backend"],
                     "iterations_per_second": r["iterations"] / r["seconds"],
                     "playouts_per_second": r["simulations"] / r["seconds"],
                     "iterations_per_tree": r["iterations"] // trees, "seconds": r["seconds"]})
    return rows


def measure_shared_rates(backend: str, settings, seconds: float, progress=None) -> list[dict]:
    """Tree-parallel search rates: ``settings`` of (trees, blocks per tree, playouts per leaf)."""
    from ..games import get
    from ..mcts.game_shared import search_many_shared

    s = get("kalah").initial(houses=6, seeds=4)
    rows = []
    for trees, blocks, playouts in settings:
        if progress:
            progress(f"tree-parallel rate: {trees} trees x {blocks} blocks x {playouts} playouts")
        search_many_shared([s], [0], trees=trees, blocks=blocks, iterations=2 * blocks, playouts=playouts,
                           backend=backend)  # compile, warm
        r = search_many_shared([s], [1], trees=trees, blocks=blocks, time=seconds, playouts=playouts,
                               backend=backend)[0]
        rows.append({"parallel": "tree", "trees": trees, "blocks": r["blocks"], "playouts": playouts,
                     "backend": r["backend"], "iterations_per_second": r["iterations"] / r["seconds"],
                     "playouts_per_second": r["simulations"] / r["seconds"],
                     "iterations_per_tree": r["iterations"] // trees, "nodes": r["nodes"], "seconds": r["seconds"]})
    return rows


def measure_cpu_mcts(seconds: float, workers: int) -> dict:
    from ..games import get
    from ..mcts.search import mcts_search

    s = get("kalah").initial(houses=6, seeds=4)
    mcts_search(s, iterations=200, seed=0)  # compile
    mcts_search(s, iterations=200, seed=0, workers=workers)
    one = mcts_search(s, time=seconds, seed=1)
    many = mcts_search(s, time=seconds, seed=1, workers=workers)
    return {"one_core_iterations_per_second": one["iterations"] / one["seconds"],
            "root_parallel_iterations_per_second": many["iterations"] / many["seconds"], "workers": workers}


def measure_analysis(backend: str, positions: int, iterations: int, playouts: int, leaves: int | None = None) -> dict:
    from ..mcts.game import analyse_positions

    states = _random_positions(positions, 5)
    analyse_positions(states[:4], iterations=2, playouts=playouts, leaves=leaves, backend=backend)  # warm
    r = analyse_positions(states, iterations=iterations, playouts=playouts, leaves=leaves, backend=backend, seed=3,
                          max_bytes=64 * 2**30)
    return {"positions": positions, "iterations_per_position": iterations, "playouts": playouts, "leaves": r["leaves"],
            "backend": r["backend"], "seconds": r["seconds"], "positions_per_second": positions / r["seconds"],
            "playouts_per_second": r["playouts_total"] / r["seconds"]}


def play_strength(device_spec: str, cpu_spec: str, pairs: int, out_file=None) -> dict:
    from ..arena.matches import match_of, run_tournament

    match = match_of("kalah", {"houses": 6, "seeds": 4}, openings=2, seed=12)
    r = run_tournament(device_spec, cpu_spec, match, pairs, out=out_file, resume=out_file is not None, workers=1)
    keep = ("games", "a_wins", "draws", "b_wins", "a_score", "a_score_ci95", "elo_diff", "elo_ci95", "elo_note",
            "mean_plies", "interrupted")
    return {"a": device_spec, "b": cpu_spec, **{k: r.get(k) for k in keep}}


def run_gpu_mcts_bench(*, backend: str = "auto", rate_settings=((1, 32), (64, 32), (256, 32), (256, 64), (1024, 32)),
                       rate_seconds: float = 1.0, positions: int = 10_000, analyse_iterations: int = 1000,
                       move_times=(0.05, 0.2, 1.0), pairs=(10, 8, 2), trees: int | None = None, playouts: int = 32,
                       leaves: int | None = None, workers: int | None = None, games_dir=None, progress=None,
                       parallel: str = "root", blocks: int | None = None, shared_settings=(),
                       opponents=("one", "all")) -> dict:
    """Run the benchmark (see the module docstring). ``rate_settings``:
    (trees, playouts) or (trees, leaves, playouts) each, a pair taking
    ``leaves`` (None: the backend's default); ``leaves`` also sets the
    analysis and the device agent of the games. ``parallel`` picks the
    device agent of the games: ``root`` (the multi-tree search, ``trees``
    trees) or ``tree`` (the tree-parallel search, ``trees`` shared trees of
    ``blocks`` blocks each); ``shared_settings``: (trees, blocks, playouts)
    rates of the tree-parallel search; ``opponents``: ``one`` (CPU MCTS on
    one core) and/or ``all`` (root parallelism on every core)."""
    from ..kernels.backend import device_name, resolve
    from ..mcts.config import default_trees

    backend = resolve(backend)
    workers = workers or (os.cpu_count() or 1)
    trees = trees or (1 if parallel == "tree" else default_trees(backend))
    result = {"benchmark": "gpu-mcts", "machine": _machine(), "backend": backend, "device": device_name(backend),
              "parallel": parallel, "trees": trees, "blocks": blocks, "playouts": playouts, "leaves": leaves}
    if len(move_times) != len(pairs):
        raise ValueError(f"move_times and pairs need the same number of entries, got {len(move_times)} and "
                         f"{len(pairs)}")
    t0 = time.perf_counter()
    result["rates"] = measure_rates(backend, rate_settings, rate_seconds, progress, leaves)
    result["rates"] += measure_shared_rates(backend, shared_settings, rate_seconds, progress)
    if progress:
        progress("CPU MCTS rates")
    result["cpu"] = measure_cpu_mcts(rate_seconds, workers)
    one = result["cpu"]["one_core_iterations_per_second"]
    for row in result["rates"]:
        row["x_one_core_iterations"] = row["iterations_per_second"] / one
    if positions:
        if progress:
            progress(f"analysis: {positions} positions x {analyse_iterations} iterations")
        result["analysis"] = measure_analysis(backend, positions, analyse_iterations, playouts, leaves)
    games = []
    for t, n_pairs in zip(move_times, pairs):
        device_spec = f"mcts:time={t},backend={backend},trees={trees},playouts={playouts},c={C_UCT}"
        if parallel == "tree":
            device_spec += ",parallel=tree" + ("" if blocks is None else f",blocks={blocks}")
        elif leaves is not None:
            device_spec += f",leaves={leaves}"
        matchups = [("one core", f"mcts:time={t},c={C_UCT}"),
                    (f"root parallel, {workers} threads", f"mcts:time={t},c={C_UCT},workers={workers}")]
        for label, cpu_spec in [mu for mu, key in zip(matchups, ("one", "all")) if key in opponents]:
            if progress:
                progress(f"games at {t} s/move vs {label}")
            out_file = None
            if games_dir is not None:
                from pathlib import Path

                Path(games_dir).mkdir(parents=True, exist_ok=True)
                out_file = Path(games_dir) / f"games_{t}_{'one' if label == 'one core' else 'all'}.jsonl"
            g = play_strength(device_spec, cpu_spec, n_pairs, out_file)
            g.update(seconds_per_move=t, opponent=label)
            games.append(g)
            if g.get("interrupted"):
                break
    result["games"] = games
    result["seconds"] = time.perf_counter() - t0
    return result


def format_table(r: dict) -> str:
    lines = [f"gpu-mcts on {r['device']} ({r['backend']}); {r['machine']}", ""]
    if r["backend"] == "cpu":
        lines += ["CPU twin figures (the multi-tree search on the CPU): no GPU was measured.", ""]
    lines += ["| search | trees | leaves/step or blocks/tree | playouts/leaf | iterations/s | playouts/s | "
              "x one-core CPU MCTS iterations |",
              "|---|---|---|---|---|---|---|"]
    for row in r["rates"]:
        kind = "tree-parallel" if row.get("parallel") == "tree" else "multi-tree"
        width = f"{row['blocks']} blocks" if row.get("parallel") == "tree" else f"{row.get('leaves', '-')} leaves"
        lines.append(f"| {kind} | {row['trees']} | {width} | {row['playouts']} | "
                     f"{row['iterations_per_second']:,.0f} | "
                     f"{row['playouts_per_second']:,.0f} | {row['x_one_core_iterations']:.2f} |")
    cpu = r["cpu"]
    lines += ["", f"CPU MCTS: one core {cpu['one_core_iterations_per_second']:,.0f} iterations/s; root parallel on "
                  f"{cpu['workers']} threads {cpu['root_parallel_iterations_per_second']:,.0f} iterations/s"]
    if r.get("analysis"):
        a = r["analysis"]
        lines.append(f"analysis: {a['positions']:,} positions x {a['iterations_per_position']:,} iterations in "
                     f"{a['seconds']:.2f} s = {a['positions_per_second']:,.0f} positions/s "
                     f"({a['playouts_per_second']:,.0f} playouts/s)")
    lines += ["", "| s/move | opponent | games | W-D-L (device first) | score (95% CI) |", "|---|---|---|---|---|"]
    for g in r["games"]:
        lo, hi = g["a_score_ci95"] or (None, None)
        score = "-" if g["a_score"] is None else f"{g['a_score']:.3f} ({lo:.3f}-{hi:.3f})"
        lines.append(f"| {g['seconds_per_move']} | {g['opponent']} | {g['games']} | "
                     f"{g['a_wins']}-{g['draws']}-{g['b_wins']} | {score} |")
    return "\n".join(lines) + "\n"

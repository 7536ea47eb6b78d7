"""Kalah's own benchmarks (``jitsearch bench kalah``): alpha-beta nodes per second, and time to solve small boards.

Nodes per second of the Numba depth-limited alpha-beta from the start of
Kalah(6,4) at fixed depths, store-difference evaluation, houses in order
and no table (so every searcher visits the same tree), against the
plain-Python reference and, when ``open_spiel`` is installed, OpenSpiel's
Python ``minimax.alpha_beta_search`` on its "mancala" game, all in the same
run. Node counts come from our kernel (the same tree for all three); the
reference counts its own and must agree. Then exact solves of small (m, n)
boards under both rule variants.
"""

from __future__ import annotations

import platform
import statistics
import time


def _time(fn, repeats):
    best = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best.append(time.perf_counter() - t0)
    return statistics.median(best), out


def nodes_per_second(depths=(4, 5, 6, 7, 8), python_max_depth: int = 6, repeats: int = 3, progress=None) -> dict:
    from . import naive as kalah_naive
    from .alphabeta import search
    from .state import KalahState

    state = KalahState.initial(6, 4)
    search(state, 2, tt_capacity=0, ordering=False)  # JIT warm-up
    try:
        import pyspiel
        from open_spiel.python.algorithms import minimax as os_minimax
    except ImportError:
        pyspiel = None
    rows = []
    for d in depths:
        if progress:
            progress(f"depth {d}")
        sec, r = _time(lambda: search(state, d, tt_capacity=0, ordering=False), repeats)
        row = {"depth": d, "nodes": r["nodes"], "numba_seconds": sec, "numba_nodes_per_second": r["nodes"] / sec,
               "value": r["value"]}
        best = _time(lambda: search(state, d), repeats)
        row["numba_ordered_tt_nodes"] = best[1]["nodes"]
        row["numba_ordered_tt_seconds"] = best[0]
        if d <= python_max_depth:
            counter = [0]

            def ref():
                counter[0] = 0
                return kalah_naive.alphabeta([4] * 6, 0, [4] * 6, 0, 0, d, 0, counter=counter)

            psec, pval = _time(ref, 1 if d > 5 else repeats)
            if counter[0] != r["nodes"] or pval != r["value"]:
                raise RuntimeError(f"the Python reference searched a different tree at depth {d}")
            row["python_seconds"] = psec
            row["python_nodes_per_second"] = counter[0] / psec
            row["speedup_vs_python"] = psec / sec
        if pyspiel is not None and d <= python_max_depth:
            game = pyspiel.load_game("mancala")
            evals = [0]

            def store_diff(s):
                evals[0] += 1
                return _openspiel_store_difference(s)

            def os_search():
                evals[0] = 0
                return os_minimax.alpha_beta_search(game, game.new_initial_state(), store_diff, d, 0)

            osec, (oval, _) = _time(os_search, 1)
            row["openspiel_seconds"] = osec
            row["openspiel_value"] = oval
            row["openspiel_evaluations"] = evals[0]
            row["openspiel_nodes_per_second"] = r["nodes"] / osec
            row["speedup_vs_openspiel"] = osec / sec
        rows.append(row)
    return {"rows": rows, "openspiel": pyspiel is not None}


def _openspiel_store_difference(state) -> float:
    """Player 0's store minus player 1's, read from OpenSpiel's board drawing.

    ``str(state)`` draws player 1's houses, then a line ``<P1 store>---<P0 store>``,
    then player 0's houses.
    """
    middle = str(state).splitlines()[1]
    parts = [p for p in middle.split("-") if p]
    return float(int(parts[-1]) - int(parts[0]))


def solve_times(boards=((1, 1), (2, 2), (3, 3), (4, 3), (4, 4), (5, 3), (5, 4), (6, 3), (6, 4)),
                time_limit: float = 60.0, table_size: int = 1 << 24, progress=None) -> list[dict]:
    from .exact import EXACT
    from .state import KalahState

    def solve(state, **kw):  # the exact solve of ``jitsearch solve`` (Game.exact), quiet
        return EXACT.solve(state, report=lambda line: None, **kw)

    solve(KalahState.initial(2, 2), table_size=1 << 8)  # JIT warm-up
    rows = []
    for m, n in boards:
        for ec in (True, False):
            if progress:
                progress(f"solving Kalah({m},{n}) {'empty-capture' if ec else 'standard'}")
            r = solve(KalahState.initial(m, n, empty_capture=ec), table_size=table_size, time_limit=time_limit)
            rows.append({"houses": m, "seeds": n, "rules": "empty-capture" if ec else "standard",
                         "margin": r["margin"], "best_move": r["best_move"], "nodes": r["nodes"],
                         "seconds": r["seconds"], "complete": r["complete"], "lower": r["lower"], "upper": r["upper"]})
    return rows


def run_kalah_bench(depths=(4, 5, 6, 7, 8), python_max_depth=6, solve=True, time_limit=60.0, progress=None) -> dict:
    """Kalah: alpha-beta nodes/s vs plain Python and OpenSpiel; exact solve times.

    ``jitsearch bench kalah`` (the game's ``bench`` hook): nodes a second of the alpha-beta from the
    Kalah(6,4) start at each of ``depths``, against the same search in plain Python (to
    ``python_max_depth``) and OpenSpiel's, and with ``solve`` the exact solves of small boards
    (``time_limit`` seconds each)."""
    result = {
        "benchmark": "kalah",
        "title": "Kalah(6,4) alpha-beta from the start, store difference, no ordering, no table",
        "machine": f"{platform.processor() or platform.machine()}, Python {platform.python_version()}",
        "nodes_per_second": nodes_per_second(depths, python_max_depth, progress=progress),
    }
    if solve:
        result["solve"] = solve_times(time_limit=time_limit, progress=progress)
    rows = result["nodes_per_second"]["rows"]
    ratios = [r["speedup_vs_python"] for r in rows if "speedup_vs_python" in r]
    result["speedup_vs_python"] = statistics.median(ratios) if ratios else None
    os_ratios = [r["speedup_vs_openspiel"] for r in rows if "speedup_vs_openspiel" in r]
    result["speedup_vs_openspiel"] = statistics.median(os_ratios) if os_ratios else None
    result["numba_nodes_per_second"] = statistics.median(r["numba_nodes_per_second"] for r in rows)
    return result


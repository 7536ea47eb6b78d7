"""Fit the Kalah engine's evaluation weights to exact values from an endgame database.

Positions come from games of the engine (store-difference evaluation, depth
4, with a random move a fraction of the time, from the start); every
position with at most ``--db-seeds`` seeds in the houses and at least
``--min-seeds`` is labelled with its exact rest-of-game value (the mover's
final margin minus the mover's current store difference), and the
weights of :data:`jitsearch.games.kalah.engine.FEATURES` are the least-
squares fit of those values, in centiseeds.

    python bench/kalah_eval_fit.py --houses 6 --seeds 4 --db-seeds 18 --games 3000

prints the weights and writes ``bench/results/kalah_eval_fit.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import numpy as np

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.endgame import build_endgame_database, rank_houses
from jitsearch.games.kalah.endgame_files import default_cache_dir
from jitsearch.games.kalah.engine import FEATURES, SCALE, KalahEngine, features_into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--houses", type=int, default=6)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--db-seeds", type=int, default=18)
    ap.add_argument("--min-seeds", type=int, default=8)
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--random-moves", type=float, default=0.15)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("bench/results/kalah_eval_fit.json"))
    a = ap.parse_args()
    m = a.houses
    t0 = time.perf_counter()
    rows, targets, levels = [], [], []
    for rule in (False, True):
        db = build_endgame_database(m, a.db_seeds, rule, cache_dir=default_cache_dir(), max_bytes=4 << 30)
        values, binom = db["values"], db["binom"]
        rng = random.Random(a.seed + rule)
        engine = KalahEngine(m, eval="store", table_mb=16)
        f = np.zeros(len(FEATURES), np.int64)
        seen = set()
        for g in range(a.games // 2):
            s = KalahState.initial(m, a.seeds, empty_capture=rule)
            while not s.is_over:
                b = s.board
                t = int(b.sum()) - int(b[0]) - int(b[m + 1])
                if t <= a.db_seeds:
                    if t >= a.min_seeds:
                        key = (s.to_text(), rule)
                        if key not in seen:
                            seen.add(key)
                            features_into(b, m, s.player, f)
                            rest = int(values[s.player, rank_houses(b, m, binom)])  # player 0's rest
                            rows.append(f.copy())
                            targets.append(SCALE * (rest if s.player == 0 else -rest))
                            levels.append(t)
                    else:
                        break
                if rng.random() < a.random_moves:
                    mv = rng.choice(s.legal_moves())
                else:
                    mv = engine.search(s, depth=a.depth)["move"]
                s = s.play(mv)
    X = np.array(rows, np.float64)
    y = np.array(targets, np.float64)
    w, *_ = np.linalg.lstsq(X, y, rcond=None)
    pred = X @ w
    rmse = float(np.sqrt(np.mean((pred - y) ** 2)))
    rmse0 = float(np.sqrt(np.mean(y ** 2)))
    weights = [int(round(x)) for x in w]
    out = {"features": list(FEATURES), "weights_centiseeds": weights, "weights_float": [float(x) for x in w],
           "positions": len(y), "rmse_centiseeds": rmse, "rmse_store_only": rmse0,
           "seeds_in_houses": [int(min(levels)), int(max(levels))], "args": vars(a) | {"out": str(a.out)},
           "seconds": time.perf_counter() - t0}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "args"}, indent=2))


if __name__ == "__main__":
    main()

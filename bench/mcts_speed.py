#!/usr/bin/env python
"""MCTS simulations/s and random playouts/s on Kalah(6,4) (= ``jitsearch bench
mcts``), against OpenSpiel's MCTSBot when installed; writes
bench/results/mcts_speed.json."""

from __future__ import annotations

import sys
from pathlib import Path

from jitsearch.cli.app import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(Path(__file__).parent / "results" / "mcts_speed.json")]
    sys.exit(main(["bench", "mcts", *args]))

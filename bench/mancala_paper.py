#!/usr/bin/env python
"""Siljander's four tables on Kalah(6,4) and the iterations extension
(= ``jitsearch bench mancala-paper``); writes bench/results/mancala_paper/."""

from __future__ import annotations

import sys
from pathlib import Path

from jitsearch.cli.app import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(Path(__file__).parent / "results" / "mancala_paper")]
    sys.exit(main(["bench", "mancala-paper", *args]))

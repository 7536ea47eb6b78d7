#!/usr/bin/env python
"""Kalah benchmark (= ``jitsearch bench kalah``): alpha-beta nodes/s against the
plain-Python reference and OpenSpiel (if ``pip install open-spiel``), and
exact solve times; writes bench/results/kalah.json."""

from __future__ import annotations

import sys
from pathlib import Path

from jitsearch.cli.app import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(Path(__file__).parent / "results" / "kalah.json")]
    sys.exit(main(["bench", "kalah", *args]))

#!/usr/bin/env python
"""Reproduce section 4 of the FSSS paper (Weinstein, Littman & Goschin) and measure the cost.

Same as ``jitsearch bench fsss-paper``; by default writes into
bench/results/fsss_paper/ (per-tree CSVs, summary.json, summary.md, PNGs).
Long: about 15 minutes on 2 cores at the default 500 trees per height;
interrupt it and rerun with ``--resume`` to continue.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jitsearch.cli.app import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(Path(__file__).parent / "results" / "fsss_paper")]
    sys.exit(main(["bench", "fsss-paper", *args]))

#!/usr/bin/env python
"""Reproduce Zhang's forward-estimation experiments (figures 1, 2, 3a).

Same as ``jitsearch bench fe-paper``; by default writes into
bench/results/fe_paper/. Interrupt it and rerun with ``--resume`` to continue.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jitsearch.cli.app import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(Path(__file__).parent / "results" / "fe_paper")]
    sys.exit(main(["bench", "fe-paper", *args]))

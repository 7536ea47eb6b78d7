#!/usr/bin/env python
"""Alpha-beta throughput: Numba kernel vs the plain-Python reference.

Same as ``jitsearch bench throughput``; writes bench/results/throughput.json
and prints the table. Run: ``python bench/throughput.py [--heights 10-24]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jitsearch.cli.app import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--out" not in args:
        args += ["--out", str(Path(__file__).parent / "results" / "throughput.json")]
    sys.exit(main(["bench", "throughput", *args]))

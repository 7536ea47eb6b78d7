"""Serial vs parallel endgame build time (in RAM and memory-mapped).

Usage: python bench/kalah_endgame_build.py M S1,S2,... [THREADS,...]   e.g. 6 12,14,16 1,2
"""
import sys, time, tempfile
import numpy as np
from jitsearch.games.kalah.endgame import build_endgame_database as b, estimate_endgame_build as est
b(3, 5); b(3, 5, parallel=False); b(3, 5, threads=1)  # compile / load caches
m = int(sys.argv[1]); seeds = [int(s) for s in sys.argv[2].split(",")]
threads = [int(t) for t in sys.argv[3].split(",")] if len(sys.argv) > 3 else [1, 2]
for S in seeds:
    t0 = time.perf_counter(); ser = b(m, S, True, parallel=False, max_bytes=1 << 34)["values"]; ts = time.perf_counter() - t0
    row = [f"m={m} S={S} positions={ser.shape[1]:,} serial {ts:.2f}s ({ser.shape[1]/ts/1e6:.2f} M/s)"]
    for th in threads:
        t0 = time.perf_counter(); par = b(m, S, True, threads=th, max_bytes=1 << 34)["values"]; tp = time.perf_counter() - t0
        row.append(f"par{th} {tp:.2f}s x{ts/tp:.2f} {'same' if par.tobytes() == ser.tobytes() else 'DIFFERENT'}")
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter(); mm = b(m, S, True, cache_dir=d, max_bytes=1 << 34)["values"]; tm = time.perf_counter() - t0
        t0 = time.perf_counter(); b(m, S, True, cache_dir=d, max_bytes=1 << 34); tl = time.perf_counter() - t0
        row.append(f"mmap-build {tm:.2f}s {'same' if mm.tobytes() == ser.tobytes() else 'DIFFERENT'} open {tl:.3f}s")
    row.append(f"estimate {est(m, S, threads=max(threads))['seconds']:.2f}s")
    print(" | ".join(row), flush=True)

"""Hand-written C references for the benchmarks: compile, run, compare.

The C sources live in ``bench/c_reference/`` (see its README): random Kalah
playouts (``kalah_playouts.c``, a straightforward and a tuned variant) and
alpha-beta over the implicit uniform tree (``alphabeta.c``). Both use the
same rules, move choice, RNG stream and leaf hash as jitsearch, so their
results are bit-identical to :func:`jitsearch.games.kalah.playouts.evaluate_cpu`
and :func:`jitsearch.alphabeta`; the benchmarks check that before they quote
a ratio.

They are compiled on first use with ``cc -O3 -march=native`` (``$CC`` when
set; without ``-march=native`` if the compiler refuses it) into a cache
folder keyed by the source, the flags and the compiler
(``$JITSEARCH_C_CACHE``, else ``$XDG_CACHE_HOME/jitsearch/c_reference``,
else ``~/.cache/...``). Without a compiler or the sources,
:func:`unavailable_reason` says why and the benchmarks skip the C rows.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .._io import user_cache_dir

#: Where the C sources live (the repository's bench/c_reference/).
def _find_sources() -> Path:
    """bench/c_reference of the source checkout: beside the package (editable
    install), else $JITSEARCH_C_SOURCES, else ./bench/c_reference (a checkout
    run from its root with the package installed from it, as CI does)."""
    import os

    beside = Path(__file__).resolve().parents[2] / "bench" / "c_reference"
    for candidate in (beside, Path(os.environ.get("JITSEARCH_C_SOURCES", beside)),
                      Path.cwd() / "bench" / "c_reference"):
        if (candidate / "kalah_playouts.c").is_file():
            return candidate
    return beside


SOURCE_DIR = _find_sources()
#: Optimisation flags; ``-march=native`` is dropped if the compiler refuses it.
CFLAGS = ("-O3", "-march=native")
#: Variants of each program.
VARIANTS = ("plain", "tuned")
#: Default integer leaf range of UniformTree (the tuned C has its span as a constant).
DEFAULT_INT_RANGE = (-(2**31), 2**31)
#: Seconds a C run may take before it is stopped.
RUN_TIMEOUT_S = 3600


class CReferenceError(RuntimeError):
    """A C reference could not be built or run."""


def compiler() -> str | None:
    """The C compiler to use: ``$CC``, else ``cc``, else ``gcc``; None when there is none."""
    cc = os.environ.get("CC")
    if cc:
        return shutil.which(cc)
    return shutil.which("cc") or shutil.which("gcc")


def unavailable_reason() -> str | None:
    """None when the C references can be built here, else a one-line reason."""
    if not (SOURCE_DIR / "kalah_playouts.c").is_file() or not (SOURCE_DIR / "alphabeta.c").is_file():
        return f"C reference sources not found in {SOURCE_DIR} (only in a source checkout)"
    if compiler() is None:
        return "no C compiler (cc/gcc, or $CC) found: C reference rows skipped"
    return None


def _cache_dir() -> Path:
    root = os.environ.get("JITSEARCH_C_CACHE")
    if root:
        return Path(root)
    return user_cache_dir("c_reference")


def build(program: str, defines: dict | None = None) -> Path:
    """Compile ``bench/c_reference/<program>.c`` (cached) and return the executable's path."""
    reason = unavailable_reason()
    if reason:
        raise CReferenceError(reason)
    cc = compiler()
    source = SOURCE_DIR / f"{program}.c"
    if not source.is_file():
        raise CReferenceError(f"no C source {source}")
    text = source.read_bytes()
    dflags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    cache = _cache_dir()
    last_error = ""
    for flags in (list(CFLAGS), [f for f in CFLAGS if f != "-march=native"]):
        digest = hashlib.sha256(text + repr((cc, version, flags, dflags)).encode()).hexdigest()[:16]
        exe = cache / f"{program}-{digest}"
        if exe.is_file():
            return exe
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            out = Path(tmp) / exe.name
            proc = subprocess.run([cc, *flags, *dflags, str(source), "-o", str(out)], capture_output=True, text=True)
            if proc.returncode == 0:
                os.replace(out, exe)  # atomic: concurrent builds leave one whole file
                return exe
            last_error = proc.stderr.strip()[-600:]
    raise CReferenceError(f"compiling {source.name} failed: {last_error}")


def compile_flags() -> str:
    """The flags the references are built with (for reports)."""
    return " ".join(CFLAGS)


# -- playouts -------------------------------------------------------------------------


def run_playouts(variant: str, boards, players, playouts_per_state: int, seeds, *,
                 empty_capture: bool = False) -> list[dict]:
    """Run the C playouts of ``variant`` once per seed in ``seeds`` on one core.

    ``boards`` [K, 2m+2] and ``players`` [K] as for ``evaluate_cpu`` (checked
    by its ``validate_batch``). Returns one dict per seed: ``seconds`` (the
    C program's own wall time for that batch, without start-up or I/O) and
    int64[K] arrays ``wins``, ``draws``, ``losses``, ``margin_sum``, ``plies``
    (the same meaning as ``evaluate_cpu``'s).
    """
    from ..games import get

    validate_batch = get("kalah").fast_playouts.validate_batch
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one batch")
    b, p, m = validate_batch(boards, players, playouts_per_state, seeds[0])
    for s in seeds:
        validate_batch(b[:1], p[:1], playouts_per_state, s)
    exe = build("kalah_playouts", {"HOUSES": m})
    k = b.shape[0]
    lines = [f"{variant} {m} {int(bool(empty_capture))} {int(playouts_per_state)} {k} {len(seeds)}",
             " ".join(str(s) for s in seeds)]
    lines += [f"{int(p[i])} " + " ".join(str(int(x)) for x in b[i]) for i in range(k)]
    proc = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise CReferenceError(f"kalah_playouts failed: {proc.stderr.strip()[-400:]}")
    out_lines = proc.stdout.split("\n")
    results = []
    pos = 0
    names = ("wins", "draws", "losses", "margin_sum", "plies")
    for _ in seeds:
        head = out_lines[pos].split()
        if len(head) != 2 or head[0] != "seconds":
            raise CReferenceError(f"kalah_playouts: unexpected output line {out_lines[pos]!r}")
        table = np.array([line.split() for line in out_lines[pos + 1:pos + 1 + k]], dtype=np.int64).reshape(k, 5)
        pos += 1 + k
        res = {name: table[:, j].copy() for j, name in enumerate(names)}
        res["seconds"] = float(head[1])
        results.append(res)
    return results


def same_playouts(a: dict, b: dict) -> bool:
    """True when two playout results have identical per-state counts, margins and plies."""
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]))
               for k in ("wins", "draws", "losses", "margin_sum", "plies"))


# -- alpha-beta -----------------------------------------------------------------------


def run_alphabeta(variant: str, branching: int, height: int, seeds, *, lo: int = DEFAULT_INT_RANGE[0],
                  hi: int = DEFAULT_INT_RANGE[1]) -> list[dict]:
    """C alpha-beta of ``UniformTree(branching, height, seed, values="int", lo, hi)``
    (root MAX, full window) for each seed; one dict per seed with ``value``
    (int), ``leaves_expanded``, ``nodes_visited`` and ``seconds`` (the
    search's own wall time)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    branching, height, lo, hi = int(branching), int(height), int(lo), int(hi)
    if branching < 1 or not 0 <= height <= 64 or lo > hi or not (-(2**53) <= lo and hi <= 2**53):
        raise ValueError("need branching >= 1, height in 0..64 and -2**53 <= lo <= hi <= 2**53")
    seeds = [int(s) for s in seeds]
    if not seeds or any(not 0 <= s < 2**64 for s in seeds):
        raise ValueError("seeds must be one or more integers in [0, 2**64)")
    exe = build("alphabeta")
    proc = subprocess.run([str(exe), variant, str(branching), str(height), str(lo), str(hi), *map(str, seeds)],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise CReferenceError(f"alphabeta failed: {proc.stderr.strip()[-400:]}")
    out = []
    for line in proc.stdout.strip().splitlines():
        v, leaves, nodes, sec = line.split()
        out.append({"value": int(v), "leaves_expanded": int(leaves), "nodes_visited": int(nodes),
                    "seconds": float(sec)})
    if len(out) != len(seeds):
        raise CReferenceError("alphabeta printed the wrong number of results")
    return out

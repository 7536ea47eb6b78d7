"""Files that must survive a kill: check values, atomic writes, synced
appends. One home for each, used by the solver's checkpoints, the endgame
database records, the move-values JSONL and the arena's game records.

* :func:`json_digest` / :func:`check_value` -- blake2b of canonical JSON
  (sorted keys); a record carries ``check`` = the digest of its other
  fields, so an edited or torn record is caught on reading.
* :func:`write_json_atomic` -- write to a unique temporary file beside the
  target, fsync, rename over it: a reader sees the old file or the new one;
  :func:`ensure_writable_dir` -- refuse a folder before long work.
* :func:`append_line_synced` -- append one line and fsync it (JSONL logs
  that resume after a kill lose at most the line being written);
  :func:`drop_partial_line` -- cut a last line torn by a kill.
* :func:`grouped` -- rows grouped by a key (benchmark rows, tournament rounds).
* :func:`user_cache_dir` -- the one root of what the package keeps between
  runs (compiled kernels, endgame databases, the C references' builds).

Ground floor: imports nothing of jitsearch; every layer may import it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path


def user_cache_dir(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/jitsearch/PARTS`` (``~/.cache`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "jitsearch", *parts)


def json_digest(obj, *, digest_size: int = 8, compact: bool = False) -> str:
    """blake2b (hex, ``digest_size`` bytes) of ``json.dumps(obj, sort_keys=True)``;
    ``compact`` drops the spaces after separators (the arena's records)."""
    separators = (",", ":") if compact else None
    text = json.dumps(obj, sort_keys=True, separators=separators)
    return hashlib.blake2b(text.encode(), digest_size=digest_size).hexdigest()


def check_value(fields: dict, *, compact: bool = False) -> str:
    """The check value of a record: :func:`json_digest` (8 bytes) of every field but ``check``."""
    return json_digest({k: v for k, v in fields.items() if k != "check"}, compact=compact)


def ensure_writable_dir(directory) -> None:
    """Create ``directory`` (and its parents) and write and remove a probe
    file in it: raises ``OSError`` when it cannot hold a file (a read-only
    mount, a path under a file, no permission -- also for root, where
    permission bits say nothing)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(dir=directory, prefix=".write-test-")
    os.close(fd)
    os.unlink(probe)


def write_json_atomic(path, obj, prefix: str | None = None) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (temporary file, fsync, rename); ``prefix``: the
    temporary's name prefix (default ``path``'s stem and a dot)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + "." if prefix is None else prefix,
                               suffix=".json.tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def append_line_synced(path, line: str) -> None:
    """Append ``line`` (a newline is added) to ``path`` and fsync it."""
    with open(path, "a") as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def drop_partial_line(path: Path) -> None:
    """Cut a last line left without its newline by an interruption."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    with open(path, "r+b") as fh:
        fh.truncate(data.rfind(b"\n") + 1)


def grouped(rows, key: str) -> list[tuple]:
    """[(value, rows with that value of ``key``)], sorted by value."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    return sorted(groups.items())

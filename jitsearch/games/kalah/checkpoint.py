"""Checkpoints of a running exact Kalah solve, so that a solve of hours
survives a kill.

:func:`jitsearch.games.kalah.solver.solve_exact` with ``checkpoint=PATH``
saves its whole state every ``checkpoint_seconds`` (and when it stops on a
time limit, Ctrl-C or a full table): the transposition table, the MTD(f)
bounds and the stack and registers of the null-window test in progress.
The test kernel is resumable node for node, so a solve resumed from a
checkpoint visits exactly the nodes an uninterrupted one visits after that
point and ends with the same value, move and node count.

A checkpoint is a directory::

    PATH/state.json         format, version, what was solved (position,
                            rules, table size, database, options), bounds,
                            the stack, the table file's name, size and
                            blake2b checksum, and a check value over all that
    PATH/table-<id>.bin     the table's raw bytes (int64, C order)

A save writes a new table file (fsync), then ``state.json`` through a
temporary file and an atomic rename (:func:`jitsearch._io.write_json_atomic`), then deletes the older table files: a
kill at any moment leaves the previous checkpoint or the new one, whole. A
damaged, truncated or edited checkpoint is refused on resume with a message
saying what is wrong; one of another position or other options is refused
naming what differs.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path

import numpy as np

from ...trees.memory import format_bytes

from ..._io import check_value, ensure_writable_dir, write_json_atomic

FORMAT = "jitsearch-kalah-solve-checkpoint"
VERSION = 1
STATE_FILE = "state.json"
_BLOCK = 64 << 20  # bytes hashed and written at a time

# the stack arrays of MTStack, with their dtypes, in the order of MTStack.arrays()
STACK_FIELDS = ("boards", "movers", "moves", "nmoves", "kidx", "value", "best", "hashes", "diffs", "seeds_left",
                "keys", "child", "regs", "fregs")


def _write_table(path: Path, table: np.ndarray) -> str:
    """Write the table's bytes to ``path`` (fsynced); their blake2b."""
    digest = hashlib.blake2b(digest_size=32)
    flat = np.ascontiguousarray(table).reshape(-1).view(np.uint8)
    with open(path, "wb") as fh:
        for i in range(0, flat.size, _BLOCK):
            block = flat[i:i + _BLOCK].data
            digest.update(block)
            fh.write(block)
        fh.flush()
        os.fsync(fh.fileno())
    return digest.hexdigest()


def save_solve_state(path, identity: dict, progress: dict, table: np.ndarray, stack) -> None:
    """Save one checkpoint of a solve (see the module docstring).

    ``identity``: what must agree on resume (JSON values); ``progress``: the
    bounds and counters (JSON values); ``table``: int64[cap, 2]; ``stack``:
    the :class:`~jitsearch.games.kalah.solver.MTStack`.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    old = [p for p in path.glob("table-*.bin")]
    name = f"table-{secrets.token_hex(6)}.bin"
    tmp_table = path / (name + ".tmp")
    checksum = _write_table(tmp_table, table)
    os.replace(tmp_table, path / name)
    stack_lists = {}
    for field in STACK_FIELDS:
        a = getattr(stack, field)
        stack_lists[field] = {"dtype": a.dtype.str, "shape": list(a.shape),
                              "values": [x if np.isfinite(x) else str(x) for x in a.reshape(-1).tolist()]
                              if a.dtype.kind == "f" else a.reshape(-1).tolist()}
    state = {"format": FORMAT, "version": VERSION, "identity": identity, "progress": progress,
             "stack": stack_lists, "table": {"file": name, "rows": int(table.shape[0]), "bytes": int(table.nbytes),
                                             "blake2b": checksum}}
    state["check"] = check_value(state)
    write_json_atomic(path / STATE_FILE, state)
    leftovers = list(path.glob("state.*.json.tmp")) + list(path.glob(STATE_FILE + ".*.tmp"))  # (older saves' name)
    for p in old + leftovers + list(path.glob("table-*.bin.tmp")):
        if p.name != name:
            try:
                p.unlink()
            except FileNotFoundError:
                pass


def checkpoint_exists(path) -> bool:
    return (Path(path) / STATE_FILE).is_file()


def check_checkpoint_dir(path, table_bytes: int) -> None:
    """Fail before a solve whose checkpoint could not be saved: ``path``
    must be (or be creatable as) a writable directory with room for one
    more table file (a save writes the new table before deleting the old)."""
    path = Path(path)
    try:
        ensure_writable_dir(path)
        free = shutil.disk_usage(path).free
    except OSError as exc:
        raise ValueError(f"cannot write the checkpoint directory {path} ({exc.strerror or type(exc).__name__}): "
                         "choose a writable directory") from None
    if table_bytes > free:
        raise ValueError(f"the checkpoint in {path} needs {format_bytes(table_bytes)} for its table, above the "
                         f"{format_bytes(free)} free there: free some space, choose another directory or a smaller "
                         "table (--table-size)")


def load_solve_state(path, identity: dict) -> dict:
    """The checkpoint in ``path``: {"progress", "table", "stack"} (the stack as
    {field: array}). ``ValueError`` naming what is wrong when it is damaged,
    edited or of another solve (``identity`` differs)."""
    path = Path(path)
    sfile = path / STATE_FILE
    if path.exists() and not path.is_dir():
        raise ValueError(f"checkpoint {path} is a file, not a solve checkpoint directory")
    if not sfile.is_file():
        raise ValueError(f"{path} holds no solve checkpoint (no {STATE_FILE})")
    try:
        state = json.loads(sfile.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError(f"{sfile}: damaged (not JSON)") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(f"{sfile}: not a Kalah solve checkpoint")
    if state.get("version") != VERSION:
        raise ValueError(f"{sfile}: checkpoint version {state.get('version')} is not {VERSION}")
    if state.get("check") != check_value(state):
        raise ValueError(f"{sfile}: damaged or edited (its check value does not match)")
    theirs = state["identity"]
    differ = [k for k in sorted(set(identity) | set(theirs)) if identity.get(k) != theirs.get(k)]
    if differ:
        what = ", ".join(f"{k} {theirs.get(k)!r} (now {identity.get(k)!r})" for k in differ)
        raise ValueError(f"{path} is the checkpoint of another solve: {what}")
    t = state["table"]
    tfile = path / t["file"]
    if not tfile.is_file():
        raise ValueError(f"{path}: the table file {t['file']} is missing")
    if tfile.stat().st_size != t["bytes"]:
        raise ValueError(f"{tfile}: truncated or damaged ({tfile.stat().st_size} bytes, expected {t['bytes']})")
    try:
        table = np.empty((t["rows"], t["bytes"] // (8 * t["rows"])), dtype=np.int64)
    except (MemoryError, ValueError):
        raise ValueError(f"could not allocate the checkpoint's table ({t['bytes']} bytes)") from None
    digest = hashlib.blake2b(digest_size=32)
    flat = table.reshape(-1).view(np.uint8)
    with open(tfile, "rb") as fh:
        for i in range(0, flat.size, _BLOCK):
            view = flat[i:i + _BLOCK]
            if fh.readinto(memoryview(view)) != view.size:
                raise ValueError(f"{tfile}: truncated")
            digest.update(view.data)
    if digest.hexdigest() != t["blake2b"]:
        raise ValueError(f"{tfile}: damaged (its checksum does not match)")
    stack = {}
    for field in STACK_FIELDS:
        f = state["stack"][field]
        values = [float(x) if isinstance(x, str) else x for x in f["values"]]
        stack[field] = np.array(values, dtype=np.dtype(f["dtype"])).reshape(f["shape"])
    return {"progress": state["progress"], "table": table, "stack": stack}

"""Endgame database files: where they live, how they are written, checked
and trusted, and how an interrupted or killed build is resumed or cleaned up
(the databases themselves are built by :mod:`.endgame`). Oware's
databases (:mod:`jitsearch.games.oware.endgame`) use the same functions for
their own file name and a one-dimensional uint8 array: ``shape`` and
``dtype`` come from the record, Kalah's ``(2, size)`` int8 by default.

With a cache directory the values are an ``.npy`` file
(``kalah-m{m}-s{S}-{standard|empty}-v3.npy``), built in place through a
memory map (the file is preallocated first, so a full disk fails before
the build rather than in the middle of it) and opened with
``np.load(mmap_mode="c")``: pages are read on demand, never the whole file
at once, and a stray write by the caller stays private and never reaches
the file. Beside it a JSON record (``.json``) holds the format, the
parameters, the shape, the dtype and a SHA-256 checksum of every 16 MiB
block of the values (``block_sha256``; records of older builds hold one
blake2b of the whole instead).

Every process verifies a file before it trusts it: the blocks are hashed in
parallel threads (about 1.5-2 GB/s a core) the first time the process opens
the file, and again whenever its identity (device, inode, size, mtime and
ctime) changes: ctime cannot be set back from user space, so a file
rewritten in place and its mtime restored (``cp -p``) is hashed again even
within one process. Files up to ``VERIFY_ALWAYS_BYTES`` (64 MiB) are hashed
on every open; ``verify="full"`` hashes on every open whatever the size. A
file or record that does not match is never trusted but rebuilt, with an
:class:`EndgameCacheWarning` naming the first damaged block. The search
itself checks every value it reads (the rest of the game splits the seeds
left in the houses, so a value ``v`` with ``r`` seeds left has ``|v| <= r``
and the parity of ``r``); one that breaks this stops the solve with
:class:`EndgameDatabaseError`, and :func:`mark_damaged` flags the record so
that the next use rebuilds it. Writes are atomic: the values and the record
go to unique temporary files, renamed over the cache (values first; a
reader between the two renames sees a record whose checksums do not
match, and rebuilds). Temporary files are named with their builder's pid
(``kalah-...-v3.pid{pid}.{random}.npy.tmp``) and a builder holds an advisory
lock (``flock``) on its values file. A build stopped by Ctrl-C or an error
removes its temporary (a ``finally`` in every build, and an exit hook for a
build left running in a worker thread when its command stopped: see
:func:`discard_temporaries`); a temporary of a builder that died
(``kill -9``) is removed by the next build of the same database as soon as
its pid is no longer running and no lock is held on it, however recent.

An interrupted build (a deadline, Ctrl-C) writes nothing, unless
``resumable=True``: its finished part is then kept as
``...-v3.partial.npy`` with a ``.partial.json`` record (the position the
build had reached and a checksum of the whole partial file, taken after it
was flushed); the next resumable build claims it by an atomic rename,
checks the checksum and goes on from there. Positions of a half-done wave
are simply computed again. A partial file is never opened as a database.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None

from ..._io import ensure_writable_dir, user_cache_dir, write_json_atomic
from ...trees.memory import format_bytes

def default_cache_dir(game: str = "kalah"):
    """``$XDG_CACHE_HOME/jitsearch/{game}-endgame`` (``~/.cache`` when unset)."""
    return user_cache_dir(f"{game}-endgame")


FORMAT_VERSION = 3
#: Cache files up to this size are hashed on every open; bigger ones once a process (and when they change).
VERIFY_ALWAYS_BYTES = 64 * 1024**2
#: The values are checksummed in blocks of this many bytes, a SHA-256 each, hashed in parallel threads.
BLOCK_BYTES = 1 << 24
#: Threads that hash a big file's blocks at most.
HASH_THREADS = 16
#: A record holds 65 bytes of JSON per 16 MiB block: 4 MiB covers databases of 1 TiB.
_RECORD_MAX_BYTES = 1 << 22



#: Resolved path -> identity of the file (see :func:`file_identity`) when this process last verified it.
_VERIFIED: dict = {}
_VERIFIED_LOCK = threading.Lock()


class EndgameCacheWarning(UserWarning):
    """A cached endgame database was unusable (rebuilt) or could not be saved."""


class EndgameDatabaseError(ValueError):
    """A search read a value from an endgame database that no position can
    have: the database is damaged (its record is then flagged, so the next
    use rebuilds it)."""


def cache_path(cache_dir, houses: int, max_seeds: int, empty_capture: bool) -> Path:
    """The values file of a database: ``kalah-m{m}-s{S}-{standard|empty}-v3.npy``
    (its record is the same name with ``.json``, see :func:`record_path`)."""
    variant = "empty" if empty_capture else "standard"
    return Path(cache_dir) / f"kalah-m{houses}-s{max_seeds}-{variant}-v{FORMAT_VERSION}.npy"


def record_path(values_path) -> Path:
    """The JSON record (parameters, checksum, stamp) beside a values file."""
    return Path(values_path).with_suffix(".json")


def partial_path(values_path) -> Path:
    """Where an interrupted resumable build keeps its values (``.partial.npy``)."""
    p = Path(values_path)
    return p.with_name(p.stem + ".partial.npy")


def values_checksum(values: np.ndarray) -> str:
    """blake2b of the values' bytes (C order), hashed in 16 MiB blocks (a
    memory map is read block by block, never copied whole)."""
    digest = hashlib.blake2b(digest_size=32)
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    for i in range(0, flat.size, BLOCK_BYTES):
        digest.update(flat[i:i + BLOCK_BYTES].data)
    return digest.hexdigest()


def _hash_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, HASH_THREADS))


def block_checksums(values: np.ndarray, block_bytes: int | None = None, threads: int | None = None) -> list:
    """SHA-256 (hex) of every ``block_bytes`` block (default
    :data:`BLOCK_BYTES`) of the values' bytes (C order), hashed in parallel
    threads (hashlib releases the GIL); a memory map is read block by block,
    never copied whole."""
    block_bytes = block_bytes or BLOCK_BYTES
    flat = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    starts = list(range(0, flat.size, block_bytes))

    def one(i):
        return hashlib.sha256(flat[i:i + block_bytes]).hexdigest()

    n = min(threads or _hash_threads(), len(starts))
    if n <= 1:
        return [one(i) for i in starts]
    pool = ThreadPoolExecutor(n, thread_name_prefix="jitsearch-hash")
    try:
        return list(pool.map(one, starts))
    finally:  # on Ctrl-C: the blocks being hashed finish (milliseconds), the others are dropped
        pool.shutdown(wait=False, cancel_futures=True)


def complete_record(meta: dict, values: np.ndarray) -> dict:
    """The record of a finished build: ``meta`` with its block checksums."""
    return dict(meta, complete=True, block_bytes=BLOCK_BYTES, block_sha256=block_checksums(values))


def verify_values(values: np.ndarray, record: dict):
    """None when the values match the record's checksums, else why not."""
    blocks = record.get("block_sha256")
    if blocks is None:  # a record of an older build: one blake2b of the whole
        if values_checksum(values) != record.get("blake2b"):
            return "checksum mismatch (damaged values)"
        return None
    block = record.get("block_bytes")
    if (isinstance(block, bool) or not isinstance(block, int) or not 4096 <= block <= 1 << 34
            or not isinstance(blocks, list) or len(blocks) != -(-values.nbytes // block)):
        return "bad block checksums in the record"
    for i, (got, want) in enumerate(zip(block_checksums(values, block), blocks)):
        if got != want:
            lo = i * block
            hi = min(lo + block, values.nbytes) - 1
            return (f"checksum mismatch in block {i} of {len(blocks)} (value bytes {lo:,}..{hi:,}): "
                    f"damaged values")
    return None


def file_identity(path) -> tuple:
    """(device, inode, size, mtime_ns, ctime_ns): any write to the file
    changes it, even when the mtime is set back (ctime cannot be)."""
    st = os.stat(path)
    return int(st.st_dev), int(st.st_ino), int(st.st_size), int(st.st_mtime_ns), int(st.st_ctime_ns)


def remember_verified(path: Path, identity) -> None:
    with _VERIFIED_LOCK:
        if identity is None:
            _VERIFIED.pop(str(Path(path).resolve()), None)
        else:
            _VERIFIED[str(Path(path).resolve())] = identity


def needs_verification(path, verify: str = "auto") -> bool:
    """Whether opening the database file at ``path`` will hash it first (for
    a notice before a long verification); False when there is no file."""
    try:
        identity = file_identity(path)
    except OSError:
        return False
    with _VERIFIED_LOCK:
        known = _VERIFIED.get(str(Path(path).resolve()))
    return verify == "full" or identity[2] <= VERIFY_ALWAYS_BYTES or known != identity


def mark_damaged(values_path, why: str) -> None:
    """Flag the record of the database at ``values_path`` as damaged (a
    search found an impossible value in it): its next use rebuilds it."""
    path = Path(values_path)
    remember_verified(path, None)
    with contextlib.suppress(Exception):
        record = read_record(record_path(path))
        write_record(record_path(path), dict(record, damaged=str(why)[:500]))


def npy_header_bytes(size: int, shape=None, dtype=np.int8) -> int:
    """Bytes of the ``.npy`` header of a values array: Kalah's ``(2, size)``
    int8 by default, or any ``shape`` of a one-byte ``dtype`` (Oware's uint8)."""
    buf = io.BytesIO()
    shape = (2, int(size)) if shape is None else tuple(int(x) for x in shape)
    np.lib.format.write_array_header_1_0(buf, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                               "shape": shape})
    return buf.tell()


def database_meta(houses, max_seeds, empty_capture, size):
    return {"format": FORMAT_VERSION, "game": "kalah-endgame", "houses": int(houses), "max_seeds": int(max_seeds),
            "empty_capture": bool(empty_capture), "shape": [2, int(size)], "dtype": "int8"}


def read_record(path: Path):
    """The JSON record at ``path`` (a dict), or raise."""
    with open(path, "rb") as fh:
        data = fh.read(_RECORD_MAX_BYTES + 1)
    if len(data) > _RECORD_MAX_BYTES:
        raise ValueError("record too large")
    record = json.loads(data.decode("utf-8"))
    if not isinstance(record, dict):
        raise ValueError("record is not an object")
    return record


def open_values(path, size, shape=None, dtype=np.int8):
    """The values file mapped copy-on-write, after checking its size, shape
    and dtype (Kalah's ``(2, size)`` int8 unless ``shape``/``dtype`` say otherwise)."""
    shape = (2, size) if shape is None else tuple(shape)
    values = np.load(path, mmap_mode="c", allow_pickle=False)
    if not isinstance(values, np.ndarray) or values.shape != shape or values.dtype != dtype:
        raise ValueError("values of the wrong shape or type")
    return values


def load_cached(path: Path, expected: dict, verify: str):
    """(values, None) from a verified cache file (memory-mapped), else (None,
    why not); the file's shape and dtype are ``expected``'s (any game's record)."""
    shape = tuple(expected["shape"])
    dtype = np.dtype(expected["dtype"])
    size = shape[-1]
    try:
        record = read_record(record_path(path))
    except FileNotFoundError:
        return None, "no record (parameters and checksum) beside it"
    except Exception as exc:  # noqa: BLE001 - any unreadable record is rebuilt
        return None, f"unreadable record: {type(exc).__name__}: {exc}"
    if any(record.get(k) != v for k, v in expected.items()):
        return None, "made for other parameters or another format"
    if record.get("complete") is not True:
        return None, "the record of an unfinished build"
    if record.get("damaged"):
        return None, f"a search found an impossible value in it ({record['damaged']})"
    try:
        identity = file_identity(path)
        if identity[2] != npy_header_bytes(size, shape, dtype) + math.prod(shape) * dtype.itemsize:
            return None, "values of the wrong size"  # checked before mapping them
        values = open_values(path, size, shape, dtype)
    except Exception as exc:  # noqa: BLE001 - any unreadable file (EOFError, ValueError, OSError, ...) is rebuilt
        return None, f"unreadable: {type(exc).__name__}: {exc}"
    if needs_verification(path, verify):
        why = verify_values(values, record)
        if why is not None:
            remember_verified(path, None)
            return None, why
        try:
            if file_identity(path) != identity:
                return None, "the file changed while it was being verified"
        except OSError as exc:
            return None, f"unreadable: {exc}"
        if identity[2] > VERIFY_ALWAYS_BYTES:
            remember_verified(path, identity)
    return values, None


def check_cache_dir(directory: Path) -> None:
    """Fail before a long build when ``directory`` cannot hold the cache."""
    try:
        ensure_writable_dir(directory)
    except OSError as exc:
        raise ValueError(f"cannot write the endgame cache directory {directory} "
                         f"({exc.strerror or type(exc).__name__}): choose a writable directory or build without "
                         f"a cache (--no-endgame-cache, endgame_cache_dir=None)") from None


def check_disk(directory: Path, needed: int, what: str, fix: str) -> None:
    free = shutil.disk_usage(directory).free
    if needed > free:
        raise ValueError(f"{what} needs {format_bytes(needed)} on disk, above the {format_bytes(free)} free "
                         f"in {directory}: {fix}")


#: Temporary values file -> the open descriptor holding its advisory lock (None without ``flock``), while a
#: build of this process owns it.
_TEMP_LOCKS: dict = {}
_TEMP_GUARD = threading.Lock()
_EXIT_HOOK = []


def temp_prefix(path) -> str:
    """The name prefix of this process's temporary files beside ``path``:
    ``{stem}.pid{pid}.`` (mkstemp adds a random part and the suffix), so
    that a later build can tell whether their builder is still alive."""
    return f"{Path(path).stem}.pid{os.getpid()}."


def _owner_pid(name: str, stem: str):
    """The builder's pid in a temporary's name (:func:`temp_prefix`), None for a name without one."""
    rest = name[len(stem) + 1:]
    if rest.startswith("partial."):
        rest = rest[len("partial."):]
    head = rest.split(".", 1)[0]
    return int(head[3:]) if head.startswith("pid") and head[3:].isdigit() else None


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (on this machine's pid namespace); True when it cannot be told."""
    if os.name != "posix":  # pragma: no cover - os.kill(pid, 0) would signal it there
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def _register(tmp, fd) -> None:
    with _TEMP_GUARD:
        _TEMP_LOCKS[str(tmp)] = fd
        if not _EXIT_HOOK:
            import atexit

            atexit.register(discard_temporaries)
            _EXIT_HOOK.append(True)


def hold_lock(tmp, fd=None) -> None:
    """Take the advisory lock of a build's temporary file (kept until
    :func:`release_lock`) and register the file: :func:`discard_temporaries`
    removes it if this process exits before its build does."""
    if fcntl is None:  # no flock: stale temporaries are then told by their builder's pid only
        if fd is not None:
            os.close(fd)
        _register(tmp, None)
        return
    if fd is None:
        fd = os.open(tmp, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    _register(tmp, fd)


def release_lock(tmp) -> None:
    with _TEMP_GUARD:
        fd = _TEMP_LOCKS.pop(str(tmp), None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def discard_temporary(tmp) -> None:
    """Release a build's temporary file and remove it (nothing when it was
    already renamed into place or removed). Every build ends with this, in
    a ``finally``: a build stopped by Ctrl-C or an error leaves no file."""
    if tmp is None:
        return
    release_lock(tmp)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def discard_temporaries() -> list:
    """Remove every temporary file a build of this process still holds
    (run at exit: a build left running in a worker thread when a command
    stopped on Ctrl-C never reaches its own ``finally``). Returns the
    removed paths. A build that goes on afterwards writes into a file no
    longer in the directory, and saves nothing."""
    with _TEMP_GUARD:
        items = list(_TEMP_LOCKS.items())
        _TEMP_LOCKS.clear()
    removed = []
    for tmp, fd in items:
        try:
            os.unlink(tmp)
            removed.append(Path(tmp))
        except OSError:
            pass
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
    return removed


def _is_locked(tmp: Path) -> bool:
    """Whether a live builder holds the advisory lock of ``tmp`` (False without ``flock``)."""
    if fcntl is None:
        return False
    fd = os.open(tmp, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock taken just now
    return False


def remove_stale_temporaries(values_path) -> list:
    """Remove the temporary files that builds of the database at
    ``values_path`` left behind when they died (``kill -9``, a crash, a
    power cut): a ``.npy.tmp`` or ``.json.tmp`` whose builder (the pid in
    its name, :func:`temp_prefix`) is no longer running and, for a values
    file, whose advisory lock no process holds. A file of a live builder is
    never removed, whatever its age; one whose name holds no pid (written
    by an older version) is removed when no lock is held on it. Returns the
    removed paths."""
    path = Path(values_path)
    removed = []
    me = os.getpid()
    for tmp in list(path.parent.glob(glob.escape(path.stem) + ".*.tmp")):
        if not tmp.name.endswith((".npy.tmp", ".json.tmp")):
            continue
        pid = _owner_pid(tmp.name, path.stem)
        if pid == me:  # this process's own: removed by its build's finally (or at exit)
            continue
        try:
            if tmp.name.endswith(".npy.tmp") and _is_locked(tmp):
                continue
            if pid is not None and pid_alive(pid):  # e.g. between its mkstemp and its flock
                continue
            tmp.unlink()
            removed.append(tmp)
        except OSError:
            continue
    return removed


def write_record(path, obj) -> None:
    """Write a JSON record atomically (temporary file named by
    :func:`temp_prefix`, fsync, rename over ``path``)."""
    write_json_atomic(path, obj, prefix=temp_prefix(Path(path)))


def new_values_file(path: Path, size: int, shape=None, dtype=np.int8):
    """A unique temporary ``.npy`` beside ``path``, preallocated, mapped for
    writing, its advisory lock held (see :func:`remove_stale_temporaries`);
    Kalah's ``(2, size)`` int8 unless ``shape``/``dtype`` say otherwise."""
    shape = (2, size) if shape is None else tuple(shape)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=".npy.tmp")
    try:
        hold_lock(tmp, fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    try:
        values = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=shape)
        with open(tmp, "r+b") as fh:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fh.fileno(), 0, npy_header_bytes(size, shape, dtype)
                                   + math.prod(shape) * np.dtype(dtype).itemsize)
    except BaseException:
        discard_temporary(tmp)
        raise
    return Path(tmp), values


def flush_values(values, file_path) -> None:
    values.flush()
    with open(file_path, "r+b") as fh:
        os.fsync(fh.fileno())


def save_database(path: Path, tmp: Path, values, meta: dict) -> bool:
    """Flush ``values`` (the map of the temporary ``tmp``), hash them into
    the record, rename ``tmp`` over ``path`` and write the record beside
    it. True when saved; False when the disk refused (an
    :class:`EndgameCacheWarning` says so: the values stay usable, just not
    cached). Whatever happens, ``tmp`` does not survive: removed on an error
    or Ctrl-C (while hashing a big file, say), renamed when saved."""
    try:
        flush_values(values, tmp)
        record = complete_record(meta, values)
        os.replace(tmp, path)
        write_record(record_path(path), record)
    except OSError as exc:
        warnings.warn(f"could not save the endgame database to {path} ({exc.strerror or exc}): not cached",
                      EndgameCacheWarning, stacklevel=3)
        return False
    finally:
        discard_temporary(tmp)  # only releases the lock once renamed
    with contextlib.suppress(OSError):  # hashed above: trusted in this process until the file changes
        remember_verified(path, file_identity(path))
    return True


def claim_partial(path: Path, meta: dict, size: int):
    """Take over a resumable build's partial file: (file, values, regs, mode),
    or None when there is none or it is not usable (then it is removed)."""
    ppath = partial_path(path)
    prec = record_path(ppath)
    try:
        record = read_record(prec)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001
        warnings.warn(f"partial endgame build {ppath} is not usable (unreadable record: {exc}): starting afresh",
                      EndgameCacheWarning, stacklevel=3)
        with contextlib.suppress(OSError):
            os.unlink(prec)
        return None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=".npy.tmp")
    os.close(fd)
    try:
        os.replace(ppath, tmp)  # atomic: of two builders only one gets it
        hold_lock(tmp)  # the pid in its name protects it until then
    except FileNotFoundError:
        discard_temporary(tmp)
        return None
    except BaseException:
        discard_temporary(tmp)
        raise
    with contextlib.suppress(OSError):
        os.unlink(prec)
    why = None
    values = None
    regs = record.get("regs")
    if any(record.get(k) != v for k, v in meta.items()):
        why = "made for other parameters or another format"
    elif (record.get("complete") is not False or record.get("mode") not in ("serial", "parallel")
          or not isinstance(regs, list) or len(regs) != 2
          or not all(isinstance(r, int) and not isinstance(r, bool) for r in regs)
          or not 0 <= regs[0] <= meta["max_seeds"]
          or not 0 <= regs[1] < math.comb(regs[0] + 2 * meta["houses"] - 1, 2 * meta["houses"] - 1)):
        why = "bad position record"
    else:
        try:
            if os.path.getsize(tmp) != npy_header_bytes(size) + 2 * size:
                raise ValueError("values of the wrong size")
            values = np.lib.format.open_memmap(tmp, mode="r+")
            if values.shape != (2, size) or values.dtype != np.int8:
                raise ValueError("values of the wrong shape or type")
            if values_checksum(values) != record.get("blake2b"):
                why = "checksum mismatch (damaged values)"
        except Exception as exc:  # noqa: BLE001
            why = f"unreadable: {type(exc).__name__}: {exc}"
    if why is not None:
        warnings.warn(f"partial endgame build {ppath} is not usable ({why}): starting afresh",
                      EndgameCacheWarning, stacklevel=3)
        del values
        discard_temporary(tmp)
        return None
    return Path(tmp), values, regs, record["mode"]


def keep_partial(path: Path, tmp: Path, values, meta: dict, regs, mode: str) -> None:
    """Save an interrupted build as ``.partial.npy`` + ``.partial.json``."""
    flush_values(values, tmp)
    record = dict(meta, complete=False, regs=[int(regs[0]), int(regs[1])], mode=mode,
                  blake2b=values_checksum(values))
    ppath = partial_path(path)
    os.replace(tmp, ppath)
    write_record(record_path(ppath), record)

"""Endgame databases that scale: the parallel build's order, bit-for-bit
agreement with the serial build, memory-mapped cache files, resumable
builds, and the size estimate with its refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numba
import numpy as np
import pytest

import jitsearch.games.kalah.endgame as eg
import jitsearch.games.kalah.endgame_files as ef
from jitsearch.games.compositions import unrank_in_level
from jitsearch.games.kalah import KalahState, apply_move
from jitsearch.games.kalah.solver import solve_exact
from jitsearch.games.kalah.endgame import binomial_table, build_endgame_database, database_size, estimate_endgame_build, rank_houses
from jitsearch.games.kalah.endgame_files import EndgameCacheWarning, cache_path, partial_path, record_path

from test_kalah_endgame import _all_house_vectors
from test_kalah_search import brute_force_margin


def _board(h, m):
    return np.array([0] + list(h[:m]) + [0] + list(h[m:]), dtype=np.int32)


def _potential(h, m):
    """Naive: seeds times the distance to their owner's store."""
    return sum(h[j] * (m - j) for j in range(m)) + sum(h[m + j] * (m - j) for j in range(m))


@pytest.mark.parametrize("m, seeds", [(1, 6), (2, 7), (3, 6), (4, 4)])
@pytest.mark.parametrize("ec", [False, True])
def test_a_child_lies_in_a_smaller_level_or_an_earlier_wave(m, seeds, ec):
    """The claim the parallel order rests on, checked move by move: a move
    that keeps the seed count in the houses lowers the potential (and the
    rank), so the positions of one wave never depend on each other."""
    binom = binomial_table(seeds + 2 * m, 2 * m)
    kept = 0
    for h in _all_house_vectors(m, seeds):
        board = _board(h, m)
        t, p, r = sum(h), _potential(h, m), int(rank_houses(board, m, binom))
        for player in (0, 1):
            first = 1 if player == 0 else m + 2
            for pit in range(first, first + m):
                if board[pit] == 0:
                    continue
                child = board.copy()
                nxt = apply_move(child, m, player, pit, ec)
                ch = list(child[1:m + 1]) + list(child[m + 2:])
                assert sum(ch) <= t
                if nxt >= 0 and sum(ch) == t:
                    kept += 1
                    assert _potential(ch, m) < p and int(rank_houses(child, m, binom)) < r, (h, player, pit)
    assert kept > 0 or m == 1  # the case the order is about does occur (m = 1: every seed reaches a store)


@pytest.mark.parametrize("m, t", [(1, 5), (2, 6), (3, 5), (6, 3)])
def test_unranking_inverts_the_ranking(m, t):
    k = 2 * m
    binom = binomial_table(t + k, k)
    base = int(binom[t + k - 1, k])
    h = np.zeros(k, dtype=np.int64)
    for c in range(int(binom[t + k - 1, k - 1])):
        unrank_in_level(t, c, k, binom, h)
        assert h.sum() == t and h.min() >= 0
        assert int(rank_houses(_board(h, m), m, binom)) == base + c


@pytest.mark.parametrize("m, seeds, ec", [(2, 6, False), (2, 6, True), (3, 4, False), (3, 4, True)])
def test_parallel_memory_mapped_entries_equal_brute_force(tmp_path, m, seeds, ec):
    db = build_endgame_database(m, seeds, ec, cache_dir=tmp_path, parallel=True, threads=2, chunk_positions=5)
    again = build_endgame_database(m, seeds, ec, cache_dir=tmp_path)
    assert not db["loaded"] and again["loaded"]
    for d in (db, again):
        assert isinstance(d["values"], np.memmap) and d["values"].shape == (2, database_size(m, seeds))
    for h in _all_house_vectors(m, seeds):
        if sum(h[:m]) == 0 or sum(h[m:]) == 0:
            continue  # the game is over: never looked up
        board = np.array([3] + h[:m] + [1] + h[m:], dtype=np.int32)
        r = int(rank_houses(board, m, db["binom"]))
        for player in (0, 1):
            want = brute_force_margin(KalahState.from_board(board, player, empty_capture=ec)) - (1 - 3)
            assert db["values"][player, r] == want and again["values"][player, r] == want, (h, player)


@pytest.mark.parametrize("m, seeds, ec", [(1, 12, False), (2, 9, True), (3, 8, False), (4, 7, True),
                                          (5, 6, False), (6, 6, True)])
def test_parallel_equals_serial_bit_for_bit(m, seeds, ec):
    serial = build_endgame_database(m, seeds, ec, parallel=False)["values"]
    for threads, chunk in ((1, None), (2, None), (2, 3)):
        par = build_endgame_database(m, seeds, ec, parallel=True, threads=threads, chunk_positions=chunk)["values"]
        assert par.tobytes() == serial.tobytes(), (threads, chunk)


def test_the_thread_count_is_restored_and_checked():
    before = numba.get_num_threads()
    build_endgame_database(3, 5, parallel=True, threads=1)
    assert numba.get_num_threads() == before
    for bad in (0, numba.config.NUMBA_NUM_THREADS + 1, True, 1.5):
        with pytest.raises(ValueError, match="threads must be an integer"):
            build_endgame_database(3, 5, threads=bad)
    with pytest.raises(ValueError, match="verify must be"):
        build_endgame_database(3, 5, verify="never")


# -- interrupted builds ------------------------------------------------------------------

class _StopAfter:
    """A progress callback that raises KeyboardInterrupt on its n-th call."""

    def __init__(self, n):
        self.n, self.calls = n, []

    def __call__(self, done, total, seconds):
        self.calls.append(done)
        if len(self.calls) == self.n:
            raise KeyboardInterrupt


def _names(directory):
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize("first, then", [(True, True), (False, False), (True, False), (False, True)])
def test_an_interrupted_build_resumes_to_the_same_values(tmp_path, monkeypatch, first, then):
    m, seeds, ec = 4, 7, True
    whole = build_endgame_database(m, seeds, ec, parallel=False)["values"]
    monkeypatch.setattr(eg, "_PROGRESS_SECONDS", 0.0)
    stop = _StopAfter(40)
    with pytest.raises(KeyboardInterrupt):
        build_endgame_database(m, seeds, ec, cache_dir=tmp_path, parallel=first, chunk_positions=97,
                               resumable=True, progress=stop)
    assert 0 < stop.calls[-1] < database_size(m, seeds)
    path = cache_path(tmp_path, m, seeds, ec)
    assert _names(tmp_path) == sorted([partial_path(path).name, record_path(partial_path(path)).name])
    record = json.loads(record_path(partial_path(path)).read_text())
    assert record["complete"] is False and record["mode"] == ("parallel" if first else "serial")
    seen = []
    r = build_endgame_database(m, seeds, ec, cache_dir=tmp_path, parallel=then, chunk_positions=97, resumable=True,
                               progress=lambda done, total, s: seen.append(done))
    assert not r["loaded"] and r["values"].tobytes() == whole.tobytes()
    if first == then:
        assert seen[0] >= stop.calls[-1] - 97  # went on from where it stopped (within a chunk)
    assert _names(tmp_path) == sorted([path.name, record_path(path).name])  # the partial was used up
    assert build_endgame_database(m, seeds, ec, cache_dir=tmp_path)["loaded"]


def test_a_deadline_keeps_a_resumable_build_and_a_plain_one_leaves_nothing(tmp_path, monkeypatch):
    import time

    m, seeds = 3, 8
    whole = build_endgame_database(m, seeds, parallel=False)["values"]
    assert build_endgame_database(m, seeds, cache_dir=tmp_path, deadline=time.perf_counter() - 1) is None
    monkeypatch.setattr(eg, "_PROGRESS_SECONDS", 0.0)
    with pytest.raises(KeyboardInterrupt):
        build_endgame_database(m, seeds, cache_dir=tmp_path, chunk_positions=50, progress=_StopAfter(5))
    assert _names(tmp_path) == []  # not resumable: nothing written, no temporary left
    assert build_endgame_database(m, seeds, cache_dir=tmp_path, deadline=time.perf_counter() - 1,
                                  resumable=True) is None
    path = cache_path(tmp_path, m, seeds, False)
    assert partial_path(path).exists() and not path.exists()
    r = build_endgame_database(m, seeds, cache_dir=tmp_path, resumable=True)
    assert r["values"].tobytes() == whole.tobytes()


def test_nothing_partial_is_ever_taken_as_complete(tmp_path, monkeypatch):
    m, seeds = 3, 8
    whole = build_endgame_database(m, seeds)["values"]
    monkeypatch.setattr(eg, "_PROGRESS_SECONDS", 0.0)
    with pytest.raises(KeyboardInterrupt):
        build_endgame_database(m, seeds, cache_dir=tmp_path, chunk_positions=50, resumable=True,
                               progress=_StopAfter(5))
    path = cache_path(tmp_path, m, seeds, False)
    # a build that does not resume ignores the partial and builds afresh
    plain = build_endgame_database(m, seeds, cache_dir=tmp_path)
    assert not plain["loaded"] and plain["values"].tobytes() == whole.tobytes()
    assert partial_path(path).exists()
    # a partial file renamed to the database's name is refused, by its record
    for p in (path, record_path(path)):
        p.unlink()
    partial_path(path).replace(path)
    record_path(partial_path(path)).replace(record_path(path))
    with pytest.warns(EndgameCacheWarning, match="unfinished build"):
        r = build_endgame_database(m, seeds, cache_dir=tmp_path)
    assert not r["loaded"] and r["values"].tobytes() == whole.tobytes()


def test_a_damaged_partial_is_not_resumed(tmp_path, monkeypatch):
    m, seeds = 3, 8
    whole = build_endgame_database(m, seeds)["values"]
    monkeypatch.setattr(eg, "_PROGRESS_SECONDS", 0.0)
    with pytest.raises(KeyboardInterrupt):
        build_endgame_database(m, seeds, cache_dir=tmp_path, chunk_positions=50, resumable=True,
                               progress=_StopAfter(5))
    ppath = partial_path(cache_path(tmp_path, m, seeds, False))
    with open(ppath, "r+b") as fh:  # a value of a finished position changed
        fh.seek(200)
        fh.write(b"\x55")
    with pytest.warns(EndgameCacheWarning, match="partial .*checksum mismatch"):
        r = build_endgame_database(m, seeds, cache_dir=tmp_path, resumable=True)
    assert r["values"].tobytes() == whole.tobytes()
    assert not ppath.exists() and not record_path(ppath).exists()


# -- memory-mapped files and how big ones are verified --------------------------------

def test_big_files_are_verified_once_a_process_and_whenever_they_change(tmp_path, monkeypatch):
    m, seeds = 3, 6
    monkeypatch.setattr(ef, "VERIFY_ALWAYS_BYTES", 0)  # every file counts as big
    monkeypatch.setattr(ef, "BLOCK_BYTES", 4096)  # several blocks
    monkeypatch.setattr(ef, "_VERIFIED", {})
    hashes = []
    real = ef.block_checksums
    monkeypatch.setattr(ef, "block_checksums", lambda *a, **k: hashes.append(1) or real(*a, **k))
    build_endgame_database(m, seeds, cache_dir=tmp_path)
    assert len(hashes) == 1  # the build's own hash: trusted in this process
    assert build_endgame_database(m, seeds, cache_dir=tmp_path)["loaded"] and len(hashes) == 1
    assert build_endgame_database(m, seeds, cache_dir=tmp_path, verify="full")["loaded"] and len(hashes) == 2
    ef._VERIFIED.clear()  # as a new process: hashed once, then trusted
    assert build_endgame_database(m, seeds, cache_dir=tmp_path)["loaded"] and len(hashes) == 3
    assert build_endgame_database(m, seeds, cache_dir=tmp_path)["loaded"] and len(hashes) == 3
    path = cache_path(tmp_path, m, seeds, False)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # touched: hashed once more
    assert build_endgame_database(m, seeds, cache_dir=tmp_path)["loaded"] and len(hashes) == 4
    values = np.load(path)
    values[1, 5] += 1
    np.save(path, values)  # rewritten: hashed, and the damage found
    with pytest.warns(EndgameCacheWarning, match="checksum mismatch in block 0 of"):
        assert not build_endgame_database(m, seeds, cache_dir=tmp_path)["loaded"]


def _damage_in_place_keeping_size_and_mtime(path, offset, new_bytes):
    """The issue's damage: ``cp -p`` of a damaged copy over the file (same
    inode, size and mtime; only the ctime shows it)."""
    import shutil
    import subprocess

    damaged = path.with_name("damaged-copy")
    shutil.copy2(path, damaged)
    with open(damaged, "r+b") as fh:
        fh.seek(offset)
        fh.write(new_bytes)
    before = path.stat()
    os.utime(damaged, ns=(before.st_atime_ns, before.st_mtime_ns))
    subprocess.run(["cp", "-p", str(damaged), str(path)], check=True)
    damaged.unlink()
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


@pytest.mark.parametrize("new_process", [False, True])
@pytest.mark.parametrize("damage", ["negate", "zero", "blocks"])
def test_a_big_database_damaged_in_place_is_never_trusted(tmp_path, monkeypatch, new_process, damage):
    """A database over the always-hash size, damaged with its size, inode
    and mtime kept, must not give a wrong exact value: in a new process (its
    first open hashes it) nor in the same one (the ctime changed)."""
    pos = KalahState.initial(3, 3)
    monkeypatch.setattr(ef, "VERIFY_ALWAYS_BYTES", 0)
    monkeypatch.setattr(ef, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(ef, "_VERIFIED", {})
    want = solve_exact(pos)["margin"]
    first = solve_exact(pos, endgame_seeds=8, endgame_cache_dir=tmp_path)
    assert first["margin"] == want
    path = cache_path(tmp_path, 3, 8, False)
    size = database_size(3, 8)
    header = path.stat().st_size - 2 * size
    values = np.load(path)
    if damage == "negate":  # every value negated: passes the search's own check, only the checksums see it
        raw = (-values).astype(np.int8).tobytes()
        _damage_in_place_keeping_size_and_mtime(path, header, raw)
    elif damage == "zero":
        _damage_in_place_keeping_size_and_mtime(path, header, bytes(2 * size))
    else:  # a few bytes deep inside
        _damage_in_place_keeping_size_and_mtime(path, header + 2 * size - 5000, b"\x05\x07\x01")
    if new_process:
        ef._VERIFIED.clear()
    with pytest.warns(EndgameCacheWarning, match="checksum mismatch in block .*rebuilding"):
        r = solve_exact(pos, endgame_seeds=8, endgame_cache_dir=tmp_path)
    assert r["complete"] and r["margin"] == want and r["lower"] <= r["upper"]
    again = build_endgame_database(3, 8, cache_dir=tmp_path)
    assert again["loaded"] and np.array_equal(again["values"], values)


def test_the_search_stops_on_an_impossible_database_value(tmp_path, monkeypatch):
    """Values no position can have (|v| > seeds left, or the wrong parity)
    stop the solve with an error naming the database; its record is
    flagged, so the next use rebuilds it."""
    from jitsearch.games.kalah.endgame_files import EndgameDatabaseError

    monkeypatch.setattr(ef, "_VERIFIED", {})
    pos = KalahState.initial(3, 3)
    want = solve_exact(pos)["margin"]
    db = build_endgame_database(3, 8, cache_dir=tmp_path)
    real = np.array(db["values"])
    for values in (np.full_like(real, 53),  # out of range: |v| > the seeds left
                   np.where(np.abs(real) < 8, real + 1, real).astype(np.int8)):  # the wrong parity, in range
        broken = dict(db, values=values)
        with pytest.raises(EndgameDatabaseError, match=f"{db['path']}.*damaged.*impossible"):
            solve_exact(pos, endgame_db=broken)
    rec = json.loads(record_path(db["path"]).read_text())
    assert "impossible" in rec["damaged"]
    with pytest.warns(EndgameCacheWarning, match="impossible value.*rebuilding"):
        r = solve_exact(pos, endgame_seeds=8, endgame_cache_dir=tmp_path)
    assert r["margin"] == want
    assert "damaged" not in json.loads(record_path(db["path"]).read_text())


def _builder_process(path, size, shape=None, dtype="int8"):
    """A process that creates a build's temporary values file beside ``path``
    (locked, as a builder does) and sleeps; returns (process, temporary)."""
    import subprocess
    import sys

    code = ("import sys, time; import numpy as np; from pathlib import Path; "
            "import jitsearch.games.kalah.endgame_files as ef; "
            f"t, v = ef.new_values_file(Path({str(path)!r}), {size}, {shape!r}, np.{dtype}); "
            "print(t, flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    return proc, Path(proc.stdout.readline().strip())


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_of_dead_builders_are_removed(tmp_path):
    """A builder killed with kill -9 leaves its full-size .npy.tmp; the next
    build removes it at once (however recent: its pid is gone and no lock is
    held), but never the file of a builder still alive, nor a record being
    written by a live process."""
    path = cache_path(tmp_path, 3, 8, False)
    proc, tmp = _builder_process(path, 1000)
    try:
        assert tmp.exists() and tmp.name.endswith(".npy.tmp")
        assert ef.remove_stale_temporaries(path) == [] and tmp.exists()  # its builder is alive: kept
    finally:
        proc.kill()
        proc.wait()
    dead_json = path.with_name(f"{path.stem}.pid{_dead_pid()}.abc123.json.tmp")
    live_json = path.with_name(f"{path.stem}.partial.pid{os.getppid()}.abc123.json.tmp")
    old_json = path.with_name(path.stem + ".abc123.json.tmp")  # an older version's name: no pid
    for p in (dead_json, live_json, old_json):
        p.write_text("{")
    build_endgame_database(3, 8, cache_dir=tmp_path)  # at once, well within a second of the kill
    assert not tmp.exists() and not dead_json.exists() and not old_json.exists()
    assert live_json.exists() and f".pid{proc.pid}." in tmp.name
    live_json.unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, record_path(path).name])


@pytest.mark.parametrize("where", ["build", "save"])
def test_a_kalah_build_stopped_by_ctrl_c_leaves_no_temporary(tmp_path, monkeypatch, where):
    """Ctrl-C during the build or while the finished values are hashed and
    saved: nothing is left in the cache directory."""
    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "build":
        kwargs = {"progress": stop, "chunk_positions": 1000}
    else:
        monkeypatch.setattr(ef, "complete_record", stop)
        kwargs = {}
    with pytest.raises(KeyboardInterrupt):
        build_endgame_database(3, 8, cache_dir=tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_temporaries_of_this_process_are_removed_at_exit(tmp_path):
    """A build left running in a worker thread (a command stopped on Ctrl-C
    does not wait for it) never reaches its finally: the exit hook removes
    its file."""
    path = cache_path(tmp_path, 3, 8, False)
    tmp, values = ef.new_values_file(path, 1000)
    assert ef.discard_temporaries() == [tmp] and not tmp.exists()
    del values
    ef.discard_temporary(tmp)  # the build's own finally, later: nothing left to do


def test_writes_to_a_loaded_database_never_reach_the_file(tmp_path):
    build_endgame_database(3, 6, cache_dir=tmp_path)
    db = build_endgame_database(3, 6, cache_dir=tmp_path)
    assert db["loaded"] and isinstance(db["values"], np.memmap)
    db["values"][:] = 99  # copy-on-write
    again = build_endgame_database(3, 6, cache_dir=tmp_path, verify="full")
    assert again["loaded"] and again["values"].max() < 99


# -- sizes, time estimates and refusals -----------------------------------------------

@pytest.mark.parametrize("m, seeds", [(1, 0), (2, 6), (3, 8), (6, 7)])
def test_the_estimate_is_the_real_file_size(tmp_path, m, seeds):
    est = estimate_endgame_build(m, seeds)
    db = build_endgame_database(m, seeds, cache_dir=tmp_path)
    assert db["estimate"] == est
    assert cache_path(tmp_path, m, seeds, False).stat().st_size == est["file_bytes"]
    assert est["positions"] == database_size(m, seeds) and est["values_bytes"] == 2 * est["positions"]
    assert est["ram_bytes"] == est["values_bytes"] + est["scratch_bytes"] and est["seconds"] > 0
    assert estimate_endgame_build(m, seeds, parallel=False)["scratch_bytes"] == 0
    assert record_path(cache_path(tmp_path, m, seeds, False)).stat().st_size < 1024


def test_refusals_name_the_limit(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    est = estimate_endgame_build(6, 12)
    with pytest.raises(ValueError, match="above the limit of") as info:
        build_endgame_database(6, 12, max_bytes=est["ram_bytes"] - 1)
    assert "\n" not in str(info.value)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**6, 10**6 - 1000, 1000))
    monkeypatch.setattr(eg, "_run_build", lambda *a: pytest.fail("the build started"))
    with pytest.raises(ValueError, match=r"on disk, above the 1000 B free in .*: free some space") as info:
        build_endgame_database(6, 12, cache_dir=tmp_path)
    assert str(tmp_path) in str(info.value)
    assert list(tmp_path.iterdir()) == []  # refused before any file was made


def test_parallel_speedup_is_the_measured_curve():
    """The estimate's thread speedup: the measured points, linear between them, rising, flat past the last."""
    from jitsearch.games.kalah.endgame import PARALLEL_SPEEDUP, parallel_speedup

    for threads, speedup in PARALLEL_SPEEDUP:
        assert parallel_speedup(threads) == speedup
    assert parallel_speedup(3) == (PARALLEL_SPEEDUP[1][1] + PARALLEL_SPEEDUP[2][1]) / 2
    values = [parallel_speedup(t) for t in range(1, 40)]
    assert all(b >= a for a, b in zip(values, values[1:])) and all(1 <= v <= t for t, v in enumerate(values, 1))
    assert parallel_speedup(64) == PARALLEL_SPEEDUP[-1][1]
    one = estimate_endgame_build(6, 12, threads=1)["seconds"]
    assert estimate_endgame_build(6, 12, threads=2)["seconds"] == pytest.approx(one / PARALLEL_SPEEDUP[1][1])

"""Endgame databases: every entry checked against brute force on small
boards; the solver with a database agrees with brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.endgame import build_endgame_database, database_size, rank_houses
from jitsearch.games.kalah.endgame_files import EndgameCacheWarning, EndgameDatabaseError
from jitsearch.games.kalah.solver import solve_exact

from test_kalah_search import _random_positions, brute_force_margin


def _all_house_vectors(m, max_seeds):
    for t in range(max_seeds + 1):
        for cuts in itertools.combinations(range(t + 2 * m - 1), 2 * m - 1):
            parts, prev = [], -1
            for c in cuts:
                parts.append(c - prev - 1)
                prev = c
            parts.append(t + 2 * m - 1 - prev - 1)
            yield parts


@pytest.mark.parametrize("m, seeds, ec", [(2, 6, False), (2, 6, True), (3, 4, False), (3, 4, True)])
def test_every_entry_equals_brute_force(m, seeds, ec):
    db = build_endgame_database(m, seeds, ec)
    ranks = set()
    for h in _all_house_vectors(m, seeds):
        board = np.array([3] + h[:m] + [1] + h[m:], dtype=np.int32)  # stores are irrelevant to the rest
        r = int(rank_houses(board, m, db["binom"]))
        ranks.add(r)
        if sum(h[:m]) == 0 or sum(h[m:]) == 0:
            continue  # the game is over: never looked up
        for player in (0, 1):
            s = KalahState.from_board(board, player, empty_capture=ec)
            assert db["values"][player, r] == brute_force_margin(s) - (1 - 3), (h, player)
    assert ranks == set(range(database_size(m, seeds)))  # the ranking is a bijection


# the same kernels for both rules: the second rule in the slow step
@pytest.mark.parametrize("ec", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_solver_with_a_database_agrees_with_brute_force(ec):
    db = build_endgame_database(3, 8, ec)
    for pos in _random_positions(12, m=3, n=3, seed=21 + ec, empty_capture=ec):
        want = brute_force_margin(pos)
        r = solve_exact(pos, endgame_db=db, tt_capacity=1 << 10)
        assert r["margin"] == want and r["endgame_seeds"] == 8
        assert brute_force_margin(pos.play(r["best_move"])) == want
    with pytest.raises(ValueError, match="another board size"):
        solve_exact(KalahState.initial(4, 2), endgame_db=db)


def test_database_cache_round_trips(tmp_path):
    a = build_endgame_database(2, 5, True, cache_dir=tmp_path)
    b = build_endgame_database(2, 5, True, cache_dir=tmp_path)
    assert not a["loaded"] and b["loaded"] and (a["values"] == b["values"]).all()
    a = dict(a, values=np.array(a["values"]))  # the maps follow their file; damaged below in place
    (next(tmp_path.glob("*.npy"))).write_bytes(b"garbage")  # a damaged file is rebuilt, not trusted
    with pytest.warns(EndgameCacheWarning, match="rebuilding"):
        c = build_endgame_database(2, 5, True, cache_dir=tmp_path)
    assert not c["loaded"] and (c["values"] == a["values"]).all()


# -- cache files: verified on load, rebuilt when damaged, written atomically ------------

def _cache_file(directory):
    (path,) = directory.glob("*.npy")
    return path


def _flip_value_bytes(path):
    """Flip bytes inside the stored values, leaving the header intact."""
    data = bytearray(path.read_bytes())
    data_start = 10 + int.from_bytes(data[8:10], "little")
    for i in range(data_start + 100, data_start + 110):
        data[i] ^= 0x55
    path.write_bytes(bytes(data))


def _overwrite_values_keep_meta(path):
    """The issue's damage: a well-formed file whose values changed, header and record kept."""
    values = np.load(path)
    values[:] = 20
    np.save(path, values)


@pytest.mark.parametrize("damage", [
    _flip_value_bytes,
    _overwrite_values_keep_meta,
    lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),  # truncated
    lambda p: p.write_bytes(b""),  # 0 bytes
    lambda p: p.write_bytes(b"\x93NUMPY\x01\x00" + b"x" * 50),  # a broken .npy header
    lambda p: p.with_suffix(".json").unlink(),  # no record
    lambda p: p.with_suffix(".json").write_text("{"),  # a broken record
])
def test_a_damaged_cache_file_is_detected_and_rebuilt(tmp_path, damage):
    pos = _random_positions(1, m=3, n=3, seed=44)[0]
    want = brute_force_margin(pos)
    fresh = build_endgame_database(3, 8, False)
    first = solve_exact(pos, endgame_seeds=8, endgame_cache_dir=tmp_path)
    assert first["margin"] == want and build_endgame_database(3, 8, cache_dir=tmp_path)["loaded"]
    wrong = dict(fresh, values=np.full_like(fresh["values"], 20))
    with pytest.raises(EndgameDatabaseError, match="impossible value"):  # the search's own check
        solve_exact(pos, endgame_db=wrong)
    negated = dict(fresh, values=-fresh["values"])  # passes that check: only the checksums catch it
    assert solve_exact(pos, endgame_db=negated)["margin"] != want  # damaged values would change the answer
    damage(_cache_file(tmp_path))
    with pytest.warns(EndgameCacheWarning, match="not usable.*rebuilding"):
        r = solve_exact(pos, endgame_seeds=8, endgame_cache_dir=tmp_path)
    assert r["complete"] and r["margin"] == want and r["endgame_seeds"] == 8
    again = build_endgame_database(3, 8, cache_dir=tmp_path)  # the rebuilt file is trusted again
    assert again["loaded"] and np.array_equal(again["values"], fresh["values"])
    names = sorted(p.name for p in tmp_path.iterdir())  # no temporary left
    assert names == sorted([_cache_file(tmp_path).name, _cache_file(tmp_path).with_suffix(".json").name])


def test_a_file_for_other_parameters_is_not_trusted(tmp_path):
    from jitsearch.games.kalah.endgame_files import cache_path

    other = tmp_path / "other"
    build_endgame_database(2, 5, True, cache_dir=other)
    built = _cache_file(other)
    built.with_suffix(".json").replace(cache_path(tmp_path, 2, 5, False).with_suffix(".json"))
    built.replace(cache_path(tmp_path, 2, 5, False))  # the empty-capture values and record, renamed
    with pytest.warns(EndgameCacheWarning, match="other parameters"):
        r = build_endgame_database(2, 5, False, cache_dir=tmp_path)
    assert not r["loaded"] and np.array_equal(r["values"], build_endgame_database(2, 5, False)["values"])


@pytest.mark.parametrize("under_a_file", [True, False])
def test_an_unusable_cache_dir_fails_before_the_build(tmp_path, monkeypatch, under_a_file):
    import jitsearch.games.kalah.endgame as eg

    a_file = tmp_path / "a-file"
    a_file.write_bytes(b"x")
    bad = a_file / "cache" if under_a_file else a_file  # cannot be created / is not a directory

    def no_build(*args):
        raise AssertionError("the build started")

    monkeypatch.setattr(eg, "_build_chunk", no_build)
    with pytest.raises(ValueError, match="cannot write the endgame cache directory.*--no-endgame-cache") as info:
        build_endgame_database(2, 5, cache_dir=bad)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match="--no-endgame-cache"):
        solve_exact(KalahState.initial(3, 3), endgame_seeds=6, endgame_cache_dir=bad)


def test_the_build_in_chunks_equals_one_build_and_honours_a_deadline():
    import time

    one = build_endgame_database(3, 8, True)["values"]
    calls = []
    tiny = build_endgame_database(3, 8, True, chunk_positions=7, progress=lambda *a: calls.append(a))
    assert np.array_equal(tiny["values"], one)
    assert calls[-1][0] == calls[-1][1] == database_size(3, 8)  # the last call: everything done
    assert build_endgame_database(3, 8, True, deadline=time.perf_counter() - 1) is None
    with pytest.raises(ValueError, match="max_seeds"):
        build_endgame_database(3, -1)
    with pytest.raises(ValueError, match="houses"):
        build_endgame_database(True, 3)


def test_two_builders_of_one_database_do_not_collide(tmp_path, monkeypatch):
    import os
    import threading

    renamed = []
    real_replace = os.replace
    both_built = threading.Barrier(2, timeout=60)  # neither renames before the other has built: no load from cache

    def replace(src, dst):
        renamed.append(os.path.basename(src))
        both_built.wait()
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    out = []
    threads = [threading.Thread(target=lambda: out.append(build_endgame_database(3, 8, cache_dir=tmp_path,
                                                                               chunk_positions=500)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 2 and np.array_equal(out[0]["values"], out[1]["values"])
    assert len(renamed) == 4 and len(set(renamed)) == 4  # each builder its own temporary files
    assert build_endgame_database(3, 8, cache_dir=tmp_path)["loaded"]
    assert len(list(tmp_path.iterdir())) == 2  # values and record, no temporary left behind

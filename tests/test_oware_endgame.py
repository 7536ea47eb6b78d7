"""Oware endgame databases (:mod:`jitsearch.games.oware.endgame`) against a
plain reference: per-threshold attractors computed by whole-set (Kleene)
iteration over the explicit game graph, with moves made by the line-by-line
OpenSpiel transcription (:mod:`jitsearch.games.oware.naive`), not by the
compiled rules, and positions keyed by tuples, not by ranks."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jitsearch.cli.app import main
from jitsearch.games.oware import OwareState
from jitsearch.games.oware.endgame import (build_database, cache_path, database_size, estimate_build, layer_size,
                                           position_rank, position_unrank)
from jitsearch.games.oware.naive import NaiveOware
from jitsearch.games.oware.solver import solve


# -- the reference ---------------------------------------------------------------------------

def compositions(total, parts):
    """Every way to put ``total`` seeds in ``parts`` houses, in lexicographic order."""
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, out = -1, []
        for c in cut:
            out.append(c - prev - 1)
            prev = c
        out.append(total + parts - 2 - prev)
        yield tuple(out)


def moves(pos, m, slam):
    """(house, captured, child from the child's mover's view) of every legal move, by the naive rules."""
    g = NaiveOware(list(pos), player=0, grand_slam_illegal=slam)
    g.total = 10**9  # no end by the scores: the database game has none
    out = []
    for house in g.legal_houses():
        c = g.copy()
        last = c._distribute(house)
        cap = 0
        if c._in_opponent_row(last) and not c._is_grand_slam(last):
            cap = c._capture_from(last)
        out.append((house, cap, tuple(c.seeds[m:] + c.seeds[:m])))
    return out


def reference(m, max_seeds, slam=False):
    """{board: value in half-seeds} for every board of layers 0..max_seeds."""
    val = {}
    for s in range(max_seeds + 1):
        layer = list(compositions(s, 2 * m))
        exits, nc = {}, {}
        for p in layer:
            mv = moves(p, m, slam)
            if not mv:  # no legal move: each side collects its own seeds
                exits[p], nc[p] = 2 * sum(p[:m]), []
                continue
            caps = [2 * s - val[ch] for _, cap, ch in mv if cap > 0]
            exits[p] = max(caps) if caps else None
            nc[p] = [ch for _, cap, ch in mv if cap == 0]
        value = {}
        for t in range(2 * s, s, -1):  # the mover forces >= t (W) / is held to <= 2s - t (L), in finitely many moves
            u = 2 * s - t
            win, hold = set(), set()
            while True:
                w2 = {p for p in layer if (exits[p] is not None and exits[p] >= t) or any(q in hold for q in nc[p])}
                h2 = {p for p in layer if (exits[p] is None or exits[p] <= u) and all(q in win for q in nc[p])}
                if w2 == win and h2 == hold:
                    break
                win, hold = w2, h2
            assert not win & hold
            for p in win:
                value.setdefault(p, t)
            for p in hold:
                value.setdefault(p, u)
        for p in layer:
            val[p] = value.get(p, s)  # neither forces more than the even split: infinite play
    return val


# -- counts and ranking ----------------------------------------------------------------------

@pytest.mark.slow
def test_layer_counts():
    for m in range(1, 7):
        for s in range(0, 7 if m < 5 else 4):
            n = sum(1 for _ in compositions(s, 2 * m))
            assert layer_size(m, s) == n == math.comb(s + 2 * m - 1, 2 * m - 1)
    db = build_database(3, 5)
    assert db.values.size == database_size(3, 5) == sum(layer_size(3, s) for s in range(6)) == math.comb(11, 6)
    assert [db.layer(s).size for s in range(6)] == [math.comb(s + 5, 5) for s in range(6)]
    # the documented 6-house totals
    assert layer_size(6, 48) == 279_871_768_995 and database_size(6, 48) == math.comb(60, 12) == 1_399_358_844_975
    assert sum(layer_size(6, s) for s in range(49)) == database_size(6, 48)
    assert estimate_build(6, 12)["positions"] == math.comb(24, 12)


@pytest.mark.parametrize("m,s", [(1, 5), (2, 6), (3, 4), (6, 2)])
def test_rank_unrank_round_trip(m, s):
    for i, p in enumerate(compositions(s, 2 * m)):
        assert position_rank(p) == i
        assert tuple(position_unrank(m, s, i)) == p
    with pytest.raises(ValueError, match="index"):
        position_unrank(m, s, layer_size(m, s))


# -- values ----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("m,max_seeds,slam", [(1, 6, False), (2, 8, False), (2, 7, True), (3, 5, False),
                                              (3, 4, True), (4, 3, False), (6, 3, False)])
def test_values_equal_the_reference(m, max_seeds, slam):
    ref = reference(m, max_seeds, slam)
    db = build_database(m, max_seeds, grand_slam_illegal=slam)
    got = {p: db.value(np.array(p), 0) for p in ref}
    assert got == ref
    # the same position with player 1 to move (our layout: player 0's houses first)
    for p, v in list(ref.items())[::7]:
        assert db.value(np.array(p[m:] + p[:m]), 1) == v
    # not a trivial table: every kind of value occurs in the larger layers
    last = [ref[p] for p in compositions(max_seeds, 2 * m)]
    assert len(set(last)) >= 3 or m == 1  # Oware(1) never captures (every capture is a grand slam)


@pytest.mark.slow
def test_cycle_without_capture_is_an_even_split():
    # Oware(1): a sowing always ends on the one opposite house, a grand slam: no capture can ever happen.
    #     P1:  [1]
    #     P0:  [1]     p0 sows -> 0/2, p1 sows its 2 (two laps) -> 2/0, p0 sows -> 0/2 ... forever
    db = build_database(1, 4)
    assert db.value(np.array([1, 1]), 0) == 2 and db.value(np.array([2, 0]), 0) == 2
    assert db.value(np.array([0, 2]), 0) == 0  # the mover has nothing: the opponent collects
    # Oware(2) with 2 seeds: no house can reach 2 seeds on the opponent's side without a grand slam, so every
    # position where the mover can move shuttles one seed each way forever (or passes them round): S each.
    db2 = build_database(2, 2)
    for p in compositions(2, 4):
        v = db2.value(np.array(p), 0)
        assert v == (2 if sum(p[:2]) else 0), (p, v)
    # the exact solver (OpenSpiel's rules) ends the first cycle at its repetition instead: p1 collects both seeds
    r = solve(OwareState.from_text("1/1/0,0 p0"))
    assert (r.result, r.margin) == ("loss", -2)


def test_breaking_a_cycle_pays():
    #     P1:  [1] [1]        house B (index 1) sows into a: 2 seeds there, captured (house b keeps 1: no slam);
    #     P0:  [1] [1]        the two seeds left then shuttle for ever (layer 2 of Oware(2): 1 seed each).
    # 2 captured + 1 of the 2 left = 3 seeds = 6 half-seeds; house A (no capture) only gets the even split, 4.
    db = build_database(2, 4)
    assert db.value(np.array([1, 1, 1, 1]), 0) == 6
    after_a = np.array([0, 2, 1, 1])  # house A sown: the opponent to move
    assert db.value(after_a, 1) == 4
    assert [m for m in moves((1, 1, 1, 1), 2, False) if m[1]] == [(1, 2, (0, 1, 1, 0))]


def _acyclic_from(p, m):
    """Whether no cycle (necessarily of non-capturing moves) can be reached from ``p``."""
    state = {}

    def dfs(q):
        if state.get(q) == 1:
            return False
        if state.get(q) == 2:
            return True
        state[q] = 1
        for _, _, ch in moves(q, m, False):
            if not dfs(ch):
                return False
        state[q] = 2
        return True

    return dfs(p)


@pytest.mark.parametrize("m,s", [(2, 4), (2, 6), (3, 2), (3, 4), (4, 4)])
def test_result_equals_the_exact_solver_where_no_line_repeats(m, s):
    # Even totals from 0-0: the score ending then decides nothing the database's value does not (docs/oware.md).
    db = build_database(m, s)
    checked = 0
    for p in compositions(s, 2 * m):
        if not moves(p, m, False) or not _acyclic_from(p, m):
            continue
        v = db.value(np.array(p), 0)
        want = "win" if v > s else "draw" if v == s else "loss"
        state = OwareState.from_board(list(p) + [0, 0], 0)
        assert solve(state).result == want, p
        checked += 1
    assert checked >= 2


# -- input, memory, cache --------------------------------------------------------------------

def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="houses"):
        build_database(0, 3)
    with pytest.raises(ValueError, match="max_seeds"):
        build_database(2, 128)
    with pytest.raises(ValueError, match="grand_slam_illegal"):
        build_database(2, 3, grand_slam_illegal="yes")
    with pytest.raises(ValueError, match="endgame-seeds"):  # checked before anything is allocated
        build_database(6, 40, max_bytes=1 << 30)
    db = build_database(2, 3)
    with pytest.raises(ValueError, match="above the database"):
        db.value(np.array([2, 2, 0, 0]), 0)
    with pytest.raises(ValueError, match="grand slam"):
        db.value_of(OwareState.from_text("1,1/1,0/0,0 p0", grand_slam_illegal=True))


def test_cache_round_trip(tmp_path):
    plain = build_database(3, 4).values
    built = build_database(3, 4, cache_dir=tmp_path)
    assert not built.loaded and built.path == str(cache_path(tmp_path, 3, 4, False))
    again = build_database(3, 4, cache_dir=tmp_path)
    assert again.loaded and np.array_equal(again.values, built.values)
    assert np.array_equal(again.values, plain)
    record = json.loads(cache_path(tmp_path, 3, 4, False).with_suffix(".json").read_text())
    assert record["game"] == "oware-endgame" and record["shape"] == [math.comb(10, 6)]
    with open(built.path, "r+b") as fh:  # damage one value byte: rebuilt, with a warning
        fh.seek(-1, 2)
        byte = fh.read(1)
        fh.seek(-1, 2)
        fh.write(bytes([byte[0] ^ 1]))
    with pytest.warns(UserWarning, match="checksum"):
        fixed = build_database(3, 4, cache_dir=tmp_path)
    assert not fixed.loaded and np.array_equal(fixed.values, plain)


# -- CLI -------------------------------------------------------------------------------------

def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_solve_oware_with_database(capsys, tmp_path):
    code, out, err = run(capsys, "solve", "--game", "oware", "--position", "1,1/1,1/0,0 p0", "--endgame-seeds", "4",
                         "--endgame-cache-dir", str(tmp_path), "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert set(obj) == {"game", "houses", "position", "player_to_move", "complete", "seconds", "compile_seconds",
                        "result", "margin", "best_move", "depth", "nodes", "endgame_seeds", "seeds_on_board",
                        "endgame_value", "endgame_result", "endgame_path", "endgame_loaded"}
    assert obj["result"] == "win" and obj["endgame_value"] == 6 and obj["endgame_result"] == "win"
    assert obj["complete"] is True and obj["endgame_loaded"] is False and "layer 4 of 4" in err
    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "2", "--seeds", "2", "--endgame-seeds", "4",
                         "--endgame-cache-dir", str(tmp_path), "--json")
    obj = json.loads(out)
    assert code == 0 and obj["endgame_loaded"] is True and obj["endgame_value"] is None
    assert obj["seeds_on_board"] == 8 and obj["result"] == solve(OwareState.initial(2, 2)).result


def test_cli_solve_oware_time_limit(capsys):
    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "6", "--seeds", "4", "--time-limit", "0.5",
                         "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["complete"] is False and "result" not in obj


@pytest.mark.parametrize("args,words", [
    (["--table-size", "64"], "--table-size applies to --game kalah only"),
    (["--empty-capture"], "--empty-capture applies to --game kalah only"),
    (["--all-moves"], "--all-moves applies to --game connect4 or kalah only"),
    (["--position", "1,1/1,1/0,0 p7"], "p0, p1 or end"),
    (["--houses", "0"], "houses"),
    (["--endgame-seeds", "200"], "--endgame-seeds must be an integer in 0..127"),
    (["--endgame-seeds", "30", "--max-memory", "1MiB"], "--max-memory"),
    (["--branching", "3"], "does not apply to --game oware"),
])
def test_cli_solve_oware_errors(capsys, args, words):
    code, out, err = run(capsys, "solve", "--game", "oware", *args)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
def test_ctrl_c_stops_an_oware_database_build(tmp_path):
    """Ctrl-C in the middle of a cached build: exit 130, one line that says
    nothing was written, and nothing left in the cache directory (the build
    runs in a worker thread that the command does not wait for)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "jitsearch", "solve", "--game", "oware", "--endgame-seeds", "17",
                             "--endgame-cache-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    err = ""
    start = time.monotonic()
    while "positions" not in err and time.monotonic() - start < 60:
        line = proc.stderr.readline()
        if not line:
            break
        err += line
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    try:
        _, rest = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert proc.returncode == 130, err + rest
    assert "interrupted" in rest and "Traceback" not in rest
    assert list(tmp_path.iterdir()) == []
    assert "nothing of it was written" in rest


@pytest.mark.parametrize("where", ["build", "save"])
def test_an_oware_build_stopped_by_ctrl_c_leaves_no_temporary(tmp_path, monkeypatch, where):
    """Ctrl-C during the build or while the finished values are hashed and
    saved: nothing is left in the cache directory."""
    import jitsearch.games.kalah.endgame_files as ef
    import jitsearch.games.oware.endgame as oe

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    kwargs = {}
    if where == "build":
        kwargs["progress"] = stop
    else:  # where the old code called it, and where it is called now
        monkeypatch.setattr(oe, "complete_record", stop, raising=False)
        monkeypatch.setattr(ef, "complete_record", stop)
    with pytest.raises(KeyboardInterrupt):
        build_database(3, 6, cache_dir=tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_a_killed_oware_builders_temporary_goes_at_the_next_build(tmp_path):
    from test_endgame_scaling import _builder_process

    path = cache_path(tmp_path, 2, 4, False)
    size = database_size(2, 4)
    proc, tmp = _builder_process(path, size, (size,), "uint8")
    proc.kill()
    proc.wait()
    assert tmp.exists()
    build_database(2, 4, cache_dir=tmp_path)  # at once
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, path.with_suffix(".json").name])


def test_an_abandoned_oware_build_leaves_nothing(tmp_path):
    """What a stopped command does: its build, left running in a worker
    thread, loses its file at once (:func:`discard_temporaries`, also run at
    exit), and when it ends it saves nothing."""
    import threading
    import warnings

    from jitsearch.games.kalah.endgame_files import discard_temporaries

    go_on, reached = threading.Event(), threading.Event()

    def progress(seeds, done, total, seconds):
        if seeds == 3:
            reached.set()
            go_on.wait(10)

    box = {}

    def build():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            box["db"] = build_database(3, 6, cache_dir=tmp_path, progress=progress)
        box["warnings"] = [str(w.message) for w in caught]

    worker = threading.Thread(target=build, daemon=True)
    worker.start()
    assert reached.wait(30)
    assert [p.name.endswith(".npy.tmp") for p in tmp_path.iterdir()] == [True]
    assert len(discard_temporaries()) == 1 and list(tmp_path.iterdir()) == []
    go_on.set()
    worker.join(30)
    assert box["db"].path is None and any("not cached" in w for w in box["warnings"])
    assert list(tmp_path.iterdir()) == []


def test_an_oware_build_announces_its_size_and_time(capsys, tmp_path):
    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "2", "--seeds", "2", "--endgame-seeds", "6",
                         "--endgame-cache-dir", str(tmp_path), "--json")
    assert code == 0, err
    line = next(x for x in err.splitlines() if "on disk" in x)
    for words in ("<= 6 seeds on the board", f"{database_size(2, 6):,} positions", "of memory to build",
                  "s on 1 thread", str(tmp_path)):
        assert words in line, line
    est = estimate_build(6, 20)
    assert est["threads"] == 1 and 60 < est["seconds"] < 600  # about 2-3 min measured, on 2 idle cores
    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "2", "--seeds", "2", "--endgame-seeds", "6",
                         "--endgame-cache-dir", str(tmp_path), "--json")
    assert code == 0 and "on disk" not in err  # loaded: nothing to announce


def test_a_long_oware_solve_says_it_is_alive(capsys, monkeypatch):
    """A deepening may take minutes: a line on stderr every few seconds
    says which depth runs and how to bound the solve, in --json mode too."""
    import jitsearch.games.oware.exact as oware_exact

    monkeypatch.setattr(oware_exact, "FIRST_HEARTBEAT_SECONDS", 0.05)
    monkeypatch.setattr(oware_exact, "HEARTBEAT_SECONDS", 0.05)
    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "6", "--seeds", "4", "--time-limit", "0.5",
                         "--json")
    assert code == 0 and json.loads(out)["complete"] is False
    assert "exact solve: searching depth" in err and "at most 0.5 s" in err


def test_ctrl_c_of_an_oware_solve_says_what_is_kept(capsys, monkeypatch, tmp_path):
    import jitsearch.games.oware.exact as oware_exact

    def interrupted(*args, **kwargs):  # Ctrl-C while the exact solve runs
        raise KeyboardInterrupt

    monkeypatch.setattr(oware_exact, "_solve_with_limit", interrupted)
    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "2", "--seeds", "2", "--endgame-seeds", "4",
                         "--endgame-cache-dir", str(tmp_path), "--json")
    assert code == 130 and json.loads(out)["complete"] is False
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted: the exact solve was stopped") and "run again" not in last
    assert "nothing of it is kept" in last and str(tmp_path) in last and "--time-limit" in last


# -- alpha-beta probing the database ---------------------------------------------------------

def test_alphabeta_probes_the_database():
    from jitsearch.games.oware.alphabeta import WIN, search

    m, s = 3, 5
    db = build_database(m, s)
    checked = 0
    for p in compositions(s, 2 * m):
        if not moves(p, m, False):
            continue
        state = OwareState.from_board(list(p) + [0, 0], 0)
        if any(state.play(h).is_over for h in state.legal_moves()):
            continue  # a child that OpenSpiel's rules end (by the scores) is scored by them, not the database
        margin = db.value(np.array(p), 0) - s  # the mover's final seeds minus the opponent's, database rule
        want = 0.0 if margin == 0 else math.copysign(WIN, margin) + margin
        assert search(state, 1, endgame=db).value == want, p
        assert search(state, 3, endgame=db).value == want, p  # every child is already a database leaf
        checked += 1
    assert checked > 50
    with pytest.raises(ValueError, match="endgame database is for 3 houses"):
        search(OwareState.initial(2, 1), 1, endgame=db)


def test_alphabeta_agent_db_option():
    from jitsearch.arena.agents import parse_agent

    agent = parse_agent("alphabeta:depth=2,db=6", game="oware", seed=1)
    state = OwareState.from_text("0,0,0,0,1,2/1,0,0,0,0,1/20,21 p0")
    assert agent(state) in state.legal_moves()
    value = agent.last["value"]  # every child holds <= 6 seeds: a database leaf, a final result
    assert value == 0 or abs(value) >= 1000
    with pytest.raises(ValueError, match="db"):
        parse_agent("alphabeta:db=0", game="oware")
    with pytest.raises(ValueError, match="lower db="):
        parse_agent("alphabeta:db=40", game="oware")


# the same kernel for both rules: the second rule in the slow step
@pytest.mark.parametrize("slam", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_unmoves_invert_the_non_capturing_moves(slam):
    # Oware(6) with 14 seeds, some positions with a house of 11+ seeds (a sowing that laps the board)
    import random

    from jitsearch.games.kalah.endgame import binomial_table
    from jitsearch.games.oware.endgame import _unmoves

    m, s = 6, 14
    k = 2 * m
    binom = binomial_table(s + k, k)
    scratch = [np.zeros(k + 2, np.int32) for _ in range(3)]
    out = np.empty(m * (s + 1), np.int64)
    rng = random.Random(5)

    def unmoves(x):
        n = _unmoves(np.array(x, np.int64), m, s, slam, binom, *scratch, out)
        return {tuple(position_unrank(m, s, int(r))) for r in out[:n]}

    laps = checked = 0
    for i in range(400):
        p = [0] * k
        if i % 3 == 0:
            p[rng.randrange(m)] = 11 + rng.randrange(4)
        while sum(p) < s:
            p[rng.randrange(k)] += 1
        p = tuple(p)
        for house, cap, child in moves(p, m, slam):
            if cap:
                continue
            assert p in unmoves(child), (p, house)
            for q in unmoves(child):  # and nothing else: each one reaches the child without a capture
                assert (child, 0) in {(ch, c) for _, c, ch in moves(q, m, slam)}, (q, child)
            laps += p[house] >= k - 1
            checked += 1
    assert checked > 300 and laps > 20


def test_solver_reports_each_deepening_that_did_not_close_the_search():
    seen = []
    r = solve(OwareState.initial(2, 3), progress=lambda depth, nodes, seconds: seen.append((depth, nodes)))
    assert r.result == "draw" and r.depth == 128
    assert [d for d, _ in seen] == [8, 16, 32, 64]  # every depth before the one that closed it
    assert all(a[1] < b[1] for a, b in zip(seen, seen[1:])) and seen[-1][1] < r.nodes


def test_an_oware_solve_past_its_time_limit_prints_nothing_more_and_stops(capsys):
    """The worker of a time-limited solve is stopped when the time is up and says nothing more (it went on
    searching, and printed into the next command's output)."""
    import threading

    code, out, err = run(capsys, "solve", "--game", "oware", "--houses", "6", "--seeds", "4", "--time-limit", "0.3",
                         "--json")
    assert code == 0 and json.loads(out)["complete"] is False
    deadline = time.monotonic() + 10
    while any(t.name == "jitsearch-oware-solve" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(t.name == "jitsearch-oware-solve" for t in threading.enumerate())
    assert capsys.readouterr().err == ""


def test_an_oware_solve_stops_when_asked():
    import threading

    from jitsearch.games.oware.solver import solve

    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    t0 = time.perf_counter()
    assert solve(OwareState.initial(6, 4), stop=stop) is None
    assert time.perf_counter() - t0 < 5
    assert solve(OwareState.initial(2, 2), stop=threading.Event()).result == solve(OwareState.initial(2, 2)).result

"""The board-vector (SIMD) playouts give the scalar kernels' results, bit
for bit, and the scalar kernels run when the vector ones are turned off.

The vector kernels need AVX2 and BMI2: on a CPU without them the tests of
the kernels themselves are skipped and the fallback tests still run.
"""

from __future__ import annotations

import numpy as np
import pytest

from jitsearch.benchmarks import c_reference
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah import rules as kalah_rules
from jitsearch.games.kalah import simd_rules
from jitsearch import rng
from jitsearch.games.kalah import playouts
from jitsearch.games.kalah.playouts import SIMD_ENV, cpu_kernels, cpu_playout_kind, evaluate_cpu, simd_enabled

from test_fast_rules import plain_playout, random_live_positions

needs_simd = pytest.mark.skipif(not simd_rules.host_has_simd(), reason="the CPU lacks AVX2 or BMI2")
KEYS = ("wins", "draws", "losses", "margin_sum", "plies")


def _run(range_fn, boards, players, m, empty_capture, per_state, seed):
    k = boards.shape[0]
    out = [np.zeros(k, dtype=np.int64) for _ in KEYS]
    for o in out:
        o[:] = -7  # the kernel must overwrite every counter
    range_fn(boards, players, m, empty_capture, per_state, np.uint64(seed), 0, k, *out)
    return [o.tolist() for o in out]


@needs_simd
@pytest.mark.parametrize("m", range(1, simd_rules.MAX_SIMD_HOUSES + 1))
@pytest.mark.slow
def test_simd_playouts_equal_the_generic_ones(m):
    """Every m the vectors take, both rule sets, small and lapping houses,
    several playouts per state (an odd count, so the two games in lock step
    take turns across states): the generic kernel's per-state results."""
    r = np.random.default_rng(31 + m)
    simd = cpu_kernels(m, "simd")[0]  # the shipped kernel (make_simd_evaluate), compiled once per m
    for houses, empty_capture in ((1, False), (4, True), (4, False), (30, True),
                                  (min(100, 1000 // (2 * m)), False)):
        boards, players = random_live_positions(r, m, houses, 9, empty_capture)
        for per_state in (1, 5):
            args = (boards, players, m, empty_capture, per_state, 2**64 - 1 - m)
            assert _run(simd, *args) == _run(playouts.evaluate_range, *args), (m, houses, empty_capture, per_state)


@needs_simd
@pytest.mark.slow
def test_simd_range_and_single_state():
    """A sub-range of the states (others untouched), and one state with one playout."""
    m = 6
    simd = cpu_kernels(m, "simd")[0]  # the shipped kernel (make_simd_evaluate), compiled once per m
    boards, players = random_live_positions(np.random.default_rng(2), m, 4, 7, False)
    out = [np.full(7, -3, dtype=np.int64) for _ in KEYS]
    want = [np.full(7, -3, dtype=np.int64) for _ in KEYS]
    simd(boards, players, m, False, 3, np.uint64(5), 2, 5, *out)
    playouts.evaluate_range(boards, players, m, False, 3, np.uint64(5), 2, 5, *want)
    assert [o.tolist() for o in out] == [w.tolist() for w in want]
    assert all((o[:2] == -3).all() and (o[5:] == -3).all() for o in out)
    assert _run(simd, boards[:1], players[:1], m, True, 1, 0) == _run(playouts.evaluate_range, boards[:1],
                                                                       players[:1], m, True, 1, 0)


@needs_simd
@pytest.mark.parametrize("m", [pytest.param(2, marks=pytest.mark.slow), 6, pytest.param(7, marks=pytest.mark.slow)])
def test_simd_margin_equals_a_plain_playout(m):
    """The single-game playout MCTS uses: the plain-Python playout's margin and plies."""
    words, margin = playouts.make_simd_margin(playouts.njit, m, playouts.INLINE_RNG)
    for empty_capture in (False, True):
        boards, players = random_live_positions(np.random.default_rng(m), m, 20, 6, empty_capture)
        w = np.zeros(words, dtype=np.uint64)
        for s in range(boards.shape[0]):
            key = rng.stream_key_py(9, s, 0)
            end, plies = plain_playout(boards[s].tolist(), m, int(players[s]), empty_capture, key)
            got = margin(w, boards[s], np.int64(players[s]), empty_capture, np.uint64(key))
            assert (int(got[0]), int(got[1])) == (end[m + 1] - end[0], plies)


@needs_simd
def test_simd_tables():
    t = simd_rules.simd_tables(6)
    n, lap = 14, 13
    inc = t.inc.reshape(2, n, lap, 16)
    # sowing r < lap seeds adds exactly r, never on the opponent's store, nothing past the board
    for player, opp_store in ((0, 0), (1, 7)):
        for pit in range(n):
            for r in range(lap):
                if t.own_house[player * n + pit]:
                    assert inc[player, pit, r].sum() == r and inc[player, pit, r, opp_store] == 0
                    assert not inc[player, pit, r, n:].any()
    with pytest.raises(ValueError, match="1..7 houses"):
        simd_rules.simd_tables(8)


def test_fallback_when_forced(monkeypatch):
    """JITSEARCH_SIMD=0: the scalar kernels are chosen, with the same results."""
    boards, players = random_live_positions(np.random.default_rng(8), 6, 4, 10, True)
    default = evaluate_cpu(boards, players, 4, 77, empty_capture=True)
    monkeypatch.setenv(SIMD_ENV, "0")
    assert not simd_enabled()
    assert cpu_playout_kind(6) == "packed" and cpu_playout_kind(3) == "generic" and cpu_playout_kind(8) == "generic"
    assert cpu_kernels(3)[0] is playouts.evaluate_range
    forced = evaluate_cpu(boards, players, 4, 77, empty_capture=True)
    assert all(np.array_equal(default[k], forced[k]) for k in KEYS)
    monkeypatch.setenv(SIMD_ENV, "1")
    assert cpu_playout_kind(6) == ("simd" if simd_rules.host_has_simd() else "packed")
    assert cpu_playout_kind(8) == "generic"  # 18 pits do not fit 16 lanes
    monkeypatch.setenv(SIMD_ENV, "yes")
    with pytest.raises(ValueError, match="JITSEARCH_SIMD must be 0"):
        evaluate_cpu(boards, players, 1, 0)


def test_fallback_without_the_instructions(monkeypatch):
    """A CPU without AVX2/BMI2 gets the scalar kernels whatever the variable says."""
    from numba.core import config

    from jitsearch.games.kalah import _simd

    monkeypatch.delenv(SIMD_ENV, raising=False)
    monkeypatch.setattr(config, "CPU_FEATURES", "+sse2,+avx,+avx2,-bmi2")  # as $NUMBA_CPU_FEATURES would
    assert _simd.host_features() >= {"sse2", "avx2"} and "bmi2" not in _simd.host_features()
    assert not simd_enabled() and cpu_playout_kind(6) == "packed"
    monkeypatch.setattr(config, "CPU_FEATURES", "+avx2,+bmi2")
    assert simd_enabled() and cpu_playout_kind(6) == "simd"
    monkeypatch.setattr(config, "CPU_FEATURES", None)
    monkeypatch.setattr(simd_rules, "host_has_simd", lambda: False)
    assert not simd_enabled() and cpu_playout_kind(5) == "packed" and cpu_playout_kind(2) == "generic"


@needs_simd
def test_default_kind_and_mcts_kernel(monkeypatch):
    from jitsearch.games import get as get_game
    from jitsearch.mcts import tree as T

    monkeypatch.delenv(SIMD_ENV, raising=False)
    assert [cpu_playout_kind(m) for m in (1, 4, 7, 8)] == ["simd", "simd", "simd", "generic"]
    kalah = get_game("kalah")
    generic = T.kernels(kalah).iterate
    simd_mcts = T.kernels(kalah, (3, False)).iterate
    assert simd_mcts is not generic and T.kernels(kalah, (3, False)).iterate is simd_mcts
    monkeypatch.setenv(SIMD_ENV, "0")
    assert T.kernels(kalah, (3, False)).iterate is generic and T.kernels(kalah, (6, False)).iterate is not simd_mcts


@needs_simd
@pytest.mark.skipif(c_reference.unavailable_reason() is not None, reason=str(c_reference.unavailable_reason()))
@pytest.mark.parametrize("m, houses", [(2, 5), (4, 4), (5, 12)])
@pytest.mark.parametrize("empty_capture", [False, True])
@pytest.mark.slow
def test_simd_equals_the_c_reference(m, houses, empty_capture):
    """SIMD == scalar == both C variants (the tuned C is the design the vector kernel follows)."""
    boards, players = random_live_positions(np.random.default_rng(100 * m + houses), m, houses, 12, empty_capture)
    assert cpu_playout_kind(m) == "simd"
    simd = evaluate_cpu(boards, players, 6, 123, empty_capture=empty_capture)
    scalar = _run(playouts.evaluate_range, boards, players, m, empty_capture, 6, 123)
    assert [simd[k].tolist() for k in KEYS] == scalar
    for variant in c_reference.VARIANTS:
        res = c_reference.run_playouts(variant, boards, players, 6, [123], empty_capture=empty_capture)[0]
        assert all(np.array_equal(res[k], simd[k]) for k in KEYS), variant


def test_simd_is_not_used_past_the_lanes():
    assert simd_rules.MAX_SIMD_HOUSES == 7 <= kalah_rules.MAX_PACKED_HOUSES
    start = KalahState.initial(8, 3).board
    out = evaluate_cpu(start, 0, 2, 1)
    assert out["plies"][0] > 0


@pytest.mark.slow
def test_kernel_argument(monkeypatch):
    """``evaluate_cpu(kernel=...)``: every available kernel gives the same results; others are refused."""
    boards, players = random_live_positions(np.random.default_rng(4), 5, 6, 5, False)
    runs = {kind: evaluate_cpu(boards, players, 3, 9, kernel=kind) for kind in playouts.available_kinds(5)}
    assert {"packed", "generic"} <= set(runs)
    first = next(iter(runs.values()))
    assert all(all(np.array_equal(r[k], first[k]) for k in KEYS) for r in runs.values())
    with pytest.raises(ValueError, match="kernel must be one of"):
        evaluate_cpu(boards, players, 1, 0, kernel="fast")
    big = KalahState.initial(8, 2).board
    with pytest.raises(ValueError, match="for 8 houses"):
        evaluate_cpu(big, 0, 1, 0, kernel="packed")
    monkeypatch.setenv(SIMD_ENV, "0")
    with pytest.raises(ValueError, match="for 5 houses on this CPU"):
        evaluate_cpu(boards, players, 1, 0, kernel="simd")


@needs_simd
def test_playouts_bench_times_the_scalar_kernel_too(monkeypatch):
    from jitsearch.benchmarks.playouts_bench import measure_playouts

    monkeypatch.delenv(SIMD_ENV, raising=False)
    r = measure_playouts("cpu", 6, 4, 8, 4, 2, c_reference=False)
    assert (r["kernel"], r["scalar_kernel"], r["scalar_identical"]) == ("simd", "packed", True)
    assert len(r["runs_scalar_playouts_per_second"]) == 2 and r["ratio_to_scalar"] > 0
    monkeypatch.setenv(SIMD_ENV, "0")
    r = measure_playouts("cpu", 3, 4, 8, 4, 1, c_reference=False)
    assert (r["kernel"], r["scalar_kernel"], r["ratio_to_scalar"]) == ("generic", None, None)


@needs_simd
@pytest.mark.slow
def test_simd_on_threads_equals_one_thread():
    boards, players = random_live_positions(np.random.default_rng(6), 7, 5, 13, True)
    one = evaluate_cpu(boards, players, 7, 21, empty_capture=True)
    two = evaluate_cpu(boards, players, 7, 21, empty_capture=True, threads=2)
    generic = evaluate_cpu(boards, players, 7, 21, empty_capture=True, kernel="generic")
    assert all(np.array_equal(one[k], two[k]) and np.array_equal(one[k], generic[k]) for k in KEYS)


@needs_simd
def test_vector_intrinsics_against_numpy():
    from numba import njit

    from jitsearch.games.kalah import _simd as V

    @njit
    def ops(a, b, x, lane):
        va = V.vload(a, 0)
        vb = V.vload(b, 3)
        out = np.zeros(5 * 16, dtype=np.int16)
        V.vstore(out, 0, V.vadd(va, vb))
        V.vstore(out, 16, V.vand(va, vb))
        V.vstore(out, 32, V.vor(va, V.vsplat(x)))
        V.vstore(out, 48, V.vmul(va, vb))
        V.vstore(out, 64, V.vset(V.vzero(), lane, x))
        return out, V.vget(va, lane), V.vmask_positive(va), V.popcount(x), V.lowest_bit(x), V.pdep(x, 0xF0F0)

    r = np.random.default_rng(0)
    a = r.integers(-300, 300, 16).astype(np.int16)
    b = r.integers(-300, 300, 19).astype(np.int16)
    out, got, mask, pop, low, dep = ops(a, b, 0b1011000, 5)
    with np.errstate(over="ignore"):
        want = np.concatenate([a + b[3:], a & b[3:], a | np.int16(0b1011000), a * b[3:],
                               np.eye(16, dtype=np.int16)[5] * 0b1011000])
    assert out.tolist() == want.tolist()
    assert got == a[5] and mask == sum(1 << i for i in range(16) if a[i] > 0)
    assert (pop, low) == (3, 3)
    # pdep: bit i of x goes to the i-th set bit of the mask 0xF0F0 (bits 4-7, 12-15)
    assert dep == sum(1 << p for i, p in enumerate([4, 5, 6, 7, 12, 13, 14, 15]) if 0b1011000 >> i & 1)


@pytest.mark.slow
@needs_simd
@pytest.mark.parametrize("m", [1, pytest.param(4, marks=pytest.mark.slow), 6, pytest.param(7, marks=pytest.mark.slow)])
def test_simd_cut_playout_leaves_the_generic_board(m):
    """``make_simd_playout``: the generic playout's plies, end player and board
    (swept at the end of the game, as it stands when the ply cap cuts it)."""
    from jitsearch.games import get as get_game
    from jitsearch.games.playout import make_playout

    simd = playouts.make_simd_playout(playouts.njit, m, playouts.INLINE_RNG)
    generic = make_playout(playouts.njit, get_game("kalah").build(playouts.njit), playouts.CPU_RNG)
    hist = np.zeros((1, 1), np.int32)
    moves = np.zeros(m, dtype=np.int64)
    for empty_capture in (False, True):
        boards, players = random_live_positions(np.random.default_rng(50 + m), m, 6, 8, empty_capture)
        for s in range(boards.shape[0]):
            for cap in (0, 1, 3, 8, playouts.NO_PLY_CAP):
                key = np.uint64(playouts.CPU_RNG.stream_key(np.uint64(4), s, cap))
                a, b = boards[s].copy(), boards[s].copy()
                got = simd(a, m, players[s], empty_capture, key, cap, moves)
                want = generic(b, (m, empty_capture), np.int64(players[s]), moves, hist, (0, 0, 0), key, cap)[:2]
                assert got == want and a.tolist() == b.tolist(), (s, cap)


@needs_simd
@pytest.mark.slow
def test_simd_mcts_kernel_with_evaluations_grows_the_generic_tree(monkeypatch):
    """Cut playouts scored by the store evaluation, HMCTS: the same trees as the generic kernel."""
    from jitsearch.games import get as get_game
    from jitsearch.mcts import tree as T
    from jitsearch.mcts.config import MCTSConfig

    monkeypatch.delenv(SIMD_ENV, raising=False)
    s = KalahState.initial(6, 4, empty_capture=True)
    for options in ({"eval": "store", "eval_plies": 4, "imm": 0.3}, {"reward": "heuristic"}, {"playout_depth": 6}):
        trees = []
        kalah = get_game("kalah")
        fast, generic = T.kernels(kalah, (6, True)).iterate, T.kernels(kalah).iterate
        for kernel in (fast, generic):
            t = T.MCTSTree(600 * 6 + 1, 14)
            t.set_root(s.board, s.player)
            cfg = MCTSConfig(playouts=2, **options)
            cfg.validate()
            assert kernel(*t.arrays(), (6, True), cfg.params(), np.uint64(3), 0, 600, np.zeros((1, 1), np.int32),
                          (0, 0, 0), 6) == 600
            trees.append(t)
        assert fast is not generic
        assert all(np.array_equal(x, y) for x, y in zip(trees[0].arrays(), trees[1].arrays())), options

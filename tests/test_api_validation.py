"""Hostile arguments at the Kalah / MCTS / playout API boundary (issue 11).

One class per defect: every public function refuses bad arguments with a
one-line ``ValueError`` (never a TypeError, AttributeError or a Numba
error); a state's board is read-only; limits on work and memory are refused
fast, before anything big is allocated; agent specs with conflicting,
duplicated or out-of-range options are refused with the spec named."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

from jitsearch.benchmarks.mcts_bench import run_mcts_bench
from jitsearch.benchmarks.playouts_bench import measure_playouts
from jitsearch.arena.agents import Agent, parse_agent, play_game
from jitsearch.games.kalah import MAX_SEEDS, KalahState
from jitsearch.kernels.backend import evaluate, evaluator, resolve
from jitsearch.games.kalah.playouts import evaluate_cpu
from jitsearch.mcts import tree as T
from jitsearch.mcts.config import MCTSConfig
from jitsearch.mcts.search import choose_final_move, mcts_search, monte_carlo_search, worker_seed

S = KalahState.initial(3, 2)
RANDOM = [Agent("random", seed=1), Agent("random", seed=2)]
CHILD = {"move": 1, "visits": 1.0, "value": 0.5, "proven": None}


def _raises_one_line_value_error(fn, words):
    with pytest.raises(ValueError) as info:
        fn()
    message = str(info.value)
    assert "\n" not in message and words in message, message
    return message


# -- bad arguments -> one ValueError line ------------------------------------------------

BAD_CALLS = [
    # KalahState constructors and methods
    ("from_text None", lambda: KalahState.from_text(None), "position must be a string"),
    ("from_text bytes", lambda: KalahState.from_text(b"1,1/0/1,1/0 p0"), "position must be a string"),
    ("from_text huge", lambda: KalahState.from_text("1," * 5000 + "1/0/1/0 p0"), "at most 4096 characters"),
    ("from_text seeds_total str", lambda: KalahState.from_text("2,2/0/2,2/0 p0", seeds_total="8"), "seeds_total"),
    ("from_board str", lambda: KalahState.from_board("0,1,1,0,1,1", 0), "board must be a list"),
    ("from_board None", lambda: KalahState.from_board(None, 0), "2m+2"),
    ("from_board float", lambda: KalahState.from_board([0, 1.5, 1, 0, 1, 1], 0), "integers"),
    ("from_board inf", lambda: KalahState.from_board([0, float("inf"), 1, 0, 1, 1], 0), "integers"),
    ("from_board 2**70", lambda: KalahState.from_board([0, 2**70, 1, 0, 1, 1], 0), "integers"),
    ("from_board uint64 big", lambda: KalahState.from_board(np.array([0, 2**63, 1, 0, 1, 1], np.uint64), 0),
     "0..1000"),
    ("from_board bool board", lambda: KalahState.from_board(np.ones(6, dtype=bool), 0), "integers"),
    ("from_board player float", lambda: KalahState.from_board([0, 1, 1, 0, 1, 1], 0.0), "player to move"),
    ("from_board player bool", lambda: KalahState.from_board([0, 1, 1, 0, 1, 1], True), "player to move"),
    ("from_board player 2", lambda: KalahState.from_board([0, 1, 1, 0, 1, 1], 2), "player to move"),
    ("from_board empty_capture str", lambda: KalahState.from_board([0, 1, 1, 0, 1, 1], 0, empty_capture="yes"),
     "empty_capture"),
    ("initial houses float", lambda: KalahState.initial(6.0, 4), "houses"),
    ("initial seeds bool", lambda: KalahState.initial(6, True), "seeds"),
    ("initial empty_capture 2", lambda: KalahState.initial(6, 4, empty_capture=2), "empty_capture"),
    ("direct list board", lambda: KalahState([0, 1, 1, 0, 1, 1], 0, 2), "NumPy array"),
    ("direct wrong length", lambda: KalahState(np.zeros(5, np.int32), 0, 2), "2m+2"),
    ("direct wrong player", lambda: KalahState(np.array([0, 1, 1, 0, 1, 1]), -1, 2), "player must be -1"),
    ("direct seeds_total", lambda: KalahState(np.array([0, 1, 1, 0, 1, 1]), 0, 2, False, 7), "expected"),
    ("play str", lambda: S.play("1"), "pit index"),
    ("houses_of 2", lambda: S.houses_of(2), "player"),
    ("house_number str", lambda: S.house_number_to_pit("1"), "house number"),
    ("house_number 0", lambda: S.house_number_to_pit(0), "house number"),
    # MCTS
    ("mcts seed -1", lambda: mcts_search(S, seed=-1), "seed"),
    ("mcts seed 2**70", lambda: mcts_search(S, seed=2**70), "seed"),
    ("mcts seed float", lambda: mcts_search(S, seed=1.0), "seed"),
    ("mcts iterations str", lambda: mcts_search(S, iterations="10"), "iterations"),
    ("mcts iterations 1.5", lambda: mcts_search(S, iterations=1.5), "iterations"),
    ("mcts iterations bool", lambda: mcts_search(S, iterations=True), "iterations"),
    ("mcts c str", lambda: mcts_search(S, c="1"), "c must be a number"),
    ("mcts c nan", lambda: mcts_search(S, c=float("nan")), "c must be a finite number"),
    ("mcts pb inf", lambda: mcts_search(S, pb=float("inf")), "pb"),
    ("mcts workers 2.5", lambda: mcts_search(S, workers=2.5), "workers"),
    ("mcts time 0", lambda: mcts_search(S, time=0), "time"),
    ("mcts time str", lambda: mcts_search(S, time="1"), "time"),
    ("mcts formula", lambda: mcts_search(S, formula=1), "formula"),
    ("mcts reward", lambda: mcts_search(S, reward="lose"), "reward"),
    ("mcts final", lambda: mcts_search(S, final=None), "final"),
    ("mcts solver -5", lambda: mcts_search(S, solver=-5), "solver"),
    ("mcts solver str", lambda: mcts_search(S, solver="yes"), "solver"),
    ("mcts playout_depth -1", lambda: mcts_search(S, playout_depth=-1), "playout_depth"),
    ("mcts capacity 0", lambda: mcts_search(S, capacity=0), "capacity"),
    ("mcts backend", lambda: mcts_search(S, backend="tpu"), "backend"),
    ("mcts batch without backend", lambda: mcts_search(S, batch=8), "backend="),
    ("mcts virtual_loss 0", lambda: mcts_search(S, backend="cpu", virtual_loss=0), "virtual_loss"),
    ("mcts unknown option", lambda: mcts_search(S, iteration=10), "unknown MCTS option"),
    ("mcts max_bytes str", lambda: mcts_search(S, max_bytes="1GiB"), "max_bytes"),
    ("mcts state", lambda: mcts_search("4,4/0/4,4/0 p0"), "registered game"),
    ("mcts config type", lambda: mcts_search(S, {"iterations": 5}), "MCTSConfig"),
    ("mcts config bad", lambda: mcts_search(S, MCTSConfig(iterations="5")), "iterations"),
    ("worker_seed", lambda: worker_seed(-3, 1), "seed"),
    ("choose_final_move final", lambda: choose_final_move([CHILD], "best"), "final"),
    ("choose_final_move empty", lambda: choose_final_move([]), "children"),
    ("tree capacity", lambda: T.MCTSTree(2.5, 3), "capacity"),
    ("tree cells", lambda: T.MCTSTree(8, 0), "cells"),
    ("tree root board", lambda: T.MCTSTree(8, 3).set_root([1, 2], 0), "board"),
    ("tree children node", lambda: T.MCTSTree(8, 3).children(5), "node"),
    ("mc playouts 1.5", lambda: monte_carlo_search(S, playouts=1.5), "playouts"),
    ("mc time nan", lambda: monte_carlo_search(S, time_limit=float("nan")), "time_limit"),
    ("mc seed", lambda: monte_carlo_search(S, seed=-1), "seed"),
    ("mc threads", lambda: monte_carlo_search(S, threads=0), "threads"),
    # playout kernels' Python boundary
    ("evaluate players None", lambda: evaluate_cpu(S.board, None, 1, 0), "players"),
    ("evaluate players float", lambda: evaluate_cpu(S.board, 0.5, 1, 0), "players"),
    ("evaluate playouts float", lambda: evaluate_cpu(S.board, 0, 2.0, 0), "playouts_per_state"),
    ("evaluate playouts huge", lambda: evaluate_cpu(S.board, 0, 10**20, 0), "playouts_per_state"),
    ("evaluate seed -1", lambda: evaluate_cpu(S.board, 0, 1, -1), "seed"),
    ("evaluate seed 2**64", lambda: evaluate_cpu(S.board, 0, 1, 2**64), "seed"),
    ("evaluate boards str", lambda: evaluate_cpu("board", 0, 1, 0), "boards"),
    ("evaluate boards float", lambda: evaluate_cpu(S.board.astype(float), 0, 1, 0), "integers"),
    ("evaluate too many seeds", lambda: evaluate_cpu(np.array([0, 900, 200, 0, 1, 1]), 0, 1, 0), "seeds"),
    ("evaluate threads", lambda: evaluate_cpu(S.board, 0, 1, 0, threads=1.5), "threads"),
    ("backend name", lambda: resolve(None), "backend"),
    ("backend evaluate tpb", lambda: evaluate(S.board, 0, 1, 0, backend="cpu", threads_per_block=0),
     "threads_per_block"),
    ("backend evaluator tpb", lambda: evaluator(4096), "threads_per_block"),
    # benchmarks
    ("bench states float", lambda: measure_playouts(states=1.5), "states"),
    ("bench repeats 0", lambda: measure_playouts(repeats=0), "repeats"),
    ("bench seed", lambda: measure_playouts(seed=-1), "seed"),
    ("bench houses", lambda: measure_playouts(houses=0), "houses"),
    ("bench backend", lambda: measure_playouts(backend="gpu"), "backend"),
    ("mcts bench workers", lambda: run_mcts_bench(workers=0), "workers"),
    ("mcts bench simulations", lambda: run_mcts_bench(simulations="10"), "simulations"),
    # agents and games
    ("agent kind", lambda: Agent("minimax"), "agent kind"),
    ("agent depth for random", lambda: Agent("random", depth=3), "depth does not apply"),
    ("agent depth float", lambda: Agent("alphabeta", depth=2.0), "depth"),
    ("agent time inf", lambda: Agent("alphabeta", time=float("inf")), "time"),
    ("agent eval", lambda: Agent("fsss", depth=2, eval="material"), "eval"),
    ("agent seed float", lambda: Agent("random", seed=1.5), "seed"),
    ("agent options", lambda: Agent("mcts", options={"iterations": "10"}), "iterations"),
    ("agent plays a str", lambda: Agent("random")("4,4/0/4,4/0 p0"), "KalahState"),
    ("play_game max_plies -1", lambda: play_game(S, RANDOM, max_plies=-1), "max_plies"),
    ("play_game max_plies 0", lambda: play_game(S, RANDOM, max_plies=0), "max_plies"),
    ("play_game max_plies 1.5", lambda: play_game(S, RANDOM, max_plies=1.5), "max_plies"),
    ("play_game max_plies bool", lambda: play_game(S, RANDOM, max_plies=True), "max_plies"),
    ("play_game one agent", lambda: play_game(S, RANDOM[:1]), "two callables"),
    ("play_game on_move", lambda: play_game(S, RANDOM, on_move=3), "on_move"),
    ("play_game state", lambda: play_game(None, RANDOM), "KalahState"),
]


@pytest.mark.parametrize("fn, words", [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS])
def test_bad_arguments_raise_one_value_error_line(fn, words):
    _raises_one_line_value_error(fn, words)


@pytest.mark.slow
def test_good_arguments_of_every_accepted_type_still_work():
    # NumPy integers and floats are accepted where ints / numbers are asked for
    r = mcts_search(S, iterations=np.int64(40), c=np.float32(1.5), seed=np.uint64(2**64 - 1), workers=np.int32(1),
                    solver=np.bool_(True))
    assert r["iterations"] <= 40 and r["move"] in S.legal_moves()
    one = mcts_search(S, iterations=40, solver=np.bool_(True), seed=3)
    true = mcts_search(S, iterations=40, solver=True, seed=3)
    assert one["children"] == true["children"] and one["proven"] == true["proven"]
    # one meaning of a flag everywhere (jitsearch._checks.check_bool): True or False, never a number
    with pytest.raises(ValueError, match="solver must be True or False, got int 1"):
        mcts_search(S, iterations=40, solver=1, seed=3)
    s = KalahState.from_board(np.array([0, 2, 2, 0, 2, 2], dtype=np.uint8), np.int64(1))
    assert s.player == 1 and s.board.dtype == np.int32
    assert KalahState.from_board([0.0, 2.0, 2.0, 0.0, 2.0, 2.0], 0) == KalahState.initial(2, 2)
    assert evaluate_cpu(S.board, np.int8(0), np.int64(3), np.uint64(5))["wins"].shape == (1,)


# -- the board is read-only ----------------------------------------------------------------

@pytest.mark.slow
def test_board_is_read_only_and_owned_by_the_state():
    raw = np.array([0, 2, 2, 0, 2, 2], dtype=np.int32)
    s = KalahState.from_board(raw, 0)
    t = KalahState(raw, 0, 2)
    for state in (s, t, KalahState.initial(6, 4), KalahState.from_text("1,2/0/3,4/0 p1"), s.play(1)):
        assert not state.board.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            state.board[1] = 99
        with pytest.raises(ValueError):
            state.board.fill(0)
    raw[1] = 50  # the caller's array is not the state's
    assert s.board[1] == 2 and t.board[1] == 2
    with pytest.raises(ValueError):
        s.board.flags.writeable = True  # the state's array owns no writable base to re-enable
    # consumers copy what they change: play, MCTS, the playouts, the exact search
    before = s.board.tolist()
    s.play(1)
    mcts_search(s, iterations=30, seed=1)
    evaluate_cpu(s.board, s.player, 2, 0)
    monte_carlo_search(s, playouts=20)
    assert s.board.tolist() == before and hash(s) == hash(KalahState.from_board(before, 0))


def test_kernel_arrays_are_writable_contiguous_copies_only_where_needed():
    from jitsearch._checks import kernel_array

    board = KalahState.initial(3, 2).board
    out = kernel_array(board, np.int32)
    assert out.flags.writeable and out.flags.c_contiguous and out.tolist() == board.tolist()
    assert not np.shares_memory(out, board)
    out[0] = 7  # the state is untouched
    assert board[0] == 0
    mine = np.arange(6, dtype=np.int32)
    assert kernel_array(mine, np.int32) is mine
    wide = kernel_array(np.broadcast_to(board, (3, board.size)), np.int64)
    assert wide.dtype == np.int64 and wide.shape == (3, 8) and wide.flags.writeable and wide.flags.c_contiguous


@pytest.mark.slow
def test_the_exact_search_reads_a_read_only_board():
    from jitsearch.games.kalah.alphabeta import search
    from jitsearch.games.kalah.solver import solve_exact

    s = KalahState.from_text("1,1,2/0/2,1,1/1 p0")
    assert not s.board.flags.writeable
    r = search(s, 3)
    assert r["move"] in s.legal_moves()
    exact = solve_exact(s, tt_capacity=1 << 10)
    assert exact["complete"] and exact["best_move"] in s.legal_moves()


# -- limits: refused fast, before anything big is allocated ------------------------------

LIMITS = [
    ("mcts playouts per leaf", lambda: mcts_search(S, playouts=100_000_000), "playouts"),
    ("mcts simulations", lambda: mcts_search(S, iterations=100_000, playouts=100_000), "simulations"),
    ("mcts iterations", lambda: mcts_search(S, iterations=10**9), "iterations"),
    ("mcts tree memory", lambda: mcts_search(S, iterations=10**8), "MCTS tree"),
    ("mcts tree max_bytes", lambda: mcts_search(S, iterations=1000, max_bytes=1000), "MCTS tree"),
    ("mcts capacity", lambda: mcts_search(S, iterations=10, capacity=2**31), "capacity"),
    ("mcts workers", lambda: mcts_search(S, workers=10**6), "workers"),
    ("mcts batch", lambda: mcts_search(S, backend="cpu", batch=10**9), "batch"),
    ("mcts playout_depth", lambda: mcts_search(S, playout_depth=10**12), "playout_depth"),
    ("mcts time", lambda: mcts_search(S, time=1e300), "time"),
    ("tree max_bytes", lambda: T.MCTSTree(2**31 - 1, 16), "MCTS tree"),
    ("mc playouts", lambda: monte_carlo_search(S, playouts=10**12), "playouts"),
    ("seeds in one house", lambda: KalahState.from_text("1000,0,0,0,0,0/0/1,1,1,1,1,1/0 p0"), "1000"),
    ("seeds of a start", lambda: KalahState.initial(16, 100), "3200 seeds"),
    ("seeds per house", lambda: KalahState.initial(1, 101), "seeds"),
    ("houses", lambda: KalahState.from_board(np.ones(36, dtype=np.int32), 0), "houses"),
    ("evaluate playouts", lambda: evaluate_cpu(S.board, 0, 2**40, 0), "playouts_per_state"),
    ("evaluate work", lambda: evaluate_cpu(np.broadcast_to(S.board, (1 << 13, 8)), 0, 1 << 20, 0),
     "per call"),
    ("bench states", lambda: measure_playouts(states=100_000_000), "states"),
    ("bench playouts", lambda: measure_playouts(playouts=10**20), "playouts"),
    ("bench launch work", lambda: measure_playouts(states=10**7, playouts=1000), "per call"),
    ("bench total work", lambda: measure_playouts(states=1 << 16, playouts=1 << 16, repeats=3), "benchmark"),
    ("bench memory", lambda: measure_playouts(states=1 << 22, max_bytes=1 << 20), "lower --states"),
    ("mcts bench simulations", lambda: run_mcts_bench(simulations=10**12), "simulations"),
    ("mcts bench total", lambda: run_mcts_bench(simulations=10**7, repeats=100, workers=1), "benchmark"),
    ("agent playouts", lambda: parse_agent("mcts:playouts=100000000"), "playouts"),
    ("agent workers", lambda: parse_agent("mcts:workers=100000"), "workers"),
    ("agent depth", lambda: parse_agent("alphabeta:depth=65"), "depth"),
    ("agent time", lambda: parse_agent("alphabeta:time=1e300"), "time"),
    ("agent spec length", lambda: parse_agent("mcts:" + "c=1," * 1000), "characters"),
    ("play_game max_plies", lambda: play_game(S, RANDOM, max_plies=10**12), "max_plies"),
]


@pytest.mark.parametrize("fn, words", [c[1:] for c in LIMITS], ids=[c[0] for c in LIMITS])
def test_limits_are_refused_fast_and_before_allocating(fn, words):
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        _raises_one_line_value_error(fn, words)
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seconds < 0.5, seconds
    assert peak < 16 * 1024**2, peak  # no big allocation (NumPy's are traced)


def test_limits_are_documented_and_consistent():
    from jitsearch.games import kalah
    from jitsearch.mcts import config as S_

    # every Kalah start position the constructor accepts fits the board limit, the largest one included
    biggest = KalahState.initial(16, MAX_SEEDS // 32)
    assert biggest.seeds_total <= kalah.MAX_SEEDS
    # a board right at the limit is accepted, one seed more is not
    at = KalahState.from_board([0, MAX_SEEDS - 1, 0, 1], 0)
    assert at.seeds_total == MAX_SEEDS
    with pytest.raises(ValueError, match="seeds"):
        KalahState.from_board([0, MAX_SEEDS, 0, 1], 0)
    # the largest allowed iteration count's tree fits int32 node indices
    assert S_.MAX_ITERATIONS * kalah.MAX_HOUSES + 1 <= S_.MAX_CAPACITY


# -- agent specs ------------------------------------------------------------------------------

BAD_SPECS = [
    ("mcts:iterations=10,iterations=20", "given twice"),
    ("alphabeta:depth=3,depth=4", "given twice"),
    ("hmcts:reward=win", "hmcts is mcts with reward=heuristic"),
    ("hmcts:reward=heuristic", "hmcts is mcts with reward=heuristic"),
    ("mcts:solver=-5", "0, 1, true or false"),
    ("mcts:solver=2", "0, 1, true or false"),
    ("mcts:solver=", "empty value"),
    ("mcts:iterations=", "empty value"),
    ("mcts:iterations", "name=value"),
    ("mcts:iterations=10,,c=1", "stray comma"),
    ("mcts:iterations=1.5", "an integer is needed"),
    ("mcts:iterations=1e3", "an integer is needed"),
    ("mcts:iterations=0", "iterations"),
    ("mcts:c=-1", "c must be"),
    ("mcts:c=nan", "c must be"),
    ("mcts:c=abc", "a number is needed"),
    ("mcts:time=inf", "time"),
    ("mcts:formula=ucb2", "formula"),
    ("mcts:final=best", "final"),
    ("mcts:batch=8", "backend="),
    ("mcts:virtual_loss=2", "backend="),
    ("mcts:backend=cpu,solver=1", "solver"),
    ("mcts:bogus=1", "unknown option 'bogus'"),
    ("mc:iterations=5", "unknown option 'iterations'"),
    ("mc:playouts=0", "playouts"),
    ("mc:time=-1", "time"),
    ("alphabeta:depth=0", "depth"),
    ("alphabeta:eval=material", "eval"),
    ("fsss:time=1", "unknown option 'time'"),
    ("mtdf:depth=3", "unknown option 'depth'"),
    ("random:seed=3", "unknown option"),
    ("minimax", "unknown agent"),
]


@pytest.mark.parametrize("spec, words", BAD_SPECS, ids=[s for s, _ in BAD_SPECS])
def test_bad_agent_specs_are_refused_with_the_spec_named(spec, words):
    message = _raises_one_line_value_error(lambda: parse_agent(spec), words)
    assert spec in message, message


@pytest.mark.slow
def test_good_agent_specs_parse_to_typed_options():
    a = parse_agent("mcts:iterations=30,solver=true,c=1,final=value", seed=4)
    assert a.options == {"iterations": 30, "solver": True, "c": 1.0, "final": "value"}
    assert parse_agent("mcts:solver=0").options["solver"] is False
    assert parse_agent("mcts:solver=TRUE").options["solver"] is True
    h = parse_agent("hmcts:iterations=20")
    assert h.options["reward"] == "heuristic" and str(h) == "hmcts:iterations=20"
    assert parse_agent(" mcts : iterations = 7 ").options == {"iterations": 7}
    assert parse_agent("mcts:backend=cpu,batch=8,virtual_loss=2").options["batch"] == 8
    assert parse_agent("alphabeta").depth == 5 and parse_agent("mc:time=0.5").time == 0.5
    g = play_game(KalahState.initial(3, 2), [a, h], max_plies=3)
    assert g["plies"] <= 3 and len(g["moves"]) == g["plies"]

"""The shared rule source (kalah_rules) against the plain reference (kalah_naive).

Whole-lap sowing, wraps past the last index and around the opponent's store,
captures and the end-of-game sweep, for every m from 1 to MAX_HOUSES, both
rule variants, compiled (Numba) and as plain Python (the source the CUDA
device functions compile from); plus the playout evaluator against a plain
playout on positions where houses hold laps of seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from jitsearch.games.kalah import naive as kalah_naive, rules as kalah_rules
from jitsearch.games.kalah import MAX_HOUSES, RULES
from jitsearch import rng
from jitsearch.games.kalah import playouts
from jitsearch.games.kalah.playouts import evaluate_cpu


def naive_move(board, m, player, pit, empty_capture):
    h0, s0 = list(board[1:m + 1]), int(board[m + 1])
    h1, s1 = list(board[m + 2:]), int(board[0])
    house = pit - 1 if player == 0 else pit - (m + 2)
    h0, s0, h1, s1, nxt = kalah_naive.move(h0, s0, h1, s1, player, house, empty_capture)
    return kalah_naive.to_board(h0, s0, h1, s1), nxt


def check_move(board, m, player, pit, empty_capture):
    want, want_next = naive_move(board, m, player, pit, empty_capture)
    for apply_move in (RULES.apply_move, kalah_rules.sow):
        got = np.array(board, dtype=np.int32)
        nxt = apply_move(got, m, player, pit, empty_capture)
        assert (got.tolist(), int(nxt)) == (want, want_next), (board, m, player, pit, empty_capture)


def random_board(rng_, m, top):
    b = np.zeros(2 * m + 2, dtype=np.int32)
    b[1:m + 1] = rng_.integers(0, top + 1, m)
    b[m + 2:] = rng_.integers(0, top + 1, m)
    b[0], b[m + 1] = rng_.integers(0, 6, 2)
    return b


@pytest.mark.parametrize("empty_capture", [False, True])
def test_every_seed_count_up_to_three_laps_from_every_house(empty_capture):
    """Each m, player and house, seeds 1..3(2m+1)+1: every remainder of a lap."""
    r = np.random.default_rng(13 + empty_capture)
    for m in range(1, MAX_HOUSES + 1):
        ring = 2 * m + 1
        for player in (0, 1):
            first = 1 if player == 0 else m + 2
            for pit in range(first, first + m):
                base = random_board(r, m, 2)
                # sparse sides too, so that captures and sweeps happen
                base[1 + r.integers(0, m)] = 0
                base[m + 2 + r.integers(0, m)] = 0
                for seeds in range(1, 3 * ring + 2):
                    b = base.copy()
                    b[pit] = seeds
                    check_move(b.tolist(), m, player, pit, empty_capture)


@pytest.mark.parametrize("empty_capture", [False, True])
def test_thousands_of_random_positions(empty_capture):
    """Random boards (a side may even be empty, as the endgame tables enumerate)."""
    r = np.random.default_rng(2026 + empty_capture)
    for t in range(4000):
        m = int(r.integers(1, MAX_HOUSES + 1))
        b = random_board(r, m, int(r.choice([1, 3, 6, 12, 30])))
        if t % 5 == 0:  # one side empty
            side = slice(1, m + 1) if r.integers(0, 2) else slice(m + 2, 2 * m + 2)
            b[side] = 0
        player = int(r.integers(0, 2))
        first = 1 if player == 0 else m + 2
        pit = first + int(r.integers(0, m))
        if b[pit] == 0:
            b[pit] = int(r.integers(1, 100))
        check_move(b.tolist(), m, player, pit, empty_capture)
        moves = np.zeros(m, dtype=np.int64)
        count = RULES.legal_moves(b, m, player, moves)
        assert moves[:count].tolist() == [i for i in range(first, first + m) if b[i] > 0]


def plain_playout(board, m, player, empty_capture, key):
    board = list(board)
    plies = 0
    while player >= 0:
        first = 1 if player == 0 else m + 2
        legal = [i for i in range(first, first + m) if board[i] > 0]
        pit = legal[rng.below_py(rng.draw_py(key, plies), len(legal))]
        board, player = naive_move(board, m, player, pit, empty_capture)
        plies += 1
    return board, plies


@pytest.mark.parametrize("m, houses, empty_capture", [
    pytest.param(1, 30, False, marks=pytest.mark.slow), pytest.param(3, 30, True, marks=pytest.mark.slow),
    pytest.param(4, 30, False, marks=pytest.mark.slow), (6, 4, False), (6, 30, True),
    pytest.param(7, 30, True, marks=pytest.mark.slow), (MAX_HOUSES, 30, False)])
def test_playouts_match_a_plain_playout_with_laps(m, houses, empty_capture):
    start = [0] + [houses] * m + [0] + [houses] * m
    boards = np.array([start, start], dtype=np.int32)
    boards[1, 1] = 1  # a second state, with a small house
    players = np.array([0, 1])
    seed, per_state = 99, 6
    got = evaluate_cpu(boards, players, per_state, seed, empty_capture=empty_capture)
    for s in range(2):
        wins = draws = losses = margins = plies = 0
        for p in range(per_state):
            key = rng.stream_key_py(seed, s, p)
            end, k = plain_playout(boards[s].tolist(), m, int(players[s]), empty_capture, key)
            margin = end[m + 1] - end[0]
            mine = margin if players[s] == 0 else -margin
            wins += mine > 0
            draws += mine == 0
            losses += mine < 0
            margins += margin
            plies += k
        assert [int(got[x][s]) for x in ("wins", "draws", "losses", "margin_sum", "plies")] == \
            [wins, draws, losses, margins, plies]


def random_live_positions(r, m, houses, count, empty_capture):
    from jitsearch.games.kalah import KalahState

    states = []
    while len(states) < count:
        s = KalahState.initial(m, houses, empty_capture=empty_capture)
        for _ in range(int(r.integers(0, 4 * m * houses))):
            if s.is_over:
                break
            s = s.play(int(r.choice(s.legal_moves())))
        if not s.is_over:
            states.append(s)
    return np.stack([s.board for s in states]).astype(np.int32), np.array([s.player for s in states])


@pytest.mark.parametrize("m", range(1, kalah_rules.MAX_PACKED_HOUSES + 1))
@pytest.mark.slow
def test_packed_playouts_equal_the_generic_ones(m):
    """Packed boards (every m they take, used from MIN_PACKED_HOUSES on): the
    same per-state outcomes as the generic kernel, laps and both rules included."""
    r = np.random.default_rng(13 + m)
    packed = playouts.cpu_kernels(m, "packed")[0]  # the shipped kernel (make_packed_evaluate), once per m
    for houses, empty_capture in ((1, False), (4, True), (30, False), (min(100, 1000 // (2 * m)), True)):
        boards, players = random_live_positions(r, m, houses, 12, empty_capture)
        k = boards.shape[0]
        want = [np.zeros(k, dtype=np.int64) for _ in range(5)]
        got = [np.zeros(k, dtype=np.int64) for _ in range(5)]
        args = (boards, players, m, empty_capture, 5, np.uint64(7), 0, k)
        playouts.evaluate_range(*args, *want)
        packed(*args, *got)
        assert [g.tolist() for g in got] == [w.tolist() for w in want], (m, houses, empty_capture)


def test_packed_rules_as_plain_python():
    """The packed bodies uncompiled (the source a CUDA build would compile) against the plain playout."""
    import warnings

    m, empty_capture = 6, True
    rules = kalah_rules.build_packed(lambda f: f, m)
    boards, players = random_live_positions(np.random.default_rng(5), m, 30, 3, empty_capture)
    for s in range(boards.shape[0]):
        key = rng.stream_key_py(11, s, 0)
        end, want_plies = plain_playout(boards[s].tolist(), m, int(players[s]), empty_capture, key)
        w = np.zeros(rules.words, dtype=np.uint64)
        side0, side1 = rules.load(w, boards[s])
        player, plies = int(players[s]), 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # uint64 wrap-around in NumPy scalars
            while player >= 0:
                count, mask = rules.legal_count(w, player)
                k = rng.below_py(rng.draw_py(key, plies), int(count))
                player, side0, side1 = rules.step(w, player, side0, side1, mask, k, empty_capture)
                plies += 1
            assert (int(rules.margin(w, side0, side1)), plies) == (end[m + 1] - end[0], want_plies)

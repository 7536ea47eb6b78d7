"""Oware rules: OpenSpiel's own hand tests, a golden file of OpenSpiel games,
the compiled rules against a naive transcription on hand-built positions,
the CUDA device functions under the simulator, validation.

Boards are written in our layout: houses 0..m-1 (player 0, A..F), houses
m..2m-1 (player 1, a..f), then the two scores -- OpenSpiel's ``seeds`` and
``score`` concatenated."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitsearch.games.oware import RULES, OwareState
from jitsearch.games.oware.naive import NaiveOware

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "data" / "oware_golden.jsonl"


def board(player, score, seeds, **kw):
    return OwareState.from_board(list(seeds) + list(score), player, **kw)


# -- OpenSpiel's oware_test.cc, position for position -------------------------------------

def test_legal_actions_no_constraints():
    s = board(0, [0, 0], [1, 0, 9, 0, 0, 1, 1, 0, 0, 0, 0, 0])
    assert [s.action_of(h) for h in s.legal_moves()] == [0, 2, 5]


def test_must_feed():
    #   P1:  0  0  0  0  0  0
    #   P0:  1  0  0  0  0  1      house 0 cannot reach player 1's row; house 5 can
    s = board(0, [0, 0], [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
    assert s.legal_moves() == [5]
    with pytest.raises(ValueError, match="does not feed"):
        s.play(0)


def test_capture_backward_to_the_first_house_then_the_score_ends_the_game():
    # 8 seeds from house 2 land in 3..10; 10,9,8,7,6 then hold 3,2,2,2,2 -> 11 captured;
    # 11 > 18 // 2 ends the game and each side's seeds go to its owner (4 and 3)
    s = board(0, [0, 0], [0, 0, 8, 0, 0, 1, 1, 1, 1, 1, 2, 3]).play(2)
    assert s.board.tolist() == [0] * 12 + [15, 3] and s.is_over and s.returns == (1.0, -1.0)


def test_capture_stops_at_a_house_that_is_not_2_or_3():
    s = board(0, [0, 0], [0, 0, 8, 0, 0, 1, 3, 1, 1, 1, 2, 0]).play(2)
    assert s.board.tolist() == [0] * 12 + [13, 4] and s.is_over


def test_no_capture_with_too_few_seeds():
    s = board(1, [0, 0], [3, 1, 1, 1, 0, 0, 0, 0, 8, 0, 0, 1]).play(8)
    assert s.board.tolist() == [4, 2, 2, 2, 1, 0, 0, 0, 0, 1, 1, 2, 0, 0] and s.player == 0


def test_no_capture_with_too_many_seeds():
    s = board(0, [0, 0], [0, 0, 8, 0, 0, 1, 3, 1, 1, 1, 3, 0]).play(2)
    assert s.board.tolist() == [0, 0, 0, 1, 1, 2, 4, 2, 2, 2, 4, 0, 0, 0] and s.player == 1


def test_grand_slam_captures_nothing_or_is_illegal_in_the_variant():
    seeds = [1, 1, 1, 1, 1, 0, 0, 0, 8, 0, 0, 1]
    s = board(1, [0, 0], seeds).play(8)
    assert s.board.tolist() == [2, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 2, 0, 0]
    v = board(1, [0, 0], seeds, grand_slam_illegal=True)
    assert 8 not in v.legal_moves() and v.legal_moves() == [11]
    with pytest.raises(ValueError, match="grand slam"):
        v.play(8)


def test_game_ends_by_repetition():
    s = board(0, [23, 23], [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])
    for action in (0, 0, 1, 1, 2, 2, 3, 3, 4, 4):
        s = s.play(s.house_of(action))
    assert not s.is_over and s.board.tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 23, 23]
    s = s.play(5).play(11)  # back to the start board, player 0 to move: a repetition
    assert s.is_over and s.board.tolist() == [0] * 12 + [24, 24] and s.result == "draw"
    # the same board read from text has no record of the first visit: the game goes on
    fresh = OwareState.from_text("1,0,0,0,0,0/1,0,0,0,0,0/23,23 p0")
    assert not fresh.play(0).is_over


# -- more hand positions ----------------------------------------------------------------------

def test_initial_position_text_and_ascii():
    s = OwareState.initial()
    assert s.to_text() == "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0"
    assert OwareState.from_text(s.to_text()) == s
    assert s.legal_moves() == [0, 1, 2, 3, 4, 5] and s.house_of(5) == 5
    t = s.play(5)
    assert t.to_text() == "4,4,4,4,4,0/5,5,5,5,4,4/0,0 p1" and t.house_of(0) == 6 and t.action_of(11) == 5
    art = t.ascii().splitlines()
    assert art[1].split() == list("fedcba") and art[2].split() == ["4", "4", "5", "5", "5", "5"]
    assert json.loads(json.dumps(t.to_json()))["text"] == t.to_text()


def test_a_lap_skips_the_house_sown_from():
    # 12 seeds from house 0: houses 1..11 get one each, house 0 is skipped, the 12th lands in house 1
    s = board(0, [0, 0], [12, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]).play(0)
    assert s.board.tolist() == [0, 2, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 0, 0]
    # 22 seeds: two laps of 11, the last in house 11; houses 11..7 then hold 2,3,2,2,2 and are
    # captured, house 6 (4) stops the capture
    s = board(0, [0, 0], [22, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0]).play(0)
    assert s.board.tolist() == [0, 2, 2, 2, 2, 2, 4, 0, 0, 0, 0, 0, 11, 0] and s.player == 1
    # without house 6's seeds the same capture would take all of player 1's seeds: a grand slam
    s = board(0, [0, 0], [22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]).play(0)
    assert s.board.tolist() == [0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 0, 0]


def test_collect_when_the_mover_cannot_feed():
    # P0's last seed makes house 6 hold 2: a grand slam (all of P1's seeds), so no capture. P1 must then
    # feed player 0, who has nothing, but house 6's 2 seeds stop at house 8: no legal move, the game ends
    # and P1 collects its 2 seeds
    s = board(0, [20, 22], [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]).play(5)
    assert s.is_over and s.board.tolist() == [0] * 12 + [20, 24] and s.result == "p1"


def test_move_limit_ends_the_game_with_the_seeds_collected():
    s = OwareState.initial(move_limit=3)
    s = s.play(0).play(6)
    assert not s.is_over and s.to_text() == "0,5,5,5,5,4/0,5,5,5,5,4/0,0 p0"
    s = s.play(1)  # 0,0,6,6,6,5 / 1,5,5,5,5,4 after the third ply: 23 and 25 seeds on the sides
    assert s.is_over and s.ply == 3 and s.scores == (23, 25) and s.result == "p1"


# -- the golden file: OpenSpiel's games replayed ------------------------------------------------

def test_golden_openspiel_games():
    lines = GOLDEN.read_text().splitlines()
    assert len(lines) >= 250
    plies = 0
    for line in lines:
        r = json.loads(line)
        s = OwareState.initial(r["houses"], r["seeds"])
        naive = NaiveOware([r["seeds"]] * (2 * r["houses"]))
        for k, action in enumerate(r["actions"]):
            assert s.board.tolist() == r["boards"][k] == naive.board() and s.player == r["players"][k], line
            assert [s.action_of(h) for h in s.legal_moves()] == r["legal"][k], line
            house = s.house_of(action)
            s = s.play(house)
            naive.play(house)
            plies += 1
        assert s.board.tolist() == r["boards"][-1] == naive.board() and s.is_over and r["players"][-1] == -1
        assert list(s.returns) == r["returns"] == naive.returns()
    assert plies > 10_000


# -- compiled rules against the naive transcription, from positions OpenSpiel cannot start at ---------

def _random_position(rnd, m, seeds):
    houses = [0] * (2 * m)
    for _ in range(seeds):
        houses[rnd.randrange(2 * m)] += 1
    score = [rnd.randrange(0, 6), rnd.randrange(0, 6)]
    return houses, score


@pytest.mark.parametrize("m", [1, 2, 3, 6, 8])
@pytest.mark.parametrize("grand_slam_illegal", [False, True])
def test_compiled_rules_equal_the_naive_reference(m, grand_slam_illegal):
    rnd = random.Random(m * 7 + grand_slam_illegal)
    games = 0
    while games < 150:
        houses, score = _random_position(rnd, m, rnd.randrange(1, 8 * m + 30))
        player = rnd.randrange(2)
        limit = rnd.choice([5, 40, 1000])
        try:
            s = OwareState.from_board(houses + score, player, move_limit=limit,
                                      grand_slam_illegal=grand_slam_illegal)
        except ValueError:
            continue
        naive = NaiveOware(houses, score, player, limit, grand_slam_illegal)
        games += 1
        while True:
            assert s.board.tolist() == naive.board()
            if s.is_over:
                assert naive.is_terminal() and list(s.returns) == naive.returns()
                break
            assert s.player == naive.player and s.legal_moves() == naive.legal_houses()
            h = rnd.choice(s.legal_moves())
            s = s.play(h)
            naive.play(h)


def test_grand_slam_test_equals_sowing_then_looking():
    rnd = random.Random(5)
    hits = 0
    for _ in range(3000):
        m = rnd.randrange(1, 7)
        houses, _ = _random_position(rnd, m, rnd.randrange(1, 40))
        player = rnd.randrange(2)
        for h in range(player * m, player * m + m):
            if houses[h] == 0:
                continue
            trial = NaiveOware(houses, (0, 0), player)
            last = trial._distribute(h)
            want = trial._in_opponent_row(last) and trial._is_grand_slam(last)
            hits += want
            assert RULES.is_grand_slam(np.array(houses + [0, 0], np.int32), m, player, h) == want
    assert hits > 50


def test_seeds_are_conserved_and_histories_reset_on_capture():
    rnd = random.Random(9)
    for _ in range(200):
        s = OwareState.initial(6, 4)
        while not s.is_over:
            before, rows = s.scores, len(s.history)
            s = s.play(rnd.choice(s.legal_moves()))
            assert s.seeds_total == 48 and s.board.min() >= 0
            if not s.is_over:
                assert len(s.history) == (1 if s.scores != before else rows + 1)
                assert s.history[-1].tolist() == s.board[:12].tolist() + [s.player]
        assert not s.board[:12].any()


# -- the same source as CUDA device functions, under the simulator -------------------------------

_SIM_SCRIPT = r"""
import random, sys
import numpy as np
from numba import cuda, int32
from jitsearch.games.oware import rules, OwareState

M, ROWS = 6, 301
dev = rules.build(cuda.jit(device=True))

@cuda.jit
def replay(boards, players, draws, limit, out_boards, out_players, out_plies):
    i = cuda.grid(1)
    if i >= boards.shape[0]:
        return
    board = cuda.local.array(2 * M + 2, int32)
    hist = cuda.local.array((ROWS, 2 * M + 1), int32)
    moves = cuda.local.array(M, int32)
    for j in range(2 * M + 2):
        board[j] = boards[i, j]
    player = players[i]
    dev.record(board, M, player, hist, 0)
    first = 0
    rows = 1
    ply = 0
    while player >= 0:
        count = dev.legal_moves(board, M, player, False, moves)
        house = moves[draws[i, ply] % count]
        player, first, rows = dev.apply_move(board, M, player, house, False, hist, first, rows, ply, limit)
        ply += 1
    for j in range(2 * M + 2):
        out_boards[i, j] = board[j]
    out_players[i] = player
    out_plies[i] = ply

rnd = random.Random(4)
B, LIMIT = 24, 300
starts = [OwareState.initial(6, 4, move_limit=LIMIT)]
while len(starts) < B:
    s = starts[-1]
    s = OwareState.initial(6, 4, move_limit=LIMIT) if s.is_over else s.play(rnd.choice(s.legal_moves()))
    if not s.is_over:
        starts.append(OwareState.from_text(s.to_text(), move_limit=LIMIT))
boards = np.stack([s.board for s in starts]).astype(np.int32)
players = np.array([s.player for s in starts], np.int32)
draws = np.array([[rnd.randrange(1 << 30) for _ in range(LIMIT)] for _ in range(B)], np.int32)
ob = np.zeros_like(boards); op = np.zeros(B, np.int32); ok = np.zeros(B, np.int32)
replay[3, 8](boards, players, draws, LIMIT, ob, op, ok)
for i, s in enumerate(starts):
    ply = 0
    while not s.is_over:
        legal = s.legal_moves()
        s = s.play(legal[int(draws[i, ply]) % len(legal)])
        ply += 1
    assert ob[i].tolist() == s.board.tolist() and op[i] == -1 and ok[i] == ply, (i, ob[i], s.board)
print("twins agree", B)
"""


def test_device_rules_equal_the_cpu_rules_under_the_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _SIM_SCRIPT], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "twins agree 24" in proc.stdout


# -- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("4,4,4/4,4/0,0 p0", "same number of houses"),
    ("4,4,4/4,4,4 p0", "must look like"),
    ("4,4,4/4,4,4/0 p0", "must look like"),
    ("4,-1,4/4,4,4/0,0 p0", ">= 0|0\\.\\."),
    ("4,4,4/4,4,4/0,0 p2", "p0, p1 or end"),
    ("0,0,0/0,0,0/12,12 p0", "'end'"),
    ("1,0,0/0,0,0/12,12 end", "already end the game"),
    ("1,0,0/1,0,0/5,0 p0", "already end the game"),
    ("0,0,0/2,0,0/0,1 p0", "no legal move"),
    ("1,0,0/0,0,0/0,1 p0", "no legal move"),
    ("x/4/0,0 p0", "must look like"),
])
def test_bad_positions(text, words):
    with pytest.raises(ValueError, match=words):
        OwareState.from_text(text)


def test_bad_arguments():
    s = OwareState.initial()
    with pytest.raises(ValueError, match="not a house of player 0"):
        s.play(6)
    with pytest.raises(ValueError, match="empty"):
        s.play(0).play(6).play(0)
    with pytest.raises(ValueError, match="a move is a house index"):
        s.play("1")
    with pytest.raises(ValueError, match="houses"):
        OwareState.initial(0, 4)
    with pytest.raises(ValueError, match="houses"):
        OwareState.initial(13, 4)
    with pytest.raises(ValueError, match="seeds per house"):
        OwareState.initial(6, 0)
    with pytest.raises(ValueError, match="move_limit"):
        OwareState.initial(move_limit=0)
    with pytest.raises(ValueError, match="grand_slam_illegal"):
        OwareState.initial(grand_slam_illegal="yes")
    with pytest.raises(ValueError, match="action"):
        s.house_of(6)
    with pytest.raises(ValueError, match="2m houses and 2 scores"):
        OwareState.from_board([1, 2, 3], 0)
    with pytest.raises(ValueError, match="at most 4096"):
        OwareState.from_text("1," * 3000)
    over = OwareState.from_text("0,0,0,0,0,0/0,0,0,0,0,0/30,18 end")
    assert over.is_over and over.result == "p0" and over.legal_moves() == []
    with pytest.raises(ValueError, match="game is over"):
        over.play(0)

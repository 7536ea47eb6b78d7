"""Kalah rules: hand-worked positions, a golden file, invariants, validation."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState

GOLDEN = Path(__file__).parent / "data" / "kalah_golden.jsonl"


def state(text, **kw):
    return KalahState.from_text(text, **kw)


def test_initial_position_and_text_round_trip():
    s = KalahState.initial(6, 4)
    assert s.to_text() == "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0"
    assert state(s.to_text()) == s
    assert s.board.tolist() == [0, 4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4]
    assert s.legal_moves() == [1, 2, 3, 4, 5, 6]
    assert "player 0 to move" in s.ascii()
    assert json.loads(json.dumps(s.to_json()))["text"] == s.to_text()


def test_extra_turn():
    #        P1:  4  4  4  4  4  4
    #     0                          0
    #        P0:  4  4  4  4  4  4
    # house 3 (pit 3) holds 4: seeds to pits 4, 5, 6 and the store -> P0 moves again
    s = KalahState.initial(6, 4).play(3)
    assert s.to_text() == "4,4,0,5,5,5/1/4,4,4,4,4,4/0 p0"
    assert s.player == 0


def test_capture():
    #        P1:  0  0  7  0  0  0      (pits 13..8: pit 11 holds 7)
    #     0                          0
    #        P0:  2  0  0  0  0  1      (pits 1..6)
    # P0 sows pit 1 (2 seeds) into pits 2 and 3; pit 3 was empty and the
    # opposite pit 14 - 3 = 11 holds 7: 7 + 1 = 8 go to P0's store. P1's
    # side is then empty, so the game ends and P0 sweeps pits 2 and 6.
    t = state("2,0,0,0,0,1/0/0,0,0,7,0,0/0 p0").play(1)
    assert t.to_text() == "0,0,0,0,0,0/10/0,0,0,0,0,0/0 end"
    assert t.is_over and t.margin == 10 and t.result == "p0"
    # the same sowing with the opposite house empty captures nothing
    u = state("2,0,0,0,0,1/0/0,0,0,0,7,0/0 p0").play(1)
    assert u.to_text() == "0,1,1,0,0,1/0/0,0,0,0,7,0/0 p1"


def test_capture_needs_a_non_empty_opposite_house_unless_the_variant():
    #        P1:  1  0  0  0  0  0      (pits 13..8: pit 13 holds 1)
    #     0                          0
    #        P0:  1  0  0  0  0  1
    # P0 sows pit 1 into empty pit 2; opposite pit 12 is empty
    text = "1,0,0,0,0,1/0/0,0,0,0,0,1/0 p0"
    standard = state(text).play(1)
    assert standard.to_text() == "0,1,0,0,0,1/0/0,0,0,0,0,1/0 p1"
    variant = state(text, empty_capture=True).play(1)
    # the lone seed goes to the store
    assert variant.to_text() == "0,0,0,0,0,1/1/0,0,0,0,0,1/0 p1"


def test_sowing_skips_the_opponents_store_on_a_lap():
    # 13 seeds from P0's pit 6: pits 7 (store), 8..13, skip 0, 1..6 -> the 13th lands back in pit 6
    s = state("0,0,0,0,0,13/0/1,1,1,1,1,1/0 p0")
    t = s.play(6)
    assert t.board[0] == 0  # P1's store untouched
    # pit 6 was emptied, receives the 13th seed: an own empty house, opposite pit 8 holds 1+1 -> capture 3
    assert t.board[7] == 1 + 3 and t.board[6] == 0 and t.board[8] == 0
    assert t.to_text() == "1,1,1,1,1,0/4/0,2,2,2,2,2/0 p1"
    # P1 laps past P0's store
    u = state("1,1,1,1,1,1/0/0,0,0,0,0,14/0 p1").play(13)
    assert u.board[7] == 0 and int(u.board.sum()) == 20


def test_whole_laps_and_wraps_around_the_opponents_store():
    # 27 seeds = 2 laps of the 13 pits other than P0's store, then 1: into P1's store -> P1 again
    t = state("1,1,1,1,1,1/0/0,0,0,0,0,27/0 p1").play(13)
    assert t.to_text() == "3,3,3,3,3,3/0/2,2,2,2,2,2/3 p1"
    # the same for P0 from pit 6: its store gets 2 + 1, P1's store nothing
    u = state("0,0,0,0,0,27/0/1,1,1,1,1,1/0 p0").play(6)
    assert u.to_text() == "2,2,2,2,2,2/3/3,3,3,3,3,3/0 p0"
    # 12 seeds from pit 12: 13, P1's store, P0's 1..6, skip 7, 8..11; pit 11 was empty:
    # capture it with the opposite pit 3 (2 + 1) into P1's store
    v = state("0,0,2,0,0,0/0/1,1,1,0,12,1/0 p1").play(12)
    assert v.to_text() == "1,1,0,1,1,1/0/2,2,2,0,0,2/5 p0"


def test_end_of_game_sweep():
    # P0's last seed goes to its store: P0's side is empty, P1's 6 seeds go to P1's store
    s = state("0,0,0,0,0,1/10/1,1,1,1,1,1/5 p0")
    t = s.play(6)
    assert t.is_over and t.player == -1
    assert t.to_text() == "0,0,0,0,0,0/11/0,0,0,0,0,0/11 end"
    assert t.result == "draw" and t.legal_moves() == []


def test_player_one_houses_and_numbers():
    s = KalahState.initial(6, 4).play(1)  # no extra turn: P1 to move
    assert s.player == 1 and s.legal_moves() == [8, 9, 10, 11, 12, 13]
    assert s.house_number_to_pit(1) == 8 and s.house_number_to_pit(6) == 13


def test_golden_transitions():
    lines = GOLDEN.read_text().splitlines()
    assert len(lines) > 1000
    for line in lines:
        r = json.loads(line)
        s = KalahState.from_board(r["board"], r["player"], empty_capture=r["empty_capture"])
        t = s.play(r["pit"])
        assert t.board.tolist() == r["next_board"], line
        assert t.player == r["next_player"], line


@pytest.mark.parametrize("m, n", [(1, 1), (3, 5), (6, 4), (8, 8)])
@pytest.mark.parametrize("empty_capture", [False, True])
def test_seed_total_conserved_in_random_games(m, n, empty_capture):
    rng = random.Random(m * 100 + n)
    for _ in range(300):
        s = KalahState.initial(m, n, empty_capture=empty_capture)
        plies = 0
        while not s.is_over:
            s = s.play(rng.choice(s.legal_moves()))
            assert int(s.board.sum()) == 2 * m * n and s.board.min() >= 0
            plies += 1
            assert plies < 10_000
        assert s.board[1:m + 1].sum() == 0 and s.board[m + 2:].sum() == 0


@pytest.mark.parametrize("text, words", [
    ("4,4,4/0/4,4/0 p0", "same number of houses"),
    ("4,4,4/0/4,4,4 p0", "must look like"),
    ("4,-1,4/0/4,4,4/0 p0", ">= 0"),
    ("4,4,4/0/4,4,4/0 p2", "p0, p1 or end"),
    ("0,0,0/12/0,0,0/12 p0", "'end'"),
    ("x/0/4/0 p0", "must look like"),
])
def test_bad_positions(text, words):
    with pytest.raises(ValueError, match=words):
        state(text)


def test_bad_moves_and_totals():
    s = KalahState.initial(6, 4)
    with pytest.raises(ValueError, match="not a house of player 0"):
        s.play(8)
    with pytest.raises(ValueError, match="not a house"):
        s.play(7)
    with pytest.raises(ValueError, match="empty"):
        s.play(3).play(3)
    with pytest.raises(ValueError, match="expected 48"):
        KalahState.from_text("4,4,4,4,4,4/0/4,4,4,4,4,5/0 p0", seeds_total=48)
    over = state("0,0,0,0,0,0/24/0,0,0,0,0,0/24 end")
    with pytest.raises(ValueError, match="game is over"):
        over.play(1)
    with pytest.raises(ValueError, match="houses"):
        KalahState.initial(0, 4)
    with pytest.raises(ValueError, match="2m\\+2"):
        KalahState.from_board([1, 2, 3], 0)

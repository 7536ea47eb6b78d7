"""A deliberately plain Kalah implementation, written independently of
jitsearch.games.kalah.rules: the source of the golden transition file
(tests/data/kalah_golden.jsonl) and the baseline of the Kalah benchmark.

Positions are (houses0, store0, houses1, store1, player) with each side's
houses listed from its left (away from its store) to its right.
"""

from __future__ import annotations

import json
import random


def move(houses0, store0, houses1, store1, player, house, empty_capture=False):
    """Sow from ``house`` (0-based, from the player's left). Returns the new
    position and the next player (-1 when the game ended)."""
    m = len(houses0)
    own = list(houses0 if player == 0 else houses1)
    opp = list(houses1 if player == 0 else houses0)
    own_store = store0 if player == 0 else store1
    opp_store = store1 if player == 0 else store0
    # the circuit seen from the mover: own houses, own store, opponent's houses (no opponent store)
    ring = [("own", i) for i in range(m)] + [("store", 0)] + [("opp", i) for i in range(m)]
    seeds = own[house]
    own[house] = 0
    pos = house
    while seeds:
        pos = (pos + 1) % len(ring)
        kind, i = ring[pos]
        if kind == "own":
            own[i] += 1
        elif kind == "store":
            own_store += 1
        else:
            opp[i] += 1
        seeds -= 1
    kind, i = ring[pos]
    nxt = 1 - player
    if kind == "store":
        nxt = player
    elif kind == "own" and own[i] == 1:
        j = m - 1 - i  # the opponent's house facing it
        if opp[j] > 0 or empty_capture:
            own_store += opp[j] + 1
            opp[j] = 0
            own[i] = 0
    h0, s0, h1, s1 = (own, own_store, opp, opp_store) if player == 0 else (opp, opp_store, own, own_store)
    if sum(h0) == 0 or sum(h1) == 0:
        s0 += sum(h0)
        s1 += sum(h1)
        h0, h1 = [0] * m, [0] * m
        nxt = -1
    return h0, s0, h1, s1, nxt


def to_board(h0, s0, h1, s1):
    """The jitsearch layout: [P1 store, P0 houses, P0 store, P1 houses]."""
    return [s1] + list(h0) + [s0] + list(h1)


def generate(path, games_per_config=10, seed=2024):
    """Write random-play transitions (board, player, pit, next board, next player) as JSONL."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for m, n in [(1, 1), (1, 3), (2, 2), (3, 3), (4, 2), (6, 4), (6, 6), (6, 13), (8, 3), (3, 20)]:
            for empty_capture in (False, True):
                for _ in range(games_per_config):
                    h0, s0, h1, s1, player = [n] * m, 0, [n] * m, 0, 0
                    while player != -1:
                        side = h0 if player == 0 else h1
                        house = rng.choice([i for i in range(m) if side[i] > 0])
                        pit = 1 + house if player == 0 else m + 2 + house
                        before = to_board(h0, s0, h1, s1)
                        h0, s0, h1, s1, nxt = move(h0, s0, h1, s1, player, house, empty_capture)
                        fh.write(json.dumps({"m": m, "empty_capture": empty_capture, "board": before,
                                             "player": player, "pit": pit, "next_board": to_board(h0, s0, h1, s1),
                                             "next_player": nxt}) + "\n")
                        player = nxt


def alphabeta(h0, s0, h1, s1, player, depth, root, alpha=float("-inf"), beta=float("inf"), counter=None,
              empty_capture=False):
    """Plain recursive depth-limited alpha-beta, store-difference evaluation
    from ``root``'s view, houses in order, no table. ``counter`` (a one-item
    list) counts nodes visited."""
    if counter is not None:
        counter[0] += 1
    if player == -1 or depth == 0:
        return float((s0 - s1) if root == 0 else (s1 - s0))
    side = h0 if player == 0 else h1
    maximize = player == root
    best = float("-inf") if maximize else float("inf")
    for i in range(len(side)):
        if not side[i]:
            continue
        v = alphabeta(*move(h0, s0, h1, s1, player, i, empty_capture), depth - 1, root, alpha, beta, counter,
                      empty_capture)
        if maximize:
            best = max(best, v)
            alpha = max(alpha, v)
        else:
            best = min(best, v)
            beta = min(beta, v)
        if alpha >= beta:
            break
    return best


if __name__ == "__main__":  # regenerate the golden file (from the repository root)
    generate("tests/data/kalah_golden.jsonl")

"""Write tests/data/oware_golden.jsonl from OpenSpiel's ``oware`` (needs the
``openspiel`` extra): seeded random games, one JSON line each, with every
position's board (houses then scores, our layout), the player to move (-1
at the end), the legal actions, the actions played and the returns.

    python tests/data/make_oware_golden.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyspiel

SIZES = [(6, 4, 40), (4, 5, 15), (3, 3, 40), (2, 2, 60), (1, 3, 10), (5, 1, 40), (3, 1, 40), (6, 6, 10)]


def board_of(state):
    player, scores, seeds = state.observation_string(0).split(" | ")
    return [int(x) for x in seeds.split()] + [int(x) for x in scores.split()]


def game(m, n, rnd):
    g = pyspiel.load_game("oware", {"num_houses_per_player": m, "num_seeds_per_house": n})
    s = g.new_initial_state()
    rec = {"houses": m, "seeds": n, "actions": [], "boards": [], "players": [], "legal": []}
    while True:
        rec["boards"].append(board_of(s))
        rec["players"].append(-1 if s.is_terminal() else s.current_player())
        if s.is_terminal():
            break
        rec["legal"].append(s.legal_actions())
        a = rnd.choice(s.legal_actions())
        rec["actions"].append(a)
        s.apply_action(a)
    rec["returns"] = s.returns()
    return rec


def main(path=Path(__file__).parent / "oware_golden.jsonl"):
    rnd = random.Random(2026)
    with open(path, "w") as f:
        for m, n, count in SIZES:
            for _ in range(count):
                f.write(json.dumps(game(m, n, rnd), separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()

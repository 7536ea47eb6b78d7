"""The multi-tree MCTS written once over the game protocol (kernels.game_mcts, kernels.cuda_game_mcts,
mcts.game): Oware's searches return what the former Oware-only kernels returned (values recorded from
kernels/oware_mcts.py at commit 25d35f4 of branch protocol, before it was deleted: root visits, moves and a
digest of every tree array)."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from jitsearch.games.oware import OwareState
from jitsearch.mcts.multi import tree_keys_for
from jitsearch.mcts.oware import analyse_oware


def _oware_states(seed, m, seeds, limit, k):
    rnd = random.Random(seed)
    out = [OwareState.initial(m, seeds, move_limit=limit)]
    s = out[0]
    while len(out) < k:
        s = s.play(rnd.choice(s.legal_moves()))
        if s.is_over:
            s = OwareState.initial(m, seeds, move_limit=limit)
        elif len(s.history) > 1:
            out.append(s)
    return out


def _digest(trees):
    h = hashlib.sha256()
    for name in trees.FIELDS:
        h.update(name.encode())
        h.update(np.ascontiguousarray(np.asarray(getattr(trees, name)).astype(np.int64)).tobytes())
    return h.hexdigest()


#: (states: seed, houses, seeds, move limit, count), options, then the old kernels' root visits, moves, digest.
OWARE_GOLDEN = [
    ((1, 6, 4, 200, 3), dict(iterations=300, playouts=2, leaves=1),
     [[54, 59, 49, 40, 50, 48], [50, 33, 71, 42, 60, 44], [49, 57, 46, 39, 54, 55]], [1, 8, 1],
     "7f6545daeba7bf29baafe9bad209f99e56bf28d77d333c9289bcc7f1ee6b4fe3"),
    ((2, 3, 2, 30, 4), dict(iterations=200, playouts=1, leaves=3, capacity=60),
     [[16, 37, 148], [38, 61, 102], [156, 45], [55, 86, 60]], [2, 5, 1, 4],
     "3ea26bcc13d12f7071c287ee332e43089554df292af13f85865066126eb9925c"),
    ((3, 6, 4, 200, 2), dict(iterations=200, playouts=2, leaves=2, eval="capture", eval_plies=3, imm=0.4),
     [[34, 37, 34, 32, 33, 30], [42, 39, 31, 30, 30, 28]], [1, 6],
     "2606860e07201443b690cec1cccf069e58085a96ccd8184fb57c72fe52a57864"),
    ((4, 4, 3, 60, 3), dict(iterations=150, playouts=3, leaves=1, eval="capture", eval_plies=0, imm=1.0,
                            side_weight=0.5, formula="sqrt"),
     [[39, 38, 38, 35], [47, 47, 31, 25], [36, 50, 30, 34]], [0, 4, 1],
     "9c94f998921f16965f9d2f00db9c08ca5f4d52eb7dfc1b85b1b8d55c461b4883"),
    ((5, 6, 4, 200, 2), dict(iterations=120, playouts=1, leaves=4, formula="sqrtlog"),
     [[21, 14, 32, 15, 20, 18], [21, 14, 22, 23, 17, 23]], [2, 9],
     "f3a40901a31cc544cc7d48deaf10c010f59dcfc5ce92af6299467f4280a8b2de"),
]


@pytest.mark.parametrize("spec, kw, visits, moves, digest", OWARE_GOLDEN)
def test_oware_search_returns_what_the_former_oware_kernels_returned(spec, kw, visits, moves, digest):
    seed, m, seeds, limit, k = spec
    r, trees = analyse_oware(_oware_states(seed, m, seeds, limit, k), tree_keys=tree_keys_for(seed, k),
                             backend="cpu", return_trees=True, threads=1, **kw)
    assert [[c["visits"] for c in p["children"]] for p in r["positions"]] == visits
    assert [p["move"] for p in r["positions"]] == moves
    assert _digest(trees) == digest

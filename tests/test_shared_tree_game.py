"""The shared-tree (tree-parallel) MCTS written once over the game protocol
(kernels.game_shared_tree, kernels.cuda_game_shared_tree): Oware's tree_parallel_oware returns what
the former Oware-only kernels returned (values recorded from kernels/oware_shared_tree.py at commit
a31c395 of main, before it was deleted: root visits, moves and a digest of every tree array)."""

from __future__ import annotations

import pytest

from jitsearch.mcts.multi import tree_keys_for
from jitsearch.mcts.oware import tree_parallel_oware

from test_game_mcts import _digest, _oware_states

#: (states: seed, houses, seeds, move limit, count), options, then the old kernels' root visits, moves, digest.
OWARE_SHARED_GOLDEN = [
    ((1, 6, 4, 200, 3), dict(iterations=300, playouts=2),
     [[54, 44, 46, 40, 62, 54], [66, 44, 43, 47, 56, 44], [59, 51, 40, 49, 51, 50]], [4, 6, 0],
     '4ab388ac4b6f1c3d6168c8c369daef2bd83f41d0b773d90ae66367d28d01c7fb'),
    ((2, 3, 2, 30, 4), dict(iterations=200, playouts=1, capacity=40),
     [[10, 34, 156], [49, 97, 54], [131, 69], [49, 95, 56]], [2, 4, 1, 4],
     'ed7c9dd0afec1b22d91d9f4dc7efde666f4b836291424f860c937f3665bd43ee'),
    ((3, 6, 4, 200, 2), dict(iterations=200, playouts=3, eval='capture', eval_plies=3, imm=0.4),
     [[35, 37, 33, 34, 32, 29], [38, 39, 33, 32, 29, 29]], [1, 7],
     'cdd37a52dccf55c4eb2692015ab17e9c70b8f4e1d539cc21f6bc9c47172952b0'),
    ((5, 4, 3, 40, 3), dict(iterations=150, playouts=2, formula='sqrtlog', eval='capture', eval_plies=5, side_weight=0.5, imm=0.3),
     [[41, 37, 36, 36], [52, 35, 33, 30], [63, 46, 41]], [0, 4, 0],
     '1957287853b199056ed1aef7554d5c3d684352e2e8b3274a89fcab06ab39243e'),
    ((6, 2, 2, 12, 3), dict(iterations=120, playouts=2, capacity=25),
     [[102, 18], [120], [120]], [0, 1, 1],
     '60aee2670d93ce8cf35fe8571fccc3434a81a59d25766c2772352356172fe829'),
]


@pytest.mark.parametrize("case", range(len(OWARE_SHARED_GOLDEN)))
def test_oware_shared_tree_equals_the_former_kernel(case):
    spec, kw, visits, moves, digest = OWARE_SHARED_GOLDEN[case]
    states = _oware_states(*spec)
    r, trees = tree_parallel_oware(states, tree_keys=tree_keys_for(7, len(states)), backend="cpu",
                                   return_trees=True, threads=1, **kw)
    assert [[c["visits"] for c in p["children"]] for p in r["positions"]] == visits
    assert [p["move"] for p in r["positions"]] == moves
    assert _digest(trees) == digest

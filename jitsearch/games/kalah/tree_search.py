"""Kalah's pieces of the single-tree MCTS (:attr:`Game.tree_search <jitsearch.games.protocol.Game>`,
:class:`~jitsearch.games.protocol.TreeSearch`): the HMCTS reward, the ``store`` and ``heuristic``
leaf evaluations, the progressive-bias prior, and the board-vector / packed playouts of
:mod:`.fast` behind the protocol's argument order (same moves, same margins).

The rewards are for ``player`` in [0, 1]: ``heuristic`` maps Siljander's weighted H1..H5
difference linearly into [0, 1] (HMCTS); ``store`` squashes the store difference
(:func:`jitsearch.kernels.evaluation.store_value`, whose scale is the board's seeds, the same
at every position of a game).
"""

from __future__ import annotations

from numba import njit

from ..protocol import TreeSearch
from . import fast
from .rules import W1, W2, W3, W4, W5
from .rules import build as build_rules

#: The kernels' reward code of ``eval=store`` (:data:`jitsearch.kernels.sentinels.REWARD_STORE`).
REWARD_STORE = 2
#: The store difference's squash scale is the board's seeds over this (at least 1 seed).
STORE_SCALE_DIVISOR = 8.0


def build(jit):
    """``(leaf_value, prior, root_value)`` compiled with ``jit``: ``leaf_value(board, cfg, player,
    reward_kind, total)`` the store (REWARD_STORE) or heuristic reward of a live board for
    ``player``, ``total`` the seeds on the board (``root_value``, computed once at the root: seeds
    are conserved); ``prior(board, cfg, player)`` the one-step heuristic H of ``player`` (a
    softmax of it is the prior)."""
    heuristic_of = build_rules(jit).heuristic

    def squash(d, total):  # jitsearch.kernels.evaluation.store_value (the same operations, the same bits)
        s = max(1.0, total / STORE_SCALE_DIVISOR)
        return 0.5 + d / (2.0 * (abs(d) + s))

    squash = jit(squash)

    def heuristic_reward(board, m, player, total):
        bound = (W1 + W2 + W4 + W5) * total + W3 * m
        d = heuristic_of(board, m, player) - heuristic_of(board, m, 1 - player)
        r = 0.5 + 0.5 * d / bound
        return min(1.0, max(0.0, r))

    heuristic_reward = jit(heuristic_reward)

    def root_value(board, cfg):
        total = 0
        for i in range(2 * cfg[0] + 2):
            total += board[i]
        return total

    def leaf_value(board, cfg, player, reward_kind, total):
        m = cfg[0]
        if reward_kind == REWARD_STORE:
            d = board[m + 1] - board[0]
            if player == 1:
                d = -d
            return squash(d, total)
        return heuristic_reward(board, m, player, total)

    def prior(board, cfg, player):
        return heuristic_of(board, cfg[0], player)

    return jit(leaf_value), jit(prior), jit(root_value)


def fast_key(cfg, to_the_end: bool):
    """The name of the fast playouts a tree of variant ``cfg`` runs (None: the generic playout)."""
    m = int(cfg[0])
    kind = fast.cpu_playout_kind(m)
    if kind == "generic":
        return None
    return f"{kind}{m}" + ("_end" if to_the_end else "")


_FAST: dict = {}


def fast_playouts(key: str, gen):
    """``(words, margin_playout, cut_playout)`` for a :func:`fast_key`: ``margin_playout(w, board,
    cfg, player, key) -> player 0's final margin`` (``w``: scratch of ``words`` uint64) and
    ``cut_playout(board, cfg, player, moves, key, max_plies) -> player to move at the end`` (None:
    the generic playout), the protocol playout's results. Compiled once per process."""
    if (key, id(gen)) not in _FAST:
        _FAST[key, id(gen)] = (_fast_playouts(key, gen), gen)
    return _FAST[key, id(gen)][0]


def _fast_playouts(key: str, gen):
    to_the_end = key.endswith("_end")
    kind = "simd" if key.startswith("simd") else "packed"
    m = int(key[len(kind):].removesuffix("_end"))
    inline = fast.stable_jit(njit(cache=True, inline="always"))
    make = fast.make_simd_margin if kind == "simd" else fast.make_packed_margin
    words, margin = make(inline, m, gen)

    def margin_playout(w, board, cfg, player, key):
        mg, _ = margin(w, board, player, cfg[1], key)
        return mg

    cut = None
    if kind == "simd" and not to_the_end:
        simd_cut = fast.make_simd_playout(inline, m, gen)

        def cut_playout(board, cfg, player, moves, key, max_plies):
            _, end = simd_cut(board, cfg[0], player, cfg[1], key, max_plies, moves)
            return end

        cut = inline(cut_playout)
    return words, inline(margin_playout), cut


TREE_SEARCH = TreeSearch(rewards=("heuristic",), evals=("store", "heuristic"), build=build, fast_key=fast_key,
                         fast_playouts=fast_playouts)

"""An array-based MCTS tree for any game of the protocol (:mod:`jitsearch.games.protocol`) and
the Numba kernel, written once over a :class:`~jitsearch.games.protocol.Game`, that grows it.

Struct of arrays, every node preallocated (``capacity`` of them):

* ``parent``, ``first_child``, ``num_children`` (children of a node are
  contiguous), ``move`` (the move that led to the node);
* ``to_move`` (player to move at the node, ``TERMINAL`` = -1 once the game is
  over) and ``mover_in`` (the player who moved *into* the node);
* ``visits`` and ``value``: the rewards are credited to the player who moved
  into the node, so a player moving twice in a row (Kalah's extra turn) needs no
  special case and no sign flips: the parent chooses among its children by
  their own ``value / visits``, since every child was moved into by the
  parent's player to move;
* ``imm``: the implicit minimax value in [0, 1] for the same player
  (``UNEVALUATED`` = -1 until a backup reaches the node; kept only with
  ``imm=`` alpha > 0; see :mod:`jitsearch.kernels.evaluation`);
* ``prior`` (progressive bias), ``proven`` (MCTS-Solver: ``UNKNOWN``, or
  ``WIN`` / ``DRAW`` / ``LOSS`` for ``mover_in`` under perfect play);
* ``boards[capacity, cells]``: each node's position (the game's board dtype).

Without progressive bias, children are expanded lazily: a new child's
``to_move`` is ``UNBUILT`` and its board unset until it is first selected
(most children of a search are never visited); the search then computes both
from its parent's, so the trees and results are the same as with eager expansion.

A game with a record (Oware's repetitions: :attr:`Game.node_record
<jitsearch.games.protocol.Game>` set) gets each node's record by replaying the moves of its
path from the root's position and record on every descent.

Rewards are 1 / 0.5 / 0 for a win / draw / loss of the player they are credited to (the sign of
the game's margin); a leaf evaluation (``playout_depth``, ``eval=``) is the game's own
(its :attr:`SearchEval.rewards <jitsearch.games.protocol.SearchEval>`: Kalah's HMCTS heuristic
and store difference, the same as every other MCTS's), else its
:attr:`~jitsearch.games.protocol.Game.search_eval`'s estimate, else its ``evaluate`` squashed as the store difference is (:func:`jitsearch.kernels.evaluation.store_value`
with a scale of 8).

Named sentinels: ``NO_NODE`` (-1, no parent / not expanded), ``TERMINAL``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .._jit import stable_ids
from ..games.playout import make_playout
from ..games.protocol import GAME_OVER
from ..kernels.game_playouts import INLINE_RNG
from ..kernels.sentinels import (FORMULA_SQRT, FORMULA_UCB1, NO_NODE, NO_PLY_CAP, REWARD_HEURISTIC, REWARD_STORE,
                                 REWARD_WIN, TERMINAL, UNEVALUATED)
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

#: ``to_move`` of a child whose board is not computed yet (lazy expansion, see :func:`make_kernels`).
UNBUILT = 2
UNKNOWN, WIN, DRAW, LOSS = 0, 1, 2, 3

# params vector (float64) indices: P_REWARD holds a kernel reward code (REWARD_*), P_MAX_PLIES the plies a
# playout plays before it is scored (NO_PLY_CAP: to the end), P_IMM the implicit minimax weight alpha,
# P_EVAL_PARAM the parameter of the game's search_eval (Oware's side weight)
P_C, P_FORMULA, P_PB, P_REWARD, P_MAX_PLIES, P_SOLVER, P_PLAYOUTS, P_IMM, P_EVAL_PARAM = range(9)
N_PARAMS = 9
#: The scale of the squash of a game's ``evaluate`` (the store difference's at 64 seeds).
EVALUATE_SCALE = 8.0


class MCTSTree:
    """Preallocated node arrays (see the module docstring)."""

    def __init__(self, capacity: int, cells: int, dtype=np.int32, *, max_bytes: int | None = DEFAULT_MAX_BYTES):
        """``capacity`` nodes (1..2**31-1, int32 indices) for boards of ``cells`` entries of
        ``dtype``; the arrays' size is checked against ``max_bytes`` (and physical memory)
        before anything is allocated (``None``: the caller has checked it)."""
        from .._checks import check_int, check_max_bytes, cap_to_physical_memory

        self.capacity = check_int("capacity", capacity, 1, (1 << 31) - 1)
        self.cells = check_int("cells", cells, 1, 1 << 16)
        dtype = np.dtype(dtype)
        if max_bytes is not None:
            check_bytes(self.capacity * self.bytes_per_node(self.cells, dtype),
                        cap_to_physical_memory(check_max_bytes("max_bytes", max_bytes)),
                        f"an MCTS tree of {self.capacity:,} nodes", "lower the capacity")
        c = self.capacity
        self.parent = np.full(c, NO_NODE, dtype=np.int32)
        self.first_child = np.full(c, NO_NODE, dtype=np.int32)
        self.num_children = np.zeros(c, dtype=np.int32)
        self.move = np.full(c, -1, dtype=np.int32)
        self.to_move = np.zeros(c, dtype=np.int8)
        self.mover_in = np.zeros(c, dtype=np.int8)
        self.visits = np.zeros(c, dtype=np.float64)
        self.value = np.zeros(c, dtype=np.float64)
        self.imm = np.zeros(c, dtype=np.float64)  # written when a node is created (set_root, expansion)
        self.prior = np.zeros(c, dtype=np.float64)
        self.proven = np.zeros(c, dtype=np.int8)
        self.boards = np.zeros((c, self.cells), dtype=dtype)
        self.size = np.zeros(1, dtype=np.int64)

    @staticmethod
    def bytes_per_node(cells: int, dtype=np.int32) -> int:
        return 4 * 4 + 1 + 1 + 8 * 4 + 1 + np.dtype(dtype).itemsize * cells

    def arrays(self):
        return (self.parent, self.first_child, self.num_children, self.move, self.to_move, self.mover_in,
                self.visits, self.value, self.imm, self.prior, self.proven, self.boards, self.size)

    def set_root(self, board, player: int):
        """Make node 0 the position ``board`` (``cells`` integers) with ``player`` to move (-1: over)."""
        from .._checks import check_int

        player = check_int("player", player, -1, 1)
        b = np.asarray(board)
        if b.shape != (self.cells,) or b.dtype.kind not in "iu":
            raise ValueError(f"board must hold {self.cells} integers, got {b.dtype} {b.shape}")
        self.size[0] = 1
        self.parent[0] = NO_NODE
        self.first_child[0] = NO_NODE
        self.num_children[0] = 0
        self.boards[0] = board
        self.to_move[0] = player
        self.mover_in[0] = 1 - player if player >= 0 else 0
        self.visits[0] = 0.0
        self.value[0] = 0.0
        self.imm[0] = UNEVALUATED
        self.proven[0] = UNKNOWN

    def children(self, node: int = 0) -> range:
        """Indices of ``node``'s children (empty while it is not expanded)."""
        from .._checks import check_int

        node = check_int("node", node, 0, max(int(self.size[0]), 1) - 1)
        f = int(self.first_child[node])
        return range(f, f + int(self.num_children[node])) if f >= 0 else range(0)


@stable_ids(njit(cache=True, inline="always"))
def child_score(visits, value, prior, child, parent_visits, c, formula, pb):
    """Selection score of a visited child (exploitation + exploration [+ bias])."""
    n = visits[child]
    q = value[child] / n
    if formula == FORMULA_UCB1:
        u = c * math.sqrt(math.log(parent_visits) / n)
    elif formula == FORMULA_SQRT:
        u = c * math.sqrt(parent_visits) / n
    else:
        u = c * math.sqrt(math.log(parent_visits)) / math.sqrt(n)
    if pb != 0.0:
        u += pb * prior[child] * math.sqrt(parent_visits) / n
    return q + u


@stable_ids(njit(cache=True))  # fixed ids: the kernels that call it load from the disk cache
def select_child(first_child, num_children, visits, value, imm, prior, proven, node, c, formula, pb, solver, alpha):
    """The child to descend into: the first unvisited one (house order), else
    the best score; with the solver, proven children are never chosen.
    Returns NO_NODE if every child is proven. With ``alpha`` > 0 the
    exploitation term of an evaluated child is (1 - alpha) w/n + alpha imm
    (implicit minimax backups)."""
    f = first_child[node]
    best = NO_NODE
    best_score = -math.inf
    parent_visits = max(visits[node], 1.0)
    for ch in range(f, f + num_children[node]):
        if solver and proven[ch] != UNKNOWN:
            continue
        if visits[ch] == 0.0:
            return ch
        s = child_score(visits, value, prior, ch, parent_visits, c, formula, pb)
        if alpha > 0.0 and imm[ch] >= 0.0:  # (1 - alpha) w/n + alpha imm in place of w/n
            s += alpha * (imm[ch] - value[ch] / visits[ch])
        if s > best_score:
            best_score = s
            best = ch
    return best


@stable_ids(njit(cache=True))  # fixed ids: the kernels that call it load from the disk cache
def backup(parent, mover_in, visits, value, node, count, reward_p0_sum):
    """Add ``count`` visits and the rewards (summed, from player 0's view) to
    ``node`` and its ancestors, each credited to the player who moved into it."""
    while node != NO_NODE:
        visits[node] += count
        if mover_in[node] == 0:
            value[node] += reward_p0_sum
        else:
            value[node] += count - reward_p0_sum
        node = parent[node]


@stable_ids(njit(cache=True))  # fixed ids: the kernels that call it load from the disk cache
def imm_backup(parent, first_child, num_children, to_move, mover_in, imm, leaf, leaf_value):
    """Implicit minimax backup from ``leaf`` to the root: the leaf gets the
    minimax value of its evaluated children if it has any, else
    ``leaf_value`` (its static evaluation for its ``mover_in``); each
    ancestor the best of its evaluated children for its player to move,
    stored for its own ``mover_in`` (flipped unless an extra turn led in)."""
    node = leaf
    while node != NO_NODE:
        best = -1.0
        f = first_child[node]
        if f != NO_NODE:
            for ch in range(f, f + num_children[node]):
                best = max(best, imm[ch])
        if best >= 0.0:
            imm[node] = best if mover_in[node] == to_move[node] else 1.0 - best
        elif node == leaf:
            imm[node] = leaf_value
        node = parent[node]


@stable_ids(njit(cache=True))  # fixed ids: the kernels that call it load from the disk cache
def solver_update(parent, first_child, num_children, to_move, mover_in, proven, node):
    """MCTS-Solver: from a newly proven ``node`` upwards, prove each parent
    whose value is now decided. A parent is a win for its player to move p if
    some child (all moved into by p) is a WIN; when every child is proven its
    value for p is the best of theirs. Stored from the parent's ``mover_in``
    view: the same for an extra turn (mover_in == p), flipped otherwise."""
    while True:
        par = parent[node]
        if par == NO_NODE or proven[par] != UNKNOWN:
            return
        p = to_move[par]
        f = first_child[par]
        result_for_p = UNKNOWN
        all_proven = True
        best = LOSS
        for ch in range(f, f + num_children[par]):
            st = proven[ch]
            if st == WIN:
                result_for_p = WIN
                break
            if st == UNKNOWN:
                all_proven = False
            elif st == DRAW:
                best = DRAW
        if result_for_p == UNKNOWN:
            if not all_proven:
                return
            result_for_p = best
        if mover_in[par] == p or result_for_p == DRAW:
            proven[par] = result_for_p
        else:
            proven[par] = LOSS if result_for_p == WIN else WIN
        node = par


class Kernels(NamedTuple):
    """The compiled kernels of one game (and fast playout) (:func:`make_kernels`)."""

    iterate: object
    expand: object
    select_batch: object
    backup_batch: object


def _named(fn, tag):
    fn.__qualname__ = fn.__name__ = f"{fn.__name__}_{tag}"
    return fn


def make_kernels(game, fast_key=None, to_the_end=False) -> Kernels:
    """Compile the single-tree kernels of ``game``: ``iterate`` (:func:`mcts_iterate`'s
    signature, below), ``expand`` (every child of a node with its board) and ``select_batch``
    (leaves for a batched evaluation with virtual loss), ``backup_batch`` (their results backed up).

    ``fast_key``: the game's fast playouts (``tree_key`` of :attr:`Game.fast_playouts
    <jitsearch.games.protocol.Game>`), used for random playouts to the end (reward
    ``win``, no ``playout_depth`` or ``eval``) and, where given, every other playout; all give
    the same margins and boards from the same streams, so the kernels grow the same trees.
    ``to_the_end`` (with ``fast_key``): a kernel for searches whose leaves get random playouts
    to the end only (:meth:`jitsearch.mcts.config.MCTSConfig.plays_to_the_end`): it leaves out
    the cut playouts and the evaluations (a faster first compile) and raises ``ValueError`` if
    asked for them.
    """
    inline = stable_ids(njit(inline="always"))
    rules = game.build(inline)
    legal, apply, margin, evaluate = rules.legal, rules.apply, rules.margin, rules.evaluate
    gen = INLINE_RNG
    stream_key = gen.stream_key
    playout = make_playout(inline, rules, gen, f"tree_{game.name}")
    record = game.node_record is not None
    se = game.search_eval
    tag = f"{game.name}_{fast_key or 'generic'}" + ("_end" if to_the_end else "")
    packed = fast_key is not None
    words = 1
    fast_cut = False
    if packed:
        words, playout_margin, cut_playout = game.fast_playouts.tree_playouts(fast_key, gen)
        fast_cut = cut_playout is not None
    if not packed:
        def playout_margin(w, board, cfg, player, key):
            return 0

        playout_margin = inline(_named(playout_margin, tag))
    if not fast_cut:
        def cut_playout(board, cfg, player, moves, key, max_plies):
            return 0

        cut_playout = inline(_named(cut_playout, tag))
    if se is not None and se.rewards is not None:  # the game's own rewards: ``store`` (REWARD_STORE), else its first
        reward = se.rewards(inline)
        store = se.evals.index("store") if "store" in se.evals else 0

        def evaluation(board, cfg, player, reward_kind, param):
            return reward(board, cfg, player, np.int64(store if reward_kind == REWARD_STORE else 0))
    else:
        if se is not None:
            se_value, se_scale = se.build(inline)

            def estimate(board, cfg, param):
                v = se_value(board, cfg, param)
                return v, max(1.0, se_scale(board, cfg, param) / 8.0)
        else:
            def estimate(board, cfg, param):
                return evaluate(board, cfg, np.int64(0)), EVALUATE_SCALE

        estimate = inline(_named(estimate, tag))

        def evaluation(board, cfg, player, reward_kind, param):
            v, s = estimate(board, cfg, param)
            r = 0.5 + v / (2.0 * (abs(v) + s))
            return r if player == 0 else 1.0 - r

    evaluation = inline(_named(evaluation, tag))
    if se is not None and se.prior is not None:
        prior_of = se.prior(inline)
    else:
        def prior_of(board, cfg, player):
            e = evaluate(board, cfg, np.int64(1 - player))
            return e if player == 0 else -e

        prior_of = inline(_named(prior_of, tag))

    def outcome(board, cfg):
        """1 / 0.5 / 0 for a win / draw / loss of player 0 by the margin's sign."""
        d = margin(board, cfg)
        if d > 0:
            return 1.0
        if d < 0:
            return 0.0
        return 0.5

    outcome = inline(_named(outcome, tag))

    def build_node(parent, move, to_move, mover_in, boards, node, cfg, hist, cur):
        """The position of a lazily expanded child (``to_move`` == UNBUILT) from its parent's:
        the board the eager expansion would have written, and its player to move."""
        par = parent[node]
        for i in range(boards.shape[1]):
            boards[node, i] = boards[par, i]
        nxt, _ = apply(boards[node], cfg, np.int64(mover_in[node]), np.int64(move[node]), hist, cur)
        to_move[node] = nxt

    build_node = inline(_named(build_node, tag))

    def expand_node(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior, proven,
                    boards, size, node, cfg, pb, moves, lazy, hist, cur):
        """Create every child of ``node`` (each left UNBUILT when ``lazy``: no progressive bias
        needs their boards); returns how many (0 if the pool is full)."""
        player = np.int64(to_move[node])
        count = legal(boards[node], cfg, player, moves, hist, cur)
        start = size[0]
        if start + count > parent.shape[0]:
            return 0
        n = boards.shape[1]
        top = -math.inf
        for j in range(count):
            ch = start + j
            parent[ch] = node
            first_child[ch] = NO_NODE
            num_children[ch] = 0
            move[ch] = moves[j]
            mover_in[ch] = player
            visits[ch] = 0.0
            value[ch] = 0.0
            imm[ch] = UNEVALUATED
            proven[ch] = UNKNOWN
            if lazy:
                to_move[ch] = UNBUILT
            else:
                for i in range(n):
                    boards[ch, i] = boards[node, i]
                nxt, _ = apply(boards[ch], cfg, player, np.int64(moves[j]), hist, cur)
                to_move[ch] = nxt
            if pb != 0.0:
                prior[ch] = prior_of(boards[ch], cfg, player)
                top = max(top, prior[ch])
            else:
                prior[ch] = 0.0
        if pb != 0.0:  # softmax of the one-step prior
            total = 0.0
            for j in range(count):
                prior[start + j] = math.exp(prior[start + j] - top)
                total += prior[start + j]
            for j in range(count):
                prior[start + j] /= total
        first_child[node] = start
        num_children[node] = count
        size[0] = start + count
        return count

    expand_node = inline(_named(expand_node, tag))

    def step_into(parent, move, to_move, mover_in, boards, node, cfg, board, hist, cur):
        """Enter ``node``: with a record, play its move on the replayed ``board`` (its record
        and cursor follow) and build the node from it; else build it from its parent's board."""
        if record:
            nxt, cur = apply(board, cfg, np.int64(mover_in[node]), np.int64(move[node]), hist, cur)
            if to_move[node] == UNBUILT:
                for i in range(boards.shape[1]):
                    boards[node, i] = board[i]
                to_move[node] = nxt
        elif to_move[node] == UNBUILT:
            build_node(parent, move, to_move, mover_in, boards, node, cfg, hist, cur)
        return cur

    step_into = inline(_named(step_into, tag))

    def descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven,
                boards, size, cfg, c, formula, pb, solver, moves, alpha, board, hist, root_cur):
        """Selection from the root to a leaf, then expansion: a non-terminal leaf gets all its
        children and the first one is returned (the leaf itself if the pool is full). Every node
        on the path, the returned one included, is built. Returns (node, its cursor)."""
        node = 0
        cur = root_cur
        if record:
            for i in range(boards.shape[1]):
                board[i] = boards[0, i]
        while first_child[node] != NO_NODE and to_move[node] != TERMINAL:
            ch = select_child(first_child, num_children, visits, value, imm, prior, proven, node, c, formula, pb,
                              solver, alpha)
            if ch == NO_NODE:
                break
            node = ch
            cur = step_into(parent, move, to_move, mover_in, boards, node, cfg, board, hist, cur)
        if to_move[node] != TERMINAL and first_child[node] == NO_NODE:
            if expand_node(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior,
                           proven, boards, size, node, cfg, pb, moves, pb == 0.0, hist, cur) > 0:
                node = first_child[node]
                cur = step_into(parent, move, to_move, mover_in, boards, node, cfg, board, hist, cur)
        return node, cur

    descend = inline(_named(descend, tag))

    def leaf_playouts(board, boards, node, cfg, player, seed, key_index, k_playouts, max_plies, reward_kind, param,
                      moves, hist, cur):
        """Player 0's summed reward of ``k_playouts`` playouts from ``node``, each cut at
        ``max_plies`` plies (a finished game scores its result, a cut one, and every HMCTS
        playout, the evaluation)."""
        if to_the_end:
            raise ValueError("this MCTS kernel plays random playouts to the end only")
        n = boards.shape[1]
        reward0 = 0.0
        for k in range(k_playouts):
            for i in range(n):
                board[i] = boards[node, i]
            key = stream_key(seed, key_index, k)
            if fast_cut:
                end_player = cut_playout(board, cfg, player, moves, key, max_plies)
            else:
                _, end_player, _ = playout(board, cfg, player, moves, hist, cur, key, max_plies)
            if reward_kind != REWARD_HEURISTIC and end_player == GAME_OVER:
                reward0 += outcome(board, cfg)
            else:  # HMCTS, or a playout cut at its depth: the evaluation
                reward0 += evaluation(board, cfg, np.int64(0), reward_kind, param)
        return reward0

    leaf_playouts = inline(_named(leaf_playouts, tag))

    def leaf_imm(parent, first_child, num_children, to_move, mover_in, imm, boards, node, cfg, reward_kind, param):
        """Back the leaf's static evaluation (for the player who moved into it) up the implicit
        minimax values."""
        if to_the_end:
            raise ValueError("this MCTS kernel keeps no implicit minimax values (imm= needs eval=)")
        if to_move[node] == TERMINAL:
            v0 = outcome(boards[node], cfg)
            if mover_in[node] == 1:
                v0 = 1.0 - v0
        else:
            v0 = evaluation(boards[node], cfg, np.int64(mover_in[node]), reward_kind, param)
        imm_backup(parent, first_child, num_children, to_move, mover_in, imm, node, v0)

    leaf_imm = inline(_named(leaf_imm, tag))

    def mcts_iterate(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven,
                     boards, size, cfg, params, seed, first_iteration, iterations, hist, root_cur, num_moves):
        """Run ``iterations`` MCTS iterations on the tree (root = node 0) of the variant ``cfg``.

        ``hist`` holds the root's record and room for a game from it, ``root_cur`` its cursor
        (games without a record: :func:`jitsearch.games.protocol.no_record`'s and (0, 0, 0)),
        ``num_moves`` the variant's most legal moves. Iteration ``i`` (counted from
        ``first_iteration``) draws its playouts from the streams (seed, i, k), k < playouts per
        leaf, so a search is a pure function of its seed and budget. Returns the iterations
        done (fewer when the solver proves the root). A playout plays at most
        ``params[P_MAX_PLIES]`` plies and is scored by the reward code ``params[P_REWARD]``
        (:mod:`jitsearch.kernels.evaluation`); with ``params[P_IMM]`` > 0 every backup also
        updates the implicit minimax values (:func:`imm_backup`) and selection mixes them in.
        """
        c = params[P_C]
        formula = np.int64(params[P_FORMULA])
        pb = params[P_PB]
        reward_kind = np.int64(params[P_REWARD])
        max_plies = np.int64(params[P_MAX_PLIES])
        solver = params[P_SOLVER] != 0.0
        k_playouts = np.int64(params[P_PLAYOUTS])
        alpha = params[P_IMM]
        param = params[P_EVAL_PARAM]
        use_packed = packed and reward_kind == REWARD_WIN and max_plies == NO_PLY_CAP
        n = boards.shape[1]
        moves = np.empty(num_moves, dtype=np.int64)
        board = np.empty(n, dtype=boards.dtype)
        w = np.zeros(words, dtype=np.uint64)
        done = 0
        for it in range(iterations):
            if solver and proven[0] != UNKNOWN:
                break
            node, cur = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm,
                                prior, proven, boards, size, cfg, c, formula, pb, solver, moves, alpha, board, hist,
                                root_cur)
            # evaluation
            reward0 = 0.0
            if to_move[node] == TERMINAL:
                r = outcome(boards[node], cfg)
                reward0 = r * k_playouts
                if solver and proven[node] == UNKNOWN:
                    mine = r if mover_in[node] == 0 else 1.0 - r
                    proven[node] = WIN if mine == 1.0 else (LOSS if mine == 0.0 else DRAW)
                    solver_update(parent, first_child, num_children, to_move, mover_in, proven, node)
            elif use_packed:  # random playouts to the end, scored by player 0's final margin
                key_index = first_iteration + it
                mover = np.int64(to_move[node])
                for k in range(k_playouts):
                    mg = playout_margin(w, boards[node], cfg, mover, stream_key(seed, key_index, k))
                    if mg > 0:
                        reward0 += 1.0
                    elif mg == 0:
                        reward0 += 0.5
            else:
                reward0 = leaf_playouts(board, boards, node, cfg, np.int64(to_move[node]), seed,
                                        np.int64(first_iteration + it), k_playouts, max_plies, reward_kind, param,
                                        moves, hist, cur)
            backup(parent, mover_in, visits, value, node, np.float64(k_playouts), reward0)
            if alpha > 0.0:  # the leaf's static evaluation, for the player who moved into it
                leaf_imm(parent, first_child, num_children, to_move, mover_in, imm, boards, node, cfg, reward_kind,
                         param)
            done += 1
        return done

    def expand(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior, proven,
               boards, size, node, cfg, pb, moves, hist, cur):
        """Create every child of ``node`` with its board; returns how many (0 if the pool is full)."""
        return expand_node(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior,
                           proven, boards, size, node, cfg, pb, moves, False, hist, cur)

    def select_batch(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven,
                     boards, size, cfg, params, batch, virtual_loss, leaves, hist, root_cur, num_moves):
        """Select up to ``batch`` leaves for one evaluation launch.

        Each descent adds ``virtual_loss`` visits with no reward to every node on its path (a
        virtual loss for the player credited there), so the next descent prefers other
        branches; a leaf reached unexpanded is expanded and its first child taken. Distinct
        leaves come out unless the tree is smaller than the batch (then a finished position may
        repeat). Returns how many leaves were written to ``leaves``; undo with
        :func:`backup_batch`."""
        c = params[P_C]
        formula = np.int64(params[P_FORMULA])
        pb = params[P_PB]
        moves = np.empty(num_moves, dtype=np.int64)
        board = np.empty(boards.shape[1], dtype=boards.dtype)
        count = 0
        for j in range(batch):
            node, _ = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior,
                              proven, boards, size, cfg, c, formula, pb, False, moves, 0.0, board, hist, root_cur)
            leaves[count] = node
            count += 1
            x = node
            while x != NO_NODE:
                visits[x] += virtual_loss
                x = parent[x]
        return count

    def backup_batch(parent, mover_in, to_move, visits, value, boards, cfg, leaves, count, virtual_loss, wins, draws,
                     playouts):
        """Take the virtual losses back and add each leaf's results: ``wins`` / ``draws`` for
        the leaf's player to move over ``playouts`` playouts (finished leaves are scored
        exactly, ``playouts`` times)."""
        j_eval = 0
        for j in range(count):
            leaf = leaves[j]
            x = leaf
            while x != NO_NODE:
                visits[x] -= virtual_loss
                x = parent[x]
            if to_move[leaf] == TERMINAL:
                reward0 = outcome(boards[leaf], cfg) * playouts
            else:
                mine = wins[j_eval] + 0.5 * draws[j_eval]
                reward0 = mine if to_move[leaf] == 0 else playouts - mine
                j_eval += 1
            backup(parent, mover_in, visits, value, leaf, np.float64(playouts), reward0)

    kernel = stable_ids(njit(cache=True, nogil=True))
    return Kernels(*(kernel(_named(fn, tag)) for fn in (mcts_iterate, expand, select_batch, backup_batch)))


_KERNELS: dict = {}


def kernels(game, cfg=None, to_the_end: bool = False) -> Kernels:
    """``game``'s kernels for trees of the variant ``cfg``: with the game's fast playouts where
    it has them (``tree_key`` of :attr:`Game.fast_playouts <jitsearch.games.protocol.Game>`: Kalah's board
    vectors for m <= 7 on a CPU with AVX2 and BMI2, else packed boards from 4 houses on; at
    Kalah(6,4) packed boards measured about 1.3x the simulations/s of the generic kernel, board
    vectors 1.2x that to the end, 1.3x with ``eval=store``, 1.6x for HMCTS), else the generic
    kernel (same trees). ``to_the_end``: for a search that plays random playouts to the end only
    (:meth:`~jitsearch.mcts.config.MCTSConfig.plays_to_the_end`), a smaller kernel with a faster
    first compile (same trees). Compiled once per process (cached on disk)."""
    fast = game.fast_playouts
    key = None if fast is None or cfg is None else fast.tree_key(cfg, bool(to_the_end))
    if key is None:
        to_the_end = False
    k = (game, key, bool(to_the_end))
    if k not in _KERNELS:
        _KERNELS[k] = make_kernels(game, key, bool(to_the_end))
    return _KERNELS[k]

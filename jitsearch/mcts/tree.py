"""An array-based MCTS tree for Kalah and the Numba kernel that grows it.

Struct of arrays, every node preallocated (``capacity`` of them):

* ``parent``, ``first_child``, ``num_children`` (children of a node are
  contiguous), ``move`` (the pit that led to the node);
* ``to_move`` (player to move at the node, ``TERMINAL`` = -1 once the game is
  over) and ``mover_in`` (the player who moved *into* the node);
* ``visits`` and ``value``: the rewards are credited to the player who moved
  into the node, so a Kalah extra turn (same player moving twice) needs no
  special case and no sign flips: the parent chooses among its children by
  their own ``value / visits``, since every child was moved into by the
  parent's player to move;
* ``imm``: the implicit minimax value in [0, 1] for the same player
  (``UNEVALUATED`` = -1 until a backup reaches the node; kept only with
  ``imm=`` alpha > 0; see :mod:`jitsearch.kernels.evaluation`);
* ``prior`` (progressive bias), ``proven`` (MCTS-Solver: ``UNKNOWN``, or
  ``WIN`` / ``DRAW`` / ``LOSS`` for ``mover_in`` under perfect play);
* ``boards[capacity, 2m+2]``: each node's position.

Without progressive bias, children are expanded lazily: a new child's
``to_move`` is ``UNBUILT`` and its board unset until it is first selected
(most children of a search are never visited); the search then computes both
from its parent's (:func:`build_node`), so the trees and results are the
same as with eager expansion.

Rewards are 1 / 0.5 / 0 for a win / draw / loss of the player they are
credited to; the heuristic reward (HMCTS) maps Siljander's weighted H1..H5
difference linearly into [0, 1] (see :func:`heuristic_reward`); ``eval=store``
squashes the store difference (:func:`jitsearch.kernels.evaluation.store_value`).

Named sentinels: ``NO_NODE`` (-1, no parent / not expanded), ``TERMINAL``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

from ..games.kalah import apply_move, heuristic_of, legal_moves
from ..games.kalah.rules import W1, W2, W3, W4, W5
from ..kernels.playouts import cpu_cut_playout, cpu_margin_kernel, cpu_playout_kind, playout, stable_jit, stream_key
from ..kernels.evaluation import store_value
from ..kernels.sentinels import (FORMULA_SQRT, FORMULA_UCB1, NO_NODE, NO_PLY_CAP, REWARD_HEURISTIC, REWARD_STORE,
                                 REWARD_WIN, TERMINAL, UNEVALUATED)
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

#: ``to_move`` of a child whose board is not computed yet (lazy expansion, see :func:`expand_node`).
UNBUILT = 2
UNKNOWN, WIN, DRAW, LOSS = 0, 1, 2, 3

# params vector (float64) indices: P_REWARD holds a kernel reward code (REWARD_*), P_MAX_PLIES the plies a
# playout plays before it is scored (NO_PLY_CAP: to the end), P_IMM the implicit minimax weight alpha
P_C, P_FORMULA, P_PB, P_REWARD, P_MAX_PLIES, P_SOLVER, P_PLAYOUTS, P_EMPTY_CAPTURE, P_IMM = range(9)
N_PARAMS = 9


class MCTSTree:
    """Preallocated node arrays (see the module docstring)."""

    def __init__(self, capacity: int, houses: int, *, max_bytes: int | None = DEFAULT_MAX_BYTES):
        """``capacity`` nodes (1..2**31-1, int32 indices) for Kalah with
        ``houses`` houses a side; the arrays' size is checked against
        ``max_bytes`` (and physical memory) before anything is allocated
        (``None``: the caller has checked it)."""
        from ..games.kalah import MAX_HOUSES
        from .._checks import check_int, check_max_bytes, cap_to_physical_memory

        self.capacity = check_int("capacity", capacity, 1, (1 << 31) - 1)
        self.houses = check_int("houses", houses, 1, MAX_HOUSES)
        if max_bytes is not None:
            check_bytes(self.capacity * self.bytes_per_node(self.houses), cap_to_physical_memory(check_max_bytes("max_bytes", max_bytes)),
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
        self.boards = np.zeros((c, 2 * houses + 2), dtype=np.int32)
        self.size = np.zeros(1, dtype=np.int64)

    @staticmethod
    def bytes_per_node(houses: int) -> int:
        return 4 * 4 + 1 + 1 + 8 * 4 + 1 + 4 * (2 * houses + 2)

    def arrays(self):
        return (self.parent, self.first_child, self.num_children, self.move, self.to_move, self.mover_in,
                self.visits, self.value, self.imm, self.prior, self.proven, self.boards, self.size)

    def set_root(self, board, player: int):
        """Make node 0 the position ``board`` (2m+2 seed counts) with ``player`` to move (-1: over)."""
        from .._checks import check_int

        player = check_int("player", player, -1, 1)
        b = np.asarray(board)
        if b.shape != (2 * self.houses + 2,) or b.dtype.kind not in "iu":
            raise ValueError(f"board must hold {2 * self.houses + 2} integer seed counts, got {b.dtype} {b.shape}")
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


@njit(cache=True, inline="always")
def heuristic_reward(board, m, player, total):
    """HMCTS reward for ``player`` in [0, 1]: 0.5 + 0.5 * (H(player) -
    H(opponent)) / bound, H the weighted H1..H5 of Siljander's HMCTS and bound the
    largest possible difference for ``total`` seeds on ``m`` houses."""
    bound = (W1 + W2 + W4 + W5) * total + W3 * m
    d = heuristic_of(board, m, player) - heuristic_of(board, m, 1 - player)
    r = 0.5 + 0.5 * d / bound
    return min(1.0, max(0.0, r))


_store_value = njit(cache=True, inline="always")(store_value)


@njit(cache=True, inline="always")
def eval_reward(board, m, player, total, reward_kind):
    """The evaluation of a live position for ``player`` in [0, 1]: the
    squashed store difference for REWARD_STORE, else Siljander's (HMCTS) heuristic
    (:func:`heuristic_reward`)."""
    if reward_kind == REWARD_STORE:
        d = board[m + 1] - board[0]
        if player == 1:
            d = -d
        return _store_value(d, total)
    return heuristic_reward(board, m, player, total)


@njit(cache=True, inline="always")
def outcome_reward(board, m, player):
    """1 / 0.5 / 0 for a win / draw / loss of ``player`` by the store difference."""
    d = board[m + 1] - board[0]
    if player == 1:
        d = -d
    if d > 0:
        return 1.0
    if d < 0:
        return 0.0
    return 0.5


@njit(cache=True, inline="always")
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True, inline="always")
def build_node(parent, move, to_move, mover_in, boards, node, m, empty_capture):
    """Compute the position of a lazily expanded child (``to_move`` ==
    UNBUILT) from its parent's: the board the eager expansion would have
    written, and its player to move."""
    par = parent[node]
    for i in range(boards.shape[1]):
        boards[node, i] = boards[par, i]
    to_move[node] = apply_move(boards[node], m, mover_in[node], move[node], empty_capture)


@njit(cache=True, inline="always")
def expand_node(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior, proven,
                boards, size, node, m, empty_capture, pb, moves, lazy):
    """:func:`expand`; with ``lazy`` (no progressive bias: no prior needs the
    children's boards) each child is left UNBUILT, its board and player to
    move computed by :func:`build_node` when it is first selected."""
    player = to_move[node]
    count = legal_moves(boards[node], m, player, moves)
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
            to_move[ch] = apply_move(boards[ch], m, player, moves[j], empty_capture)
        if pb != 0.0:
            prior[ch] = heuristic_of(boards[ch], m, player)
            top = max(top, prior[ch])
        else:
            prior[ch] = 0.0
    if pb != 0.0:  # softmax of the one-step heuristic
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


@njit(cache=True)
def expand(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior, proven, boards,
           size, node, m, empty_capture, pb, moves):
    """Create every child of ``node`` with its board; returns how many (0 if the pool is full)."""
    return expand_node(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior, proven,
                       boards, size, node, m, empty_capture, pb, moves, False)


@njit(cache=True, inline="always")
def descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven, boards,
            size, m, c, formula, pb, solver, empty_capture, moves, alpha):
    """Selection from the root to a leaf, then expansion: a non-terminal leaf
    gets all its children and the first one is returned (the leaf itself if
    the pool is full). Children are expanded lazily without progressive
    bias; every node on the path, the returned one included, is built."""
    node = 0
    while first_child[node] != NO_NODE and to_move[node] != TERMINAL:
        ch = select_child(first_child, num_children, visits, value, imm, prior, proven, node, c, formula, pb, solver,
                          alpha)
        if ch == NO_NODE:
            break
        node = ch
        if to_move[node] == UNBUILT:
            build_node(parent, move, to_move, mover_in, boards, node, m, empty_capture)
    if to_move[node] != TERMINAL and first_child[node] == NO_NODE:
        if expand_node(first_child, num_children, parent, move, to_move, mover_in, visits, value, imm, prior, proven,
                       boards, size, node, m, empty_capture, pb, moves, pb == 0.0) > 0:
            node = first_child[node]
            if to_move[node] == UNBUILT:
                build_node(parent, move, to_move, mover_in, boards, node, m, empty_capture)
    return node


def make_mcts_iterate(jit, playout_margin=None, words=1, cut_playout=None, to_the_end=False):
    """Compile ``mcts_iterate`` with ``jit``.

    ``playout_margin`` (from :func:`jitsearch.kernels.playouts.make_packed_margin`
    or ``make_simd_margin``, with its ``words``) evaluates the leaves of a
    search with random playouts to the end (reward ``win``, no
    ``playout_depth`` or ``eval``) on packed boards or board vectors;
    ``cut_playout`` (``make_simd_playout``) plays every other search's
    playouts (HMCTS, cut playouts, evaluations); both must be compiled for
    the tree's m. When None, the generic playout runs. All give the same
    margins and boards from the same streams, so the kernels grow the same
    trees.

    ``to_the_end`` (with ``playout_margin``): a kernel for searches whose
    leaves get random playouts to the end only (the default search, see
    :meth:`jitsearch.mcts.config.MCTSConfig.plays_to_the_end`, which implies
    no implicit minimax values). It leaves out the cut and HMCTS playouts
    and the evaluations (a first compile of 4.6 s against 6.0-6.5 s for the
    full kernel at Kalah(6,4)), and raises ``ValueError`` if given other
    playouts or ``imm``.
    """
    packed = playout_margin is not None
    if to_the_end and not packed:
        raise ValueError("to_the_end needs a playout_margin kernel")
    if not packed:
        def _unused(w, board, player, empty_capture, key):
            return 0, 0

        playout_margin = stable_jit(njit(cache=True, inline="always"))(_unused)
    fast_cut = cut_playout is not None
    if not fast_cut:
        def _unused_cut(board, m, player, empty_capture, key, max_plies, moves):
            return 0, -1

        cut_playout = stable_jit(njit(cache=True, inline="always"))(_unused_cut)

    if to_the_end:
        def cut_playouts_never(board, boards, node, m, player, empty_capture, seed, key_index, k_playouts, max_plies,
                               reward_kind, total, moves):
            raise ValueError("this MCTS kernel plays random playouts to the end only")

        leaf_playouts = stable_jit(njit(cache=True))(cut_playouts_never)

        def imm_never(parent, first_child, num_children, to_move, mover_in, imm, boards, node, m, total, reward_kind):
            raise ValueError("this MCTS kernel keeps no implicit minimax values (imm= needs eval=)")

        leaf_imm = stable_jit(njit(cache=True))(imm_never)
    else:
        def cut_playouts(board, boards, node, m, player, empty_capture, seed, key_index, k_playouts, max_plies,
                         reward_kind, total, moves):
            """Player 0's summed reward of ``k_playouts`` playouts from ``node``,
            each cut at ``max_plies`` plies (a finished game scores its result, a
            cut one, and every HMCTS playout, the evaluation)."""
            n = boards.shape[1]
            reward0 = 0.0
            for k in range(k_playouts):
                for i in range(n):
                    board[i] = boards[node, i]
                key = stream_key(seed, key_index, k)
                if fast_cut:
                    _, end_player = cut_playout(board, m, player, empty_capture, key, max_plies, moves)
                else:
                    _, end_player = playout(board, m, player, empty_capture, key, max_plies, moves)
                if reward_kind != REWARD_HEURISTIC and end_player == TERMINAL:
                    reward0 += outcome_reward(board, m, 0)
                else:  # HMCTS, or a playout cut at its depth: the evaluation
                    reward0 += eval_reward(board, m, 0, total, reward_kind)
            return reward0

        leaf_playouts = stable_jit(njit(cache=True, inline="always"))(cut_playouts)

        def static_imm(parent, first_child, num_children, to_move, mover_in, imm, boards, node, m, total, reward_kind):
            """Back the leaf's static evaluation (for the player who moved into
            it) up the implicit minimax values."""
            if to_move[node] == TERMINAL:
                v0 = outcome_reward(boards[node], m, mover_in[node])
            else:
                v0 = eval_reward(boards[node], m, mover_in[node], total, reward_kind)
            imm_backup(parent, first_child, num_children, to_move, mover_in, imm, node, v0)

        leaf_imm = stable_jit(njit(cache=True, inline="always"))(static_imm)

    def mcts_iterate(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven,
                     boards, size, m, params, seed, first_iteration, iterations):
        """Run ``iterations`` MCTS iterations on the tree (root = node 0).

        Iteration ``i`` (counted from ``first_iteration``) draws its playouts
        from the streams (seed, i, k), k < playouts per leaf, so a search is a
        pure function of its seed and budget. Returns the iterations done (fewer
        when the solver proves the root). A playout plays at most
        ``params[P_MAX_PLIES]`` plies and is scored by the reward code
        ``params[P_REWARD]`` (:mod:`jitsearch.kernels.evaluation`); with
        ``params[P_IMM]`` > 0 every backup also updates the implicit minimax
        values (:func:`imm_backup`) and selection mixes them in.
        """
        c = params[P_C]
        formula = np.int64(params[P_FORMULA])
        pb = params[P_PB]
        reward_kind = np.int64(params[P_REWARD])
        max_plies = np.int64(params[P_MAX_PLIES])
        solver = params[P_SOLVER] != 0.0
        k_playouts = np.int64(params[P_PLAYOUTS])
        empty_capture = params[P_EMPTY_CAPTURE] != 0.0
        alpha = params[P_IMM]
        use_packed = packed and reward_kind == REWARD_WIN and max_plies == NO_PLY_CAP
        n = boards.shape[1]
        total = 0
        for i in range(n):
            total += boards[0, i]
        moves = np.empty(m, dtype=np.int64)
        board = np.empty(n, dtype=boards.dtype)
        w = np.zeros(words, dtype=np.uint64)
        done = 0
        for it in range(iterations):
            if solver and proven[0] != UNKNOWN:
                break
            node = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior,
                           proven, boards, size, m, c, formula, pb, solver, empty_capture, moves, alpha)
            # evaluation
            reward0 = 0.0
            if to_move[node] == TERMINAL:
                r = outcome_reward(boards[node], m, 0)
                reward0 = r * k_playouts
                if solver and proven[node] == UNKNOWN:
                    mine = r if mover_in[node] == 0 else 1.0 - r
                    proven[node] = WIN if mine == 1.0 else (LOSS if mine == 0.0 else DRAW)
                    solver_update(parent, first_child, num_children, to_move, mover_in, proven, node)
            elif use_packed:  # random playouts to the end, scored by player 0's final margin
                key_index = first_iteration + it
                mover = np.int64(to_move[node])
                for k in range(k_playouts):
                    margin, _ = playout_margin(w, boards[node], mover, empty_capture, stream_key(seed, key_index, k))
                    if margin > 0:
                        reward0 += 1.0
                    elif margin == 0:
                        reward0 += 0.5
            else:
                reward0 = leaf_playouts(board, boards, node, m, np.int64(to_move[node]), empty_capture, seed,
                                        np.int64(first_iteration + it), k_playouts, max_plies, reward_kind, total,
                                        moves)
            backup(parent, mover_in, visits, value, node, np.float64(k_playouts), reward0)
            if alpha > 0.0:  # the leaf's static evaluation, for the player who moved into it
                leaf_imm(parent, first_child, num_children, to_move, mover_in, imm, boards, node, m, total,
                         reward_kind)
            done += 1
        return done

    return jit(mcts_iterate)


#: The generic kernel (every m, every option).
mcts_iterate = make_mcts_iterate(stable_jit(njit(cache=True, nogil=True)))


def mcts_kernel(m: int, to_the_end: bool = False):
    """The ``mcts_iterate`` for trees of m houses: where
    :func:`jitsearch.kernels.playouts.cpu_margin_kernel` has a faster
    playout for m (board vectors for m <= 7 on a CPU with AVX2 and BMI2,
    else packed boards from MIN_PACKED_HOUSES on), one compiled per m whose
    random playouts to the end use it, and with board vectors its cut and
    HMCTS playouts too (:func:`~jitsearch.kernels.playouts.cpu_cut_playout`);
    same trees. At Kalah(6,4) packed boards measured about 1.3x the
    simulations/s of the generic kernel; board vectors 1.2x that to the end,
    1.3x with ``eval=store``, 1.6x for HMCTS. Else the generic kernel.
    ``to_the_end``: for a search that plays random playouts to the end only
    (:meth:`~jitsearch.mcts.config.MCTSConfig.plays_to_the_end`), a smaller
    kernel with a faster first compile (same trees)."""
    return _mcts_kernel(m, cpu_playout_kind(m), bool(to_the_end))


@functools.lru_cache(maxsize=None)
def _mcts_kernel(m: int, kind: str, to_the_end: bool = False):
    fast = cpu_margin_kernel(m, kind)
    if fast is None:
        return mcts_iterate
    words, margin = fast
    if to_the_end:
        return make_mcts_iterate(stable_jit(njit(cache=True, nogil=True)), margin, words, to_the_end=True)
    return make_mcts_iterate(stable_jit(njit(cache=True, nogil=True)), margin, words, cpu_cut_playout(m, kind))


# -- batched leaf evaluation (virtual loss) -----------------------------------------------

@njit(cache=True, nogil=True)
def select_batch(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven,
                 boards, size, m, params, batch, virtual_loss, leaves):
    """Select up to ``batch`` leaves for one evaluation launch.

    Each descent adds ``virtual_loss`` visits with no reward to every node
    on its path (a virtual loss for the player credited there), so the next
    descent prefers other branches; a leaf reached unexpanded is expanded
    and its first child taken. Distinct leaves come out unless the tree is
    smaller than the batch (then a finished position may repeat). Returns
    how many leaves were written to ``leaves``; undo with
    :func:`backup_batch`.
    """
    c = params[P_C]
    formula = np.int64(params[P_FORMULA])
    pb = params[P_PB]
    empty_capture = params[P_EMPTY_CAPTURE] != 0.0
    moves = np.empty(m, dtype=np.int64)
    count = 0
    for j in range(batch):
        node = descend(parent, first_child, num_children, move, to_move, mover_in, visits, value, imm, prior, proven,
                       boards, size, m, c, formula, pb, False, empty_capture, moves, 0.0)
        leaves[count] = node
        count += 1
        x = node
        while x != NO_NODE:
            visits[x] += virtual_loss
            x = parent[x]
    return count


@njit(cache=True, nogil=True)
def backup_batch(parent, mover_in, to_move, visits, value, boards, m, leaves, count, virtual_loss, wins, draws,
                 playouts):
    """Take the virtual losses back and add each leaf's results: ``wins`` /
    ``draws`` for the leaf's player to move over ``playouts`` playouts
    (finished leaves are scored exactly, ``playouts`` times)."""
    j_eval = 0
    for j in range(count):
        leaf = leaves[j]
        x = leaf
        while x != NO_NODE:
            visits[x] -= virtual_loss
            x = parent[x]
        if to_move[leaf] == TERMINAL:
            reward0 = outcome_reward(boards[leaf], m, 0) * playouts
        else:
            mine = wins[j_eval] + 0.5 * draws[j_eval]
            reward0 = mine if to_move[leaf] == 0 else playouts - mine
            j_eval += 1
        backup(parent, mover_in, visits, value, leaf, np.float64(playouts), reward0)

"""The Kalah engine: principal-variation alpha-beta with a persistent,
lock-free transposition table, endgame-database probes, a fitted
evaluation and Lazy SMP threads.

Conventions: negamax. A value is from the point of view of the player to
move at the node, in *centiseeds* (``SCALE`` = 100 units a seed): exact
values (a finished game, an endgame-database position) are the mover's
final margin times ``SCALE``; other leaves are the store difference plus
the evaluation's terms (:func:`evaluate`). A ply is one move, an
extra-turn move too; after an extra turn the same player moves again, so
the child's value is *not* negated. A search's depth counts the plies
left, but an extra-turn move made with at least
:data:`EXTEND_MIN_DEPTH` plies left uses none (the same player moves
again with the same depth): a chain of extra turns is one move of the
turn.

The pieces, each measured in ``bench/kalah_engine.py``:

* **Principal-variation search** with aspiration windows (the iterative
  deepening driver, :func:`_iterate`: :data:`ASPIRATION`), fail-soft.
  Extra-turn moves are extended (:data:`EXTEND_MIN_DEPTH`: measured 0.530
  over 400 games at 0.1 s a move against the same engine without).
  Frontier nodes (one ply left) value their children in place and skip the
  table (measured, 40 balanced-suite positions to depth 13: 15% less time
  for 2% more nodes). With no proof to follow, the search runs until the
  time is up, less :data:`STOP_MARGIN`; the unfinished iteration's finished
  root moves count (Kalah(6,4), 102 suite positions at 0.1 s: as deep as
  Irving's kalah on average, 0.3 ply less than CMancala;
  ``bench/results/engine/equal_time.md``).
* **Transposition table** kept across the moves of a game (one per agent
  and game), ``2**k`` slots of two ``uint64`` words: the key XOR the data,
  and the data (value, depth, bound, move, generation), so a slot torn by
  two threads writing at once fails its check and is ignored (the
  lock-free table of Hyatt and Mann). Replacement: a deeper search, the same
  position, or an entry of an older move (generation). The key is of the
  houses only, seen from the mover (:func:`.null_window.houses_hash`: a
  position and its mirror image with the other player to move share it),
  and the entry holds the value *less* the mover's store difference times
  SCALE and the move as a house offset: every leaf value below a node is
  its store difference plus terms of the houses, so the entry is exact for
  any stores (measured, 40 suite positions to depth 13: 1% fewer nodes and
  9% less time than a hash of the whole board).
* **Move ordering**: the table's move, then extra-turn moves, then seeds
  gained (captures), then two killer moves per ply, then the history score.
  A node whose children will probe the table hashes them as it makes them
  and prefetches their slots (4-8% less time).
* **Seed bound**: every end of the game below a node lies within the
  mover's store difference plus or minus the seeds in the houses; the
  evaluation is clamped to that range and a node whose window lies outside
  it returns the bound at once (exact: 3% fewer nodes to depth 15).
* **Kernel**: every array is borrowed (no reference count: Numba's atomic
  increments and decrements for each view took 40% of the kernel in a
  profile); the move and the evaluation are compiled for six houses apart.
  Together with the keys handed down, 40-45% less CPU time a node than
  before them (``bench/kalah_engine.py compare --mode fixed``).
* **Endgame database**: a position with at most ``db_seeds`` seeds in the
  houses takes its exact value from the database (:mod:`.endgame`) at
  once: endgames are played perfectly.
* **Lazy SMP**: ``threads`` search threads run the same iterative
  deepening over one shared table, helper i searching root move i - 1 (in
  house order, modulo the moves) first, so that they fill the table with
  different subtrees (measured: 2 threads reach depth 16 about 20% sooner
  than one; starting odd helpers a ply deeper did worse); the main
  thread's deepest finished iteration is played (or a helper's, when
  deeper). Every kernel is ``nogil``.
* **Exact mode** (``exact=True``, time-limited searches): once the seeds in
  the houses are at most the database's plus :data:`EXACT_REACH`, the engine
  tries to *prove* the game (:func:`.solver.solve_exact`: MTD(f) over
  null-window tests to the end of the game, the database at its leaves)
  over a solver table kept for the engine's life (its entries are bounds on
  the rest of the game, true whatever the root, so each attempt reuses what
  the earlier ones proved, finished or not). Until a proof has finished,
  the heuristic search runs first, stopping where its next iteration would
  not finish and leaving at least ``exact_share`` of the time, and the
  proof takes what is left: a proof that does not finish costs the search
  at most that share. Once one has finished, the proof comes first (it
  usually answers from the table in milliseconds) with :data:`GUARD_SHARE`
  of the time, and the heuristic search gets the rest only when it does not
  finish. A finished proof plays an optimal move and returns at once
  (``exact`` True, ``margin`` the mover's final margin in seeds, ``value``
  that times SCALE). A proven result is never thrown away: after a proof of
  W, the next proof's first null-window test asks "does a move keep W?",
  and a move that an unfinished proof showed to secure at least a draw (or,
  after a proven loss, to keep that loss from growing) is played instead of
  the heuristic's. Measured on Kalah(6,4) with a 16-seed
  database from the balanced suite (``bench/kalah_engine_exact.py``): 71%
  of the moves proven at 0.1 s a move (the first 11 plies after the suite
  position, on average), 80% at 0.5 s (8 plies), none thrown away. The solver is Irving, Donkers and Uiterwijk's (2000,
  "Solving Kalah": MTD(f), endgame databases), put to work inside the
  move's budget.
* **Opening book** (``book=True``, time-limited searches): a position in the
  book shipped for its board and rule set (:mod:`.opening_book`: every
  position of the first plies with the exact value of each move) is
  answered from it at once, no search: ``book`` True, ``exact`` True,
  ``margin`` the mover's final margin. A damaged book file gives one
  warning line and the engine searches as without one.
"""

from __future__ import annotations

import threading
import time
from typing import NamedTuple

import numpy as np
from numba import njit

from ..._checks import check_bool, check_float, check_int
from ..._threads import thread_pool
from ._prefetch import borrowed, prefetch_item
from .endgame import rank_houses
from .engine_db import NO_PROBE, Probe
from .engine_table import (SLOT_BYTES, EngineTable, new_engine_table, table_move,  # noqa: F401
                           pack_entry as _pack, unpack_entry as _unpack)
from .engine_eval import EVALS, FEATURES, FITTED_WEIGHTS, SCALE, STORE_WEIGHTS, evaluate, features_into  # noqa: F401
from .null_window import houses_hash
from .opening_book import book_move, book_value, shipped_book
from .rules import _apply_move
from .state import KalahState, apply_move

#: Larger than any value (a margin is at most 1,000 seeds = 100,000 units).
INF = 1 << 30
#: Deepest ply of a search (buffers are sized from it).
MAX_PLY = 128
EXACT, LOWER, UPPER = 0, 1, 2
#: The search stops this share of the move's time early (at most STOP_MARGIN_MAX seconds): the stop flag is set by
#: a timer thread and the kernel looks at it every 1,024 nodes, so a search told to stop returns late (measured: a
#: median 3 ms, up to 9 ms past 0.1 s on 2 cores at load 5-6).
STOP_MARGIN = 0.04
STOP_MARGIN_MAX = 0.01
#: Exact mode tries a proof when the seeds in the houses are at most the database's plus this many (measured on
#: Kalah(6,4), 16-seed database, 0.1-0.5 s a move: proofs finish from about 38 seeds on; above that an attempt
#: only costs the heuristic search its time).
EXACT_REACH = 24
#: Default share of a move's time kept for the proof before one has finished (the heuristic search runs first and
#: may leave more). Measured (``bench/kalah_engine_exact.py``, Kalah(6,4), balanced suite, against ``exact=0``):
#: 0.5 proves 71% of the moves at 0.1 s a move and 80% at 0.5 s, 0.25 69% and 76% (its first proof a ply later),
#: at the same score (0.51 and 0.50 over 48 games at 0.1 s).
EXACT_SHARE = 0.5
#: Share of the move's time for a proof whose first test keeps a result proven at an earlier move.
GUARD_SHARE = 0.9
#: Longest kernel call of a proof, in seconds (see :meth:`KalahEngine._chunk`).
SOLVER_CHUNK_SECONDS = 0.05
#: Least time of the second try of a proof that keeps a proven result when the first finished no test (seconds).
GUARD_RETRY_SECONDS = 0.02
#: The solver's table gets this share of the engine's table budget (``table_mb``) on top of it (32-byte rows, two solver slots each).
SOLVER_TABLE_SHARE = 0.5
#: Solver nodes a second assumed before the engine has measured its own rate (chunks of a proof are sized from it,
#: so that a short budget is not overrun by the first chunk).
SOLVER_RATE_GUESS = 1_000_000


@njit(cache=True, inline="always")
def _leaf_value(child, m, player, nxt, weights, db_values, binom, db_seeds, total, counters):
    """The value for ``player`` (who moved) of a child searched to depth 0: the final margin after a move that
    ends the game (``nxt`` < 0), else the database's exact value, else the evaluation; counted as the kernel
    counts a node it enters (nodes, evaluations, database hits). ``total``: the seeds on the board."""
    if nxt < 0:
        margin = np.int64(child[m + 1] - child[0])
        return np.int64(SCALE) * (margin if player == 0 else -margin)
    counters[0] += 1
    if db_seeds > 0:
        if total - child[0] - child[m + 1] <= db_seeds:  # seeds in the houses
            counters[2] += 1
            v = np.int64(child[m + 1] - child[0]) + np.int64(db_values[nxt, rank_houses(child, m, binom)])
            return np.int64(SCALE) * (v if player == 0 else -v)
    counters[1] += 1
    v = _bounded_eval(child, m, nxt, weights, total)
    return v if nxt == player else -v


@njit(cache=True, inline="always")
def _bounded_eval(board, m, player, weights, total):
    """The evaluation clamped to the seed bound: the mover's store difference plus or minus the seeds in the
    houses (times SCALE), which every end of the game from here lies within."""
    v = evaluate(board, m, player, weights)
    own = m + 1 if player == 0 else 0
    dd = np.int64(board[own] - board[m + 1 - own])
    ss = total - board[0] - board[m + 1]
    return min(max(v, np.int64(SCALE) * (dd - ss)), np.int64(SCALE) * (dd + ss))


#: The rules' move (:func:`.rules._apply_move`, the same source) inlined into the kernel, so that a constant
#: number of houses reaches its loops.
_sow = njit(cache=True, inline="always")(_apply_move)


#: Option bits of the kernel: table cutoffs only from entries of exactly the depth needed (a fixed-depth
#: search then returns the depth-limited minimax value whatever the table holds: tests, Lazy SMP checks).
OPT_EXACT_DEPTH = 1
#: Enhanced transposition cutoffs: before searching a node's children, look each one up in the table and
#: cut at once when an entry proves the cut (at nodes with at least ETC_MIN_DEPTH plies left).
OPT_ETC = 2
ETC_MIN_DEPTH = 3
#: An extra-turn move made with at least this many plies left uses no ply (see the module's conventions).
#: Measured, 0.1 s a move from the balanced suites, 200 games a rule set against the engine without it:
#: 0.535 (standard) and 0.525 (empty-capture), 0.530 [0.503, 0.557] over the pairs of both; extending at the
#: frontier too (1: its nodes with an extra-turn child searched as nodes) scored 0.502 and 0.495 against 2.
EXTEND_MIN_DEPTH = 2
#: options >> ROOT_FIRST_SHIFT = r > 0: search the root move r - 1 (modulo the moves, in house order) first: Lazy
#: SMP helpers start on different root moves, so that the table they share fills with different subtrees.
ROOT_FIRST_SHIFT = 8


class ThreadState(NamedTuple):
    """One search thread's own arrays (by ply): ``boards`` (int32[MAX_PLY + 1, 2m+2]), ``children``
    (int32[MAX_PLY + 1, m, 2m+2]), ``moves``/``nexts``/``keys`` (int64[MAX_PLY + 1, m]), ``frames``
    (int64[MAX_PLY + 1, FRAME_FIELDS]: the explicit stack), ``killers`` (int64[MAX_PLY + 1, 2]), ``history``
    (int64[2, 2m+2]), ``counters`` (int64[4]: nodes, evaluations, database hits, stopped flag), ``root``
    (int64[4]: best value, best move, root moves finished, depth of the iteration that set them), ``hashes``
    (int64[MAX_PLY + 1, m]: the children's table keys, computed where the children will probe the table, their
    slots prefetched then)."""

    boards: np.ndarray
    children: np.ndarray
    moves: np.ndarray
    nexts: np.ndarray
    keys: np.ndarray
    frames: np.ndarray
    killers: np.ndarray
    history: np.ndarray
    counters: np.ndarray
    root: np.ndarray
    hashes: np.ndarray


# fields of a stack frame
F_PLAYER, F_DEPTH, F_ALPHA, F_BETA, F_ALPHA0, F_BEST, F_BEST_MOVE, F_COUNT, F_K, F_SLOT, F_PHASE, F_HASH = range(12)
FRAME_FIELDS = 12
_ENTER, _RETURN, _SCORE, _NEXT = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _child_depth(depth, sp, extra):
    """Plies left below a move made with ``depth`` plies left at stack index ``sp``: one less, but none less
    after an extra turn (``extra``) made with at least EXTEND_MIN_DEPTH left, while the stack has room (sp +
    depth never passes MAX_PLY, so neither does the stack)."""
    return depth if extra and depth >= EXTEND_MIN_DEPTH and sp + depth < MAX_PLY else depth - 1


@njit(cache=True, inline="always")
def _push_child(frames, boards, children_all, sp, k, nxt, a, b):
    """Frame ``sp + 1``: child ``k`` of frame ``sp``, ``nxt`` to move, the window (a, b) from the
    parent's mover's view turned to the child mover's."""
    boards[sp + 1, :] = children_all[sp, k]
    frames[sp + 1, F_PLAYER] = nxt
    frames[sp + 1, F_DEPTH] = _child_depth(frames[sp, F_DEPTH], sp, nxt == frames[sp, F_PLAYER])
    if nxt == frames[sp, F_PLAYER]:
        frames[sp + 1, F_ALPHA] = a
        frames[sp + 1, F_BETA] = b
    else:
        frames[sp + 1, F_ALPHA] = -b
        frames[sp + 1, F_BETA] = -a


@njit(cache=True, nogil=True)
def engine_root(root_board, m, root_player, root_depth, root_alpha, root_beta, empty_capture, tkeys, tdata, gen,
                weights, db_values, binom, db_seeds, options, stop, boards, children_all, moves_all, nexts_all,
                keys_all, frames, killers, history, counters, root, hashes_all):
    """Fail-soft principal-variation search of the root (``root_player`` to move, ``root_depth`` >= 1 plies)
    in the window (root_alpha, root_beta), on an explicit stack (Numba cannot cache a recursive function);
    returns the negamax value, meaningless when ``counters[3]`` says the search was stopped."""
    # every array without its reference count (borrowed: the caller holds them for the whole call): Numba
    # otherwise makes an atomic increment and decrement for every view taken (``boards[sp]``, a child), which
    # measured 40% of the kernel's time in a profile
    root_board, tkeys, tdata, weights = borrowed(root_board), borrowed(tkeys), borrowed(tdata), borrowed(weights)
    db_values, binom, stop = borrowed(db_values), borrowed(binom), borrowed(stop)
    boards, children_all, moves_all = borrowed(boards), borrowed(children_all), borrowed(moves_all)
    nexts_all, keys_all, frames = borrowed(nexts_all), borrowed(keys_all), borrowed(frames)
    killers, history, counters, root = borrowed(killers), borrowed(history), borrowed(counters), borrowed(root)
    hashes_all = borrowed(hashes_all)
    total = np.int64(0)  # seeds on the board: the seeds in the houses are this less the stores
    for i in range(2 * m + 2):
        total += root_board[i]
    for i in range(frames.shape[0]):  # no hash handed down yet (a stopped search may have left one)
        frames[i, F_SLOT] = -1
    root[0] = -INF
    root[1] = -1
    root[2] = 0
    root[3] = 0
    n = 2 * m + 2
    mask = np.uint64(tkeys.shape[0] - 1)
    boards[0, :] = root_board
    frames[0, F_PLAYER] = root_player
    frames[0, F_DEPTH] = root_depth
    frames[0, F_ALPHA] = root_alpha
    frames[0, F_BETA] = root_beta
    sp = 0
    action = _ENTER
    ret = np.int64(0)
    score = np.int64(0)
    while True:
        if action == _ENTER:
            counters[0] += 1
            if (counters[0] & 1023) == 0 and stop[0] != 0:
                counters[3] = 1
            if counters[3] != 0:
                return np.int64(0)
            board = boards[sp]
            player = frames[sp, F_PLAYER]
            depth = frames[sp, F_DEPTH]
            action = _NEXT
            if db_seeds > 0 and sp > 0:  # the root is always searched: it needs a move
                if total - board[0] - board[m + 1] <= db_seeds:  # seeds in the houses
                    counters[2] += 1
                    v = np.int64(board[m + 1] - board[0]) + np.int64(db_values[player, rank_houses(board, m, binom)])
                    ret = np.int64(SCALE) * (v if player == 0 else -v)
                    action = _RETURN
            if action == _NEXT and depth <= 0:
                counters[1] += 1
                ret = _bounded_eval(board, m, player, weights, total)
                action = _RETURN
            if action == _NEXT and sp > 0:
                # the seeds in the houses bound every value below: the mover ends between D - S and D + S
                own = m + 1 if player == 0 else 0
                dd = np.int64(board[own] - board[m + 1 - own])
                ss = total - board[0] - board[m + 1]
                if frames[sp, F_ALPHA] >= np.int64(SCALE) * (dd + ss):
                    ret = np.int64(SCALE) * (dd + ss)
                    action = _RETURN
                elif frames[sp, F_BETA] <= np.int64(SCALE) * (dd - ss):
                    ret = np.int64(SCALE) * (dd - ss)
                    action = _RETURN
            if action == _NEXT:
                own = m + 1 if player == 0 else 0
                first = 1 if player == 0 else m + 2
                tt_move = -1
                given = frames[sp, F_SLOT] == -2  # the parent hashed this node (and prefetched its slot)
                frames[sp, F_SLOT] = -1
                if depth > 1 or sp == 0:  # frontier nodes neither probe nor store: their leaves are valued in place
                    h = np.uint64(frames[sp, F_HASH]) if given else houses_hash(board, m, player)
                    slot = np.int64(h & mask)
                    frames[sp, F_HASH] = np.int64(h)
                    frames[sp, F_SLOT] = slot
                    data = tdata[slot]
                if frames[sp, F_SLOT] >= 0 and (tkeys[slot] ^ data) == h:
                    tv, td, tf, tm, _ = _unpack(data)
                    tv += np.int64(SCALE) * (board[own] - board[m + 1 - own])
                    tt_move = first + tm
                    usable = td == depth if (options & OPT_EXACT_DEPTH) != 0 else td >= depth
                    if usable and sp > 0:
                        a = frames[sp, F_ALPHA]
                        b = frames[sp, F_BETA]
                        if tf == EXACT or (tf == LOWER and tv >= b) or (tf == UPPER and tv <= a):
                            ret = tv
                            action = _RETURN
            if action == _NEXT:
                count = 0
                for pit in range(first, first + m):
                    if board[pit] == 0:
                        continue
                    child = children_all[sp, count]
                    for i in range(n):
                        child[i] = board[i]
                    if m == 6:  # the board of every measurement: the sowing compiled for six houses
                        nxt = _sow(child, 6, player, pit, empty_capture)
                    else:
                        nxt = _sow(child, m, player, pit, empty_capture)
                    moves_all[sp, count] = pit
                    nexts_all[sp, count] = nxt
                    if depth >= 3 and nxt >= 0:  # the child will probe the table: hash it, fetch its slot now
                        hc = houses_hash(child, m, nxt)
                        hashes_all[sp, count] = np.int64(hc)
                        prefetch_item(tdata, np.int64(hc & mask))
                    key = min(history[player, pit], np.int64(1 << 34))
                    if pit == tt_move:
                        key += np.int64(1) << 50
                    if nxt == player:
                        key += np.int64(1) << 44
                    key += np.int64(child[own] - board[own]) << 36
                    if pit == killers[sp, 0] or pit == killers[sp, 1]:
                        key += np.int64(1) << 35
                    keys_all[sp, count] = key
                    count += 1
                rotate = options >> ROOT_FIRST_SHIFT
                if sp == 0 and rotate > 0 and count > 1:  # a Lazy SMP helper: this root move first
                    keys_all[sp, (rotate - 1) % count] += np.int64(1) << 55
                if (options & OPT_ETC) != 0 and depth >= ETC_MIN_DEPTH and sp > 0:
                    # enhanced transposition cutoff: a child whose table entry already proves a cut
                    b = frames[sp, F_BETA]
                    for i in range(count):
                        nxt = nexts_all[sp, i]
                        if nxt < 0:
                            continue
                        cb = children_all[sp, i]
                        hc = houses_hash(cb, m, nxt)
                        cs = np.int64(hc & mask)
                        cdata = tdata[cs]
                        if (tkeys[cs] ^ cdata) != hc:
                            continue
                        tv, td, tf, _, _ = _unpack(cdata)
                        cown = m + 1 if nxt == 0 else 0
                        tv += np.int64(SCALE) * (cb[cown] - cb[m + 1 - cown])
                        cd = _child_depth(depth, sp, nxt == player)
                        if td < cd or ((options & OPT_EXACT_DEPTH) != 0 and td != cd):
                            continue
                        if nxt == player:
                            proves = tf != UPPER and tv >= b
                            bound = tv
                        else:
                            proves = tf != LOWER and -tv >= b
                            bound = -tv
                        if proves:
                            ret = bound
                            action = _RETURN
                            break
                frames[sp, F_ALPHA0] = frames[sp, F_ALPHA]
                frames[sp, F_BEST] = -INF
                frames[sp, F_BEST_MOVE] = -1
                frames[sp, F_COUNT] = count
                frames[sp, F_K] = 0
                if action == _NEXT and depth == 1 and sp > 0:
                    # a frontier node: its children are leaves, valued here in the order of their keys (no stack
                    # frame each); the same values, the same cut, as searching them one by one
                    b = frames[sp, F_BETA]
                    best = np.int64(-INF)
                    used = 0
                    for _ in range(count):
                        j = -1
                        for i in range(count):
                            if ((used >> i) & 1) == 0 and (j < 0 or keys_all[sp, i] > keys_all[sp, j]):
                                j = i
                        used |= 1 << j
                        v = _leaf_value(children_all[sp, j], m, player, nexts_all[sp, j], weights, db_values, binom,
                                        db_seeds, total, counters)
                        if v > best:
                            best = v
                            frames[sp, F_BEST_MOVE] = moves_all[sp, j]
                            if v >= b:
                                pit = moves_all[sp, j]
                                if killers[sp, 0] != pit:
                                    killers[sp, 1] = killers[sp, 0]
                                    killers[sp, 0] = pit
                                history[player, pit] += 1
                                break
                    frames[sp, F_BEST] = best
                    frames[sp, F_K] = count  # finished: _NEXT stores it and returns
        elif action == _RETURN:
            if sp == 0:
                return ret
            sp -= 1
            score = ret if nexts_all[sp, frames[sp, F_K]] == frames[sp, F_PLAYER] else -ret
            action = _SCORE
        if action == _SCORE:
            k = frames[sp, F_K]
            alpha = frames[sp, F_ALPHA]
            beta = frames[sp, F_BETA]
            if frames[sp, F_PHASE] == 1 and alpha < score < beta:
                # a null-window search failed high inside the window: search this child again, full window
                frames[sp, F_PHASE] = 2
                _push_child(frames, boards, children_all, sp, k, nexts_all[sp, k], alpha, beta)
                if frames[sp, F_DEPTH] >= 3:
                    frames[sp + 1, F_HASH] = hashes_all[sp, k]
                    frames[sp + 1, F_SLOT] = -2
                sp += 1
                action = _ENTER
                continue
            pit = moves_all[sp, k]
            if score > frames[sp, F_BEST]:
                frames[sp, F_BEST] = score
                frames[sp, F_BEST_MOVE] = pit
                if sp == 0 and (score > frames[0, F_ALPHA0] or k == 0):
                    root[0] = score
                    root[1] = pit
                    if score > frames[0, F_ALPHA0]:  # not an aspiration fail low: this depth's move
                        root[3] = frames[0, F_DEPTH]
            if sp == 0:
                root[2] = k + 1
            if score > alpha:
                frames[sp, F_ALPHA] = score
            frames[sp, F_K] = k + 1
            if score >= beta:
                if killers[sp, 0] != pit:
                    killers[sp, 1] = killers[sp, 0]
                    killers[sp, 0] = pit
                d = frames[sp, F_DEPTH]
                history[frames[sp, F_PLAYER], pit] += d * d
                frames[sp, F_K] = frames[sp, F_COUNT]  # cut: no more children
            action = _NEXT
        if action == _NEXT:
            k = frames[sp, F_K]
            count = frames[sp, F_COUNT]
            if k >= count:  # the node is finished: store it, return its value
                best = frames[sp, F_BEST]
                alpha0 = frames[sp, F_ALPHA0]
                beta = frames[sp, F_BETA]
                depth = frames[sp, F_DEPTH]
                flag = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
                slot = frames[sp, F_SLOT]
                h = np.uint64(frames[sp, F_HASH])
                old = tdata[max(slot, 0)]
                _, od, _, _, og = _unpack(old)
                if slot >= 0 and ((tkeys[slot] ^ old) == h or depth >= od or og != gen):
                    board = boards[sp]
                    own = m + 1 if frames[sp, F_PLAYER] == 0 else 0
                    first = 1 if own != 0 else m + 2
                    mv = frames[sp, F_BEST_MOVE]
                    new = _pack(best - np.int64(SCALE) * (board[own] - board[m + 1 - own]), depth, flag,
                                mv - first if mv >= 0 else -1, gen)
                    tdata[slot] = new
                    tkeys[slot] = h ^ new
                ret = best
                action = _RETURN
                continue
            keys = keys_all[sp]
            j = k  # selection: the best remaining move, swapped into place k
            for i in range(k + 1, count):
                if keys[i] > keys[j]:
                    j = i
            if j != k:
                keys[k], keys[j] = keys[j], keys[k]
                moves_all[sp, k], moves_all[sp, j] = moves_all[sp, j], moves_all[sp, k]
                nexts_all[sp, k], nexts_all[sp, j] = nexts_all[sp, j], nexts_all[sp, k]
                hashes_all[sp, k], hashes_all[sp, j] = hashes_all[sp, j], hashes_all[sp, k]
                for i in range(n):
                    tmp = children_all[sp, k, i]
                    children_all[sp, k, i] = children_all[sp, j, i]
                    children_all[sp, j, i] = tmp
            nxt = nexts_all[sp, k]
            player = frames[sp, F_PLAYER]
            if nxt < 0:  # the game ends: exact
                margin = np.int64(children_all[sp, k, m + 1] - children_all[sp, k, 0])
                score = np.int64(SCALE) * (margin if player == 0 else -margin)
                frames[sp, F_PHASE] = 0
                action = _SCORE
                continue
            alpha = frames[sp, F_ALPHA]
            beta = frames[sp, F_BETA]
            if k == 0:
                a, b = alpha, beta
                frames[sp, F_PHASE] = 0
            else:
                a, b = alpha, alpha + 1
                frames[sp, F_PHASE] = 1
            _push_child(frames, boards, children_all, sp, k, nxt, a, b)
            if frames[sp, F_DEPTH] >= 3:
                frames[sp + 1, F_HASH] = hashes_all[sp, k]
                frames[sp + 1, F_SLOT] = -2
            sp += 1
            action = _ENTER


def new_thread_state(m: int) -> ThreadState:
    n = 2 * m + 2
    return ThreadState(np.zeros((MAX_PLY + 2, n), np.int32), np.zeros((MAX_PLY + 1, m, n), np.int32),
                       np.zeros((MAX_PLY + 1, m), np.int64), np.zeros((MAX_PLY + 1, m), np.int64),
                       np.zeros((MAX_PLY + 1, m), np.int64), np.zeros((MAX_PLY + 2, FRAME_FIELDS), np.int64),
                       np.full((MAX_PLY + 1, 2), -1, np.int64), np.zeros((2, n), np.int64),
                       np.zeros(4, np.int64), np.zeros(4, np.int64), np.zeros((MAX_PLY + 1, m), np.int64))


#: Half-width of the aspiration window around the last iteration's value (centiseeds). A failed search widens its
#: failed side around the returned bound by delta, delta growing ASPIRATION_GROWTH (>= 2) times a fail, to the
#: full window once delta reaches ASPIRATION_MAX. Measured (40 suite positions to depth 13, fixed depth): 25 / 4 /
#: 5,000 searches 7.5% fewer nodes than the former 150 opened at once to the full window; 50 / 4, 5.4% fewer
#: (on 24 positions), 10 / 4, 4.4% fewer, 300 / 4, 4.7% more.
ASPIRATION = 25
ASPIRATION_GROWTH = 4
ASPIRATION_MAX = 5_000


def _run_root(state, depth, alpha, beta, table, gen, weights, probe, options, stop, ts):
    return int(engine_root(state.board, state.houses, state.player, depth, alpha, beta, state.empty_capture,
                           table.keys, table.data, gen, weights, probe.values, probe.binom, probe.seeds, options,
                           stop, *ts))


def _iterate(state, table, gen, weights, probe, options, stop, ts, first_depth, max_depth, aspiration, deadline,
             finished):
    """Iterative deepening from ``first_depth``: appends (depth, value, move) of every finished iteration to
    ``finished``; stops at ``max_depth``, at the stop flag, or (main thread, ``deadline`` given: a proof takes the
    time after it) when the next iteration would likely not finish. Without a ``deadline`` the last iteration runs
    until the stop flag: its root moves finished so far are played (a move that beat the last iteration's, or
    the same move confirmed a ply deeper)."""
    value = None
    last_dt = None
    for d in range(first_depth, max_depth + 1):
        t0 = time.perf_counter()
        delta = ASPIRATION
        if value is not None and aspiration and d >= 3 and abs(value) < INF // 2:
            lo, hi = value - delta, value + delta
        else:
            lo, hi = -INF, INF
        while True:
            v = _run_root(state, d, lo, hi, table, gen, weights, probe, options, stop, ts)
            if ts.counters[3]:
                return
            if (v <= lo and lo > -INF) or (v >= hi and hi < INF):
                # widen the failed side around the returned bound, delta growing ASPIRATION_GROWTH times a fail
                delta *= ASPIRATION_GROWTH
                if v <= lo:
                    lo = v - delta if delta < ASPIRATION_MAX else -INF
                else:
                    hi = v + delta if delta < ASPIRATION_MAX else INF
            else:
                break
        value = v
        finished.append((d, v, int(ts.root[1])))
        now = time.perf_counter()
        dt = now - t0
        if deadline is not None:
            growth = 2.5 if last_dt is None else min(max(dt / max(last_dt, 1e-6), 1.5), 6.0)
            if now + dt * growth * 0.5 > deadline:
                return
        last_dt = dt


class KalahEngine:
    """The engine of one player in one game: its table persists across the moves it is asked for.

    ``eval``: ``fitted`` (:data:`FITTED_WEIGHTS`) or ``store`` (store difference only). ``db``: a
    :class:`Probe` or None. ``table_mb``: table size in MiB. ``threads``: Lazy SMP search threads.
    ``book``: answer a time-limited search from the opening book shipped for the board (when one is).
    """

    def __init__(self, houses: int, *, eval: str = "fitted", probe: Probe | None = None, table_mb: float = 64,
                 threads: int = 1, exact_depth: bool = False, aspiration: bool = True, etc: bool = False,
                 weights=None, root_split: bool = True, exact: bool = True, exact_share: float = EXACT_SHARE,
                 exact_reach: int = EXACT_REACH, book: bool = True):
        self.houses = check_int("houses", houses, 1, 16)
        self.book = check_bool("book", book)
        self.exact = check_bool("exact", exact)
        self.exact_share = check_float("exact_share", exact_share, 0.0, 1.0, lo_open=True)
        self.exact_reach = check_int("exact_reach", exact_reach, 0, 1000)
        self.root_split = check_bool("root_split", root_split)
        if eval not in EVALS:
            raise ValueError(f"eval must be one of {', '.join(EVALS)} for the engine, got {eval!r}")
        self.weights = FITTED_WEIGHTS if eval == "fitted" else STORE_WEIGHTS
        if weights is not None:  # other weights of the same features (centiseeds), e.g. to test a new fit
            w = np.asarray(weights)
            if w.shape != (len(FEATURES),) or w.dtype.kind not in "iu" or np.abs(w).max(initial=0) > 100_000:
                raise ValueError(f"weights must be {len(FEATURES)} integers (centiseeds) of |w| <= 100000, one per "
                                 f"feature {FEATURES}")
            self.weights = w.astype(np.int64)
        self.probe = probe if probe is not None else NO_PROBE
        self.threads = check_int("threads", threads, 1, 256)
        self.table_mb = check_float("table_mb", table_mb, 0.0, 65_536.0, lo_open=True)
        self.table = new_engine_table(self.table_mb)
        self.solver_table = _new_solver_table(self.table_mb) if self.exact else None  # exact mode's
        self._solver_rules = None  # (houses, empty_capture) of the positions the solver table holds
        self._solver_rate = float(SOLVER_RATE_GUESS)  # measured solver nodes a second
        self._proven: dict = {}  # player -> (margin proven for that player, seeds in the houses then)
        self.options = ((OPT_EXACT_DEPTH if check_bool("exact_depth", exact_depth) else 0)
                        | (OPT_ETC if check_bool("etc", etc) else 0))
        self.aspiration = check_bool("aspiration", aspiration)
        self.states = [new_thread_state(houses) for _ in range(self.threads)]
        self.generation = 0

    def search(self, state: KalahState, *, time_limit: float | None = None, depth: int | None = None,
               stop_event: threading.Event | None = None) -> dict:
        """Search ``state`` for ``time_limit`` seconds and/or to ``depth`` plies; returns ``move``, ``value``
        (centiseeds, the mover's view), ``exact`` (True when ``value`` is the mover's final margin under perfect
        play, times SCALE: the position is in the endgame database, or exact mode proved it), ``margin`` (that
        margin in seeds when exact, else None), ``proof`` (exact mode's attempt, None when none was made:
        ``complete``, ``lower``/``upper`` (bounds on the mover's final margin, seeds), ``move``, ``nodes``,
        ``seconds``, ``kept``: unfinished, its bound move secures ``lower`` >= 0 and is played), ``depth``
        (deepest finished heuristic iteration; 0 when none ran), ``nodes`` (heuristic nodes), ``db_hits``,
        ``seconds``, ``pv``, ``book`` (True when the move came from the opening book: a time-limited search of a
        position in it, ``exact`` True, no search). A root whose every child is in the database is searched one
        ply (exact).
        ``stop_event`` (a ``threading.Event``) stops the search early, as the time limit does (a proof within
        about a second)."""
        if not isinstance(state, KalahState):
            raise ValueError(f"the engine searches a KalahState, got {type(state).__name__}")
        if state.is_over:
            raise ValueError("the game is over: nothing to search")
        if state.houses != self.houses:
            raise ValueError(f"this engine plays {self.houses} houses a side, not {state.houses}")
        if time_limit is None and depth is None:
            raise ValueError("give time_limit or depth")
        max_depth = MAX_PLY if depth is None else check_int("depth", depth, 1, MAX_PLY)
        if time_limit is not None:
            time_limit = check_float("time_limit", time_limit, 0.0, 86_400.0, lo_open=True)
        start = time.perf_counter()
        if time_limit is not None and self.book:
            hit = self._book_move(state)
            if hit is not None:
                move, margin = hit
                return {"move": move, "value": SCALE * margin, "exact": True, "margin": margin, "book": True,
                        "proof": None, "depth": 0, "nodes": 0, "db_hits": 0, "threads": self.threads,
                        "pv": [move], "seconds": time.perf_counter() - start}
        in_houses = _seeds_in_houses(state)
        in_database = 0 < self.probe.seeds and in_houses <= self.probe.seeds
        if in_database:
            max_depth = 1  # every child is in the database: one ply is the exact value, deeper adds nothing
        proof = None
        deadline = None if time_limit is None else start + time_limit - min(STOP_MARGIN * time_limit, STOP_MARGIN_MAX)
        attempt = (time_limit is not None and self.exact and not in_database
                   and in_houses <= self.probe.seeds + self.exact_reach)
        kept = self._kept(state, in_houses) if attempt else None
        r = None
        if kept is not None:
            # a result proven at an earlier move: the proof comes first, its first test asking whether a move
            # keeps that margin (usually answered at once from the solver's table)
            proof = self._prove(state, start + GUARD_SHARE * time_limit, kept, None, stop_event)
        elif attempt:
            # the heuristic search first, stopping where its next iteration would not finish and leaving at
            # least exact_share of the time; the proof takes what is left
            r = self._heuristic(state, start + (1.0 - self.exact_share) * time_limit, max_depth, stop_event,
                                True)  # predict: the proof takes the rest
            if stop_event is None or not stop_event.is_set():
                proof = self._prove(state, deadline, None, int(round(r["value"] / SCALE)), stop_event)
        if proof is not None and proof["complete"]:
            margin = proof["lower"]
            self._proven[state.player] = (margin, in_houses)
            out = r if r is not None else {"depth": 0, "nodes": 0, "db_hits": 0, "threads": self.threads}
            out.update(move=proof["move"], value=SCALE * margin, exact=True, margin=margin, proof=proof,
                       pv=[proof["move"]], book=False, seconds=time.perf_counter() - start)
            return out
        if r is None:
            r = self._heuristic(state, deadline, max_depth, stop_event)
        r["exact"] = in_database
        r["margin"] = r["value"] // SCALE if in_database else None
        r["proof"] = proof
        r["book"] = False
        if proof is not None and proof["kept"] and r["move"] != proof["move"]:
            # the proof showed this move secures at least a draw, or keeps a loss proven earlier from getting
            # worse: play it rather than a heuristic move that might throw the result away (a Kalah(6,6) match
            # at 0.2 s a move lost two seeds of a proven -4 so, when only draws were guarded)
            r["move"] = proof["move"]
            r["pv"] = [proof["move"]]
        if in_database:
            self._proven[state.player] = (r["margin"], in_houses)
        r["seconds"] = time.perf_counter() - start
        return r

    def _book_move(self, state: KalahState) -> tuple[int, int] | None:
        """(the book's move, the mover's final margin) when ``state`` is in the book shipped for its board and
        rule set, else None (no book shipped, a damaged one: one warning line, once, and None)."""
        cells = 2 * state.houses
        if state.seeds_total % cells:
            return None
        book = shipped_book(state.houses, state.seeds_total // cells, bool(state.empty_capture))
        move = book_move(book, state)
        return None if move is None else (int(move), int(book_value(book, state)))

    def _kept(self, state: KalahState, in_houses: int):
        """The margin proven for the player to move at an earlier move of this game (a position with at least
        as many seeds in the houses, same board and rules), else None."""
        kept = self._proven.get(state.player)
        if kept is None or kept[1] < in_houses or self._solver_rules != (state.houses, bool(state.empty_capture)):
            return None
        return kept[0]

    def _prove(self, state: KalahState, until: float, kept: int | None, guess: int | None, stop_event) -> dict:
        """Exact mode's proof attempt (:func:`.solver.solve_exact` over the engine's solver table) until the
        ``time.perf_counter()`` value ``until``; ``kept``: a margin proven earlier for the mover (the first test
        asks whether a move keeps it), else ``guess``, the mover's margin as the heuristic values it. Bounds
        and margins are the mover's, in seeds."""
        from .solver import solve_exact

        rules = (state.houses, bool(state.empty_capture))
        if self.solver_table is None or self._solver_rules not in (None, rules):  # (another rule set: start afresh)
            self.solver_table = _new_solver_table(self.table_mb)
            self._proven.clear()
        self._solver_rules = rules
        sign = 1 if state.player == 0 else -1
        if kept is not None:
            # player 0 tests "margin >= W" first, player 1 "margin >= -W + 1" (a fail low proves margin <= -W)
            first_guess = kept if sign > 0 else -kept + 1
        else:
            first_guess = sign * int(guess or 0)
        budget = max(until - time.perf_counter(), 1e-3)
        chunk = self._chunk(budget)
        db = None
        if self.probe.seeds > 0:
            db = {"houses": state.houses, "empty_capture": bool(state.empty_capture), "values": self.probe.values,
                  "binom": self.probe.binom, "max_seeds": int(self.probe.seeds)}
        r = solve_exact(state, time_limit=budget, table=self.solver_table, first_guess=int(first_guess),
                        endgame_db=db, chunk_nodes=chunk, stop=stop_event)
        if kept is not None and not r["complete"] and r["iterations"] == 0 and (
                stop_event is None or not stop_event.is_set()):
            # not one test finished: on a loaded machine the proof can lose its whole budget before its first
            # chunk (measured: a proof of 6 nodes stopped unfinished at 0.1 s a move), and then the heuristic
            # search with a tenth of the time may throw the proven result away; one more try, with a floor
            retry = max(until - time.perf_counter(), budget / 2, GUARD_RETRY_SECONDS)
            r = solve_exact(state, time_limit=retry, table=self.solver_table, first_guess=int(first_guess),
                            endgame_db=db, chunk_nodes=self._chunk(retry), stop=stop_event)
        if r["seconds"] > 0.01 and r["nodes"] > 10_000:
            self._solver_rate = max(1e5, 0.5 * self._solver_rate + 0.5 * r["nodes"] / r["seconds"])
        lower, upper = (r["lower"], r["upper"]) if sign > 0 else (-r["upper"], -r["lower"])
        complete = bool(r["complete"])
        return {"complete": complete, "lower": int(lower), "upper": int(upper), "move": int(r["best_move"]),
                "nodes": int(r["nodes"]), "seconds": float(r["seconds"]),
                "kept": (not complete and r["best_move_source"] == "bound"
                         and lower >= (0 if kept is None else min(kept, 0)))}

    def _chunk(self, budget: float) -> int:
        """Solver nodes a kernel call: an eighth of the budget, at most :data:`SOLVER_CHUNK_SECONDS`, at the
        measured rate. The solver looks at its clock and at ``progress`` (the stop event) only between calls,
        so this bounds both the overrun of the budget and the stop's latency."""
        return max(1_000, int(self._solver_rate * min(budget / 8, SOLVER_CHUNK_SECONDS)))

    def _heuristic(self, state: KalahState, deadline: float | None, max_depth: int, stop_event,
                   predict: bool = False) -> dict:
        """The heuristic search (iterative deepening PVS, Lazy SMP) until ``deadline`` or ``max_depth``;
        ``predict``: stop before an iteration that would likely not finish (a proof takes the rest of the time),
        else search until the deadline (the unfinished iteration's finished root moves count)."""
        start = time.perf_counter()
        self.generation = (self.generation + 1) & 0xFFFF
        stop = np.zeros(1, np.int64)
        for ts in self.states:
            ts.counters[:] = 0
            ts.killers[:] = -1
            ts.history[:] //= 8
        timer = None
        if deadline is not None:
            timer = threading.Timer(max(0.0, deadline - time.perf_counter()), lambda: stop.__setitem__(0, 1))
            timer.daemon = True
            timer.start()
        watcher = None
        if stop_event is not None:
            def watch():
                while stop[0] == 0:
                    if stop_event.wait(0.05):
                        stop[0] = 1
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
        results = [[] for _ in self.states]
        futures = []
        try:
            pool = thread_pool(self.threads - 1) if self.threads > 1 else None
            for i in range(1, self.threads):
                options = self.options | ((i if self.root_split else 0) << ROOT_FIRST_SHIFT)
                futures.append(pool.submit(_iterate, state, self.table, self.generation, self.weights,
                                                 self.probe, options, stop, self.states[i], 1,
                                                 max_depth, self.aspiration, None, results[i]))
            _iterate(state, self.table, self.generation, self.weights, self.probe, self.options, stop,
                     self.states[0], 1, max_depth, self.aspiration, deadline if predict else None, results[0])
        finally:
            stop[0] = 1
            for f in futures:
                f.result()
            if timer is not None:
                timer.cancel()
        main = self.states[0]
        best = results[0][-1] if results[0] else None
        for r in results[1:]:
            if r and (best is None or r[-1][0] > best[0]):
                best = r[-1]
        if best is None or (main.counters[3] and main.root[2] > 0 and main.root[1] >= 0
                            and main.root[3] > best[0]):
            # the unfinished iteration already proved a move at least as good as the last one's value
            best = (int(main.root[3]), int(main.root[0]), int(main.root[1]))
        if best is None or best[2] < 0:
            best = (0, 0, int(state.legal_moves()[0]))
        d, value, move = best
        nodes = sum(int(ts.counters[0]) for ts in self.states)
        return {"move": int(move), "value": int(value), "depth": int(d), "nodes": nodes,
                "db_hits": sum(int(ts.counters[2]) for ts in self.states),
                "seconds": time.perf_counter() - start, "threads": self.threads,
                "pv": self.principal_variation(state, move, d)}

    def principal_variation(self, state: KalahState, first: int, depth: int) -> list[int]:
        pv = [first]
        s = state.play(first)
        while not s.is_over and len(pv) < max(depth, 1):
            mv = int(table_move(s.board, s.player, self.table.keys, self.table.data))
            if mv not in s.legal_moves():
                break
            pv.append(mv)
            s = s.play(mv)
        return pv


def _new_solver_table(table_mb: float) -> np.ndarray:
    """Exact mode's solver table: int64[rows, 4] (32-byte rows, which the solver reads as two 16-byte slots each), the largest power of two within
    ``SOLVER_TABLE_SHARE * table_mb`` MiB (at least 1,024 slots), written now so that its pages are mapped before
    a clock runs (as :func:`new_engine_table`)."""
    slots = max(1 << 10, 1 << max(0, int(table_mb * SOLVER_TABLE_SHARE * 2**20 // 32).bit_length() - 1))
    table = np.empty((slots, 4), np.int64)
    table.fill(0)
    return table


def _seeds_in_houses(state: KalahState) -> int:
    m = state.houses
    return int(state.board.sum()) - int(state.board[0]) - int(state.board[m + 1])

"""The Kalah engine's search kernel (:func:`engine_root`: principal-variation
alpha-beta over an explicit stack, one thread's search) and its
iterative-deepening driver (:func:`iterate`, aspiration windows);
:class:`.engine.KalahEngine` runs it. Conventions and the measured pieces:
:mod:`.engine`'s docstring.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
from numba import njit

from ._prefetch import borrowed, prefetch_item
from .endgame import rank_houses
from .engine_table import pack_entry as _pack, unpack_entry as _unpack
from .engine_eval import SCALE, evaluate
from .null_window import houses_hash
from .rules import sow

#: Larger than any value (a margin is at most 1,000 seeds = 100,000 units).
INF = 1 << 30
#: Deepest ply of a search (buffers are sized from it).
MAX_PLY = 128
EXACT, LOWER, UPPER = 0, 1, 2


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


#: The rules' move (:func:`.rules.sow`, the same source) inlined into the kernel, so that a constant
#: number of houses reaches its loops.
_sow = njit(cache=True, inline="always")(sow)


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


def run_root(state, depth, alpha, beta, table, gen, weights, probe, options, stop, ts):
    return int(engine_root(state.board, state.houses, state.player, depth, alpha, beta, state.empty_capture,
                           table.keys, table.data, gen, weights, probe.values, probe.binom, probe.seeds, options,
                           stop, *ts))


def iterate(state, table, gen, weights, probe, options, stop, ts, first_depth, max_depth, aspiration, deadline,
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
            v = run_root(state, d, lo, hi, table, gen, weights, probe, options, stop, ts)
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

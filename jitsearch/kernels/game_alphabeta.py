"""Alpha-beta (negamax) with iterative deepening over the game protocol
(:mod:`jitsearch.games.protocol`), for every game, on the CPU.

One kernel source, compiled per game by :func:`cpu_alphabeta` from the game's
:class:`~jitsearch.games.protocol.Rules` and its optional hooks, searches a
position depth-first to a fixed number of plies (a ply is one move: an extra
turn is a ply too) with an explicit stack, so no recursion is compiled.

Conventions
-----------
* **Values.** Inside the kernel a node's value is its player-to-move's view
  (negamax); a child's value is negated only when the player changes (Kalah's
  extra turn keeps the sign). A finished game scores ``Rules.margin`` (exact);
  a live node at the depth limit ``Rules.evaluate`` (a heuristic leaf). The
  wrapper :func:`alphabeta_game` returns player 0's view, as every value of the
  protocol.
* **Exact.** A search whose tree has no heuristic leaf (every leaf it visited
  ended the game, and every table entry it used was such too) returns the game's
  value under perfect play: ``exact`` is then True and deepening stops.
* **The value of a fixed-depth search is the depth-limited minimax value**, with
  or without the table: a heuristic table entry cuts only at the remaining
  depth it was searched to, an exact one (no heuristic leaf below it) at that
  depth or more. The table changes node counts, never values.
* **Nodes** counts positions visited: the root and every child generated (a
  finished game too); ``leaves`` the heuristic evaluations.
* **The record** (Oware's repetition) is the caller's ``hist`` with room for
  ``depth`` more rows; the cursor ``cur`` is kept per stack level as a value, so
  a child's siblings start from their parent's cursor.
* **Move order**: the previous iteration's best move first at the root, the
  table's move first elsewhere, then ``Game.move_order``'s scores (highest
  first), ties in the rules' order. The first best child is kept (strict ``>``).

Fail-soft alpha-beta (Knuth and Moore, "An analysis of alpha-beta pruning",
Artificial Intelligence 6, 1975) with a transposition table of ``2**k`` slots,
always replaced, each holding the key, the remaining depth searched, the bound
type (exact / lower / upper), whether a heuristic leaf lies below, the value
and the best move, at slot ``mix64(key) mod 2**k``.

Measured (2-core box, 2026-11-27): from Kalah(6,4)'s start at depth 12 the same value and move as
Kalah's own iterative deepening (the game's ``alphabeta:depth=`` engine with ``plain=1``), 63 k nodes against its 28 k (its order
also tries the store difference after each move), 0.06 s each; Kalah(4,3) solved from the start in
0.55 s and 582 k nodes with the table and the move order, 7.0 s with the table alone, 3.6 s with the
order alone, unsolved after 20 s (211 M nodes) with neither.

The stop flag (:mod:`jitsearch.stop`): ``counters[STOP_SLOT]``, read every
:data:`~jitsearch.stop.STOP_EVERY` nodes; a time limit sets it too. A stopped
iteration is thrown away: :func:`alphabeta_game` returns the deepest completed
one on a time limit and raises ``KeyboardInterrupt`` on ``stop``.
"""

from __future__ import annotations

import time as _time

import numpy as np
from numba import njit

from .._checks import check_float, check_int
from .._jit import stable_ids
from ..games import get as get_game
from ..games.protocol import GAME_OVER
from ..rng import mix64
from ..stop import STOP_SLOT, check_stop, new_counters, stop_requested, watch

#: Bound types of a table entry.
EXACT, LOWER, UPPER = 0, 1, 2
#: ``counters`` slots: nodes visited, heuristic leaves evaluated.
NODES, LEAVES = 0, 1
#: The best move of a stopped iteration.
ABORTED = -2
#: The deepest search a call may ask for (stack rows).
MAX_DEPTH = 4096
#: Default table slots where the game has a ``position_key`` (26 bytes a slot).
DEFAULT_TABLE_SLOTS = 1 << 20
SLOT_BYTES = 8 + 4 + 1 + 1 + 8 + 4

_ENTER, _NEXT, _RETURN = 0, 1, 2


def _no_key(board, cfg, player):
    return np.uint64(0)


def _no_score(board, cfg, player, move):
    return 0.0


def make_alphabeta(jit, rules, key, score, has_order, tag=""):
    """Compile ``search(root, cfg, root_player, hist, cur, depth, first_move, num_moves, tt_keys,
    tt_depth, tt_flag, tt_heur, tt_value, tt_move, counters) -> (value, move, heuristic)``
    with ``jit``: fail-soft alpha-beta of ``depth`` >= 1 plies from a live ``root`` (module
    docstring), ``value`` the root player's, ``heuristic`` whether a heuristic leaf was used;
    ``move`` is :data:`ABORTED` when the stop flag ended the search. ``tt_keys`` of size 0:
    no table (else a power of two; ``tt_depth`` -1 marks an empty slot). ``key`` and ``score``
    are the compiled hooks (or stand-ins: ``has_order`` False skips the ordering)."""
    legal, apply, margin, evaluate = rules.legal, rules.apply, rules.margin, rules.evaluate

    def search(root, cfg, root_player, hist, cur, depth, first_move, num_moves, tt_keys, tt_depth, tt_flag, tt_heur,
               tt_value, tt_move, counters):
        top = depth + 1
        boards = np.empty((top, root.shape[0]), root.dtype)
        players = np.empty(top, np.int64)
        firsts = np.empty(top, np.int64)
        counts = np.empty(top, np.int64)
        plies = np.empty(top, np.int64)
        moves = np.empty((top, num_moves), np.int64)
        scores = np.empty(num_moves, np.float64)
        nmoves = np.zeros(top, np.int64)
        idxs = np.zeros(top, np.int64)
        tried = np.zeros(top, np.int64)
        alphas = np.empty(top, np.float64)
        betas = np.empty(top, np.float64)
        bests = np.empty(top, np.float64)
        best_moves = np.empty(top, np.int64)
        heurs = np.zeros(top, np.int64)
        keys = np.zeros(top, np.uint64)
        cap = tt_keys.shape[0]
        mask = np.uint64(max(cap - 1, 0))
        for i in range(root.shape[0]):
            boards[0, i] = root[i]
        players[0] = root_player
        firsts[0], counts[0], plies[0] = cur[0], cur[1], cur[2]
        alphas[0] = -np.inf
        betas[0] = np.inf
        counters[NODES] += 1
        sp = 0
        phase = _ENTER
        ret_value = 0.0
        ret_heur = 0
        while True:
            if phase == _ENTER:
                p = players[sp]
                sign = 1.0 if p == 0 else -1.0
                remaining = depth - sp
                if remaining == 0:
                    counters[LEAVES] += 1
                    ret_value = sign * evaluate(boards[sp], cfg, p)
                    ret_heur = 1
                    phase = _RETURN
                    continue
                table_move = first_move if sp == 0 else -1
                if cap > 0:
                    k = np.uint64(key(boards[sp], cfg, p))
                    keys[sp] = k
                    slot = np.int64(mix64(k) & mask)
                    if tt_depth[slot] >= 0 and tt_keys[slot] == k:
                        if sp > 0:
                            table_move = tt_move[slot]
                            d = tt_depth[slot]
                            h = tt_heur[slot]
                            if (h != 0 and d == remaining) or (h == 0 and d <= remaining):
                                v = tt_value[slot]
                                f = tt_flag[slot]
                                if f == EXACT or (f == LOWER and v >= betas[sp]) or (f == UPPER and v <= alphas[sp]):
                                    ret_value = v
                                    ret_heur = np.int64(h)
                                    phase = _RETURN
                                    continue
                        elif table_move < 0:
                            table_move = tt_move[slot]
                n = legal(boards[sp], cfg, p, moves[sp], hist, (firsts[sp], counts[sp], plies[sp]))
                if has_order:
                    for j in range(n):
                        scores[j] = score(boards[sp], cfg, p, moves[sp, j])
                    for j in range(1, n):  # stable insertion sort, highest score first
                        mv = moves[sp, j]
                        sc = scores[j]
                        i = j - 1
                        while i >= 0 and scores[i] < sc:
                            moves[sp, i + 1] = moves[sp, i]
                            scores[i + 1] = scores[i]
                            i -= 1
                        moves[sp, i + 1] = mv
                        scores[i + 1] = sc
                if table_move >= 0:
                    for j in range(n):
                        if moves[sp, j] == table_move:
                            for i in range(j, 0, -1):
                                moves[sp, i] = moves[sp, i - 1]
                            moves[sp, 0] = table_move
                            break
                nmoves[sp] = n
                idxs[sp] = 0
                bests[sp] = -np.inf
                best_moves[sp] = moves[sp, 0]
                heurs[sp] = 0
                phase = _NEXT
            elif phase == _NEXT:
                p = players[sp]
                alpha = max(alphas[sp], bests[sp])
                if idxs[sp] < nmoves[sp] and alpha < betas[sp]:
                    mv = moves[sp, idxs[sp]]
                    idxs[sp] += 1
                    tried[sp] = mv
                    for i in range(boards.shape[1]):
                        boards[sp + 1, i] = boards[sp, i]
                    nxt, c = apply(boards[sp + 1], cfg, p, mv, hist, (firsts[sp], counts[sp], plies[sp]))
                    counters[NODES] += 1
                    if stop_requested(counters, counters[NODES]):
                        return np.nan, ABORTED, True
                    if nxt == GAME_OVER:
                        v = np.float64(margin(boards[sp + 1], cfg))
                        if p != 0:
                            v = -v
                        if v > bests[sp]:
                            bests[sp] = v
                            best_moves[sp] = mv
                        continue
                    players[sp + 1] = nxt
                    firsts[sp + 1], counts[sp + 1], plies[sp + 1] = c[0], c[1], c[2]
                    if nxt == p:
                        alphas[sp + 1] = alpha
                        betas[sp + 1] = betas[sp]
                    else:
                        alphas[sp + 1] = -betas[sp]
                        betas[sp + 1] = -alpha
                    sp += 1
                    phase = _ENTER
                else:
                    ret_value = bests[sp]
                    ret_heur = heurs[sp]
                    if cap > 0:
                        slot = np.int64(mix64(keys[sp]) & mask)
                        tt_keys[slot] = keys[sp]
                        tt_depth[slot] = depth - sp
                        tt_heur[slot] = ret_heur
                        tt_value[slot] = ret_value
                        tt_move[slot] = best_moves[sp]
                        if ret_value <= alphas[sp]:
                            tt_flag[slot] = UPPER
                        elif ret_value >= betas[sp]:
                            tt_flag[slot] = LOWER
                        else:
                            tt_flag[slot] = EXACT
                    phase = _RETURN
            else:  # _RETURN: ret_value is the value of level sp for its player
                if sp == 0:
                    return ret_value, best_moves[0], ret_heur != 0
                child = players[sp]
                sp -= 1
                v = ret_value if child == players[sp] else -ret_value
                if v > bests[sp]:
                    bests[sp] = v
                    best_moves[sp] = tried[sp]
                if ret_heur != 0:
                    heurs[sp] = 1
                phase = _NEXT

    if tag:
        search.__qualname__ = f"{search.__qualname__}_{tag}"
        search.__name__ = f"{search.__name__}_{tag}"
    return jit(search)


_CPU: dict = {}


def cpu_alphabeta(game):
    """The compiled CPU search of ``game`` (rules and hooks inlined), once per game; cached on
    disk (fixed ids, named for the game)."""
    if game not in _CPU:
        inline = stable_ids(njit(inline="always"))
        rules = game.build(inline)
        key = game.position_key(inline) if game.position_key is not None else inline(_no_key)
        score = game.move_order(inline) if game.move_order is not None else inline(_no_score)
        _CPU[game] = make_alphabeta(stable_ids(njit(cache=True, nogil=True)), rules, key, score,
                                    game.move_order is not None, game.name)
    return _CPU[game]


def table_for(game, slots: int) -> tuple:
    """Empty table arrays of ``slots`` slots (0: none) for :func:`make_alphabeta`'s search."""
    return (np.zeros(slots, np.uint64), np.full(slots, -1, np.int32), np.zeros(slots, np.int8),
            np.zeros(slots, np.int8), np.zeros(slots, np.float64), np.full(slots, -1, np.int32))


def alphabeta_game(game, state, *, depth: int | None = None, time: float | None = None, stop=None,
                   table_slots: int | None = None) -> dict:
    """Iterative-deepening alpha-beta of ``game`` (a registry name or a ``Game``) from the
    live ``state``.

    Parameters
    ----------
    depth : plies, 1..:data:`MAX_DEPTH`; None: deepen until the value is exact (the end of the
        game under every line searched), ``time`` or ``stop``.
    time : seconds (> 0); the deepest iteration completed by then is returned (the first
        iteration, one ply, always completes).
    stop : a ``threading.Event``; setting it raises ``KeyboardInterrupt``.
    table_slots : transposition-table slots, a power of two >= 16, or 0 for none; default
        :data:`DEFAULT_TABLE_SLOTS` where the game has a ``position_key`` hook, else 0.

    Returns
    -------
    dict with ``move`` (the best move of the deepest completed iteration), ``value`` (its
    value, player 0's view), ``depth`` (plies of that iteration), ``exact`` (the value is the
    game's under perfect play), ``nodes`` and ``leaves`` (summed over every iteration run,
    the stopped one too), ``seconds``.
    """
    game = get_game(game)
    if not isinstance(state, game.State):
        raise ValueError(f"state must be a {game.State.__name__}, got {type(state).__name__}")
    if depth is not None:
        depth = check_int("depth", depth, 1, MAX_DEPTH)
    if time is not None:
        time = check_float("time", time, 0.0, 1e7, lo_open=True)
    check_stop(stop)
    if table_slots is None:
        table_slots = DEFAULT_TABLE_SLOTS if game.position_key is not None else 0
    table_slots = check_int("table_slots", table_slots, 0, 1 << 30)
    if table_slots and (table_slots < 16 or table_slots & (table_slots - 1)):
        raise ValueError(f"table_slots must be 0 or a power of two >= 16, got {table_slots}")
    if table_slots and game.position_key is None:
        raise ValueError(f"game {game.name!r} has no position_key hook: table_slots must be 0")
    packed = game.pack([state])  # refuses a finished state
    board, player, cfg = packed.boards[0].copy(), int(packed.players[0]), packed.cfg
    rows, cols = int(packed.rows[0]), packed.hists.shape[2]
    num_moves = int(game.sizes(cfg).moves)
    table = table_for(game, table_slots)
    search = cpu_alphabeta(game)
    last = max_depth = depth if depth is not None else MAX_DEPTH
    best = None
    nodes = leaves = 0
    start = _time.perf_counter()
    clock = None
    for d in range(1, max_depth + 1):
        counters = new_counters(STOP_SLOT + 1)
        hist = np.zeros((rows + d + 1, cols), packed.hists.dtype)
        hist[:rows] = packed.hists[0, :rows]
        first = -1 if best is None else best["move"]
        with watch(stop, counters, deadline=None if d == 1 else clock):
            value, move, heuristic = search(board, cfg, np.int64(player), hist, packed.cur(0), np.int64(d),
                                            np.int64(first), np.int64(num_moves), *table, counters)
        nodes += int(counters[NODES])
        leaves += int(counters[LEAVES])
        if d == 1:
            clock = None if time is None else _time.perf_counter() + time  # the compile is not counted
        if move == ABORTED:
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt
            break
        value = float(value) if player == 0 else -float(value)
        best = {"move": int(move), "value": value, "depth": d, "exact": not heuristic}
        if not heuristic or d == last:
            break
    return {**best, "nodes": nodes, "leaves": leaves, "seconds": _time.perf_counter() - start}


__all__ = ["ABORTED", "DEFAULT_TABLE_SLOTS", "MAX_DEPTH", "alphabeta_game", "cpu_alphabeta", "make_alphabeta"]

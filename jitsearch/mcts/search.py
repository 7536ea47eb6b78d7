"""MCTS of any game of the protocol (:mod:`jitsearch.games.protocol`): UCT (three exploration
formulas), progressive bias, HMCTS, MCTS-Solver, root parallelism, and pure Monte Carlo. The
game is the state's (:func:`jitsearch.games.game_of`).

Conventions: the player to move at the root chooses; rewards are 1 / 0.5 / 0 for a win / draw /
loss by the sign of the game's margin (or Siljander's (HMCTS) heuristic mapped into [0, 1] for
Kalah's HMCTS, or an evaluation in [0, 1] with ``eval=``, see
:mod:`jitsearch.kernels.evaluation`), credited to the player who moved into a node (see
:mod:`jitsearch.mcts.tree`). A *simulation* is one playout; an *iteration* selects, expands and
evaluates one leaf with ``playouts`` playouts.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from .._checks import cap_to_physical_memory, check_choice, check_float, check_int, check_max_bytes, check_seed, max_threads
from ..games import game_of
from ..kernels.game_playouts import MAX_PLAYOUTS_PER_STATE, cpu_kernel, evaluate_states
from ..stop import check_stop
from ..rng import mix64_py
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .tree import DRAW, LOSS, UNKNOWN, WIN, MCTSTree, kernels

from .config import FINALS, MAX_CAPACITY, MAX_TIME, MCTSConfig

PROVEN_NAMES = {UNKNOWN: None, WIN: "win", DRAW: "draw", LOSS: "loss"}

_WARMED: set = set()


class Root(NamedTuple):
    """A search's root as kernel inputs: ``board``, ``player``, the variant ``cfg``, ``hist``
    (the root's record and room for a game from it), ``cur`` (its cursor, three int64), ``moves``
    (the variant's most legal moves), ``record`` (whether the game keeps one)."""

    board: np.ndarray
    player: int
    cfg: tuple
    hist: np.ndarray
    cur: tuple
    moves: int
    record: bool


def root_of(game, state) -> Root:
    """The root inputs of a live ``state`` of ``game``."""
    packed = game.pack([state])
    size = game.sizes(packed.cfg)
    rows = int(packed.rows[0])
    hist = np.zeros((rows + max(0, size.record[0]), packed.hists.shape[2]), dtype=packed.hists.dtype)
    hist[:rows] = packed.hists[0, :rows]
    cur = tuple(np.int64(x) for x in packed.cur(0))
    return Root(packed.boards[0], int(packed.players[0]), packed.cfg, hist, cur, int(size.moves),
                game.node_record is not None)


def _new_tree(game, root: Root, capacity: int) -> MCTSTree:
    tree = MCTSTree(capacity, root.board.shape[0], root.board.dtype, max_bytes=None)
    tree.set_root(root.board, root.player)
    return tree


def _warm_kernel(game, root: Root, cfg: MCTSConfig) -> None:
    """Compile (or load) the in-kernel MCTS for the variant once per process, on a tiny tree."""
    key = (game, root.cfg, cfg.plays_to_the_end())
    if key in _WARMED:
        return
    _WARMED.add(key)
    tree = _new_tree(game, root, root.moves + 1)
    kernel = kernels(game, root.cfg, key[2]).iterate
    kernel(*tree.arrays(), root.cfg, cfg.params(game), np.uint64(0), 0, 1, root.hist.copy(), root.cur, root.moves)


def worker_seed(seed: int, worker: int) -> int:
    """Seed of root-parallel tree ``worker`` (worker 0 keeps ``seed``)."""
    seed = check_seed("seed", seed)
    worker = check_int("worker", worker, 0)
    return seed if worker == 0 else mix64_py(seed * 0x9E3779B97F4A7C15 + worker)


def tree_capacity(cfg: MCTSConfig, moves: int, iterations: int | None, max_bytes: int, cells: int | None = None,
                  dtype=np.int32) -> int:
    """Nodes to preallocate for one tree of boards of ``cells`` entries of ``dtype`` (default
    ``2 moves + 2`` int32, a Mancala board): ``capacity`` if given, else ``iterations * moves +
    1`` (each iteration expands at most ``moves`` children), else (a time-limited search) as
    many as ``max_bytes`` holds, at most 2**22. Refused (``ValueError``) when the pool would not
    fit in ``max_bytes`` or int32 node indices."""
    per_node = MCTSTree.bytes_per_node(2 * moves + 2 if cells is None else cells, dtype)
    if cfg.capacity is not None:
        capacity = cfg.capacity
    elif iterations is not None:
        capacity = iterations * moves + 1
    else:
        capacity = min(1 << 22, max_bytes // per_node)
    capacity = max(capacity, moves + 1)
    check_bytes(capacity * per_node, max_bytes, f"an MCTS tree of {capacity:,} nodes",
                "lower iterations= or capacity= (API: or raise max_bytes)")
    if capacity > MAX_CAPACITY:
        raise ValueError(f"an MCTS tree of {capacity:,} nodes is above the limit of {MAX_CAPACITY:,} "
                         f"(int32 node indices): lower iterations= or capacity=")
    return capacity


def _grow(game, root: Root, cfg: MCTSConfig, seed: int, iterations: int | None, deadline: float | None,
          capacity: int, stop=None, state=None) -> tuple[MCTSTree, int]:
    """One tree grown for ``iterations`` or until ``deadline``; with ``stop``
    (or a deadline) in chunks of about 10-20 ms, ``stop`` read between them
    (a tree grown in chunks is the tree grown in one call)."""
    tree = _new_tree(game, root, capacity)
    params = cfg.params(game)
    hist = root.hist.copy()  # a tree's own scratch: the kernel writes the rows past the root's
    if cfg.backend is not None:
        return _grow_batched(tree, game, root, state, cfg, params, seed, iterations, deadline, hist, stop)
    mcts_iterate = kernels(game, root.cfg, cfg.plays_to_the_end()).iterate
    args = (*tree.arrays(), root.cfg, params, np.uint64(seed))
    tail = (hist, root.cur, root.moves)
    done = 0
    if iterations is not None and deadline is None and stop is None:
        done = int(mcts_iterate(*args, 0, iterations, *tail))
        return tree, done
    chunk = max(1, 32 // cfg.playouts)  # a first chunk of about 32 playouts; doubled while it is quick
    while True:
        todo = chunk if iterations is None else min(chunk, iterations - done)
        if todo <= 0 or (stop is not None and stop.is_set()):
            break
        t0 = time.perf_counter()
        got = int(mcts_iterate(*args, done, todo, *tail))
        done += got
        if got < todo or (deadline is not None and time.perf_counter() >= deadline):
            break
        if time.perf_counter() - t0 < 0.01:
            chunk *= 2
    return tree, done


def _leaf_states(tree: MCTSTree, state, leaves) -> list:
    """The states of tree nodes ``leaves``, replayed from the root ``state`` (with its record)."""
    out = []
    for leaf in leaves:
        path = []
        x = int(leaf)
        while x > 0:
            path.append(int(tree.move[x]))
            x = int(tree.parent[x])
        s = state
        for mv in reversed(path):
            s = s.play(mv)
        out.append(s)
    return out


def _grow_batched(tree, game, root, state, cfg, params, seed, iterations, deadline, hist, stop=None):
    """MCTS whose leaves are evaluated in batches: ``batch`` leaves chosen with virtual loss,
    ``playouts`` playouts each, one launch per step (the game's CPU playouts,
    :func:`jitsearch.kernels.game_playouts.cpu_kernel`, or the GPU's,
    :func:`jitsearch.kernels.cuda_game_playouts.evaluate_states_cuda`); an iteration = a leaf."""
    backend = cfg.resolved_backend()
    k = kernels(game, root.cfg)
    leaves = np.empty(cfg.batch, dtype=np.int64)
    size = game.sizes(root.cfg)
    done = 0
    step = 0
    while True:
        want = cfg.batch if iterations is None else min(cfg.batch, iterations - done)
        if want <= 0 or (deadline is not None and time.perf_counter() >= deadline) or (
                stop is not None and stop.is_set()):
            break
        count = int(k.select_batch(*tree.arrays(), root.cfg, params, want, float(cfg.virtual_loss), leaves, hist,
                                   root.cur, root.moves))
        live = [int(x) for x in leaves[:count] if tree.to_move[x] >= 0]
        wins = np.zeros(max(len(live), 1), dtype=np.int64)
        draws = np.zeros_like(wins)
        if live:
            key = mix64_py(seed * 0x9E3779B97F4A7C15 + step)
            if backend == "cuda":
                from ..kernels.cuda_game_playouts import evaluate_states_cuda

                r = evaluate_states_cuda(game, _leaf_states(tree, state, live), cfg.playouts, key)
            elif root.record:
                r = evaluate_states(game, _leaf_states(tree, state, live), cfg.playouts, key)
            else:  # the nodes' boards are the positions: no states to build
                n = len(live)
                r = {name: np.zeros(n, dtype=np.int64) for name in ("wins", "draws", "losses", "margin_sum", "plies")}
                zeros = np.zeros(n, dtype=np.int64)
                _, fn = cpu_kernel(game, root.cfg)
                fn(np.ascontiguousarray(tree.boards[live]), tree.to_move[live].astype(np.int64),
                   np.zeros((n, 1, 1), np.int32), zeros, zeros, root.cfg, size.moves, 0, cfg.playouts,
                   np.uint64(key), 0, n, r["wins"], r["draws"], r["losses"], r["margin_sum"], r["plies"],
                   np.zeros(1, np.int64))
            wins, draws = r["wins"], r["draws"]
        k.backup_batch(tree.parent, tree.mover_in, tree.to_move, tree.visits, tree.value, tree.boards, root.cfg,
                       leaves, count, float(cfg.virtual_loss), wins, draws, float(cfg.playouts))
        done += count
        step += 1
    return tree, done


def mcts_search(state, config: MCTSConfig | None = None, *, seed: int = 0,
                max_bytes: int = DEFAULT_MAX_BYTES, stop=None, **options) -> dict:
    """Monte Carlo tree search from ``state`` (a state of any registered game) for its player to move.

    Options (or an :class:`MCTSConfig`): ``iterations`` and/or ``time``
    (seconds; anytime), ``c`` (exploration constant), ``formula`` (``ucb1``:
    w/n + c·sqrt(ln N / n); ``sqrt``: w/n + c·sqrt(N)/n; ``sqrtlog``:
    w/n + c·sqrt(ln N)/sqrt(n), the "Multiagent Search" chapter's two alternatives), ``pb``
    (progressive bias weight: + pb·p_i·sqrt(N)/n, p_i a softmax of the
    one-step heuristic), ``reward`` (``win`` or ``heuristic`` = HMCTS),
    ``playout_depth`` (cut playouts after that many plies and score them by
    the heuristic; 0 = play to the end), ``eval`` (``store`` or
    ``heuristic``: evaluate each leaf by ``eval_plies`` random plies, default
    4, 0 = the leaf itself, then the squashed store difference or Siljander's (HMCTS)
    heuristic, a finished game by its outcome; unset = the playouts above),
    ``imm`` (implicit minimax backups: each node also keeps the minimax value
    of the evaluations below it, and selection uses (1 - imm)·w/n +
    imm·minimax; 0 = off; needs ``eval``; Lanctot et al. 2014, see
    :mod:`jitsearch.kernels.evaluation`), ``solver`` (MCTS-Solver),
    ``playouts`` (per expanded leaf), ``final`` (``visits`` or ``value``),
    ``workers`` (root parallelism: independent trees on threads, their root
    statistics summed; the iteration budget is split among them),
    ``backend`` (``cpu`` / ``cuda`` / ``auto``: with ``parallel=tree``, the
    default on a GPU, the tree-parallel search of :mod:`jitsearch.mcts.shared`,
    ``trees`` shared trees (default 1) each grown by ``blocks`` thread blocks
    at once; with ``parallel=root``, the default on the CPU, the multi-tree
    search of :mod:`jitsearch.mcts.multi`, ``trees`` independent trees grown
    in one kernel, one thread block each on a GPU, all cores on the CPU; the
    iteration budget split among the trees and their root statistics summed;
    with ``batch`` instead, the older leaf-parallel mode: one tree whose
    leaves are evaluated in batches of ``batch`` chosen with
    ``virtual_loss``, one launch per batch; unset = playouts inside the CPU
    kernel, one leaf at a time).

    Every game gets every option; what a game offers beyond the protocol is its own
    (:func:`jitsearch.mcts.config.game_rewards`): Kalah's ``reward=heuristic`` and
    ``eval=store|heuristic``, Oware's ``eval=capture`` with ``eval_param`` (its side weight);
    elsewhere the progressive-bias prior and cut playouts use the game's ``evaluate``,
    squashed as the store difference is.

    Returns ``move``, ``children`` (move, visits, value = mean reward of the
    root player, proven), ``iterations``, ``simulations``, ``nodes``,
    ``seconds``, ``proven`` (the root's value if the solver proved it),
    ``interrupted``.

    ``stop`` (a ``threading.Event``) set from another thread ends the search
    within a few hundredths of a second: every kind of search grows its
    trees in chunks (or batches) and reads ``stop`` between them; what the
    trees hold then is returned with ``interrupted`` True (an agent raises
    ``KeyboardInterrupt`` instead of playing it). A search not stopped grows
    the same trees with or without ``stop``.

    Every option is checked (:meth:`MCTSConfig.validate`): integers where
    counts are asked for (NumPy integers too, no bool), finite numbers,
    names from their sets, and the limits MAX_ITERATIONS, MAX_PLAYOUTS,
    MAX_SIMULATIONS (iterations x playouts), MAX_TIME, MAX_BATCH, workers <=
    4 per core; ``seed`` in [0, 2**64); the trees' node pools are sized
    before anything is allocated and refused above ``max_bytes`` (capped by
    physical memory). Any bad argument raises one ``ValueError``.
    """
    game = game_of(state)
    if config is not None and options:
        raise ValueError("give either a config or options, not both")
    if config is not None and not isinstance(config, MCTSConfig):
        raise ValueError(f"config must be an MCTSConfig, got {type(config).__name__}")
    seed = check_seed("seed", seed)
    check_stop(stop)
    max_bytes = cap_to_physical_memory(check_max_bytes("max_bytes", max_bytes))
    cfg = config if config is not None else MCTSConfig.from_options(**options)
    cfg.validate(game)
    if state.is_over:
        raise ValueError("the game is over: no move to search")
    if cfg.backend is not None:
        backend = cfg.resolved_backend()  # a CUDA request without a GPU fails here, before any tree is allocated
        if cfg.batch is None:
            return _search_many(game, [state], [seed], cfg, backend, max_bytes, stop)[0]
    root = root_of(game, state)
    w = cfg.workers
    if cfg.backend is None:
        kernels(game, root.cfg, cfg.plays_to_the_end())  # compiled (or loaded) here, not by several workers at once
    if cfg.time is not None and cfg.backend is None:
        _warm_kernel(game, root, cfg)  # the JIT must not eat the time budget
    per_worker = None if cfg.iterations is None else -(-cfg.iterations // w)
    capacity = tree_capacity(cfg, root.moves, per_worker, max_bytes // w, root.board.shape[0],
                             root.board.dtype)  # all trees checked before any
    start = time.perf_counter()
    deadline = None if cfg.time is None else start + cfg.time
    if w == 1:
        results = [_grow(game, root, cfg, seed, per_worker, deadline, capacity, stop, state)]
    else:
        with ThreadPoolExecutor(max_workers=w) as pool:
            futures = [pool.submit(_grow, game, root, cfg, worker_seed(seed, i), per_worker, deadline, capacity,
                                   stop, state) for i in range(w)]
            results = [f.result() for f in futures]
    root_player = state.player
    moves = state.legal_moves()
    visits = {mv: 0.0 for mv in moves}
    value = {mv: 0.0 for mv in moves}
    proven = {mv: UNKNOWN for mv in moves}
    iterations = 0
    nodes = 0
    root_proven = UNKNOWN
    for tree, done in results:
        iterations += done
        nodes += int(tree.size[0])
        for ch in tree.children(0):
            mv = int(tree.move[ch])
            visits[mv] += float(tree.visits[ch])
            value[mv] += float(tree.value[ch])  # credited to the root player (who moved into it)
            if tree.proven[ch] != UNKNOWN:
                proven[mv] = int(tree.proven[ch])
        if tree.proven[0] != UNKNOWN:
            root_proven = int(tree.proven[0]) if tree.mover_in[0] == root_player else _flip(int(tree.proven[0]))
    children = [{"move": mv, "visits": visits[mv], "value": value[mv] / visits[mv] if visits[mv] else None,
                 "proven": PROVEN_NAMES[proven[mv]]} for mv in moves]
    move = choose_final_move(children, cfg.final)
    out = {"move": move, "children": children, "iterations": iterations,
           "simulations": iterations * cfg.playouts, "nodes": nodes, "seconds": time.perf_counter() - start,
           "proven": PROVEN_NAMES[root_proven], "interrupted": stop is not None and stop.is_set()}
    if cfg.backend is not None:
        out["backend"] = cfg.resolved_backend()
    return out


def _search_many(game, states, seeds, cfg: MCTSConfig, backend: str, max_bytes: int, stop=None) -> list[dict]:
    """The backend search of ``cfg`` (validated once by the caller, nothing checked again): the
    multi-tree (:mod:`.game`) or tree-parallel (:mod:`.game_shared`) search over the protocol,
    ``trees`` trees a position, their root statistics summed."""
    from .game import search_many_checked
    from .game_shared import search_shared_checked

    if cfg.mode() == "tree":
        return search_shared_checked(states, seeds, cfg.tree_options(), cfg.blocks, backend, max_bytes=max_bytes,
                                     stop=stop, eval_param=cfg.eval_param)
    return search_many_checked(states, seeds, cfg.tree_options(), backend, leaves=cfg.leaves, max_bytes=max_bytes,
                               stop=stop, eval_param=cfg.eval_param)


def mcts_search_many(states, seeds, *, max_bytes: int = DEFAULT_MAX_BYTES, **options) -> list[dict]:
    """The multi-tree search (``backend`` given, no ``batch``) of several
    positions in one launch: result g equals ``mcts_search(states[g],
    seed=seeds[g], **options)`` when the budget is in iterations. Used by
    lockstep tournaments."""
    cfg = MCTSConfig.from_options(**options)
    if not isinstance(states, (list, tuple)) or not states:
        raise ValueError("states must be a non-empty list of states of one game")
    game = game_of(states[0])
    cfg.validate(game)
    if cfg.backend is None or cfg.batch is not None:
        raise ValueError("mcts_search_many runs the multi-tree search: give backend= and no batch=")
    max_bytes = cap_to_physical_memory(check_max_bytes("max_bytes", max_bytes))
    return _search_many(game, states, seeds, cfg, cfg.resolved_backend(), max_bytes)


def _flip(status: int) -> int:
    return {WIN: LOSS, LOSS: WIN}.get(status, status)


def choose_final_move(children: list[dict], final: str = "visits") -> int:
    """A proven win first; never a proven loss while another move is left;
    then most visits (ties: the better value, then house order) or the best
    mean value."""
    final = check_choice("final", final, FINALS)
    if not isinstance(children, list) or not children or not all(
            isinstance(c, dict) and {"move", "visits", "value", "proven"} <= set(c) for c in children):
        raise ValueError("children must be a non-empty list of dicts with move, visits, value and proven")
    wins = [c for c in children if c["proven"] == "win"]
    if wins:
        return wins[0]["move"]
    pool = [c for c in children if c["proven"] != "loss"] or children
    visited = [c for c in pool if c["visits"] > 0] or pool
    if final == "value":
        return max(visited, key=lambda c: (c["value"] if c["value"] is not None else -1.0, c["visits"]))["move"]
    return max(visited, key=lambda c: (c["visits"], c["value"] if c["value"] is not None else -1.0))["move"]


def monte_carlo_search(state, *, playouts: int = 1000, time_limit: float | None = None,
                       seed: int = 0, threads: int = 1, stop=None) -> dict:
    """Pure Monte Carlo (the "Multiagent Search" chapter's expected-outcome model, 3.5):
    no tree; ``playouts`` random playouts shared evenly among the root moves
    (rounds until ``time_limit`` if given), each move scored E = (W - L) / N
    for the root player; the best E is played. ``stop`` (a
    ``threading.Event``) is read between rounds: a round is at most
    MAX_PLAYOUTS_PER_STATE playouts a move (0.6 s at Kalah(6,4) on one core), and a
    stopped search has ``interrupted`` True."""
    game = game_of(state)
    playouts = check_int("playouts", playouts, 1, MAX_PLAYOUTS_PER_STATE)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, 0.0, MAX_TIME, lo_open=True)
    seed = check_seed("seed", seed)
    threads = check_int("threads", threads, 1, max_threads())
    check_stop(stop)
    if state.is_over:
        raise ValueError("the game is over: no move to search")
    start = time.perf_counter()
    root = state.player
    moves = state.legal_moves()
    kids = [state.play(mv) for mv in moves]
    wins = np.zeros(len(moves))
    losses = np.zeros(len(moves))
    count = np.zeros(len(moves))
    live = [i for i, k in enumerate(kids) if not k.is_over]
    for i, k in enumerate(kids):
        if k.is_over:  # exact: a finished game needs no playout
            mine = k.margin if root == 0 else -k.margin
            wins[i], losses[i], count[i] = float(mine > 0), float(mine < 0), 1.0
    per_move = max(1, playouts // len(moves))
    rnd = 0
    while live and not (stop is not None and stop.is_set()):
        r = evaluate_states(game, [kids[i] for i in live], per_move, mix64_py(seed + rnd), threads=threads)
        for j, i in enumerate(live):
            same = kids[i].player == root
            wins[i] += r["wins"][j] if same else r["losses"][j]
            losses[i] += r["losses"][j] if same else r["wins"][j]
            count[i] += per_move
        rnd += 1
        if time_limit is None or time.perf_counter() - start >= time_limit:
            break
    interrupted = stop is not None and stop.is_set()
    expected = (wins - losses) / np.maximum(count, 1.0)
    best = int(np.argmax(expected))
    return {"move": moves[best], "children": [{"move": mv, "expected": float(e), "playouts": int(c)}
                                               for mv, e, c in zip(moves, expected, count)],
            "simulations": int(count.sum()), "seconds": time.perf_counter() - start, "interrupted": interrupted}

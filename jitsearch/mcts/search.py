"""MCTS agents on Kalah: UCT (three exploration formulas), progressive bias,
HMCTS, MCTS-Solver, root parallelism, and pure Monte Carlo.

Conventions: the player to move at the root chooses; rewards are 1 / 0.5 / 0
for a win / draw / loss (or seed 003's heuristic mapped into [0, 1] for
HMCTS), credited to the player who moved into a node (see
:mod:`jitsearch.mcts.tree`). A *simulation* is one playout; an *iteration*
selects, expands and evaluates one leaf with ``playouts`` playouts.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..games.kalah import KalahState
from ..kernels.playouts import evaluate_cpu
from ..kernels.rng import mix64_py
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes
from .tree import (DRAW, FORMULAS, LOSS, N_PARAMS, P_C, P_EMPTY_CAPTURE, P_FORMULA, P_PB, P_PLAYOUT_DEPTH,
                   P_PLAYOUTS, P_REWARD, P_SOLVER, REWARDS, UNKNOWN, WIN, MCTSTree, mcts_iterate)

PROVEN_NAMES = {UNKNOWN: None, WIN: "win", DRAW: "draw", LOSS: "loss"}


@dataclass
class MCTSConfig:
    """Options of :func:`mcts_search` (each documented there)."""

    iterations: int | None = 1000
    time: float | None = None
    c: float = math.sqrt(2)
    formula: str = "ucb1"
    pb: float = 0.0
    reward: str = "win"
    playout_depth: int = 0
    solver: bool = False
    playouts: int = 1
    final: str = "visits"
    workers: int = 1
    capacity: int | None = None
    backend: str | None = None
    batch: int = 64
    virtual_loss: float = 1.0

    def validate(self):
        if self.iterations is None and self.time is None:
            raise ValueError("give iterations= or time=")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")
        if self.time is not None and not self.time > 0:
            raise ValueError(f"time must be > 0, got {self.time}")
        if self.formula not in FORMULAS:
            raise ValueError(f"formula must be one of {', '.join(FORMULAS)}, got {self.formula!r}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {self.reward!r}")
        if self.final not in ("visits", "value"):
            raise ValueError(f"final must be visits or value, got {self.final!r}")
        if not (self.c >= 0 and math.isfinite(self.c)):
            raise ValueError(f"c must be a finite number >= 0, got {self.c}")
        if not (self.pb >= 0 and math.isfinite(self.pb)):
            raise ValueError(f"pb must be a finite number >= 0, got {self.pb}")
        if self.playout_depth < 0:
            raise ValueError(f"playout_depth must be >= 0 (0 = to the end), got {self.playout_depth}")
        if self.playouts < 1:
            raise ValueError(f"playouts must be >= 1, got {self.playouts}")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.backend is not None:
            from ..kernels.backend import BACKENDS

            if self.backend not in BACKENDS:
                raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
            if self.batch < 1:
                raise ValueError(f"batch must be >= 1, got {self.batch}")
            if not self.virtual_loss > 0:
                raise ValueError(f"virtual_loss must be > 0, got {self.virtual_loss}")
            if self.solver:
                raise ValueError("the solver runs with the in-kernel playouts only (leave backend unset)")
            if self.reward != "win" or self.playout_depth:
                raise ValueError("batched leaf evaluation plays random playouts to the end (reward=win)")

    @classmethod
    def from_options(cls, **options) -> "MCTSConfig":
        """A config from keyword options; ``time`` alone means no iteration cap."""
        if "time" in options and "iterations" not in options:
            options["iterations"] = None
        if "solver" in options:
            options["solver"] = bool(options["solver"])
        return cls(**options)

    def params(self, empty_capture: bool) -> np.ndarray:
        p = np.zeros(N_PARAMS, dtype=np.float64)
        p[P_C] = self.c
        p[P_FORMULA] = FORMULAS[self.formula]
        p[P_PB] = self.pb
        p[P_REWARD] = REWARDS[self.reward]
        p[P_PLAYOUT_DEPTH] = self.playout_depth
        p[P_SOLVER] = 1.0 if self.solver else 0.0
        p[P_PLAYOUTS] = self.playouts
        p[P_EMPTY_CAPTURE] = 1.0 if empty_capture else 0.0
        return p


def worker_seed(seed: int, worker: int) -> int:
    """Seed of root-parallel tree ``worker`` (worker 0 keeps ``seed``)."""
    return seed if worker == 0 else mix64_py(seed * 0x9E3779B97F4A7C15 + worker)


def _grow(state: KalahState, cfg: MCTSConfig, seed: int, iterations: int | None, deadline: float | None,
          max_bytes: int) -> tuple[MCTSTree, int]:
    m = state.houses
    if cfg.capacity is not None:
        capacity = cfg.capacity
    elif iterations is not None:
        capacity = iterations * m + 1
    else:
        capacity = min(1 << 22, max_bytes // MCTSTree.bytes_per_node(m))
    capacity = max(capacity, m + 1)
    check_bytes(capacity * MCTSTree.bytes_per_node(m), max_bytes, f"an MCTS tree of {capacity:,} nodes",
                "lower iterations= / capacity= or raise --max-memory")
    tree = MCTSTree(capacity, m)
    tree.set_root(state.board, state.player)
    params = cfg.params(state.empty_capture)
    if cfg.backend is not None:
        return _grow_batched(tree, state, cfg, params, seed, iterations, deadline)
    args = (*tree.arrays(), m, params, np.uint64(seed))
    done = 0
    if iterations is not None and deadline is None:
        done = int(mcts_iterate(*args, 0, iterations))
        return tree, done
    chunk = 32
    while True:
        todo = chunk if iterations is None else min(chunk, iterations - done)
        if todo <= 0:
            break
        t0 = time.perf_counter()
        got = int(mcts_iterate(*args, done, todo))
        done += got
        if got < todo or time.perf_counter() >= deadline:
            break
        if time.perf_counter() - t0 < 0.01:
            chunk *= 2
    return tree, done


def _grow_batched(tree, state, cfg, params, seed, iterations, deadline):
    """MCTS whose leaves are evaluated in batches: ``batch`` leaves chosen
    with virtual loss, ``playouts`` playouts each, one backend launch per
    step (:func:`jitsearch.kernels.backend.evaluate`); an iteration = a leaf."""
    from ..kernels.backend import evaluate, resolve
    from .tree import backup_batch, select_batch

    backend = resolve(cfg.backend)
    leaves = np.empty(cfg.batch, dtype=np.int64)
    m = state.houses
    done = 0
    step = 0
    while True:
        want = cfg.batch if iterations is None else min(cfg.batch, iterations - done)
        if want <= 0 or (deadline is not None and time.perf_counter() >= deadline):
            break
        count = int(select_batch(*tree.arrays(), m, params, want, float(cfg.virtual_loss), leaves))
        live = [int(x) for x in leaves[:count] if tree.to_move[x] >= 0]
        wins = np.zeros(max(len(live), 1), dtype=np.int64)
        draws = np.zeros_like(wins)
        if live:
            r = evaluate(tree.boards[live], tree.to_move[live].astype(np.int64), cfg.playouts,
                         mix64_py(seed * 0x9E3779B97F4A7C15 + step), empty_capture=state.empty_capture,
                         backend=backend)
            wins, draws = r["wins"], r["draws"]
        backup_batch(tree.parent, tree.mover_in, tree.to_move, tree.visits, tree.value, tree.boards, m, leaves, count,
                     float(cfg.virtual_loss), wins, draws, float(cfg.playouts))
        done += count
        step += 1
    return tree, done


def mcts_search(state: KalahState, config: MCTSConfig | None = None, *, seed: int = 0,
                max_bytes: int = DEFAULT_MAX_BYTES, **options) -> dict:
    """Monte Carlo tree search from ``state`` for its player to move.

    Options (or an :class:`MCTSConfig`): ``iterations`` and/or ``time``
    (seconds; anytime), ``c`` (exploration constant), ``formula`` (``ucb1``:
    w/n + c·sqrt(ln N / n); ``sqrt``: w/n + c·sqrt(N)/n; ``sqrtlog``:
    w/n + c·sqrt(ln N)/sqrt(n), seed 004's two alternatives), ``pb``
    (progressive bias weight: + pb·p_i·sqrt(N)/n, p_i a softmax of the
    one-step heuristic), ``reward`` (``win`` or ``heuristic`` = HMCTS),
    ``playout_depth`` (cut playouts after that many plies and score them by
    the heuristic; 0 = play to the end), ``solver`` (MCTS-Solver),
    ``playouts`` (per expanded leaf), ``final`` (``visits`` or ``value``),
    ``workers`` (root parallelism: independent trees on threads, their root
    statistics summed; the iteration budget is split among them),
    ``backend`` (``cpu`` / ``cuda`` / ``auto``: evaluate leaves in batches of
    ``batch`` chosen with ``virtual_loss``, ``playouts`` each, one launch per
    batch; unset = playouts inside the CPU kernel, one leaf at a time).

    Returns ``move``, ``children`` (move, visits, value = mean reward of the
    root player, proven), ``iterations``, ``simulations``, ``nodes``,
    ``seconds``, ``proven`` (the root's value if the solver proved it).
    """
    if config is not None and options:
        raise ValueError("give either a config or options, not both")
    cfg = config if config is not None else MCTSConfig.from_options(**options)
    cfg.validate()
    if state.is_over:
        raise ValueError("the game is over: no move to search")
    start = time.perf_counter()
    deadline = None if cfg.time is None else start + cfg.time
    w = cfg.workers
    per_worker = None if cfg.iterations is None else -(-cfg.iterations // w)
    if w == 1:
        results = [_grow(state, cfg, seed, per_worker, deadline, max_bytes)]
    else:
        with ThreadPoolExecutor(max_workers=w) as pool:
            futures = [pool.submit(_grow, state, cfg, worker_seed(seed, i), per_worker, deadline, max_bytes // w)
                       for i in range(w)]
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
           "proven": PROVEN_NAMES[root_proven]}
    if cfg.backend is not None:
        from ..kernels.backend import resolve

        out["backend"] = resolve(cfg.backend)
    return out


def _flip(status: int) -> int:
    return {WIN: LOSS, LOSS: WIN}.get(status, status)


def choose_final_move(children: list[dict], final: str = "visits") -> int:
    """A proven win first; never a proven loss while another move is left;
    then most visits (ties: the better value, then house order) or the best
    mean value."""
    wins = [c for c in children if c["proven"] == "win"]
    if wins:
        return wins[0]["move"]
    pool = [c for c in children if c["proven"] != "loss"] or children
    visited = [c for c in pool if c["visits"] > 0] or pool
    if final == "value":
        return max(visited, key=lambda c: (c["value"] if c["value"] is not None else -1.0, c["visits"]))["move"]
    return max(visited, key=lambda c: (c["visits"], c["value"] if c["value"] is not None else -1.0))["move"]


def monte_carlo_search(state: KalahState, *, playouts: int = 1000, time_limit: float | None = None,
                       seed: int = 0, threads: int = 1) -> dict:
    """Pure Monte Carlo (the expected-outcome model, seed 004 section 3.5):
    no tree; ``playouts`` random playouts shared evenly among the root moves
    (rounds until ``time_limit`` if given), each move scored E = (W - L) / N
    for the root player; the best E is played."""
    if state.is_over:
        raise ValueError("the game is over: no move to search")
    if playouts < 1:
        raise ValueError(f"playouts must be >= 1, got {playouts}")
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
    while live:
        boards = np.stack([kids[i].board for i in live])
        players = np.array([kids[i].player for i in live])
        r = evaluate_cpu(boards, players, per_move, mix64_py(seed + rnd), empty_capture=state.empty_capture,
                         threads=threads)
        for j, i in enumerate(live):
            same = kids[i].player == root
            wins[i] += r["wins"][j] if same else r["losses"][j]
            losses[i] += r["losses"][j] if same else r["wins"][j]
            count[i] += per_move
        rnd += 1
        if time_limit is None or time.perf_counter() - start >= time_limit:
            break
    expected = (wins - losses) / count
    best = int(np.argmax(expected))
    return {"move": moves[best], "children": [{"move": mv, "expected": float(e), "playouts": int(c)}
                                               for mv, e, c in zip(moves, expected, count)],
            "simulations": int(count.sum()), "seconds": time.perf_counter() - start}

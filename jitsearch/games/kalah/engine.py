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
  deepening driver, :func:`iterate`: :data:`ASPIRATION`), fail-soft.
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

import numpy as np

from ..._checks import check_bool, check_float, check_int
from ..._threads import thread_pool
from .engine_db import NO_PROBE, Probe
from .engine_eval import EVALS, FEATURES, FITTED_WEIGHTS, SCALE, STORE_WEIGHTS, evaluate, features_into  # noqa: F401
from .engine_kernel import (ETC_MIN_DEPTH, EXACT, EXTEND_MIN_DEPTH, INF, LOWER, MAX_PLY, OPT_ETC,  # noqa: F401
                            OPT_EXACT_DEPTH, ROOT_FIRST_SHIFT, UPPER, ThreadState, engine_root, iterate,
                            new_thread_state, run_root)
from .engine_table import SLOT_BYTES, EngineTable, new_engine_table, table_move  # noqa: F401
from .null_window_fast import fast_kernel_fits
from .opening_book import book_move, book_value, shipped_book
from .state import KalahState

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
        # a proof's tests run on the vector kernel where the board and CPU allow it (each test in one call, the
        # deadline watched from this thread), else on the resumable kernel in chunks (:meth:`_chunk`)
        self.vector_proof = fast_kernel_fits(self.houses)
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
                        endgame_db=db, chunk_nodes=chunk, stop=stop_event, fallback_move=False)
        if kept is not None and not r["complete"] and r["iterations"] == 0 and (
                stop_event is None or not stop_event.is_set()):
            # not one test finished: on a loaded machine the proof can lose its whole budget before its first
            # chunk (measured: a proof of 6 nodes stopped unfinished at 0.1 s a move), and then the heuristic
            # search with a tenth of the time may throw the proven result away; one more try, with a floor
            retry = max(until - time.perf_counter(), budget / 2, GUARD_RETRY_SECONDS)
            r = solve_exact(state, time_limit=retry, table=self.solver_table, first_guess=int(first_guess),
                            endgame_db=db, chunk_nodes=self._chunk(retry), stop=stop_event,
                            fallback_move=False)
        if r["seconds"] > 0.01 and r["nodes"] > 10_000:
            self._solver_rate = max(1e5, 0.5 * self._solver_rate + 0.5 * r["nodes"] / r["seconds"])
        lower, upper = (r["lower"], r["upper"]) if sign > 0 else (-r["upper"], -r["lower"])
        complete = bool(r["complete"])
        return {"complete": complete, "lower": int(lower), "upper": int(upper), "move": int(r["best_move"]),
                "nodes": int(r["nodes"]), "seconds": float(r["seconds"]),
                "kept": (not complete and r["best_move_source"] == "bound"
                         and lower >= (0 if kept is None else min(kept, 0)))}

    def _chunk(self, budget: float) -> int | None:
        """Solver nodes a kernel call of the resumable kernel: an eighth of the budget, at most
        :data:`SOLVER_CHUNK_SECONDS`, at the measured rate. The solver looks at its clock and at ``progress``
        (the stop event) only between calls, so this bounds both the overrun of the budget and the stop's
        latency. None on the vector kernel (:attr:`vector_proof`: one call a test, stopped at the deadline)."""
        if self.vector_proof:
            return None
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
                futures.append(pool.submit(iterate, state, self.table, self.generation, self.weights,
                                                 self.probe, options, stop, self.states[i], 1,
                                                 max_depth, self.aspiration, None, results[i]))
            iterate(state, self.table, self.generation, self.weights, self.probe, self.options, stop,
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

"""Uniformly random playouts written once over the game protocol (:mod:`.protocol`), for
every game and both targets.

A playout plays, from a live position, draw ``i`` of its stream picking the ``i``-th ply's
move among the legal ones in the rules' order (``legal``'s); the outcome is player 0's final
margin (:func:`make_evaluate` counts win / draw / loss for each state's player to move).
With the same stream (the RNG ``gen`` of :func:`jitsearch.rng.build`, passed in: :data:`CPU_RNG`,
:data:`INLINE_RNG` or a GPU kernel's) the moves, the boards and the outcome are those of Kalah's
:func:`jitsearch.games.kalah.fast.make_playout` and of the capped playout Oware had of its own.
Every batch of playouts, of any game on any target, keeps the work limits here
(:func:`check_work`).

``make_playout`` is plain Python for Numba's nopython subset: compile it with
``numba.njit`` (rules built with ``njit(inline='always')``, as the project's CPU kernels
do) or ``numba.cuda.jit(device=True)`` (rules built for the device; the board, ``moves`` and
``hist`` are then the thread's local arrays).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import rng
from .._checks import check_int, check_seed
from .._jit import stable_ids
from ..stop import STOP_EVERY_PLAYOUTS
from .protocol import Game

#: Plies to play when there is no cap.
NO_CAP = np.iinfo(np.int64).max
#: A playout without a ply cap in the kernels' arguments (``playout_depth`` 0).
NO_PLY_CAP = 1 << 30
OUTPUTS = ("wins", "draws", "losses", "margin_sum", "plies")
#: Playouts per state in one call: 1..MAX_PLAYOUTS_PER_STATE.
MAX_PLAYOUTS_PER_STATE = 1 << 20
#: States in one call: 1..MAX_STATES.
MAX_STATES = 1 << 24
#: Playouts in one call (states x playouts per state), about an hour on one CPU core.
MAX_PLAYOUTS_PER_CALL = 1 << 32
#: The CPU's playout RNG, fixed ids: the kernels over it load from Numba's disk cache.
CPU_RNG = rng.build(stable_ids(njit(cache=True)))
#: The RNG inlined into its callers: the one the games' fast kernels are compiled over.
INLINE_RNG = rng.build(stable_ids(njit(cache=True, inline="always")))


def check_work(states: int, playouts_per_state: int, what: str = "a playout batch") -> None:
    """Refuse a batch above the documented work limits (before anything is allocated)."""
    states = check_int("states", states, 1, MAX_STATES)
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    if states * playouts_per_state > MAX_PLAYOUTS_PER_CALL:
        raise ValueError(f"{what} of {states:,} states x {playouts_per_state:,} playouts = "
                         f"{states * playouts_per_state:,} playouts is above the limit of "
                         f"{MAX_PLAYOUTS_PER_CALL:,} per call: lower the states or the playouts")


def _tagged(fn, tag):
    """``fn`` named for ``tag`` (a game): closures of one source over different rules get
    different names, hence different fixed ids (:func:`jitsearch._jit.stable_ids`) and cache files."""
    if tag:
        fn.__qualname__ = f"{fn.__qualname__}_{tag}"
        fn.__name__ = f"{fn.__name__}_{tag}"
    return fn


def make_playout(jit, rules, gen, tag=""):
    """Compile ``playout(board, cfg, player, moves, hist, cur, key, max_plies) -> (plies,
    player, cur)`` with ``jit``: at most ``max_plies`` random plies in place on ``board`` from
    a live ``player`` (int64) and cursor ``cur`` (three int64); ``player`` is GAME_OVER (-1)
    at the end when the game ended. ``moves`` holds at least the game's most legal moves,
    ``hist`` the state's record and room for the plies played."""
    legal, apply = rules.legal, rules.apply
    draw, below = gen.draw, gen.below

    def playout(board, cfg, player, moves, hist, cur, key, max_plies):
        plies = 0
        while player >= 0 and plies < max_plies:
            n = legal(board, cfg, player, moves, hist, cur)
            move = moves[below(draw(key, plies), n)]
            player, cur = apply(board, cfg, player, move, hist, cur)
            plies += 1
        return plies, player, cur

    return jit(_tagged(playout, tag))


def add_outcome(wins, draws, losses, margin_sum, plies_out, s, mover, margin, plies):
    """Add one playout's result to state ``s``'s counters on the CPU: its outcome for ``mover``
    (the player to move at the state), player 0's final ``margin`` and its ``plies`` (the GPU
    kernels add the same with atomics: :func:`jitsearch._cuda.add_outcome_atomic`)."""
    plies_out[s] += plies
    margin_sum[s] += margin
    mine = margin if mover == 0 else -margin
    if mine > 0:
        wins[s] += 1
    elif mine < 0:
        losses[s] += 1
    else:
        draws[s] += 1


_record = stable_ids(njit(cache=True, inline="always"))(add_outcome)


@stable_ids(njit(cache=True, inline="always"))  # a fixed id: the closures that call it load from the disk cache
def clear(wins, draws, losses, margin_sum, plies_out, first, last):
    """Zero the counters of states ``first..last-1``."""
    for s in range(first, last):
        wins[s] = 0
        draws[s] = 0
        losses[s] = 0
        margin_sum[s] = 0
        plies_out[s] = 0


def make_evaluate(jit, rules, gen, tag=""):
    """Compile the CPU batch ``evaluate_range(boards, players, hists, rows, plies_done, cfg,
    num_moves, extra_rows, playouts_per_state, seed, first, last, wins, draws, losses,
    margin_sum, plies_out, stop)``: ``playouts_per_state`` playouts of states ``first..last-1``
    (a :class:`.protocol.Packed`), stream ``gen.stream_key(seed, state, playout)``, counts for
    each state's player to move, player 0's margins summed. ``stop`` (int64[1]) is read every
    STOP_EVERY_PLAYOUTS playouts; once non-zero the kernel returns unfinished
    (:mod:`jitsearch.stop`)."""
    playout = make_playout(jit, rules, gen, tag)
    margin = rules.margin
    stream_key = gen.stream_key

    def evaluate_range(boards, players, hists, rows, plies_done, cfg, num_moves, extra_rows, playouts_per_state,
                       seed, first, last, wins, draws, losses, margin_sum, plies_out, stop):
        cells = boards.shape[1]
        cols = hists.shape[2]
        board = np.empty(cells, dtype=boards.dtype)
        hist = np.empty((hists.shape[1] + extra_rows, cols), dtype=hists.dtype)
        moves = np.empty(num_moves, dtype=np.int64)
        clear(wins, draws, losses, margin_sum, plies_out, first, last)
        for s in range(first, last):
            for p in range(playouts_per_state):
                if (p & (STOP_EVERY_PLAYOUTS - 1)) == 0 and stop[0] != 0:
                    return
                for i in range(cells):
                    board[i] = boards[s, i]
                for r in range(rows[s]):
                    for i in range(cols):
                        hist[r, i] = hists[s, r, i]
                cur = (np.int64(0), np.int64(rows[s]), np.int64(plies_done[s]))
                k, _, _ = playout(board, cfg, np.int64(players[s]), moves, hist, cur, stream_key(seed, s, p), NO_CAP)
                _record(wins, draws, losses, margin_sum, plies_out, s, players[s], margin(board, cfg), k)

    return jit(_tagged(evaluate_range, tag))


_COMPILED: dict = {}


def cpu_evaluate(game: Game, gen):
    """The compiled CPU ``evaluate_range`` of ``game`` (rules inlined), one per game and RNG;
    cached on disk when ``gen``'s functions have fixed ids (:func:`jitsearch._jit.stable_ids`)."""
    return compiled_evaluate(game.build, game.name, gen)


def compiled_evaluate(build, name: str, gen):
    """:func:`cpu_evaluate` of the rules ``build`` (a game's :attr:`Game.build`) named ``name``:
    what a game's own modules call, where the :class:`Game` record is not theirs to import."""
    key = (build, name, id(gen))
    if key not in _COMPILED:
        rules = build(stable_ids(njit(inline="always")))
        _COMPILED[key] = (make_evaluate(stable_ids(njit(cache=True, nogil=True)), rules, gen, name), gen)
    return _COMPILED[key][0]


def evaluate(game: Game, states, playouts_per_state: int, seed: int, *, gen) -> dict:
    """Random playouts of each live state (one variant): per state ``wins``, ``draws``,
    ``losses`` for its player to move, ``margin_sum`` (player 0's) and ``plies``, int64 arrays.
    ``gen`` is the CPU RNG, :data:`CPU_RNG` (fixed ids: the compiled batch is then loaded from
    Numba's cache in later processes)."""
    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, 1 << 30)
    seed = check_seed("seed", seed)
    packed = game.pack(states)
    size = game.sizes(packed.cfg)
    k = packed.boards.shape[0]
    out = {name: np.zeros(k, dtype=np.int64) for name in ("wins", "draws", "losses", "margin_sum", "plies")}
    cpu_evaluate(game, gen)(packed.boards, packed.players, packed.hists, packed.rows, packed.plies, packed.cfg,
                            size.moves, size.record[0], playouts_per_state, np.uint64(seed), 0, k, out["wins"],
                            out["draws"], out["losses"], out["margin_sum"], out["plies"], np.zeros(1, np.int64))
    return out

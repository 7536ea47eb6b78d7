"""Kalah's fast playout paths (:attr:`Game.fast_playouts <jitsearch.games.protocol.Game>`):
playouts on a board held in one 16-lane vector (:mod:`.simd_rules`, CPUs with AVX2 and BMI2),
on packed boards (:func:`.rules.build_packed`) and, on the GPU, in registers (:mod:`.register`),
each bit-identical to the protocol's generic playout (:mod:`jitsearch.games.playout`): the same
stream (the RNG ``gen`` is passed in: the kernels own it) picks the same moves.

Which kind a variant gets (:func:`cpu_playout_kind`): ``"simd"`` for 1..MAX_SIMD_HOUSES houses
where the CPU has the instructions and $JITSEARCH_SIMD is not 0, else ``"packed"`` for
MIN_PACKED_HOUSES..MAX_PACKED_HOUSES, else ``"generic"`` (the protocol's playout, which the GPU
runs too). The hook's interface is :func:`kinds` and :func:`cpu_evaluate` (batches),
:func:`gpu_margin` (the tree-parallel GPU kernel) and :func:`tree_key` with :func:`tree_playouts`
(the single-tree MCTS); the rest serves Kalah's own array API of batches.
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit

from ..._checks import check_int, check_seed, kernel_array
from ..._jit import stable_ids
from ..playout import MAX_PLAYOUTS_PER_STATE, MAX_STATES, add_outcome, check_work, clear
from . import rules as kalah_rules
from . import simd_rules
from .simd_rules import vget
from .state import MAX_HOUSES, MAX_SEEDS


def make_playout(jit, rules, gen):
    """Compile one playout with ``jit`` from compiled ``rules`` and ``gen``.

    ``playout(board, m, player, empty_capture, key, max_plies, moves)`` plays
    in place on ``board`` (the caller's buffer), ``moves`` is scratch of at
    least m ints; returns (plies played, player to move at the end or -1).
    """
    apply_move = rules.apply_move
    legal_moves = rules.legal_moves
    draw = gen.draw
    below = gen.below

    def playout(board, m, player, empty_capture, key, max_plies, moves):
        plies = 0
        while player >= 0 and plies < max_plies:
            count = legal_moves(board, m, player, moves)
            pit = moves[below(draw(key, plies), count)]
            player = apply_move(board, m, player, pit, empty_capture)
            plies += 1
        return plies, player

    return jit(playout)


def make_packed_margin(jit, houses, gen):
    """One playout to the end on a packed board (:func:`kalah_rules.build_packed`)
    for ``houses`` m (1..MAX_PACKED_HOUSES): returns (``words``,
    ``packed_margin``), where ``packed_margin(w, board, player, empty_capture,
    key) -> (player 0's final margin, plies)`` loads ``board`` (2m+2 seed
    counts, left unchanged) into ``w`` (scratch of ``words`` uint64) and plays
    from it with ``player`` (0 or 1) to move; draw k of ``key``'s stream picks
    the below(draw, count)-th legal house in house order, so the margin is
    bit-identical to :func:`make_playout`'s with no ply cap."""
    rules = kalah_rules.build_packed(stable_ids(njit(cache=True, inline="always")), houses)
    load, legal_count, step, final_margin = rules.load, rules.legal_count, rules.step, rules.margin
    draw, below = gen.draw, gen.below

    def packed_margin(w, board, player, empty_capture, key):
        side0, side1 = load(w, board)
        k = 0
        while player >= 0:
            count, mask = legal_count(w, player)
            player, side0, side1 = step(w, player, side0, side1, mask, below(draw(key, k), count), empty_capture)
            k += 1
        return final_margin(w, side0, side1), k

    return rules.words, jit(packed_margin)


def make_packed_evaluate(jit, houses, gen):
    """``evaluate_range`` for boards of ``houses`` m (1..MAX_PACKED_HOUSES) on
    packed boards (:func:`make_packed_margin`): the same arguments (``m``
    must equal ``houses``) and bit-identical results, about 1.5x faster on
    one core at Kalah(6,4)."""
    inline = stable_ids(njit(cache=True, inline="always"))
    words, packed_margin = make_packed_margin(inline, houses, gen)
    key_of, record = gen.stream_key, inline(add_outcome)

    def evaluate_packed(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                        wins, draws, losses, margin_sum, plies_out):
        w = np.zeros(words, dtype=np.uint64)
        clear(wins, draws, losses, margin_sum, plies_out, first, last)
        for s in range(first, last):
            for p in range(playouts_per_state):
                margin, k = packed_margin(w, boards[s], players[s], empty_capture, key_of(seed, s, p))
                record(wins, draws, losses, margin_sum, plies_out, s, players[s], margin, k)

    return jit(evaluate_packed)


def make_simd_margin(jit, houses, gen):
    """:func:`make_packed_margin`'s twin on a board vector
    (:func:`simd_rules.build_simd`, m = ``houses`` <= MAX_SIMD_HOUSES, AVX2 and
    BMI2 only): returns (1, ``simd_margin``) with the same signature and
    bit-identical results (``w`` is unused scratch)."""
    rules = simd_rules.build_simd(stable_ids(njit(cache=True, inline="always")), houses)
    load, step, final_margin = rules.load, rules.step, rules.margin
    draw = gen.draw

    def simd_margin(w, board, player, empty_capture, key):
        v, side0, side1 = load(board)
        k = 0
        while player >= 0:
            v, player, side0, side1 = step(v, player, side0, side1, draw(key, k), empty_capture)
            k += 1
        return final_margin(v, side0, side1), k

    return 1, jit(simd_margin)


def make_simd_playout(jit, houses, gen):
    """:func:`make_playout`'s ``playout`` (same signature, same results: the
    board left as the generic rules leave it, swept when the game ended, as
    it stands when ``max_plies`` cut the playout) on a board vector, for m =
    ``houses`` <= MAX_SIMD_HOUSES (AVX2 and BMI2 only); ``moves`` is unused."""
    rules = simd_rules.build_simd(stable_ids(njit(cache=True, inline="always")), houses)
    load, step = rules.load, rules.step
    draw = gen.draw
    m = houses
    n = 2 * m + 2

    def simd_playout(board, m_, player, empty_capture, key, max_plies, moves):
        v, side0, side1 = load(board)
        player = np.int64(player)
        plies = 0
        while player >= 0 and plies < max_plies:
            v, player, side0, side1 = step(v, player, side0, side1, draw(key, plies), empty_capture)
            plies += 1
        for i in range(n):
            board[i] = vget(v, i)
        if player < 0:  # the final sweep: each side's houses to its owner's store
            board[m + 1] += side0
            board[0] += side1
            for i in range(m):
                board[1 + i] = 0
                board[m + 2 + i] = 0
        return plies, player

    return jit(simd_playout)


def make_simd_evaluate(jit, houses, gen):
    """``evaluate_range`` on board vectors (:func:`simd_rules.build_simd`, m =
    ``houses`` <= MAX_SIMD_HOUSES; AVX2 and BMI2 only): the same arguments
    (``m`` must equal ``houses``) and bit-identical results. Two playouts
    run in lock step (their dependency chains overlap); the next playout in
    (state, playout) order takes the place of whichever ends, so per-state
    sums are the same whatever the order the playouts end in."""
    inline = stable_ids(njit(cache=True, inline="always"))
    rules = simd_rules.build_simd(inline, houses)
    load, step, final_margin = rules.load, rules.step, rules.margin
    draw, key_of = gen.draw, gen.stream_key

    def start(boards, players, seed, first, playouts_per_state, job):
        s = first + job // playouts_per_state
        v, side0, side1 = load(boards[s])
        return s, v, players[s], side0, side1, key_of(seed, s, job % playouts_per_state)

    start, record = inline(start), inline(add_outcome)

    def evaluate_simd(boards, players, m, empty_capture, playouts_per_state, seed, first, last,
                      wins, draws, losses, margin_sum, plies_out):
        clear(wins, draws, losses, margin_sum, plies_out, first, last)
        jobs = (last - first) * playouts_per_state
        if jobs <= 0:
            return
        # job j: playout j % playouts_per_state of state first + j // playouts_per_state
        sa, va, pa, a0, a1, ka = start(boards, players, seed, first, playouts_per_state, 0)
        na = 0
        next_job = 1
        if jobs > 1:
            sb, vb, pb, b0, b1, kb = start(boards, players, seed, first, playouts_per_state, 1)
            nb = 0
            next_job = 2
            while True:
                va, pa, a0, a1 = step(va, pa, a0, a1, draw(ka, na), empty_capture)
                vb, pb, b0, b1 = step(vb, pb, b0, b1, draw(kb, nb), empty_capture)
                na += 1
                nb += 1
                if pa >= 0 and pb >= 0:
                    continue
                if pa < 0:
                    record(wins, draws, losses, margin_sum, plies_out, sa, players[sa], final_margin(va, a0, a1), na)
                    if next_job == jobs:  # B goes on alone (as A)
                        sa, va, pa, a0, a1, ka, na = sb, vb, pb, b0, b1, kb, nb
                        break
                    sa, va, pa, a0, a1, ka = start(boards, players, seed, first, playouts_per_state, next_job)
                    na = 0
                    next_job += 1
                if pb < 0:
                    record(wins, draws, losses, margin_sum, plies_out, sb, players[sb], final_margin(vb, b0, b1), nb)
                    if next_job == jobs:  # A goes on alone
                        break
                    sb, vb, pb, b0, b1, kb = start(boards, players, seed, first, playouts_per_state, next_job)
                    nb = 0
                    next_job += 1
        while pa >= 0:
            va, pa, a0, a1 = step(va, pa, a0, a1, draw(ka, na), empty_capture)
            na += 1
        record(wins, draws, losses, margin_sum, plies_out, sa, players[sa], final_margin(va, a0, a1), na)

    return jit(evaluate_simd)


#: The packed kernels from this many houses on (below, the generic ones measured
#: as fast or faster: 0.76x packed/generic at m = 1, 0.97x at 2, 1.06x at 3, 1.32x at 4).
MIN_PACKED_HOUSES = 4
#: Environment variable: ``0`` turns the vector (SIMD) kernels off; unset or
#: ``1``, they run wherever the CPU has AVX2 and BMI2 and m <= MAX_SIMD_HOUSES.
SIMD_ENV = "JITSEARCH_SIMD"


def simd_enabled() -> bool:
    """True when the board-vector kernels may run: the CPU has AVX2 and BMI2
    and $JITSEARCH_SIMD is not ``0`` (any value but 0/1 raises ValueError)."""
    flag = os.environ.get(SIMD_ENV, "1").strip()
    if flag not in ("0", "1", ""):
        raise ValueError(f"{SIMD_ENV} must be 0 (scalar kernels) or 1 (vector kernels where the CPU has them), "
                         f"got {flag!r}")
    return flag != "0" and simd_rules.host_has_simd()


#: The CPU playout kernels, fastest first (every one gives the same results).
KERNEL_KINDS = ("simd", "packed", "generic")


def cpu_playout_kind(m: int, simd: bool | None = None) -> str:
    """Which CPU playout kernel m houses get: ``"simd"`` (board vectors,
    1..MAX_SIMD_HOUSES, when ``simd``, default :func:`simd_enabled`),
    ``"packed"`` (MIN_PACKED_HOUSES..MAX_PACKED_HOUSES) or ``"generic"``."""
    if simd is None:
        simd = simd_enabled()
    if simd and 1 <= m <= simd_rules.MAX_SIMD_HOUSES:
        return "simd"
    if MIN_PACKED_HOUSES <= m <= kalah_rules.MAX_PACKED_HOUSES:
        return "packed"
    return "generic"


def available_kinds(m: int) -> tuple:
    """The kernel kinds that can run m houses on this CPU (``"simd"`` only when
    :func:`simd_enabled`; ``"packed"`` for 1..MAX_PACKED_HOUSES)."""
    kinds = []
    if simd_enabled() and 1 <= m <= simd_rules.MAX_SIMD_HOUSES:
        kinds.append("simd")
    if 1 <= m <= kalah_rules.MAX_PACKED_HOUSES:
        kinds.append("packed")
    return tuple(kinds) + ("generic",)


def check_kernel(m: int, kernel) -> str:
    """``kernel`` (None: :func:`cpu_playout_kind`) checked against
    :func:`available_kinds`; ValueError with the choices otherwise."""
    if kernel is None:
        return cpu_playout_kind(m)
    kinds = available_kinds(m)
    if kernel not in kinds:
        why = "" if kernel not in KERNEL_KINDS else f" for {m} houses on this CPU"
        raise ValueError(f"kernel must be one of {', '.join(kinds)}{why}, got {kernel!r}")
    return kernel




def kinds(cfg, simd: bool | None = None) -> tuple:
    """The hook's kinds for the variant ``cfg`` = (m, empty_capture): :func:`cpu_playout_kind`'s
    first, then the others :func:`available_kinds` lists (``"generic"`` last)."""
    m = int(cfg[0])
    first = cpu_playout_kind(m, simd)
    return (first,) + tuple(k for k in available_kinds(m) if k != first and (simd is not False or k != "simd"))


_RANGES: dict = {}


def cpu_range(houses: int, kind: str, gen):
    """``evaluate_range(boards, players, m, empty_capture, playouts_per_state, seed, first,
    last, wins, draws, losses, margin_sum, plies_out)`` of ``kind`` ("simd" or "packed") for
    ``houses`` over ``gen``, compiled once per process (cached on disk)."""
    key = (int(houses), kind, id(gen))
    if key not in _RANGES:
        if kind not in ("simd", "packed"):
            raise ValueError(f"kind must be simd or packed, got {kind!r}")
        make = make_simd_evaluate if kind == "simd" else make_packed_evaluate
        _RANGES[key] = (make(stable_ids(njit(cache=True, nogil=True)), int(houses), gen), gen)
    return _RANGES[key][0]


_PROTOCOL: dict = {}


def cpu_evaluate(cfg, kind: str, gen):
    """The hook's CPU batch of ``kind`` (not "generic") for the variant ``cfg``: the protocol's
    ``evaluate_range`` signature (:func:`jitsearch.games.playout.make_evaluate`) over
    :func:`cpu_range`; ``stop`` is not read (a caller with a stop flag takes the generic kernel)."""
    key = (int(cfg[0]), kind, id(gen))
    if key not in _PROTOCOL:
        _PROTOCOL[key] = _protocol_range(cpu_range(int(cfg[0]), kind, gen))
    return _PROTOCOL[key]


def _protocol_range(inner):
    """``inner`` (Kalah's batch signature) behind the protocol's ``evaluate_range`` signature."""

    def evaluate_range(boards, players, hists, rows, plies_done, cfg, num_moves, extra_rows, playouts_per_state,
                       seed, first, last, wins, draws, losses, margin_sum, plies_out, stop):
        inner(boards, players, cfg[0], cfg[1], playouts_per_state, seed, first, last, wins, draws, losses,
              margin_sum, plies_out)

    return stable_ids(njit(cache=True, nogil=True))(evaluate_range)


def gpu_margin(device, cfg):
    """The GPU's fast playout of the variant ``cfg`` = (m, empty_capture) for the tree-parallel
    kernel: ``margin(board, cfg, player, key) -> player 0's final margin`` with the board in
    registers (:mod:`.register`, compiled with ``device`` for this m), the generic playout's game
    with no ply cap. ``device`` None only asks whether the variant has one (every m has)."""
    if device is None:
        return True
    from . import register

    inner = register.build_board(device, int(cfg[0]))

    def margin(board, cfg, player, key):
        d, _ = inner(board, player, cfg[1], key)
        return d

    return device(margin)


# -- the single-tree MCTS's playouts (jitsearch.mcts.tree) ------------------------------------------

def tree_key(cfg, to_the_end: bool):
    """The name of the fast playouts a single MCTS tree of variant ``cfg`` runs (None: the generic
    playout); ``to_the_end``: a tree whose leaves get playouts to the end only."""
    m = int(cfg[0])
    kind = cpu_playout_kind(m)
    if kind == "generic":
        return None
    return f"{kind}{m}" + ("_end" if to_the_end else "")


_TREE: dict = {}


def tree_playouts(key: str, gen):
    """``(words, margin_playout, cut_playout)`` for a :func:`tree_key`: ``margin_playout(w, board,
    cfg, player, key) -> player 0's final margin`` (``w``: scratch of ``words`` uint64) and
    ``cut_playout(board, cfg, player, moves, key, max_plies) -> player to move at the end`` (None:
    the generic playout), the protocol playout's results. Compiled once per process."""
    if (key, id(gen)) not in _TREE:
        _TREE[key, id(gen)] = (_tree_playouts(key, gen), gen)
    return _TREE[key, id(gen)][0]


def _tree_playouts(key: str, gen):
    to_the_end = key.endswith("_end")
    kind = "simd" if key.startswith("simd") else "packed"
    m = int(key[len(kind):].removesuffix("_end"))
    inline = stable_ids(njit(cache=True, inline="always"))
    make = make_simd_margin if kind == "simd" else make_packed_margin
    words, margin = make(inline, m, gen)

    def margin_playout(w, board, cfg, player, key):
        mg, _ = margin(w, board, player, cfg[1], key)
        return mg

    cut = None
    if kind == "simd" and not to_the_end:
        simd_cut = make_simd_playout(inline, m, gen)

        def cut_playout(board, cfg, player, moves, key, max_plies):
            _, end = simd_cut(board, cfg[0], player, cfg[1], key, max_plies, moves)
            return end

        cut = inline(cut_playout)
    return words, inline(margin_playout), cut


# -- Kalah's batches of boards: the checks of the array API (jitsearch.games.kalah.playouts) ----------

#: Bytes allocated per state by a call: a copy of its board (int32[n]), its
#: player (int64) and five int64 counters.
OUTPUT_BYTES_PER_STATE = 8 + 5 * 8


def validate_batch(boards, players, playouts_per_state, seed):
    """Check a batch at the Python boundary; returns (boards int32[K, n], players int64[K], m).

    ``boards``: [K, 2m+2] (or one board [2m+2]) of non-negative integers,
    each a live game (both sides with seeds) of at most MAX_SEEDS seeds;
    ``players``: one 0/1 per board, or one for all; ``playouts_per_state``
    and K within :func:`check_work`; ``seed`` in [0, 2**64). The boards come
    back as a writable int32 array (a copy when needed).
    """
    from ...trees.memory import DEFAULT_MAX_BYTES, check_bytes

    playouts_per_state = check_int("playouts_per_state", playouts_per_state, 1, MAX_PLAYOUTS_PER_STATE)
    seed = check_seed("seed", seed)
    if isinstance(boards, (str, bytes)) or boards is None:
        raise ValueError(f"boards must be an integer array [K, 2m+2], got {type(boards).__name__}")
    try:
        b = np.asarray(boards)
    except Exception:  # noqa: BLE001
        raise ValueError("boards must be an integer array [K, 2m+2]") from None
    if b.ndim == 1:
        b = b[None, :]
    if b.ndim != 2 or b.shape[1] < 4 or b.shape[1] % 2:
        raise ValueError(f"boards must be [K, 2m+2] with m >= 1, got shape {b.shape}")
    if b.dtype.kind not in "iu":
        raise ValueError(f"boards must hold integers, got dtype {b.dtype}")
    m = b.shape[1] // 2 - 1
    if m > MAX_HOUSES:
        raise ValueError(f"at most {MAX_HOUSES} houses, got {m}")
    k = b.shape[0]
    if k > MAX_STATES:
        raise ValueError(f"at most {MAX_STATES:,} states per call, got {k:,}")
    if k:
        check_work(k, playouts_per_state)
    check_bytes(k * (4 * b.shape[1] + OUTPUT_BYTES_PER_STATE), DEFAULT_MAX_BYTES,
                f"a playout batch of {k:,} states", "evaluate fewer states per call")
    if b.size and b.min() < 0:
        raise ValueError("boards hold a negative seed count")
    if b.size and b.max() > MAX_SEEDS:
        raise ValueError(f"a board holds more than {MAX_SEEDS} seeds (the limit of a board)")
    if k and b.sum(axis=1, dtype=np.int64).max() > MAX_SEEDS:
        raise ValueError(f"a board holds more than {MAX_SEEDS} seeds (the limit of a board)")
    if isinstance(players, (str, bytes)) or players is None:
        raise ValueError(f"players must be 0 or 1 per board, got {players!r}")
    p = np.asarray(players)
    if p.dtype.kind not in "iu":
        raise ValueError(f"players must be integers 0 or 1, got dtype {p.dtype}")
    if p.ndim == 0:
        p = np.full(k, int(p))
    if p.shape != (k,):
        raise ValueError(f"players must have one entry per board ({k}), got shape {p.shape}")
    if p.size and not np.isin(p, (0, 1)).all():
        raise ValueError("players must be 0 or 1 (the player to move; finished games cannot be played out)")
    # a side with no seeds left means the game is over: nothing to play out
    side0 = b[:, 1:m + 1].sum(axis=1)
    side1 = b[:, m + 2:].sum(axis=1)
    if k and ((side0 == 0) | (side1 == 0)).any():
        raise ValueError("a board has an empty side: that game is already over")
    return kernel_array(b, np.int32), kernel_array(p, np.int64), m

"""Kalah playouts with the board in registers: the GPU's fast playout (6.2x the generic
kernel's playouts/s, measured on an H100), bit-identical to the generic playout.

The generic playout keeps the board in an array indexed at run time, which a
GPU holds in local memory (a load and a store through L1 for every seed
sown). Here, for a fixed number of houses m, the board is 2m + 2 scalar
variables, every access at an index known when the code is compiled, so
the whole game stays in registers. The variables hold the board *as the
player to move sees it*:

    a0 .. a{m-1}   the mover's houses, in house order (its first house first)
    S              the mover's store
    o0 .. o{m-1}   the opponent's houses, in house order
    T              the opponent's store

so one description serves both players; when the turn passes, the two halves
swap. Sowing ``seeds`` from house ``j`` is arithmetic on the ring of the
2m + 1 pits the mover sows into (its houses, its store, the opponent's
houses): with ``laps, rem = divmod(seeds, 2m + 1)``, the pit at ring
distance d = 1 .. 2m + 1 past ``j`` gains ``laps + (d <= rem)``, which is
one compare and one add per pit, with no loop over seeds and no branch. The
last seed lands at ring index ``(j + rem) mod (2m + 1)``; capture, extra
move and the final sweep follow the rules of
:mod:`jitsearch.games.kalah.rules` exactly (including a capture only with
seeds opposite unless ``empty_capture``).

The draws are the playout stream of :func:`jitsearch.rng.build` (the
``i``-th draw is ``mix64(key + (i + 1) * GOLDEN)``, kept here as a running
sum), and the ``r``-th legal house in house order is played, as the generic
playout does: the same (seed, state, playout) gives the same game, margin
and ply count on every engine.

The source is generated per m (Python cannot name a variable per house
otherwise) and compiled with the caller's decorator: ``numba.njit`` for the
CPU (the tests compare it with the generic playout, position by position:
:func:`.playouts.evaluate_register_cpu`) or ``numba.cuda.jit(device=True)``
(:mod:`.cuda_playouts`).
"""

from __future__ import annotations

import numpy as np

from ...rng import GOLDEN, mix64_body
from .state import MAX_HOUSES

_U32 = np.uint64(32)


def _check_houses(houses) -> int:
    m = int(houses)
    if not 1 <= m <= MAX_HOUSES:
        raise ValueError(f"houses must lie in 1..{MAX_HOUSES}, got {houses}")
    return m


def _load_lines(m: int, t: str, source: str = "boards[s, {}]") -> list[str]:
    """Read the board (``source`` formatted with a pit index: a row of a
    batch, or a board of its own) into the variables as ``mover`` sees it;
    start its stream and ply count."""
    lines = []
    for mover, (own_first, own_store, opp_first, opp_store) in enumerate(((1, m + 1, m + 2, 0),
                                                                          (m + 2, 0, 1, m + 1))):
        lines.append(f"{t}if mover == 0:" if mover == 0 else f"{t}else:")
        for i in range(m):
            lines.append(f"{t}    a{i} = int32({source.format(own_first + i)})")
        lines.append(f"{t}    S = int32({source.format(own_store)})")
        for i in range(m):
            lines.append(f"{t}    o{i} = int32({source.format(opp_first + i)})")
        lines.append(f"{t}    T = int32({source.format(opp_store)})")
    lines += [f"{t}side = int32(mover)",  # whose view the variables hold
              f"{t}counter = uint64(key)",
              f"{t}plies = int32(0)"]
    return lines


def _ply_lines(m: int, t: str) -> list[str]:
    """One ply of the player whose view the variables hold; ends with ``over``
    (the game ended: the stores hold the final counts) and ``pos`` (the
    ring index of the last seed; ``m``: the mover's store, another move)."""
    ring = 2 * m + 1
    a = [f"a{i}" for i in range(m)]
    o = [f"o{i}" for i in range(m)]
    lines = []
    add = lines.append
    # the draw and the legal count
    add(f"{t}counter = counter + GOLDEN")
    add(f"{t}x = mix64(counter)")
    add(f"{t}count = int32(0)")
    for i in range(m):
        add(f"{t}count = int32(count + 1) if {a[i]} > 0 else count")
    add(f"{t}left = int32(((x >> U32) * uint64(count)) >> U32)")
    # the left-th non-empty house, in house order (the last house when none:
    # the generic playout's choice on an empty side, then swept)
    add(f"{t}seeds = int32(0)")
    add(f"{t}j = int32({m - 1})")
    for i in range(m):
        add(f"{t}hit = ({a[i]} > 0) & (left == 0)")
        add(f"{t}seeds = {a[i]} if hit else seeds")
        add(f"{t}j = int32({i}) if hit else j")
        add(f"{t}left = int32(left - 1) if {a[i]} > 0 else left")
    # sowing: whole laps, then one seed to each of the next rem pits
    add(f"{t}laps = int32(seeds // {ring})")
    add(f"{t}rem = int32(seeds - laps * {ring})")
    add(f"{t}pos = int32(j + rem)")
    add(f"{t}pos = int32(pos - {ring}) if pos >= {ring} else pos")
    for q in range(ring):
        add(f"{t}d = int32({q} - j - 1)")
        add(f"{t}d = int32(d + {ring}) if d < 0 else d")
        add(f"{t}gain = int32(laps + 1) if d < rem else laps")
        if q < m:
            add(f"{t}{a[q]} = int32(gain) if j == {q} else int32({a[q]} + gain)")
        elif q == m:
            add(f"{t}S = int32(S + gain)")
        else:
            add(f"{t}{o[q - m - 1]} = int32({o[q - m - 1]} + gain)")
    # capture: the last seed in an own house that was empty; the house
    # opposite own house i is the opponent's house m - 1 - i
    add(f"{t}if pos < {m}:")
    add(f"{t}    own = {a[m - 1]}")
    add(f"{t}    opp = {o[0]}")
    for i in range(m - 1):
        add(f"{t}    own = {a[i]} if pos == {i} else own")
        add(f"{t}    opp = {o[m - 1 - i]} if pos == {i} else opp")
    add(f"{t}    if own == 1 and (opp > 0 or empty_capture):")
    add(f"{t}        S = int32(S + opp + 1)")
    for i in range(m):
        add(f"{t}        {a[i]} = int32(0) if pos == {i} else {a[i]}")
        add(f"{t}        {o[m - 1 - i]} = int32(0) if pos == {i} else {o[m - 1 - i]}")
    add(f"{t}plies = int32(plies + 1)")
    # the end: a side without seeds; each side's seeds go to its owner
    add(f"{t}over = (({' | '.join(a)}) == 0) | (({' | '.join(o)}) == 0)")
    add(f"{t}if over:")
    add(f"{t}    S = int32(S + " + " + ".join(a) + ")")
    add(f"{t}    T = int32(T + " + " + ".join(o) + ")")
    add(f"{t}elif pos != {m}:")  # no extra move: the other player's view
    for i in range(m):
        add(f"{t}    swap = {a[i]}")
        add(f"{t}    {a[i]} = int32({o[i]})")
        add(f"{t}    {o[i]} = int32(swap)")
    add(f"{t}    swap = S")
    add(f"{t}    S = int32(T)")
    add(f"{t}    T = int32(swap)")
    add(f"{t}    side = int32(1 - side)")
    return lines


_MARGIN = "int32(S - T) if side == 0 else int32(T - S)"  # player 0's final margin


def playout_source(houses: int) -> str:
    """Python source of ``register_playout(boards, s, mover, empty_capture,
    key) -> (player 0's final margin, plies)`` for boards of ``houses``
    houses: the playout of ``boards[s]`` (a live game, ``mover`` 0 or 1 to
    move) with the stream ``key``, read from the array and played in
    scalar variables (the array is not written)."""
    m = _check_houses(houses)
    lines = ["def register_playout(boards, s, mover, empty_capture, key):"]
    lines += _load_lines(m, "    ")
    lines.append("    over = False")
    lines.append("    while not over:")
    lines += _ply_lines(m, "        ")
    lines.append(f"    return {_MARGIN}, plies")
    return "\n".join(lines) + "\n"


def jobs_source(houses: int) -> str:
    """Python source of ``register_jobs(boards, players, empty_capture,
    playouts_per_state, seed, job, stride, total, wins, draws, losses,
    margin_sum, plies_out)``: the playouts ``job, job + stride, ... <
    total`` (job = state * playouts_per_state + playout), each recorded with
    ``record`` as it ends. A thread that finishes a game starts its next one
    at once, inside the same loop over plies, so the threads of a GPU warp
    do not wait for the longest game of the warp at every job (the plain
    grid-stride loop over :func:`playout_source`'s playout does)."""
    m = _check_houses(houses)
    lines = ["def register_jobs(boards, players, empty_capture, playouts_per_state, seed, job, stride, total,",
             "                  wins, draws, losses, margin_sum, plies_out):",
             "    if job >= total:",
             "        return",
             "    s = job // playouts_per_state",
             "    mover = players[s]",
             "    key = stream_key(seed, s, job - s * playouts_per_state)"]
    lines += _load_lines(m, "    ")
    lines.append("    while job < total:")
    lines += _ply_lines(m, "        ")
    lines += ["        if over:",
              f"            record(wins, draws, losses, margin_sum, plies_out, s, mover, {_MARGIN}, plies)",
              "            job += stride",
              "            if job < total:",
              "                s = job // playouts_per_state",
              "                mover = players[s]",
              "                key = stream_key(seed, s, job - s * playouts_per_state)"]
    lines += _load_lines(m, "                ")
    return "\n".join(lines) + "\n"


def _namespace(jit) -> dict:
    return {"int32": np.int32, "uint64": np.uint64, "GOLDEN": GOLDEN, "U32": _U32, "mix64": jit(mix64_body)}


def _compiled(source: str, name: str, namespace: dict, houses: int):
    exec(compile(source, f"<{name} m={int(houses)}>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def build_jobs(jit, houses: int, stream_key, record):
    """``register_jobs`` for ``houses`` compiled with ``jit``, calling the
    compiled ``stream_key`` (:func:`jitsearch.rng.build`) and
    ``record(wins, draws, losses, margin_sum, plies, s, mover, margin,
    plies_played)`` (plain adds on the CPU, atomics on a GPU)."""
    namespace = _namespace(jit)
    namespace.update(stream_key=stream_key, record=record)
    return jit(_compiled(jobs_source(houses), "register_jobs", namespace, houses))


def board_playout_source(houses: int) -> str:
    """Python source of ``register_board_playout(board, mover,
    empty_capture, key) -> (player 0's final margin, plies)``: as
    :func:`playout_source`'s playout, from one board of 2m + 2 pits (the
    MCTS leaf), which is not written."""
    m = _check_houses(houses)
    lines = ["def register_board_playout(board, mover, empty_capture, key):"]
    lines += _load_lines(m, "    ", "board[{}]")
    lines.append("    over = False")
    lines.append("    while not over:")
    lines += _ply_lines(m, "        ")
    lines.append(f"    return {_MARGIN}, plies")
    return "\n".join(lines) + "\n"


def build_board(jit, houses: int):
    """``register_board_playout`` for ``houses`` compiled with ``jit``."""
    return jit(_compiled(board_playout_source(houses), "register_board_playout", _namespace(jit), houses))


def build(jit, houses: int):
    """``register_playout`` for ``houses`` compiled with ``jit`` (and the
    mixer with the same decorator)."""
    return jit(_compiled(playout_source(houses), "register_playout", _namespace(jit), houses))

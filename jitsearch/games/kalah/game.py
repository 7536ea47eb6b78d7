"""Kalah behind the game protocol (:mod:`jitsearch.games.protocol`): the adapter of
:mod:`.rules` to the one compiled signature, and the :data:`GAME` record.

``cfg = (m, empty_capture)``; no record (the cursor passes through, its ply counts moves);
``margin`` is player 0's store minus player 1's; ``evaluate`` the same store difference on a
live board (the ``store`` evaluation of the MCTS kernels, before their squash).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ...rng import GOLDEN, mix64_body
from ..protocol import (GAME_OVER, ArenaHooks, EngineProtocol, Game, OpenSpielMap, Option, Packed, SearchEval,
                        Sizes, TextUI, check_states, legal_move, no_record, rule_word_line, store_value,
                        styled, typed_number)
from . import openings, playouts, rules
from .engines import ENGINES
from .state import BOARD_DTYPE, MAX_HOUSES, KalahState

__all__ = ["GAME", "build"]


#: Kalah's rules behind the protocol's signature (:func:`.rules.build_protocol`).
build = rules.build_protocol


def position_key(jit):
    """``key(board, cfg, player)``: a 64-bit hash of the pits and the player to move."""
    mix64 = jit(mix64_body)  # compiled with ``jit``: its fixed id keeps the search's cache key stable

    def key(board, cfg, player):
        h = mix64(np.uint64(player + 7))
        for i in range(2 * cfg[0] + 2):
            h = mix64(h ^ (np.uint64(board[i]) + np.uint64(i + 1) * GOLDEN))
        return h

    return jit(key)


def move_order(jit):
    """``score(board, cfg, player, move)``: a move whose last seed lands in the mover's store
    (an extra turn) first."""

    def score(board, cfg, player, move):
        store = cfg[0] + 1 if player == 0 else 2 * cfg[0] + 2
        return 1.0 if board[move] % (2 * cfg[0] + 1) == store - move else 0.0

    return jit(score)


def cfg(state: KalahState) -> tuple:
    return (int(state.houses), bool(state.empty_capture))


def sizes(cfg: tuple) -> Sizes:
    m = int(cfg[0])
    return Sizes(cells=2 * m + 2, moves=m, plies=-1, record=(0, 1))


def pack(states) -> Packed:
    states = check_states(states, KalahState, "kalah")
    c = cfg(states[0])
    if any(cfg(s) != c for s in states):
        raise ValueError("all states of a batch need the same houses and empty-capture rule")
    k = len(states)
    boards = np.stack([np.array(s.board, BOARD_DTYPE) for s in states])
    players = np.array([s.player for s in states], np.int64)
    zeros = np.zeros(k, np.int64)
    return Packed(boards, players, no_record(k), zeros, zeros.copy(), c)


def initial(houses: int = 6, seeds: int = 4, empty_capture: bool = False) -> KalahState:
    return KalahState.initial(houses, seeds, empty_capture=empty_capture)


def from_text(text: str, *, houses: int = 6, seeds: int = 4, empty_capture: bool = False) -> KalahState:
    """Parse Kalah's text form; ``houses`` and ``seeds`` are read from the text (ignored here)."""
    return KalahState.from_text(text, empty_capture=empty_capture)


def solver(state: KalahState) -> int:
    """Player 0's final margin under perfect play (:func:`.solver.solve_exact`)."""
    from .solver import solve_exact
    return int(solve_exact(state)["margin"])


# -- the engine line protocol and OpenSpiel ------------------------------------------------------

def variant_of(state: KalahState) -> dict:
    """The variant of a position: its houses, seeds a house (the seeds on the board over 2m; not
    an integer when they do not divide) and capture rule."""
    m, total = state.houses, state.seeds_total
    return {"houses": m, "seeds": total // (2 * m) if total % (2 * m) == 0 else total / (2 * m),
            "empty_capture": bool(state.empty_capture)}


#: The older line ``game <m> <n> standard|empty-capture``.
legacy_game, legacy_words = rule_word_line("empty_capture", {"standard": False, "empty-capture": True})


def table_bytes(agent):
    """The engine agent's (``alphabeta:time=``...) table, ``tt=`` MiB, and exact mode's solver table."""
    if not getattr(agent, "engine", False):
        return None
    from .engine import SOLVER_TABLE_SHARE

    table = int(agent.options.get("tt", 64)) * 2**20
    what = f"the engine's table of {table >> 20:,} MiB (tt=)"
    if agent.options.get("exact", True) and agent.time is not None:
        need = int(table * (1 + SOLVER_TABLE_SHARE))
        return need, what + f" and exact mode's solver table, {(need - table) >> 20:,} MiB"
    return table, what


def _mancala_params(variant: dict) -> dict:
    if (variant["houses"], variant["seeds"], variant["empty_capture"]) != (6, 4, False):
        raise ValueError("OpenSpiel's mancala is Kalah(6,4) under the standard rules only, not "
                         f"Kalah({variant['houses']},{variant['seeds']})"
                         f"{' with empty capture' if variant['empty_capture'] else ''}")
    return {}


#: OpenSpiel's ``mancala``: Kalah(6,4), standard rules, our board layout (an action is our pit index).
OPENSPIEL = OpenSpielMap(name="mancala", params=_mancala_params,
                         variant=lambda params: {"houses": 6, "seeds": 4, "empty_capture": False},
                         action=lambda state, move: int(move), move=lambda state, action: int(action))
def balance(state: KalahState, depth: int) -> float:
    """The depth-``depth`` alpha-beta value (store difference) of ``state`` (opening suites)."""
    from .alphabeta import search
    return search(state, depth)["value"]


GAME = Game(
    name="kalah",
    State=KalahState,
    variant={"houses": Option(int, 6, "houses a side"),
             "seeds": Option(int, 4, "seeds a house at the start"),
             "empty_capture": Option(bool, False, "a last seed in an own empty house captures even when the "
                                                  "opposite house is empty")},
    initial=initial,
    from_text=from_text,
    cfg=cfg,
    build=build,
    pack=pack,
    sizes=sizes,
    max_cells=2 * MAX_HOUSES + 2,
    max_moves=MAX_HOUSES,
    max_plies=-1,
    board_dtype=np.dtype(BOARD_DTYPE),
    solver=solver,
    position_key=position_key,
    move_order=move_order,
    openspiel=OPENSPIEL,
    engine_protocol=EngineProtocol(variant_of=variant_of, legacy_game=legacy_game, legacy_words=legacy_words,
                                   table_bytes=table_bytes),
    balance=balance,
    fast_playouts=playouts,
    engines=ENGINES,
    config_agents=True,
    arena=ArenaHooks(title=openings.title, shipped_suite=openings.shipped_suite, check_opening=openings.check_opening,
                     suite_values=openings, legacy_records=True, max_plies=300),
)

assert GAME_OVER == rules.GAME_OVER


# -- text and web forms (play, analyse, serve: protocol.TextUI) ------------------------------------

def board_text(state: KalahState, last: int | None = None, markup: bool = False) -> str:
    """The board as players see it: player 1's houses on top (numbered from its left, so right to
    left here) and its store on the left, player 0's below and its store on the right; ``last``
    (a pit) is the house just sown. ``markup``: rich markup, each side in its style."""
    m, b = state.houses, state.board

    def tag(text, *styles):
        return styled(text, *styles, markup=markup)

    def pit(i, player):
        return tag(f"{int(b[i]):>2}", f"p{player}", *(["last"] if i == last else []))

    mover = None if state.is_over else state.player
    names = [tag(f"p{p} >" if mover == p else f"p{p}  ", f"p{p}") for p in (0, 1)]
    who = "game over" if state.is_over else f"player {state.player} to move"
    return "\n".join([
        names[1] + "  " + " ".join(tag(f"{i:>2}", "dim") for i in range(m, 0, -1)),
        "      " + " ".join(pit(i, 1) for i in range(2 * m + 1, m + 1, -1)),
        "  " + tag(f"{int(b[0]):>2}", "p1", "underline") + "  " + " " * (3 * m) + tag(f"{int(b[m + 1]):>2}", "p0",
                                                                                        "underline"),
        "      " + " ".join(pit(i, 0) for i in range(1, m + 1)),
        names[0] + "  " + " ".join(tag(f"{i:>2}", "dim") for i in range(1, m + 1)),
        tag(f"  {who}; margin {state.margin:+d}", "italic"),
    ])


def _house(state: KalahState, pit: int) -> int:
    return pit if state.player == 0 else pit - state.houses - 1


def parse_move(state: KalahState, text: str) -> int:
    """A house number 1..m typed by the player to move, as its pit."""
    number = typed_number(text, state.houses, "number")
    return legal_move(state, number if state.player == 0 else state.houses + 1 + number, "that house is empty")


def board_json(state: KalahState) -> dict:
    """What the game's drawing script (``board.js``) draws: the pits (layout of :mod:`.rules`), houses, rule and seeds."""
    return {"board": [int(x) for x in state.board], "houses": state.houses, "empty_capture": state.empty_capture,
            "seeds_total": state.seeds_total}


GAME = replace(GAME, ui=TextUI(
    board=board_text,
    move_name=lambda state, pit: f"sows house {_house(state, pit)} (pit {pit})",
    ask=lambda state: f"house 1-{state.houses}",
    parse_move=parse_move,
    board_json=board_json,
    script=str(Path(__file__).with_name("board.js"))))


# -- exact move values for analysis (protocol: Game.move_values) ---------------------------------

#: Seconds an analysis spends solving the moves exactly (:func:`.moves.move_values`).
EXACT_SECONDS = 1.0


def move_values(state: KalahState, *, time_limit: float = EXACT_SECONDS, max_bytes: int = 256 * 1024**2,
                stop=None, progress=None):
    """The final margin (the mover's) after each move that :func:`.moves.move_values` solves within
    ``time_limit`` seconds and ``max_bytes`` (one table shared by the moves' solves); None when it
    solves none and was not stopped. ``progress(done, total)`` after each move. Adds ``margins``
    (player 0's), ``interrupted`` and ``line(move)``: a few plies of perfect play from ``move``, each
    solved with the same table within about a second."""
    from .moves import move_values as solve_moves
    from .solver import new_solver_table, solve_exact, table_slots_for

    if state.is_over:
        return None
    table = new_solver_table(table_slots_for(state, 0, max_bytes))  # the moves' subtrees overlap
    r = solve_moves(state, time_limit=time_limit, max_bytes=max_bytes, stop=stop, table=table,
                    progress=None if progress is None else (lambda mv, row, done, total: progress(done, total)))
    solved = [row for row in r["moves"] if row["margin"] is not None]

    def line(move: int, plies: int = 12) -> list:
        import time

        out, s = [move], state.play(move)
        deadline = time.perf_counter() + 1.0
        while not s.is_over and len(out) < plies and time.perf_counter() < deadline:
            x = solve_exact(s, time_limit=max(deadline - time.perf_counter(), 0.01), table=table)
            if not x["complete"]:
                break
            out.append(int(x["best_move"]))
            s = s.play(int(x["best_move"]))
        return out

    if not solved and not r["interrupted"]:
        return None
    return {"values": {row["move"]: row["value"] for row in solved}, "rule": None,
            "margins": {row["move"]: row["margin"] for row in solved}, "interrupted": bool(r["interrupted"]),
            "line": line}


GAME = replace(GAME, move_values=move_values)


# -- the exact solve of ``jitsearch solve`` (protocol: Game.exact, Game.database) -------------------

from .bench import run_kalah_bench  # noqa: E402
from .exact import DATABASE, EXACT  # noqa: E402

GAME = replace(GAME, exact=EXACT, database=DATABASE, bench=run_kalah_bench)


# -- MCTS leaf evaluations and priors (protocol: SearchEval.rewards, SearchEval.prior) ------------

#: The evaluations of Kalah's MCTS leaves (``eval=``); the first is HMCTS's (``reward=heuristic``).
SEARCH_EVALS = ("heuristic", "store")


def search_rewards(jit):
    """``reward(board, cfg, player, index)``: ``player``'s reward in [0, 1] of a live board by
    ``SEARCH_EVALS[index]``: ``heuristic``, Siljander's H1..H5 (HMCTS) difference mapped linearly,
    0.5 + 0.5 (H(player) - H(other)) / bound with bound = (W1 + W2 + W4 + W5) seeds + W3 m, clipped;
    ``store``, the player's store difference squashed by the board's seeds (:func:`..protocol.store_value`).
    The one home of these rewards: every MCTS (one tree, many trees, a shared tree) scores with it."""
    heuristic = rules.build(jit).heuristic
    squash = jit(store_value)
    w_total, w_houses = rules.W1 + rules.W2 + rules.W4 + rules.W5, rules.W3

    def reward(board, cfg, player, index):
        m = cfg[0]
        total = np.int64(0)
        for i in range(2 * m + 2):
            total += board[i]
        if index == 1:
            d = board[m + 1] - board[0]
            if player == 1:
                d = -d
            return squash(d, total)
        bound = w_total * total + w_houses * m
        d = heuristic(board, m, player) - heuristic(board, m, 1 - player)
        return min(1.0, max(0.0, 0.5 + 0.5 * d / bound))

    return jit(reward)


def search_prior(jit):
    """``prior(board, cfg, player)``: the one-step heuristic H of ``player`` (progressive bias: the
    search takes a softmax of it over the children)."""
    heuristic = rules.build(jit).heuristic

    def prior(board, cfg, player):
        return heuristic(board, cfg[0], player)

    return jit(prior)


def no_search_param(value):
    """Kalah's evaluations take no parameter: None gives 0.0, anything else a one-line ValueError."""
    if value is not None:
        raise ValueError("kalah's evaluations (eval=heuristic or eval=store) take no eval_param")
    return 0.0


GAME = replace(GAME, search_eval=SearchEval(build=None, evals=SEARCH_EVALS, param="eval_param",
                                            check_param=no_search_param, node_dtype=np.dtype(np.int16),
                                            rewards=search_rewards, prior=search_prior))

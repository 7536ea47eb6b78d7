"""Oware behind the game protocol (:mod:`jitsearch.games.protocol`): the adapter of
:mod:`.rules` to the one compiled signature, and the :data:`GAME` record.

``cfg = (m, grand_slam_illegal, move_limit)``; the repetition record is the rule module's
``hist`` (rows of 2m houses and the player to move), threaded with ``cur = (first, count,
ply)``; a game from a state with ``r`` record rows writes at most ``move_limit - ply`` rows
more. ``margin`` is player 0's captured seeds minus player 1's; ``evaluate`` the same on a live
board.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..._checks import check_float
from ..protocol import (GAME_OVER, Engine, EngineProtocol, Game, OpenSpielMap, Option, Packed, Rules, SearchEval,
                        Sizes, TextUI, check_states, legal_move, rule_word_line)
from . import rules
from .rules import OPENSPIEL_MOVE_LIMIT
from .state import BOARD_DTYPE, MAX_HOUSES, MAX_MOVE_LIMIT, OwareState

__all__ = ["GAME", "build", "node_record"]


def build(jit) -> Rules:
    """Compile Oware's rules with ``jit`` behind the protocol's signature (inline adapters)."""
    base = rules.build(jit)
    apply_move, legal_moves, margin_ = base.apply_move, base.legal_moves, base.margin

    def legal(board, cfg, player, moves, hist, cur):
        return legal_moves(board, cfg[0], player, cfg[1], moves)

    def apply(board, cfg, player, move, hist, cur):
        nxt, first, count = apply_move(board, cfg[0], player, move, cfg[1], hist, cur[0], cur[1], cur[2], cfg[2])
        return nxt, (first, count, cur[2] + 1)

    def margin(board, cfg):
        return margin_(board, cfg[0])

    def evaluate(board, cfg, player):
        return float(margin_(board, cfg[0]))

    return Rules(legal=jit(legal), apply=jit(apply), margin=jit(margin), evaluate=jit(evaluate))


def node_record(jit):
    """Compile Oware's ``record(parent, boards, to_move, t, node, root_hist, root_rows, cfg, hist) ->
    (count, depth)`` (:attr:`jitsearch.games.protocol.Game.node_record`): the positions since the
    last capture, in any order (the rules only ask whether a position is in the record): the
    boards from the node up its path, stopping after the first node entered by a capture (its
    scores grew), else adding the root's record."""

    def record(parent, boards, to_move, t, node, root_hist, root_rows, cfg, hist):
        n = 2 * cfg[0]
        count = 0
        depth = 0
        recording = True
        x = node
        while x != 0:
            p = parent[t, x]
            if recording:
                for j in range(n):
                    hist[count, j] = boards[t, x, j]
                hist[count, n] = to_move[t, x]
                count += 1
                if boards[t, x, n] + boards[t, x, n + 1] != boards[t, p, n] + boards[t, p, n + 1]:
                    recording = False  # entered by a capture: the record starts at x
            depth += 1
            x = p
        if recording:
            for r in range(root_rows[t]):
                for j in range(n + 1):
                    hist[count, j] = root_hist[t, r, j]
                count += 1
        return count, depth

    return jit(record)


#: Multiples of 1/SIDE_WEIGHT_DENOMINATOR are the side weights the kernels take (exact products).
SIDE_WEIGHT_DENOMINATOR = 256
#: Largest |side_weight| of the evaluation.
MAX_SIDE_WEIGHT = 16.0


def search_value(jit):
    """Compile Oware's MCTS evaluation (``eval=capture``, :class:`~..protocol.SearchEval`) with
    ``jit``: ``value`` the alpha-beta's frontier value for player 0 (captured difference +
    ``side_weight`` x seeds-on-side difference, :func:`.alphabeta.evaluate`), ``scale`` the
    board's seeds. ``side_weight`` a multiple of 1/256: its product is exact and a fused
    multiply-add rounds as the CPU does."""
    from .alphabeta import evaluate as frontier_source

    frontier = jit(frontier_source.py_func)

    def value(board, cfg, side_weight):
        return frontier(board, cfg[0], 0, side_weight)

    def scale(board, cfg, side_weight):
        total = 0
        for i in range(2 * cfg[0] + 2):
            total += board[i]
        return np.float64(total)

    return jit(value), jit(scale)


def check_side_weight(side_weight) -> float:
    """``side_weight`` (None: the alpha-beta's default) checked: a multiple of 1/256 in [-16, 16]."""
    from .alphabeta import DEFAULT_SIDE_WEIGHT

    if side_weight is None:
        return float(DEFAULT_SIDE_WEIGHT)
    side_weight = check_float("side_weight", side_weight, -MAX_SIDE_WEIGHT, MAX_SIDE_WEIGHT)
    if side_weight * SIDE_WEIGHT_DENOMINATOR != round(side_weight * SIDE_WEIGHT_DENOMINATOR):
        raise ValueError(f"side_weight must be a multiple of 1/{SIDE_WEIGHT_DENOMINATOR} (exact on every "
                         f"backend), got {side_weight!r}")
    return float(side_weight)


def cfg(state: OwareState) -> tuple:
    return (int(state.houses), bool(state.grand_slam_illegal), int(state.move_limit))


def sizes(cfg: tuple) -> Sizes:
    m, _, limit = cfg
    return Sizes(cells=2 * m + 2, moves=m, plies=int(limit), record=(int(limit), 2 * m + 1))


def pack(states) -> Packed:
    states = check_states(states, OwareState, "oware")
    c = cfg(states[0])
    if any(cfg(s) != c for s in states):
        raise ValueError("all states of a batch need the same houses, move limit and grand-slam rule")
    m = c[0]
    k = len(states)
    rows = np.array([len(s.history) for s in states], np.int64)
    hists = np.zeros((k, int(rows.max()), 2 * m + 1), BOARD_DTYPE)
    for i, s in enumerate(states):
        hists[i, :rows[i]] = s.history
    boards = np.stack([np.array(s.board, BOARD_DTYPE) for s in states])
    players = np.array([s.player for s in states], np.int64)
    plies = np.array([s.ply for s in states], np.int64)
    return Packed(boards, players, hists, rows, plies, c)


def initial(houses: int = 6, seeds: int = 4, move_limit: int = OPENSPIEL_MOVE_LIMIT,
            grand_slam_illegal: bool = False) -> OwareState:
    return OwareState.initial(houses, seeds, move_limit=move_limit, grand_slam_illegal=grand_slam_illegal)


def from_text(text: str, *, houses: int = 6, seeds: int = 4, move_limit: int = OPENSPIEL_MOVE_LIMIT,
              grand_slam_illegal: bool = False) -> OwareState:
    """Parse Oware's text form; ``houses`` and ``seeds`` are read from the text (ignored here)."""
    return OwareState.from_text(text, move_limit=move_limit, grand_slam_illegal=grand_slam_illegal)


def solver(state: OwareState) -> int:
    """Player 0's final margin under perfect play (:func:`.solver.solve`, small variants)."""
    from .solver import solve
    margin = solve(state).margin
    return int(margin if state.player == 0 else -margin)


# -- the engine line protocol and OpenSpiel ------------------------------------------------------

def variant_of(state: OwareState) -> dict:
    """The variant of a position: houses, seeds a house (not an integer when they do not divide),
    move limit and grand-slam rule."""
    m, total = state.houses, state.seeds_total
    return {"houses": m, "seeds": total // (2 * m) if total % (2 * m) == 0 else total / (2 * m),
            "move_limit": int(state.move_limit), "grand_slam_illegal": bool(state.grand_slam_illegal)}


#: The older line ``game <m> <n> standard|grand-slam-illegal`` (OpenSpiel's move limit).
legacy_game, legacy_words = rule_word_line("grand_slam_illegal", {"standard": False, "grand-slam-illegal": True},
                                           move_limit=OPENSPIEL_MOVE_LIMIT)


def line(state: OwareState) -> tuple:
    """``(start, moves)``: the first position of ``state``'s repetition record (just after the last
    capture, with the current scores) and the houses played since, which reach ``state`` with the
    same record (its ply count starts at 0 there)."""
    m, hist = state.houses, np.asarray(state.history)
    first = OwareState.from_board(hist[0, :2 * m], int(hist[0, 2 * m]), scores=state.board[2 * m:],
                                  move_limit=state.move_limit, grand_slam_illegal=state.grand_slam_illegal)
    moves, cur = [], first
    for row in hist[1:]:
        for h in cur.legal_moves():  # a sown house is emptied, so one move at most leads to the next row
            nxt = cur.play(h)
            if not nxt.is_over and nxt.player == row[2 * m] and np.array_equal(nxt.board[:2 * m], row[:2 * m]):
                moves.append(h)
                cur = nxt
                break
        else:
            raise ValueError("the repetition record is not a line of play")
    return first, moves


def _openspiel_params(variant: dict) -> dict:
    if variant["grand_slam_illegal"] or variant["move_limit"] != OPENSPIEL_MOVE_LIMIT:
        raise ValueError("OpenSpiel's oware has grand slams legal and the move limit "
                         f"{OPENSPIEL_MOVE_LIMIT}, not grand_slam_illegal or another move limit")
    return {"num_houses_per_player": variant["houses"], "num_seeds_per_house": variant["seeds"]}


#: OpenSpiel's ``oware``: an action is a house 0..m-1 counted from the mover's left.
OPENSPIEL = OpenSpielMap(
    name="oware", params=_openspiel_params,
    variant=lambda p: {"houses": int(p["num_houses_per_player"]), "seeds": int(p["num_seeds_per_house"]),
                       "move_limit": OPENSPIEL_MOVE_LIMIT, "grand_slam_illegal": False},
    action=lambda state, move: state.action_of(move), move=lambda state, action: state.house_of(action))
#: Memory an engine's endgame database (``db=S``) may take.
DB_MAX_BYTES = 1 << 30
def endgame_database(houses: int, seeds: int, grand_slam_illegal: bool):
    """The database of a ``db=S`` engine, built once a process (in memory)."""
    from .endgame import build_database
    key = (houses, seeds, grand_slam_illegal)
    if key not in DATABASES_BUILT:
        if len(DATABASES_BUILT) >= 4:
            DATABASES_BUILT.pop(next(iter(DATABASES_BUILT)))
        DATABASES_BUILT[key] = build_database(houses, seeds, grand_slam_illegal=grand_slam_illegal,
                                         max_bytes=DB_MAX_BYTES)
    return DATABASES_BUILT[key]
DATABASES_BUILT: dict = {}
def _deepening_engine(module_name: str) -> Engine:
    """Iterative deepening of :mod:`.alphabeta` or :mod:`.fsss` as an agent kind: ``depth=`` (default 6
    without ``time=``, else a cap), ``time=`` seconds, ``w=`` the weight of the seeds-on-side term,
    ``db=S`` an endgame database of up to S seeds probed at the leaves."""
    def make(options: dict):
        from ..._checks import check_float, check_int
        from ...trees.memory import check_bytes
        from .alphabeta import DEFAULT_SIDE_WEIGHT, MAX_DEPTH
        from .endgame import MAX_DB_SEEDS, estimate_build
        o = options
        if "depth" in o:
            check_int("depth", o["depth"], 1, MAX_DEPTH)
        if "time" in o:
            check_float("time", o["time"], 0.0, 3600.0, lo_open=True)
        if "w" in o:
            check_float("w", o["w"], -100.0, 100.0)
        if "db" in o:
            check_int("db", o["db"], 1, MAX_DB_SEEDS)
            check_bytes(estimate_build(6, o["db"])["ram_bytes"], DB_MAX_BYTES,
                        f"an endgame database of {o['db']} seeds (6 houses)", "lower db=")
        depth = o.get("depth", MAX_DEPTH if "time" in o else 6)
        def search(state: OwareState, seed: int, stop) -> dict:
            from . import alphabeta, fsss
            deepen = (fsss if module_name == "fsss" else alphabeta).iterative_deepening
            db = endgame_database(state.houses, o["db"], state.grand_slam_illegal) if "db" in o else None
            r = deepen(state, time_limit=o.get("time"), max_depth=depth, side_weight=o.get("w", DEFAULT_SIDE_WEIGHT),
                       endgame=db, stop=stop)
            info = {"move": r.move, "depth": r.depth, "value": r.value, "nodes": r.nodes}
            if module_name == "fsss":
                info["evaluations"] = r.evaluations
            return info
        return search
    return Engine({"depth": int, "time": float, "w": float, "db": int}, make)
def balance(state: OwareState, depth: int) -> float:
    """The depth-``depth`` alpha-beta value of ``state`` for its player to move (:mod:`.alphabeta`;
    opening suites)."""
    from .alphabeta import iterative_deepening
    return iterative_deepening(state, max_depth=depth).value


GAME = Game(
    name="oware",
    State=OwareState,
    variant={"houses": Option(int, 6, "houses a side"),
             "seeds": Option(int, 4, "seeds a house at the start"),
             "move_limit": Option(int, OPENSPIEL_MOVE_LIMIT, "the game ends after this many plies"),
             "grand_slam_illegal": Option(bool, False, "a grand slam is illegal (OpenSpiel: it captures nothing)")},
    initial=initial,
    from_text=from_text,
    cfg=cfg,
    build=build,
    pack=pack,
    sizes=sizes,
    max_cells=2 * MAX_HOUSES + 2,
    max_moves=MAX_HOUSES,
    max_plies=MAX_MOVE_LIMIT,
    board_dtype=np.dtype(BOARD_DTYPE),
    solver=solver,
    node_record=node_record,
    openspiel=OPENSPIEL,
    engine_protocol=EngineProtocol(variant_of=variant_of, legacy_game=legacy_game, legacy_words=legacy_words,
                                   line=line),
    balance=balance,
    engines={"alphabeta": _deepening_engine("alphabeta"), "fsss": _deepening_engine("fsss")},
    search_eval=SearchEval(build=search_value, evals=("capture",), param="side_weight",
                           check_param=check_side_weight, node_dtype=np.dtype(np.int16)),
)

assert GAME_OVER == rules.GAME_OVER


# -- text and web forms (play, analyse, serve: protocol.TextUI) ------------------------------------

def _letters(state: OwareState) -> str:
    """The player to move's house letters, OpenSpiel's: A.. for player 0, a.. for player 1."""
    return ("ABCDEFGHIJKL" if state.player == 0 else "abcdefghijkl")[:state.houses]


def move_name(state: OwareState, house: int) -> str:
    letter = chr((ord("A") if state.player == 0 else ord("a")) + state.action_of(house))
    return f"sows {letter} (house {house})"


def parse_move(state: OwareState, text: str) -> int:
    """A house letter typed by the player to move (A.. for player 0, a.. for player 1), as its house."""
    letters = _letters(state)
    if len(text) != 1 or text not in letters:
        raise ValueError(f"type one of {' '.join(letters)}")
    return legal_move(state, state.house_of(letters.index(text)),
                      "not a legal move (empty, or it does not feed the opponent)")


def board_json(state: OwareState) -> dict:
    """What the game's drawing script (``board.js``) draws: houses 0..2m-1 then the two captured counts, the scores, the move
    count against the limit and the repetition record's length."""
    return {"board": [int(x) for x in state.board], "houses": state.houses, "scores": list(state.scores),
            "seeds_total": state.seeds_total, "ply": state.ply, "move_limit": state.move_limit,
            "repetition_rows": len(state.history)}


GAME = replace(GAME, ui=TextUI(
    board=lambda state, last=None, markup=False: state.ascii(),
    move_name=move_name,
    ask=lambda state: f"house {_letters(state)[0]}-{_letters(state)[-1]}",
    parse_move=parse_move,
    board_json=board_json,
    script=str(Path(__file__).with_name("board.js"))))


# -- exact move values for analysis (protocol: Game.move_values) ---------------------------------

#: Largest endgame database an analysis builds (positions; Oware(6) up to 10 seeds is 646,646, about 0.3 s).
MAX_EXACT_POSITIONS = 700_000
#: What the exact values assume (the endgame database's rule, not OpenSpiel's).
EXACT_RULE = ("endgame database: endless play without a capture splits the seeds on the board evenly (not "
              "OpenSpiel's repetition rule); the move limit is not applied")


@functools.lru_cache(maxsize=16)
def exact_seeds_limit(houses: int) -> int:
    """The most seeds on the board for which analysis gives exact values on Oware(``houses``): the
    largest S whose database (layers 0..S) has at most :data:`MAX_EXACT_POSITIONS` positions."""
    from .endgame import MAX_DB_SEEDS, database_size

    s = 0
    while s < MAX_DB_SEEDS and database_size(houses, s + 1) <= MAX_EXACT_POSITIONS:
        s += 1
    return s


@functools.lru_cache(maxsize=4)
def _database(houses: int, seeds: int, grand_slam_illegal: bool):
    from .endgame import build_database

    return build_database(houses, seeds, grand_slam_illegal=grand_slam_illegal)


def exact_half_seeds(state: OwareState, db) -> dict:
    """``{house: half-seeds}`` for the player to move, every legal move, from ``db`` (built to at least
    the seeds on the board): a move capturing c of the S seeds is worth 2c + 2(S - c) - v(child) =
    2S - v(child), the child's value being the opponent's (twice the seeds the mover gets from here on)."""
    from .state import RULES

    m, p = state.houses, state.player
    total = int(state.board[:2 * m].sum())
    out = {}
    for h in state.legal_moves():
        b = np.array(state.board, dtype=np.int32)
        last = RULES.sow(b, m, h)
        RULES.capture(b, m, p, last)
        out[h] = 2 * total - db.value(b[:2 * m], 1 - p)
    return out


def move_values(state: OwareState):
    """The final score difference (the mover's) after each move under perfect play, from the
    endgame database when the board holds at most :func:`exact_seeds_limit` seeds (:data:`EXACT_RULE`);
    else None."""
    m = state.houses
    on_board = int(state.board[:2 * m].sum())
    if state.is_over or on_board > exact_seeds_limit(m):
        return None
    half = exact_half_seeds(state, _database(m, on_board, state.grand_slam_illegal))
    mine, theirs = int(state.board[2 * m + state.player]), int(state.board[2 * m + 1 - state.player])
    values = {h: (2 * mine + v - (2 * theirs + 2 * on_board - v)) / 2 for h, v in half.items()}
    return {"values": values, "rule": EXACT_RULE, "half_seeds": half}


GAME = replace(GAME, move_values=move_values)


# -- the exact solve of ``jitsearch solve`` (protocol: Game.exact, Game.database) -------------------

from .exact import DATABASE, EXACT  # noqa: E402

GAME = replace(GAME, exact=EXACT, database=DATABASE)

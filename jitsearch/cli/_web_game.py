"""The game side of ``jitsearch serve`` for every registered game, without the web stack: a line
checked and replayed, what the page draws, an agent's reply, the analysis options.

The server keeps no game. A request names a line: ``position`` (the game's text form, read with
the variant options the request gives as fields of their own, e.g. ``empty_capture``) and
``moves`` (the moves played since, at most :data:`MAX_MOVES`). The server replays the moves, so a
record the rules keep (Oware's repetition) and the move count are the game's, and the end of the
game is found as the rules find it.
"""

from __future__ import annotations

import json
import math
import numbers

#: Moves a request may replay.
MAX_MOVES = 1000
#: What an analysis takes when a request gives no budget.
DEFAULT_ANALYSIS_ITERATIONS = 20_000


def variant_of(game, data: dict) -> dict:
    """The variant options among a request's fields, each of its option's type; one line otherwise."""
    out = {}
    for key, option in game.variant.items():
        if key not in data:
            continue
        v = data[key]
        if option.type is bool:
            if not isinstance(v, bool):
                raise ValueError(f"{key} must be true or false, got {json.dumps(v)[:40]}")
        elif option.type is int:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{key} must be an integer, got {json.dumps(v)[:40]}")
        elif not isinstance(v, option.type):
            raise ValueError(f"{key} must be a {option.type.__name__}, got {json.dumps(v)[:40]}")
        out[key] = v
    return game.check_variant(**out)


def _name(game, state, move) -> str:
    return game.ui.move_name(state, move) if game.ui is not None else f"move {move}"


def replay(game, data: dict) -> tuple:
    """``(start, state, last_reason)``: the position of ``data["position"]`` after ``data["moves"]``;
    ``last_reason`` is why the last move ended the game where the state can say (``end_reason``), else
    None. One ``ValueError`` line for bad text or the first illegal move."""
    position, moves = data.get("position"), data.get("moves")
    if not isinstance(position, str):
        raise ValueError(f"position must be a string, got {json.dumps(position)[:40]}")
    if moves is None:
        moves = []
    if not isinstance(moves, list) or not all(isinstance(m, int) and not isinstance(m, bool) for m in moves):
        raise ValueError("moves must be a list of moves (integers)")
    if len(moves) > MAX_MOVES:
        raise ValueError(f"moves holds at most {MAX_MOVES} moves, got {len(moves)}")
    start = state = game.from_text(position, **variant_of(game, data))
    reason = None
    for i, move in enumerate(moves):
        if state.is_over:
            raise ValueError(f"move {i + 1} ({move}): the game is already over")
        try:
            reason = end_reason(state, move)
            state = state.play(move)
        except ValueError as exc:
            raise ValueError(f"move {i + 1} ({_name(game, state, move)}) in {state.to_text()}: {exc}") from None
    return start, state, reason


def end_reason(state, move) -> str | None:
    """Why ``move`` ends the game, where the state class says (Oware's ``end_reason``); else None."""
    why = getattr(state, "end_reason", None)
    return why(move) if callable(why) else None


def play(state, move):
    """``(after, reason)``: ``move`` (checked an int) played in ``state``."""
    if isinstance(move, bool) or not isinstance(move, int):
        raise ValueError(f"move must be an integer, got {json.dumps(move)[:40]}")
    reason = end_reason(state, move)
    return state.play(move), reason


def state_json(game, state, reason: str | None = None) -> dict:
    """What the page draws: the game's board fields (``board_json``), whose turn, the legal moves and
    their names, the text form and, once over, the result and why the game ended."""
    drawn = game.ui.board_json(state) if game.ui is not None else {}
    legal = state.legal_moves()
    return {**drawn, "game": game.name, "text": state.to_text(), "player": state.player, "over": state.is_over,
            "margin": state.margin, "result": state.result, "legal": legal,
            "names": {str(m): _name(game, state, m) for m in legal},
            "reason": reason if state.is_over else None}


def make_agent(game, spec, seed: int, start, moves, state=None, variant=None):
    """The agent of ``spec`` for ``game`` (a fresh one, with ``seed``), for the line ``start`` + ``moves``
    (``state``: where it is reached, checked against what the agent can play; ``variant``: the request's)."""
    from .common import agent_for, check_agent_for, check_spec_for

    if not isinstance(spec, str):
        raise ValueError(f"agent must be an agent spec string, got {json.dumps(spec)[:40]}")
    kind = spec.strip().partition(":")[0]
    if kind == "human":
        raise ValueError("'human' is you, clicking the board: give an engine spec such as alphabeta:time=1")
    if kind == "cmd":  # a page (or anyone who reaches the server) must not start programs on this machine
        raise ValueError("cmd: engines start a program on this machine: not from the web page (use them in "
                         "jitsearch play or tournament)")
    variant = game.check_variant(**(variant or {}))
    check_spec_for(game.name, spec, variant, True)
    agent = agent_for(game.name, spec, seed)
    if state is not None:
        check_agent_for(game.name, agent, state, variant)
    if hasattr(agent, "begin") and hasattr(agent, "start"):  # an OpenSpiel bot reaches the line from the start
        agent.begin(start)
        agent.start(moves, houses=start.houses, seeds=start.seeds_total // (2 * start.houses))
    return agent


def agent_seconds(agent) -> float | None:
    """The time an agent spec asks for (None: a depth or playout budget)."""
    t = getattr(agent, "time", None)
    return t if t is not None else (getattr(agent, "options", None) or {}).get("time")


def agent_reply(game, agent, state, stop, to_json=None) -> dict:
    """The agent's move in ``state`` and the position after it (``stop``: set when the search was
    cancelled; the answer is then dropped). An agent with ``choose(state, stop)`` is handed ``stop`` and
    ends its search soon after it is set (by raising ``KeyboardInterrupt``); one without it is called as
    ``agent(state)`` and runs to its own budget. ``to_json(after, reason)``: what the page gets of the
    position after the move (default :func:`state_json`)."""
    choose = getattr(agent, "choose", None)
    move = int(choose(state, stop) if callable(choose) else agent(state))
    if stop.is_set():
        raise KeyboardInterrupt
    after, reason = play(state, move)
    last = getattr(agent, "last", None) or {}
    info = {k: int(v) if isinstance(v, numbers.Integral) else float(v) for k, v in last.items()
            if k in ("value", "depth", "nodes", "margin") and isinstance(v, numbers.Real) and not isinstance(v, bool)
            and math.isfinite(v)}
    if isinstance(last.get("exact"), bool):
        info["exact"] = last["exact"]
    if isinstance(last.get("pv"), (list, tuple)):
        info["pv"] = [int(m) for m in last["pv"]]
    shown = to_json(after, reason) if to_json is not None else state_json(game, after, reason)
    return {"move": move, "player": state.player, "state": shown, "info": info,
            "extra_turn": after.player == state.player}


def check_analysis(data: dict, max_seconds: float) -> dict:
    """The options of :func:`~jitsearch.arena.analysis.analyse_moves` from a request's fields
    (``iterations`` or ``time``, ``playouts``, ``seed``, ``exact``, ``backend``), each checked in one line."""
    from ..arena.analysis import MAX_ANALYSIS_ITERATIONS
    from ..mcts.config import MAX_LEAF_PLAYOUTS

    def integer(name, default, lo, hi):
        v = data.get(name, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{name} must be an integer, got {json.dumps(v)[:40]}")
        if not lo <= v <= hi:
            raise ValueError(f"{name} must lie in {lo:,}..{hi:,}, got {v:,}")
        return v

    if data.get("iterations") is not None and data.get("time") is not None:
        raise ValueError("give iterations or time, not both")
    options = {"playouts": integer("playouts", 8, 1, MAX_LEAF_PLAYOUTS), "seed": integer("seed", 0, 0, 2**63 - 1)}
    if data.get("time") is not None:
        t = data["time"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            raise ValueError(f"time must be a number of seconds, got {json.dumps(t)[:40]}")
        if not 0 < t <= max_seconds:
            raise ValueError(f"time must lie in (0, {max_seconds:g}] seconds (this server's cap a search), got {t:g}")
        options.update(iterations=None, time=float(t))
    else:
        options.update(iterations=integer("iterations", DEFAULT_ANALYSIS_ITERATIONS, 1, MAX_ANALYSIS_ITERATIONS),
                       time=None)
    exact = data.get("exact", True)
    if not isinstance(exact, bool):
        raise ValueError(f"exact must be true or false, got {json.dumps(exact)[:40]}")
    backend = data.get("backend", "cpu")
    if backend not in ("cpu", "cuda", "auto"):
        raise ValueError(f"backend must be cpu, cuda or auto, got {json.dumps(backend)[:40]}")
    if backend != "cpu":
        from ..kernels.backend import BackendError, resolve

        try:
            resolve(backend)
        except BackendError as exc:
            raise ValueError(str(exc)) from None
    options.update(exact=exact, backend=backend)
    return options

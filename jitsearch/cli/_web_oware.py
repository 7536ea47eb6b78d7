"""The Oware side of ``jitsearch serve``, without the web stack: a game line
checked and replayed, what the page draws, an agent's reply.

The server keeps no game. A request names a line: ``position`` (Oware text,
:meth:`~jitsearch.games.oware.OwareState.from_text`; its repetition record
starts fresh there, as a position read from text always does) and ``moves``
(house indices played since, at most the move limit). The server replays the
moves, so the repetition record and the move count are the game's, and the
end of the game (repetition, move limit, scores, no move) is found as the
rules find it. Agents are :func:`~jitsearch.arena.oware_arena.parse_oware_agent`
specs (``random``, ``alphabeta:...``, ``mc:...``, every kind it parses;
``openspiel:...`` from a start position, with the ``openspiel`` extra).
"""

from __future__ import annotations

import json
import math
import numbers

from ..games.oware.rules import OPENSPIEL_MOVE_LIMIT

#: Moves a request may replay (OpenSpiel's move limit, which ends every game).
MAX_MOVES = OPENSPIEL_MOVE_LIMIT


def replay(position, moves) -> tuple:
    """``(start, state, last_reason)``: the position of ``position`` (text) after ``moves`` (house indices);
    ``last_reason`` is why the last move ended the game (None while it goes on). One ``ValueError`` line
    for bad text or the first illegal move."""
    from ..games.oware import OwareState

    if not isinstance(position, str):
        raise ValueError(f"position must be a string, got {json.dumps(position)[:40]}")
    if moves is None:
        moves = []
    if not isinstance(moves, list) or not all(isinstance(h, int) and not isinstance(h, bool) for h in moves):
        raise ValueError("moves must be a list of house indices (integers)")
    if len(moves) > MAX_MOVES:
        raise ValueError(f"moves holds at most {MAX_MOVES} houses (the move limit), got {len(moves)}")
    start = state = OwareState.from_text(position)
    reason = None
    for i, house in enumerate(moves):
        if state.is_over:
            raise ValueError(f"move {i + 1} (house {house}): the game is already over")
        try:
            reason = state.end_reason(house)
            state = state.play(house)
        except ValueError as exc:
            raise ValueError(f"move {i + 1} (house {house}) in {state.to_text()}: {exc}") from None
    return start, state, reason


def state_json(state, reason: str | None = None) -> dict:
    """What the page draws: the board (houses 0..2m-1, then the two captured counts), whose turn, the legal
    houses, the ply, the text form and, once over, why the game ended."""
    return {"game": "oware", "text": state.to_text(), "board": [int(x) for x in state.board],
            "player": state.player, "houses": state.houses, "over": state.is_over, "scores": list(state.scores),
            "margin": state.margin, "result": state.result, "legal": state.legal_moves(),
            "seeds_total": state.seeds_total, "ply": state.ply, "move_limit": state.move_limit,
            "repetition_rows": len(state.history), "reason": reason if state.is_over else None}


def make_agent(spec, seed: int, start, moves):
    """The agent of ``spec`` (a fresh one, with ``seed``), for the game ``start`` + ``moves``."""
    from ..arena.oware_arena import parse_oware_agent

    if not isinstance(spec, str):
        raise ValueError(f"agent must be an agent spec string, got {json.dumps(spec)[:40]}")
    kind = spec.strip().partition(":")[0]
    if kind == "human":
        raise ValueError("'human' is you, clicking the board: give an engine spec such as alphabeta:time=1")
    if kind == "cmd":  # a page (or anyone who reaches the server) must not start programs on this machine
        raise ValueError("cmd: engines start a program on this machine: not from the web page (use them in "
                         "jitsearch tournament --game oware)")
    agent = parse_oware_agent(spec, seed=seed)
    if hasattr(agent, "start"):  # an OpenSpiel bot reaches the position by the moves from the start
        agent.begin(start)
        agent.start(moves, houses=start.houses, seeds=start.seeds_total // (2 * start.houses))
    return agent


def agent_seconds(agent) -> float | None:
    """The time an agent spec asks for (None: a depth or playout budget)."""
    return (getattr(agent, "options", None) or {}).get("time")


def agent_reply(agent, state, stop) -> dict:
    """The agent's move in ``state`` and the position after it (``stop``: set when the search was
    cancelled; the answer is then dropped). An agent with ``choose(state, stop)`` is handed ``stop`` and
    ends its search soon after it is set (by raising ``KeyboardInterrupt``); one without it is called as
    ``agent(state)`` and runs to its own budget."""
    choose = getattr(agent, "choose", None)
    house = int(choose(state, stop) if callable(choose) else agent(state))
    if stop.is_set():
        raise KeyboardInterrupt
    reason = state.end_reason(house)
    after = state.play(house)
    info = {k: int(v) if isinstance(v, numbers.Integral) else float(v)
            for k, v in (getattr(agent, "last", None) or {}).items()
            if k in ("value", "depth", "nodes") and isinstance(v, numbers.Real) and not isinstance(v, bool)
            and math.isfinite(v)}
    return {"move": house, "player": state.player, "state": state_json(after, reason), "info": info}


#: Most MCTS iterations one analysis may ask for.
MAX_ANALYSIS_ITERATIONS = 1_000_000
#: What the analysis takes when a request gives no budget.
DEFAULT_ANALYSIS_ITERATIONS = 20_000


def check_analysis(data: dict, max_seconds: float) -> dict:
    """The options of :func:`~jitsearch.arena.oware_analysis.analyse_oware_position` from a request's fields
    (``iterations`` or ``time``, ``playouts``, ``seed``, ``exact``, ``backend``), each checked in one line."""
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

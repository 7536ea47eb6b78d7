"""Deprecated names of Oware's former arena, kept for the modules that still import them: agents
are :func:`jitsearch.arena.agents.parse_agent` with ``game="oware"``, matches
:func:`jitsearch.arena.matches.run_tournament` of a
:class:`~jitsearch.arena.game_match.GameMatch` (every game's). Delete once nothing imports it."""

from __future__ import annotations

from ..games import get as get_game
from ..games.oware.game import endgame_database  # noqa: F401  (deprecated name)
from .agents import parse_oware_agent  # noqa: F401  (deprecated name)
from .game_agents import kinds
from .game_match import GameMatch
from .game_match import opening_line as _line
from .agents import play_game

#: The agent kinds of Oware (the generic ones and Oware's engines).
OWARE_AGENTS = kinds(get_game("oware"))


def opening_line(houses: int, seeds: int, plies: int, seed: int, index: int):
    """Pair ``index``'s opening of an Oware(houses, seeds) match (:func:`jitsearch.arena.game_match.opening_line`)."""
    return _line(GameMatch.of("oware", {"houses": houses, "seeds": seeds}, openings=plies, seed=seed), index)


def run_oware_match(spec_a: str, spec_b: str, pairs: int, *, houses: int = 6, seeds: int = 4, openings: int = 0,
                    seed: int = 0, **options) -> dict:
    """:func:`jitsearch.arena.matches.run_tournament` of an Oware(houses, seeds) match."""
    from .matches import run_tournament

    match = GameMatch.of("oware", {"houses": houses, "seeds": seeds}, openings=openings, seed=seed)
    return run_tournament(spec_a, spec_b, match, pairs, **options)


def play_oware_game(state, agents, *, on_move=None) -> dict:
    """:func:`jitsearch.arena.agents.play_game` with the final ``scores`` (the former result)."""
    last = {"state": state}

    def hook(before, move, after, agent):
        last["state"] = after
        if on_move:
            on_move(before, move, after, agent)

    g = play_game(state, agents, on_move=hook)
    return {"moves": g["moves"], "final": g["final"], "scores": list(last["state"].scores), "margin": g["margin"],
            "result": g["result"], "plies": g["plies"]}

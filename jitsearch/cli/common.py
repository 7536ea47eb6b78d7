"""Output and state shared by the command modules: the rich consoles, JSON
output, the Ctrl-C exit (status 130) and small parsers used by more than one
command.

Nothing here imports Numba at module level.
"""

from __future__ import annotations

import json
import math
import sys

import typer
from rich.console import Console

from ._support import UserError

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def parse_bytes(text: str) -> int:
    units = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2,
             "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3, "t": 1024**4, "tb": 1024**4,
             "tib": 1024**4}
    t = text.strip().lower()
    num = t.rstrip("abgikmt ")
    unit = t[len(num):].strip()
    try:
        value = float(num)
    except ValueError:
        raise UserError(f"--max-memory must look like 512MiB or 4GiB, got {text!r}") from None
    if unit not in units or not value > 0 or not math.isfinite(value) or value * units[unit] > 2**62:
        raise UserError(f"--max-memory must look like 512MiB or 4GiB, got {text!r}")
    return int(value * units[unit])


def json_safe(obj):
    """Replace non-finite floats (not valid JSON) by null: an unbounded bound."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(json_safe(obj), allow_nan=False) + "\n")


# -- agents of every game (play, analyse and the web page) ---------------------------------------

def agent_for(game_name: str, spec: str, seed: int | None):
    """The agent of ``spec`` for the game called ``game_name``
    (:func:`jitsearch.arena.agents.parse_agent`): ``agent(state) -> move``, ``choose(state, stop) ->
    move``, ``last`` (what its search found); a bad spec raises one-line ``ValueError``."""
    from ..arena.agents import parse_agent

    return parse_agent(spec, game=game_name, seed=seed)


def agent_kinds_for(game_name: str) -> list[str]:
    """The agent kinds the page offers for the game (no ``human``, no ``cmd``): Kalah's own kinds, or
    the generic ones plus the game's engines, and ``openspiel`` where the game has a mapping."""
    from ..arena.agents import KINDS
    from ..arena.agents import kinds
    from ..games import get

    game = get(game_name)
    if game.config_agents:
        return [k for k in KINDS if k != "human"]
    return [*kinds(game), *(["openspiel"] if game.openspiel is not None else [])]


def check_spec_for(game_name: str, spec: str, variant: dict, from_position: bool) -> None:
    """Refuse, before it is parsed, an agent spec that cannot play this game's variant (told by the
    spec, whether its extra is installed or not): one ``ValueError`` line."""
    from ..arena.agents import agent_kind
    from ..games import get

    if agent_kind(spec) != "openspiel":
        return
    mapping = get(game_name).openspiel
    if mapping is None:
        return  # parse_agent refuses it in its own words
    if from_position and mapping.replay is None:
        raise ValueError(f"an openspiel agent plays {game_name} from the start only (OpenSpiel reaches a "
                         f"position by its moves), not from --position")
    try:
        mapping.params(variant)
    except ValueError as exc:
        raise ValueError(f"openspiel agents: {exc}") from None


def check_agent_for(game_name: str, agent, state, variant: dict) -> None:
    """Refuse, in one ``ValueError`` line, an agent that cannot play ``state`` (a board it cannot
    solve, an OpenSpiel game of another size)."""
    if hasattr(agent, "check_match") and getattr(agent, "kind", None) != "openspiel":
        agent.check_match(*variant.values(), position=state)  # the variant's options in the game's order


# -- Ctrl-C: status 130, with one "interrupted: ..." line -----------------------------------

#: Set when a command has printed its own "interrupted: ..." line, so that
#: :func:`jitsearch.cli.app.main` does not print a second one.
_INTERRUPT_REPORTED = False


def reset_interrupt_report() -> None:
    """Forget an earlier command's report (``main`` calls it before each run)."""
    global _INTERRUPT_REPORTED
    _INTERRUPT_REPORTED = False


def interrupt_reported() -> bool:
    """True when :func:`stop_interrupted` ran since the last reset."""
    return _INTERRUPT_REPORTED


def stop_interrupted(message: str):
    """Print ``interrupted: message`` on stderr and exit with status 130."""
    global _INTERRUPT_REPORTED
    _INTERRUPT_REPORTED = True
    sys.stderr.write("interrupted: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()
    raise typer.Exit(130)


def exit_interrupted_quietly():
    """Exit with status 130 and no line at all (``jitsearch engine``: its stdout and stderr belong to the
    program that runs it)."""
    global _INTERRUPT_REPORTED
    _INTERRUPT_REPORTED = True
    raise typer.Exit(130)

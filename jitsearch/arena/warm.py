"""A first run compiles its agents' kernels side by side.

Numba compiles one kernel at a time in a process (a global compiler lock),
so a first tournament between two MCTS kinds (say ``mcts:backend=cpu``, the
multi-tree twin of the GPU search, against ``mcts:workers=2``, the
single-tree kernel) waits for the sum of two compilations. Before the first
game :func:`warm_agents` warms the first agent here; if that starts a real
compilation (a cold cache), each other distinct agent is warmed at the same
time in a helper process (``python -c``, same environment, so the same Numba
cache), and this process waits for them and then loads what they cached. On
a machine with two or more cores a first run waits about as long as its
slowest kernel takes. With a warm cache nothing is started: each warm-up is
a search of a few iterations on kernels loaded from the cache.

A helper that fails or is not done within :data:`HELPER_SECONDS` changes
nothing but the time: this process compiles what is missing itself
(:class:`jitsearch._jit.CompileBeside`; ``JITSEARCH_COMPILE_HELPERS=0``
turns helpers off).
"""

from __future__ import annotations

import json
import sys

from .._jit import CompileBeside
from ..games import game_of, get as get_game

#: How long to wait for a helper process before compiling here instead.
HELPER_SECONDS = 300.0


def _helper_argv(spec: str, state) -> list[str] | None:
    """The helper's argv for ``spec`` on ``state`` (its game, text and variant); None for a game that cannot
    name its variant (no engine protocol): that agent warms here."""
    game = game_of(state)
    if game.engine_protocol is None:
        return None
    return CompileBeside.python_argv("jitsearch.arena.warm", "_helper_main", spec, game.name, state.to_text(),
                                     json.dumps(game.engine_protocol.variant_of(state)))


def _helper_main() -> None:
    """The helper process: warm one agent spec on one position of one game (argv)."""
    from .agents import parse_agent

    spec, name, text, variant = sys.argv[1:5]
    parse_agent(spec, seed=0).warm(get_game(name).from_text(text, **json.loads(variant)))


def warm_agents(specs, state, *, helpers: bool = True) -> dict:
    """Warm the agent of each spec (duplicates once; agents that compile
    nothing of ours, ``cmd:``, OpenSpiel, random, are skipped) before the first
    game, the others in helper processes while the first one compiles here
    (see the module docstring). ``helpers=False``: one after another, here.
    Returns ``{"helpers": processes started, "compiled": whether this process
    started a compilation}``. Ctrl-C stops the helpers and propagates."""
    from .agents import parse_agent

    todo, seen = [], set()
    for spec in specs:
        if spec in seen or spec.startswith(("cmd:", "openspiel:")):
            continue
        seen.add(spec)
        agent = parse_agent(spec, seed=0)
        if agent.warms:
            todo.append((spec, agent))
    if not todo:
        return {"helpers": 0, "compiled": False}
    argvs = [_helper_argv(spec, state) for spec, _ in todo[1:]] if helpers else []
    beside = CompileBeside([argv for argv in argvs if argv is not None])
    try:
        with beside:
            todo[0][1].warm(state)
        beside.wait(HELPER_SECONDS)
        for _, agent in todo[1:]:
            agent.warm(state)
    finally:
        beside.close()
    return {"helpers": len(beside.procs), "compiled": beside.compiled}

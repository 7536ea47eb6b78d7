"""The engine line protocol: our agents as a process that a tester (our arena,
or anyone's) drives through stdin and stdout, one request per line, one answer
per line, UTF-8, ``\\n``; UCI's idea, smaller.

| request | answer |
|---|---|
| ``hello`` | ``hello <engine name>`` |
| ``game <m> <n> standard`` or ``... empty-capture`` | ``ok`` (a new game of Kalah(m, n) with those rules) |
| ``seed <integer>`` (our extension) | ``ok`` (the seed of this game's agent: it replays exactly) |
| ``position <text>`` | ``ok`` (our position text, ``4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0``) |
| ``go <milliseconds>`` | zero or more ``info <free text>``, then ``move <pit>`` |
| ``quit`` | (the process exits 0) |
| anything else, or out of place | ``error <one line>``; the engine keeps running |

A pit is an index of our board layout (player 0's houses 1..m, player 1's
m+2..2m+1). The tester owns the game and the clock: it sends the position
before every ``go``, and a ``move`` later than the time it gave (plus its
margin) loses the game. :class:`EngineServer` is the engine side as a pure
state machine (a line in, answer lines out); :func:`serve` runs it over two
text streams (``jitsearch engine``); the tester side is
:mod:`jitsearch.arena.external_engine`.

The served agent plays as its spec says. ``go <ms>`` caps the time of an
agent with a time limit (``alphabeta:time=``, ``mcts:time=``, ``mc:time=``,
``mtdf:time=``) at ``GO_SHARE`` of the time given (less ``GO_OVERHEAD_MS``),
never above its own ``time=``; an agent with a fixed budget (depth,
iterations) ignores it. Each ``game`` makes a fresh agent (the seed given by
``seed``, else the engine's ``--seed``), so a game is played exactly as the
in-process agent with that seed plays it.

:class:`OwareEngineServer` (``jitsearch engine --game oware``) serves an
Oware agent (:func:`jitsearch.arena.oware_arena.parse_oware_agent`) with the
same requests, except: ``game <m> <n> standard`` (OpenSpiel's rules) or
``... grand-slam-illegal``; ``position <text> [moves <house> ...]``, Oware's
text (``4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0``) and the houses played since it, as
UCI's ``position ... moves``: Oware's repetition rule needs the positions
since the last capture, which a text alone does not hold, so a tester that
sends the game's start and its moves gives the engine the game's record;
``move <house>`` answers a house index of Oware's layout (player 0's
0..m-1, player 1's m..2m-1).
"""

from __future__ import annotations

import sys

from ..games.kalah import KalahState
from .agents import parse_agent

#: The rules words of ``game``.
RULES = {"standard": False, "empty-capture": True}
#: Share of ``go``'s time a timed agent may search, and what is kept back for the answer, in ms.
GO_SHARE = 0.9
GO_OVERHEAD_MS = 20
#: Longest request line taken, in characters (a position of the largest board is far shorter).
MAX_LINE = 10_000
#: Longest ``go`` time, in ms (one day).
MAX_GO_MS = 86_400_000
#: Agent kinds a server cannot serve: they need a person, keep their own game, or are already processes.
_NOT_SERVED = {"human": "a human player needs the terminal (jitsearch play)",
               "openspiel": "an OpenSpiel bot keeps its own game from the start and cannot take a position",
               "cmd": "a cmd: engine already is a process: run it directly"}


def _one_line(text) -> str:
    return " ".join(str(text).split()) or "failed"


class EngineServer:
    """The engine side of the protocol for one agent spec.

    ``handle(line)`` returns ``(answers, quit)``: the answer lines (without
    newlines) and True after ``quit``. Bad requests give ``error ...`` and
    leave the state as it was. ``spec`` is parsed (and refused) here, before
    any request.
    """

    def __init__(self, spec: str, *, seed: int | None = None, name: str | None = None):
        kind = spec.strip().partition(":")[0].strip() if isinstance(spec, str) else None
        if kind in _NOT_SERVED:
            raise ValueError(f"cannot serve {spec!r}: {_NOT_SERVED[kind]}")
        self.template = parse_agent(spec)
        self.spec = str(self.template)
        self.name = _one_line(name) if name else f"jitsearch {self.spec}"
        self.seed = seed
        self.game: tuple[int, int, bool] | None = None
        self.agent = None
        self.state: KalahState | None = None
        self._warmed: set = set()

    # -- requests -----------------------------------------------------------------------------

    def handle(self, line: str) -> tuple[list[str], bool]:
        words = line.strip().split(None, 1)
        if not words:
            return ["error empty request"], False
        if len(line) > MAX_LINE:
            return [f"error a request has at most {MAX_LINE} characters"], False
        verb, rest = words[0], (words[1].strip() if len(words) > 1 else "")
        if verb == "quit":
            return [], True
        handler = getattr(self, "_" + verb, None) if verb in ("hello", "game", "seed", "position", "go") else None
        if handler is None:
            return [f"error unknown request {verb!r}: hello, game, seed, position, go or quit"], False
        try:
            return handler(rest), False
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # the engine keeps running: every failure is one error line
            return [f"error {_one_line(exc)}"], False

    def _hello(self, rest):
        if rest:
            raise ValueError("hello takes nothing")
        return [f"hello {self.name}"]

    def _game(self, rest):
        parts = rest.split()
        if len(parts) != 3 or parts[2] not in RULES:
            raise ValueError("game takes <houses> <seeds> standard|empty-capture")
        try:
            m, n = int(parts[0], 10), int(parts[1], 10)
        except ValueError:
            raise ValueError("game takes <houses> <seeds> as integers") from None
        empty = RULES[parts[2]]
        start = KalahState.initial(m, n, empty_capture=empty)  # checks the board size
        self.template.check_match(m, n, empty)  # a board the agent refuses (perfect) is refused here
        self.game, self.state = (m, n, empty), None
        self._warm(start)
        self._new_agent()
        return ["ok"]

    def _seed(self, rest):
        try:
            seed = int(rest, 10)
        except ValueError:
            raise ValueError(f"seed takes an integer, got {rest!r}") from None
        self.seed = seed
        if self.game is not None:  # this game's agent starts again with the seed
            self._new_agent()
        return ["ok"]

    def _position(self, rest):
        if self.game is None:
            raise ValueError("no game: send game <m> <n> standard|empty-capture first")
        m, n, empty = self.game
        state = KalahState.from_text(rest, empty_capture=empty)
        if state.houses != m:
            raise ValueError(f"the position has {state.houses} houses a side, the game {m}")
        if state.seeds_total != 2 * m * n:
            raise ValueError(f"the position holds {state.seeds_total} seeds, Kalah({m},{n}) {2 * m * n}")
        self.state = state
        return ["ok"]

    def _go(self, rest):
        try:
            ms = int(rest, 10)
        except ValueError:
            raise ValueError(f"go takes the milliseconds to move in, got {rest!r}") from None
        if not 1 <= ms <= MAX_GO_MS:
            raise ValueError(f"go takes 1..{MAX_GO_MS} milliseconds, got {ms}")
        if self.state is None:
            raise ValueError("no position: send position <text> first")
        if self.state.is_over:
            raise ValueError("the game is over in this position")
        agent = self.agent
        self._cap(agent, ms)
        pit = int(agent(self.state))
        return [*_info_lines(agent.last), f"move {pit}"]

    # -- helpers ------------------------------------------------------------------------------

    def _cap(self, agent, ms: int) -> None:
        _cap_time(agent, self.template, ms)

    def _new_agent(self) -> None:
        """A fresh agent for this game; an engine's table is allocated now, not in the first ``go``."""
        m, n, empty = self.game
        self.agent = self.template.with_seed(self.seed)
        if hasattr(self.agent, "game_engine"):
            self.agent.game_engine(KalahState.initial(m, n, empty_capture=empty))

    def _warm(self, start: KalahState) -> None:
        """Compile (or load from the cache) what the agent's searches run, once per board, on a throwaway
        copy of the agent, so that the first ``go`` of a game is not spent on it."""
        key = self.game
        if key in self._warmed or start.is_over:
            return
        self._warmed.add(key)
        twin = self.template.with_seed(0)
        _cap_time(twin, self.template, 50)
        twin(start)


#: The rules words of ``game`` for Oware: OpenSpiel's rules, or grand slams illegal.
OWARE_RULES = {"standard": False, "grand-slam-illegal": True}


class OwareEngineServer(EngineServer):
    """The engine side of the protocol for an Oware agent spec (the module docstring says what differs)."""

    def __init__(self, spec: str, *, seed: int | None = None, name: str | None = None):
        kind = spec.strip().partition(":")[0].strip() if isinstance(spec, str) else None
        if kind in _NOT_SERVED:
            raise ValueError(f"cannot serve {spec!r}: {_NOT_SERVED[kind]}")
        from .oware_arena import parse_oware_agent

        self.template = parse_oware_agent(spec, seed=0)
        self.spec = spec.strip()
        self.name = _one_line(name) if name else f"jitsearch oware {self.spec}"
        self.seed = seed
        self.game = None
        self.agent = None
        self.state = None
        self._warmed: set = set()

    def _game(self, rest):
        from ..games.oware import OwareState

        parts = rest.split()
        if len(parts) != 3 or parts[2] not in OWARE_RULES:
            raise ValueError("game takes <houses> <seeds> standard|grand-slam-illegal")
        try:
            m, n = int(parts[0], 10), int(parts[1], 10)
        except ValueError:
            raise ValueError("game takes <houses> <seeds> as integers") from None
        slam = OWARE_RULES[parts[2]]
        start = OwareState.initial(m, n, grand_slam_illegal=slam)  # checks the board size
        self.game, self.state = (m, n, slam), None
        self._warm(start)
        self._new_agent()
        return ["ok"]

    def _position(self, rest):
        if self.game is None:
            raise ValueError("no game: send game <m> <n> standard|grand-slam-illegal first")
        from ..games.oware import OwareState

        m, n, slam = self.game
        text, _, moves = rest.partition(" moves")
        state = OwareState.from_text(text, grand_slam_illegal=slam)
        if state.houses != m:
            raise ValueError(f"the position has {state.houses} houses a side, the game {m}")
        if state.seeds_total != 2 * m * n:
            raise ValueError(f"the position holds {state.seeds_total} seeds, Oware({m},{n}) {2 * m * n}")
        for i, word in enumerate(moves.split()):
            try:
                house = int(word, 10)
            except ValueError:
                raise ValueError(f"moves are house indices, got {word!r}") from None
            if state.is_over:
                raise ValueError(f"move {i + 1} (house {house}): the game is already over")
            try:
                state = state.play(house)
            except ValueError as exc:
                raise ValueError(f"move {i + 1} (house {house}) in {state.to_text()}: {exc}") from None
        self.state = state
        return ["ok"]

    def _cap(self, agent, ms: int) -> None:
        """A timed agent (``time=``) gets at most ``GO_SHARE`` of ``ms``, never more than its spec's time."""
        own = self.template.options.get("time")
        if own is not None:
            agent.options = dict(agent.options, time=min(own, max(0.001, (ms * GO_SHARE - GO_OVERHEAD_MS) / 1000.0)))

    def _new_agent(self) -> None:
        from .oware_arena import parse_oware_agent

        self.agent = parse_oware_agent(self.spec, seed=self.seed)

    def _warm(self, start) -> None:
        from .oware_arena import parse_oware_agent

        key = self.game
        if key in self._warmed:
            return
        self._warmed.add(key)
        twin = parse_oware_agent(self.spec, seed=0)
        self._cap(twin, 50)
        twin(start)


def _cap_time(agent, template, ms: int) -> None:
    """Give a timed agent at most ``GO_SHARE`` of ``ms`` (never more than its spec's own time)."""
    budget = max(0.001, (ms * GO_SHARE - GO_OVERHEAD_MS) / 1000.0)
    if template.kind in ("mcts", "hmcts", "mc"):
        own = template.options.get("time")
        if own is None:
            return
        agent.options = dict(agent.options, time=min(own, budget))
        agent.time = agent.options["time"]
        if agent._config is not None:
            from ..mcts.config import MCTSConfig

            agent._config = MCTSConfig.from_options(**agent.options)
        return
    if template.time is not None:
        agent.time = min(template.time, budget)


def _info_lines(last) -> list[str]:
    """One ``info`` line from an agent's last search (depth, value, nodes, ... where it has them)."""
    if not isinstance(last, dict):
        return []
    keys = ("depth", "value", "nodes", "iterations", "playouts", "seconds", "time")
    words = [f"{k} {last[k]:.4g}" if isinstance(last[k], float) else f"{k} {last[k]}"
             for k in keys if k in last and isinstance(last[k], (int, float)) and not isinstance(last[k], bool)]
    return ["info " + " ".join(words)] if words else []


def serve(server: EngineServer, infile, outfile) -> int:
    """Answer the requests of ``infile`` on ``outfile`` (text streams), one
    line each, flushed; returns 0 after ``quit`` or at the end of ``infile``."""
    while True:
        line = infile.readline()
        if not line:
            return 0
        answers, done = server.handle(line.rstrip("\r\n"))
        for answer in answers:
            outfile.write(answer + "\n")
        outfile.flush()
        if done:
            return 0


def serve_stdio(spec: str, *, seed: int | None = None, name: str | None = None, game: str = "kalah") -> int:
    """:func:`serve` on this process's stdin and stdout (UTF-8, ``\\n``); ``game``: kalah or oware."""
    if game not in ("kalah", "oware"):
        raise ValueError(f"game must be kalah or oware, got {game!r}")
    server = (OwareEngineServer if game == "oware" else EngineServer)(spec, seed=seed, name=name)
    for stream in (sys.stdin, sys.stdout):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace", newline="\n")
        except (AttributeError, ValueError):
            pass
    return serve(server, sys.stdin, sys.stdout)

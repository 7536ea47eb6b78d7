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

A request line longer than :data:`MAX_LINE` characters is answered ``error``
and its rest is skipped as it streams in (at most ``MAX_LINE`` characters are
held). A failure the server did not foresee (a bug, memory running out) is
one ``error <request>: ...`` line, never a Python message: its traceback goes
to stderr, the game is dropped (the next ``game`` starts afresh), and the
engine keeps serving.

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

Memory: a server checks what its agent would allocate (an MCTS agent's tree,
sized as the search sizes it; the engine's table, ``tt=``) against the same
limits as the search, for :data:`DEFAULT_BOARD` before it serves (an agent
that cannot play the arena's default board is refused at start, one line) and
for the board of each ``game`` (an ``error`` answer), so a ``go`` never finds
out.

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
import traceback

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
#: The board (houses, seeds) a server's agent is checked on before it serves: the arena's default, Kalah(6,4)
#: and Oware(6,4).
DEFAULT_BOARD = (6, 4)
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
        self._check_default_board()

    def _check_default_board(self) -> None:
        """Refuse (``ValueError``, one line) an agent that could not search on :data:`DEFAULT_BOARD`."""
        m, n = DEFAULT_BOARD
        try:
            self._check_memory(m, n, False)
        except ValueError as exc:
            raise ValueError(f"cannot serve {self.spec!r}: on Kalah({m},{n}), the default board, {exc}") from None

    def _check_memory(self, m: int, n: int, empty: bool) -> None:
        check_kalah_memory(self.template, KalahState.initial(m, n, empty_capture=empty))

    # -- requests -----------------------------------------------------------------------------

    def handle(self, line: str) -> tuple[list[str], bool]:
        if len(line) > MAX_LINE:
            return [f"error a request has at most {MAX_LINE} characters"], False
        words = line.strip().split(None, 1)
        if not words:
            return ["error empty request"], False
        verb, rest = words[0], (words[1].strip() if len(words) > 1 else "")
        if verb == "quit":
            return [], True
        handler = getattr(self, "_" + verb, None) if verb in ("hello", "game", "seed", "position", "go") else None
        if handler is None:
            return [f"error unknown request {_show(verb)}: hello, game, seed, position, go or quit"], False
        try:
            return handler(rest), False
        except KeyboardInterrupt:
            raise
        except ValueError as exc:  # a request refused: the state is as it was
            return [f"error {_one_line(exc)}"], False
        except Exception as exc:  # unforeseen: the game is dropped, the engine serves on
            self._drop_game()
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            why = ("out of memory" if isinstance(exc, MemoryError)
                   else f"internal error ({type(exc).__name__}; the traceback is on the engine's stderr)")
            return [f"error {verb} failed: {why}; the game is dropped, send game to start a new one"], False

    def _drop_game(self) -> None:
        self.game, self.agent, self.state = None, None, None

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
        self._check_memory(m, n, empty)
        self._drop_game()  # a new game, whatever happens below
        self._warm(start, (m, n, empty))
        agent = self._make_agent((m, n, empty))
        self.game, self.agent = (m, n, empty), agent
        return ["ok"]

    def _seed(self, rest):
        try:
            seed = int(rest, 10)
        except ValueError:
            raise ValueError(f"seed takes an integer, got {rest!r}") from None
        if self.game is not None:  # this game's agent starts again with the seed
            self.agent = self._make_agent(self.game, seed)
        self.seed = seed
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
        if self.state is None or self.agent is None:
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

    def _make_agent(self, game, seed=None):
        """A fresh agent for ``game`` (the server's seed unless ``seed`` is given); an engine's table is
        allocated now, not in the first ``go``."""
        m, n, empty = game
        agent = self.template.with_seed(self.seed if seed is None else seed)
        if hasattr(agent, "game_engine"):
            agent.game_engine(KalahState.initial(m, n, empty_capture=empty))
        return agent

    def _warm(self, start: KalahState, key) -> None:
        """Compile (or load from the cache) what the agent's searches run, once per board, on a throwaway
        copy of the agent, so that the first ``go`` of a game is not spent on it."""
        if key in self._warmed or start.is_over:
            return
        if getattr(self.template, "warms", False):  # the smallest search of the same kernels
            self.template.warm(start)
        else:  # the engine, exact solvers: a short search (capped to 50 ms where the agent is timed)
            twin = self.template.with_seed(0)
            _cap_time(twin, self.template, 50)
            twin(start)
        self._warmed.add(key)  # (once it worked)


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
        m, n = DEFAULT_BOARD
        try:
            self._check_memory(m, n, False)
        except ValueError as exc:
            raise ValueError(f"cannot serve {self.spec!r}: on Oware({m},{n}), the default board, {exc}") from None

    def _check_memory(self, m: int, n: int, slam: bool) -> None:
        check_oware_memory(self.template, m)

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
        self._check_memory(m, n, slam)
        self._drop_game()  # a new game, whatever happens below
        self._warm(start, (m, n, slam))
        agent = self._make_agent((m, n, slam))
        self.game, self.agent = (m, n, slam), agent
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

    def _make_agent(self, game, seed=None):
        from .oware_arena import parse_oware_agent

        return parse_oware_agent(self.spec, seed=self.seed if seed is None else seed)

    def _warm(self, start, key) -> None:
        from .oware_arena import parse_oware_agent

        if key in self._warmed:
            return
        twin = parse_oware_agent(self.spec, seed=0)
        self._cap(twin, 50)
        twin(start)
        self._warmed.add(key)  # (once it worked)


def check_kalah_memory(agent, state: KalahState) -> None:
    """Refuse (``ValueError``, one line) a Kalah agent whose search would not fit in memory on ``state``'s
    board: an MCTS agent's tree pool, sized and checked as :func:`jitsearch.mcts.search.mcts_search` sizes it
    for its in-kernel and batched searches (iterations x houses + 1 nodes, against the search's default limit
    and the machine's memory), and an engine's table (``tt=`` MiB) against the machine's memory. The backend
    searches (``backend=`` without ``batch=``) size their trees per launch and are checked by the search."""
    from .._checks import cap_to_physical_memory
    from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

    if getattr(agent, "kind", None) in ("mcts", "hmcts"):
        from ..mcts.search import tree_capacity

        cfg = agent._config
        if cfg is None or (cfg.backend is not None and cfg.batch is None):
            return
        w = cfg.workers
        per_worker = None if cfg.iterations is None else -(-cfg.iterations // w)
        tree_capacity(cfg, state.houses, per_worker, cap_to_physical_memory(DEFAULT_MAX_BYTES) // w)
    elif getattr(agent, "engine", False):
        from ..games.kalah.engine import SOLVER_TABLE_SHARE

        table = int(agent.options.get("tt", 64)) * 2**20
        what = f"the engine's table of {table >> 20:,} MiB (tt=)"
        need = table
        if agent.options.get("exact", True) and agent.time is not None:
            need = int(table * (1 + SOLVER_TABLE_SHARE))
            what += f" and exact mode's solver table, {(need - table) >> 20:,} MiB"
        check_bytes(need, need, what, "lower tt=")


def check_oware_memory(agent, houses: int) -> None:
    """Refuse (``ValueError``, one line) an Oware MCTS agent (one tree, ``parallel=root``) whose tree would not
    fit: (iterations + leaves) x houses + 1 nodes, as :func:`jitsearch.mcts.wrappers.analyse_oware` sizes it,
    against the search's default limit and the machine's memory. The other kinds allocate little, or check
    at parse (``db=``)."""
    o = getattr(agent, "options", {})
    if getattr(agent, "kind", None) != "mcts" or "iterations" not in o or o.get("parallel", "root") != "root":
        return
    from ..mcts.wrappers import node_bytes
    from ..mcts.multi import default_leaves
    from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

    leaves = o.get("leaves") or default_leaves(getattr(agent, "backend", "cpu"))
    capacity = (o["iterations"] + leaves) * houses + 1
    check_bytes(capacity * node_bytes(houses, o.get("imm", 0.0) > 0), DEFAULT_MAX_BYTES,
                f"an Oware MCTS tree of {capacity:,} nodes", "lower iterations=")


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


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
    if isinstance(last.get("exact"), bool):  # the engine: 1 when value is the proven final margin
        words.append(f"exact {int(last['exact'])}")
        if last["exact"] and isinstance(last.get("margin"), int):
            words.append(f"margin {last['margin']}")
    return ["info " + " ".join(words)] if words else []


def read_request(infile) -> str | None:
    """The next request line of ``infile`` without its ``\\n`` (or ``\\r\\n``), None at the end of input. At
    most ``MAX_LINE + 2`` characters are read at once: of a longer line, the first ``MAX_LINE + 1`` are
    returned (too long: :meth:`EngineServer.handle` refuses them) and the rest is read and dropped in chunks
    of that size, so a huge line costs no memory."""
    line = infile.readline(MAX_LINE + 2)
    if not line:
        return None
    if len(line) == MAX_LINE + 2 and not line.endswith("\n"):
        while True:
            rest = infile.readline(MAX_LINE + 2)
            if not rest or rest.endswith("\n"):
                break
        return line[:MAX_LINE + 1]
    return line.rstrip("\r\n")


def serve(server: EngineServer, infile, outfile) -> int:
    """Answer the requests of ``infile`` on ``outfile`` (text streams), one
    line each, flushed; returns 0 after ``quit`` or at the end of ``infile``."""
    while True:
        line = read_request(infile)
        if line is None:
            return 0
        answers, done = server.handle(line)
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

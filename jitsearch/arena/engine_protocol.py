"""The engine line protocol: our agents as a process that a tester (our arena, or anyone's) drives through stdin and
stdout, one request per line, one answer per line, UTF-8, ``\\n``; UCI's idea, smaller. One protocol for every
registered game (:func:`jitsearch.games.get`).

| request | answer |
|---|---|
| ``hello`` | ``hello <engine name>`` |
| ``game <name> [<key>=<value> ...]`` | ``ok``: a new game of that game and variant (options left out: their defaults) |
| ``seed <integer>`` (our extension) | ``ok`` (the seed of this game's agent: it replays exactly) |
| ``position <text> [moves <move> ...]`` | ``ok``: the state's text form and our moves played since it |
| ``go <milliseconds>`` | zero or more ``info <free text>``, then ``move <move>`` |
| ``quit`` | (the process exits 0) |
| anything else, or out of place | ``error <one line>``; the engine keeps running |

``game kalah houses=6 seeds=4 empty_capture=0`` names a registered game and its variant options
(:attr:`~jitsearch.games.protocol.Game.variant`; booleans 0/1/true/false). The older lines stay accepted for the
games that had them (:attr:`~jitsearch.games.protocol.EngineProtocol.legacy_game`): ``game <m> <n>
standard|empty-capture`` (Kalah) and, by ``jitsearch engine --game oware``, ``game <m> <n>
standard|grand-slam-illegal`` (Oware). A move is the game's move number (:mod:`jitsearch.games.protocol`: a Kalah
pit index, an Oware house index, a Connect Four column 0..width-1). ``moves`` after a position replays the game's
record from there (Oware's repetition rule needs the positions since the last capture, which a text alone does not
hold), as UCI's ``position ... moves``.

A request line longer than :data:`MAX_LINE` characters is answered ``error`` and its rest is skipped as it streams
in (at most ``MAX_LINE`` characters are held). A failure the server did not foresee (a bug, memory running out) is
one ``error <request>: ...`` line, never a Python message: its traceback goes to stderr, the game is dropped (the
next ``game`` starts afresh), and the engine keeps serving.

The tester owns the game and the clock: it sends the position before every ``go``, and a ``move`` later than the
time it gave (plus its margin) loses the game. :class:`EngineServer` is the engine side as a pure state machine (a
line in, answer lines out); :func:`serve` runs it over two text streams (``jitsearch engine``); the tester side is
:mod:`jitsearch.arena.external_engine`.

The served agent plays as its spec says. ``go <ms>`` caps the time of an agent with a time limit (``time=``) at
``GO_SHARE`` of the time given (less ``GO_OVERHEAD_MS``), never above its own ``time=``; an agent with a fixed
budget (depth, iterations) ignores it. Each ``game`` makes a fresh agent (the seed given by ``seed``, else the
engine's ``--seed``), so a game is played exactly as the in-process agent with that seed plays it.

Memory: a server checks what its agent would allocate (an MCTS agent's tree, sized as the search sizes it; a
game's engine tables, :attr:`~jitsearch.games.protocol.EngineProtocol.table_bytes`) against the same limits as the
search, on its game's default board before it serves (an agent that cannot play it is refused at start, one line)
and on the board of each ``game`` (an ``error`` answer), so a ``go`` never finds out.
"""

from __future__ import annotations

import inspect
import sys
import traceback

from ..games import DEFAULT_GAME, get
from .agents import parse_agent
from .external_engine import MAX_LINE, game_words

#: Share of ``go``'s time a timed agent may search, and what is kept back for the answer, in ms.
GO_SHARE = 0.9
GO_OVERHEAD_MS = 20
#: Longest ``go`` time, in ms (one day).
MAX_GO_MS = 86_400_000
#: Agent kinds a server cannot serve: they need a person, keep their own game, or are already processes.
_NOT_SERVED = {"human": "a human player needs the terminal (jitsearch play)",
               "openspiel": "an OpenSpiel bot keeps its own game from the start and cannot take a position",
               "cmd": "a cmd: engine already is a process: run it directly"}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

__all__ = ["EngineServer", "MAX_LINE", "game_words", "read_request", "serve", "serve_stdio", "served_agent"]


def _agent_for(game_name: str, spec: str, seed):
    """Our agent of ``spec`` for the game called ``game_name`` (one-line ``ValueError`` for a bad spec)."""
    return parse_agent(spec, game=game_name, seed=seed)


def served_agent(game_name: str, spec: str, *, seed: int | None = None):
    """The agent of ``spec`` for ``game_name``, refused in one line where a process cannot serve it
    (``human``, ``openspiel:``, ``cmd:``)."""
    kind = spec.strip().partition(":")[0].strip() if isinstance(spec, str) else None
    if kind in _NOT_SERVED:
        raise ValueError(f"cannot serve {spec!r}: {_NOT_SERVED[kind]}")
    return _agent_for(game_name, spec, seed)


def _word(value) -> str:
    return str(int(value)) if isinstance(value, bool) else str(value)


def _one_line(text) -> str:
    return " ".join(str(text).split()) or "failed"


def parse_game_words(words: list, default) -> tuple:
    """``(game, variant)`` of the words after ``game``: a registered name and ``KEY=VALUE`` options, or the
    older line of ``default`` (the server's game) where it has one."""
    if not words:
        raise ValueError("game takes a game's name and its options: game kalah houses=6 seeds=4")
    hook = default.engine_protocol
    if not words[0].isidentifier():
        if hook is None or hook.legacy_game is None:
            raise ValueError(f"game takes a game's name first, then KEY=VALUE options: game {default.name} "
                             + " ".join(f"{k}={_word(o.default)}" for k, o in default.variant.items()))
        return default, default.check_variant(**hook.legacy_game(words))
    game = get(words[0])
    chosen = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq or key not in game.variant:
            raise ValueError(f"{word!r} is not an option of {game.name}: KEY=VALUE with KEY one of "
                             f"{', '.join(game.variant) or 'none'}")
        if key in chosen:
            raise ValueError(f"option {key} is given twice")
        kind = game.variant[key].type
        if kind is bool:
            if value.lower() not in _TRUE + _FALSE:
                raise ValueError(f"{key} takes 0/1/true/false, got {value!r}")
            chosen[key] = value.lower() in _TRUE
        else:
            try:
                chosen[key] = kind(value)
            except ValueError:
                raise ValueError(f"{key} takes {kind.__name__} values, got {value!r}") from None
    return game, game.check_variant(**chosen)


def split_position(rest: str) -> tuple[str, list[str]]:
    """``(text, move words)`` of ``position TEXT [moves M ...]``'s rest (no state text holds the word
    ``moves``)."""
    words = rest.split()
    if "moves" not in words:
        return " ".join(words), []
    i = words.index("moves")
    return " ".join(words[:i]), words[i + 1:]


def play_moves(state, words: list):
    """``state`` after the moves ``words`` (integers), each checked."""
    for i, word in enumerate(words):
        try:
            move = int(word, 10)
        except ValueError:
            raise ValueError(f"moves are integers, got {word!r}") from None
        if state.is_over:
            raise ValueError(f"move {i + 1} ({move}): the game is already over")
        try:
            state = state.play(move)
        except ValueError as exc:
            raise ValueError(f"move {i + 1} ({move}) in {state.to_text()}: {exc}") from None
    return state


class EngineServer:
    """The engine side of the protocol for one agent spec, serving ``game`` (a registered name; a ``game``
    request may name any game the spec has agents for).

    ``handle(line)`` returns ``(answers, quit)``: the answer lines (without newlines) and True after
    ``quit``. Bad requests give ``error ...`` and leave the state as it was. ``spec`` is parsed (and refused)
    here, before any request, and checked on ``variant`` of ``game`` (default: the game's defaults).
    """

    def __init__(self, spec: str, *, game: str = DEFAULT_GAME, seed: int | None = None, name: str | None = None,
                 variant: dict | None = None):
        self.default = get(game)
        self.spec = spec.strip() if isinstance(spec, str) else spec
        self.templates: dict = {}
        self.spec = str(self._template(self.default))
        self.name = _one_line(name) if name else " ".join(
            ["jitsearch", *([self.default.name] if self.default.name != DEFAULT_GAME else []), self.spec])
        self.seed = seed
        self.game = None  # (Game, variant) of the game being played
        self.agent = None
        self.state = None
        self._warmed: set = set()
        board = self.default.check_variant(**(variant or {}))
        try:
            self._check_memory(self.default, board)
        except ValueError as exc:
            raise ValueError(f"cannot serve {self.spec!r}: on {self.default.name} {_show_variant(board)}, "
                             f"the default board, {exc}") from None

    def _template(self, game):
        """The spec's agent for ``game`` (parsed once a game)."""
        if game.name not in self.templates:
            self.templates[game.name] = served_agent(game.name, self.spec, seed=0)
        return self.templates[game.name]

    def _check_memory(self, game, variant: dict) -> None:
        check_memory(game, self._template(game), game.initial(**variant))

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
        game, variant = parse_game_words(rest.split(), self.default)
        start = game.initial(**variant)  # checks the board
        template = self._template(game)
        _check_match(template, variant)  # a board the agent refuses (perfect) is refused here
        self._check_memory(game, variant)
        self._drop_game()  # a new game, whatever happens below
        key = (game.name, tuple(sorted(variant.items())))
        self._warm(game, start, key)
        self.game = (game, variant)
        self.agent = self._make_agent()
        return ["ok"]

    def _seed(self, rest):
        try:
            seed = int(rest, 10)
        except ValueError:
            raise ValueError(f"seed takes an integer, got {rest!r}") from None
        self.seed = seed
        if self.game is not None:  # this game's agent starts again with the seed
            self.agent = self._make_agent()
        return ["ok"]

    def _position(self, rest):
        if self.game is None:
            raise ValueError(f"no game: send game {game_words(self.default, self.default.defaults())} first")
        game, variant = self.game
        text, moves = split_position(rest)
        state = game.from_text(text, **variant)
        hook = game.engine_protocol
        if hook is not None:
            have = hook.variant_of(state)
            wrong = [k for k in variant if k in have and have[k] != variant[k]]
            if wrong:
                raise ValueError(f"the position has {', '.join(f'{k}={have[k]}' for k in wrong)}, the game "
                                 f"{', '.join(f'{k}={_word(variant[k])}' for k in wrong)}")
        self.state = play_moves(state, moves)
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
        _cap_time(agent, self._template(self.game[0]), ms)
        move = int(agent(self.state))
        return [*_info_lines(getattr(agent, "last", None)), f"move {move}"]

    # -- helpers ------------------------------------------------------------------------------

    def _fresh(self, game, seed):
        template = self._template(game)
        if hasattr(template, "with_seed"):
            return template.with_seed(seed)
        return served_agent(game.name, self.spec, seed=seed)

    def _make_agent(self):
        """A fresh agent for the game (the server's seed); an engine's table is allocated now, not in the
        first ``go``."""
        game, variant = self.game
        agent = self._fresh(game, self.seed)
        if hasattr(agent, "game_engine"):
            agent.game_engine(game.initial(**variant))
        return agent

    def _warm(self, game, start, key) -> None:
        """Compile (or load from the cache) what the agent's searches run, once per board, on a throwaway
        copy of the agent, so that the first ``go`` of a game is not spent on it."""
        if key in self._warmed or start.is_over:
            return
        template = self._template(game)
        if getattr(template, "warms", False):  # the smallest search of the same kernels
            template.warm(start)
        else:  # the engine, exact solvers: a short search (capped to 50 ms where the agent is timed)
            twin = self._fresh(game, 0)
            _cap_time(twin, template, 50)
            twin(start)
        self._warmed.add(key)  # (once it worked)


def _check_match(agent, variant: dict) -> None:
    """The agent's own refusal of a board (``check_match`` taking the variant's options), where it has one."""
    check = getattr(agent, "check_match", None)
    if check is None:
        return
    try:
        inspect.signature(check).bind(**variant)
    except TypeError:
        return
    check(**variant)


def check_memory(game, agent, state) -> None:
    """Refuse (``ValueError``, one line) an agent whose search would not fit in memory on ``state``'s board:
    an MCTS agent's tree pool, sized as its search sizes it (iterations x the most legal moves + 1 nodes, a
    worker's share of them; with Oware's ``leaves=`` the leaves of a step more), against the search's default
    limit and the machine's memory; a game-specific engine's tables
    (:attr:`~jitsearch.games.protocol.EngineProtocol.table_bytes`) against the machine's memory. Searches that
    size their trees per launch (``backend=`` without ``batch=``) are checked by the search."""
    from .._checks import cap_to_physical_memory
    from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

    if hasattr(agent, "check_memory"):
        agent.check_memory(state)
        return
    sizes = game.sizes(game.cfg(state))
    moves = sizes.moves
    if getattr(agent, "kind", None) in ("mcts", "hmcts"):
        cfg = getattr(agent, "_config", None)
        if getattr(agent, "generic", False):  # an agent of options only (Oware's): one tree, parallel=root
            _check_tree_of_options(agent, game, sizes)
            return
        from ..mcts.search import tree_capacity

        if cfg is None or (cfg.backend is not None and cfg.batch is None):
            return
        w = cfg.workers
        per_worker = None if cfg.iterations is None else -(-cfg.iterations // w)
        tree_capacity(cfg, moves, per_worker, cap_to_physical_memory(DEFAULT_MAX_BYTES) // w)
        return
    hook = game.engine_protocol
    tables = hook.table_bytes(agent) if hook is not None and hook.table_bytes is not None else None
    if tables is not None:
        need, what = tables
        check_bytes(need, need, what, "lower tt=")


def _check_tree_of_options(agent, game, sizes) -> None:
    o = getattr(agent, "options", {})
    if "iterations" not in o or o.get("parallel", "root") != "root":
        return
    from ..kernels.game_mcts import node_bytes
    from ..mcts.game import node_dtype_of
    from ..mcts.multi import default_leaves
    from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes

    leaves = o.get("leaves") or default_leaves(getattr(agent, "backend", "cpu"))
    capacity = (o["iterations"] + leaves) * sizes.moves + 1
    check_bytes(capacity * node_bytes(sizes.cells, node_dtype_of(game), o.get("imm", 0.0) > 0), DEFAULT_MAX_BYTES,
                f"an MCTS tree of {capacity:,} nodes", "lower iterations=")


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _show_variant(variant: dict) -> str:
    return " ".join(f"{k}={_word(v)}" for k, v in variant.items())


def _cap_time(agent, template, ms: int) -> None:
    """Give a timed agent at most ``GO_SHARE`` of ``ms`` (never more than its spec's own time): its
    ``time=`` option, or its ``time`` (an engine's)."""
    budget = max(0.001, (ms * GO_SHARE - GO_OVERHEAD_MS) / 1000.0)
    options = getattr(template, "options", None) or {}
    own = options["time"] if "time" in options else getattr(template, "time", None)
    if own is None:
        return
    capped = min(own, budget)
    if "time" in options:
        agent.options = dict(agent.options, time=capped)
    if hasattr(agent, "time"):
        agent.time = capped
    if getattr(agent, "_config", None) is not None:
        from ..mcts.config import MCTSConfig

        agent._config = MCTSConfig.from_options(**agent.options)


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
    if last.get("book") is True:  # the move came from the opening book
        words.append("book 1")
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


def serve_stdio(spec: str, *, seed: int | None = None, name: str | None = None, game: str = DEFAULT_GAME,
                variant: dict | None = None) -> int:
    """:func:`serve` on this process's stdin and stdout (UTF-8, ``\\n``); ``game``: a registered name."""
    server = EngineServer(spec, game=game, seed=seed, name=name, variant=variant)
    for stream in (sys.stdin, sys.stdout):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace", newline="\n")
        except (AttributeError, ValueError):
            pass
    return serve(server, sys.stdin, sys.stdout)

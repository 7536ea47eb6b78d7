"""The game protocol: what a game gives the search, and the conventions every game keeps.

A game is a :class:`Game` record: a name, a Python state class with text forms, the variant
options, and a factory :attr:`Game.build` that compiles the rules with any Numba decorator
(``numba.njit``, ``numba.njit(inline="always")``, ``numba.cuda.jit(device=True)``) into a
:class:`Rules` record of functions with **one signature for every game**. Kernels and algorithms
receive a ``Game`` (or its compiled :class:`Rules`) and close over the functions in a factory:
CUDA has no first-class functions, so closures are the form that works on both targets
(research note "game-protocol", section 2.6).

Conventions (the one statement of them; the games' docstrings refer here)
-------------------------------------------------------------------------
* **Players.** Two players, 0 and 1. Player 0 moves first from a game's initial position
  (Kalah: the south side; Oware: houses A..F; Connect Four: the first player, ``x``). A player
  may move twice in a row (Kalah's extra turn): the player to move is always returned by
  ``apply``, never derived from the ply's parity.
* **Values are from player 0's view.** ``margin`` (the outcome of a finished game) and
  ``evaluate`` (a static estimate of it) are player 0's: positive is good for player 0. A
  search that wants the mover's view negates for player 1. The margin's units are the game's:
  Kalah the store difference, Oware the captured-seed difference, Connect Four +1 / 0 / -1
  (exact solvers may use finer scores of their own, e.g. Pons's for Connect Four, and say so).
  Win / draw / loss is the margin's sign.
* **Moves.** A move is a non-negative int the game defines, the same number in the rules, the
  state class (``state.play(move)``, ``state.legal_moves()``) and the kernels: Kalah a pit index
  (1..m for player 0, m+2..2m+1 for player 1), Oware a house index (0..2m-1), Connect Four a
  column 0..width-1 (Pons's text form writes it 1-based). ``legal`` lists the legal moves in a
  fixed order (increasing); the playout of :mod:`jitsearch.games.playout` plays the k-th of them.
* **The end of the game** is signalled by ``apply`` only: it returns ``GAME_OVER`` (-1) as the
  next player, and the board is then final (Kalah's sweep and Oware's collection done), so
  ``margin(board, cfg)`` is the result. A state given to a kernel is live (:attr:`Game.pack`
  refuses finished ones); the state class's ``is_over`` (``player == -1``) is the Python side.
* **The record** (positions a rule needs to look back at: Oware's repetition) is a caller-owned
  ``hist`` array threaded with a cursor ``cur = (first, count, ply)`` **as a value**: ``apply``
  returns the new cursor, so a depth-first search returns to a parent by keeping the parent's
  cursor, and nothing is written behind the caller's back except row ``first + count``. ``ply``
  counts the moves played in the game (the move limit reads it; ``apply`` adds one). Games
  without a record (Kalah, Connect Four) take a dummy ``hist`` (:func:`no_record`) and return
  ``first`` and ``count`` unchanged. The prototype kept the cursor in an array and lost 20-25 %
  of Oware's playout speed; as a value and inlined it costs nothing.

The compiled signature (``Rules``)
----------------------------------
``legal(board, cfg, player, moves, hist, cur) -> n``
    writes the ``n`` legal moves of ``player`` into ``moves[:n]`` (increasing).
``apply(board, cfg, player, move, hist, cur) -> (next_player or GAME_OVER, cur)``
    plays a legal move in place on ``board``.
``margin(board, cfg) -> int``
    player 0's result on a final board (on a live board: the same formula, the game says what
    it means there).
``evaluate(board, cfg, player) -> float``
    a static estimate of player 0's final margin, ``player`` to move.

``board`` is a 1-D array of :attr:`Game.board_dtype` (Kalah and Oware int32 pits, Connect Four
two int64 bitboards), ``cfg`` a tuple of scalars fixed by the variant (Kalah ``(m,
empty_capture)``, Oware ``(m, grand_slam_illegal, move_limit)``, Connect Four ``(width,
height)``: one compilation per game, since the tuple types differ), ``player`` and the move
int64, ``cur`` a tuple of three int64. Names follow the issue's prototype and the research
note, shortened from the rule modules' ``legal_moves``/``apply_move`` because the arguments
differ from theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

GAME_OVER = -1


class Option(NamedTuple):
    """A variant option: its type, default and one line of help (CLI and API)."""

    type: type
    default: Any
    help: str


class TextUI(NamedTuple):
    """How people see and name a game's positions and moves (``play``, ``analyse``, the web page).

    ``board(state, last=None, markup=False) -> str``: the board drawn in text, ``last`` the move
    just played (marked when ``markup``: rich markup with the styles ``p0``, ``p1`` for the two
    sides, ``last`` for the move just played, ``dim`` for labels). ``move_name(state, move) ->
    str``: a phrase for ``move`` played in ``state`` ("sows house 3 (pit 3)"). ``ask(state) ->
    str``: what a person types ("house 1-6"). ``parse_move(state, text) -> move``: a typed move,
    one-line ``ValueError`` that says what to type. ``board_json(state) -> dict``: what the page's
    drawing script of the game draws. ``script``: optional, the path of that script, a JavaScript
    file that sets ``window.BOARDS[name]`` (the interface the page's ``app.js`` documents; the
    built-in games' ``board.js``); ``jitsearch serve`` serves it, and a game without one is drawn
    as its text form with a button per legal move."""

    board: Callable
    move_name: Callable
    ask: Callable
    parse_move: Callable
    board_json: Callable
    script: str | None = None


class Outcome:
    """``is_over`` and ``result`` of a state from its ``player`` (GAME_OVER once the game is over)
    and ``margin`` (player 0's): the games' state classes inherit them."""

    __slots__ = ()

    @property
    def is_over(self) -> bool:
        return self.player == GAME_OVER

    @property
    def result(self) -> str | None:
        """'p0', 'p1' or 'draw' for a finished game, else None."""
        if not self.is_over:
            return None
        return "draw" if self.margin == 0 else ("p0" if self.margin > 0 else "p1")


def styled(text: str, *styles: str, markup: bool = True) -> str:
    """``text`` in rich markup's ``styles`` (the first outermost) when ``markup``, else as it is."""
    if markup:
        for s in reversed(styles):
            text = f"[{s}]{text}[/{s}]"
    return text


def typed_number(text: str, top: int, noun: str) -> int:
    """A number 1..``top`` a person typed (a house, a column); else the one-line ``ValueError``
    "type a NOUN from 1 to TOP"."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if not 1 <= number <= top:
        raise ValueError(f"type a {noun} from 1 to {top}")
    return number


def legal_move(state, move: int, why: str) -> int:
    """``move`` when it is legal in ``state``; else the one-line ``ValueError`` ``why``."""
    if move not in state.legal_moves():
        raise ValueError(why)
    return move


class Rules(NamedTuple):
    """The compiled rule functions of a game (signatures in the module docstring)."""

    legal: Callable
    apply: Callable
    margin: Callable
    evaluate: Callable


class Sizes(NamedTuple):
    """Array sizes of one variant: ``cells`` the board's length, ``moves`` the most legal moves
    at once, ``plies`` the longest game (-1: no bound known, the caller caps), ``record`` the
    ``(extra rows a game from the state may write, columns)`` of ``hist`` ((0, 1): no record)."""

    cells: int
    moves: int
    plies: int
    record: tuple


class Packed(NamedTuple):
    """Live states of one variant as kernel inputs: ``boards[K, cells]``, ``players[K]``,
    ``hists[K, R, C]`` (state k's record is ``hists[k, :rows[k]]``), ``rows[K]``, ``plies[K]``
    (moves played), ``cfg`` (the variant's tuple). State k's cursor is ``(0, rows[k], plies[k])``."""

    boards: np.ndarray
    players: np.ndarray
    hists: np.ndarray
    rows: np.ndarray
    plies: np.ndarray
    cfg: tuple

    def cur(self, k: int) -> tuple:
        return 0, int(self.rows[k]), int(self.plies[k])


#: The squash's scale is the board's seeds (a game's scale) over this, at least 1.
STORE_SCALE_DIVISOR = 8.0


def store_value(d, total):
    """The searches' squash of an estimate ``d`` of player 0's result into a reward in (0, 1):
    0.5 + d / (2 (|d| + s)), s = max(1, total / 8) with ``total`` the estimate's scale (Kalah:
    the store difference and the board's seeds). Plain Python for the kernels to compile (njit
    or CUDA); the same bits on every target (additions and divisions of exact values)."""
    s = max(1.0, total / STORE_SCALE_DIVISOR)
    return 0.5 + d / (2.0 * (abs(d) + s))


class SearchEval(NamedTuple):
    """A game's own MCTS leaf evaluation (:attr:`Game.search_eval`).

    ``build(jit) -> (value, scale)``: ``value(board, cfg, param)`` a static estimate of player
    0's result (float64), ``scale(board, cfg, param)`` its squash scale (float64); the kernels
    score ``0.5 + v / (2 (|v| + max(1, scale / 8)))`` rounded to reward units. ``evals``: the
    names ``eval=`` accepts; ``param``: the keyword of the parameter (Oware ``side_weight``);
    ``check_param(value or None) -> float``: the parameter checked, its default filled in
    (one-line ValueError); ``node_dtype``: the tree's node boards (None: the board dtype).

    ``rewards`` (optional): ``rewards(jit) -> reward(board, cfg, player, index) -> float``,
    ``player``'s reward in [0, 1] of a live board by the evaluation ``evals[index]``, for a game
    whose evaluations are rewards of their own rather than one squashed estimate (Kalah: the store
    difference squashed by the board's seeds, Siljander's HMCTS heuristic mapped linearly);
    ``build`` is then unused. Every MCTS scores with it (one tree, many trees, a shared tree).
    Such a game also takes the searches' ``reward="heuristic"`` (HMCTS: every playout, finished or
    not, scored by ``evals[0]``) and ``playout_depth`` (playouts cut after that many plies and
    scored by ``evals[0]``).

    ``prior`` (optional): ``prior(jit) -> prior(board, cfg, player) -> float``, the
    progressive-bias score of the board ``player`` just moved to (the single-tree MCTS takes a
    softmax of it over the children; Kalah's one-step heuristic); None: ``evaluate`` from
    ``player``'s view."""

    build: Callable
    evals: tuple
    param: str
    check_param: Callable
    node_dtype: Any = None
    rewards: Callable | None = None
    prior: Callable | None = None


@dataclass(frozen=True, eq=False)
class Game:
    """A game as a value.

    Attributes
    ----------
    name : str
        Registry key (``jitsearch.games.get(name)``) and ``--game`` value.
    State : type
        The state class: ``from_text``/``to_text``, ``play(move)``, ``legal_moves()``,
        ``player`` (-1 once over), ``is_over``, ``margin`` (player 0's), ``result``.
    variant : dict[str, Option]
        The variant options with types, defaults and help.
    initial : callable
        ``initial(**variant) -> State``: the start position.
    from_text : callable
        ``from_text(text, **variant) -> State``; options the text fixes (sizes) are read from
        the text and the given ones ignored. A bad text raises one-line ``ValueError``.
    cfg : callable
        ``cfg(state) -> tuple``: the variant tuple the compiled rules take.
    build : callable
        ``build(jit) -> Rules``; call it with the decorator of the target.
    pack : callable
        ``pack(states) -> Packed``; states of one variant, live; ``ValueError`` otherwise.
    sizes : callable
        ``sizes(cfg) -> Sizes`` for one variant.
    max_cells, max_moves : int
        Bounds over every variant the state class accepts (CUDA local arrays need constants).
    max_plies : int
        The longest game of any variant, -1 when no bound is known (Kalah).
    board_dtype : numpy dtype
    engines : dict
        Optional: game-specific agent kinds, name -> :class:`Engine` (a pure searcher the arena
        wraps in an agent: threads, Ctrl-C, seeds and specs are the arena's).
    solver : callable or None
        Optional: ``solver(state) -> int``, the exact value of a live state under perfect play,
        from player 0's view, in the game's units (Kalah and Oware the final margin; Connect
        Four Pons's score, turned to player 0's view).
    node_record : callable or None
        Optional, for games with a record (Oware's repetition): ``node_record(jit) -> record``
        compiled with ``jit``, ``record(parent, boards, to_move, t, node, root_hist, root_rows, cfg,
        hist) -> (count, depth)`` rebuilds the record of node ``node`` of tree ``t`` of a multi-tree
        search (:mod:`jitsearch.kernels.game_mcts`: ``parent[T, N]``, node boards ``boards[T, N,
        cells]``, ``to_move[T, N]``, the roots' records ``root_hist[T, R, C]`` of ``root_rows[T]``
        rows) into ``hist[:count]`` and returns its depth below the root (the node's ply is the
        root's plus ``depth``). ``None``: no record (the search walks the path for the depth).
    position_key : callable or None
        Optional: ``position_key(jit) -> key`` compiled with ``jit``, ``key(board, cfg, player)
        -> uint64``, a hash of the position. Equal keys must mean equal values under the rules
        (up to the hash's collisions): a game whose value depends on its record or its ply (Oware's
        repetition and move limit) gives none. With it :mod:`jitsearch.kernels.game_alphabeta`
        keeps a transposition table; ``None``: no table.
    move_order : callable or None
        Optional: ``move_order(jit) -> score`` compiled with ``jit``, ``score(board, cfg, player,
        move) -> float``: the alpha-beta search tries ``player``'s legal moves highest score
        first (ties in the rules' order). ``None``: the rules' order.
    openspiel : OpenSpielMap or None
        Optional: the game's counterpart in OpenSpiel (:class:`OpenSpielMap`: the pyspiel game's
        name and parameters, our move <-> its action, the moves that replay a state), read by
        :mod:`jitsearch.arena.openspiel_agents` and :mod:`jitsearch.interop.openspiel`.
    move_values : callable or None
        Optional, for analysis: ``move_values(state) -> dict | None``, the exact value of legal
        moves for the player to move under perfect play, ``{"values": {move: final margin, the
        mover's, in the game's units}, "rule": str}`` (``rule``: what the values assume, when it
        is not the game's own rule), or ``None`` where that would take more than about a second
        (an analysis then shows its search's estimates only). Moves it cannot settle are left out.
        A game may take keywords ``time_limit``, ``max_bytes``, ``stop`` and ``progress(done,
        total)`` and add ``margins`` (player 0's), ``interrupted`` and ``line(move)`` (perfect play
        from ``move``): what the analysis board's exact phase needs
        (:func:`jitsearch.arena.analysis.analyse_position`; Kalah's).
    ui : TextUI or None
        Optional: the text and web forms of positions and moves (:class:`TextUI`); ``None``: the
        state's ``to_text`` and the move numbers themselves.
    engine_protocol : EngineProtocol or None
        Optional: what the engine line protocol needs beyond the state's text (:class:`EngineProtocol`:
        the variant of a state, an older ``game`` line, the engine's table bytes); ``None``: the
        ``game NAME KEY=VALUE ...`` line alone.
    balance : callable or None
        Optional: ``balance(state, depth) -> number``, a depth-limited search value of a live
        state from its player to move's view (Kalah the store difference), what balanced opening
        suites keep near 0 (:mod:`jitsearch.arena.openings`).
    database : EndgameFiles or None
        Optional: the game's endgame databases on disk (:class:`EndgameFiles`: the size and time
        of a build, where it is cached); what ``solve --endgame-seeds`` and ``openings`` announce.
    fast_playouts : module or None
        Optional: the game's own playout kernels, bit-identical to the generic playout of
        :mod:`jitsearch.games.playout` and faster where a board fits a vector or registers
        (Kalah: :mod:`jitsearch.games.kalah.fast`). It gives ``kinds(cfg, simd) -> tuple`` (the
        kinds that run a variant, fastest first, ``"generic"`` last) and ``cpu_evaluate(cfg,
        kind, gen)`` (an ``evaluate_range`` of the kind), and optionally ``gpu_margin(device,
        cfg)`` (a variant's GPU playout to the end, ``margin(board, cfg, player, key) -> player
        0's final margin``, compiled with ``device``; ``device`` None asks whether the variant has
        one), which the tree-parallel GPU kernel runs, and ``tree_key(cfg, to_the_end) -> str or
        None`` with ``tree_playouts(key, gen) -> (words, margin_playout, cut_playout or None)``, the
        single-tree MCTS's (:func:`jitsearch.mcts.tree.make_kernels`); the kernels take the
        generic path where it is None.
    search_eval : SearchEval or None
        Optional: the game's own MCTS leaf evaluation (``eval=`` of the searches over the
        protocol); None: the searches play out to the end, or score ``evaluate``.
    config_agents : bool
        Optional: True where the game's ``random``, ``human``, ``mcts``, ``hmcts`` and ``mc``
        kinds are :class:`jitsearch.arena.agents.Agent`'s (the MCTSConfig searches of
        :mod:`jitsearch.mcts.search`, one seeded stream a move; Kalah), its :attr:`engines`
        beside them; False: the generic kinds of :mod:`jitsearch.arena.agents`.
    arena : ArenaHooks or None
        Optional: what the arena keeps for a game beyond the protocol (:class:`ArenaHooks`: its
        own match-record format, table title, shipped opening suites); None: the generic ones.
    exact : ExactSolve or None
        Optional: the game's exact solve with its report (:class:`ExactSolve`: time limit, Ctrl-C,
        endgame databases, progress lines), what ``jitsearch solve --game NAME`` runs; ``None``
        with a :attr:`solver`: ``solve`` reports the solver's value alone.
    bench : callable or None
        Optional: the game's own benchmark, ``bench(depths, python_max_depth, solve, time_limit,
        progress) -> dict``, what ``jitsearch bench NAME`` runs (Kalah's: alpha-beta nodes/s against
        plain Python and OpenSpiel, exact solve times of small boards).
    """

    name: str
    State: type
    variant: dict
    initial: Callable
    from_text: Callable
    cfg: Callable
    build: Callable
    pack: Callable
    sizes: Callable
    max_cells: int
    max_moves: int
    max_plies: int
    board_dtype: Any
    engines: dict = field(default_factory=dict)
    solver: Callable | None = None
    database: Callable | None = None
    openspiel: Any = None
    fast_playouts: Any = None
    node_record: Callable | None = None
    position_key: Callable | None = None
    move_order: Callable | None = None
    engine_protocol: Any = None
    ui: TextUI | None = None
    move_values: Callable | None = None
    balance: Callable | None = None
    search_eval: Any = None
    config_agents: bool = False
    arena: Any = None
    exact: Any = None
    bench: Callable | None = None

    def defaults(self) -> dict:
        """The variant options' defaults."""
        return {k: o.default for k, o in self.variant.items()}

    def check_variant(self, **variant) -> dict:
        """The full variant (defaults filled in); an unknown option raises a one-line ValueError."""
        unknown = sorted(set(variant) - set(self.variant))
        if unknown:
            raise ValueError(f"{self.name} has no option {unknown[0]!r}; its options: {', '.join(self.variant)}")
        return {**self.defaults(), **variant}

    def __repr__(self) -> str:
        return f"Game({self.name!r})"


class OpenSpielMap(NamedTuple):
    """A game's counterpart in OpenSpiel (:attr:`Game.openspiel`).

    ``name``: the pyspiel game (``pyspiel.load_game(name, params(variant))``); ``params(variant)
    -> dict`` its parameters for one of our variants, a one-line ``ValueError`` for a variant
    OpenSpiel has not; ``variant(params) -> dict`` ours for its parameters; ``action(state,
    move) -> int`` and ``move(state, action) -> int`` turn our move in ``state`` (live) into
    OpenSpiel's action and back; ``replay(state)``: our moves from the variant's start that reach
    ``state``, or None where the state does not know them (an OpenSpiel state is only reached by
    actions from its start)."""

    name: str
    params: Callable
    variant: Callable
    action: Callable
    move: Callable
    replay: Callable | None = None


class EngineProtocol(NamedTuple):
    """What the engine line protocol needs of a game beyond its state's text (:attr:`Game.engine_protocol`).

    ``variant_of(state) -> dict``: the full variant ``state`` is a position of (what ``game NAME
    KEY=VALUE ...`` names). ``legacy_game(words) -> dict``: the variant of the game's older
    ``game`` line (the words after ``game``; Kalah ``6 4 standard``), a one-line ``ValueError``
    when they are not of that form; ``legacy_words(variant) -> str or None``: that line's words for
    a variant (None: it has none). ``line(state) -> (start, moves)``: for games with a record, a
    position and our moves from it that reach ``state`` with its record (a text alone starts a
    fresh record). ``table_bytes(agent) -> (bytes, what) or None``: memory a game-specific
    engine agent allocates up front (its tables), checked before it serves."""

    variant_of: Callable
    legacy_game: Callable | None = None
    legacy_words: Callable | None = None
    line: Callable | None = None
    table_bytes: Callable | None = None


def rule_word_line(option: str, words: dict, **fixed) -> tuple:
    """``(legacy_game, legacy_words)`` of :class:`EngineProtocol` for an older line ``game <houses> <seeds>
    <word>`` whose word sets the variant option ``option`` (``words``: word -> value) and implies ``fixed``."""
    usage = f"game takes <houses> <seeds> {'|'.join(words)} (or NAME KEY=VALUE ...)"

    def legacy_game(line: list) -> dict:
        if len(line) != 3 or line[2] not in words:
            raise ValueError(usage)
        try:
            return {"houses": int(line[0], 10), "seeds": int(line[1], 10), option: words[line[2]], **fixed}
        except ValueError:
            raise ValueError("game takes <houses> <seeds> as integers") from None

    def legacy_words(variant: dict):
        if any(variant[k] != v for k, v in fixed.items()):
            return None
        return f"{variant['houses']} {variant['seeds']} {next(w for w, v in words.items() if v == variant[option])}"

    return legacy_game, legacy_words


def no_record(k: int = 1) -> np.ndarray:
    """The dummy ``hist`` of games without a record: int32[k, 1, 1] (``[0]`` for one state)."""
    return np.zeros((k, 1, 1), np.int32)


def check_states(states, state_class, name: str) -> list:
    """A non-empty list of live ``state_class`` states (a single state is wrapped); else ValueError."""
    if isinstance(states, state_class):
        states = [states]
    if not isinstance(states, (list, tuple)) or not states:
        raise ValueError(f"states must be a non-empty list of {state_class.__name__}")
    for s in states:
        if not isinstance(s, state_class):
            raise ValueError(f"{name} states must be {state_class.__name__}, got {type(s).__name__}")
        if s.is_over:
            raise ValueError("a state's game is over: nothing to pack")
    return list(states)


REQUIRED = ("initial", "from_text", "cfg", "build", "pack", "sizes")


def check_game(game) -> Game:
    """``game`` if it is a usable :class:`Game`, else one-line ``ValueError`` (the registry calls it)."""
    if not isinstance(game, Game):
        raise ValueError(f"a game must be a jitsearch.games.protocol.Game, got {type(game).__name__}")
    if not isinstance(game.name, str) or not game.name.isidentifier() or game.name != game.name.lower():
        raise ValueError(f"a game's name must be a lower-case identifier, got {game.name!r}")
    for attr in REQUIRED:
        if not callable(getattr(game, attr)):
            raise ValueError(f"game {game.name!r}: {attr} must be callable")
    for key, opt in game.variant.items():
        if not isinstance(opt, Option) or not isinstance(opt.default, opt.type):
            raise ValueError(f"game {game.name!r}: option {key!r} must be an Option whose default is a "
                             f"{getattr(opt, 'type', '?')}")
    for attr in ("max_cells", "max_moves"):
        if not isinstance(getattr(game, attr), int) or getattr(game, attr) < 1:
            raise ValueError(f"game {game.name!r}: {attr} must be a positive int")
    script = getattr(game.ui, "script", None)
    if script is not None and not Path(script).is_file():
        raise ValueError(f"game {game.name!r}: its drawing script {script} is not a file")
    return game


class ArenaHooks(NamedTuple):
    """What the arena keeps for a game beyond the protocol (:attr:`Game.arena`), each optional.

    ``title(variant) -> str``: the name of a variant in result tables (default: the game's name
    and its changed options). ``shipped_suite(variant) -> Path``: the balanced opening suite file
    shipped for a variant (``--openings balanced``), ``ValueError`` naming those shipped when there
    is none. ``check_opening(state, variant, where)``: refuse (``ValueError`` naming ``where``) a
    position of an openings file that ``from_text`` accepts but the variant does not have.
    ``suite_values``: a module with ``search_value(state, depth)``, ``exact_value(state, within,
    ...)``, ``exact_context(variant, ...)`` and ``value_notes(variant, result)`` (what a suite
    file's header says its values and moves are), what balanced suites are made with
    (:func:`jitsearch.arena.opening_suites.balanced_suite`). ``legacy_records``: True for the game
    whose match records of the arena's older format (no ``game`` field) are still read, by ``rate``
    and the web page (Kalah's: :mod:`jitsearch.arena.legacy_records`). ``max_plies``: the ply cap
    of a match that names none (0: no cap; Kalah 300, as Siljander's tournaments)."""

    title: Callable | None = None
    shipped_suite: Callable | None = None
    check_opening: Callable | None = None
    suite_values: Any = None
    legacy_records: bool = False
    max_plies: int = 0


class Engine(NamedTuple):
    """A game-specific agent kind (:attr:`Game.engines`): ``options`` the spec's option names and
    value types (``int``, ``float``, ``str``, ``bool``); ``make(options) -> search`` checks the
    options once (one-line ``ValueError``) and returns ``search(state, seed, stop) -> dict``, the
    move as ``"move"`` plus what the search reports. ``search`` runs in the calling thread, reads
    ``stop`` (a ``threading.Event`` or None) often enough to end within about a second once it is
    set, and is deterministic given ``seed``. A search may also have ``fresh()`` (itself with no state
    kept, for a new game), ``warms``/``warm(state)`` (compile its kernels), ``check_match(...)`` and
    ``prepare(state, notice)`` (refuse a board, load its data before the first game),
    ``game_engine(state)``, and ``analyses``/``value_moves(state, moves, stop, report)`` (an analysis
    board's values: Kalah's engine, :mod:`jitsearch.games.kalah.engines`)."""

    options: dict
    make: Callable


class EndgameFiles(NamedTuple):
    """A game's endgame databases on disk (:attr:`Game.database`).

    ``estimate(state, seeds, max_bytes) -> dict``: the build of the database of up to ``seeds``
    seeds for ``state``'s variant before it starts (``positions``, ``file_bytes``, ``ram_bytes``,
    ``seconds``, ``threads``), a one-line ``ValueError`` where it cannot be built (too many seeds,
    more memory than ``max_bytes`` where the game checks that first); ``cache_path(cache_dir, state,
    seeds) -> Path``: its values file; ``default_dir() -> Path``: the cache directory of the game;
    ``cached(path) -> None | "ready" | "verify"``: no database at ``path``, one that opens at
    once, one whose checksums are hashed first (a big file, once a process); ``holds``: what the
    seeds count, ``"in the houses"`` or ``"on the board"``."""

    estimate: Callable
    cache_path: Callable
    default_dir: Callable
    cached: Callable
    holds: str


class ExactSolve(NamedTuple):
    """The exact solve of a game as ``jitsearch solve --game NAME`` runs it (:attr:`Game.exact`).

    ``solve(state, *, report, time_limit, max_bytes, endgame_seeds, endgame_cache_dir,
    endgame_progress, **options) -> dict`` solves a live ``state`` in the calling thread:
    ``report(line)`` prints a progress line, ``endgame_progress(done, total, seconds, detail="")``
    a database build's; Ctrl-C (``KeyboardInterrupt``) and ``time_limit`` (seconds or None) end it
    with the result so far. The result is the JSON of the command: ``complete``, ``seconds``
    (wall time of the call), ``margin`` and ``best_move`` where solved, ``interrupted`` (True
    after Ctrl-C), ``stop_reason`` (``"time_limit"`` when the time ran out), ``lower``/``upper``
    where the game bounds an unfinished value, and the game's own keys.
    ``options``: the further option names ``solve`` takes (``table_size``, ``checkpoint``, ...).
    ``title(state, from_start) -> str`` and ``rows`` (result keys, in order): the table printed.
    ``stopped(result, options) -> str``: after Ctrl-C, one line of what was found and kept
    (``options``: those ``solve`` was given, with ``endgame_path`` and ``building``).
    ``moves(state, *, report, steps, time_limit, max_bytes, endgame_seeds, endgame_cache_dir,
    **options) -> dict``: optional, every legal move solved (a line per move when ``steps``;
    ``moves``: rows of ``move``, ``margin``, ``value``, ``nodes``, ``seconds``, ``from_checkpoint``,
    ``lower``, ``upper``; ``complete``, ``interrupted``, ``best_move``, ``value``, ``margin``)."""

    solve: Callable
    title: Callable
    rows: tuple
    stopped: Callable
    options: tuple = ()
    moves: Callable | None = None

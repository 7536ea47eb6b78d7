"""External engines in Oware matches: the agent of a ``cmd:PROGRAM ARGS...``
spec in :func:`jitsearch.arena.oware_arena.parse_oware_agent`.

The engine speaks the line protocol of :mod:`.engine_protocol` with Oware's
requests (``jitsearch engine --game oware`` is one such engine). The
process handling (one process per command and per thread, kept alive across
games, stderr logged, ended at exit or by :func:`close_engines`) is
:mod:`.external_engine`'s. Each game the agent sends ``game <m> <n>
standard|grand-slam-illegal`` and ``seed <S>`` (the seed the in-process
agent would get; an engine without ``seed`` answers ``error`` and plays on),
then before every move ``position <start> moves <house> ...``: the text of
the game's start and every house played since (UCI's ``position ...
moves``), so the engine replays the game's repetition record and move count,
and ``go <ms>``. The line is followed through :meth:`OwareExternalAgent.start`
(the opening's moves), :meth:`~OwareExternalAgent.begin` and
:meth:`~OwareExternalAgent.observe`, which :func:`.oware_arena.play_one`
and :func:`.oware_arena.play_oware_game` call; a position reached some other
way is sent as the line since its last capture, read back from its
repetition record (exact for the repetition rule; the engine's move count
then starts there).

An engine that cannot start or refuses the board is refused before a
match's first game (:meth:`OwareExternalAgent.check_match`: one
``ValueError`` line naming the engine and its stderr log). During a game,
an engine that answers late (a time forfeit), answers garbage or plays an
illegal house (an illegal move), or dies (a crash) loses that game, as in
Kalah matches: the move raises :class:`EngineForfeit`, a
:class:`~jitsearch.arena.external_engine.Forfeit` that the match records
(:func:`.oware_arena.play_one`) and a ``ValueError`` whose one line names
the engine and its log for the callers that play a single game (``jitsearch
play``). A late, garbled or dead engine's process is ended; the next game
starts it again.
"""

from __future__ import annotations

import contextlib
import contextvars
import time

import numpy as np

from .._checks import check_int
from ..games.oware import OwareState
from .external_engine import (ANSWER_TIMEOUT, PREFIX, EngineError, EngineSettings, Forfeit, close_engines,
                              engine_process, log_name, parse_command)

#: Longest ``position`` line sent: :data:`.engine_protocol.MAX_LINE`, the longest request our engine takes
#: (not imported: the engine module imports the Oware arena, which imports this one). A longer line is
#: sent from the last capture instead.
MAX_LINE = 10_000

_settings: contextvars.ContextVar = contextvars.ContextVar("oware_engine_settings", default=None)


@contextlib.contextmanager
def engine_settings(settings: EngineSettings | None):
    """Within the block, ``cmd:`` Oware agents made by the parser use ``settings`` (move time, margin, log
    directory; None: the defaults)."""
    token = _settings.set(None if settings is None else settings.check())
    try:
        yield
    finally:
        _settings.reset(token)


class EngineForfeit(Forfeit, ValueError):
    """An external engine lost the game (``termination``, ``detail``); its message is one line naming the
    engine and its stderr log."""

    def __init__(self, spec: str, log, termination: str, detail: str):
        super().__init__(termination, detail)
        self.args = (f"engine {spec!r}: {termination}: {detail} (its stderr: {log})",)

    def __str__(self) -> str:
        return self.args[0]


def line_from_history(state: OwareState) -> tuple[str, list[int]]:
    """``(text, moves)``: the first position of ``state``'s repetition record (just after the last capture,
    with the current scores) and the houses played since, which reach ``state`` with the same record."""
    m, hist = state.houses, np.asarray(state.history)
    scores = state.board[2 * m:]
    first = OwareState.from_board(hist[0, :2 * m], int(hist[0, 2 * m]), scores=scores,
                                  grand_slam_illegal=state.grand_slam_illegal)
    text, moves, cur = first.to_text(), [], first
    for row in hist[1:]:
        for h in cur.legal_moves():  # a sown house is emptied, so one move at most leads to the next row
            nxt = cur.play(h)
            if not nxt.is_over and nxt.player == row[2 * m] and np.array_equal(nxt.board[:2 * m], row[:2 * m]):
                moves.append(h)
                cur = nxt
                break
        else:
            raise ValueError("the repetition record is not a line of play")
    return text, moves


def _same(a: OwareState, b: OwareState) -> bool:
    return (a.to_text() == b.to_text() and a.ply == b.ply and a.history.shape == b.history.shape
            and np.array_equal(a.history, b.history))


class OwareExternalAgent:
    """A ``cmd:`` engine playing one Oware game (a new agent a game, as the parser makes them); a callable
    state -> house, with ``last`` (its last ``info`` line and seconds)."""

    kind = "cmd"

    def __init__(self, spec: str, seed: int):
        self.spec = spec.strip()
        if not self.spec.startswith(PREFIX):
            raise ValueError(f"an external engine's spec starts with {PREFIX}, got {spec!r}")
        self.argv = parse_command(self.spec)
        self.seed = check_int("seed", seed, 0)
        self.settings = _settings.get() or EngineSettings()
        self.last: dict = {}
        self.options: dict = {}
        self._start: str | None = None      # the text the game's line starts from
        self._moves: list[int] = []         # the houses played since
        self._state: OwareState | None = None  # where they lead
        self._engine = None                 # (process, its serial) of this game
        self._slot = 0                      # the process slot: the seat it plays (two for self-play)

    def __repr__(self) -> str:
        return self.spec

    # -- following the game ----------------------------------------------------------------------
    def start(self, moves, *, houses: int, seeds: int) -> None:
        """The game starts at Oware(houses, seeds)'s start after ``moves`` (a match's opening)."""
        s = OwareState.initial(houses, seeds)
        self._start, self._moves = s.to_text(), []
        self._state = s
        for h in moves:
            self.observe(h)

    def begin(self, state: OwareState) -> None:
        """The game is played from ``state`` (kept when it is where :meth:`start` led)."""
        if self._state is None or not _same(self._state, state):
            self._start, self._moves, self._state = None, [], state

    def observe(self, house: int) -> None:
        """A move of the game (either player's)."""
        if self._state is not None and not self._state.is_over:
            self._state = self._state.play(int(house))
            self._moves.append(int(house))

    def _line(self, state: OwareState) -> str:
        if self._state is not None and _same(self._state, state):
            if self._start is None:  # begun from a position: its record, read back
                self._start, self._moves = line_from_history(state)
            text, moves = self._start, self._moves
        else:
            text, moves = line_from_history(state)
        line = f"position {text}" + (" moves " + " ".join(map(str, moves)) if moves else "")
        if len(line) > MAX_LINE:
            text, moves = line_from_history(state)
            line = f"position {text}" + (" moves " + " ".join(map(str, moves)) if moves else "")
        return line

    # -- moving ----------------------------------------------------------------------------------
    def check_match(self, houses: int, seeds: int) -> None:
        """Start the engine (kept for the games) and ask it for a game of this board: a program that cannot
        start or refuses the board is one ``ValueError`` line, before any game."""
        try:
            eng = engine_process(self.argv, self.settings.logs, 0)
            eng.request(f"game {houses} {seeds} standard")
        except EngineError as exc:
            close_engines()
            raise ValueError(f"engine {self.spec!r}: {exc.detail} (its stderr: "
                             f"{self.settings.logs / log_name(self.argv, 0)})") from None

    def _forfeit(self, termination: str, detail: str, eng=None) -> EngineForfeit:
        if eng is not None:
            eng.kill()  # late, garbled or gone: its next answers cannot be trusted; the next game restarts it
        log = self.settings.logs / log_name(self.argv, self._slot)
        return EngineForfeit(self.spec, log, termination, detail)

    def __call__(self, state: OwareState) -> int:
        legal = state.legal_moves()
        if not legal:
            raise ValueError("the game is over: no move to choose")
        s = self.settings
        eng = None
        try:
            if self._engine is None:
                self._slot = state.player  # an engine playing itself runs as two processes
                eng = engine_process(self.argv, s.logs, self._slot, s.start_timeout)
                m = state.houses
                n = state.seeds_total // (2 * m)
                rules = "grand-slam-illegal" if state.grand_slam_illegal else "standard"
                eng.request(f"game {m} {n} {rules}", s.start_timeout, patient=True)
                eng.send(f"seed {self.seed}")
                answer = eng.read(time.monotonic() + self._answer_timeout, "seed")
                if answer != "ok" and not answer.startswith("error"):
                    raise EngineError("crash", f"answered {answer[:60]!r} to seed")
                self._engine = (eng, eng.serial)
            eng, serial = self._engine
            if not eng.alive or eng.serial != serial:
                raise EngineError("crash", "its process died during the game")
            eng.request(self._line(state), self._answer_timeout)
            text, infos, seconds = eng.go(s.movetime_ms, s.margin_ms)
        except EngineError as exc:
            raise self._forfeit(exc.termination, exc.detail, eng) from None
        self.last = {"info": infos[-1] if infos else "", "seconds": seconds}
        try:
            house = int(text, 10)
        except ValueError:
            raise self._forfeit("illegal move", f"answered {('move ' + text)[:60]!r}, not a house index",
                                eng) from None
        if house not in legal:
            raise self._forfeit("illegal move", f"played house {house}, not legal in {state.to_text()} "
                                                f"(legal: {' '.join(map(str, legal))})")
        return house

    @property
    def _answer_timeout(self) -> float:
        return max(ANSWER_TIMEOUT, self.settings.margin_ms / 1000.0)

    def __str__(self) -> str:
        return self.spec



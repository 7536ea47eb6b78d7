"""External engines in the arena, for every registered game: an agent spec ``cmd:PROGRAM ARGS...`` runs a process
that speaks the line protocol of :mod:`jitsearch.arena.engine_protocol` (:class:`ExternalAgent`).

As cutechess-cli and fastchess do: the arena owns the game and the clock. Each move it sends ``position <text>``
and ``go <ms>`` (``ms``: the :class:`EngineSettings` move time) and waits at most ``ms`` plus the margin for
``move <move>``. A late move (``"time forfeit"``), a move that is not legal or an answer that is not ``info
...``/``move <move>`` (``"illegal move"``), or an engine that exits or stops answering (``"crash"``) loses that
game for the engine (:class:`Forfeit`, recorded by the match with its ``termination``); the match goes on. An
engine that timed out or printed garbage is killed (its next answer could not be trusted) and, like one that died,
started again for its next game.

Processes: one per engine (per distinct command, and per thread) in each process that plays games (this one, or
each Dask worker), started at its first game, kept alive across games, ended by :func:`close_engines` (the arena
calls it when a match ends or is interrupted; Dask workers run it before they are closed), at exit, and, on Linux,
by the kernel when the thread that started them ends (``PR_SET_PDEATHSIG``): no orphans, even when a worker is
killed. Each engine is started in its own session (``start_new_session``), so its process group holds what it
starts too: an engine run through ``sh -c``, a shell script without ``exec``, ``uv run`` or ``conda run`` is a
wrapper whose child is the engine, and ending an engine kills the whole group (``os.killpg``) once it has had its
``quit``, so neither the child nor its hold on the output pipe outlives the wrapper. Limits: ``PR_SET_PDEATHSIG``
reaches the started process only (a wrapper's child of a SIGKILLed tester ends at the end of its input, when it
reads it); a child that starts a session of its own leaves the group; without process groups (Windows) only the
started process is killed.

Startup: the engine has :attr:`EngineSettings.start_timeout` seconds (default :func:`default_start_timeout`:
:data:`START_TIMEOUT`, more for long move times) to answer ``hello`` and each ``game`` (which may compile a JIT);
past :data:`PROGRESS_AFTER` seconds one line on stderr says what is awaited. A silent engine is a ``crash``, or
one error line before the match.

A game's requests: :class:`ExternalAgent`. The engine's stderr is appended to ``<log_dir>/<name>.stderr.log``, one
file per engine, each start marked by a ``#`` line, through a thread that keeps at most :data:`MAX_LOG_BYTES` in
the file: a start that finds the file at the cap first moves it to ``<name>.stderr.log.1`` (the one older copy
kept), and what comes past the cap is read and dropped, after one ``#`` line saying so.

Quoting: the program and arguments are split as a POSIX shell does (:func:`shlex.split`), so a path with spaces is
quoted inside the spec, and commas are plain characters.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import hashlib
import itertools
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import games
from .._checks import check_float, check_int

#: The ``termination`` of a record whose game an engine lost by misbehaving.
TERMINATIONS = ("time forfeit", "illegal move", "crash")
#: Move time (ms) when the match gives none, and the default margin (ms) past it before a time forfeit.
DEFAULT_MOVETIME_MS = 1000
DEFAULT_MARGIN_MS = 200
#: Seconds an engine has, by default, for ``hello`` after it starts and for ``ok`` to ``game`` (which may warm up
#: a JIT: ``jitsearch engine`` compiles its search at its first ``game``, 5-20 s on an empty Numba cache).
START_TIMEOUT = 30.0
#: Longest start timeout, in seconds (one day).
MAX_START_TIMEOUT = 86_400.0
#: Seconds of silence at startup before one line on stderr says what the arena is waiting for.
PROGRESS_AFTER = 5.0
#: Most bytes of an engine's stderr log (per file; one older copy is kept as ``.1``).
MAX_LOG_BYTES = 4 * 1024 * 1024
#: Seconds it has for ``ok`` to ``seed`` and ``position`` (at least: the move's margin if longer).
ANSWER_TIMEOUT = 10.0
#: Seconds an engine has to exit after ``quit`` before it is killed.
QUIT_TIMEOUT = 2.0
#: Seconds to wait, once an engine's process group is killed, for its reader threads to see the end of its output.
READER_JOIN_TIMEOUT = 1.0
#: Longest move time or margin, in ms (one day).
MAX_MS = 86_400_000
#: Longest request line an engine takes (:mod:`.engine_protocol`); a longer ``position`` is sent from where
#: the game's record starts.
MAX_LINE = 10_000
#: Longest answer line taken, in characters; more is garbage.
MAX_ANSWER = 100_000
PREFIX = "cmd:"
_EOF = object()
_serials = itertools.count()


class Forfeit(Exception):
    """An external engine lost the game: ``termination`` (one of
    :data:`TERMINATIONS`) and ``detail`` (what it did, one line)."""

    def __init__(self, termination: str, detail: str):
        super().__init__(f"{termination}: {detail}")
        self.termination, self.detail = termination, detail


class EngineError(Exception):
    """An engine that did not answer as the protocol says (``Forfeit`` during a game)."""

    def __init__(self, termination: str, detail: str):
        super().__init__(detail)
        self.termination, self.detail = termination, detail


def default_start_timeout(movetime_ms: int = DEFAULT_MOVETIME_MS, margin_ms: int = DEFAULT_MARGIN_MS) -> float:
    """Seconds an engine has for ``hello`` and for each ``game`` when none is given: :data:`START_TIMEOUT`, or
    ten moves' time (move time plus margin) when that is longer (an engine given long moves may be slow to
    load too)."""
    return max(START_TIMEOUT, 10 * (movetime_ms + margin_ms) / 1000.0)


@dataclass(frozen=True)
class EngineSettings:
    """How the arena runs ``cmd:`` engines: ``movetime_ms`` (told with ``go``),
    ``margin_ms`` (past it a move is a time forfeit), ``log_dir`` (their
    stderr files; None: :func:`default_log_dir`) and ``start_timeout_s``
    (seconds for ``hello`` and for each ``game``; None:
    :func:`default_start_timeout` of the move time and margin)."""

    movetime_ms: int = DEFAULT_MOVETIME_MS
    margin_ms: int = DEFAULT_MARGIN_MS
    log_dir: str | None = None
    start_timeout_s: float | None = None

    def check(self) -> "EngineSettings":
        check_int("movetime (ms)", self.movetime_ms, 1, MAX_MS)
        check_int("timemargin (ms)", self.margin_ms, 0, MAX_MS)
        if self.log_dir is not None and not isinstance(self.log_dir, str):
            raise ValueError(f"log_dir must be a path string or None, got {self.log_dir!r}")
        if self.start_timeout_s is not None:
            check_float("start timeout (s)", self.start_timeout_s, 0.0, MAX_START_TIMEOUT, lo_open=True)
        return self

    @property
    def logs(self) -> Path:
        return Path(self.log_dir) if self.log_dir is not None else default_log_dir()

    @property
    def start_timeout(self) -> float:
        """Seconds an engine has for ``hello`` and for each ``game``."""
        return (default_start_timeout(self.movetime_ms, self.margin_ms) if self.start_timeout_s is None
                else float(self.start_timeout_s))


def default_log_dir() -> Path:
    """Where engine stderr goes when no directory is given."""
    return Path(tempfile.gettempdir()) / "jitsearch-engine-logs"


def is_cmd_spec(spec) -> bool:
    return isinstance(spec, str) and spec.strip().startswith(PREFIX)


def parse_command(spec: str) -> tuple[str, ...]:
    """The argv of a ``cmd:`` spec (refused in one line: empty, or bad quoting)."""
    text = spec.strip()[len(PREFIX):].strip()
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise ValueError(f"bad quoting in engine spec {spec!r}: {exc}") from None
    if not argv:
        raise ValueError(f"engine spec {spec!r} names no program: cmd:PROGRAM ARGS...")
    return argv


def log_name(argv, slot: int = 0) -> str:
    """The file name of an engine's stderr log: its command, cut to something a file system takes, and a
    hash of it (slot 1: the second process of the same command in one game)."""
    text = " ".join(argv)
    slug = re.sub(r"[^A-Za-z0-9._=-]+", "_", " ".join(Path(argv[0]).name.split() + list(argv[1:])))[:60].strip("_")
    digest = hashlib.blake2b(text.encode(), digest_size=4).hexdigest()
    return f"{slug or 'engine'}-{digest}{'-2' if slot else ''}.stderr.log"


def _parent_death_signal():
    """A ``preexec_fn`` that has the kernel kill the engine when the thread that started it ends (Linux's
    ``PR_SET_PDEATHSIG``), or None where there is no such call. libc is loaded here, in the parent: the
    child between fork and exec must not import."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import signal

        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
        sigkill = int(signal.SIGKILL)
    except (OSError, AttributeError):
        return None

    def preexec():  # pragma: no cover - runs in the child
        prctl(1, sigkill)  # PR_SET_PDEATHSIG

    return preexec


def _exit_code(proc, timeout: float = 0.0):
    """The engine's exit status (negative: killed by that signal), or None while it runs after ``timeout``
    seconds. Where ``os.waitid`` is, the engine is not reaped (``WNOWAIT``): an exited leader stays a zombie,
    which keeps its process group's id from being reused until :meth:`EngineProcess.close` has killed the
    group and reaps it (a reaped leader's id could be a new process group's, an unrelated one)."""
    if proc.returncode is not None or not hasattr(os, "waitid"):
        try:
            return proc.wait(timeout=timeout) if timeout > 0 else proc.poll()
        except subprocess.TimeoutExpired:
            return None
    deadline = time.monotonic() + timeout
    while True:
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped already (by Popen)
            return proc.poll()
        if info is not None and info.si_pid:
            return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))


def _kill_group(proc) -> None:
    """SIGKILL the engine's process group (``start_new_session`` made the engine its leader: the group holds
    what a wrapper started); where there are no process groups, the process alone. Called before the leader
    is reaped (:func:`_exit_code`), so the group's id is still the engine's."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except ProcessLookupError:  # no member left
            return
        except OSError:  # not its group (it could not be made one): the process alone
            pass
    try:
        proc.kill()
    except OSError:
        pass


class EngineProcess:
    """One running engine: its process (the leader of its own process group),
    a reader thread that queues its stdout lines, and a thread that copies
    its stderr into its log, up to :data:`MAX_LOG_BYTES`."""

    def __init__(self, argv, log_path: Path):
        self.argv, self.log_path = tuple(argv), Path(log_path)
        self.proc = None
        self.lines: queue.SimpleQueue = queue.SimpleQueue()
        self.name = None
        self.serial = next(_serials)  # tells a restarted engine from the one a game began with
        self.broken = False
        self.reader: threading.Thread | None = None
        self.logger: threading.Thread | None = None

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the engine and wait up to ``timeout`` seconds for its ``hello``."""
        log, size = self._open_log()
        try:
            mark = f"# {time.strftime('%Y-%m-%d %H:%M:%S')} started by pid {os.getpid()}: {shlex.join(self.argv)}\n"
            log.write(mark.encode())
            log.flush()
            budget = max(0, MAX_LOG_BYTES - size - len(mark.encode()))
            try:
                # its own session: its process group is what close() kills, and a terminal's Ctrl-C is the
                # tester's to handle, not the engine's
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, bufsize=0, close_fds=True,
                                             start_new_session=os.name == "posix", preexec_fn=_PREEXEC)
            except OSError as exc:
                raise EngineError("crash", f"cannot start {shlex.join(self.argv)}: {exc.strerror or exc}") from None
        except BaseException:
            log.close()
            raise
        self.logger = threading.Thread(target=self._copy_log, args=(self.proc.stderr, log, budget), daemon=True,
                                       name="jitsearch-engine-log")
        self.logger.start()
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True,
                                       name="jitsearch-engine-reader")
        self.reader.start()
        self.send("hello")
        line = self.read_patiently(timeout, "hello")
        if not line.startswith("hello"):
            raise EngineError("crash", f"answered {_show(line)} to hello")
        self.name = line[5:].strip() or shlex.join(self.argv)

    def _open_log(self):
        """The log opened for appending, and its size (a file at the cap is first moved to ``.1``)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            size = self.log_path.stat().st_size
        except OSError:
            size = 0
        if size >= MAX_LOG_BYTES:
            try:
                os.replace(self.log_path, self.log_path.with_name(self.log_path.name + ".1"))
                size = 0
            except OSError:
                pass
        return open(self.log_path, "ab"), size

    @staticmethod
    def _copy_log(stream, log, budget: int) -> None:
        """The log thread: copy ``stream`` (the engine's stderr) into ``log`` until ``budget`` bytes are
        written, then one ``#`` line, then read and drop the rest (an engine blocked on a full pipe would
        stop answering). It alone reads and closes ``stream`` (see :meth:`_read`)."""
        try:
            while True:
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    break
                if budget > 0:
                    log.write(chunk[:budget])
                    if len(chunk) > budget:
                        log.write(f"\n# stderr truncated here: this log keeps at most {MAX_LOG_BYTES:,} bytes "
                                  f"(MAX_LOG_BYTES); the rest of this start's stderr is dropped\n".encode())
                    budget -= len(chunk)
                    log.flush()
        except (OSError, ValueError):
            pass
        finally:
            for f in (stream, log):
                try:
                    f.close()
                except (OSError, ValueError):
                    pass

    @staticmethod
    def _read(stream, lines) -> None:
        """The reader thread: queue each line, then ``_EOF``. It alone reads and closes ``stream``: were
        another thread to close it, the descriptor's number could be reused by the next engine's pipe
        before this thread's next ``read``, which would then take that engine's first byte."""
        try:
            while True:
                raw = stream.readline(MAX_ANSWER)  # a longer line comes in pieces: garbage, not a memory hog
                if not raw:
                    break
                lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except (OSError, ValueError):
                pass
        lines.put(_EOF)

    @property
    def alive(self) -> bool:
        return self.proc is not None and _exit_code(self.proc) is None and not self.broken

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise EngineError("crash", f"exited{self._status()} (its stdin is closed)") from None

    def read(self, deadline: float, what: str) -> str:
        """The engine's next line, by ``deadline`` (``time.monotonic``)."""
        wait = deadline - time.monotonic()
        try:
            line = self.lines.get(timeout=max(0.0, wait))
        except queue.Empty:
            raise EngineError("time forfeit", f"no answer to {what} in time") from None
        if line is _EOF:
            raise EngineError("crash", f"exited{self._status()} while asked {what}")
        return line

    def read_patiently(self, timeout: float, what: str) -> str:
        """:meth:`read` with ``timeout`` seconds (a startup request): past :data:`PROGRESS_AFTER` seconds one
        line on stderr says what is awaited; silence to the end is a time-out naming the seconds."""
        t0 = time.monotonic()
        deadline = t0 + timeout
        try:
            if timeout > PROGRESS_AFTER:
                try:
                    return self.read(t0 + PROGRESS_AFTER, what)
                except EngineError as exc:
                    if exc.termination != "time forfeit":
                        raise
                _progress(f"waiting for engine {shlex.join(self.argv)} to answer {what} (up to {timeout:g} s; "
                          f"its stderr: {self.log_path})...")
            return self.read(deadline, what)
        except EngineError as exc:
            if exc.termination == "time forfeit":
                raise EngineError("time forfeit", f"no answer to {what} within {timeout:g} s (the start "
                                                  f"timeout)") from None
            raise

    def _status(self) -> str:
        code = _exit_code(self.proc, 0.5)
        if code is None:
            return ""
        return f" with status {code}" if code >= 0 else f" killed by signal {-code}"

    def request(self, line: str, timeout: float = ANSWER_TIMEOUT, *, patient: bool = False) -> None:
        """Send a request that is answered ``ok`` within ``timeout`` seconds (``patient``: a startup request,
        :meth:`read_patiently`); anything else is an :class:`EngineError` (a crash)."""
        self.send(line)
        verb = line.split()[0]
        try:
            answer = (self.read_patiently(timeout, verb) if patient
                      else self.read(time.monotonic() + timeout, verb))
        except EngineError as exc:
            raise EngineError("crash", exc.detail) from None
        if answer != "ok":
            raise EngineError("crash", f"answered {_show(answer)} to {_show(line)}")

    def go(self, ms: int, margin_ms: int) -> tuple[str, list[str], float]:
        """Send ``go ms``: (the ``move`` answer's argument, the info lines, seconds taken)."""
        t0 = time.monotonic()
        self.send(f"go {ms}")
        deadline = t0 + (ms + margin_ms) / 1000.0
        infos = []
        while True:
            try:
                line = self.read(deadline, "go")
            except EngineError as exc:
                if exc.termination == "time forfeit":
                    raise EngineError("time forfeit", f"no move within {ms} ms + {margin_ms} ms margin") from None
                raise
            if line.startswith("info"):
                infos.append(line[4:].strip())
                continue
            if line.startswith("move "):
                return line[5:].strip(), infos, time.monotonic() - t0
            raise EngineError("illegal move", f"answered {_show(line)} to go")

    def close(self) -> None:
        """``quit`` (unless broken), up to ``QUIT_TIMEOUT`` seconds to exit, then a kill of its whole process
        group: whatever it started and left running goes with it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if _exit_code(proc) is None and not self.broken:
                try:
                    proc.stdin.write(b"quit\n")
                    proc.stdin.flush()
                except (OSError, ValueError):
                    pass
                _exit_code(proc, QUIT_TIMEOUT)
        finally:
            _kill_group(proc)
            try:
                proc.wait(timeout=5)  # reaped only now, its group killed
            except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
                pass
            try:
                proc.stdin.close()
            except (OSError, ValueError):
                pass
            # stdout and stderr are their threads' to close, at the end of file that follows the group's end
            # (a member that left the group, and holds a pipe, delays it: then they close it when that one ends)
            for thread in (self.reader, self.logger):
                if thread is not None:
                    thread.join(READER_JOIN_TIMEOUT)

    def kill(self) -> None:
        self.broken = True
        self.close()


def _progress(text: str) -> None:
    """One line on stderr (a tester's progress note)."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _show(line: str) -> str:
    return repr(line if len(line) <= 60 else line[:57] + "...")


# -- the processes of this process (one per engine, per thread) ------------------------------------

_PREEXEC = _parent_death_signal()
_engines: dict[tuple, EngineProcess] = {}
_lock = threading.Lock()


def engine_process(argv, logs: Path, slot: int = 0, start_timeout: float = START_TIMEOUT) -> EngineProcess:
    """The running engine of ``argv`` for this thread (``slot`` 1: a second one for a game against itself),
    started (again) if it is not running (``start_timeout``: seconds for its ``hello``)."""
    key = (tuple(argv), slot, threading.get_ident())
    with _lock:
        eng = _engines.get(key)
    if eng is not None and eng.alive:
        return eng
    if eng is not None:
        eng.close()
    eng = EngineProcess(argv, logs / log_name(argv, slot))
    with _lock:
        _engines[key] = eng
    try:
        eng.start(start_timeout)
    except BaseException:
        eng.kill()
        raise
    return eng


def close_engines() -> int:
    """End every engine process this process started; returns how many were running."""
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
    running = 0
    for eng in engines:
        if eng.proc is not None and _exit_code(eng.proc) is None:
            running += 1
        try:
            eng.close()
        except Exception:
            pass
    return running


atexit.register(close_engines)


def running_pids() -> list[int]:
    """Process ids of this process's running engines (for tests)."""
    with _lock:
        return [e.proc.pid for e in _engines.values() if e.proc is not None and _exit_code(e.proc) is None]


# -- the agent ------------------------------------------------------------------------------------

_settings: contextvars.ContextVar = contextvars.ContextVar("engine_settings", default=None)


@contextlib.contextmanager
def engine_settings(settings: EngineSettings | None):
    """Within the block, ``cmd:`` agents made then use ``settings`` (None: the defaults)."""
    token = _settings.set(None if settings is None else settings.check())
    try:
        yield
    finally:
        _settings.reset(token)


class EngineForfeit(Forfeit, ValueError):
    """An external engine lost the game (``termination``, ``detail``); its message is one line, ``termination:
    detail``, naming the engine and its stderr log (a ``ValueError`` too, for the callers that play a single game)."""

    def __init__(self, spec: str, log, termination: str, detail: str):
        super().__init__(termination, detail)
        self.args = (f"{termination}: {detail} (engine {spec!r}, its stderr: {log})",)

    def __str__(self) -> str:
        return self.args[0]


def game_of(state):
    """The registered game whose state class ``state`` is (one-line ``ValueError`` if none)."""
    for game in games.GAMES.values():
        if isinstance(state, game.State):
            return game
    raise ValueError(f"no registered game plays {type(state).__name__} positions")


class ExternalAgent:
    """The agent of a ``cmd:`` spec, for every registered game: a template (parsed once) whose :meth:`with_seed` copies
    play one game each on the engine process of their thread (see the module docstring). Moves raise
    :class:`EngineForfeit` (a :class:`Forfeit`) where the engine loses the game.

    Each game it sends ``game <name> <key>=<value> ...`` (the variant of the state it is first asked to move in; an
    engine that answers ``error`` is sent the game's older line where it has one, and keeps being sent that),
    ``seed <S>`` (the seed the in-process agent would get; an engine that does not know it answers ``error`` and
    plays on), then before every move ``position <text>`` and ``go <ms>``. For a game with a record (Oware's
    repetition), the position is the game's start and every move since (``position <start> moves <m> ...``),
    followed through :meth:`start`, :meth:`begin` and :meth:`observe`; a position reached another way is sent as
    the line since its record starts (:attr:`~jitsearch.games.protocol.EngineProtocol.line`)."""

    kind = "cmd"
    lockstep = False
    engine = False

    def __init__(self, spec: str, *, seed: int | None = None, game=None):
        if not is_cmd_spec(spec):
            raise ValueError(f"an external engine's spec starts with {PREFIX}, got {spec!r}")
        self.spec = spec.strip()
        self.argv = parse_command(self.spec)
        self.seed = None if seed is None else check_int("seed", seed)
        self.game = None if game is None else games.get(game)
        self.settings = _settings.get() or EngineSettings()
        self.slot = None  # the process slot (bind_engines; else the seat of its first move)
        self.options: dict = {}
        self.last: dict = {}
        self._board = None  # serial of the engine process of the game this copy began
        self._start: str | None = None  # the text the game's line starts from (games with a record)
        self._moves: list[int] = []     # our moves played since
        self._state = None              # where they lead

    def with_seed(self, seed: int | None) -> "ExternalAgent":
        twin = ExternalAgent.__new__(ExternalAgent)
        twin.__dict__.update(self.__dict__)
        twin.seed = None if seed is None else check_int("seed", seed)
        twin.last, twin._board, twin._start, twin._moves, twin._state = {}, None, None, [], None
        return twin

    # -- following the game (games with a record) ----------------------------------------------

    def start(self, moves=(), **variant) -> None:
        """The game starts at the start of ``variant`` (of the agent's game) after ``moves`` (an opening)."""
        game = self.game or games.get(games.DEFAULT_GAME)
        try:
            s = game.initial(**variant)
            self._start, self._moves, self._state = s.to_text(), [], s
            for move in moves:
                self.observe(move)
        except ValueError:  # not this board: the position will be sent as the state's own line
            self._start, self._moves, self._state = None, [], None

    def begin(self, state) -> None:
        """The game is played from ``state`` (kept when it is where :meth:`start` led)."""
        if self._state is None or self._state != state:
            self._start, self._moves, self._state = None, [], state

    def observe(self, move: int) -> None:
        """A move of the game (either player's)."""
        if self._state is None or self._state.is_over:
            return
        try:
            self._state = self._state.play(int(move))
            self._moves.append(int(move))
        except ValueError:
            self._start, self._moves, self._state = None, [], None

    def _position(self, game, state) -> str:
        hook = game.engine_protocol
        if hook is None or hook.line is None:
            return f"position {state.to_text()}"
        if self._state is not None and self._state == state and self._start is not None:
            text, moves = self._start, self._moves
        else:
            first, moves = hook.line(state)
            text = first.to_text()
        line = f"position {text}" + (" moves " + " ".join(map(str, moves)) if moves else "")
        if len(line) > MAX_LINE and self._state is not None:  # from where the record starts
            self._start, self._moves, self._state = None, [], None
            return self._position(game, state)
        return line

    # -- the engine ----------------------------------------------------------------------------

    def _log(self, slot=None) -> Path:
        return self.settings.logs / log_name(self.argv, (self.slot or 0) if slot is None else slot)

    def check_match(self, *board, settings: EngineSettings | None = None, suite=(), position=None,
                    **variant) -> None:
        """Start the engine (kept for the games) and ask it for a game of this board (the variant's options,
        positionally in the game's order, e.g. Kalah's ``houses, seeds, empty_capture``, or by name): a
        program that cannot start or refuses the board is one ``ValueError`` line, before any game."""
        game = self.game or games.get(games.DEFAULT_GAME)
        variant = game.check_variant(**{**dict(zip(game.variant, board)), **variant})
        settings = (settings or self.settings).check()
        try:
            eng = engine_process(self.argv, settings.logs, 0, settings.start_timeout)
            try:
                _request_game(eng, game, variant, settings.start_timeout)
            except EngineError:
                eng.kill()  # silent or garbled: no quit to wait for
                raise
        except EngineError as exc:
            close_engines()
            raise ValueError(f"engine {self.spec!r}: {exc.detail} (its stderr: "
                             f"{settings.logs / log_name(self.argv)})") from None

    def _new_game(self, eng: EngineProcess, game, state) -> None:
        hook = game.engine_protocol
        if hook is None:
            raise EngineError("crash", f"{game.name} does not say the variant of a position: no game line")
        _request_game(eng, game, hook.variant_of(state), self.settings.start_timeout)
        if self.seed is not None:  # an extension: an engine without it answers error and plays on
            eng.send(f"seed {self.seed}")
            answer = eng.read(time.monotonic() + self._answer_timeout, "seed")
            if answer != "ok" and not answer.startswith("error"):
                raise EngineError("crash", f"answered {_show(answer)} to seed")
        self._board = eng.serial

    def _forfeit(self, termination: str, detail: str, eng=None) -> EngineForfeit:
        if eng is not None:
            eng.kill()  # late, garbled or gone: its next answers cannot be trusted; the next game restarts it
        return EngineForfeit(self.spec, self._log(), termination, detail)

    def __call__(self, state) -> int:  # noqa: D105
        return self.choose(state)

    def choose(self, state, stop=None) -> int:
        """The engine's move in ``state`` (``stop`` is not read: the move time bounds the wait)."""
        game = self.game or game_of(state)
        legal = state.legal_moves()
        if not legal:
            raise ValueError("the game is over: no move to choose")
        if self.slot is None:
            self.slot = state.player  # an engine playing itself runs as two processes
        s = self.settings
        try:
            eng = engine_process(self.argv, s.logs, self.slot, s.start_timeout)
        except EngineError as exc:
            raise self._forfeit("crash", exc.detail) from None
        if self._board is not None and self._board != eng.serial:  # a new process in the middle of a game
            raise self._forfeit("crash", "its process died during the game and was restarted")
        try:
            if self._board is None:
                self._new_game(eng, game, state)
            eng.request(self._position(game, state), self._answer_timeout)
            text, infos, seconds = eng.go(s.movetime_ms, s.margin_ms)
        except EngineError as exc:
            raise self._forfeit(exc.termination, exc.detail, eng) from None
        self.last = {"info": infos[-1] if infos else "", "seconds": seconds}
        self.last.update(_exact_words(self.last["info"]))
        try:
            move = int(text, 10)
        except ValueError:
            raise self._forfeit("illegal move", f"answered {_show('move ' + text)}, not a move number",
                                eng) from None
        if move not in legal:
            raise self._forfeit("illegal move", f"played {move}, not legal in {state.to_text()} "
                                                f"(legal: {' '.join(map(str, legal))})")
        return move

    @property
    def _answer_timeout(self) -> float:
        return max(ANSWER_TIMEOUT, self.settings.margin_ms / 1000.0)

    def __str__(self) -> str:
        return self.spec

    __repr__ = __str__


def game_words(game, variant: dict) -> str:
    """The words after ``game`` that name ``game`` (a :class:`~jitsearch.games.protocol.Game`) and its full
    ``variant``: ``kalah houses=6 seeds=4 empty_capture=0``."""
    values = {k: int(v) if isinstance(v, bool) else v for k, v in variant.items()}
    return " ".join([game.name, *(f"{k}={values[k]}" for k in game.variant)])


def _request_game(eng: EngineProcess, game, variant: dict, timeout: float) -> None:
    """``game <name> <key>=<value> ...``; where the engine answers ``error`` and the game has an older line,
    that line, and the engine process is remembered to speak it."""
    hook = game.engine_protocol
    legacy = hook.legacy_words(variant) if hook is not None and hook.legacy_words is not None else None
    if legacy is not None and getattr(eng, "legacy", False):
        eng.request(f"game {legacy}", timeout, patient=True)
        return
    line = f"game {game_words(game, variant)}"
    eng.send(line)
    answer = eng.read_patiently(timeout, "game")
    if answer == "ok":
        return
    if legacy is None or not answer.startswith("error"):
        raise EngineError("crash", f"answered {_show(answer)} to {_show(line)}")
    eng.request(f"game {legacy}", timeout, patient=True)
    eng.legacy = True


def bind_engines(agents, settings: EngineSettings | None) -> None:
    """Give a game's external agents the arena's settings, and process slots 0 and 1 to an engine that plays
    itself."""
    ext = [a for a in agents if isinstance(a, ExternalAgent)]
    for a in ext:
        if settings is not None:
            a.settings = settings
    if len(ext) == 2 and ext[0].argv == ext[1].argv:
        ext[0].slot, ext[1].slot = 0, 1
    elif ext:
        for a in ext:
            a.slot = 0


def _exact_words(info: str) -> dict:
    """``exact`` (and ``margin`` when exact) of an ``info`` line that has them (the protocol's documented
    fields): ``{"exact": True, "margin": 4}``; ``{}`` when absent or garbled."""
    words = info.split()
    pairs = dict(zip(words[0::2], words[1::2]))
    if pairs.get("exact") not in ("0", "1"):
        return {}
    out = {"exact": pairs["exact"] == "1"}
    if out["exact"]:
        try:
            out["margin"] = int(pairs.get("margin", ""), 10)
        except ValueError:
            return {}
    return out

"""The ``jitsearch`` command line (typer + rich).

Commands are thin adapters over library functions. Data goes to stdout,
progress and errors to stderr. A user error (bad file, bad option value,
unknown algorithm, tree too large) prints one ``error: ...`` line and exits
with status 2; no traceback is shown for it.

This module holds the typer ``app``, the ``--version`` callback and
:func:`main` (the console entry point), and registers the commands, one
module per command group: :mod:`.solve`, :mod:`.tournament`, :mod:`.play`,
:mod:`.analyse`, :mod:`.rate`, :mod:`.openings`, :mod:`.engine`, :mod:`.serve` (the web page,
:mod:`.webapp`) and :mod:`.bench` (the ``bench`` sub-app). Helpers the
commands share are in :mod:`.common` (consoles, JSON output, the Ctrl-C exit)
and :mod:`._support` (JIT accounting, option checks, output files).
"""

from __future__ import annotations

import re
import sys
from typing import Annotated, List, Optional

import typer

from .._jit import install_compile_notice
from .._version import __version__
from . import analyse, engine, openings, play, rate, serve, solve, tournament
from ._support import Interrupted, UserError
from .bench import bench_app
from .common import interrupt_reported, reset_interrupt_report

app = typer.Typer(
    name="jitsearch",
    help="Game-tree search at compiled speed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(bench_app, name="bench")

# Typer either re-exports click's exceptions or vendors its own copy of click:
# take the classes from the exception hierarchy so both work.
_CLICK_EXCEPTION = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
_EXIT = typer.Exit
_ABORT = typer.Abort


def _version(value: bool):
    if value:
        print(f"jitsearch {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
):
    """jitsearch: exact game-tree solvers, games and MCTS compiled with Numba."""
    install_compile_notice()  # "compiling (first run only)..." whenever a command compiles a kernel


# the commands, in the order ``jitsearch --help`` lists them
app.command()(solve.solve)
app.command()(tournament.tournament)
app.command()(play.play)
app.command()(analyse.analyse)
app.command()(rate.rate)
app.command()(openings.openings)
app.command()(engine.engine)
app.command()(serve.serve)


def main(argv: Optional[List[str]] = None) -> int:
    """Console-script entry point; returns the exit status.

    0: done. 2: a usage error (unknown option, bad option type) or a domain
    error (``ValueError`` from the library, a file that cannot be read or
    written, too much memory asked for): one ``error:`` line, no traceback.
    130: interrupted (Ctrl-C); commands print what they had found first.
    A reader that closes stdout early (``| head``) is not an error: the
    command stops quietly with the status it had (0 for a finished one).
    Warnings (a cache rebuilt, a checkpoint not saved) are one ``warning:``
    line each on stderr.
    """
    import warnings

    warnings.showwarning = _show_warning
    try:
        code = _run(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        code = 0
    except SystemExit as exc:  # click exits 1 on EPIPE: a closed stdout is no failure of the command
        if not (isinstance(exc.__context__, BrokenPipeError) or _stdout_closed()):
            raise
        code = 0 if exc.code in (0, 1, None) else exc.code
    except KeyboardInterrupt:  # between the command's end and the flush
        code = 130
    if _stdout_closed() or type(sys.stdout).__name__ == "PacifyFlushWrapper":
        _silence_stdout()
    return code


def _show_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write("warning: " + " ".join(str(message).split()) + "\n")


def _stdout_closed() -> bool:
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        return True
    return False


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush does not fail (and exit 1)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _run(argv: Optional[List[str]]) -> int:
    reset_interrupt_report()
    command = typer.main.get_command(app)
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        rv = command.main(args=args, prog_name="jitsearch", standalone_mode=False)
    except _EXIT as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except _ABORT:
        _error("aborted")
        return 130
    except _CLICK_EXCEPTION as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.stdout.write(exc.format_message().rstrip() + "\n")
            return 0
        _error(exc.format_message())
        return 2
    except (UserError, ValueError) as exc:
        _error(str(exc))
        return 2
    except Interrupted:
        _error("interrupted")
        return 130
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        _error("out of memory: ask for a smaller problem (fewer seeds, a smaller depth, table or tree)")
        return 2
    except OverflowError as exc:
        _error(f"a number is too large: {exc}")
        return 2
    except OSError as exc:
        if exc.filename is None:
            raise
        _error(f"{exc.filename}: {exc.strerror or exc}")
        return 2
    # typer turns a KeyboardInterrupt (and typer.Exit(code)) into a returned code
    if isinstance(rv, int) and not isinstance(rv, bool) and rv:
        if rv == 130 and not interrupt_reported():
            _error("interrupted")
        return rv
    return 0


#: A library message's advice to API callers ("(API: or raise max_bytes)"): no option of a command.
_API_ADVICE = re.compile(r" \(API: [^)]*\)")


def _error(message: str) -> None:
    line = _API_ADVICE.sub("", " ".join(str(message).split()))
    sys.stderr.write(f"error: {line}\n")

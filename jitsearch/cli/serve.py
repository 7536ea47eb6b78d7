"""``jitsearch serve``: a local web page to play and analyse Kalah and Oware (the ``web`` extra).

Ctrl-C stops the server within :data:`SHUTDOWN_SECONDS` or so, with exit status 130 and no traceback,
even while a client holds a request open: uvicorn waits that long for open requests, then cancels them
(:func:`quiet_when_cancelled` answers each 503 instead of a logged traceback), and the running search is
told to stop.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .game_options import DEFAULT_GAME, resolve_game
from ._support import UserError, check_seconds

#: What to install when the web stack is missing.
INSTALL_HINT = "jitsearch serve needs the web extra: pip install 'jitsearch[web]' (starlette and uvicorn)"


#: Seconds Ctrl-C waits for open requests before cancelling them.
SHUTDOWN_SECONDS = 1.0


def quiet_when_cancelled(app):
    """``app`` whose requests, cancelled when the server stops, end with a 503 line instead of a traceback."""
    async def wrapped(scope, receive, send):
        try:
            await app(scope, receive, send)
        except asyncio.CancelledError:
            if scope.get("type") != "http":
                raise
            try:  # the client may still read it; nothing is lost if it cannot
                body = b'{"error": "the server is stopping"}'
                await send({"type": "http.response.start", "status": 503,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
            except Exception:  # noqa: BLE001 - a response already started, or the connection is gone
                pass
    return wrapped


class _NoCancelNotice(logging.Filter):
    """Drops uvicorn's notice that it cancelled open requests at shutdown (Ctrl-C was the user's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Cancel %s running task")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: an open port the system picks); one line if it cannot
    be had."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(f"--host {host}: {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    return sock


def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to listen on; another than loopback must be "
                                                     "given explicitly and is warned about.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port; 0 picks an open one.")] = 0,
    records: Annotated[
        Optional[Path], typer.Option("--records", help="Directory whose arena record files (*.jsonl) the page "
                                                       "may open (no other file is readable).")
    ] = None,
    max_seconds: Annotated[float, typer.Option("--max-seconds", help="Cap on one search (agent move or "
                                                                    "analysis), in seconds.")] = 60.0,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the page in the browser.")] = False,
    game: Annotated[str, typer.Option("--game", help="The game the page shows first: any registered game "
                                                     "(kalah, oware, connect4, ...; the page's selector switches).")]
    = DEFAULT_GAME,
):
    """A local web page to play and analyse every registered game (Kalah, Oware, Connect Four, ...): a clickable
    board against any agent spec, every move's value (an MCTS tree, and exact values where the game gives them
    in about a second), arena record replay.

    Prints the page's address and serves until Ctrl-C. One search runs at a time; each is capped at
    --max-seconds and can be cancelled from the page.
    """
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise UserError(INSTALL_HINT) from None
    resolve_game(game)
    if not 0 <= port <= 65535:
        raise UserError(f"--port must lie in 0..65535, got {port}")
    check_seconds(max_seconds, "--max-seconds")
    if records is not None:
        if not records.is_dir():
            raise UserError(f"--records {records}: not a directory")
        records = records.resolve()
    loopback = _is_loopback(host)
    sock = bind_socket(host, port)
    bound = sock.getsockname()[1]
    from .webapp import LOOPBACK_HOSTS, create_app

    app = create_app(records_dir=records, max_seconds=max_seconds, allowed_hosts=LOOPBACK_HOSTS if loopback
                     else None, game=game)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    if not loopback:
        sys.stderr.write(f"warning: listening on {host}: anyone who can reach this machine can use the page and "
                         "run searches on it (there is no authentication)\n")
    sys.stdout.write(f"jitsearch serve: {url}  (Ctrl-C stops it)\n")
    sys.stdout.flush()
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    config = uvicorn.Config(quiet_when_cancelled(app), log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=SHUTDOWN_SECONDS)
    server = uvicorn.Server(config)
    notice = _NoCancelNotice()
    logging.getLogger("uvicorn.error").addFilter(notice)
    try:
        server.run(sockets=[sock])
    finally:
        app.state.searches.stop_all()
        logging.getLogger("uvicorn.error").removeFilter(notice)
        sock.close()

"""The web app of ``jitsearch serve`` (Starlette): any registered game's board to play and analyse in the
browser.

A thin layer over the functions the CLI calls: positions are the game's state class (text form as in
``--position``), players are agent specs (:func:`~jitsearch.cli.common.agent_for`), analysis is
:func:`~jitsearch.arena.analysis.analyse_moves` (every game) or, for Kalah's engine panel,
:func:`~jitsearch.arena.analysis.analyse_position`; records are the arena's JSONL files. Every request is
checked before any kernel runs; a bad one is answered with ``{"error": "one line"}`` (status 400; 409 while a
search runs; 404 for what does not exist; 408 for a body not sent within :data:`BODY_SECONDS`; 413 for a body
over :data:`MAX_BODY` bytes), the same line the CLI prints after ``error:``.

Every request that changes something (any method but GET, HEAD and OPTIONS)
must show it comes from the page (:class:`RequestCheck`): its
``Content-Type`` is ``application/json`` (else 415), its ``Origin``, when
sent, is the server's own (else 403), its ``Sec-Fetch-Site``, when sent, is
``same-origin`` (else 403), and its ``X-Jitsearch-Token`` header holds the
server's random token (else 403), which the page carries in a ``<meta
name="jitsearch-token">`` tag (another site's page cannot read it). The
``Host`` check of a loopback server stops DNS rebinding; these stop any
other page open in the browser from starting searches.

Routes (JSON in and out): ``GET /api/info``; for every registered game ``GAME``
(:mod:`._web_game`): ``POST /api/GAME/new`` (the variant options), ``POST /api/GAME/position`` (position,
moves), ``POST /api/GAME/move`` (position, moves, move), ``POST /api/GAME/agent-move`` (position, moves, agent,
seed), ``POST /api/GAME/analyse`` (position, moves, iterations or time, playouts, seed, exact, backend: MCTS
values) and ``POST /api/GAME/engine-analysis`` (position, moves, engine, solve_time, seed: the engine panel,
exact solves where the game has timed move values, then an engine) start a search and answer its job; ``position`` is where the line starts (text), ``moves`` the moves played
since (the server replays them, so a rule that looks back sees the game), the variant options are fields of
their own. The routes without the game (``/api/new``, ``/api/position``, ``/api/move``,
``/api/agent-move``, and ``/api/analyse`` for the engine panel) are the default game's. ``GET /api/jobs/{id}`` polls a job, ``POST /api/jobs/{id}/cancel`` stops it; ``GET /api/records``
lists the ``--records`` directory, ``GET /api/records/{name}`` replays a file's games.
"""

from __future__ import annotations

import asyncio
import html
import json
import math
import secrets
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .._version import __version__
from ..games import DEFAULT_GAME
from . import _web_game as web_game
from .common import check_agent_for
from ._web_jobs import Busy, NotFound, Searches, read_games, record_files, record_path

#: The page's files.
WEB_DIR = Path(__file__).resolve().parent / "web"
#: Largest request body, in bytes.
MAX_BODY = 64 * 1024
#: Seconds a client has to send a request's whole body (a stalled one is answered 408).
BODY_SECONDS = 10.0
#: The header that carries the server's token (:class:`RequestCheck`).
TOKEN_HEADER = "X-Jitsearch-Token"
#: Methods that change nothing, answered without the token.
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
#: Agents the page suggests (those the game's agents do not take, or the position or the machine cannot
#: run, are left out).
SUGGESTIONS = ("human", "random", "alphabeta:time=1", "alphabeta:depth=8", "alphabeta:depth=6", "mcts:time=1",
               "mcts:iterations=2000", "mcts:time=1,backend=cuda", "mc:playouts=200", "perfect", "mtdf:time=2")
#: Analysis engines the page suggests for Kalah.
ENGINE_SUGGESTIONS = ("alphabeta:time=1", "alphabeta:depth=10", "mcts:time=1", "mcts:time=1,backend=cuda")
#: Default cap on one search, in seconds (``--max-seconds``).
DEFAULT_MAX_SECONDS = 60.0
#: Agents kept between requests (an engine keeps its table across the moves of a game).
KEEP_AGENTS = 8
#: Hosts a loopback server answers to (a page of another site cannot reach it by DNS rebinding).
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]


class TooLarge(Exception):
    """A request body over :data:`MAX_BODY`: HTTP 413."""


class SlowBody(Exception):
    """A request body not sent within :data:`BODY_SECONDS`: HTTP 408."""


class RequestCheck:
    """ASGI middleware: a request that changes something must come from the page (module docstring).

    ``token``: the server's random token; a refusal is ``{"error": "one line"}`` with 403 (415 for a body
    that is not declared JSON). Safe methods and anything but HTTP pass unchecked."""

    def __init__(self, app, token: str):
        self.app = app
        self.token = token

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            refusal = self.refusal(scope)
            if refusal is not None:
                await _error(*refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope) -> tuple[str, int] | None:
        headers = {}
        for key, value in scope.get("headers", []):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        origin = headers.get("origin")
        if origin is not None:
            own = f"{scope.get('scheme', 'http')}://{headers.get('host', '')}"
            if origin.rstrip("/").lower() != own.lower():
                return f"cross-origin request refused: Origin {origin[:80]} is not this server's ({own})", 403
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return f"cross-site request refused (Sec-Fetch-Site: {site[:40]})", 403
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return (f"a {scope['method']} request must be sent as Content-Type: application/json, got "
                    f"{json.dumps(kind)[:60] if kind else 'none'}"), 415
        given = headers.get(TOKEN_HEADER.lower(), "")
        if not secrets.compare_digest(given.encode("latin-1"), self.token.encode("latin-1")):
            return (f"missing or wrong {TOKEN_HEADER} header: requests that change something must come from this "
                    f"server's page (it holds the token)"), 403
        return None


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


def _api(handler):
    """Answer a handler's user errors as one line, and never let an exception reach the server."""
    async def endpoint(request: Request):
        try:
            return await handler(request)
        except Busy as exc:
            return _error(str(exc), 409)
        except NotFound as exc:
            return _error(str(exc), 404)
        except TooLarge as exc:
            return _error(str(exc), 413)
        except SlowBody as exc:
            return _error(str(exc), 408)
        except ValueError as exc:
            return _error(str(exc), 400)
        except MemoryError:
            return _error("out of memory: ask for a smaller board", 400)
        except Exception as exc:  # noqa: BLE001 - one line, and the server goes on
            return _error(f"internal error: {type(exc).__name__}: {exc}", 500)
    endpoint.__name__ = handler.__name__
    return endpoint


async def _body(request: Request, allowed: dict) -> dict:
    """The JSON object of a request, at most MAX_BODY bytes sent within ``request.app.state.body_seconds``,
    keys among ``allowed`` ({name: required})."""
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_BODY:
        raise TooLarge(f"a request body has at most {MAX_BODY:,} bytes, got {int(size):,}")
    chunks = []

    async def read():
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > MAX_BODY:
                raise TooLarge(f"a request body has at most {MAX_BODY:,} bytes")
            chunks.append(chunk)

    seconds = getattr(request.app.state, "body_seconds", BODY_SECONDS)
    try:
        await asyncio.wait_for(read(), seconds)
    except asyncio.TimeoutError:
        raise SlowBody(f"the request body was not sent within {seconds:g} s") from None
    try:
        data = json.loads(b"".join(chunks) or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ValueError("the request body must be a JSON object") from None
    if not isinstance(data, dict):
        raise ValueError("the request body must be a JSON object")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; known: {', '.join(allowed)}")
    missing = [k for k, required in allowed.items() if required and k not in data]
    if missing:
        raise ValueError(f"missing field(s): {', '.join(missing)}")
    return data


def _int(data: dict, name: str, default, lo: int, hi: int, what: str | None = None) -> int:
    v = data.get(name, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{what or name} must be an integer, got {json.dumps(v)[:40]}")
    if not lo <= v <= hi:
        raise ValueError(f"{what or name} must lie in {lo}..{hi}, got {v}")
    return v


def _number(data: dict, name: str, default, lo: float, hi: float) -> float:
    v = data.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name} must be a number, got {json.dumps(v)[:40]}")
    if not lo <= v <= hi:
        raise ValueError(f"{name} must lie in {lo:g}..{hi:g} seconds, got {v:g}")
    return float(v)


def _spec_seconds(agent) -> float | None:
    """The time budget an agent spec asks for (None: a depth or iteration budget)."""
    return agent.time if agent.time is not None else agent.options.get("time")


def _check_cap(what: str, seconds: float | None, cap: float) -> None:
    if seconds is not None and seconds > cap:
        raise ValueError(f"{what} asks for {seconds:g} s, above this server's cap of {cap:g} s a search "
                         f"(jitsearch serve --max-seconds)")


def _cuda_usable() -> bool:
    from ..kernels.backend import cuda_status

    return cuda_status()[0]


def suggested_agents(state, cuda: bool, game_name: str = DEFAULT_GAME, variant: dict | None = None) -> list[str]:
    """The agent specs the page offers in ``state``: those of :data:`SUGGESTIONS` the game's agents
    take, less those this position (``perfect`` on a board it cannot solve in seconds) or this machine
    (CUDA without a device) would refuse."""
    from ..games import get
    from .common import agent_for, agent_kinds_for, check_agent_for

    variant = get(game_name).check_variant(**(variant or {}))
    out, refused = [], set()
    for spec in SUGGESTIONS:
        if "backend=cuda" in spec and not cuda:
            continue
        if spec != "human":
            try:
                probe = spec.replace(",backend=cuda", "")  # (the device was asked once, above)
                check_agent_for(game_name, agent_for(game_name, probe, 0), state, variant)
            except ValueError:
                refused.add(spec.partition(":")[0])
                continue
        out.append(spec)
    for kind in agent_kinds_for(game_name):  # every other kind the game's agents take, bare
        if kind not in refused and not any(s.partition(":")[0] == kind for s in out):
            out.append("openspiel:mcts,simulations=1000" if kind == "openspiel" else kind)
    return out


def drawing_scripts(games) -> str:
    """The drawing scripts of ``games`` (name -> Game: each game's ``ui.script``, read now) as one
    JavaScript text, in the registry's order; a game without one is drawn by the page's ``generic.js``."""
    parts = []
    for name, g in games.items():
        script = getattr(g.ui, "script", None)
        if script is not None:
            parts.append(f"// {name}: {Path(script).name}\n{Path(script).read_text(encoding='utf-8')}")
    return "\n".join(parts)


def create_app(*, records_dir: Path | None = None, max_seconds: float = DEFAULT_MAX_SECONDS,
               allowed_hosts=None, game: str = DEFAULT_GAME, token: str | None = None,
               body_seconds: float = BODY_SECONDS) -> Starlette:
    """The app. ``records_dir``: where record files may be opened (None: none); ``max_seconds``: the cap on
    one search; ``allowed_hosts``: Host header values answered (None: any); ``game``: the game the page
    shows first (``kalah`` or ``oware``; its selector switches); ``token``: the value of the
    ``X-Jitsearch-Token`` header that requests changing something must send (None: a random one, in
    ``app.state.token`` and in the page); ``body_seconds``: time a client has to send a request body."""
    from ..games import GAMES

    if game not in GAMES:
        raise ValueError(f"game must be one of {', '.join(GAMES)}, got {game!r}")
    if token is None:
        token = secrets.token_urlsafe(32)
    if not isinstance(token, str) or not token.isascii() or not token.isprintable() or len(token) < 16:
        raise ValueError("token must be a printable ASCII string of at least 16 characters")
    searches = Searches(max_seconds)
    agents: dict = {}
    cuda: list = []  # asked once, at the first request that needs it

    def cuda_usable() -> bool:
        if not cuda:
            cuda.append(_cuda_usable())
        return cuda[0]

    def game_json(game, state, reason=None, variant=None) -> dict:
        out = web_game.state_json(game, state, reason)
        if not state.is_over:
            out["agents"] = suggested_agents(state, cuda_usable(), game.name, variant)
        return out

    async def info(request: Request):
        from ..arena.agents import KINDS
        from ..games import GAMES
        from .common import agent_kinds_for

        await run_in_threadpool(cuda_usable)  # the first ask imports numba.cuda: not on the event loop
        variants = {name: {k: {"type": o.type.__name__, "default": o.default, "help": o.help}
                           for k, o in g.variant.items()} for name, g in GAMES.items()}
        return JSONResponse({"version": __version__, "max_seconds": max_seconds, "records": records_dir is not None,
                             "agents": [k for k in KINDS if k != "human"], "max_houses": GAMES[DEFAULT_GAME].max_moves,
                             "games": list(GAMES), "game": game, "variants": variants,
                             "cuda": cuda_usable(),
                             "agent_kinds": {name: agent_kinds_for(name) for name in GAMES},
                             "engines": [e for e in ENGINE_SUGGESTIONS if "backend=cuda" not in e or cuda_usable()]})

    # -- every game: /api/{game}/... ----------------------------------------------------------------
    def game_of(request: Request):
        from ..games import get

        try:
            return get(request.path_params.get("game", DEFAULT_GAME))  # (Kalah's routes without the game)
        except ValueError as exc:
            raise NotFound(str(exc)) from None

    def line_fields(game, **more) -> dict:
        return {"position": True, "moves": False, **{k: False for k in game.variant}, **more}

    async def live_line(game, data, what: str):
        """(start, state) of a request's line, refused in one line when the game is over there."""
        start, state, _ = await run_in_threadpool(web_game.replay, game, data)
        if state.is_over:
            raise ValueError(f"the game is over in this position: no move to {what}")
        return start, state

    async def game_new(request: Request):
        game = game_of(request)
        data = await _body(request, {k: False for k in game.variant})

        def run():
            variant = web_game.variant_of(game, data)
            return {"state": game_json(game, game.initial(**variant), variant=variant)}

        return JSONResponse(await run_in_threadpool(run))

    async def game_position(request: Request):
        game = game_of(request)
        data = await _body(request, line_fields(game))

        def run():
            _, state, reason = web_game.replay(game, data)
            return {"state": game_json(game, state, reason, web_game.variant_of(game, data))}

        return JSONResponse(await run_in_threadpool(run))

    async def game_move(request: Request):
        game = game_of(request)
        data = await _body(request, line_fields(game, move=True))

        def run():
            _, state, _ = web_game.replay(game, data)
            after, reason = web_game.play(state, data["move"])
            return {"state": game_json(game, after, reason, web_game.variant_of(game, data)), "move": data["move"],
                    "player": state.player, "extra_turn": after.player == state.player}

        return JSONResponse(await run_in_threadpool(run))

    async def game_agent_move(request: Request):
        game = game_of(request)
        data = await _body(request, line_fields(game, agent=True, seed=False))
        start, state = await live_line(game, data, "search")
        seed = _int(data, "seed", 0, 0, 2**63 - 1)
        variant = web_game.variant_of(game, data)
        key = (game.name, data["agent"], seed, tuple(sorted(variant.items())))
        agent = agents.get(key) if isinstance(data["agent"], str) else None
        if agent is None:
            agent = await run_in_threadpool(web_game.make_agent, game, data["agent"], seed, start,
                                            data.get("moves") or [], state, variant)
            if not hasattr(agent, "begin"):  # kept: an engine keeps its table across the moves of a game
                if len(agents) >= KEEP_AGENTS:
                    agents.pop(next(iter(agents)))
                agents[key] = agent
        else:
            await run_in_threadpool(check_agent_for, game.name, agent, state, variant)
        _check_cap(f"agent {data['agent']}", web_game.agent_seconds(agent), max_seconds)

        def run(job):
            job.progress = {"phase": "search", "agent": str(data["agent"])}
            if getattr(agent, "engine", False) and hasattr(agent, "prepare"):
                job.progress["phase"] = "preparing (an endgame database is built once, then cached)"
                agent.prepare(state)
                job.progress["phase"] = "search"
            return web_game.agent_reply(game, agent, state, job.stop,
                                        lambda after, reason: game_json(game, after, reason, variant))

        job = searches.start("move", run)
        return JSONResponse({"job": job.to_json()}, status_code=202)

    async def game_analyse(request: Request):
        from ..arena.analysis import analyse_moves

        game = game_of(request)
        data = await _body(request, line_fields(game, iterations=False, time=False, playouts=False, seed=False,
                                                exact=False, backend=False))
        _, state = await live_line(game, data, "analyse")
        options = web_game.check_analysis(data, max_seconds)

        def run(job):
            def progress(phase):
                job.progress = {"phase": phase}

            return analyse_moves(game, state, stop=job.stop, progress=progress, **options)

        job = searches.start("analysis", run)
        return JSONResponse({"job": job.to_json()}, status_code=202)

    async def engine_analysis(request: Request):
        from ..arena.agents import agent_kind
        from ..arena.analysis import analyse_position, check_analysis_engine, check_solve_time

        game = game_of(request)
        data = await _body(request, line_fields(game, engine=False, solve_time=False, seed=False))
        _, state = await live_line(game, data, "analyse")
        engine = data.get("engine", "alphabeta:time=1")
        if not isinstance(engine, str):
            raise ValueError(f"engine must be an agent spec string, got {json.dumps(engine)[:40]}")
        solve_time = check_solve_time(game, None if data.get("solve_time") is None else
                                      _number(data, "solve_time", 2.0, 0.0, max_seconds), max_seconds)
        seed = _int(data, "seed", 0, 0, 2**63 - 1)
        if agent_kind(engine) == "cmd":
            raise ValueError("cmd: engines start a program on this machine: not from the web page")
        agent = check_analysis_engine(engine, game)
        _check_cap(f"engine {engine}", _spec_seconds(agent), max_seconds)

        def run(job):
            def progress(phase, done, total):
                job.progress = {"phase": phase, "done": done, "total": total}

            return analyse_position(state, engine=engine, solve_time=solve_time, stop=job.stop,
                                    progress=progress, seed=seed, game=game)

        job = searches.start("analysis", run)
        return JSONResponse({"job": job.to_json()}, status_code=202)

    def _job_number(request: Request) -> int:
        text = request.path_params["job"]
        if not text.isdigit() or len(text) > 12:
            raise NotFound(f"no search {text!r} on this server")
        return int(text)

    async def job_status(request: Request):
        return JSONResponse({"job": searches.get(_job_number(request)).to_json()})

    async def job_cancel(request: Request):
        job = searches.get(_job_number(request))
        job.cancel()
        return JSONResponse({"job": job.to_json()})

    def _records() -> Path:
        if records_dir is None:
            raise NotFound("no records directory: start the server with --records DIR")
        return records_dir

    async def records(request: Request):
        return JSONResponse({"files": await run_in_threadpool(record_files, _records())})

    async def record(request: Request):
        name = request.path_params["name"]
        path = await run_in_threadpool(record_path, _records(), name)
        return JSONResponse({"file": name, "games": await run_in_threadpool(read_games, path)})

    page_html = (WEB_DIR / "index.html").read_text().replace(
        "{{token}}", html.escape(token, quote=True))

    async def page(request: Request):
        return HTMLResponse(page_html, headers={"Cache-Control": "no-store"})

    async def boards(request: Request):  # the registry as it is now (a plugin registered since included)
        text = await run_in_threadpool(drawing_scripts, GAMES)
        return Response(text, media_type="text/javascript; charset=utf-8", headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", page),
        Route("/boards.js", boards),
        Route("/api/info", _api(info)),
        Route("/api/new", _api(game_new), methods=["POST"]),  # Kalah's routes without the game: the same
        Route("/api/position", _api(game_position), methods=["POST"]),
        Route("/api/move", _api(game_move), methods=["POST"]),
        Route("/api/agent-move", _api(game_agent_move), methods=["POST"]),
        Route("/api/analyse", _api(engine_analysis), methods=["POST"]),
        Route("/api/jobs/{job}", _api(job_status)),
        Route("/api/jobs/{job}/cancel", _api(job_cancel), methods=["POST"]),
        Route("/api/records", _api(records)),
        Route("/api/records/{name}", _api(record)),
        Route("/api/{game}/new", _api(game_new), methods=["POST"]),
        Route("/api/{game}/position", _api(game_position), methods=["POST"]),
        Route("/api/{game}/move", _api(game_move), methods=["POST"]),
        Route("/api/{game}/agent-move", _api(game_agent_move), methods=["POST"]),
        Route("/api/{game}/analyse", _api(game_analyse), methods=["POST"]),
        Route("/api/{game}/engine-analysis", _api(engine_analysis), methods=["POST"]),
        Mount("/static", StaticFiles(directory=WEB_DIR), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))] if allowed_hosts else []
    middleware.append(Middleware(RequestCheck, token=token))
    async def http_error(request: Request, exc):
        return _error(f"{exc.detail}: {request.method} {request.url.path}", exc.status_code)

    app = Starlette(routes=routes, middleware=middleware, exception_handlers={HTTPException: http_error})
    app.state.searches = searches
    app.state.token = token
    app.state.body_seconds = body_seconds
    return app

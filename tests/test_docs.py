"""Every code example of README.md and docs/*.md runs, as written.

Conventions of the fenced blocks (docs/development.md describes them too):

* ```` ```python ````: run. A page's Python blocks share one namespace, in
  page order, in a fresh process whose working directory is a new temporary
  directory. A line ``print(...)  # -> TEXT`` checks that the printed line
  is exactly TEXT.
* ```` ```bash ```` / ```` ```console ````: every ``jitsearch ...`` line
  (``$ jitsearch ...`` in console blocks, whose other lines are output) runs
  as ``python -m jitsearch ...`` in the same directory, in page order with
  the Python blocks, and must exit 0 (or N where the line ends with
  ``# exit status N``). Lines ending in ``\\`` continue on the next line;
  other commands are not allowed in a block that runs.
* ```` ```text ````, ```` ```json ````: synopses and output, never run.
* A title marks a block that runs only somewhere, or never:
  ``title="needs a GPU"`` (runs where a CUDA device is found),
  ``title="needs OpenSpiel"`` (runs where ``pyspiel`` imports),
  ``title="not run: REASON"`` (never; the reason is shown on the page).
  The tests list those they did not run.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from jitsearch._jit import numba_cache_dir

ROOT = Path(__file__).resolve().parents[1]
#: docs/examples is on the path of the pages' examples (``import tictactoe``), as a user's own folder would be
EXAMPLES = ROOT / "docs" / "examples"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
LANGUAGES = {"python", "bash", "console", "text", "json"}
CLI_TIMEOUT_S = 120
PAGE_TIMEOUT_S = 240


@dataclass
class Block:
    page: str
    line: int
    lang: str
    title: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def needs(self) -> str | None:
        """None (runs everywhere), 'gpu', 'openspiel' or 'never'."""
        t = self.title.lower()
        if t.startswith("not run"):
            return "never"
        if t.startswith("needs a gpu"):
            return "gpu"
        if t.startswith("needs openspiel"):
            return "openspiel"
        return None


def _blocks(path: Path) -> list[Block]:
    text = path.read_text()
    rel = str(path.relative_to(ROOT))
    out = []
    for m in FENCE.finditer(text):
        info = m.group(1).strip()
        lang = info.split()[0] if info else ""
        title = re.search(r'title="([^"]*)"', info)
        out.append(Block(rel, text.count("\n", 0, m.start()) + 1, lang, title.group(1) if title else "", m.group(2)))
    return out


def _commands(block: Block) -> list[tuple[list[str], int, str]]:
    """(argv after 'jitsearch', expected exit status, the line) of a bash/console block."""
    lines, out, pending = block.code.splitlines(), [], ""
    for raw in lines:
        line = raw.rstrip()
        if block.lang == "console":
            if not line.startswith("$ ") and not pending:
                continue  # output
            line = line[2:] if line.startswith("$ ") else line
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if not line or line.startswith("#"):
            continue
        argv = shlex.split(line, comments=True)
        if argv[0] != "jitsearch":
            raise AssertionError(f"{block.where}: only jitsearch commands run here, not {line!r}; "
                                 'mark the block title="not run: ..." if it must show another command')
        status = re.search(r"#\s*exit status (\d+)\s*$", line)
        out.append((argv[1:], int(status.group(1)) if status else 0, line))
    return out


@functools.cache
def _have_gpu() -> bool:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False  # the simulator would take hours over the GPU examples
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


@functools.cache
def _have_openspiel() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def _runs_here(block: Block) -> bool:
    return {None: True, "gpu": _have_gpu(), "openspiel": _have_openspiel(), "never": False}[block.needs]


_PRINT_CHECK = re.compile(r"^(\s*)print\((.*)\)\s*#\s*->\s*(.*?)\s*$")


def _checked_python(code: str) -> str:
    """Turn ``print(x)  # -> TEXT`` into a print that also checks its output."""
    out = []
    for line in code.splitlines():
        m = _PRINT_CHECK.match(line)
        out.append(f"{m.group(1)}__doc_print({m.group(3)!r}, {m.group(2)})" if m else line)
    return "\n".join(out) + "\n"


_DRIVER = textwrap.dedent('''
    import json, subprocess, sys, time

    def __doc_print(expected, *args, **kw):
        print(*args, **kw)
        got = " ".join(str(a) for a in args)
        assert got == expected, f"printed {got!r}, the page says {expected!r}"

    def main():
        steps = json.load(open(sys.argv[1]))
        namespace = {"__name__": "__main__", "__doc_print": __doc_print}
        for step in steps:
            t0 = time.perf_counter()
            if step["kind"] == "python":
                exec(compile(step["code"], step["where"], "exec"), namespace)
            else:
                r = subprocess.run([sys.executable, "-m", "jitsearch", *step["argv"]], capture_output=True,
                                   text=True, stdin=subprocess.DEVNULL, timeout=step["timeout"])
                if r.returncode != step["status"]:
                    sys.exit(f"{step['where']}: {step['line']!r} exited {r.returncode}, "
                             f"expected {step['status']}\\nstdout:\\n{r.stdout[-3000:]}\\nstderr:\\n{r.stderr[-3000:]}")
            print(f"[{time.perf_counter() - t0:6.1f} s] {step['where']}", file=sys.stderr, flush=True)

    if __name__ == "__main__":
        main()
''')


def _steps(blocks: list[Block]) -> list[dict]:
    steps = []
    for b in blocks:
        if not _runs_here(b):
            continue
        if b.lang == "python":
            steps.append({"kind": "python", "where": b.where, "code": _checked_python(b.code)})
        elif b.lang in ("bash", "console"):
            for argv, status, line in _commands(b):
                steps.append({"kind": "cli", "where": b.where, "argv": argv, "status": status, "line": line,
                              "timeout": CLI_TIMEOUT_S})
    return steps


def _all_blocks() -> list[Block]:
    return [b for p in PAGES for b in _blocks(p)]


# -- the examples, page by page ----------------------------------------------------------

EXAMPLE_PAGES = [p for p in PAGES if any(b.lang in ("python", "bash", "console") for b in _blocks(p))]


#: pages whose examples run in the slow step only (each compiles kernels of its own, or runs for many seconds)
SLOW_EXAMPLE_PAGES = {"README.md", "docs/adding-a-game.md", "docs/arena.md", "docs/benchmarks.md", "docs/cli.md", "docs/gpu.md",
                      "docs/index.md", "docs/kalah.md", "docs/mcts.md", "docs/openspiel.md", "docs/oware.md",
                      "docs/serve.md", "docs/solvers.md", "docs/trees.md"}


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow)
                                  if str(p.relative_to(ROOT)) in SLOW_EXAMPLE_PAGES else p for p in EXAMPLE_PAGES],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page, tmp_path, tmp_path_factory):
    steps = _steps(_blocks(page))
    if not steps:
        pytest.skip("every example on this page is marked: not run, or needs what is missing here")
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "steps.json").write_text(json.dumps(steps))
    (tmp_path / "driver.py").write_text(_DRIVER)
    # the examples' own caches in a temporary home, the kernels the other tests compiled where they are
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path_factory.getbasetemp() / "xdg-cache"),
               NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR") or numba_cache_dir(),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), str(EXAMPLES), os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "steps.json")], cwd=work,
                       capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=PAGE_TIMEOUT_S)
    assert r.returncode == 0, f"stdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-6000:]}"
    print(r.stderr)  # each step's time, shown with pytest -rP


# -- the conventions ---------------------------------------------------------------------

def test_fences_follow_the_conventions():
    blocks = _all_blocks()
    assert len(blocks) >= 40, len(blocks)
    for b in blocks:
        assert b.lang in LANGUAGES, f"{b.where}: fence language {b.lang!r}; use one of {sorted(LANGUAGES)}"
        if b.needs == "never":
            reason = b.title.split(":", 1)[1].strip() if ":" in b.title else ""
            assert len(reason) >= 8, f"{b.where}: say why the example is not run: title=\"not run: REASON\""
        elif b.lang in ("bash", "console"):
            assert _commands(b), f"{b.where}: a bash block that runs has no jitsearch command"
        if b.title and b.needs is None:
            raise AssertionError(f"{b.where}: unknown title {b.title!r} (not run: ..., needs a GPU, needs OpenSpiel)")
    runnable = [b for b in blocks if b.lang in ("python", "bash", "console")]
    never = [b for b in runnable if b.needs == "never"]
    assert len(never) * 3 <= len(runnable), "most examples must run: " + ", ".join(b.where for b in never)


def test_examples_not_run_are_listed(capsys):
    never = [b for b in _all_blocks() if b.needs == "never"]
    with capsys.disabled():
        print(f"\n{len(never)} documented examples are never run by the tests:")
        for b in never:
            print(f"  {b.where}: {b.title}")


@pytest.mark.parametrize("needs, available, why", [
    ("gpu", _have_gpu, "no CUDA device"),
    ("openspiel", _have_openspiel, "pyspiel does not import (the openspiel extra)"),
])
def test_conditional_examples(needs, available, why):
    blocks = [b for b in _all_blocks() if b.needs == needs]
    assert blocks, f"no example is marked as needing {needs}"
    if not available():
        pytest.skip(f"{why}: {len(blocks)} examples not run ({', '.join(b.where for b in blocks)})")
    # where available they ran with their pages in test_page_examples_run


def test_readme_test_command_is_the_ci_command():
    """CI runs the README's test command: both must say the same."""
    command = 'pip install ".[test]" && python -m pytest'
    assert command in (ROOT / "README.md").read_text()
    assert "python -m pip install \".[test]\" && python -m pytest" in (ROOT / ".ci" / "run").read_text()


def test_readme_is_short_and_links_resolve():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 210
    for target in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / target).is_file(), f"README links to missing {target}"


# -- the game from outside the package (docs/adding-a-game.md) -----------------------------

def _tictactoe():
    import importlib.util

    spec = importlib.util.spec_from_file_location("tictactoe", EXAMPLES / "tictactoe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_game_registers_and_its_rules_agree_with_brute_force():
    """Fast (no compile): the record passes the registry's checks, the start is a draw in both
    variants, and the rules run as Python agree with a naive line check on random games."""
    import random

    from jitsearch.games.protocol import check_game

    ttt = _tictactoe()
    game = check_game(ttt.GAME)
    assert ttt.brute_force(game.initial()) == 0 and ttt.brute_force(game.initial(misere=True)) == 0
    assert ttt.brute_force(game.from_text("xx.oo....")) == 1 and ttt.brute_force(game.from_text("xx.oo...x")) == -1
    rnd = random.Random(1)
    for _ in range(200):
        s = game.initial(misere=rnd.random() < 0.5)
        while not s.is_over:
            s = s.play(rnd.choice(s.legal_moves()))
            assert game.from_text(s.to_text(), misere=s.misere).to_text() == s.to_text()
        marks = s.to_text()
        lines = {marks[a] for a, b, c in ttt.LINES if marks[a] == marks[b] == marks[c] != "."}
        won = 1 if lines == {"x"} else -1 if lines == {"o"} else 0
        assert s.margin == (-won if s.misere else won) and (won != 0 or "." not in marks)
    for bad in ("", "xxx......", "xx.......o", "ooo......", "xxxooo..."):
        with pytest.raises(ValueError) as exc:
            game.from_text(bad)
        assert "\n" not in str(exc.value)


@pytest.mark.slow  # compiles the game's CPU kernels, then runs the CUDA kernel in the simulator (about 1 min)
def test_the_example_game_is_searched_on_the_cpu_and_under_the_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, str(EXAMPLES / "tictactoe.py"), "--cuda"], cwd=ROOT, env=env,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=PAGE_TIMEOUT_S)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "brute force, alpha-beta and MCTS agree" in r.stdout and "equals its CPU twin" in r.stdout


@pytest.mark.slow  # compiles the game's MCTS kernel
def test_the_example_game_plays_with_the_arenas_agents():
    import inspect

    from jitsearch.arena.agents import parse_agent

    if "game" not in inspect.signature(parse_agent).parameters:
        pytest.skip("parse_agent has no game= keyword yet: the arena is Kalah's until the generic arena lands")
    import jitsearch.games as games

    ttt = _tictactoe()
    game = games.register(ttt.GAME, replace=True)
    for first in (0, 1):
        agents = [parse_agent("random", game="tictactoe"), parse_agent("random", game="tictactoe")]
        agents[first] = parse_agent("mcts:iterations=400", game="tictactoe")
        for _ in range(3):
            state = game.initial()
            while not state.is_over:
                move = agents[state.player].choose(state)
                assert move in state.legal_moves()
                state = state.play(move)
            assert state.margin * (1 - 2 * first) >= 0, state  # MCTS never loses to random play here


def test_the_example_game_compiles_to_ptx_for_sm90():
    """The generic multi-tree MCTS kernel compiles to PTX for sm_90 with the example's rules (NVVM only,
    no device: the gpu extra); skipped without numba-cuda or under the simulator, as tests/test_games.py's."""
    import importlib.util

    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("the simulator has no compiler")
    require = os.environ.get("JITSEARCH_REQUIRE_PTX") == "1"
    if importlib.util.find_spec("numba_cuda") is None and not require:
        pytest.skip("numba-cuda (the gpu extra) is not installed")
    from jitsearch.kernels.cuda_game_mcts import compile_ptx

    try:
        ptx = compile_ptx(_tictactoe().GAME)
    except Exception as exc:  # a missing NVVM is a skip; anything else fails
        if require or type(exc).__name__ not in ("NvvmSupportError", "NvrtcSupportError", "CudaSupportError"):
            raise
        pytest.skip(f"no CUDA compiler toolchain ({type(exc).__name__})")
    assert ".target sm_90" in ptx

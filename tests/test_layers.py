"""The package's shape, checked from its source: imports only go down the
layers, no module takes another module's private name, no import circle
(imports inside functions count too), no module over 800 lines.

Layers, from the ground up (README, "Layout"): the ground floor (``_checks``,
``_io``, ``rng``, ``stop``, ``_jit``, ``_version``: imports nothing of jitsearch),
then trees -> search (and the plain-Python reference ``naive``) -> games ->
kernels -> mcts -> arena -> interop -> benchmarks -> cli. A module may import
from its own layer or any lower one; the package's ``__init__`` (the public
API) may import anything and is imported by nothing inside the package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import jitsearch

ROOT = Path(__file__).resolve().parent.parent / "jitsearch"
GROUND = {"_checks", "_cuda", "_io", "rng", "_jit", "_threads", "_version", "stop"}
LAYERS = ["trees", "search", "games", "kernels", "mcts", "arena", "interop", "benchmarks", "cli"]
#: Top-level modules that are not subpackages, and the layer each sits in.
TOP_MODULES = {"naive": "search", "__main__": "cli"}
MAX_LINES = 800


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _resolve(importer: str, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``importer``."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base = base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _imports(name: str):
    """(line, imported module, imported names, in a function?) of a module, every import statement."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "jitsearch":
                        out.append((child.lineno, alias.name, [], in_function))
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(name, child.level, child.module)
                if target.split(".")[0] == "jitsearch":
                    out.append((child.lineno, target, [a.name for a in child.names], in_function))
            visit(child, inner)

    visit(tree, False)
    return out


def _edges(name: str):
    """(line, module imported) of ``name``: a name imported from a package that is one of its modules counts
    as an import of that module."""
    for line, target, names, _ in _imports(name):
        hits = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
        if hits and len(hits) == len(names):
            for h in hits:
                yield line, h
        elif target in MODULES:
            yield line, target


def _layer(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) == 1:
        return "top"
    if parts[1] in GROUND:
        return "ground"
    if parts[1] in TOP_MODULES:
        return TOP_MODULES[parts[1]]
    return parts[1]


def _rank(layer: str) -> int:
    return -1 if layer == "ground" else LAYERS.index(layer)


def test_the_layers_cover_every_module():
    unknown = sorted(n for n in MODULES if _layer(n) not in {"top", "ground", *LAYERS})
    assert not unknown, f"modules outside the layers (add them to tests/test_layers.py): {unknown}"


def test_imports_only_go_down_the_layers():
    bad = []
    for name, path in MODULES.items():
        mine = _layer(name)
        for line, target in _edges(name):
            theirs = _layer(target)
            where = f"{path.relative_to(ROOT.parent)}:{line}"
            if theirs == "top" and mine != "top":
                bad.append(f"{where}: {name} imports the package's __init__ ({target})")
            elif mine == "ground" and theirs != "ground":
                bad.append(f"{where}: the ground floor's {name} imports {target}")
            elif mine not in ("top", "ground") and theirs not in ("top", "ground") and _rank(theirs) > _rank(mine):
                bad.append(f"{where}: {name} ({mine}) imports {target} ({theirs}), a higher layer")
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_no_module_takes_another_modules_private_name():
    bad = []
    for name, path in MODULES.items():
        source = path.read_text()
        tree = ast.parse(source)
        aliases = {}  # local name -> jitsearch module bound to it
        for line, target, names, _ in _imports(name):
            where = f"{path.relative_to(ROOT.parent)}:{line}"
            for n in names:
                if n.startswith("_") and not n.startswith("__") and f"{target}.{n}" not in MODULES:
                    bad.append(f"{where}: {name} imports the private name {n} of {target}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(name, node.level, node.module)
                for a in node.names:
                    if f"{target}.{a.name}" in MODULES:
                        aliases[a.asname or a.name] = f"{target}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in MODULES and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                bad.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {name} uses the private name "
                           f"{node.attr} of {aliases[node.value.id]}")
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    graph = {name: sorted({t for _, t in _edges(name) if t != name}) for name in MODULES}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []
    counter = [0]

    def connect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            connect(v)
    assert not circles, "import circles (imports inside functions count):\n" + "\n".join(
        " <-> ".join(c) for c in circles)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_over_800_lines(name):
    lines = MODULES[name].read_text().count("\n")
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT.parent)} has {lines} lines (at most {MAX_LINES})"


# -- one path for options ------------------------------------------------------------------------

@pytest.mark.slow
def test_an_mcts_search_validates_its_options_once(monkeypatch):
    """MCTSConfig.validate runs once per search and the backend searches
    check nothing again (they get the validated config's tree options)."""
    from jitsearch.games.kalah import KalahState
    from jitsearch.mcts import config, search

    calls = {"validate": 0, "tree": 0}
    real_validate, real_tree = config.MCTSConfig.validate, config.check_tree_options

    def validate(self, *args, **kw):
        calls["validate"] += 1
        return real_validate(self, *args, **kw)

    def tree(*args, **kw):
        calls["tree"] += 1
        return real_tree(*args, **kw)

    monkeypatch.setattr(config.MCTSConfig, "validate", validate)
    for module in ("config", "game"):  # the multi-tree and tree-parallel searches check through mcts.game
        monkeypatch.setattr(f"jitsearch.mcts.{module}.check_tree_options", tree)
    for options in ({"backend": "cpu", "trees": 2}, {"backend": "cpu", "parallel": "tree"}, {}):
        calls.update(validate=0, tree=0)
        r = search.mcts_search(KalahState.initial(3, 3), iterations=40, seed=1, **options)
        assert r["move"] in KalahState.initial(3, 3).legal_moves()
        assert calls == {"validate": 1, "tree": 0}, (options, calls)


@pytest.mark.slow
def test_a_tournament_parses_each_spec_once(monkeypatch):
    from conftest import kalah_match as KalahMatch
    from jitsearch.arena import game_match
    from jitsearch.arena.matches import run_kalah_tournament

    parsed = []
    real = game_match.parse_agent
    monkeypatch.setattr(game_match, "parse_agent", lambda spec, **kw: parsed.append(spec) or real(spec, **kw))
    game_match.agent_template.cache_clear()
    specs = ("alphabeta:depth=2", "mcts:iterations=30")
    r = run_kalah_tournament(*specs, KalahMatch(3, 3, False, 200, 2, seed=5), 4)
    assert r["games"] == 8
    assert sorted(parsed) == sorted(specs)  # once each, for 8 games


#: Modules above ``games/`` that still import a game package by name (the game protocol's
#: registry is the way: ``jitsearch.games.get(name)``, and a game's own code is its ``Game``'s
#: hooks). None: everything above ``games/`` is written once over the protocol.
GAME_IMPORT_CEILING = 0
#: Modules written over the game protocol: they import no game package.
PROTOCOL_MODULES = ("jitsearch.kernels.game_mcts", "jitsearch.kernels.cuda_game_mcts",
                    "jitsearch.kernels.tree_step", "jitsearch.mcts.game", "jitsearch.kernels.game_shared_tree",
                    "jitsearch.kernels.cuda_game_shared_tree", "jitsearch.mcts.game_shared",
                    "jitsearch.kernels.game_alphabeta",
                    "jitsearch.kernels.game_playouts", "jitsearch.kernels.cuda_game_playouts",
                    "jitsearch.mcts.multi",
                    "jitsearch.mcts.shared", "jitsearch.mcts.tree", "jitsearch.mcts.search", "jitsearch.mcts.config")


def _game_package_imports(name: str):
    """(line, target) of each import of a game package (``jitsearch.games.X...``) by ``name``."""
    out = []
    for line, target, names, _ in _imports(name):
        parts = target.split(".")
        if len(parts) >= 3 and parts[1] == "games" and parts[2] not in ("protocol", "playout"):
            out.append((line, target))
        elif target == "jitsearch.games":
            out += [(line, f"{target}.{n}") for n in names if f"{target}.{n}" in MODULES
                    and n not in ("protocol", "playout")]
    return out


def test_modules_above_games_reach_games_through_the_registry():
    above = {n: _game_package_imports(n) for n in MODULES
             if _layer(n) not in ("top", "ground", "trees", "search", "games")}
    naming = sorted(n for n, hits in above.items() if hits)
    for name in PROTOCOL_MODULES:
        assert not above[name], f"{name} imports a game package: {above[name]}"
    assert len(naming) <= GAME_IMPORT_CEILING, (
        f"{len(naming)} modules above games/ import a game package (ceiling {GAME_IMPORT_CEILING}); "
        f"take the game from jitsearch.games.get(name) instead: {naming}")


def test_no_module_above_games_is_named_for_a_game():
    """A module above ``games/`` serves every game: none is named for one (``kalah_tournament.py`` was)."""
    from jitsearch.games import GAMES

    names = [g.replace("_", "") for g in GAMES]
    named = sorted(n for n, path in MODULES.items() if _layer(n) not in ("top", "ground", "trees", "search", "games")
                   and any(g in path.stem.replace("_", "").lower() for g in names))
    assert not named, f"modules above games/ named for a game (move the game's code into its package): {named}"


#: Modules above ``games/`` that name a registered game in code (a string constant outside docstrings), each
#: for a reason of its own; any other names the game it runs only through a value it was given.
NAMES_A_GAME = {
    "jitsearch.benchmarks.c_reference": "the hand-written C reference plays Kalah",
    "jitsearch.benchmarks.mancala_paper": "the Mancala paper's tables are Kalah(6,4)",
    "jitsearch.benchmarks.gpu_mcts_bench": "the GPU MCTS figures are Kalah's",
    "jitsearch.benchmarks.playouts_bench": "Kalah's SIMD playouts against the protocol's",
    "jitsearch.benchmarks.mcts_bench": "Kalah's MCTS kernels against the protocol's",
}


def _game_name_strings(name: str, games) -> list:
    """(line, value) of each string constant of ``name`` that is a registered game's name, docstrings left
    out."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in games
            and id(node) not in docstrings]


def test_modules_above_games_name_no_game_but_the_known_ones():
    from jitsearch.games import GAMES

    above = [n for n in MODULES if _layer(n) not in ("top", "ground", "trees", "search", "games")]
    naming = {n: hits for n in above if (hits := _game_name_strings(n, set(GAMES)))}
    unknown = {n: hits for n, hits in naming.items() if n not in NAMES_A_GAME}
    assert not unknown, f"modules above games/ that name a game in code (take it as a value instead): {unknown}"
    stale = sorted(set(NAMES_A_GAME) - set(naming))
    assert not stale, f"no longer name a game: drop them from NAMES_A_GAME: {stale}"


def test_no_file_above_games_mentions_a_game_package():
    """Not even in a docstring, a comment or the web page's scripts: what runs above ``games/`` reaches a
    game through the protocol, and a game's own code (its board script included) lives in its package."""
    root = Path(jitsearch.__file__).parent
    pattern = re.compile(r"games\.(kalah|oware|connect)")
    hits = sorted(str(p.relative_to(root)) for layer in ("kernels", "mcts", "arena", "interop", "cli")
                  for p in (root / layer).rglob("*") if p.suffix in (".py", ".js", ".html", ".css")
                  and "__pycache__" not in p.parts and pattern.search(p.read_text(encoding="utf-8")))
    assert not hits, f"files above games/ that name a game package: {hits}"

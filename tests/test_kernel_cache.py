"""Where compiled kernels are cached: the package's under the user's cache
(``$XDG_CACHE_HOME/jitsearch/numba``), never beside its sources; ``$NUMBA_CACHE_DIR``
wins; functions outside the package keep Numba's usual place."""

import json
import time
import os
import subprocess
import sys
from pathlib import Path

import jitsearch

PACKAGE = Path(jitsearch.__file__).parent

_CODE = """
import json, sys, time
import jitsearch
numba_imported = "numba" in sys.modules
from jitsearch import UniformTree, alphabeta
value = alphabeta(UniformTree(2, 3, seed=7)).value
sys.path.insert(0, sys.argv[1])
import outside
print(json.dumps({"numba_imported_by_import": numba_imported, "value": float(value), "outside": outside.twice(4)}))
"""

_OUTSIDE = """
from numba import njit

@njit(cache=True)
def twice(x):
    return 2 * x
"""


def _run(tmp_path, **env_changes):
    started = _newest_in_tree_cache_file()
    outside = tmp_path / "outside_src"
    outside.mkdir()
    (outside / "outside.py").write_text(_OUTSIDE)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(env_changes)
    r = subprocess.run([sys.executable, "-c", _CODE, str(outside)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _newest_in_tree_cache_file() == started, "a kernel was cached beside the package's sources"
    return json.loads(r.stdout), outside


def _newest_in_tree_cache_file():
    files = [p for p in PACKAGE.rglob("__pycache__/*") if p.suffix in (".nbi", ".nbc")]
    return max((p.stat().st_mtime_ns, str(p)) for p in files) if files else None


def _cached_under(root: Path) -> set[str]:
    return {p.name for p in root.rglob("*.nbi")} if root.exists() else set()


def test_the_package_kernels_are_cached_in_the_users_cache_and_outside_code_where_numba_puts_it(tmp_path):
    out, outside = _run(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert out["numba_imported_by_import"] is False and out["outside"] == 8
    ours = _cached_under(tmp_path / "xdg" / "jitsearch" / "numba")
    assert any(name.startswith("depth_first.") for name in ours), ours
    assert not any(name.startswith("outside.") for name in ours), ours
    assert any(name.startswith("outside.twice") for name in _cached_under(outside / "__pycache__"))


def test_numba_cache_dir_wins_over_the_users_cache(tmp_path):
    out, _ = _run(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert not _cached_under(tmp_path / "xdg")
    assert any(name.startswith("depth_first.") for name in _cached_under(tmp_path / "numba"))


def test_the_cache_folder_changes_with_any_source_file_and_nothing_else(tmp_path):
    from jitsearch._jit import sources_digest

    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    first = sources_digest(str(tmp_path))
    (tmp_path / "sub" / "__pycache__").mkdir()
    (tmp_path / "sub" / "__pycache__" / "b.nbi").write_bytes(b"compiled")
    (tmp_path / "notes.txt").write_text("not a source")
    assert sources_digest(str(tmp_path)) == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")  # an inlined helper edited: another folder
    assert sources_digest(str(tmp_path)) != first


def test_cache_folders_of_other_sources_go_after_a_week_unused(tmp_path):
    from jitsearch._jit import STALE_CACHE_DAYS, _forget_stale_caches

    old, recent, current = (tmp_path / name for name in ("old", "recent", "current"))
    for folder in (old, recent):
        folder.mkdir()
        (folder / "k.nbi").write_bytes(b"")
    week_ago = time.time() - (STALE_CACHE_DAYS + 1) * 86400
    os.utime(old, (week_ago, week_ago))
    _forget_stale_caches(str(current))
    assert current.is_dir() and recent.is_dir() and not old.exists()

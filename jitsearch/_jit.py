"""JIT accounting shared by every layer: how long Numba spent compiling or
loading kernels, and a one-time notice on stderr when a real compilation
starts. Nothing here imports Numba at module level."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
import types


NOTICE = "compiling (first run only)..."
_SPIN = "|/-\\"
_told = False
_told_lock = threading.Lock()


def announce_compiling() -> bool:
    """Print the compile notice on stderr, once per process; True the first time."""
    global _told
    with _told_lock:
        if _told:
            return False
        _told = True
    stream = _notice.stream if _notice is not None else sys.stderr
    try:
        stream.write(NOTICE + ("" if _notice is not None and _notice.spinning else "\n"))
        stream.flush()
    except (OSError, ValueError):
        pass
    return True


def _listen(event, kinds, on_start, on_end=None):
    """Register ``on_start(ev)`` / ``on_end(ev)`` for Numba's events ``kinds``
    (``event``: the ``numba.core.event`` module); returns the listener."""

    class _Listener(event.Listener):
        def on_start(self, ev):
            on_start(ev)

        def on_end(self, ev):
            if on_end is not None:
                on_end(ev)

    listener = _Listener()
    for kind in kinds:
        event.register(kind, listener)
    return listener


def _unlisten(listener, kinds) -> None:
    from numba.core import event

    for kind in kinds:
        try:
            event.unregister(kind, listener)
        except (ValueError, KeyError):
            pass


def after_import(name: str, callback) -> None:
    """Call ``callback(module)`` once module ``name`` is imported: now if it
    already is, else just after its import (a one-shot import hook), so a
    package can adjust Numba without importing it."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    import importlib.abc
    import importlib.machinery

    class _Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            exec_module = spec.loader.exec_module

            def exec_then_call(module):
                exec_module(module)
                callback(module)

            spec.loader.exec_module = exec_then_call
            return spec

    sys.meta_path.insert(0, _Hook())


#: Days a cache folder of other sources (an older version, an edited checkout) is kept unused.
STALE_CACHE_DAYS = 7
_cache_dir = None


def numba_cache_dir() -> str:
    """Where the package's compiled kernels are cached:
    ``$XDG_CACHE_HOME/jitsearch/numba/DIGEST`` (``~/.cache`` when unset), one
    folder per source folder below it. ``DIGEST`` is of every source file of
    the package: Numba checks only a kernel's own file, so a kernel that
    inlines a function of another file (edited since, or another version at
    the same path) could otherwise load stale code. ``$NUMBA_CACHE_DIR``, when
    set, wins (Numba's own locator then places every cache, ours included)."""
    global _cache_dir
    if _cache_dir is None:
        from ._io import user_cache_dir

        _cache_dir = str(user_cache_dir("numba", sources_digest(os.path.dirname(os.path.abspath(__file__)))))
    return _cache_dir


def sources_digest(package: str) -> str:
    """16 hex digits of the names and contents of every ``.py`` file below ``package``."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                h.update(os.path.relpath(path, package).encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def _forget_stale_caches(current: str) -> None:
    """Remove the cache folders of other sources unused for :data:`STALE_CACHE_DAYS` days."""
    import shutil

    root, now = os.path.dirname(current), time.time()
    try:
        os.makedirs(current, exist_ok=True)
        os.utime(current)  # in use: never stale
        for entry in os.scandir(root):
            if entry.path != current and now - entry.stat().st_mtime > STALE_CACHE_DAYS * 86400:
                shutil.rmtree(entry.path, ignore_errors=True)
    except OSError:
        pass  # a read-only cache: Numba falls back to its own places


def keep_kernel_cache_outside_sources() -> None:
    """Cache the package's ``cache=True`` kernels under :func:`numba_cache_dir`
    instead of ``__pycache__`` beside the sources: an installed package, a
    read-only checkout and a source tree all stay free of compiled code (a
    generic kernel compiled for one game carries that game's function names).
    Functions outside the package keep Numba's usual places. The locator is
    added when ``numba.core.caching`` is imported, before any kernel of the
    package is decorated."""
    after_import("numba.core.caching", _add_locator)


def _add_locator(caching) -> None:
    if any(getattr(c, "_jitsearch", False) for c in caching.CacheImpl._locator_classes):
        return
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep

    class PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """A kernel of this package: cached under :func:`numba_cache_dir`."""

        _jitsearch = True

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(numba_cache_dir(), self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(package):
                return None
            return super().from_function(py_func, py_file)

    _forget_stale_caches(numba_cache_dir())
    classes = caching.CacheImpl._locator_classes
    # after Numba's $NUMBA_CACHE_DIR locator (a user's choice wins), before the in-tree one
    at = next((i + 1 for i, c in enumerate(classes) if c.__name__ == "UserProvidedCacheLocator"), 0)
    classes.insert(at, PackageCacheLocator)


class CompileNotice:
    """The process-wide compile notice of the command line: the notice line
    as soon as Numba starts a real compilation (a cache load is not one),
    and on a terminal a spinner after it while the first compilation goes
    on, ended by the seconds it took. Numba is not imported for it: an import
    hook registers the listener when a command imports Numba."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.spinning = bool(getattr(self.stream, "isatty", lambda: False)())
        self._depth = 0
        self._t0 = 0.0
        self._busy = 0.0
        self._lock = threading.Lock()
        self._ended = False
        self._hook_numba_import()
        if self.spinning:
            threading.Thread(target=self._spin, name="jitsearch-compile-notice", daemon=True).start()

    def on_start(self, ev):
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._t0 = time.perf_counter()
        announce_compiling()

    def on_end(self, ev):
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self._busy += time.perf_counter() - self._t0
                if self.spinning and _told and not self._ended:
                    self._ended = True  # one line: later compilations (a second kernel) pass silently
                    try:
                        self.stream.write(f"\r{NOTICE} {self._busy:.1f} s\n")
                        self.stream.flush()
                    except (OSError, ValueError):
                        pass

    def _register(self, event) -> None:
        """Listen to ``numba.core.event`` (the module, just imported)."""
        _listen(event, ("numba:compile",), self.on_start, self.on_end)

    def _hook_numba_import(self) -> None:
        """Register as soon as ``numba.core.event`` is imported (now if it
        already is), so no compilation is missed and none is waited for."""
        after_import("numba.core.event", self._register)

    def _spin(self) -> None:
        frame = 0
        while True:
            time.sleep(0.1)
            with self._lock:
                if self._ended:
                    return
                if self._depth > 0 and _told:
                    frame += 1
                    try:
                        self.stream.write("\r" + NOTICE + " " + _SPIN[frame % 4])
                        self.stream.flush()
                    except (OSError, ValueError):
                        return


_notice: CompileNotice | None = None


def install_compile_notice() -> None:
    """Start the command line's compile notice (once per process)."""
    global _notice
    if _notice is None:
        _notice = CompileNotice()


class JitWatch:
    """Counts the time Numba spends holding its compiler lock (compiling or
    loading a cached kernel) and prints ``compiling (first run only)...``
    on stderr the first time a real compilation starts (a cache load does not
    count as one).

    Use ``with JitWatch() as jit: ...``; ``jit.seconds`` is the JIT time so
    far, so ``wall - jit.seconds`` is the search's own time.
    """

    def __init__(self, notify: bool = True):
        self.notify = notify
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0
        self._told = False
        self._lock = threading.Lock()

    # numba.core.event listener protocol ---------------------------------------------
    def on_start(self, event):
        if event.kind == "numba:compile":
            if self.notify and not self._told:
                self._told = True
                announce_compiling()
            return
        with self._lock:
            if self._depth == 0:
                self._t0 = time.perf_counter()
            self._depth += 1

    def on_end(self, event):
        if event.kind == "numba:compile":
            return
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._t0

    def __enter__(self):
        from numba.core import event

        self._listener = _listen(event, _WATCH_KINDS, self.on_start, self.on_end)
        with _WATCHES_LOCK:
            _WATCHES.append(self)
        return self

    def __exit__(self, *exc):
        _unlisten(self._listener, _WATCH_KINDS)
        with _WATCHES_LOCK:
            if self in _WATCHES:
                _WATCHES.remove(self)
        return False


_WATCH_KINDS = ("numba:compile", "numba:compiler_lock")
#: The JitWatch blocks now open: time spent waiting for compile helpers counts as JIT time in each.
_WATCHES: list = []
_WATCHES_LOCK = threading.Lock()


class CompileBeside:
    """Helper processes that compile other kernels while this one compiles.

    Numba compiles one kernel at a time in a process. Inside ``with
    CompileBeside(argvs) as beside:``, the first real compilation this
    process starts (a cold cache) launches one process per argv (same
    environment, so the same Numba cache, no output); after the block,
    :meth:`wait` waits for them, so that the kernels they compiled are then
    loaded from the cache instead of compiled a second time. With a warm cache
    nothing is launched. A helper that fails changes nothing but the time.
    ``JITSEARCH_COMPILE_HELPERS=0`` turns helpers off. Use :meth:`close` in a
    ``finally`` (kills what still runs)."""

    def __init__(self, argvs):
        import os

        self.argvs = [list(a) for a in argvs]
        if os.environ.get("JITSEARCH_COMPILE_HELPERS", "1") == "0" or (os.cpu_count() or 1) < 2:
            self.argvs = []
        self.procs: list = []
        self.compiled = False
        self._lock = threading.Lock()
        self._listener = None

    def _start(self) -> None:
        import subprocess

        for argv in self.argvs:
            try:
                self.procs.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.DEVNULL))
            except OSError:
                return

    @staticmethod
    def python_argv(module: str, function: str, *args) -> list[str]:
        """The argv of a helper that runs ``module.function()`` (which reads
        ``args`` from ``sys.argv[1:]``) in this Python."""
        return [sys.executable, "-c", f"from {module} import {function}; {function}()", *map(str, args)]

    def _on_compile(self, ev) -> None:
        with self._lock:
            if self.compiled:
                return
            self.compiled = True
        self._start()

    def __enter__(self):
        from numba.core import event

        self._listener = _listen(event, ("numba:compile",), self._on_compile)
        return self

    def __exit__(self, *exc):
        _unlisten(self._listener, ("numba:compile",))
        return False

    def wait(self, seconds: float = 300.0) -> None:
        """Wait for the helpers (at most ``seconds`` each; a late one is killed)."""
        import subprocess

        if not self.procs:
            return
        t0 = time.perf_counter()
        for proc in self.procs:
            try:
                proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        waited = time.perf_counter() - t0  # compile time, done elsewhere: not a search's own time
        with _WATCHES_LOCK:
            for watch in _WATCHES:
                watch.seconds += waited

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _feed(h, obj, seen: set, depth: int) -> None:
    """Feed a structural description of ``obj`` to ``h``: values by value, functions by their code,
    constants, closure cells and referenced globals, compiled functions by their Python source
    function and options. No id or address enters it, so it is the same in every process."""
    import numpy as np  # (loaded wherever a kernel is built; not at this module's import)

    def add(text):
        h.update(text.encode() if isinstance(text, str) else text)

    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        add(f"{type(obj).__name__}:{obj!r};")
        return
    if isinstance(obj, np.ndarray):
        add(f"ndarray:{obj.dtype.str}:{obj.shape};")
        add(np.ascontiguousarray(obj).tobytes())
        return
    if isinstance(obj, (np.generic, np.dtype)):
        add(f"{type(obj).__name__}:{obj!r};")
        return
    if isinstance(obj, types.ModuleType):
        add(f"module:{obj.__name__};")
        return
    if isinstance(obj, type):
        add(f"type:{obj.__module__}.{obj.__qualname__};")
        return
    if id(obj) in seen or depth > 12:
        add(f"seen:{type(obj).__qualname__};")
        return
    seen.add(id(obj))
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        add(f"{type(obj).__name__}{len(items)}(")
        for x in items:
            _feed(h, x, seen, depth + 1)
        add(")")
    elif isinstance(obj, dict):
        add(f"dict{len(obj)}(")
        for k in sorted(obj, key=repr):
            _feed(h, k, seen, depth + 1)
            _feed(h, obj[k], seen, depth + 1)
        add(")")
    elif isinstance(obj, types.CodeType):
        add(f"code:{obj.co_name}:{obj.co_argcount}:")
        add(obj.co_code)
        _feed(h, obj.co_names, seen, depth + 1)
        _feed(h, obj.co_consts, seen, depth + 1)
    elif isinstance(obj, types.FunctionType):
        add(f"function:{obj.__module__}.{obj.__qualname__}(")
        _feed(h, obj.__code__, seen, depth + 1)
        _feed(h, obj.__defaults__, seen, depth + 1)
        cells = tuple(c.cell_contents for c in obj.__closure__ or ())
        _feed(h, cells, seen, depth + 1)
        used = {name: obj.__globals__[name] for name in _global_names(obj.__code__) if name in obj.__globals__}
        _feed(h, used, seen, depth + 1)
        add(")")
    elif hasattr(obj, "py_func") and hasattr(obj, "targetoptions"):  # a Numba dispatcher
        add("dispatcher(")
        _feed(h, {k: repr(v) for k, v in obj.targetoptions.items()}, seen, depth + 1)
        _feed(h, obj.py_func, seen, depth + 1)
        add(")")
    elif isinstance(obj, types.SimpleNamespace):
        add("namespace")
        _feed(h, vars(obj), seen, depth + 1)
    else:  # anything else by its type and public attributes (ids and caches are private)
        add(f"object:{type(obj).__module__}.{type(obj).__qualname__}(")
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            _feed(h, {k: v for k, v in attrs.items() if not k.startswith("_")}, seen, depth + 1)
        add(")")


def _global_names(code) -> set:
    """The global names ``code`` and the code objects nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def content_digest(obj) -> str:
    """A hex digest of what ``obj`` computes (see :func:`_feed`): equal for equal sources over
    equal captured values, in every process."""
    h = hashlib.sha256()
    _feed(h, obj, set(), 0)
    return h.hexdigest()


def stable_ids(jit):
    """``jit`` (a decorator such as ``numba.njit(cache=True)``) that gives
    each dispatcher it makes a fixed id: ``module.qualname`` and its options.

    Numba keys a cached closure by the pickled contents of its closure
    cells, and a dispatcher pickles with a random per-process id. A cached
    function that closes over other compiled functions (the rules a build
    factory compiles) therefore missed the cache in every new process and
    compiled again (about 0.9 s for Oware's rules on each CLI run). With
    fixed ids the key is the same in every process.

    A closure (a function a factory makes) is compiled as a copy whose
    qualified name ends in a digest of its content (:func:`content_digest`:
    code, captured values, referenced globals). Numba names a compiled
    function's symbol by its qualified name, its argument types and a
    counter that restarts in every process, so two closures of one source
    over different values (Kalah's playout batch for 1 and for 3 houses),
    compiled in different processes and loaded from the disk cache into a
    third, could share a symbol, and a caller linked to one ran the other
    (a playout of 3 houses that never ended). With the digest in the name
    they cannot; the disk cache keeps one file per content."""

    def decorate(fn):
        if isinstance(fn, types.FunctionType) and fn.__closure__:
            tag = content_digest(fn)[:16]
            copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
            copy.__kwdefaults__, copy.__doc__, copy.__module__ = fn.__kwdefaults__, fn.__doc__, fn.__module__
            copy.__qualname__ = f"{fn.__qualname__}_{tag}"
            fn = copy
        dispatcher = jit(fn)
        if hasattr(dispatcher, "_set_uuid"):
            options = ",".join(f"{k}={v!r}" for k, v in sorted(getattr(dispatcher, "targetoptions", {}).items()))
            try:
                dispatcher._set_uuid(f"jitsearch:{fn.__module__}.{fn.__qualname__}[{options}]")
            except AssertionError:  # an id was already given (pickled, or asked for): keep it
                pass
        return dispatcher

    return decorate

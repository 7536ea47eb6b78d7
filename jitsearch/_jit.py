"""JIT accounting shared by every layer: how long Numba spent compiling or
loading kernels, and a one-time notice on stderr when a real compilation
starts. Nothing here imports Numba at module level."""

from __future__ import annotations

import sys
import threading
import time


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
                sys.stderr.write("compiling (first run only)...\n")
                sys.stderr.flush()
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

        watch = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                watch.on_start(ev)

            def on_end(self, ev):
                watch.on_end(ev)

        self._listener = _Listener()
        for kind in ("numba:compile", "numba:compiler_lock"):
            event.register(kind, self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        for kind in ("numba:compile", "numba:compiler_lock"):
            try:
                event.unregister(kind, self._listener)
            except (ValueError, KeyError):
                pass
        return False

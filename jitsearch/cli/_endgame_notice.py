"""What the CLI prints around an endgame database build (both games, ``solve``
and ``openings --exact``): the estimate before it, the progress during it."""

from __future__ import annotations

from .common import stderr


def announce_endgame_build(est: dict, what: str, path) -> bool:
    """One line on stderr before an endgame database is built: ``what`` it
    holds, its positions, its size on disk and in memory, the estimated
    time (``est``: an ``estimate_*build`` dict, Kalah's or Oware's) and
    where it is cached (``path``, None: not cached); or, when ``path`` is
    already a database, that it is verified first (if it is big). Returns
    whether a build is announced. Used by ``solve`` (both games) and
    ``openings --exact``."""
    from ..games.kalah.endgame_files import VERIFY_ALWAYS_BYTES, needs_verification, record_path
    from ..trees.memory import format_bytes

    if path is not None and path.is_file() and record_path(path).is_file():
        if needs_verification(path) and est["file_bytes"] > VERIFY_ALWAYS_BYTES:
            stderr.print(f"endgame database: {path} ({format_bytes(est['file_bytes'])}), verifying its checksums "
                         "first (once a process)", soft_wrap=True)
        return False
    threads = est.get("threads", 1)
    stderr.print(f"endgame database: {what}, {est['positions']:,} positions, "
                 f"{format_bytes(est['file_bytes'])} on disk, {format_bytes(est['ram_bytes'])} of memory to build, "
                 f"about {_duration(est['seconds'])} on {threads} thread{'s' if threads != 1 else ''} (measured on "
                 "an idle 2-core machine: a busy one takes longer)"
                 + (f" (built once, then cached in {path.parent} and memory-mapped)" if path is not None else ""),
                 soft_wrap=True)
    return True


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def endgame_progress_printer(label: str = "endgame database"):
    """A ``progress(done, total, seconds, detail="")`` for an endgame build: one line on
    stderr with the time left, from the rate measured since the first report
    (which may include compiling the build's kernels: the estimate printed
    before the build assumes an idle machine)."""
    first_report = []

    def progress(done, total, seconds, detail=""):
        if not first_report:
            first_report.append((done, seconds))
        done0, seconds0 = first_report[0]
        left = ""
        if done0 < done < total and seconds - seconds0 > 2:
            left = f", about {(total - done) * (seconds - seconds0) / (done - done0):.0f} s left"
        stderr.print(f"{label}: {detail}{done:,} of {total:,} positions, {seconds:.1f} s{left}", soft_wrap=True)

    return progress

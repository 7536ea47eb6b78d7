"""Opening suites for tournaments of every game: positions read from a file, or
generated from a seed (optionally only balanced ones, where the game has a
search value: :attr:`~jitsearch.games.protocol.Game.balance`).

A suite is a tuple of position texts (the game's ``to_text``, e.g. Kalah's
``4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0``); pair ``p`` of a tournament starts from
``suite[p % len(suite)]`` and plays it with both seats, so every opening is
played from both sides once per ``len(suite)`` pairs.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..games import get as get_game
from ..rng import mix64_py

#: Openings in one suite at most.
MAX_OPENINGS = 100_000
#: Random plies of a generated opening: uniformly in this range (inclusive).
RANDOM_PLIES = (2, 8)
#: Depth of the alpha-beta search that judges balance (store-difference evaluation).
BALANCE_DEPTH = 6
#: Candidates tried per requested balanced opening before giving up.
BALANCE_TRIES = 200


def read_game_openings(path, game, variant: dict, *, check=None) -> tuple[str, ...]:
    """The positions of ``game`` in ``path``, one per line (blank lines and ``#`` comments skipped),
    checked: each parses as a position of ``variant`` (the game's ``from_text``; its compiled variant
    ``cfg`` that of the variant's start), is not over and passes ``check(state, "file:line")`` when
    given, else the game's :attr:`~jitsearch.games.protocol.ArenaHooks.check_opening` (Kalah: the board's
    houses and seeds). UTF-8, with or without a byte-order mark. Errors name ``file:line``."""
    game = get_game(game)
    if check is None and game.arena is not None and game.arena.check_opening is not None:
        def check(state, where):
            game.arena.check_opening(state, variant, where)
    path = Path(path)
    want = game.cfg(game.initial(**variant))
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise ValueError(f"openings file {path} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"openings file {path} is a directory") from None
    except UnicodeDecodeError:
        raise ValueError(f"openings file {path} is not a text file") from None
    out = []
    for number, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        where = f"{path}:{number}"
        try:
            s = game.from_text(text, **variant)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if check is not None:
            check(s, where)
        if game.cfg(s) != want:
            raise ValueError(f"{where}: not a position of the tournament's variant ({game.cfg(s)} here, {want} "
                             f"there)")
        if s.is_over:
            raise ValueError(f"{where}: the game is over in this position")
        out.append(s.to_text())
        if len(out) > MAX_OPENINGS:
            raise ValueError(f"{path} holds more than {MAX_OPENINGS:,} openings")
    if not out:
        raise ValueError(f"openings file {path} holds no position")
    return tuple(out)


def random_game_openings(count: int, game, variant: dict, seed: int, *, balanced: float | None = None,
                         depth: int = BALANCE_DEPTH) -> tuple[str, ...]:
    """``count`` distinct positions of ``game`` after RANDOM_PLIES random plies from the start of
    ``variant``, drawn from ``seed`` (the same seed gives the same suite). With ``balanced``, keep
    only positions whose depth-``depth`` search value (the game's ``balance`` hook, in its margin's
    units) lies within ``balanced`` of 0."""
    game = get_game(game)
    if balanced is not None and game.balance is None:
        raise ValueError(f"balanced openings need a search value of {game.name} positions, which it lacks")
    if not isinstance(count, int) or not 1 <= count <= MAX_OPENINGS:
        raise ValueError(f"random openings: count must be an integer in 1..{MAX_OPENINGS:,}, got {count!r}")
    if balanced is not None and not balanced >= 0:
        raise ValueError(f"balanced margin must be >= 0, got {balanced!r}")
    rng = random.Random(mix64_py(seed * 0x2545F4914F6CDD1D + 17))
    seen: set[str] = set()
    out = []
    tries = 0
    limit = BALANCE_TRIES * count if balanced is not None else 50 * count
    while len(out) < count:
        tries += 1
        if tries > limit:
            what = f"within {balanced} of balance at depth {depth}" if balanced is not None else "distinct"
            raise ValueError(f"found only {len(out)} of {count} random openings {what} in {limit:,} tries: "
                             f"ask for fewer or widen --balanced")
        s = game.initial(**variant)
        for _ in range(rng.randint(*RANDOM_PLIES)):
            if s.is_over:
                break
            s = s.play(rng.choice(s.legal_moves()))
        if s.is_over:
            continue
        text = s.to_text()
        if text in seen:
            continue
        seen.add(text)
        if balanced is not None and abs(game.balance(s, depth)) > balanced:
            continue
        out.append(text)
    return tuple(out)

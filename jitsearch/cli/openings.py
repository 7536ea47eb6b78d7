"""``jitsearch openings``: a balanced opening suite of a game that can value one (its arena hook
``suite_values``: Kalah's), :func:`jitsearch.arena.opening_suites.balanced_suite`, written as a
suite file that ``jitsearch tournament --openings FILE`` plays."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ._support import UserError, check_output_file, given_options, refuse_options, write_text_atomic
from .common import emit_json, stderr, stop_interrupted, stdout
from .game_options import DEFAULT_GAME, GameOpt, VariantOpt, initial_state, resolve_game, resolve_variant
from .solve import announce_endgame_build, endgame_progress_printer, in_cli_words


def _parse_plies(text: str) -> tuple[int, int]:
    from ..arena.opening_suites import MAX_PLIES

    parts = text.strip().split("-")
    try:
        lo, hi = (int(parts[0]), int(parts[0])) if len(parts) == 1 else (int(parts[0]), int(parts[1]))
        if len(parts) > 2:
            raise ValueError
    except ValueError:
        raise UserError(f"--plies takes LO-HI or K (plies from the start), got {text!r}") from None
    if not 1 <= lo <= hi <= MAX_PLIES:
        raise UserError(f"--plies must satisfy 1 <= LO <= HI <= {MAX_PLIES}, got {text!r}")
    return lo, hi


def _variant_words(game, variant: dict) -> list:
    """The options that choose ``variant`` of ``game`` on a command line: ``--game`` unless it is the
    default, the board flags for the options that have one (--houses, --seeds, --empty-capture), -V
    KEY=VALUE for the others; options at their default are left out."""
    words = [] if game.name == DEFAULT_GAME else ["--game", game.name]
    defaults = game.defaults()
    for key, value in variant.items():
        if key in ("houses", "seeds"):
            words += [f"--{key}", value]
        elif value == defaults.get(key):
            continue
        elif key == "empty_capture" and value is True:
            words.append("--empty-capture")
        else:
            words += ["-V", f"{key}={int(value) if isinstance(value, bool) else value}"]
    return words


def _command(game, variant, plies, within, exact, depth, count, seed, prefilter_depth,
             prefilter_slack, endgame_seeds, max_nodes, out) -> str:
    """The command line that makes this suite again (every option that changes it)."""
    words = ["jitsearch", "openings", *_variant_words(game, variant)]
    words += ["--plies", f"{plies[0]}-{plies[1]}", "--within", within]
    words += ["--exact"] if exact else ["--depth", depth]
    words += ["--count", count, "--seed", seed, "--prefilter-depth", prefilter_depth or 0,
              "--prefilter-slack", prefilter_slack]
    if exact:
        if game.database is not None:
            words += ["--endgame-seeds", endgame_seeds]
        words += ["--max-nodes", max_nodes]
    if out is not None:
        words += ["--out", out]
    return " ".join(shlex.quote(str(w)) for w in words)


def _announce_endgame(database, state, endgame_seeds, cache_dir):
    """Before the game's endgame ``database`` is built: its size and time (``solve``'s line);
    returns the progress printer for its build."""
    from ..arena.opening_suites import ENDGAME_MAX_BYTES
    from ..trees.memory import format_bytes

    try:
        est = database.estimate(state, endgame_seeds, ENDGAME_MAX_BYTES)
    except ValueError as exc:
        raise UserError(f"--endgame-seeds: {exc}") from None
    if est["ram_bytes"] > ENDGAME_MAX_BYTES:
        raise UserError(f"the endgame database of {endgame_seeds} seeds needs {format_bytes(est['ram_bytes'])} of "
                        f"memory to build, above the {format_bytes(ENDGAME_MAX_BYTES)} openings allows: lower "
                        "--endgame-seeds")
    path = None if cache_dir is None else database.cache_path(cache_dir, state, endgame_seeds)
    announce_endgame_build(None if path is None else database.cached(path), est,
                           f"<= {endgame_seeds} seeds {database.holds}", path)
    return endgame_progress_printer()


def _interrupted_message(result, count, out, existed, cache_dir) -> str:
    """What a Ctrl-C left: the database (kept only when finished), the openings found, the file (written
    only when an opening was found)."""
    found = len(result["openings"])
    if result.get("interrupted_in") == "endgame database":
        text = ("while the endgame database was built or loaded: nothing of an unfinished database was written"
                + (f" to {cache_dir}" if cache_dir is not None else "") + ", no opening was searched")
    else:
        text = f"{found} of {count} openings were found"
    if out is None:
        return text
    if found:
        return f"{text} and written to {out}"
    return f"{text}; {out} was " + ("left as it was" if existed else "not written")


@in_cli_words
def openings(
    ctx: typer.Context,
    game_name: GameOpt = DEFAULT_GAME,
    variant: VariantOpt = None,
    houses: Annotated[Optional[int], typer.Option("--houses", help="Kalah: houses per side (-V houses=; default "
                                                  "6).", show_default=False)] = None,
    seeds: Annotated[Optional[int], typer.Option("--seeds", help="Kalah: seeds per house (-V seeds=; default 4).",
                                                 show_default=False)] = None,
    empty_capture: Annotated[bool, typer.Option("--empty-capture", help="Kalah: the empty-capture rule "
                                                                      "(-V empty_capture=1).")] = False,
    plies: Annotated[str, typer.Option("--plies", help="Plies from the start, LO-HI (or K); extra-turn moves "
                                                       "count.")] = "2-6",
    within: Annotated[int, typer.Option("--within", help="Keep positions whose value (player 0's margin) is "
                                                         "within this many seeds of 0.")] = 2,
    exact: Annotated[bool, typer.Option("--exact", help="Values by the game's exact solver (small boards, e.g. "
                                                        "Kalah(6,4)).")] = False,
    depth: Annotated[
        Optional[int], typer.Option("--depth", help="Values by an iterative-deepening alpha-beta search to this "
                                                    "depth instead of --exact.", show_default=False)
    ] = None,
    count: Annotated[int, typer.Option("--count", help="Openings wanted.")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the candidates' order.")] = 0,
    prefilter_depth: Annotated[
        int, typer.Option("--prefilter-depth", help="Depth of the cheap search that drops candidates first (0: "
                                                    "none).")
    ] = 10,
    prefilter_slack: Annotated[
        int, typer.Option("--prefilter-slack", help="The prefilter keeps values within --within plus this.")
    ] = 2,
    endgame_seeds: Annotated[
        int, typer.Option("--endgame-seeds", help="--exact: endgame database of positions with at most this many "
                                                  "seeds in the houses (built once, cached).")
    ] = 20,
    endgame_cache_dir: Annotated[
        Optional[Path], typer.Option("--endgame-cache-dir", help="--exact: where the endgame database is cached "
                                                                 "(default: the user cache).", show_default=False)
    ] = None,
    max_nodes: Annotated[
        int, typer.Option("--max-nodes", help="--exact: skip a position whose solve passes this many nodes.")
    ] = 300_000_000,
    out: Annotated[
        Optional[Path], typer.Option("--out", help="Suite file to write (rewritten after every opening found).",
                                     show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
):
    """Make a balanced opening suite: distinct positions a few plies from
    the start whose value (player 0's margin; Kalah: seeds) lies within
    --within of 0, for a game that can value them (Kalah).

    Candidates come in a seeded order that mixes depths and players to move;
    a cheap search drops the clearly unbalanced ones, then each is valued
    exactly (--exact) or by a deeper search (--depth D). The suite file
    (--out, else stdout) has a header saying how it was made and one line
    per opening: '<position>  # exact <value> plies <k> moves <pits>'.
    Progress goes to stderr. Ctrl-C stops the search, keeps the openings
    found so far in --out (and prints them) and exits with status 130.
    """
    from ..arena import opening_suites as suites

    game = resolve_game(game_name)
    if game.arena is None or game.arena.suite_values is None:
        raise UserError(f"{game.name} has no way to value a suite's positions (its arena hook suite_values): "
                        "make a suite for it with jitsearch tournament --random-openings K --balanced MARGIN")
    flags = {k: v for k, v in (("houses", houses), ("seeds", seeds)) if v is not None}
    if empty_capture:
        flags["empty_capture"] = True
    chosen = resolve_variant(game, variant, **flags)
    start = initial_state(game, chosen)
    lo_hi = _parse_plies(plies)
    if exact == (depth is not None):
        raise UserError("give exactly one of --exact (solve each position) and --depth D (search to depth D)")
    if not exact:
        refuse_options(given_options(ctx), ("endgame_seeds", "endgame_cache_dir", "max_nodes"),
                       "applies with --exact only")
    if within < 0:
        raise UserError(f"--within must be >= 0, got {within}")
    if not 1 <= count <= suites.MAX_COUNT:
        raise UserError(f"--count must lie in 1..{suites.MAX_COUNT}, got {count}")
    if depth is not None and not 1 <= depth <= suites.MAX_DEPTH:
        raise UserError(f"--depth must lie in 1..{suites.MAX_DEPTH}, got {depth}")
    if not 0 <= prefilter_depth <= suites.MAX_DEPTH:
        raise UserError(f"--prefilter-depth must lie in 0..{suites.MAX_DEPTH}, got {prefilter_depth}")
    if prefilter_slack < 0:
        raise UserError(f"--prefilter-slack must be >= 0, got {prefilter_slack}")
    if game.database is None:
        refuse_options(given_options(ctx), ("endgame_seeds", "endgame_cache_dir"),
                       f"needs an endgame database, which {game.name} has none of")
        endgame_seeds = 0
    if not 0 <= endgame_seeds <= 127:
        raise UserError(f"--endgame-seeds must lie in 0..127, got {endgame_seeds}")
    if max_nodes < 1:
        raise UserError(f"--max-nodes must be >= 1, got {max_nodes}")
    if out is not None:
        check_output_file(out)
    cache_dir = None
    if exact and endgame_seeds:
        cache_dir = endgame_cache_dir if endgame_cache_dir is not None else game.database.default_dir()
        if cache_dir.exists() and not cache_dir.is_dir():
            raise UserError(f"--endgame-cache-dir {cache_dir} is a file, not a directory")

    def command(found: int) -> str:
        """The command that makes this file again: a partial suite (Ctrl-C, or fewer found) is the first
        ``found`` openings of the same ordered search, so --count says ``found``."""
        return _command(game, chosen, lo_hi, within, exact, depth, min(count, found), seed,
                        prefilter_depth, prefilter_slack, endgame_seeds, max_nodes, out)
    pdepth = prefilter_depth or None
    board = suites.board_name(game=game, **chosen)

    def text_of(result) -> str:
        header = suites.suite_header(chosen, result, plies=lo_hi, command=command(len(result["openings"])),
                                     seed=seed, game=game)
        return suites.format_suite(header, result["openings"])

    def on_found(opening, found, stats):
        stderr.print(f"{len(found)}/{count} {opening.position}  {opening.method} {opening.value:+d} plies "
                     f"{opening.plies} ({stats['tried']} tried, {stats['seconds']:.0f} s)", soft_wrap=True)
        if out is not None:
            partial = {**stats, "openings": found, "method": opening.method}
            write_text_atomic(out, text_of(partial))

    endgame_progress = None
    if exact and endgame_seeds:
        endgame_progress = _announce_endgame(game.database, start, endgame_seeds, cache_dir)
    existed = out is not None and out.exists()
    result = suites.balanced_suite(game=game, **chosen, plies=lo_hi, within=within, exact=exact,
                                   depth=depth, count=count, seed=seed, prefilter_depth=pdepth,
                                   prefilter_slack=prefilter_slack, endgame_seeds=endgame_seeds if exact else 0,
                                   endgame_cache_dir=cache_dir, max_nodes=max_nodes, on_found=on_found,
                                   endgame_progress=endgame_progress)
    found = result["openings"]
    if found and out is not None:
        write_text_atomic(out, text_of(result))
    if as_json:
        emit_json({"game": game.name, **chosen, "plies": list(lo_hi),
                   "within": within, "count": count, "seed": seed, "command": command(len(found)),
                   "out": None if out is None else str(out),
                   "openings": [o.to_json() for o in found],
                   **{k: v for k, v in result.items() if k != "openings"}})
    elif out is None:
        if found:
            sys.stdout.write(text_of(result))
    elif found:
        values = [o.value for o in found]
        spread = ", ".join(f"{v:+d}: {values.count(v)}" for v in sorted(set(values)))
        stdout.print(f"{len(found)} openings ({spread}) written to {out}", soft_wrap=True)
    if result["interrupted"]:
        stop_interrupted(_interrupted_message(result, count, out, existed, cache_dir))
    if not found:
        raise UserError(f"no {board} position {lo_hi[0]}-{lo_hi[1]} plies from the start has a value within "
                        f"{within} of 0 ({result['tried']} tried): widen --within or --plies")
    if not result["complete"]:
        stderr.print(f"note: found {len(found)} of {count} openings ({result['candidates']} candidates, "
                     f"{result['too_big']} too big to solve)", soft_wrap=True)

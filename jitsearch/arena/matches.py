"""Matches of every game as engine testers run them: paired games scheduled on
the arena's executor (this process, a local Dask cluster or a remote one),
pentanomial statistics, an SPRT that stops the run, and several engines at
once (a gauntlet or a round robin with its crosstable).

A *match* is A against B over ``pairs`` pairs of one game of the protocol
(:class:`~jitsearch.arena.game_match.GameMatch`, :func:`match_of`;
:mod:`jitsearch.arena.game_match` plays and checks each game), and everything
here (the checked record file, ``resume``, Ctrl-C, the statistics) is the
same for every game. A task is a pair
(both seats, or the seat still missing on ``resume``); its records are
appended to the match's JSONL file in completion order, each with its pair
and seat, so the file, ``resume`` and the statistics do not depend on the
order. After every completed pair the statistics are recomputed
(:mod:`jitsearch.arena.stats`: W/D/L, pentanomial, Elo and nElo with 95%
intervals, LOS) and, with an SPRT, its log-likelihood ratio: reaching a bound
cancels the outstanding pairs. ``trajectory`` keeps (games, Elo and its
interval, LLR) after each pair for the plot.

``resume`` with fewer pairs than the file holds games of is refused (one
line saying how many pairs to ask for): leaving finished games out of the
result without a word would misreport the match.
"""

from __future__ import annotations

from dataclasses import asdict
from itertools import combinations

from ..games import get as get_game
from .executor import MAX_WORKERS, run_tasks
from .external_engine import EngineSettings, close_engines
from . import game_match
from .game_match import GameMatch, GameRecords, agent_template, play_lockstep, summarize
from .records import (MAX_PAIRS, RecordSink, check_count, check_out_path, check_records, config_id, game_key_text,
                      read_record_file, seal)
from .warm import warm_agents
from .stats import SPRT, Pentanomial, pentanomial_from_pairs, sprt_decision, summary, wdl_from_scores

FORMATS = ("gauntlet", "round-robin")
_SCORE = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def _play_pair(task):
    tag, a, b, match, pair, seats, engine_settings = task
    return tag, [game_match.play_one(a, b, match, pair, seat, engine_settings) for seat in seats]


def match_of(game, variant: dict, *, openings: int = 0, seed: int = 0, max_plies: int | None = None,
             suite=()) -> GameMatch:
    """The checked match of ``game`` (a name or a Game) in ``variant`` (defaults filled in); ``max_plies``
    None: the game's own ply cap (:attr:`ArenaHooks.max_plies <jitsearch.games.protocol.ArenaHooks>`:
    Kalah's 300, as Siljander's tournaments), else none."""
    game = get_game(game)
    if max_plies is None:
        max_plies = game.arena.max_plies if game.arena is not None else 0
    return GameMatch.of(game, variant, openings=openings, seed=seed, max_plies=max_plies, suite=tuple(suite))


def check_agents(specs, match: GameMatch, engine_settings: EngineSettings | None = None, *,
                 warm: bool = False) -> None:
    """Parse and check every agent before any game (a ``cmd:`` engine is started and asked for the board; a
    board an agent cannot play is one ``ValueError`` line); ``warm``: then compile the agents' kernels
    side by side (helper processes), not one after another (a game with ``config_agents``)."""
    game_match.check_agents(specs, match, engine_settings)
    if warm and match.rules.config_agents:
        warm_agents(specs, match.start_state(0))


class MatchRun:
    """One A-vs-B match: its checked record file, its records and statistics."""

    def __init__(self, a: str, b: str, match: GameMatch, pairs: int, *, out=None, resume: bool = False,
                 sprt: SPRT | None = None, engine_settings: EngineSettings | None = None):
        self.a, self.b, self.match, self.pairs, self.sprt = a, b, match, pairs, sprt
        self.engine_settings = engine_settings
        self.cid = config_id(a, b, match)
        self.settings = asdict(match)
        self.records: dict[tuple[int, int], dict] = {}
        self.notes: list[str] = []
        self.sink = None
        self.path = None
        self.trajectory: list[dict] = []
        if out is not None:
            self.path = check_out_path(out)
            rf = read_record_file(self.path)
            checked = check_records(rf, GameRecords(a, b, match), game_key_text)
            if checked and not resume:
                raise ValueError(f"{self.path} already holds this match's games: pass --resume or another --out")
            beyond = [key for key, _ in checked if key[0] >= pairs]
            if beyond:
                held = max(key[0] for key in beyond) + 1
                raise ValueError(f"{self.path} holds games of {held} pairs, more than the {pairs} asked for "
                                 f"({len(beyond)} of its games would be left out): ask for {held} pairs or more")
            self.records = dict(checked)
            self.notes = rf.notes
            self.sink = RecordSink(rf)
        for pair in sorted({p for p, _ in self.records}):
            self._pair_done(pair)

    # -- state ------------------------------------------------------------------------------

    def counts(self) -> Pentanomial:
        """Pentanomial counts over the completed pairs."""
        done = [(self.records[(p, 0)], self.records[(p, 1)]) for p in range(self.pairs)
                if (p, 0) in self.records and (p, 1) in self.records]
        return pentanomial_from_pairs([(_SCORE[x["a_result"]], _SCORE[y["a_result"]]) for x, y in done])

    def decided(self) -> str | None:
        """The SPRT's decision, or None while it continues (or without one)."""
        if self.sprt is None or self.counts().pairs == 0:
            return None
        state = self.sprt.state_of(self._llr())
        return None if state == "continue" else state

    def _llr(self) -> float:
        return summary(self.counts(), self.sprt)["llr"]

    def tasks(self, tag) -> list:
        """The pairs still to play (with the seats each misses), tagged for the executor."""
        if self.decided():
            return []
        out = []
        for p in range(self.pairs):
            seats = tuple(s for s in (0, 1) if (p, s) not in self.records)
            if seats:
                out.append((tag, self.a, self.b, self.match, p, seats, self.engine_settings))
        return out

    def keep(self, rec: dict) -> None:
        key = (rec["pair"], rec["seat"])
        if key in self.records:  # delivered twice (a retried task): counted once
            return
        rec["config"] = self.cid
        rec["a"], rec["b"] = self.a, self.b
        rec["match"] = self.settings
        seal(rec)
        self.records[key] = rec
        if self.sink is not None:
            self.sink.write(rec)
        if (rec["pair"], 1 - rec["seat"]) in self.records:
            self._pair_done(rec["pair"])

    def _pair_done(self, pair: int) -> None:
        s = summary(self.counts(), self.sprt)
        games = len(self.records)
        self.trajectory.append({"games": games, "pairs": s["pairs"], "elo": s["elo"], "elo_interval": s["elo_interval"],
                                "llr": s.get("llr")})

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()
            self.sink = None

    def result(self, interrupted: bool) -> dict:
        ordered = [self.records[(p, s)] for p in range(self.pairs) for s in (0, 1) if (p, s) in self.records]
        out = summarize(ordered)
        out.update(game=self.match.game, a=self.a, b=self.b, pairs=self.pairs, **self.match.describe(),
                   interrupted=interrupted)
        counts = self.counts()
        out["statistics"] = summary(counts, self.sprt)
        out["statistics"]["wdl_all_games"] = list(wdl_from_scores(_SCORE[r["a_result"]] for r in ordered).buckets())
        if self.sprt is not None:
            st = out["statistics"]
            out["sprt"] = {k: st[k] for k in ("elo0", "elo1", "alpha", "beta", "model", "llr", "bounds", "state")}
            # "state" is the LLR's place among the bounds; "decision" what the run concluded ("undecided":
            # every pair played without reaching a bound)
            out["sprt"]["pairs_played"] = counts.pairs
            out["sprt"]["decision"] = sprt_decision(st["state"], counts.pairs, self.pairs)
        out["trajectory"] = list(self.trajectory)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def run_match(a: str, b: str, match: GameMatch, pairs: int, *, out=None, resume: bool = False, workers: int = 1,
              scheduler: str | None = None, sprt: SPRT | None = None, progress=None, on_update=None,
              lockstep: bool = False, engine_settings: EngineSettings | None = None) -> dict:
    """Play one match (see the module docstring); returns its result dict
    (:func:`jitsearch.arena.game_match.summarize` plus ``statistics``,
    ``sprt``, ``trajectory``, ``interrupted``). ``progress(done, total)``
    after each game; ``on_update(result)`` after each completed pair;
    ``engine_settings``: how ``cmd:`` engines are run (their processes end
    with the match)."""
    try:
        run = MatchRun(a, b, match, pairs, out=out, resume=resume, sprt=sprt, engine_settings=engine_settings)
    except BaseException:
        close_engines()
        raise
    total = 2 * pairs
    interrupted = False

    def deliver(item):
        _tag, recs = item
        for rec in recs:
            run.keep(rec)
            if progress:
                progress(len(run.records), total)
        if on_update:
            on_update(run.result(False))

    try:
        if progress:
            progress(len(run.records), total)
        tasks = run.tasks(0)
        if lockstep:
            for rec in play_lockstep(a, b, match, [(t[4], s) for t in tasks for s in t[5]], engine_settings):
                deliver((0, [rec]))
                if run.decided():
                    break
        else:
            interrupted = run_tasks(_play_pair, tasks, deliver, workers=workers, scheduler=scheduler,
                                    should_stop=lambda: run.decided() is not None, finish=close_engines)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        run.close()
        close_engines()
    return run.result(interrupted)


def engine_pairs(engines: list[str], fmt: str) -> list[tuple[int, int]]:
    """The matches of a multi-engine tournament as (i, j) engine indices:
    a gauntlet plays engine 0 against each other, a round robin every pair."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if len(engines) < 2:
        raise ValueError("give at least two engines")
    if len(set(engines)) != len(engines):
        raise ValueError("an engine is listed twice")
    if fmt == "gauntlet":
        return [(0, j) for j in range(1, len(engines))]
    return list(combinations(range(len(engines)), 2))


def match_file_name(i: int, j: int) -> str:
    return f"match_{i}_vs_{j}.jsonl"


def run_engines(engines: list[str], fmt: str, match: GameMatch, pairs: int, *, out_dir=None, resume: bool = False,
                workers: int = 1, scheduler: str | None = None, progress=None, on_update=None,
                match_file=None, engine_settings: EngineSettings | None = None) -> dict:
    """A gauntlet or round robin: every match of :func:`engine_pairs`, all
    their pairs on one executor run, each match's games in its own file
    ``out_dir/match_I_vs_J.jsonl`` (or ``out_dir/match_file(a, b)`` for the
    match of specs a and b, e.g. to keep a match's file whatever the order
    of the list). Returns ``matches`` (each a :meth:`MatchRun.result`),
    ``crosstable`` and ``standings``. ``engine_settings``: how ``cmd:``
    engines are run (their processes end with the run)."""
    from pathlib import Path

    schedule = engine_pairs(engines, fmt)
    try:
        check_agents(engines, match, engine_settings, warm=True)
    except BaseException:
        close_engines()
        raise
    if out_dir is not None:
        out_dir = Path(out_dir)
        if out_dir.exists() and not out_dir.is_dir():
            raise ValueError(f"--out {out_dir} is a file: a {fmt} writes one file per match into a directory")
        out_dir.mkdir(parents=True, exist_ok=True)
    def name(i, j):
        return match_file_name(i, j) if match_file is None else match_file(engines[i], engines[j])

    try:
        runs = [MatchRun(engines[i], engines[j], match, pairs, resume=resume, engine_settings=engine_settings,
                         out=None if out_dir is None else out_dir / name(i, j)) for i, j in schedule]
    except BaseException:
        close_engines()
        raise
    total = 2 * pairs * len(runs)

    def done_games():
        return sum(len(r.records) for r in runs)

    def deliver(item):
        tag, recs = item
        for rec in recs:
            runs[tag].keep(rec)
            if progress:
                progress(done_games(), total)
        if on_update:
            on_update(_multi_result(engines, fmt, schedule, runs, False))

    interrupted = False
    try:
        if progress:
            progress(done_games(), total)
        tasks = [t for k, r in enumerate(runs) for t in r.tasks(k)]
        interrupted = run_tasks(_play_pair, tasks, deliver, workers=workers, scheduler=scheduler,
                                finish=close_engines)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        for r in runs:
            r.close()
        close_engines()
    return _multi_result(engines, fmt, schedule, runs, interrupted)


def _multi_result(engines, fmt, schedule, runs, interrupted) -> dict:
    n = len(engines)
    table = [[None] * n for _ in range(n)]
    points = [0.0] * n
    games = [0] * n
    matches = []
    for (i, j), run in zip(schedule, runs):
        res = run.result(interrupted)
        matches.append(res)
        w, d, l = res["a_wins"], res["draws"], res["b_wins"]
        table[i][j] = {"wins": w, "draws": d, "losses": l, "score": res["a_score"]}
        table[j][i] = {"wins": l, "draws": d, "losses": w, "score": None if res["a_score"] is None
                       else 1.0 - res["a_score"]}
        points[i] += w + 0.5 * d
        points[j] += l + 0.5 * d
        games[i] += res["games"]
        games[j] += res["games"]
    standings = sorted(({"engine": engines[k], "points": points[k], "games": games[k],
                         "score": points[k] / games[k] if games[k] else None} for k in range(n)),
                       key=lambda e: (-(e["score"] if e["score"] is not None else -1.0), engines.index(e["engine"])))
    return {"format": fmt, "engines": list(engines), "matches": matches, "crosstable": table,
            "standings": standings, "interrupted": interrupted}


def plot_trajectory(result: dict, path) -> None:
    """A PNG of the Elo estimate (with its 95% interval) and the LLR with
    its bounds, after each completed pair of a match."""
    try:
        import matplotlib
    except ImportError:
        raise ValueError("the plot needs matplotlib: pip install 'jitsearch[bench]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from pathlib import Path

    Path(path).parent.mkdir(parents=True, exist_ok=True)

    traj = result.get("trajectory") or []
    xs = [t["games"] for t in traj]
    has_llr = result.get("sprt") is not None
    fig, axes = plt.subplots(2 if has_llr else 1, 1, figsize=(7, 6 if has_llr else 3.5), sharex=True, squeeze=False)
    ax = axes[0][0]
    elo = [t["elo"] for t in traj]
    lo = [t["elo_interval"][0] for t in traj]
    hi = [t["elo_interval"][1] for t in traj]
    ax.plot(xs, [e if e is not None else float("nan") for e in elo], label="Elo A-B")
    ax.fill_between(xs, [v if v is not None else float("nan") for v in lo],
                    [v if v is not None else float("nan") for v in hi], alpha=0.25, label="95% interval")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_ylabel("Elo")
    ax.set_title(f"{result['a']} vs {result['b']}", fontsize=8)
    ax.legend(fontsize=8)
    if has_llr:
        ax2 = axes[1][0]
        ax2.plot(xs, [t["llr"] for t in traj], color="C1", label="LLR")
        low, high = result["sprt"]["bounds"]
        ax2.axhline(low, color="C3", ls="--", lw=0.8, label="H0 bound")
        ax2.axhline(high, color="C2", ls="--", lw=0.8, label="H1 bound")
        ax2.set_ylabel("LLR")
        ax2.legend(fontsize=8)
    axes[-1][0].set_xlabel("games")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_tournament(a: str, b: str, match, pairs: int, *, out=None, resume: bool = False, workers: int = 1,
                   progress=None, lockstep: bool = False, scheduler: str | None = None, sprt=None, on_update=None,
                   engine_settings: EngineSettings | None = None) -> dict:
    """Play ``pairs`` pairs of games (2·pairs games); see the module docstring.

    Everything is checked before the first game: the arguments, the output
    file (a directory or an unwritable file is refused) and every record
    already in it. Without ``resume`` a file that already holds this
    tournament's games is refused. The pairs run on the arena's executor
    (:mod:`jitsearch.arena.executor`: this process for ``workers=1``, else a
    local Dask cluster of ``workers`` processes, or the cluster at
    ``scheduler``). ``progress(done, total)`` is called after each game,
    ``on_update(result)`` after each completed pair; ``sprt`` (a
    :class:`jitsearch.arena.stats.SPRT`) stops the match at its bounds.
    Returns :func:`summarize` of the finished games plus the settings,
    ``statistics`` (pentanomial, Elo, nElo, LOS; :func:`jitsearch.arena.stats.summary`),
    ``sprt``, ``trajectory``, ``interrupted`` (True when Ctrl-C stopped it)
    and ``notes`` (only when the file needed repair).

    ``lockstep``: play every game at once in this process
    (:func:`~jitsearch.arena.game_match.play_lockstep`; needs a multi-tree MCTS agent with an
    iteration budget, a game with ``config_agents``, and ``workers=1``); the records are the same
    as game by game.
    """
    check_count("pairs", pairs, MAX_PAIRS)
    check_count("workers", workers, MAX_WORKERS)
    if not isinstance(match, GameMatch):
        raise ValueError(f"match must be a GameMatch (match_of), got {match!r}")
    match.check()
    for spec in (a, b):
        if not isinstance(spec, str):
            raise ValueError(f"an agent is a spec string such as 'alphabeta:depth=3', got {spec!r}")
    match.check_openings(pairs)
    if lockstep:
        if workers != 1 or scheduler:
            raise ValueError("a lockstep tournament plays its games in one process: leave workers at 1 and give "
                             "no scheduler")
        if not any(getattr(agent_template(x, match.game), "lockstep", False) for x in (a, b)):
            raise ValueError("lockstep needs a multi-tree MCTS agent with an iteration budget, e.g. "
                             "mcts:iterations=20000,backend=cuda")
    try:
        check_agents((a, b), match, engine_settings, warm=True)  # perfect, openspiel; a cmd: engine starts here
    except BaseException:
        close_engines()
        raise
    return run_match(a, b, match, pairs, out=out, resume=resume, workers=workers, scheduler=scheduler, sprt=sprt,
                     progress=progress, on_update=on_update, lockstep=lockstep, engine_settings=engine_settings)


#: The former name of :func:`run_tournament`.
run_kalah_tournament = run_tournament

"""Engine-testing statistics as fishtest, fastchess, cutechess-cli and OpenBench
compute them: W/D/L and pentanomial counts, Elo and normalised Elo with
confidence intervals, LOS, and the sequential probability ratio test (SPRT).

Conventions
-----------
* Every count and value is from agent A's point of view: a game scores 1 for
  a win of A, 0.5 for a draw, 0 for a loss.
* A *pair* is two games from the same opening with the seats swapped. Its
  pentanomial bucket is the sum of A's two scores: LL 0, LD 0.5, DD and WL
  1 (kept apart in :class:`Pentanomial`, one bucket for every statistic),
  WD 1.5, WW 2 -- fastchess's ``Ptnml(0-2)`` order.
* Counts given as plain sequences are in ascending score order, as fishtest's
  ``LLRcalc`` takes them: ``[L, D, W]`` or ``[LL, LD, DD+WL, WD, WW]``.
* A *sample* is a game for W/D/L counts and a pair for pentanomial counts; its
  score is on the 0..1 scale (a pair scores the mean of its two games).
* Intervals are two-sided with ``confidence`` 0.95 by default (z = 1.95996).
  Elo is infinite at score 0 or 1 (``elo_from_score`` returns -inf/+inf);
  :func:`summary` writes None for any value that is infinite or undefined.

References
----------
M. Van den Bergh, "Comments on normalized Elo" (normalized_elo_practical.pdf),
"Support of the MLE for a multinomial" (support_MLE_multinomial.pdf),
https://www.cantate.be/Fishtest/ ; fishtest
``server/fishtest/stats/LLRcalc.py``; fastchess ``elo_wdl.cpp``,
``elo_pentanomial.cpp`` and ``sprt.cpp``; cutechess-cli ``elo.cpp`` (LOS).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence, Union

#: nElo / t-value: a normalised t of 1 is 800/ln(10) = 347.4 nElo (fishtest ``nelo_divided_by_nt``).
NELO_PER_T = 800.0 / math.log(10.0)
#: Count given to an empty bucket before any LLR is computed (fishtest ``regularize``).
EMPTY_BUCKET = 1e-3
MODELS = ("logistic", "normalized")
SPRT_STATES = ("H0 accepted", "H1 accepted", "continue")
#: An SPRT's decision at the end of a run: its state, or "undecided" when the run played every pair it was
#: given without reaching a bound (:func:`sprt_decision`).
SPRT_DECISIONS = ("H0 accepted", "H1 accepted", "continue", "undecided")


# -- the normal distribution (no scipy) ---------------------------------------------------

def normal_cdf(x: float) -> float:
    """Phi(x), the standard normal CDF, as 0.5·erfc(-x/sqrt 2)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_quantile(p: float) -> float:
    """Phi^-1(p) for 0 < p < 1, by bisection on :func:`normal_cdf` to full double precision."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, got {p!r}")
    lo, hi = -40.0, 40.0
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return mid
        lo, hi = (mid, hi) if normal_cdf(mid) < p else (lo, mid)


# -- counts -------------------------------------------------------------------------------

def _check_count(name: str, value) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _check_game_score(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value not in (0, 0.5, 1):
        raise ValueError(f"a game score must be 0 (loss), 0.5 (draw) or 1 (win) for A, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class WDL:
    """Wins, draws and losses of A over single games."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __post_init__(self):
        for name in ("wins", "draws", "losses"):  # stored as Python ints, so summaries serialise
            object.__setattr__(self, name, _check_count(name, getattr(self, name)))

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def buckets(self) -> tuple[int, int, int]:
        """(L, D, W): ascending score order, as fishtest's ``results``."""
        return (self.losses, self.draws, self.wins)

    def __add__(self, other: "WDL") -> "WDL":
        if not isinstance(other, WDL):
            return NotImplemented
        return WDL(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)


@dataclass(frozen=True)
class Pentanomial:
    """Counts of game pairs by A's two results (order within a pair ignored).

    ``dd`` (two draws) and ``wl`` (a win and a loss) both score 1 and are one
    bucket for every statistic; they are kept apart so that W/D/L can be recovered.
    """

    ll: int = 0
    ld: int = 0
    dd: int = 0
    wl: int = 0
    wd: int = 0
    ww: int = 0

    def __post_init__(self):
        for name in ("ll", "ld", "dd", "wl", "wd", "ww"):
            object.__setattr__(self, name, _check_count(name, getattr(self, name)))

    @property
    def pairs(self) -> int:
        return self.ll + self.ld + self.dd + self.wl + self.wd + self.ww

    @property
    def games(self) -> int:
        return 2 * self.pairs

    def buckets(self) -> tuple[int, int, int, int, int]:
        """(LL, LD, DD+WL, WD, WW): pair scores 0, 0.5, 1, 1.5, 2 (fastchess ``Ptnml(0-2)``)."""
        return (self.ll, self.ld, self.dd + self.wl, self.wd, self.ww)

    def wdl(self) -> WDL:
        """The W/D/L counts of the games in these pairs."""
        return WDL(wins=2 * self.ww + self.wd + self.wl,
                   draws=self.ld + 2 * self.dd + self.wd,
                   losses=2 * self.ll + self.ld + self.wl)

    def __add__(self, other: "Pentanomial") -> "Pentanomial":
        if not isinstance(other, Pentanomial):
            return NotImplemented
        return Pentanomial(*(getattr(self, f) + getattr(other, f) for f in ("ll", "ld", "dd", "wl", "wd", "ww")))


_PAIR_FIELD = {(0.0, 0.0): "ll", (0.0, 0.5): "ld", (0.5, 0.5): "dd", (0.0, 1.0): "wl", (0.5, 1.0): "wd",
               (1.0, 1.0): "ww"}


def pentanomial_from_pairs(pairs) -> Pentanomial:
    """Count pairs ``(a, b)`` of A's game scores (0, 0.5 or 1 each) into a :class:`Pentanomial`."""
    counts = dict.fromkeys(_PAIR_FIELD.values(), 0)
    for k, pair in enumerate(pairs):
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(f"pair {k} must be two game scores (a, b), got {pair!r}") from None
        counts[_PAIR_FIELD[tuple(sorted((_check_game_score(a), _check_game_score(b))))]] += 1
    return Pentanomial(**counts)


def wdl_from_scores(scores) -> WDL:
    """Count A's game scores (1 win, 0.5 draw, 0 loss) into a :class:`WDL`."""
    values = [_check_game_score(s) for s in scores]
    return WDL(wins=values.count(1.0), draws=values.count(0.5), losses=values.count(0.0))


Counts = Union[WDL, Pentanomial, Sequence[int]]


def _buckets(counts: Counts) -> tuple[int, ...]:
    """Ascending-score bucket counts of a WDL, a Pentanomial or a 3- or 5-sequence."""
    if isinstance(counts, (WDL, Pentanomial)):
        return counts.buckets()
    if isinstance(counts, (str, bytes)) or not isinstance(counts, Sequence) or len(counts) not in (3, 5):
        raise ValueError("counts must be a WDL, a Pentanomial, or a sequence [L, D, W] or "
                         f"[LL, LD, DD+WL, WD, WW] in ascending score order, got {counts!r}")
    return tuple(_check_count(f"counts[{i}]", c) for i, c in enumerate(counts))


def _moments(buckets: Sequence[float]) -> tuple[float, float, float]:
    """(samples, mean, variance) of the per-sample score i/(k-1) over k buckets (population variance)."""
    n = float(sum(buckets))
    if n == 0:
        raise ValueError("no games: the counts are all zero")
    values = [i / (len(buckets) - 1) for i in range(len(buckets))]
    mean = sum(c * a for c, a in zip(buckets, values)) / n
    var = sum(c * (a - mean) ** 2 for c, a in zip(buckets, values)) / n
    return n, mean, var


# -- Elo, nElo, LOS -----------------------------------------------------------------------

def score_from_elo(elo: float) -> float:
    """Logistic expected score 1 / (1 + 10^(-elo/400)) (fishtest ``L_``)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(s: float) -> float:
    """Elo difference -400·log10(1/s - 1) of a score s in [0, 1]; -inf at 0, +inf at 1."""
    if not 0.0 <= s <= 1.0:  # also rejects nan
        raise ValueError(f"a score must lie in [0, 1], got {s!r}")
    if s == 0.0:
        return -math.inf
    if s == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    return normal_quantile(0.5 + confidence / 2.0)


def score_interval(counts: Counts, confidence: float = 0.95) -> tuple[float, float, float]:
    """(score, low, high): mean sample score ± z·sqrt(var/N), clipped to [0, 1].

    N and var are per game for W/D/L counts and per pair (pair score / 2) for
    pentanomial counts, var being that of the empirical distribution
    (fastchess ``EloWDL`` / ``EloPentanomial``). Raises ValueError without games.
    """
    n, mean, var = _moments(_buckets(counts))
    half = _z(confidence) * math.sqrt(var / n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def elo_interval(counts: Counts, confidence: float = 0.95) -> tuple[float, float, float]:
    """(elo, low, high): :func:`score_interval` mapped through :func:`elo_from_score`.

    An end at score 0 or 1 gives -inf or +inf. fastchess prints ``elo ± (high - low)/2``.
    """
    return tuple(elo_from_score(s) for s in score_interval(counts, confidence))


def nelo_interval(counts: Counts, confidence: float = 0.95) -> tuple[float, float, float]:
    """(nelo, low, high): normalised Elo, nElo = (mu - 1/2) / sigma_game · 800/ln 10.

    Notes
    -----
    Van den Bergh's normalised Elo is the t-value nt = (mu - 1/2)/sigma of one
    game, scaled by 800/ln 10 so that nElo ~ Elo near 0 at a 0 draw ratio. For
    W/D/L counts sigma_game is the per-game standard deviation. For pentanomial
    counts the sample is the pair mean, whose variance is half a game's if the
    two games were independent, so sigma_game = sqrt(2)·sigma_pair (fishtest
    ``LLR_normalized_alt``: ``sigma_pg = (2*var)**0.5``; fastchess
    ``scoreToNeloDiff``). The interval maps the score interval with sigma fixed,
    so its half-width is z/sqrt(games)·800/ln 10. Undefined (all three nan)
    when the variance is 0.
    """
    buckets = _buckets(counts)
    _, _, var = _moments(buckets)
    score, low, high = score_interval(buckets, confidence)
    if var == 0.0:
        return math.nan, math.nan, math.nan
    sigma_game = math.sqrt(2.0 * var if len(buckets) == 5 else var)
    return tuple((s - 0.5) / sigma_game * NELO_PER_T for s in (score, low, high))


def los(counts: Union[WDL, Pentanomial, Sequence[int]]) -> float:
    """Likelihood of superiority of A: Phi((W - L)/sqrt(W + L)), draws ignored;
    0.5 when W + L = 0 (cutechess-cli). Takes a WDL, a Pentanomial or [L, D, W]."""
    if isinstance(counts, Pentanomial):
        counts = counts.wdl()
    buckets = _buckets(counts)
    if len(buckets) != 3:
        raise ValueError("LOS needs W and L: pass a WDL, a Pentanomial or [L, D, W], not 5 merged buckets")
    losses, _, wins = buckets
    if wins + losses == 0:
        return 0.5
    return normal_cdf((wins - losses) / math.sqrt(wins + losses))


# -- SPRT ---------------------------------------------------------------------------------

def _secular(values: Sequence[float], probs: Sequence[float]) -> float:
    """Root x of sum_i p_i a_i / (1 + x a_i) = 0 on (-1/max a, -1/min a) (fishtest ``secular``).

    The function falls strictly on that interval, so a Newton step is taken when it
    stays inside the shrinking bracket and a bisection step otherwise.
    """
    low_a, high_a = min(values), max(values)
    if not low_a < 0.0 < high_a:
        raise ValueError("the SPRT hypotheses lie outside the range of possible results; "
                         "bring elo0 and elo1 closer to 0")
    lo, hi, x = -1.0 / high_a, -1.0 / low_a, 0.0
    for _ in range(200):
        f = df = 0.0
        for a, p in zip(values, probs):
            q = a / (1.0 + x * a)
            f += p * q
            df -= p * q * q
        if f == 0.0:
            return x
        lo, hi = (x, hi) if f > 0.0 else (lo, x)
        step = x - f / df
        new = step if lo < step < hi else 0.5 * (lo + hi)
        if abs(new - x) <= 1e-15 * (1.0 + abs(x)):
            return new
        x = new
    return x


def _mle_expected(values, probs, s):
    """MLE of the bucket probabilities given a mean score s (Van den Bergh, MLE note, Prop. 1.1)."""
    shifted = [a - s for a in values]
    x = _secular(shifted, probs)
    return [p / (1.0 + x * a) for a, p in zip(shifted, probs)]


def _mle_t_value(values, probs, t, ref=0.5):
    """MLE given t = (mu - ref)/sigma (normalized_elo_practical.pdf, Sect. 4.1): fixed-point
    iteration from the uniform distribution, as fishtest ``MLE_t_value``, run to convergence."""
    pdf = [1.0 / len(values)] * len(values)
    for _ in range(100):
        mu = sum(p * a for p, a in zip(pdf, values))
        sigma = math.sqrt(sum(p * (a - mu) ** 2 for p, a in zip(pdf, values)))
        phi = [a - ref - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0 for a in values]
        x = _secular(phi, probs)
        new = [p / (1.0 + x * f) for p, f in zip(probs, phi)]
        done = max(abs(u - v) for u, v in zip(new, pdf)) < 1e-12
        pdf = new
        if done:
            break
    return pdf


def _check_hypotheses(elo0, elo1, model):
    if model not in MODELS:
        raise ValueError(f"model must be 'logistic' or 'normalized', got {model!r}")
    for name, value in (("elo0", elo0), ("elo1", elo1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number of Elo, got {value!r}")
    if not elo0 < elo1:
        raise ValueError(f"elo0 ({elo0}) must be below elo1 ({elo1}): H0 is 'A gains elo0', H1 'A gains elo1'")


def sprt_llr(counts: Counts, elo0: float, elo1: float, model: str = "normalized") -> float:
    """Generalised log-likelihood ratio of H1 (elo1) against H0 (elo0) for ``counts``.

    Notes
    -----
    The exact GSPRT of fishtest ``LLR_logistic`` / ``LLR_normalized`` and fastchess
    ``getLLR``, not the ``LLR_alt`` approximations: empty buckets get count 1e-3,
    p̂ is the empirical distribution of the N samples (games or pairs) on scores
    i/(k-1), and LLR = N·sum_i p̂_i·log(p1_i/p0_i), where p_j is the multinomial
    MLE under H_j. ``"logistic"``: H_j fixes the mean score at
    1/(1 + 10^(-elo_j/400)). ``"normalized"``: elo_j is nElo and H_j fixes
    (mu - 1/2)/sigma at t_j = elo_j/(800/ln 10) for W/D/L and sqrt(2)·t_j for
    pairs (sigma_pair = sigma_game/sqrt 2, see :func:`nelo_interval`).
    Returns 0.0 without games.
    """
    _check_hypotheses(elo0, elo1, model)
    buckets = _buckets(counts)
    if sum(buckets) == 0:
        return 0.0
    regular = [c if c > 0 else EMPTY_BUCKET for c in buckets]
    n = sum(regular)
    probs = [c / n for c in regular]
    values = [i / (len(buckets) - 1) for i in range(len(buckets))]
    if model == "logistic":
        p0, p1 = (_mle_expected(values, probs, score_from_elo(e)) for e in (elo0, elo1))
    else:
        scale = math.sqrt(2.0) if len(buckets) == 5 else 1.0
        p0, p1 = (_mle_t_value(values, probs, scale * e / NELO_PER_T) for e in (elo0, elo1))
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """(ln(beta/(1-alpha)), ln((1-beta)/alpha)): Wald's LLR bounds, ±2.944 at 0.05/0.05."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < value < 0.5:
            raise ValueError(f"{name} must lie strictly between 0 and 0.5 (e.g. 0.05), got {value!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


class SPRT:
    """A sequential probability ratio test of H0 "A gains elo0" against H1 "A gains elo1".

    alpha is the chance of accepting H1 when H0 holds, beta that of accepting H0
    when H1 holds. elo0 and elo1 are logistic Elo for ``model="logistic"`` and
    nElo for ``model="normalized"`` (fishtest's default). Feed it with
    :meth:`update`; ``state`` is "H1 accepted" once ``llr >= bounds[1]``, "H0
    accepted" once ``llr <= bounds[0]``, else "continue". The state is that of the
    current counts: the caller stops at the first decision.
    """

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
                 model: str = "normalized"):
        _check_hypotheses(elo0, elo1, model)
        self.bounds = sprt_bounds(alpha, beta)
        self.elo0, self.elo1, self.alpha, self.beta, self.model = elo0, elo1, alpha, beta, model
        self.counts: WDL | Pentanomial | None = None
        self._llr: float | None = 0.0

    def update(self, result) -> "SPRT":
        """Add a pair ``(a, b)`` of A's game scores, a :class:`Pentanomial` or a :class:`WDL`.

        A bare pair score is refused: a score of 1 may be DD or WL, which W/D/L and LOS
        tell apart. Pairs and W/D/L counts cannot be mixed in one test.
        """
        if isinstance(result, (WDL, Pentanomial)):
            add = result
        elif isinstance(result, (tuple, list)):
            add = pentanomial_from_pairs([result])
        else:
            raise ValueError("update takes a pair (a, b) of A's game scores, a Pentanomial or a WDL, "
                             f"got {result!r}")
        if self.counts is not None and type(add) is not type(self.counts):
            raise ValueError(f"this SPRT counts {type(self.counts).__name__}; do not mix pairs and W/D/L counts")
        self.counts = add if self.counts is None else self.counts + add
        self._llr = None
        return self

    @property
    def llr(self) -> float:
        """The LLR of the counts so far (:func:`sprt_llr`), 0.0 before any game."""
        if self._llr is None:
            self._llr = sprt_llr(self.counts, self.elo0, self.elo1, self.model)
        return self._llr

    def state_of(self, llr: float) -> str:
        """The decision the bounds give for ``llr``: one of ``SPRT_STATES``."""
        if llr >= self.bounds[1]:
            return "H1 accepted"
        if llr <= self.bounds[0]:
            return "H0 accepted"
        return "continue"

    @property
    def state(self) -> str:
        return self.state_of(self.llr)


def sprt_decision(state: str, pairs_played: int, pairs_total: int) -> str:
    """What a run reports for an SPRT in ``state`` (one of ``SPRT_STATES``)
    after ``pairs_played`` of its ``pairs_total`` pairs: a bound's decision,
    "undecided" when every pair was played without reaching one (the run was
    too short to decide), else "continue" (still running, or stopped early and
    resumable)."""
    if state not in SPRT_STATES:
        raise ValueError(f"state must be one of {SPRT_STATES}, got {state!r}")
    if state == "continue" and pairs_played >= pairs_total:
        return "undecided"
    return state


# -- summary ------------------------------------------------------------------------------

def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def summary(counts: Union[WDL, Pentanomial], sprt: SPRT | None = None, confidence: float = 0.95) -> dict:
    """All statistics of ``counts`` in one JSON-serialisable dict.

    Keys: games, pairs (None for W/D/L), wins, draws, losses, pentanomial
    ([LL, LD, DD+WL, WD, WW] or None), pentanomial_split ({"DD", "WL"} or None),
    confidence, score, score_interval, elo, elo_interval, nelo, nelo_interval
    ([low, high] each), los. Any value that is infinite (Elo at score 0 or 1) or
    undefined (everything without games; nElo at zero variance) is None. With
    ``sprt`` its settings (not its own counts) are applied to ``counts``, adding
    elo0, elo1, alpha, beta, model, llr, bounds and state.
    """
    if not isinstance(counts, (WDL, Pentanomial)):
        raise ValueError(f"counts must be a WDL or a Pentanomial, got {counts!r}")
    _z(confidence)
    wdl = counts.wdl() if isinstance(counts, Pentanomial) else counts
    penta = isinstance(counts, Pentanomial)
    out = {
        "games": counts.games, "pairs": counts.pairs if penta else None,
        "wins": wdl.wins, "draws": wdl.draws, "losses": wdl.losses,
        "pentanomial": list(counts.buckets()) if penta else None,
        "pentanomial_split": {"DD": counts.dd, "WL": counts.wl} if penta else None,
        "confidence": float(confidence), "los": los(wdl),
    }
    if counts.games == 0:
        for key in ("score", "elo", "nelo"):
            out[key], out[key + "_interval"] = None, [None, None]
    else:
        for key, fn in (("score", score_interval), ("elo", elo_interval), ("nelo", nelo_interval)):
            value, low, high = fn(counts, confidence)
            out[key], out[key + "_interval"] = _finite(value), [_finite(low), _finite(high)]
    if sprt is not None:
        llr = sprt_llr(counts, sprt.elo0, sprt.elo1, sprt.model)
        out.update(elo0=float(sprt.elo0), elo1=float(sprt.elo1), alpha=float(sprt.alpha), beta=float(sprt.beta),
                   model=sprt.model, llr=llr, bounds=list(sprt.bounds), state=sprt.state_of(llr))
    return out

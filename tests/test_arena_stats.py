"""Engine-testing statistics (jitsearch.arena.stats): hand values, fastchess's
published values, an independent brute-force GSPRT, and SPRT error rates and
mean lengths measured by simulation (the latter against Wald's approximation
with Van den Bergh's GSPRT drift, https://www.cantate.be/Fishtest/GSPRT_approximation.pdf)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from jitsearch.arena.stats import (
    NELO_PER_T,
    SPRT,
    WDL,
    Pentanomial,
    elo_from_score,
    elo_interval,
    los,
    nelo_interval,
    normal_cdf,
    normal_quantile,
    pentanomial_from_pairs,
    score_from_elo,
    score_interval,
    sprt_bounds,
    sprt_llr,
    summary,
    wdl_from_scores,
)


def penta(ll, ld, wl, dd, wd, ww):
    """A Pentanomial from fastchess's ``Stats(ll, ld, wl, dd, wd, ww)`` argument order."""
    return Pentanomial(ll=ll, ld=ld, dd=dd, wl=wl, wd=wd, ww=ww)


# -- hand-computed values -----------------------------------------------------------------

def test_normal_quantile_and_cdf():
    assert normal_quantile(0.975) == pytest.approx(1.959963984540054, abs=1e-12)
    assert normal_quantile(0.5) == pytest.approx(0.0, abs=1e-15)
    for p in (1e-10, 0.01, 0.3, 0.9, 1 - 1e-9):
        assert normal_cdf(normal_quantile(p)) == pytest.approx(p, rel=1e-9)


def test_elo_from_score():
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))  # 190.8485
    assert elo_from_score(0.75) == pytest.approx(190.85, abs=0.005)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.25) == pytest.approx(-190.85, abs=0.005)
    assert elo_from_score(0.0) == -math.inf and elo_from_score(1.0) == math.inf
    assert score_from_elo(elo_from_score(0.6)) == pytest.approx(0.6)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        elo_from_score(1.2)


def test_los_cutechess_formula():
    # W=10, L=5: Phi(5/sqrt(15)) = Phi(1.29099) = 0.90165 (tables: Phi(1.29)=0.90147, Phi(1.30)=0.90320)
    assert los(WDL(wins=10, draws=7, losses=5)) == pytest.approx(0.90165, abs=2e-5)
    assert los(WDL(wins=5, draws=0, losses=10)) == pytest.approx(1 - 0.90165, abs=2e-5)
    assert los(WDL(draws=9)) == 0.5
    assert los([5, 7, 10]) == los(WDL(10, 7, 5))  # [L, D, W]
    # a Pentanomial's W and L come from its games: WL pairs count a win and a loss
    assert los(Pentanomial(ww=3, wl=2)) == pytest.approx(normal_cdf(6 / math.sqrt(10)))


def test_elo_interval_by_hand():
    # W=5, D=3, L=2: s = 6.5/10 = 0.65;
    # var = .5·.35² + .3·.15² + .2·.65² = .06125 + .00675 + .0845 = .1525; sd of mean = sqrt(.01525) = .123491
    # s ± 1.959964·.123491 = .65 ± .242038 = [.407962, .892038]
    counts = WDL(wins=5, draws=3, losses=2)
    score, lo, hi = score_interval(counts)
    assert (score, lo, hi) == pytest.approx((0.65, 0.407962, 0.892038), abs=1e-6)
    elo, elo_lo, elo_hi = elo_interval(counts)
    assert elo == pytest.approx(-400 * math.log10(1 / 0.65 - 1))  # 107.54
    assert (elo_lo, elo_hi) == pytest.approx((-64.69, 366.84), abs=0.01)
    # nElo = (s - 1/2)/sigma · 800/ln 10 = .15/.390512 · 347.4356 = 133.45; half-width 1.959964/sqrt(10)·347.4356
    nelo, nlo, nhi = nelo_interval(counts)
    assert nelo == pytest.approx(0.15 / math.sqrt(0.1525) * 800 / math.log(10))
    assert (nhi - nlo) / 2 == pytest.approx(1.959963984540054 / math.sqrt(10) * NELO_PER_T)


def test_elo_interval_at_the_edges():
    assert elo_interval(WDL(wins=4)) == (math.inf, math.inf, math.inf)  # zero variance at score 1
    elo, lo, hi = elo_interval(WDL(wins=9, losses=1))
    assert math.isfinite(elo) and math.isfinite(lo) and hi == math.inf  # the upper end passes score 1
    assert elo_interval(WDL(draws=5)) == (0.0, 0.0, 0.0)
    assert all(math.isnan(x) for x in nelo_interval(WDL(draws=5)))  # sigma = 0: undefined
    with pytest.raises(ValueError, match="no games"):
        elo_interval(WDL())


def test_pentanomial_counting():
    pairs = [(1, 0), (0, 1), (0.5, 0.5), (1, 1), (0.5, 1), (1, 0.5), (0, 0.5), (0, 0), (1, 1), (0.5, 0)]
    p = pentanomial_from_pairs(pairs)
    assert p == Pentanomial(ll=1, ld=2, dd=1, wl=2, wd=2, ww=2)
    assert p.buckets() == (1, 2, 3, 2, 2)  # LL, LD, DD+WL, WD, WW
    assert p.pairs == 10 and p.games == 20
    games = [s for pair in pairs for s in pair]
    assert p.wdl() == wdl_from_scores(games) == WDL(wins=8, draws=6, losses=6)
    assert wdl_from_scores([1, 0.5, 0.5, 0]) == WDL(1, 2, 1)
    with pytest.raises(ValueError, match="game score"):
        pentanomial_from_pairs([(1, 2)])
    with pytest.raises(ValueError, match="two game scores"):
        pentanomial_from_pairs([1.5])
    with pytest.raises(ValueError, match="non-negative integer"):
        WDL(wins=-1)


def test_trinomial_and_pentanomial_agree_on_independent_games():
    # game probabilities (w, d, l) = (.5, .3, .2), 100 pairs counted exactly as a product:
    # LL = l² = 4, LD = 2ld = 12, DD = d² = 9, WL = 2wl = 20, WD = 2wd = 30, WW = w² = 25
    pairs = Pentanomial(ll=4, ld=12, dd=9, wl=20, wd=30, ww=25)
    games = pairs.wdl()
    assert games == WDL(wins=100, draws=60, losses=40)
    for fn in (score_interval, elo_interval, nelo_interval):
        assert fn(pairs) == pytest.approx(fn(games), rel=1e-12)
    # and the pair variance really is half the game variance, so a pentanomial nElo that
    # forgot the sqrt(2) would be off by that factor
    assert nelo_interval(pairs)[0] == pytest.approx(0.15 / math.sqrt(0.5 - 0.65**2 + 0.075) * NELO_PER_T)


# -- published values: fastchess app/tests/elo_test.cpp and sprt_test.cpp -----------------

@pytest.mark.parametrize("counts, elo, elo_err, nelo, nelo_err", [
    (WDL(wins=136, losses=96, draws=111), 40.70, 30.43, 49.77, 36.77),
    (WDL(wins=76, losses=89, draws=123), None, None, -20.76, 40.13),
    (penta(34, 54, 31, 32, 64, 75), 55.58, 27.65, 57.94, 28.28),
    (penta(332, 433, 457, 41, 333, 334), -8.64, 10.33, -9.17, 10.96),
    (penta(7895, 8757, 5485, 200, 568, 9999), -21.04, 2.95, -19.01, 2.65),
])
def test_fastchess_elo_values(counts, elo, elo_err, nelo, nelo_err):
    """fastchess prints x ± (high - low)/2 to two decimals."""
    e, lo, hi = elo_interval(counts)
    if elo is not None:
        assert (e, (hi - lo) / 2) == pytest.approx((elo, elo_err), abs=0.006)
    n, nlo, nhi = nelo_interval(counts)
    assert (n, (nhi - nlo) / 2) == pytest.approx((nelo, nelo_err), abs=0.006)


@pytest.mark.parametrize("counts, elo0, elo1, model, llr", [
    (WDL(wins=36433, losses=36027, draws=68692), 0, 2, "normalized", 0.92),
    (WDL(wins=10871, losses=10650, draws=20431), -1.75, 0.25, "normalized", 2.30),
    (WDL(wins=21404, losses=21184, draws=40708), 0.5, 2.5, "logistic", -1.57),
    (WDL(wins=57433, losses=57030, draws=106593), 0, 2, "logistic", -2.59),
    (penta(365, 16618, 36029, 200, 16974, 390), 0, 2, "normalized", 2.25),
    (penta(127, 4883, 10311, 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    (penta(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    (penta(871, 26175, 55003, 980, 26678, 821), 0, 2, "logistic", -4.98),
])
def test_fastchess_sprt_llr(counts, elo0, elo1, model, llr):
    assert sprt_llr(counts, elo0, elo1, model) == pytest.approx(llr, abs=0.006)
    assert sprt_llr(list(counts.buckets()), elo0, elo1, model) == sprt_llr(counts, elo0, elo1, model)


# -- an independent route to the GSPRT LLR ------------------------------------------------

def golden_max(f, lo, hi, iterations=120):
    """Maximum of a unimodal f on [lo, hi], and where it is, by golden-section search."""
    g = (math.sqrt(5) - 1) / 2
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc > fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = f(d)
    return (fc, c) if fc > fd else (fd, d)


def brute_llr_trinomial(losses, draws, wins, h0, h1, model):
    """Max log-likelihood under H1 minus under H0 by a 1-D search over the draw rate d.

    logistic (h = mean score s): w = s - d/2, l = 1 - s - d/2.
    normalized (h = t): mu - 1/2 = (w - l)/2 = delta/2 and sigma² = (1 - d - delta²)/4, so
    (mu - 1/2)/sigma = t gives delta = t·sqrt((1 - d)/(1 + t²)), w, l = (1 - d ± delta)/2.
    """
    def best(h):
        def loglik(d):
            if model == "logistic":
                w, l = h - d / 2, 1 - h - d / 2
            else:
                delta = h * math.sqrt((1 - d) / (1 + h * h))
                w, l = (1 - d + delta) / 2, (1 - d - delta) / 2
            return wins * math.log(w) + draws * math.log(d) + losses * math.log(l)
        top = min(2 * h, 2 - 2 * h) if model == "logistic" else 1.0
        return golden_max(loglik, 1e-12, top - 1e-12)[0]
    return best(h1) - best(h0)


def el_max_loglik(counts, constraints):
    """max sum n_i log p_i over p with sum p_i = 1 and sum p_i g_i = 0 (g_i: row i of constraints),
    through its convex dual (Owen's empirical likelihood):
    sum n_i log(n_i/N) - max_lam sum n_i log(1 + lam·g_i), maximised by damped Newton."""
    n, g = np.asarray(counts, float), np.asarray(constraints, float)

    def dual(lam):
        r = 1 + g @ lam
        return -math.inf if (r <= 0).any() else float(n @ np.log(r))

    lam = np.zeros(g.shape[1])
    for _ in range(100):
        r = 1 + g @ lam
        grad = g.T @ (n / r)
        hess = -(g.T * (n / r**2)) @ g
        step, t = -np.linalg.solve(hess, grad), 1.0
        while dual(lam + t * step) < dual(lam) and t > 1e-12:
            t /= 2
        lam = lam + t * step
        if np.abs(t * step).max() < 1e-14:
            break
    return float(n @ np.log(n / n.sum())) - dual(lam)


def brute_llr_pentanomial(counts, h0, h1, model):
    """As brute_llr_trinomial for 5 buckets: the mean constraint directly; the t constraint
    (mu - 1/2)/sigma = t as E[a - mu] = 0 and E[(a - mu)²] = ((mu - 1/2)/t)², profiled over mu."""
    a = np.linspace(0, 1, 5)
    n = np.asarray(counts, float)
    mean = n @ a / n.sum()
    sigma = math.sqrt(n @ (a - mean) ** 2 / n.sum())

    def best(h):
        if model == "logistic" or h == 0:
            return el_max_loglik(counts, (a - (h if model == "logistic" else 0.5))[:, None])
        lo, hi = sorted(0.5 + h * sigma * np.array([0.7, 1.3]))
        value, mu = golden_max(lambda m: el_max_loglik(counts, np.stack([a - m, (a - m) ** 2 - ((m - 0.5) / h) ** 2], 1)),
                               lo, hi)
        assert lo + 1e-4 < mu < hi - 1e-4  # an interior maximum, not the edge of the search
        return value
    return best(h1) - best(h0)


@pytest.mark.parametrize("counts, elo0, elo1", [
    ((10, 20, 30), 0, 10), ((120, 300, 100), -10, 5), ((2, 3, 1), 0, 40), ((410, 800, 440), 0, 2),
])
@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_llr_trinomial_matches_brute_force(counts, elo0, elo1, model):
    h0, h1 = ((score_from_elo(e) for e in (elo0, elo1)) if model == "logistic"
              else (e / NELO_PER_T for e in (elo0, elo1)))
    expected = brute_llr_trinomial(*counts, h0, h1, model)
    assert sprt_llr(list(counts), elo0, elo1, model) == pytest.approx(expected, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("counts, elo0, elo1", [
    ((34, 54, 63, 64, 75), 0, 20), ((30, 250, 500, 260, 25), -5, 5), ((3, 9, 20, 7, 1), 0, 30),
])
@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_llr_pentanomial_matches_brute_force(counts, elo0, elo1, model):
    h0, h1 = ((score_from_elo(e) for e in (elo0, elo1)) if model == "logistic"
              else (math.sqrt(2) * e / NELO_PER_T for e in (elo0, elo1)))
    expected = brute_llr_pentanomial(counts, h0, h1, model)
    assert sprt_llr(list(counts), elo0, elo1, model) == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_llr_of_degenerate_counts():
    # all draws fit H0 (nElo 0) exactly, so the exact LLR must be negative; fastchess's test
    # prints +2.97 here because its fixed-point iteration stops at a 1e-4 change
    assert sprt_llr(WDL(draws=16700), 0, 5, "normalized") == pytest.approx(-3.4505, abs=1e-3)
    assert sprt_llr(Pentanomial(ww=104), 0, 5, "normalized") == pytest.approx(2.0950, abs=1e-3)
    assert sprt_llr(WDL(), 0, 5) == 0.0
    assert sprt_llr([0, 0, 0, 0, 40], 0, 5, "logistic") > 0 > sprt_llr([40, 0, 0, 0, 0], 0, 5, "logistic")


# -- the SPRT class -----------------------------------------------------------------------

def test_sprt_bounds_and_validation():
    assert sprt_bounds(0.05, 0.05) == pytest.approx((-2.944439, 2.944439), abs=1e-6)
    assert sprt_bounds(0.05, 0.1) == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))
    with pytest.raises(ValueError, match="elo0 .* must be below elo1"):
        SPRT(5, 0)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 0.5"):
        SPRT(0, 5, alpha=0.5)
    with pytest.raises(ValueError, match="beta must lie strictly between 0 and 0.5"):
        SPRT(0, 5, beta=0)
    with pytest.raises(ValueError, match="'logistic' or 'normalized'"):
        SPRT(0, 5, model="bayesian")


def test_sprt_updates_and_states():
    test = SPRT(0, 5, model="logistic")
    assert test.llr == 0.0 and test.state == "continue"
    test.update((1, 0.5)).update((0, 1))
    assert test.counts == Pentanomial(wd=1, wl=1)
    assert test.llr == sprt_llr(Pentanomial(wd=1, wl=1), 0, 5, "logistic")
    test.update(Pentanomial(ww=400))
    assert test.state == "H1 accepted" and test.llr >= test.bounds[1]
    assert SPRT(0, 5, model="logistic").update(Pentanomial(ll=400)).state == "H0 accepted"
    with pytest.raises(ValueError, match="do not mix"):
        test.update(WDL(wins=1))
    with pytest.raises(ValueError, match="pair"):
        test.update(1.5)


def test_summary_is_json_and_complete():
    counts = penta(34, 54, 31, 32, 64, 75)
    out = summary(counts, sprt=SPRT(0, 10, model="normalized"))
    json.dumps(out, allow_nan=False)
    assert out["games"] == 580 and out["pairs"] == 290
    assert out["pentanomial"] == [34, 54, 63, 64, 75] and out["pentanomial_split"] == {"DD": 32, "WL": 31}
    assert (out["wins"], out["draws"], out["losses"]) == (245, 182, 153)  # W = 2·75+64+31, D = 54+2·32+64
    assert out["elo"] == pytest.approx(55.58, abs=0.006) and out["nelo"] == pytest.approx(57.94, abs=0.006)
    assert out["los"] == los(counts)
    assert out["llr"] == sprt_llr(counts, 0, 10, "normalized") and out["state"] == "continue"
    assert out["bounds"] == pytest.approx([-2.944439, 2.944439], abs=1e-6)
    edge = summary(WDL(wins=3))  # score 1: infinite Elo, undefined nElo -> None
    json.dumps(edge, allow_nan=False)
    assert edge["elo"] is None and edge["elo_interval"][1] is None and edge["nelo"] is None
    assert edge["pairs"] is None and "llr" not in edge
    numpy_counts = summary(WDL(*np.array([3, 2, 1])), sprt=SPRT(np.float32(0), np.float32(5)))
    json.dumps(numpy_counts, allow_nan=False)  # numpy scalars in, plain Python numbers out
    empty = summary(Pentanomial())
    json.dumps(empty, allow_nan=False)
    assert empty["score"] is None and empty["los"] == 0.5


# -- SPRT error rates by simulation -------------------------------------------------------

PAIRS = [(0, 0), (0, 0.5), (0.5, 0.5), (1, 0), (1, 0.5), (1, 1)]  # LL LD DD WL WD WW
DRAW_RATE = 0.4


def pair_probabilities(elo):
    """Pairs of two independent games with A's score L(elo) and 40% draws, seats ignored."""
    s = score_from_elo(elo)
    w, d, l = s - DRAW_RATE / 2, DRAW_RATE, 1 - s - DRAW_RATE / 2
    return [l * l, 2 * l * d, d * d, 2 * w * l, 2 * w * d, w * w]


def run_sprts(true_elo, runs, seed, **settings):
    """Decisions of ``runs`` SPRTs fed one pair at a time, and their mean length in pairs."""
    rng = np.random.default_rng(seed)
    outcomes = rng.choice(6, size=(runs, 3000), p=pair_probabilities(true_elo))
    decisions, lengths = {"H0 accepted": 0, "H1 accepted": 0}, []
    for row in outcomes:
        test = SPRT(**settings)
        for k, outcome in enumerate(row):
            if test.update(PAIRS[outcome]).state != "continue":
                break
        decisions[test.state] += 1  # a KeyError would mean an unfinished test
        lengths.append(k + 1)
    return decisions, float(np.mean(lengths))


def wald_mean_pairs(true_elo, s0, s1, alpha=0.05, beta=0.05):
    """Wald's mean sample number with the GSPRT drift (s1-s0)(2s-s0-s1)/(2 var) per pair."""
    p = pair_probabilities(true_elo)
    a = np.array([0, 0.25, 0.5, 0.5, 0.75, 1])
    s = a @ p
    drift = (s1 - s0) * (2 * s - s0 - s1) / (2 * (p @ (a - s) ** 2))
    lower, upper = sprt_bounds(alpha, beta)
    accept_h1 = alpha if s < (s0 + s1) / 2 else 1 - beta
    return ((1 - accept_h1) * lower + accept_h1 * upper) / drift


@pytest.mark.slow
@pytest.mark.parametrize("true_elo", [0, 40])
def test_sprt_error_rates_logistic(true_elo):
    runs = 300
    decisions, mean_pairs = run_sprts(true_elo, runs, seed=1 + true_elo, elo0=0, elo1=40, model="logistic")
    wrong = decisions["H1 accepted" if true_elo == 0 else "H0 accepted"]
    assert 0.01 * runs <= wrong <= 2 * 0.05 * runs, decisions
    expected = wald_mean_pairs(true_elo, score_from_elo(0), score_from_elo(40))
    assert 0.75 < mean_pairs / expected < 1.25, (mean_pairs, expected)


@pytest.mark.slow
@pytest.mark.parametrize("true_elo", [0, 40])
def test_sprt_error_rates_normalized(true_elo):
    # nElo of the 40-Elo pairs: pairs of independent games, so sigma_game = sqrt(2)·sigma_pair
    s = score_from_elo(40)
    nelo1 = (s - 0.5) / math.sqrt(s - DRAW_RATE / 4 - s * s) * NELO_PER_T  # E[x²] = w + d/4
    runs = 150
    decisions, _ = run_sprts(true_elo, runs, seed=7 + true_elo, elo0=0, elo1=nelo1, model="normalized")
    wrong = decisions["H1 accepted" if true_elo == 0 else "H0 accepted"]
    assert 0.01 * runs <= wrong <= 2 * 0.05 * runs, decisions

"""Maximum-likelihood ratings over many players (jitsearch.arena.ratings)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from jitsearch.arena.ratings import GAMMA, fit_ratings, results_from_crosstable
from jitsearch.arena.stats import elo_from_score, normal_cdf, normal_quantile, score_from_elo

Z95 = normal_quantile(0.975)


def _by_name(fit):
    return {p["name"]: p for p in fit["players"]}


# -- (a) two players: closed forms ---------------------------------------------------------

@pytest.mark.parametrize("w,d,l", [(30, 10, 20), (7, 0, 3), (1, 5, 2)])
def test_two_players_half_model_is_elo_from_score(w, d, l):
    n = w + d + l
    s = (w + 0.5 * d) / n
    fit = fit_ratings([("A", "B", w, d, l)], draw_model="half", anchor="B")
    p = _by_name(fit)
    assert p["A"]["rating"] == pytest.approx(elo_from_score(s), abs=1e-7)
    assert p["B"]["rating"] == 0.0 and p["B"]["error"] == 0.0
    # delta method: var(score) = s(1-s)/n, d elo/d s = 1/(gamma s (1-s))
    se = 1.0 / (GAMMA * math.sqrt(n * s * (1.0 - s)))
    assert p["A"]["se"] == pytest.approx(se, rel=1e-7)
    assert p["A"]["error"] == pytest.approx(Z95 * se, rel=1e-7)
    assert fit["prior"] is None and fit["draw_nu"] is None
    # mean-0 gauge: each half the difference, half the error
    mean = _by_name(fit_ratings([("B", "A", l, d, w)], draw_model="half"))
    assert mean["A"]["rating"] == pytest.approx(elo_from_score(s) / 2, abs=1e-7)
    assert mean["B"]["rating"] == pytest.approx(-elo_from_score(s) / 2, abs=1e-7)
    assert mean["A"]["se"] == pytest.approx(se / 2, rel=1e-7)
    assert fit["los"][0][1] == pytest.approx(normal_cdf(abs(elo_from_score(s)) / se), rel=1e-9)  # top over next


def test_two_players_davidson_closed_form():
    # Davidson's MLE for one pair: P(win)/P(loss) = 10^(x/400) = w/l, nu = d / sqrt(w l)
    fit = fit_ratings([("A", "B", 30, 10, 20)], anchor="B")
    assert _by_name(fit)["A"]["rating"] == pytest.approx(400 * math.log10(30 / 20), abs=1e-7)
    assert fit["draw_nu"] == pytest.approx(10 / math.sqrt(30 * 20), rel=1e-9)
    # no draws: nu = 0 and the fit is the logistic one
    fit = fit_ratings([("A", "B", 7, 0, 3)], anchor="B")
    assert fit["draw_nu"] == 0.0
    assert _by_name(fit)["A"]["rating"] == pytest.approx(elo_from_score(0.7), abs=1e-7)


# -- (b) three players: the gradient is 0 at the fit ---------------------------------------

RESULTS3 = [("A", "B", 30, 10, 20), ("B", "C", 5, 3, 10), ("A", "C", 10, 2, 1)]


def _half_gradient(r, results):
    g = {k: 0.0 for k in r}
    for a, b, w, d, l in results:
        n, s = w + d + l, w + 0.5 * d
        e = score_from_elo(r[a] - r[b])
        g[a] += GAMMA * (s - n * e)
        g[b] -= GAMMA * (s - n * e)
    return g


def _davidson_gradient(r, nu, results):
    g, gt = {k: 0.0 for k in r}, 0.0
    for a, b, w, d, l in results:
        n, u = w + d + l, GAMMA * (r[a] - r[b]) / 2
        zsum = math.exp(u) + math.exp(-u) + nu
        pw, pl, pd = math.exp(u) / zsum, math.exp(-u) / zsum, nu / zsum
        g[a] += GAMMA / 2 * ((w - l) - n * (pw - pl))
        g[b] -= GAMMA / 2 * ((w - l) - n * (pw - pl))
        gt += d - n * pd  # d/d log(nu)
    return g, gt


def test_three_players_gradient_vanishes_half():
    fit = fit_ratings(RESULTS3, draw_model="half")
    r = {p["name"]: p["rating"] for p in fit["players"]}
    assert sum(r.values()) == pytest.approx(0.0, abs=1e-9)
    for v in _half_gradient(r, RESULTS3).values():
        assert abs(v) < 1e-9
    # a wrong fit does not: moving A by 1 Elo breaks it
    moved = dict(r, A=r["A"] + 1.0)
    assert abs(_half_gradient(moved, RESULTS3)["A"]) > 1e-4
    # the observed information by hand: its inverse (mean-0 gauge) is the covariance
    names = [p["name"] for p in fit["players"]]
    info = np.zeros((3, 3))
    for a, b, w, d, l in RESULTS3:
        i, j = names.index(a), names.index(b)
        n = w + d + l
        e = score_from_elo(r[a] - r[b])
        h = GAMMA**2 * n * e * (1 - e)
        info[i, i] += h
        info[j, j] += h
        info[i, j] -= h
        info[j, i] -= h
    cov = np.linalg.pinv(info)  # the Moore-Penrose inverse is the mean-0 gauge's covariance
    assert np.allclose(cov, np.array(fit["covariance"]), rtol=1e-6, atol=1e-6)


def test_three_players_gradient_vanishes_davidson():
    fit = fit_ratings(RESULTS3)
    r = {p["name"]: p["rating"] for p in fit["players"]}
    g, gt = _davidson_gradient(r, fit["draw_nu"], RESULTS3)
    assert max(abs(v) for v in g.values()) < 1e-9 and abs(gt) < 1e-8
    # sorted by rating, scores reported
    assert [p["rating"] for p in fit["players"]] == sorted(r.values(), reverse=True)
    a = _by_name(fit)["A"]
    assert (a["games"], a["wins"], a["draws"], a["losses"], a["points"]) == (73, 40, 12, 21, 46.0)


# -- (c) simulation from known ratings -----------------------------------------------------

TRUE = {"P1": -210.0, "P2": -90.0, "P3": 0.0, "P4": 110.0, "P5": 230.0}


def _simulate(true, games, seed, nu=0.0, shift=0.0):
    rng = np.random.default_rng(seed)
    names = list(true)
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            u = GAMMA * ((true[names[i]] + shift) - (true[names[j]] + shift)) / 2
            zsum = math.exp(u) + math.exp(-u) + nu
            w, d, l = rng.multinomial(games, [math.exp(u) / zsum, nu / zsum, math.exp(-u) / zsum])
            out.append((names[i], names[j], int(w), int(d), int(l)))
    return out


@pytest.mark.parametrize("model,nu", [("half", 0.0), ("davidson", 0.8)])
def test_simulation_recovers_true_ratings(model, nu):
    results = _simulate(TRUE, 400, seed=7, nu=nu)  # 4000 games
    fit = fit_ratings(results, draw_model=model)
    mean = sum(TRUE.values()) / len(TRUE)
    for p in fit["players"]:
        assert abs(p["rating"] - (TRUE[p["name"]] - mean)) < 3 * p["se"], p
        assert 5 < p["se"] < 40
    assert [p["name"] for p in fit["players"]] == sorted(TRUE, key=TRUE.get, reverse=True)
    if model == "davidson":
        assert fit["draw_nu"] == pytest.approx(nu, rel=0.15)
    # adjacent players 120 Elo apart at se ~ 15: LOS near 1
    for k in range(4):
        assert fit["los"][k][k + 1] > 0.99


# -- (d) invariance and the anchor ---------------------------------------------------------

def test_shifting_true_strengths_changes_nothing():
    a = fit_ratings(_simulate(TRUE, 100, seed=3, nu=0.5))
    b = fit_ratings(_simulate(TRUE, 100, seed=3, nu=0.5, shift=1234.0))
    assert a == b


def test_anchor_and_order_of_results():
    results = _simulate(TRUE, 60, seed=5, nu=0.5)
    plain = fit_ratings(results)
    anchored = fit_ratings(results, anchor="P3")
    p, q = _by_name(plain), _by_name(anchored)
    assert q["P3"]["rating"] == 0.0 and q["P3"]["error"] == 0.0
    for name in TRUE:  # a constant shift of every rating
        assert q[name]["rating"] - p[name]["rating"] == pytest.approx(-p["P3"]["rating"], abs=1e-7)
    for row_a, row_b in zip(plain["los"], anchored["los"]):
        assert [x for x in row_a if x is not None] == pytest.approx([x for x in row_b if x is not None], abs=1e-9)
    # reversed order and pairs given the other way round: the same fit
    flipped = [(b, a, l, d, w) for a, b, w, d, l in reversed(results)]
    f = _by_name(fit_ratings(flipped))
    for name in TRUE:
        assert f[name]["rating"] == pytest.approx(p[name]["rating"], abs=1e-7)
        assert f[name]["se"] == pytest.approx(p[name]["se"], rel=1e-7)


# -- (e) perfect scores --------------------------------------------------------------------

def test_perfect_score_gets_the_documented_prior():
    results = [("A", "B", 10, 0, 0), ("A", "C", 8, 0, 0), ("B", "C", 5, 2, 3)]
    for model in ("half", "davidson"):
        fit = fit_ratings(results, draw_model=model)
        assert fit["prior"]["virtual_draws"] == 1.0 and "A won or lost every" in fit["prior"]["reason"]
        a = _by_name(fit)["A"]
        assert math.isfinite(a["rating"]) and math.isfinite(a["error"]) and fit["players"][0]["name"] == "A"
        assert a["rating"] > 200
    # half model, two players 10-0: the prior is one draw of each against a virtual player at the mean, so
    # with mean 0 the ratings solve the likelihood with those draws added
    fit = fit_ratings([("A", "B", 10, 0, 0)], draw_model="half")
    r = _by_name(fit)
    ra, rb = r["A"]["rating"], r["B"]["rating"]
    assert ra == pytest.approx(-rb, abs=1e-6)
    ga = GAMMA * (10 - 10 * score_from_elo(ra - rb)) + GAMMA * (0.5 - score_from_elo(ra))
    assert abs(ga) < 1e-9
    # a bigger prior shrinks more; no prior refuses
    small = _by_name(fit_ratings([("A", "B", 10, 0, 0)], draw_model="half", virtual_draws=4))["A"]["rating"]
    assert small < ra
    with pytest.raises(ValueError, match="MLE is infinite .A, B won or lost every game"):
        fit_ratings([("A", "B", 10, 0, 0)], virtual_draws=0)
    # Davidson: a win and draws only is a one-sided score (nu would grow without bound); half model: finite
    fit = fit_ratings([("A", "B", 1, 3, 0)])
    assert "A, B won or lost every decisive game" in fit["prior"]["reason"]
    assert fit_ratings([("A", "B", 1, 3, 0)], draw_model="half")["prior"] is None
    # a group that took every point from another (no single perfect player) is handled too
    group = [("A", "B", 3, 1, 2), ("C", "D", 2, 2, 2), ("A", "C", 5, 0, 0), ("B", "D", 4, 0, 0)]
    fit = fit_ratings(group, draw_model="half")
    assert "a group of players" in fit["prior"]["reason"]


# -- (f) bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("results,kwargs,match", [
    ([("A", "B", -1, 0, 2)], {}, r"wins must be an integer >= 0, got -1"),
    ([("A", "B", 1.5, 0, 2)], {}, r"wins must be an integer"),
    ([("A", "", 1, 0, 2)], {}, r"non-empty string"),
    ([("A", 3, 1, 0, 2)], {}, r"non-empty string"),
    ([("A", "A", 1, 0, 2)], {}, r"cannot play itself"),
    ([("A", "B", 1, 0)], {}, r"results\[0\] must be"),
    ("AB", {}, r"results must be a list"),
    ([], {}, r"at least two players"),
    ([("A", "B", 1, 1, 1), ("C", "B", 0, 0, 0)], {}, r"no games: C"),
    ([("A", "B", 1, 1, 1), ("C", "D", 2, 0, 1)], {}, r"not all connected.*C, D never met"),
    ([("A", "B", 1, 1, 1)], {"anchor": "Z"}, r"anchor must be one of the players"),
    ([("A", "B", 1, 1, 1)], {"draw_model": "bayeselo"}, r"draw_model must be one of davidson, half"),
    ([("A", "B", 1, 1, 1)], {"confidence": 1.0}, r"confidence"),
    ([("A", "B", 0, 4, 0)], {}, r"every game was a draw"),
])
def test_bad_input(results, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_ratings(results, **kwargs)


def test_all_draws_half_model_is_zero():
    fit = fit_ratings([("A", "B", 0, 4, 0), ("B", "C", 0, 2, 0)], draw_model="half")
    assert all(p["rating"] == pytest.approx(0.0, abs=1e-9) for p in fit["players"])


def test_non_convergence_is_a_clear_error():
    with pytest.raises(RuntimeError, match="did not converge in 1 Newton"):
        fit_ratings(RESULTS3, max_iter=1)


def test_results_from_crosstable():
    r = {"engines": ["x", "y", "z"],
         "crosstable": [[None, {"wins": 2, "draws": 1, "losses": 1}, None],
                        [{"wins": 1, "draws": 1, "losses": 2}, None, {"wins": 0, "draws": 0, "losses": 0}],
                        [None, {"wins": 0, "draws": 0, "losses": 0}, None]]}
    assert results_from_crosstable(r) == [("x", "y", 2, 1, 1)]


# -- the CLI -------------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "jitsearch", "tournament", "--game", "kalah", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_round_robin_ratings(tmp_path):
    engines = "random alphabeta:depth=1 alphabeta:depth=3"
    p = _cli("--houses", "3", "--seeds", "2", "--engines", engines, "--format", "round-robin", "--pairs", "4",
             "--openings", "2", "--ratings", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    rt = out["ratings"]
    assert {"players", "los", "covariance", "draw_model", "draw_nu", "prior", "confidence"} <= set(rt)
    assert {pl["name"] for pl in rt["players"]} == set(engines.split())
    assert all({"rating", "error", "games", "score"} <= set(pl) for pl in rt["players"])
    # ratings are ordered as the scores are (every pair played the same number of games)
    scores = [pl["score"] for pl in rt["players"]]
    assert scores == sorted(scores, reverse=True)
    assert sum(pl["rating"] for pl in rt["players"]) == pytest.approx(0.0, abs=1e-6)
    p = _cli("--houses", "3", "--seeds", "2", "--engines", "random alphabeta:depth=2", "--format", "gauntlet",
             "--pairs", "2", "--ratings")
    assert p.returncode == 0, p.stderr
    assert "ratings" in p.stdout and "alphabeta:depth=2" in p.stdout and "±" in p.stdout


def test_cli_ratings_needs_engines():
    p = _cli("--houses", "3", "--seeds", "2", "--a", "random", "--b", "random", "--pairs", "1", "--ratings")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "--ratings" in p.stderr

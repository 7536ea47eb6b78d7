"""Maximum-likelihood ratings of many players from their pairwise results,
as Ordo and BayesElo compute them from a round robin or a gauntlet.

Model
-----
Bradley-Terry on the Elo scale: player i has a rating r_i and, with
gamma = ln(10)/400, decisive games follow the logistic Elo curve.

* ``draw_model="half"``: every draw counts as half a win and half a loss, so
  the likelihood of a pair is p^(W + D/2) (1 - p)^(L + D/2) with
  p = 1 / (1 + 10^(-(r_i - r_j)/400)), the expected score.
* ``draw_model="davidson"`` (default): Davidson's (1970) draw model with a
  fitted draw parameter nu >= 0. With u = gamma (r_i - r_j)/2,
  P(win) = e^u / Z, P(draw) = nu / Z, P(loss) = e^-u / Z, Z = e^u + e^-u + nu.
  At nu = 0 it is the logistic curve; a draw is evidence of equal strength.
  With no draw at all nu is 0 (its MLE) and the fit is the half model's;
  with no decisive game at all nu is infinite and the fit is refused.

Ratings are defined up to a constant: their mean is 0, or ``anchor``'s
rating is 0. The fit is Newton's method on the concave log-likelihood (with
a step-halving line search), to a step below ``tol`` Elo; it raises
``RuntimeError`` after ``max_iter`` iterations.

Perfect and zero scores
-----------------------
The MLE is finite only when the players cannot be split in two groups with
one group scoring every point against the other (Ford's condition: the
graph "i took a point or half a point from j" is strongly connected); a
player who won or lost every game is the usual case. Under Davidson's model
a draw does not bound a rating difference (nu grows with it), so there the
graph is "i won a game against j", and a player who won or lost every
decisive game (say 1 win and 3 draws) has an infinite MLE. Then, as BayesElo does
with its prior, every player gets ``virtual_draws`` (default 1) draws against
a virtual player of rating equal to the mean, counted as half a win and half
a loss in either draw model (so they do not move nu). This is a prior, not
data: the output says so (``prior``), the ratings are then shrunk a little
towards the mean, and they are finite. When the MLE exists no prior is used,
so for two players the rating difference is exactly
``elo_from_score(score)`` (half model).

Errors
------
Standard errors come from the inverse of the observed Fisher information
(the negative Hessian of the log-likelihood at the fit, nu included), in
the chosen gauge (mean 0, or the anchor fixed at 0 with error 0); ``error``
is z·se for the two-sided ``confidence``. ``los[i][j]`` is the probability
that player i is stronger than player j, Phi((r_i - r_j) / sd(r_i - r_j))
from the covariance; it does not depend on the gauge.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_choice, check_float, check_int, got
from .stats import normal_cdf, normal_quantile

DRAW_MODELS = ("davidson", "half")
#: gamma: natural-log odds per Elo point.
GAMMA = math.log(10.0) / 400.0


def results_from_crosstable(result: dict) -> list[tuple[str, str, int, int, int]]:
    """(engine_i, engine_j, wins_i, draws, losses_i) of each match of a
    :func:`jitsearch.arena.matches.run_engines` result (``engines`` and
    ``crosstable``), each unordered pair once."""
    engines, table = result["engines"], result["crosstable"]
    out = []
    for i in range(len(engines)):
        for j in range(i + 1, len(engines)):
            c = table[i][j]
            if c is not None and c["wins"] + c["draws"] + c["losses"] > 0:
                out.append((engines[i], engines[j], c["wins"], c["draws"], c["losses"]))
    return out


def _parse(results):
    """Players in order of appearance and the (i, j) -> [w, d, l] counts, i < j."""
    if isinstance(results, (str, bytes, dict)) or not hasattr(results, "__iter__"):
        raise ValueError(f"results must be a list of (player_i, player_j, wins_i, draws, losses_i), got {got(results)}")
    names: list[str] = []
    index: dict[str, int] = {}
    pairs: dict[tuple[int, int], list[int]] = {}
    for k, item in enumerate(results):
        if isinstance(item, (str, bytes)) or not hasattr(item, "__len__") or len(item) != 5:
            raise ValueError(f"results[{k}] must be (player_i, player_j, wins_i, draws, losses_i), got {got(item)}")
        a, b = item[0], item[1]
        for who in (a, b):
            if not isinstance(who, str) or not who.strip():
                raise ValueError(f"results[{k}]: a player's name must be a non-empty string, got {got(who)}")
        if a == b:
            raise ValueError(f"results[{k}]: player {a!r} cannot play itself")
        w, d, l = (check_int(f"results[{k}] {label}", v, 0) for label, v in
                   zip(("wins", "draws", "losses"), item[2:]))
        for who in (a, b):
            if who not in index:
                index[who] = len(names)
                names.append(who)
        i, j = index[a], index[b]
        if i > j:
            i, j, w, l = j, i, l, w
        acc = pairs.setdefault((i, j), [0, 0, 0])
        acc[0] += w
        acc[1] += d
        acc[2] += l
    if len(names) < 2:
        raise ValueError(f"ratings need results between at least two players, got {len(names)}")
    games = [0] * len(names)
    for (i, j), (w, d, l) in pairs.items():
        games[i] += w + d + l
        games[j] += w + d + l
    idle = [names[k] for k in range(len(names)) if games[k] == 0]
    if idle:
        raise ValueError(f"player(s) with no games: {', '.join(idle)}")
    return names, {p: c for p, c in pairs.items() if sum(c) > 0}


def _reach(n, edges, start):
    seen, todo = {start}, [start]
    while todo:
        k = todo.pop()
        for m in edges[k]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def _check_connected(names, pairs):
    edges = [set() for _ in names]
    for i, j in pairs:
        edges[i].add(j)
        edges[j].add(i)
    seen = _reach(len(names), edges, 0)
    if len(seen) < len(names):
        apart = [names[k] for k in range(len(names)) if k not in seen]
        raise ValueError(f"the players are not all connected by games: {', '.join(apart)} never met (even "
                         f"through others) {names[0]}, so their ratings cannot be compared")


def _mle_exists(n, pairs, davidson) -> bool:
    """Ford's condition: the graph i -> j when i took points from j is strongly connected (Davidson: when i
    won a game against j, a draw linking nobody)."""
    fwd, back = [set() for _ in range(n)], [set() for _ in range(n)]
    for (i, j), (w, d, l) in pairs.items():
        if davidson:
            d = 0
        if w + d:
            fwd[i].add(j)
            back[j].add(i)
        if l + d:
            fwd[j].add(i)
            back[i].add(j)
    return len(_reach(n, fwd, 0)) == n and len(_reach(n, back, 0)) == n


def _log_likelihood(r, t, terms, davidson):
    """Log-likelihood, gradient and Hessian in (r_0..r_{n-1}[, t = log nu]).

    ``terms``: (i, j, w, d, l, half) with j = -1 for the virtual player (rating 0); ``half`` terms use the
    half-draw model whatever ``davidson`` says."""
    n = len(r)
    m = n + (1 if davidson else 0)
    ll, g, h = 0.0, np.zeros(m), np.zeros((m, m))
    for i, j, w, d, l, half in terms:
        x = r[i] - (r[j] if j >= 0 else 0.0)
        games = w + d + l
        if half or not davidson:
            s = w + 0.5 * d
            z = GAMMA * x  # log p = -log(1 + e^-z)
            ll += -s * np.logaddexp(0.0, -z) - (games - s) * np.logaddexp(0.0, z)
            p = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
            gx, hxx, hxt, htt = GAMMA * (s - games * p), -GAMMA**2 * games * p * (1.0 - p), 0.0, 0.0
        else:
            a = GAMMA / 2.0
            y = np.array([a * x, -a * x, t])
            lse = np.logaddexp.reduce(y)
            pw, pl, pd = np.exp(y - lse)
            ll += (w - l) * a * x + (d * t if d else 0.0) - games * lse
            gx = a * ((w - l) - games * (pw - pl))
            hxx = -games * a * a * ((pw + pl) - (pw - pl) ** 2)
            hxt = games * a * pd * (pw - pl)
            htt = -games * pd * (1.0 - pd)
            g[n] += d - games * pd
            h[n, n] += htt
        g[i] += gx
        h[i, i] += hxx
        if j >= 0:
            g[j] -= gx
            h[j, j] += hxx
            h[i, j] -= hxx
            h[j, i] -= hxx
        if davidson and hxt:
            h[i, n] += hxt
            h[n, i] += hxt
            if j >= 0:
                h[j, n] -= hxt
                h[n, j] -= hxt
    return ll, g, h


def _newton(n, terms, davidson, free, tol, max_iter):
    """Maximise over the parameters listed in ``free`` (indices into (r..., t)); the others stay 0."""
    theta = np.zeros(n + 1)

    def split(th):
        return th[:n], th[n]

    ll, g, h = _log_likelihood(*split(theta), terms, davidson)
    for it in range(1, max_iter + 1):
        hf = h[np.ix_(free, free)]
        try:
            step = np.linalg.solve(-hf, g[free])
        except np.linalg.LinAlgError:
            raise RuntimeError("ratings: the information matrix is singular; the results do not determine the "
                               "ratings") from None
        scale = 1.0
        while True:
            trial = theta.copy()
            trial[free] += scale * step
            ll2, g2, h2 = _log_likelihood(*split(trial), terms, davidson)
            if ll2 >= ll - 1e-12 * abs(ll) or scale < 1e-6:
                break
            scale *= 0.5
        theta, ll, g, h = trial, ll2, g2, h2
        if np.max(np.abs(scale * step)) < tol:
            return theta, ll, h, it
    raise RuntimeError(f"ratings: the fit did not converge in {max_iter} Newton iterations (last step "
                       f"{np.max(np.abs(scale * step)):.3g}, tolerance {tol:g})")


def fit_ratings(results, *, draw_model: str = "davidson", anchor: str | None = None, confidence: float = 0.95,
                virtual_draws: float = 1.0, tol: float = 1e-9, max_iter: int = 100) -> dict:
    """Maximum-likelihood Elo ratings of every player (see the module's notes).

    ``results``: (player_i, player_j, wins_i, draws, losses_i) per pair, in
    any order; a pair given twice (either way round) is summed.
    ``virtual_draws``: the prior used only when the MLE is infinite (0: raise
    ValueError instead).

    Returns a dict: ``players`` sorted by rating (``name``, ``rating``,
    ``error`` = z·se, ``se``, ``games``, ``wins``, ``draws``, ``losses``,
    ``points``, ``score``), ``los`` (matrix in that order: P(row stronger than
    column), None on the diagonal), ``covariance`` (same order, Elo^2),
    ``draw_model``, ``draw_nu`` (Davidson's nu, else None), ``anchor``,
    ``confidence``, ``prior`` (None, or what was added and why),
    ``log_likelihood``, ``iterations``.
    """
    draw_model = check_choice("draw_model", draw_model, DRAW_MODELS)
    confidence = check_float("confidence", confidence, 0.0, 1.0, lo_open=True)
    if confidence >= 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}")
    virtual_draws = check_float("virtual_draws", virtual_draws, 0.0)
    tol = check_float("tol", tol, 0.0, lo_open=True)
    max_iter = check_int("max_iter", max_iter, 1)
    names, pairs = _parse(results)
    n = len(names)
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor must be one of the players ({', '.join(names)}), got {got(anchor)}")
    _check_connected(names, pairs)
    draws = sum(c[1] for c in pairs.values())
    decisive = sum(c[0] + c[2] for c in pairs.values())
    davidson = draw_model == "davidson" and draws > 0
    if draw_model == "davidson" and decisive == 0:
        raise ValueError("every game was a draw: Davidson's draw parameter is infinite and the ratings are not "
                         "determined; use draw_model='half' (all ratings 0)")
    terms = [(i, j, w, d, l, False) for (i, j), (w, d, l) in pairs.items()]
    prior = None
    if _mle_exists(n, pairs, davidson):
        free = list(range(1, n))  # player 0 fixed at 0 during the fit
    else:
        perfect = [names[k] for k in range(n) if _one_sided(k, pairs, davidson)]
        why = ("a group of players scored every point against the rest" if not perfect else
               f"{', '.join(perfect)} won or lost every {'decisive ' if davidson else ''}game")
        if virtual_draws == 0:
            raise ValueError(f"the ratings' MLE is infinite ({why}); allow virtual_draws > 0 for finite ratings")
        prior = {"virtual_draws": virtual_draws, "reason": f"the MLE is infinite: {why}",
                 "method": f"each player gets {virtual_draws:g} draw(s) against a virtual player of the mean rating"}
        terms += [(k, -1, 0.0, virtual_draws, 0.0, True) for k in range(n)]
        free = list(range(n))
    if davidson:
        free.append(n)
    theta, ll, h, iterations = _newton(n, terms, davidson, free, tol, max_iter)
    info = -h[np.ix_(free, free)]
    try:
        cov_free = np.linalg.inv(info)
    except np.linalg.LinAlgError:  # pragma: no cover - a strongly connected graph has a regular information
        raise RuntimeError("ratings: the information matrix is singular") from None
    cov = np.zeros((n, n))
    rating_idx = [k for k, f in enumerate(free) if f < n]
    players_free = [free[k] for k in rating_idx]
    cov[np.ix_(players_free, players_free)] = cov_free[np.ix_(rating_idx, rating_idx)]
    weights = np.zeros(n)
    if anchor is None:
        weights[:] = 1.0 / n
    else:
        weights[names.index(anchor)] = 1.0
    c = np.eye(n) - np.outer(np.ones(n), weights)
    ratings = c @ theta[:n]
    cov = c @ cov @ c.T
    z = normal_quantile(0.5 + confidence / 2.0)
    stats = [[0, 0, 0] for _ in range(n)]
    for (i, j), (w, d, l) in pairs.items():
        for k, (kw, kl) in ((i, (w, l)), (j, (l, w))):
            stats[k][0] += kw
            stats[k][1] += d
            stats[k][2] += kl
    order = sorted(range(n), key=lambda k: (-ratings[k], k))
    players = []
    for k in order:
        w, d, l = stats[k]
        se = math.sqrt(max(cov[k, k], 0.0))
        players.append({"name": names[k], "rating": float(ratings[k]), "error": z * se, "se": se,
                        "games": w + d + l, "wins": w, "draws": d, "losses": l, "points": w + 0.5 * d,
                        "score": (w + 0.5 * d) / (w + d + l)})
    los = [[None if a == b else _los(ratings, cov, a, b) for b in order] for a in order]
    return {"model": "Bradley-Terry (logistic Elo)", "draw_model": draw_model,
            "draw_nu": float(math.exp(theta[n])) if davidson else (0.0 if draw_model == "davidson" else None),
            "anchor": anchor, "confidence": confidence, "prior": prior, "players": players, "los": los,
            "covariance": [[float(cov[a, b]) for b in order] for a in order],
            "log_likelihood": float(ll), "iterations": iterations}


def _one_sided(k, pairs, davidson) -> bool:
    took = gave = 0
    for (i, j), (w, d, l) in pairs.items():
        if davidson:
            d = 0
        if k == i:
            took, gave = took + w + d, gave + l + d
        elif k == j:
            took, gave = took + l + d, gave + w + d
    return took == 0 or gave == 0


def _los(ratings, cov, a, b) -> float:
    var = cov[a, a] + cov[b, b] - 2.0 * cov[a, b]
    diff = ratings[a] - ratings[b]
    if var <= 0.0:
        return 0.5 if diff == 0 else float(diff > 0)
    return normal_cdf(diff / math.sqrt(var))

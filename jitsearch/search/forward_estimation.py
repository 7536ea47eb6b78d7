"""Forward estimation (Zhang, "Forward Estimation for Game-Tree Search") and alpha-beta on incremental trees.

Forward estimation is alpha-beta plus pruning conditions (1) of the paper:
when a child of cost ``c`` with ``r >= 1`` levels below it to the search
frontier is generated, it is not searched if

* it is a MIN node and ``c + u*r <= alpha``, or
* it is a MAX node and ``c + l*r >= beta``,

where ``l`` / ``u`` bound the edge costs. The child then returns the
estimate ``c + u*r`` (``c + l*r``), a bound on its value. Sources of
``(l, u)``: ``"exact"`` (the tree's edge-cost range, known a priori),
``"online"`` (running min / max of the edge costs generated so far in this
search, updated before each test), or fixed numbers learned off-line
(:class:`EdgeBounds`). The selective variant (3) multiplies both by
``delta`` in (0, 1]; the "most likely increments" of (2) are quantiles of a
learned edge-cost distribution (:meth:`EdgeBounds.likely`).

Complexity is counted as **node generations**: every child generated
(its cost computed) counts, pruned or searched; the root does not. Plain
alpha-beta is the same kernel with the conditions switched off, so both
count the same way. :func:`perfect_ordering_generations` gives the
generations of alpha-beta with perfect move ordering (LB) on the same tree.

Values are node costs from MAX's point of view; the root is MAX; children
are generated left to right; ties keep the lowest index.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._checks import check_bool, check_float, check_int, check_max_bytes, check_pair
from ..trees.incremental import IncrementalTree, inc_child_key, inc_edge_cost, inc_num_children, inc_root_key
from ..trees.memory import DEFAULT_MAX_BYTES, check_bytes, memory_guard
from .result import SearchResult

#: Per level of search depth: the stack arrays of ``incremental_search``.
STACK_BYTES = 7 * 8

BOUNDS_FIXED = 0
BOUNDS_ONLINE = 1


@njit(cache=True, nogil=True, inline="always")
def _incremental_body(branching, random_branching, edge_lo, edge_span, root_key, root_cost, root_max,
                      horizon, use_fe, bounds_mode, l_fixed, u_fixed, delta, counters):
    """Alpha-beta (``use_fe`` False) or forward estimation from one node.

    Inlined into :func:`incremental_search` (flags read at run time) and into
    the specialised kernels of :func:`_specialised_search`, where ``use_fe``
    and ``bounds_mode`` are compile-time constants.

    Searches ``horizon`` levels below the node (``root_key``,
    ``root_cost``, MAX to move when ``root_max``); frontier values are node
    costs. Adds the node generations to ``counters[0]``. Returns
    (value, best_child_index, l, u) with the (l, u) in use at the end (the
    learned ones with ``bounds_mode`` BOUNDS_ONLINE).
    """
    if horizon <= 0:
        return root_cost, np.int64(-1), l_fixed, u_fixed
    stack_key = np.empty(horizon + 1, dtype=np.uint64)
    stack_cost = np.empty(horizon + 1, dtype=np.float64)
    stack_n = np.empty(horizon + 1, dtype=np.int64)
    stack_k = np.empty(horizon + 1, dtype=np.int64)
    stack_alpha = np.empty(horizon + 1, dtype=np.float64)
    stack_beta = np.empty(horizon + 1, dtype=np.float64)
    stack_value = np.empty(horizon + 1, dtype=np.float64)
    online = bounds_mode == BOUNDS_ONLINE
    lo = math.inf if online else l_fixed
    hi = -math.inf if online else u_fixed
    gens = 0
    best = np.int64(-1)
    sp = 0
    stack_key[0] = root_key
    stack_cost[0] = root_cost
    stack_alpha[0] = -math.inf
    stack_beta[0] = math.inf
    entering = True
    ret = 0.0
    while True:
        if entering:
            stack_n[sp] = inc_num_children(stack_key[sp], branching, random_branching)
            stack_k[sp] = 0
            # MAX at even levels below a MAX root (levels alternate)
            stack_value[sp] = -math.inf if (sp % 2 == 0) == root_max else math.inf
            entering = False
        k = stack_k[sp]
        is_max = (sp % 2 == 0) == root_max
        if k < stack_n[sp] and stack_alpha[sp] < stack_beta[sp]:
            ck = inc_child_key(stack_key[sp], k)
            e = inc_edge_cost(ck, edge_lo, edge_span)
            c = stack_cost[sp] + e
            gens += 1
            if online:
                lo = min(lo, e)
                hi = max(hi, e)
            rest = horizon - (sp + 1)
            if rest == 0:
                ret = c
            else:
                pruned = False
                if use_fe:
                    if is_max:  # the child is a MIN node
                        est = c + hi * delta * rest
                        if est <= stack_alpha[sp]:
                            pruned = True
                    else:  # the child is a MAX node
                        est = c + lo * delta * rest
                        if est >= stack_beta[sp]:
                            pruned = True
                if pruned:
                    ret = est
                else:
                    stack_key[sp + 1] = ck
                    stack_cost[sp + 1] = c
                    stack_alpha[sp + 1] = stack_alpha[sp]
                    stack_beta[sp + 1] = stack_beta[sp]
                    sp += 1
                    entering = True
                    continue
        else:
            ret = stack_value[sp]
            if sp == 0:
                counters[0] += gens
                return ret, best, lo, hi
            sp -= 1
            k = stack_k[sp]
            is_max = (sp % 2 == 0) == root_max
        # child k of the node at sp returned ret
        if is_max:
            if ret > stack_value[sp]:
                stack_value[sp] = ret
                if sp == 0:
                    best = k
            if ret > stack_alpha[sp]:
                stack_alpha[sp] = ret
        else:
            if ret < stack_value[sp]:
                stack_value[sp] = ret
                if sp == 0:
                    best = k
            if ret < stack_beta[sp]:
                stack_beta[sp] = ret
        stack_k[sp] = k + 1


@njit(cache=True, nogil=True)
def incremental_search(branching, random_branching, edge_lo, edge_span, root_key, root_cost, root_max,
                       horizon, use_fe, bounds_mode, l_fixed, u_fixed, delta, counters):
    """Alpha-beta (``use_fe`` False) or forward estimation from one node.

    Searches ``horizon`` levels below the node (``root_key``,
    ``root_cost``, MAX to move when ``root_max``); frontier values are node
    costs. Adds the node generations to ``counters[0]``. Returns
    (value, best_child_index, l, u) with the (l, u) in use at the end (the
    learned ones with ``bounds_mode`` BOUNDS_ONLINE). The flags are read at
    run time (callable from other kernels); :func:`forward_estimation` runs
    a kernel compiled for its flags.
    """
    return _incremental_body(branching, random_branching, edge_lo, edge_span, root_key, root_cost, root_max,
                             horizon, use_fe, bounds_mode, l_fixed, u_fixed, delta, counters)


_SPECIALISED: dict = {}


def _specialised_search(use_fe: bool, bounds_mode: int):
    """``incremental_search`` with ``use_fe`` and ``bounds_mode`` compiled in
    (cached to disk per pair); called with the same arguments, flags included."""
    key = (bool(use_fe), int(bounds_mode))
    fn = _SPECIALISED.get(key)
    if fn is None:
        USE_FE, MODE = key

        @njit(cache=True, nogil=True)
        def kernel(branching, random_branching, edge_lo, edge_span, root_key, root_cost, root_max,
                   horizon, use_fe, bounds_mode, l_fixed, u_fixed, delta, counters):
            return _incremental_body(branching, random_branching, edge_lo, edge_span, root_key, root_cost,
                                     root_max, horizon, USE_FE, MODE, l_fixed, u_fixed, delta, counters)

        fn = _SPECIALISED[key] = kernel
    return fn


@njit(cache=True, nogil=True)
def _perfect_ordering_kernel(branching, random_branching, edge_lo, edge_span, root_key, horizon):
    """Generations of alpha-beta with perfect ordering on this very tree.

    Post-order walk of the whole tree to ``horizon`` computing, per node,
    its minimax value and the size of its critical subtree when it is a PV
    node (type 1: all children generated, best child type 1, the others
    type 2), a CUT node (type 2: only its best child generated, type 3) or
    an ALL node (type 3: all children generated, each type 2)
    (Knuth & Moore 1975). Returns the root's type-1 count.
    """
    if horizon <= 0:
        return np.int64(0)
    stack_key = np.empty(horizon + 1, dtype=np.uint64)
    stack_cost = np.empty(horizon + 1, dtype=np.float64)
    stack_n = np.empty(horizon + 1, dtype=np.int64)
    stack_k = np.empty(horizon + 1, dtype=np.int64)
    best_value = np.empty(horizon + 1, dtype=np.float64)
    best_t1 = np.empty(horizon + 1, dtype=np.int64)
    best_t2 = np.empty(horizon + 1, dtype=np.int64)
    best_t3 = np.empty(horizon + 1, dtype=np.int64)
    sum_t2 = np.empty(horizon + 1, dtype=np.int64)
    sp = 0
    stack_key[0] = root_key
    stack_cost[0] = 0.0
    entering = True
    r_value = 0.0
    r1 = r2 = r3 = np.int64(0)
    while True:
        if entering:
            stack_n[sp] = inc_num_children(stack_key[sp], branching, random_branching)
            stack_k[sp] = 0
            best_value[sp] = math.nan
            sum_t2[sp] = 0
            entering = False
        k = stack_k[sp]
        if k < stack_n[sp]:
            ck = inc_child_key(stack_key[sp], k)
            c = stack_cost[sp] + inc_edge_cost(ck, edge_lo, edge_span)
            if sp + 1 == horizon:
                r_value = c
                r1 = r2 = r3 = np.int64(0)
            else:
                stack_key[sp + 1] = ck
                stack_cost[sp + 1] = c
                sp += 1
                entering = True
                continue
        else:
            n = stack_n[sp]
            r_value = best_value[sp]
            r1 = n + best_t1[sp] + (sum_t2[sp] - best_t2[sp])
            r2 = 1 + best_t3[sp]
            r3 = n + sum_t2[sp]
            if sp == 0:
                return r1
            sp -= 1
            k = stack_k[sp]
        is_max = sp % 2 == 0
        better = k == 0 or (r_value > best_value[sp] if is_max else r_value < best_value[sp])
        if better:
            best_value[sp] = r_value
            best_t1[sp] = r1
            best_t2[sp] = r2
            best_t3[sp] = r3
        sum_t2[sp] += r2
        stack_k[sp] = k + 1


def perfect_ordering_generations(tree: IncrementalTree, depth: int | None = None,
                                 max_nodes: float = 2e9) -> int:
    """Node generations of alpha-beta with perfect ordering (LB) on ``tree``.

    Fixed branching ``b``: the Knuth-Moore count, sum over levels k = 1..d of
    b**ceil(k/2) + b**floor(k/2) - 1, with no search. Random branching: the
    critical tree of this tree, which needs a full minimax pass (refused
    when the tree is expected to have more than ``max_nodes`` nodes).
    """
    if not isinstance(tree, IncrementalTree):
        raise ValueError(f"expected an IncrementalTree, got {type(tree).__name__}")
    d = tree.depth if depth is None else check_int("depth", depth, 0, tree.depth)
    max_nodes = check_float("max_nodes", max_nodes, lo=0.0)
    if tree_is_uniform(tree):
        b = tree.branching
        return int(sum(b ** math.ceil(k / 2) + b ** (k // 2) - 1 for k in range(1, d + 1)))
    if tree.expected_nodes(d) > max_nodes:
        raise ValueError(
            f"the perfect-ordering count of a random-branching tree needs a full pass over about "
            f"{tree.expected_nodes(d):.3g} nodes: lower the depth or raise max_nodes"
        )
    return int(_perfect_ordering_kernel(tree.branching, tree.random_branching, tree.edge_lo,
                                        np.uint64(tree.edge_span), np.uint64(tree.root_key), d))


def tree_is_uniform(tree: IncrementalTree) -> bool:
    return not tree.random_branching


# -- learned edge-cost bounds ---------------------------------------------------------

@dataclass(frozen=True)
class EdgeBounds:
    """Edge-cost statistics learned off-line by sampling trees.

    ``lo``/``hi``: smallest and largest edge cost seen; ``quantiles``: a
    sorted array of the sampled costs' quantiles at ``levels``.
    """

    lo: float
    hi: float
    levels: tuple
    quantiles: tuple
    samples: int

    @classmethod
    def learn(cls, branching: int, *, random_branching: bool = False, trees: int = 20, depth: int = 3,
              seed: int = 10**6, edge_lo: int | None = None, edge_hi: int | None = None) -> "EdgeBounds":
        """Sample ``trees`` trees (seeds ``seed, seed+1, ...``) down to ``depth``."""
        trees = check_int("trees", trees, 1, 10**6)
        depth = check_int("depth", depth, 1, 64)
        seed = check_int("seed", seed, 0, 2**64 - 1 - trees)
        probe = IncrementalTree(branching, depth, seed=seed, random_branching=random_branching,
                                **({} if edge_lo is None else {"edge_lo": edge_lo}),
                                **({} if edge_hi is None else {"edge_hi": edge_hi}))
        # every sampled tree's edges are kept until they are concatenated
        check_bytes(trees * probe._worst_nodes(depth) * 16, DEFAULT_MAX_BYTES,
                    f"the edge costs of {trees} sampled trees of depth {depth}", "lower trees or depth")
        kw = {}
        if edge_lo is not None:
            kw["edge_lo"] = edge_lo
        if edge_hi is not None:
            kw["edge_hi"] = edge_hi
        costs = [
            IncrementalTree(branching, depth, seed=seed + i, random_branching=random_branching, **kw).edge_costs()
            for i in range(trees)
        ]
        allc = np.concatenate(costs)
        levels = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
        return cls(float(allc.min()), float(allc.max()), levels, tuple(float(q) for q in np.quantile(allc, levels)),
                   int(allc.size))

    def likely(self, q: float = 0.9) -> tuple[float, float]:
        """(l'', u''): the (1-q) and q quantiles, the "most likely" increments of (2)."""
        q = check_float("q", q)
        levels = [round(x, 10) for x in self.levels]
        if round(q, 10) not in levels or round(1 - q, 10) not in levels or q <= 0.5:
            raise ValueError(f"q must be one of {[x for x in levels if x > 0.5 and round(1 - x, 10) in levels]}")
        return self.quantiles[levels.index(round(1 - q, 10))], self.quantiles[levels.index(round(q, 10))]

    def to_json(self) -> dict:
        return {"lo": self.lo, "hi": self.hi, "levels": list(self.levels), "quantiles": list(self.quantiles),
                "samples": self.samples}

    def save(self, path) -> None:
        with open(path, "w") as fh:
            json.dump(self.to_json(), fh, indent=1)

    @classmethod
    def load(cls, path) -> "EdgeBounds":
        try:
            with open(path) as fh:
                obj = json.load(fh)
            b = cls(float(obj["lo"]), float(obj["hi"]), tuple(obj["levels"]), tuple(obj["quantiles"]),
                    int(obj["samples"]))
        except FileNotFoundError:
            raise ValueError(f"edge-bounds file not found: {path}") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not an edge-bounds file ({exc})") from None
        if not (math.isfinite(b.lo) and math.isfinite(b.hi)) or b.lo > b.hi:
            raise ValueError(f"{path}: edge bounds need finite lo <= hi")
        return b


# -- Python boundary ---------------------------------------------------------------------

def resolve_bounds(tree: IncrementalTree, bounds) -> tuple[int, float, float]:
    """(bounds_mode, l, u) from "exact", "online", an EdgeBounds or a pair."""
    if isinstance(bounds, str):
        if bounds == "exact":
            return BOUNDS_FIXED, float(tree.edge_lo), float(tree.edge_hi)
        if bounds == "online":
            return BOUNDS_ONLINE, 0.0, 0.0
        raise ValueError(f"bounds must be exact, online, an EdgeBounds or (l, u); got {bounds!r}")
    if isinstance(bounds, EdgeBounds):
        return BOUNDS_FIXED, bounds.lo, bounds.hi
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        raise ValueError(f"bounds must be exact, online, an EdgeBounds or (l, u); got {bounds!r}")
    lo, hi = check_pair("bounds", bounds, allow_inf=False)
    if lo > hi:
        raise ValueError(f"edge bounds need finite l <= u, got ({lo}, {hi})")
    return BOUNDS_FIXED, lo, hi


def _check_tree(tree, depth):
    if not isinstance(tree, IncrementalTree):
        raise ValueError("forward estimation needs an IncrementalTree (edge costs); use --random incremental")
    d = tree.depth if depth is None else depth
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or not 0 <= d <= tree.depth:
        raise ValueError(f"search depth must be an integer in 0..{tree.depth}, got {depth!r}")
    return int(d)


def _run(tree, depth, use_fe, bounds, delta, name, max_bytes):
    d = _check_tree(tree, depth)
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, (int, float, np.integer, np.floating)):
        raise ValueError(f"delta must be a number in (0, 1], got {type(delta).__name__} {delta!r}")
    delta = float(delta)
    if not 0 < delta <= 1:
        raise ValueError(f"delta must lie in (0, 1], got {delta}")
    mode, lo, hi = resolve_bounds(tree, bounds)
    max_bytes = check_max_bytes("max_bytes", max_bytes)
    check_bytes((d + 1) * STACK_BYTES, max_bytes, f"{name}'s search stack ({d + 1} levels)",
                "lower the depth or raise max_bytes (--max-memory)")
    counters = np.zeros(1, dtype=np.int64)
    with memory_guard(f"{name}'s search stack", "lower the depth"):
        value, best, learned_lo, learned_hi = _specialised_search(use_fe, mode)(
            tree.branching, tree.random_branching, tree.edge_lo, np.uint64(tree.edge_span),
            np.uint64(tree.root_key), 0.0, True, d, use_fe, mode, lo, hi, delta, counters,
        )
    gens = int(counters[0])
    extra = {"node_generations": gens, "search_depth": d}
    if use_fe:
        label = bounds if isinstance(bounds, str) else ("offline" if isinstance(bounds, EdgeBounds) else "given")
        extra.update(delta=delta, bounds=label, edge_lo=float(learned_lo), edge_hi=float(learned_hi))
    return SearchResult(
        algorithm=name,
        value=float(value),
        best_move=int(best),
        leaves_expanded=-1,
        nodes_visited=gens + 1,
        extra=extra,
    )


def forward_estimation(tree: IncrementalTree, *, depth: int | None = None, delta: float = 1.0,
                       bounds="exact", trace: bool = False, max_bytes: int = DEFAULT_MAX_BYTES) -> SearchResult:
    """Forward estimation to ``depth`` (default: the whole tree).

    Returns a SearchResult whose ``value`` is the root's (estimated) value,
    ``best_move`` the chosen root child, ``nodes_visited`` the generations
    plus the root, and ``extra``: ``node_generations``, ``search_depth``,
    ``delta``, ``bounds`` and the (l, u) used at the end of the search
    (``edge_lo``, ``edge_hi``; the learned ones with on-line bounds).
    ``leaves_expanded`` is -1: FE counts generations, not leaves.
    """
    if check_bool("trace", trace):
        raise ValueError("trace is not available for forward estimation (it counts node generations)")
    return _run(tree, depth, True, bounds, delta, "fe", max_bytes)


def incremental_alphabeta(tree: IncrementalTree, *, depth: int | None = None, trace: bool = False,
                          max_bytes: int = DEFAULT_MAX_BYTES) -> SearchResult:
    """Alpha-beta on an incremental tree, counting node generations like FE."""
    if check_bool("trace", trace):
        raise ValueError("trace is not available on incremental trees; materialise with tree.to_explicit()")
    return _run(tree, depth, False, "exact", 1.0, "alphabeta", max_bytes)


# -- games on random trees: searchers against each other (jitsearch.arena.random_tree_tournament) ------

# player parameter vector: [use_fe, bounds_mode, l, u, delta, horizon]
_P_FE, _P_MODE, _P_L, _P_U, _P_DELTA, _P_H = range(6)


@njit(cache=True, nogil=True)
def play_game(branching, random_branching, edge_lo, edge_span, tree_seed, total_depth, max_player, min_player):
    """One game on incremental random trees (Zhang, section 5; Korf & Chickering): a walk down a fresh
    tree of total depth ``total_depth``, MAX moving at the root, players alternating, each choosing
    its move by searching to its own horizon (``min(horizon, total_depth - depth)``) from the
    current node with alpha-beta or forward estimation; the cost of the leaf reached is the
    outcome (MAX wants it large). Returns (outcome, generations of MAX, generations of MIN).

    ``max_player`` and ``min_player`` are float64[6] parameter vectors
    ``[use_fe, bounds_mode, l, u, delta, horizon]`` (built by
    :meth:`jitsearch.arena.random_tree_tournament.PlayerSpec.params`, which plays the tournaments).
    """
    key = inc_root_key(tree_seed)
    cost = 0.0
    gens = np.zeros(2, dtype=np.int64)
    counter = np.zeros(1, dtype=np.int64)
    for depth in range(total_depth):
        p = max_player if depth % 2 == 0 else min_player
        horizon = min(np.int64(p[_P_H]), total_depth - depth)
        counter[0] = 0
        _, best, _, _ = incremental_search(
            branching, random_branching, edge_lo, edge_span, key, cost, depth % 2 == 0, horizon,
            p[_P_FE] > 0, np.int64(p[_P_MODE]), p[_P_L], p[_P_U], p[_P_DELTA], counter,
        )
        gens[depth % 2] += counter[0]
        key = inc_child_key(key, best)
        cost += inc_edge_cost(key, edge_lo, edge_span)
    return cost, gens[0], gens[1]


__all__ = [
    "EdgeBounds",
    "forward_estimation",
    "incremental_alphabeta",
    "incremental_search",
    "perfect_ordering_generations",
    "play_game",
]

"""Shared test helpers: seeded random trees of every shape."""

from __future__ import annotations

import signal

import numpy as np
import pytest

# A test run started in the background by a non-interactive shell inherits SIGINT ignored, and so would
# every process the tests start: the Ctrl-C tests would then see no Ctrl-C at all. Restore Python's
# default handler (the processes the tests start then get SIGINT's default, as from a terminal).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def random_nested(rng: np.random.Generator, max_depth: int, values: str = "ties", max_branching: int = 4):
    """A random ragged tree as nested lists (leaves may sit at any depth)."""

    def leaf():
        if values == "ties":
            return int(rng.integers(0, 4))
        if values == "binary":
            return int(rng.integers(0, 2))
        if values == "float":
            return float(rng.normal())
        return int(rng.integers(-(2**31), 2**31))

    def node(depth):
        if depth == max_depth or (depth > 0 and rng.random() < 0.25):
            return leaf()
        return [node(depth + 1) for _ in range(int(rng.integers(1, max_branching + 1)))]

    return node(0)


VALUE_KINDS = ("ties", "binary", "float", "wide")


def incremental_costs_py(tree) -> list[float]:
    """Cost of every node of ``tree`` (an IncrementalTree) in plain Python,
    breadth first from (seed, path): the twin of ``tree.to_explicit()``'s order."""
    from jitsearch.trees.incremental import child_key_py

    keys, costs, level = [tree.root_key], [0.0], [0]
    i = 0
    while i < len(keys):
        if level[i] < tree.depth:
            for j in range(tree.num_children_py(keys[i])):
                k = child_key_py(keys[i], j)
                keys.append(k)
                costs.append(costs[i] + tree.edge_cost_py(k))
                level.append(level[i] + 1)
        i += 1
    return costs


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def kill_when_ready(cmd, ready, timeout=120.0) -> bool:
    """Start ``cmd`` and SIGKILL it as soon as ``ready()`` is true (polled);
    True when it was killed, False when it ended first."""
    import os
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if ready():
            break
        time.sleep(0.02)
    killed = proc.poll() is None
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return killed


# -- slow tests: skipped unless --runslow ------------------------------------------------------------

def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (minutes each, e.g. re-solving shipped Kalah(6,4) openings)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: seconds to minutes each; skipped unless pytest is given --runslow "
                                       "(.ci/run runs them as its second step: pytest --runslow -m slow)")


def pytest_collection_modifyitems(config, items):
    # The mark sits on each slow test (@pytest.mark.slow, pytest.param(..., marks=pytest.mark.slow), or a module's
    # pytestmark). Chosen by measurement on an empty Numba cache: tests of several seconds each, and the variants
    # (other board sizes, tree shapes, value types) whose only cost is compiling kernels of their own, where another
    # default test already runs the same path; the default run keeps at least one test of every kernel and command.
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: give --runslow to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def kalah_match(houses=6, seeds=4, empty_capture=False, max_plies=300, openings=0, seed=0, suite=()):
    """A Kalah match (:func:`jitsearch.arena.matches.match_of`) with the fields, in the order, of the
    former ``KalahMatch`` (ply cap 300 unless given)."""
    from jitsearch.arena.matches import match_of

    return match_of("kalah", {"houses": houses, "seeds": seeds, "empty_capture": empty_capture}, openings=openings,
                    seed=seed, max_plies=max_plies, suite=tuple(suite))

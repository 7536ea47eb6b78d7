"""Shared test helpers: seeded random trees of every shape."""

from __future__ import annotations

import numpy as np
import pytest


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


@pytest.fixture
def rng():
    return np.random.default_rng(12345)

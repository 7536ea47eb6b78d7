"""tests/slow_tests.txt names tests that exist (a renamed test would
otherwise silently move back into the default run)."""

import pathlib
import re

HERE = pathlib.Path(__file__).parent


def test_every_listed_slow_test_exists():
    lines = [ln.strip() for ln in (HERE / "slow_tests.txt").read_text().splitlines()]
    ids = [ln for ln in lines if ln and not ln.startswith("#")]
    assert ids, "the list is empty"
    for node in ids:
        path, _, name = node.partition("::")
        func = name.split("[", 1)[0]
        source = (HERE.parent / path).read_text()
        assert re.search(rf"^def {re.escape(func)}\(", source, re.M), node

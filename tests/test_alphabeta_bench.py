"""``jitsearch bench alphabeta``: nodes/s of the alpha-beta over the game protocol for any game,
Numba against the same source in plain Python (the bench itself refuses a different tree)."""

from __future__ import annotations

import json

import pytest

from jitsearch.cli.app import main
from jitsearch.games import get


@pytest.mark.slow
@pytest.mark.parametrize("game, variant", [("connect4", {"width": 5, "height": 4}), ("oware", {"houses": 3}),
                                           ("kalah", {"houses": 3, "seeds": 3})])
def test_every_game_benches_with_the_same_tree_in_numba_and_python(capsys, game, variant):
    args = [a for k, v in variant.items() for a in ("-V", f"{k}={v}")]
    assert main(["bench", "alphabeta", "--game", game, *args, "--depths", "1-3:1", "--python-max-depth", "3",
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    start = get(game).initial(**variant)
    assert r["game"] == game and r["position"] == start.to_text() and [x["depth"] for x in r["rows"]] == [1, 2, 3]
    assert r["rows"][0]["nodes"] == 1 + len(start.legal_moves())  # the root and its children
    assert all(x["speedup_vs_python"] > 0 and x["ordered_nodes"] >= 1 for x in r["rows"])
    assert r["rows"][0]["move"] in start.legal_moves()

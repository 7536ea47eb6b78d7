"""``--game`` / ``--variant``: one parser for every command's game and variant."""

import pytest

from jitsearch.cli._support import UserError
from jitsearch.cli.game_options import initial_state, resolve_game, resolve_variant


def test_variant_pairs_and_flags_fill_the_games_defaults():
    kalah = resolve_game("kalah")
    assert resolve_variant(kalah, ["empty_capture=1"], houses=4) == {"houses": 4, "seeds": 4, "empty_capture": True}
    c4 = resolve_game("connect4")
    variant = resolve_variant(c4, ["width=8", "height=7"])
    assert variant == {"width": 8, "height": 7}
    assert initial_state(c4, variant).width == 8


@pytest.mark.parametrize("pairs, flags, words", [
    (["foo=1"], {}, "no variant option 'foo'"),
    (["houses"], {}, "KEY=VALUE"),
    (["houses=x"], {}, "int"),
    (["empty_capture=maybe"], {}, "0/1"),
    (["houses=4", "houses=5"], {}, "twice"),
    (["houses=4"], {"houses": 5}, "disagree"),
    ([], {"width": 7}, "does not apply to kalah"),
])
def test_bad_variants_are_one_line_user_errors(pairs, flags, words):
    with pytest.raises(UserError, match=words):
        resolve_variant(resolve_game("kalah"), pairs, **flags)


def test_unknown_game_and_bad_position_are_user_errors():
    with pytest.raises(UserError, match="known games"):
        resolve_game("chess")
    c4 = resolve_game("connect4")
    with pytest.raises(UserError):
        initial_state(c4, c4.defaults(), "not a board")

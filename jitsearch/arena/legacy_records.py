"""The arena's older match-record format, Kalah's (:attr:`ArenaHooks.legacy_records
<jitsearch.games.protocol.ArenaHooks>`, :func:`jitsearch.arena.records.legacy_game`): what reads and
checks the files written before every game played through :mod:`jitsearch.arena.game_match`, for
``jitsearch rate`` (:mod:`jitsearch.arena.rating_list`) and the web page's record replay. Matches
are no longer played in it, nor resumed from it.

A record of this format has no ``game`` field; its ``opening`` is the list of random opening plies,
``final_board`` the last board, ``margin`` player 0's store difference, and ``match`` (files with
check values) the :class:`LegacyMatch` settings. :class:`LegacyRecords` checks one against its match:
its fields, its check value (blake2b of its other fields), that its moves replay from its opening to
its final board, margin, length, cap flag and result, and that an external engine's forfeit
(``termination``) agrees with who was to move. Records of files written before check values existed
are accepted when they pass the replay.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass

import numpy as np

from ..games import get as get_game
from ..rng import mix64_py
from .external_engine import TERMINATIONS
from .records import (MAX_PAIRS, BadRecord, ForeignRecord, check_exact_moves, config_id, dict_differences, get_field,
                      is_int, legacy_game, result_of, verify_check)

#: Most plies a game may be capped at.
MAX_PLIES = 1_000_000


@dataclass(frozen=True)
class LegacyMatch:
    """The settings of a match of the older record format (Kalah's, every field part of its config id:
    board, rules, ply cap, random opening plies, seed, opening suite)."""

    houses: int = 6
    seeds: int = 4
    empty_capture: bool = False
    max_plies: int = 300
    openings: int = 0
    seed: int = 0
    #: An opening suite (position texts, :mod:`jitsearch.arena.openings`): pair p starts from
    #: ``suite[p % len(suite)]`` (then ``openings`` random plies, usually 0); empty: the start position.
    suite: tuple = ()

    @property
    def rules(self):
        """The game (:func:`jitsearch.arena.records.legacy_game`'s)."""
        return get_game(legacy_game())

    def start(self, text: str | None = None):
        """The start of this match's board, or the position ``text`` under its rules."""
        if text is None:
            return self.rules.initial(self.houses, self.seeds, self.empty_capture)
        return self.rules.from_text(text, empty_capture=self.empty_capture)

    def check(self):
        self.rules.initial(self.houses, self.seeds)  # validates the board size
        if not isinstance(self.empty_capture, (bool, np.bool_)):
            raise ValueError(f"empty_capture must be True or False, got {self.empty_capture!r}")
        if not is_int(self.max_plies) or not 1 <= self.max_plies <= MAX_PLIES:
            raise ValueError(f"max_plies must be an integer in 1..{MAX_PLIES:,}, got {self.max_plies!r}")
        if not is_int(self.openings) or self.openings < 0:
            raise ValueError(f"openings must be an integer >= 0, got {self.openings!r}")
        if self.openings >= self.max_plies:
            raise ValueError(f"openings ({self.openings}) must be below max_plies ({self.max_plies}): the "
                             f"opening plies count toward the cap and would leave nothing to play")
        if not is_int(self.seed) or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {self.seed!r}")
        if not isinstance(self.suite, tuple) or not all(isinstance(x, str) for x in self.suite):
            raise ValueError("suite must be a tuple of position texts")
        total = 2 * self.houses * self.seeds
        for i, text in enumerate(self.suite):
            s = self.start(text)
            if s.houses != self.houses or int(sum(int(x) for x in s.board)) != total or s.is_over:
                raise ValueError(f"opening {i + 1} ({text}) is not a live Kalah({self.houses},{self.seeds}) position")


def start_state(match: LegacyMatch, pair: int):
    """Where ``pair`` starts before its random opening plies: its suite
    position, or the initial position."""
    return match.start(match.suite[pair % len(match.suite)] if match.suite else None)


def _opening_state(match: LegacyMatch, pair: int) -> tuple:
    rng = random.Random(mix64_py(match.seed * 7919 + pair))
    s = start_state(match, pair)
    moves = []
    for _ in range(match.openings):
        if s.is_over:
            break
        mv = rng.choice(s.legal_moves())
        moves.append(mv)
        s = s.play(mv)
    return moves, s


def opening(match: LegacyMatch, pair: int) -> list[int]:
    """The seeded random opening plies of ``pair`` (shared by both seats)."""
    return _opening_state(match, pair)[0]


class LegacyRecords:
    """Checks the records of a file of the older format against one match (as
    :class:`jitsearch.arena.game_match.GameRecords` does the generic match's)."""

    def __init__(self, a: str, b: str, match: LegacyMatch):
        self.a, self.b, self.match = a, b, match
        self.settings = json.loads(json.dumps(asdict(match)))  # as a record holds it (tuples as lists)
        self.cid = config_id(a, b, match)
        self._openings: dict[int, list[int]] = {}

    def __call__(self, rec: dict):
        m = self.match
        if rec.get("game") not in (None, legacy_game()):
            name = str(rec["game"]).capitalize()
            raise ForeignRecord(f"{'an' if name[:1] in 'AEIOU' else 'a'} {name} game record in a Kalah match's file")
        pair = get_field(rec, "pair", "int", low=0, high=MAX_PAIRS - 1)
        seat = get_field(rec, "seat", "int", choices=(0, 1))
        a_player = get_field(rec, "a_player", "int", choices=(0, 1))
        a, b = get_field(rec, "a", "str"), get_field(rec, "b", "str")
        cid = get_field(rec, "config", "str")
        start = get_field(rec, "opening", "ints")
        moves = get_field(rec, "moves", "ints")
        plies = get_field(rec, "plies", "int", low=0)
        margin = get_field(rec, "margin", "int")
        final_board = get_field(rec, "final_board", "ints")
        capped = get_field(rec, "capped", "bool")
        a_result = get_field(rec, "a_result", "str", choices=("win", "draw", "loss"))
        termination = get_field(rec, "termination", "str", choices=TERMINATIONS) if "termination" in rec else None
        if "detail" in rec:
            get_field(rec, "detail", "str")
        check_exact_moves(rec, moves)
        if "match" in rec:
            get_field(rec, "match", "dict")
        if "check" in rec:
            get_field(rec, "check", "str")
        verify_check(rec)
        # -- is it this tournament's?
        if (a, b) != (self.a, self.b):
            raise ForeignRecord(f"players {a!r} vs {b!r} in the file, {self.a!r} vs {self.b!r} here")
        if "match" in rec:
            if rec["match"] != self.settings:
                raise ForeignRecord("settings differ: " + dict_differences(rec["match"], self.settings))
            if cid != self.cid:
                raise BadRecord("its config id does not agree with its players and settings")
        elif cid != self.cid:
            raise ForeignRecord(self._legacy_difference(final_board))
        # -- does it agree with itself?
        if a_player != seat:
            raise BadRecord(f"a_player {a_player} does not agree with seat {seat} (A is player 0 in seat 0)")
        if pair not in self._openings:
            self._openings[pair] = opening(m, pair)
        if start != self._openings[pair]:
            raise BadRecord(f"opening {start} is not pair {pair}'s seeded opening {self._openings[pair]}")
        if m.suite and rec.get("start") != m.suite[pair % len(m.suite)]:
            raise BadRecord(f"start {rec.get('start')!r} is not pair {pair}'s suite opening "
                            f"{m.suite[pair % len(m.suite)]!r}")
        final = self._replay(pair, start + moves)
        board, over, player = final.board, final.is_over, final.player
        if plies != len(start) + len(moves):
            raise BadRecord(f"plies {plies} does not agree with {len(start)} opening plies and {len(moves)} moves")
        if plies > m.max_plies:
            raise BadRecord(f"plies {plies} exceeds the ply cap {m.max_plies}")
        if termination is not None:  # lost by the engine to move in the last position
            if over or capped or plies >= m.max_plies:
                raise BadRecord(f"termination {termination!r} in a game that was over or capped")
        elif capped == over or (capped and plies != m.max_plies):
            raise BadRecord(f"capped {json.dumps(capped)} does not agree with the game ("
                            f"{'over' if over else 'not over'} after {plies} plies, cap {m.max_plies})")
        if final_board != [int(x) for x in board]:
            raise BadRecord(f"final_board {final_board} is not the board its moves lead to "
                            f"{[int(x) for x in board]}")
        real_margin = int(board[m.houses + 1] - board[0])
        if margin != real_margin:
            raise BadRecord(f"margin {margin} does not agree with the final board (margin {real_margin})")
        if termination is not None:
            expected = "loss" if player == a_player else "win"
            if a_result != expected:
                raise BadRecord(f"a_result {a_result!r} does not agree with a {termination} of player {player} "
                                f"(A is player {a_player})")
        elif a_result != result_of(margin, a_player):
            raise BadRecord(f"a_result {a_result!r} does not agree with margin {margin} and A as player {a_player}")
        return (pair, seat)

    def _replay(self, pair: int, plies: list[int]):
        """The position ``plies`` lead to from ``pair``'s start; ``BadRecord`` at a ply that is not legal."""
        s = start_state(self.match, pair)
        for i, pit in enumerate(plies):
            if s.is_over:
                raise BadRecord(f"ply {i + 1} (pit {pit}) comes after the end of the game")
            if pit not in s.legal_moves():
                raise BadRecord(f"ply {i + 1} (pit {pit}) is not a legal move of player {s.player}")
            s = s.play(pit)
        return s

    def _legacy_difference(self, final_board: list[int]) -> str:
        m = self.match
        houses = len(final_board) // 2 - 1
        if len(final_board) != 2 * m.houses + 2:
            return f"boards of {houses} houses a side in the file, {m.houses} here"
        if sum(final_board) != 2 * m.houses * m.seeds:
            return f"{sum(final_board)} seeds on its boards, {2 * m.houses * m.seeds} here"
        return ("its settings (rules, ply cap, openings or seed) differ: its config id does not match this "
                f"run's {self.cid}")

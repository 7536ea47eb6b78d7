"""The opening book: a book built for Kalah(3,3) under both rule sets
re-solved on a sample equals move_values; a damaged, truncated or foreign
file gives one warning line and None; the lookups an engine calls."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import random

import pytest

from jitsearch._io import check_value
from jitsearch.games.kalah import KalahState, move_values, solve_exact
from jitsearch.games.kalah.opening_book import (BOOKS_DIR, FORMAT, book_move, book_positions, book_value,
                                                build_book, dumps_book, load_book, parse_book, shipped_book,
                                                write_book)

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLIES = 3


@pytest.fixture(scope="module", params=[False, True], ids=["standard", "empty-capture"])
def book33(request):
    return build_book(3, 3, request.param, PLIES)


@pytest.fixture
def book_file(book33, tmp_path):
    return write_book(tmp_path / "k33.book", book33, command="test")


def warned(path, **kw):
    lines = []
    book = load_book(path, warn=lines.append, **kw)
    return book, lines


def test_positions_are_those_of_the_plies(book33):
    positions = book_positions(3, 3, book33.empty_capture, PLIES)
    assert set(book33.entries) == set(positions) and positions[KalahState.initial(3, 3).to_text()] == 0
    assert max(positions.values()) == PLIES and len(book33) == len(positions) > 20


def test_a_sample_re_solved_equals_move_values(book33):
    rng = random.Random(7)
    texts = sorted(book33.entries)
    sample = [KalahState.initial(3, 3, empty_capture=book33.empty_capture).to_text()] + rng.sample(texts, 6)
    for text in sample:
        state = KalahState.from_text(text, empty_capture=book33.empty_capture)
        r = move_values(state)
        assert book33.lookup(state) == {row["move"]: row["margin"] for row in r["moves"]}, text
        assert book_move(book33, state) == r["best_move"]
        assert book_value(book33, state) == r["value"]


def test_round_trip_and_lookup(book33, book_file):
    book, lines = warned(book_file, houses=3, seeds=3, empty_capture=book33.empty_capture)
    assert lines == [] and book.entries == book33.entries and book.header["command"] == "test"
    start = KalahState.initial(3, 3, empty_capture=book33.empty_capture)
    assert book.lookup(start) == book33.entries[start.to_text()]
    deep = start
    while deep.to_text() in book.entries:  # walk past the book's last ply
        deep = deep.play(deep.legal_moves()[0])
    assert not deep.is_over and book.lookup(deep) is None and book_move(book, deep) is None
    other_rules = KalahState.initial(3, 3, empty_capture=not book33.empty_capture)
    assert book.lookup(other_rules) is None
    assert book.lookup(KalahState.initial(4, 3, empty_capture=book33.empty_capture)) is None
    assert book_move(None, start) is None and book_value(None, start) is None


def test_file_is_compact_text(book_file):
    head, *body = book_file.read_text().splitlines()
    header = json.loads(head)
    assert header["format"] == FORMAT and header["plies"] == PLIES and header["positions"] == len(body)
    ply, text, moves = body[0].split("\t")
    assert ply == "0" and text == "3,3,3/0/3,3,3/0 p0" and moves.count(":") == 3


@pytest.mark.parametrize("where", ["header", "first line", "middle", "last byte"])
def test_a_flipped_byte_gives_one_line_and_none(book_file, where):
    data = bytearray(book_file.read_bytes())
    head = data.index(b"\n")
    offset = {"header": 20, "first line": head + 5, "middle": len(data) // 2, "last byte": len(data) - 2}[where]
    data[offset] ^= 0x01
    book_file.write_bytes(bytes(data))
    book, lines = warned(book_file)
    assert book is None and len(lines) == 1 and lines[0].startswith("warning: opening book not used: ")
    assert "\n" not in lines[0]


@pytest.mark.parametrize("keep", ["half", "no last line", "header only", "nothing", "half the header"])
def test_a_truncated_file_gives_one_line_and_none(book_file, keep):
    data = book_file.read_bytes()
    head = data.index(b"\n")
    cut = {"half": len(data) // 2, "no last line": data.rstrip(b"\n").rfind(b"\n") + 1, "header only": head + 1,
           "nothing": 0, "half the header": head // 2}[keep]
    book_file.write_bytes(data[:cut])
    book, lines = warned(book_file)
    assert book is None and len(lines) == 1 and lines[0].startswith("warning: opening book not used: ")


def test_missing_foreign_and_not_a_book(book33, book_file, tmp_path):
    book, lines = warned(tmp_path / "none.book")
    assert book is None and len(lines) == 1 and "none.book" in lines[0]
    book, lines = warned(book_file, houses=6)
    assert book is None and len(lines) == 1 and "houses=3, not houses=6" in lines[0]
    book, lines = warned(book_file, empty_capture=not book33.empty_capture)
    assert book is None and len(lines) == 1
    other = tmp_path / "x.book"
    other.write_text('{"format": "something else"}\n')
    book, lines = warned(other)
    assert book is None and "not a Kalah opening book" in lines[0]
    book, lines = warned(tmp_path)  # a directory
    assert book is None and len(lines) == 1


def test_a_wrong_value_with_good_check_values_is_caught(book33):
    """A value changed and both check values recomputed (a buggy generator, not damage): refused, since a
    position's value no longer agrees with its parent's move."""
    text = dumps_book(book33)
    head, *body = text.splitlines()
    for i, line in enumerate(body):
        ply, pos, moves = line.split("\t")
        if ply == "1":
            pit, _, margin = moves.split(" ")[0].partition(":")
            body[i] = f"{ply}\t{pos}\t" + " ".join([f"{pit}:{int(margin) + 2:+d}"] + moves.split(" ")[1:])
            break
    new_body = "".join(x + "\n" for x in body)
    header = json.loads(head)
    from jitsearch.games.kalah.opening_book import _digest

    header["body_check"] = _digest(new_body.encode())
    header["check"] = check_value(header)
    with pytest.raises(ValueError, match="is worth"):
        parse_book((json.dumps(header, sort_keys=True) + "\n" + new_body).encode())


def test_book_command(tmp_path):
    spec = importlib.util.spec_from_file_location("perfect_play", ROOT / "bench" / "perfect_play.py")
    pp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pp)
    out = tmp_path / "k33.book"
    cache = tmp_path / "cache.jsonl"
    argv = ["book", "--houses", "3", "--seeds", "3", "--plies", "2", "--endgame-seeds", "0", "--out", str(out),
            "--cache", str(cache)]
    assert pp.main(argv) == 0
    book = load_book(out, houses=3, seeds=3, empty_capture=False)
    assert book is not None and book.header["command"].endswith(" ".join(argv))
    solved = len(cache.read_text().splitlines())
    assert 0 < solved < len(book)  # only the last ply is searched; the rest comes from the children
    out.unlink()
    assert pp.main(argv) == 0 and len(cache.read_text().splitlines()) == solved  # all from the cache
    assert load_book(out).entries == book.entries


SHIPPED = sorted(p.name for p in BOOKS_DIR.glob("*.book"))


def shipped(name):
    m, n = (int(x) for x in name.split("-")[1:3])
    ec = "empty-capture" in name
    book = shipped_book(m, n, ec, warn=pytest.fail)
    assert book is not None and (book.houses, book.seeds, book.empty_capture) == (m, n, ec)
    return book


def test_the_kalah_6_4_books_are_shipped():
    assert {"kalah-6-4-standard.book", "kalah-6-4-empty-capture.book"} <= set(SHIPPED)
    for name in SHIPPED:
        assert (BOOKS_DIR / name).stat().st_size < 1024**2


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_books_agree_with_the_balanced_suites(name):
    """The book against the shipped balanced suite, solved apart (a 20-seed endgame database: a second
    solver run, at no cost here): a suite position in the book has the suite's value, a book move into a
    suite position is worth the suite's value, and a book move into a position whose mover can reach a suite
    position is worth at least that for the mover (the suites start 2-6 plies from the start)."""
    from jitsearch.arena.opening_suites import shipped_suite

    book = shipped(name)
    suite = {o.position: o.value for o in shipped_suite(book.houses, book.seeds, book.empty_capture)
             if o.method == "exact"}
    equal = bounds = 0
    for text, values in book.entries.items():
        state = KalahState.from_text(text, empty_capture=book.empty_capture)
        if text in suite:
            assert (max if state.player == 0 else min)(values.values()) == suite[text], text
            equal += 1
        for pit, margin in values.items():
            child = state.play(pit)
            if child.to_text() in suite:
                assert margin == suite[child.to_text()], (text, pit)
                equal += 1
            if child.is_over:
                continue
            sign = 1 if child.player == 0 else -1
            for grand in child.legal_moves():
                g = child.play(grand).to_text()
                if g in suite:
                    assert sign * margin >= sign * suite[g], (text, pit, grand)
                    bounds += 1
    assert equal + bounds > 0


def _re_solve(book, count, seed):
    from jitsearch.games.kalah import default_cache_dir

    plies = book_positions(book.houses, book.seeds, book.empty_capture, book.plies)
    deepest = sorted(t for t in book.entries if plies[t] == book.plies)
    rng = random.Random(seed)
    for text in rng.sample(deepest, min(count, len(deepest))):
        state = KalahState.from_text(text, empty_capture=book.empty_capture)
        for pit in state.legal_moves():
            child = state.play(pit)
            r = solve_exact(child, endgame_seeds=min(book.header.get("endgame_seeds", 0), child.seeds_total),
                            endgame_cache_dir=default_cache_dir())
            assert r["complete"] and book.lookup(state)[pit] == r["margin"], (text, pit)


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_books_re_solved_on_a_sample(name):
    """Every move of two random deepest positions of each shipped book, re-solved (the book's values above
    them follow by the loader's checks). Slow: each is a solve of a Kalah(6,4) opening, 10-220 s here (the
    default run checks the books against the balanced suites' exact values instead)."""
    _re_solve(shipped(name), 2, random.randrange(1 << 30))


# -- the engine's use of the book --------------------------------------------------------------

@pytest.fixture
def books_dir(tmp_path, monkeypatch):
    """An empty folder in place of the package's books (and no book read yet)."""
    from jitsearch.games.kalah import opening_book

    monkeypatch.setattr(opening_book, "BOOKS_DIR", tmp_path / "books")
    monkeypatch.setattr(opening_book, "_LOADED", {})
    return tmp_path / "books"


def test_the_engine_plays_the_book_and_says_so(book33, books_dir):
    from jitsearch.games.kalah.engine import SCALE, KalahEngine
    from jitsearch.games.kalah.opening_book import book_file_name

    ec = book33.empty_capture
    write_book(books_dir / book_file_name(3, 3, ec), book33)
    engine = KalahEngine(3, table_mb=1)
    texts = sorted(book33.entries)
    for text in [KalahState.initial(3, 3, empty_capture=ec).to_text()] + random.Random(3).sample(texts, 5):
        state = KalahState.from_text(text, empty_capture=ec)
        r = engine.search(state, time_limit=5.0)
        assert r["book"] is True and r["exact"] is True and r["nodes"] == 0 and r["pv"] == [r["move"]]
        assert r["move"] == book_move(book33, state) and r["margin"] == book_value(book33, state)
        assert r["value"] == SCALE * r["margin"]
    start = KalahState.initial(3, 3, empty_capture=ec)
    assert engine.search(start, depth=2)["book"] is False  # a fixed-depth search is a search
    assert KalahEngine(3, table_mb=1, book=False).search(start, time_limit=0.05)["book"] is False
    deeper = start
    while deeper.to_text() in book33.entries:
        deeper = deeper.play(deeper.legal_moves()[-1])
    if not deeper.is_over:
        assert engine.search(deeper, time_limit=0.05)["book"] is False
    with pytest.raises(ValueError, match="book"):
        KalahEngine(3, book=2)


def test_a_damaged_shipped_book_warns_once_and_the_engine_searches(book33, books_dir, capsys):
    from jitsearch.games.kalah.engine import KalahEngine
    from jitsearch.games.kalah.opening_book import book_file_name

    ec = book33.empty_capture
    path = write_book(books_dir / book_file_name(3, 3, ec), book33)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1  # one bit flipped in the positions
    path.write_bytes(bytes(data))
    start = KalahState.initial(3, 3, empty_capture=ec)
    results = [KalahEngine(3, table_mb=1).search(start, time_limit=0.05) for _ in range(2)]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: opening book not used: ") and str(path) in err[0]
    for r in results:
        assert r["book"] is False and r["move"] in start.legal_moves()


def test_the_agent_spec_turns_the_book_off_and_reports_it():
    """``alphabeta:time=T,book=0`` builds an engine without the book; ``book=`` is an engine option (refused with
    plain=1, a bad value in one line); a book move's info line says ``book 1``."""
    from jitsearch.arena.agents import parse_agent
    from jitsearch.arena.engine_protocol import _info_lines

    state = KalahState.initial(6, 4)
    assert parse_agent("alphabeta:time=0.05,book=0").game_engine(state).book is False
    assert parse_agent("alphabeta:time=0.05").game_engine(state).book is True
    for bad, words in (("alphabeta:depth=3,plain=1,book=1", "book="), ("alphabeta:time=0.05,book=maybe", "book")):
        with pytest.raises(ValueError, match=words):
            parse_agent(bad)
    assert "book 1" in _info_lines({"depth": 0, "exact": True, "margin": 8, "book": True})[0]

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
from jitsearch.games.kalah import KalahState, move_values
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


@pytest.mark.parametrize("name", sorted(p.name for p in BOOKS_DIR.glob("*.book")) or ["none shipped"])
def test_shipped_books_re_solved_on_a_sample(name):
    """Each shipped book loads, and a sample of its deepest positions re-solved equals move_values."""
    if name == "none shipped":
        pytest.skip("no book is shipped")
    m, n = (int(x) for x in name.split("-")[1:3])
    ec = "empty-capture" in name
    book = shipped_book(m, n, ec, warn=pytest.fail)
    assert book is not None
    plies = book_positions(m, n, ec, book.plies)
    deepest = sorted(t for t in book.entries if plies[t] == book.plies)
    from jitsearch.games.kalah import default_cache_dir

    for text in random.Random(0).sample(deepest, 1):
        state = KalahState.from_text(text, empty_capture=ec)
        r = move_values(state, endgame_seeds=book.header.get("endgame_seeds", 0),
                        endgame_cache_dir=default_cache_dir())
        assert book.lookup(state) == {row["move"]: row["margin"] for row in r["moves"]}

"""bench/perfect_play.py: seeds lost against hand-made move values, the
intervals, drawing the fixed positions, and the records step on a tiny
tournament file, with every value checked against a naive full minimax."""

from __future__ import annotations

import functools
import importlib.util
import json
import pathlib

import pytest

from jitsearch.games.kalah import KalahState

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pp():
    spec = importlib.util.spec_from_file_location("perfect_play", ROOT / "bench" / "perfect_play.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@functools.lru_cache(maxsize=None)
def naive_margin(text: str, empty_capture: bool) -> int:
    """Player 0's final margin under perfect play, by plain minimax over every line (small boards only)."""
    s = KalahState.from_text(text, empty_capture=empty_capture)
    if s.is_over:
        return s.margin
    values = [naive_margin(s.play(mv).to_text(), empty_capture) for mv in s.legal_moves()]
    return max(values) if s.player == 0 else min(values)


def naive_loss(state: KalahState, move: int) -> int:
    sign = 1 if state.player == 0 else -1
    vals = {mv: sign * naive_margin(state.play(mv).to_text(), state.empty_capture) for mv in state.legal_moves()}
    return max(vals.values()) - vals[move]


# -- the arithmetic ----------------------------------------------------------------------------

def test_seeds_lost_player0(pp):
    #  player 0 to move, margins are player 0's: the best is +4 (pit 3)
    margins = {1: -2, 2: 0, 3: 4, 5: 4}
    assert pp.seeds_lost(margins, 0, 3) == 0
    assert pp.seeds_lost(margins, 0, 5) == 0  # a tie for the best is optimal too
    assert pp.seeds_lost(margins, 0, 2) == 4
    assert pp.seeds_lost(margins, 0, 1) == 6


def test_seeds_lost_player1_takes_the_mover_view(pp):
    #  player 1 to move: it wants player 0's margin low, the best is -6 (pit 9)
    margins = {"8": 2, "9": -6, "10": 0}  # keys as a JSON file holds them
    assert pp.seeds_lost(margins, 1, 9) == 0
    assert pp.seeds_lost(margins, 1, 10) == 6
    assert pp.seeds_lost(margins, 1, 8) == 8


def test_seeds_lost_refuses_bad_input(pp):
    with pytest.raises(ValueError, match="not one of the valued moves"):
        pp.seeds_lost({1: 0}, 0, 2)
    with pytest.raises(ValueError, match="player"):
        pp.seeds_lost({1: 0}, 2, 1)
    with pytest.raises(ValueError, match="game is over"):
        pp.seeds_lost({}, 0, 1)


def test_summarise(pp):
    s = pp.summarise([0, 0, 0, 2, 0, 4, 0, 0, 0, 0])
    assert s["moves"] == 10 and s["optimal"] == 8 and s["optimal_share"] == 0.8
    assert s["seeds_lost_per_move"] == pytest.approx(0.6)
    assert s["max_loss"] == 4 and s["loss_histogram"] == {"0": 8, "2": 1, "4": 1}
    lo, hi = s["optimal_interval"]
    assert lo < 0.8 < hi and 0 <= lo and hi <= 1
    lo, hi = s["seeds_lost_interval"]
    assert 0 <= lo <= 0.6 <= hi <= 4
    assert pp.summarise([])["moves"] == 0
    assert pp.summarise([0, 0])["seeds_lost_interval"] == [0.0, 0.0]


def test_wilson_matches_the_arena(pp):
    from jitsearch.arena.records import wilson

    for k, n in [(0, 5), (3, 7), (40, 40), (19, 40)]:
        assert pp.wilson(k, n) == pytest.approx(wilson(k, n))


# -- the fixed positions -----------------------------------------------------------------------

def test_draw_position_is_fixed_and_playable(pp):
    a = pp.draw_position("kalah-6-4-standard", 3, seed=0)
    b = pp.draw_position("kalah-6-4-standard", 3, seed=0)
    assert a[0] == b[0] and a[1:] == b[1:]
    state, start, moves = a
    assert 2 <= len(moves) <= 10 and not state.is_over and len(state.legal_moves()) > 1
    s = KalahState.from_text(start)
    for mv in moves:
        s = s.play(mv)
    assert s == state
    other = pp.draw_position("kalah-6-4-empty-capture", 3, seed=0)[0]
    assert other.empty_capture and not state.empty_capture
    assert pp.draw_position("kalah-6-4-standard", 4, seed=0)[0] != state


def test_fixed_positions_file_agrees_with_its_draws(pp):
    """The saved set (bench/results) is what the seeded draw gives, and its values fit the position."""
    path = pp.POSITIONS
    if not path.exists():
        pytest.skip("no fixed positions saved yet")
    data = pp.read_positions(path)
    for name, entry in data["sets"].items():
        for p in entry["positions"][:5]:
            state, start, moves = pp.draw_position(name, p["index"], entry["seed"])
            assert p["position"] == state.to_text() and p["start"] == start and p["moves"] == moves
            assert sorted(int(k) for k in p["values"]) == state.legal_moves()
            assert max(pp.seeds_lost(p["values"], state.player, mv) for mv in state.legal_moves()) >= 0
            sign = 1 if state.player == 0 else -1
            assert p["best_value"] == max(sign * v for v in p["values"].values())


# -- the records step --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_tournament(tmp_path_factory):
    """Four games of Kalah(3,2), random against alphabeta:depth=1, in Kalah's older record format (the one
    ``bench/perfect_play.py records`` reads: ``tests/data/kalah_legacy_k32.jsonl``)."""
    out = tmp_path_factory.mktemp("records") / "k32.jsonl"
    out.write_text((ROOT / "tests" / "data" / "kalah_legacy_k32.jsonl").read_text())
    return out


def test_records_step_against_naive_minimax(pp, tiny_tournament, tmp_path):
    records = pp.read_tournament_records(tiny_tournament)
    assert len(records) == 4
    expected: dict = {}
    for rec in records:
        for state, mv, side in pp.game_positions(rec):
            if len(state.legal_moves()) > 1:
                expected.setdefault(rec[side], []).append(naive_loss(state, mv))
    cache = tmp_path / "cache.jsonl"
    solver = pp.Solver(pp.SolveCache(cache), endgame_seeds=0)
    losses, forced = pp.record_losses(records, solver)
    assert losses == expected
    assert set(losses) == {"random", "alphabeta:depth=1"}
    # the cache holds every solved position; a second run solves none
    again = pp.Solver(pp.SolveCache(cache), endgame_seeds=0)
    assert pp.record_losses(records, again) == (losses, forced)
    assert again.solved == 0 and solver.solved == len(cache.read_text().splitlines())


def test_records_of_the_arenas_format_replay_from_their_opening(pp, tmp_path):
    """A record of ``jitsearch tournament --out`` (its moves start at the position ``opening`` names, after
    the opening's plies): the positions the step values are the game's, and every move is valued."""
    from jitsearch.cli.app import main

    out = tmp_path / "k32.jsonl"
    assert main(["tournament", "--game", "kalah", "--houses", "3", "--seeds", "2", "--empty-capture", "--a", "random",
                 "--b", "alphabeta:depth=1", "--pairs", "2", "--openings", "2", "--out", str(out)]) == 0
    records = pp.read_tournament_records(out)
    assert len(records) == 4 and all(r["opening_moves"] for r in records)
    for rec in records:
        positions = list(pp.game_positions(rec))
        assert positions[0][0].to_text() == rec["opening"] and [mv for _, mv, _ in positions] == rec["moves"]
        last, mv, _ = positions[-1]
        assert last.empty_capture and last.play(mv).to_text() == rec["final"]
        assert {side for _, _, side in positions} <= {"a", "b"}
    solver = pp.Solver(pp.SolveCache(tmp_path / "cache.jsonl"), endgame_seeds=0)
    losses, forced = pp.record_losses(records, solver)
    assert set(losses) == {"random", "alphabeta:depth=1"}
    assert sum(len(x) for x in losses.values()) + sum(forced.values()) == sum(len(r["moves"]) for r in records)


def test_records_command_json(pp, tiny_tournament, tmp_path, capsys):
    out = tmp_path / "summary.json"
    rc = pp.main(["records", str(tiny_tournament), "--endgame-seeds", "0", "--cache", str(tmp_path / "c.jsonl"),
                  "--out", str(out)])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["games"] == 4
    for name in ("random", "alphabeta:depth=1"):
        row = printed["players"][name]
        assert {"moves", "seeds_lost_per_move", "optimal_share", "optimal_interval", "forced_moves"} <= set(row)
    assert json.loads(out.read_text())


def test_records_damaged_cache_line_is_solved_again(pp, tiny_tournament, tmp_path, capsys):
    cache = tmp_path / "cache.jsonl"
    records = pp.read_tournament_records(tiny_tournament)
    first = pp.record_losses(records, pp.Solver(pp.SolveCache(cache), endgame_seeds=0))
    lines = cache.read_text().splitlines()
    lines[0] = lines[0].replace('"values": {', '"values": {"99": 0, ', 1)  # an edited line
    cache.write_text("\n".join(lines) + "\n")
    solver = pp.Solver(pp.SolveCache(cache), endgame_seeds=0)
    assert "1 damaged line" in capsys.readouterr().err
    assert pp.record_losses(records, solver) == first and solver.solved == 1


def test_records_refuses_an_edited_record_in_one_line(pp, tiny_tournament, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    lines = tiny_tournament.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["moves"] = rec["moves"][:-1]
    lines[1] = json.dumps(rec)
    bad.write_text("\n".join(lines) + "\n")
    assert pp.main(["records", str(bad), "--endgame-seeds", "0", "--cache", str(tmp_path / "c.jsonl")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and ":2:" in err[0]


# -- positions and measure end to end, on a small board ----------------------------------------

def test_positions_then_measure_on_kalah33(pp, tmp_path, monkeypatch, capsys):
    """The positions step on a Kalah(3,3) set (resumable: a rerun adds only the new ones), its values
    against naive minimax, then measure: a depth-1 search loses what naive minimax says it loses."""
    monkeypatch.setitem(pp.SETS, "kalah-3-3-test", (3, 3, False, None))
    monkeypatch.setitem(pp.PLIES, None, (2, 5))
    file = tmp_path / "positions.json"
    base = ["positions", "--sets", "kalah-3-3-test", "--endgame-seeds", "0", "--table-slots", "4096",
            "--file", str(file), "--work", str(tmp_path / "work")]
    assert pp.main(base + ["--count", "3"]) == 0
    first = json.loads(file.read_text())["sets"]["kalah-3-3-test"]["positions"]
    assert [p["index"] for p in first] == [0, 1, 2]
    assert pp.main(base + ["--count", "5"]) == 0
    data = json.loads(file.read_text())
    positions = data["sets"]["kalah-3-3-test"]["positions"]
    assert [p["index"] for p in positions] == [0, 1, 2, 3, 4] and positions[:3] == first
    for p in positions:
        state = KalahState.from_text(p["position"])
        assert {int(k): v for k, v in p["values"].items()} == {
            mv: naive_margin(state.play(mv).to_text(), False) for mv in state.legal_moves()}
    capsys.readouterr()
    out = tmp_path / "summary.json"
    assert pp.main(["measure", "--agent", "alphabeta:depth=1", "--sets", "kalah-3-3-test", "--file", str(file),
                    "--out", str(out)]) == 0
    summary = json.loads(out.read_text())["measure alphabeta:depth=1"]
    assert summary["all"]["moves"] == 5
    from jitsearch.games.kalah import search

    for (name, index, move, lost), p in zip(summary["losses"], positions):
        state = KalahState.from_text(p["position"])
        assert move == search(state, 1)["move"]
        assert lost == naive_loss(state, move)
    assert summary["all"]["optimal"] == sum(1 for row in summary["losses"] if row[3] == 0)
    assert {"load_before", "load_after", "machine", "command", "median_move_seconds"} <= set(summary)


def test_measure_with_and_without_the_book_then_book_pays(pp, tmp_path, monkeypatch, capsys):
    """measure --book both: each position with the engine's book, then without; a position in the book is
    answered from it (an optimal move, said in the row), the rest are searched. book-pays: the engine without
    its book on every book position, its losses those naive minimax gives."""
    from jitsearch.games.kalah import opening_book as ob

    monkeypatch.setitem(pp.SETS, "kalah-3-3-test", (3, 3, False, None))
    monkeypatch.setattr(ob, "BOOKS_DIR", tmp_path / "books")
    monkeypatch.setattr(ob, "_LOADED", {})
    book = ob.build_book(3, 3, False, 2)
    book_path = ob.write_book(ob.BOOKS_DIR / ob.book_file_name(3, 3, False), book, command="test")
    deeper = KalahState.initial(3, 3)
    while deeper.to_text() in book.entries or len(deeper.legal_moves()) < 2:
        deeper = deeper.play(deeper.legal_moves()[0])
    texts = sorted(book.entries)[:3] + [deeper.to_text()]  # three in the book, one not
    positions = [{"index": i, "position": t, "values": {str(k): naive_margin(KalahState.from_text(t).play(k)
                                                                             .to_text(), False)
                                                        for k in KalahState.from_text(t).legal_moves()}}
                 for i, t in enumerate(texts)]
    file = tmp_path / "positions.json"
    file.write_text(json.dumps({"format": pp.FORMAT, "version": pp.VERSION,
                                "sets": {"kalah-3-3-test": {"positions": positions}}}))
    out = tmp_path / "summary.json"
    spec = "alphabeta:time=0.05,db=0"
    assert pp.main(["measure", "--agent", spec, "--sets", "kalah-3-3-test", "--file", str(file), "--out", str(out),
                    "--book", "both", "--name", "m"]) == 0
    summary = json.loads(out.read_text())
    on, off = summary["m, book on"], summary["m, book off"]
    in_book = sum(1 for t in texts if t in book.entries)
    assert on["book_moves"] == in_book == 3 and off["book_moves"] == 0 and on["book"] is True
    assert on["all"]["moves"] == off["all"]["moves"] == 4
    for row, t in zip(on["losses"], texts):
        if t in book.entries:
            assert row[2] == ob.book_move(book, KalahState.from_text(t)) and row[3] == 0
    capsys.readouterr()
    assert pp.main(["book-pays", "--agent", spec, "--sets", "kalah-3-3-test", "--book-file", str(book_path),
                    "--out", str(out)]) == 0
    pays = json.loads(out.read_text())[f"book-pays {spec} kalah-3-3-test"]
    many = [t for t in book.entries if len(KalahState.from_text(t).legal_moves()) > 1]
    assert pays["all"]["moves"] == len(many) and set(pays["by_ply"]) <= {"0", "1", "2"}
    assert pays["book_positions"] == len(book) and pays["book_plies"] == 2


def test_records_a_player_against_itself_is_two_players(pp, tiny_tournament, tmp_path):
    from jitsearch.arena.records import seal

    records = pp.read_tournament_records(tiny_tournament)
    same = [seal(dict(rec, b=rec["a"])) for rec in records]
    path = tmp_path / "self.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in same))
    losses, _ = pp.record_losses(pp.read_tournament_records(path), pp.Solver(pp.SolveCache(None), endgame_seeds=0))
    assert set(losses) == {"random (A)", "random (B)"}


def test_positions_over_the_limit_are_skipped_then_retried(pp, tmp_path, monkeypatch):
    monkeypatch.setitem(pp.SETS, "kalah-3-3-test", (3, 3, False, None))
    monkeypatch.setitem(pp.PLIES, None, (2, 3))
    file = tmp_path / "positions.json"
    base = ["positions", "--sets", "kalah-3-3-test", "--endgame-seeds", "0", "--table-slots", "4096",
            "--file", str(file), "--work", str(tmp_path / "work"), "--count", "4"]
    assert pp.main(base + ["--position-limit", "1e-9"]) == 0
    entry = json.loads(file.read_text())["sets"]["kalah-3-3-test"]
    solved, skipped = [p["index"] for p in entry["positions"]], [p["index"] for p in entry["skipped"]]
    assert sorted(solved + skipped) == [0, 1, 2, 3] and skipped
    assert pp.main(base) == 0  # skipped ones stay skipped without --retry-skipped
    assert json.loads(file.read_text())["sets"]["kalah-3-3-test"]["skipped"] == entry["skipped"]
    assert pp.main(base + ["--retry-skipped"]) == 0
    entry = json.loads(file.read_text())["sets"]["kalah-3-3-test"]
    assert [p["index"] for p in entry["positions"]] == [0, 1, 2, 3] and entry["skipped"] == []

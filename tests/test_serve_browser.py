"""`jitsearch serve` in a real browser: headless Chromium driven by Selenium clicks through the page.

Needs the web extra, selenium, and Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y
chromium chromium-driver``); skipped, with the reason, where any of them is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (StaleElementReferenceException, TimeoutException,  # noqa: E402
                                        WebDriverException)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from jitsearch.arena.agents import parse_agent  # noqa: E402
from jitsearch.cli.app import main  # noqa: E402
from jitsearch.cli.serve import bind_socket  # noqa: E402
from jitsearch.cli.webapp import LOOPBACK_HOSTS, create_app  # noqa: E402
from jitsearch.games.kalah import KalahState, move_values  # noqa: E402

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("no headless browser: apt-get install -y chromium chromium-driver", allow_module_level=True)

WAIT = 60  # seconds: the first search of a fresh machine compiles its kernels


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # compile (or load) the kernels the pages will run first, here, outside the waits: the server runs in
    # this process, and a compiling search cannot be stopped (a fresh machine takes tens of seconds)
    from jitsearch.arena.analysis import analyse_position

    past_book = KalahState.initial(6, 4)
    for _ in range(7):  # past any opening book (6 plies at most): the engine searches, so its kernels compile
        past_book = past_book.play(past_book.legal_moves()[0])
    parse_agent("alphabeta:time=0.2,db=0").choose(past_book)
    analyse_position(KalahState.initial(3, 2), engine="alphabeta:depth=2,db=0", solve_time=60)
    records = tmp_path_factory.mktemp("records")
    sock = bind_socket("127.0.0.1", 0)
    app = create_app(records_dir=records, max_seconds=60, allowed_hosts=LOOPBACK_HOSTS)
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    end = time.monotonic() + 10
    while not srv.started:
        assert time.monotonic() < end, "the server did not start"
        time.sleep(0.05)
    yield {"url": f"http://127.0.0.1:{sock.getsockname()[1]}/", "records": records, "app": app}
    srv.should_exit = True
    thread.join(10)
    app.state.searches.wait_idle(10)
    sock.close()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
    except WebDriverException as exc:
        pytest.skip(f"chromium did not start: {exc.msg.splitlines()[0] if exc.msg else exc}")
    yield driver
    driver.quit()


@pytest.fixture
def page(server, browser):
    browser.get(server["url"])
    until(browser, lambda d: (d.find_element(By.ID, "board").get_attribute("data-generation") or "0") != "0")
    return browser


def click_pit(driver, pit: int) -> None:
    """Click the legal house ``pit`` (found again if the board was redrawn under the click)."""
    for _ in range(20):
        try:
            driver.find_element(By.CSS_SELECTOR, f'#board g.legal[data-pit="{pit}"]').click()
            return
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise AssertionError(f"house {pit} could not be clicked")


def until(driver, condition, seconds=WAIT):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(condition)
    except TimeoutException:
        shown = {k: driver.find_element(By.ID, k).text for k in ("status", "error", "analysis-progress")}
        shown["data-position"] = driver.find_element(By.ID, "board").get_attribute("data-position")
        shown["data-game"] = driver.find_element(By.ID, "board").get_attribute("data-game")
        shown["ply"] = driver.find_element(By.ID, "replay-ply").text
        raise AssertionError(f"timed out after {seconds} s; the page shows {shown}") from None


def set_value(driver, element_id, value):
    el = driver.find_element(By.ID, element_id)
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))",
                          el, str(value))


def new_game(driver, houses, seeds, p0="human", p1="random"):
    set_value(driver, "houses", houses)
    set_value(driver, "seeds", seeds)
    set_value(driver, "p0", p0)
    set_value(driver, "p1", p1)
    before = int(driver.find_element(By.ID, "board").get_attribute("data-generation") or 0)
    driver.find_element(By.ID, "new-game").click()
    want = KalahState.initial(houses, seeds).to_text()
    until(driver, lambda d: int(d.find_element(By.ID, "board").get_attribute("data-generation")) > before
          and d.find_element(By.ID, "board").get_attribute("data-start") == want)


def board_counts(driver) -> dict:
    """{pit: seeds} as drawn, read in one go (the board is redrawn as a whole after every change)."""
    pairs = driver.execute_script(
        "return Array.from(document.querySelectorAll('#board g.pit'), g => [g.dataset.pit, g.dataset.count]);")
    return {int(p): int(c) for p, c in pairs}


def legal_pits(driver) -> list:
    return sorted(int(p) for p in driver.execute_script(
        "return Array.from(document.querySelectorAll('#board g.legal'), g => g.dataset.pit);"))


def shown_state(driver) -> KalahState:
    return KalahState.from_text(driver.find_element(By.ID, "board").get_attribute("data-position"))


def check_board(driver, state: KalahState) -> None:
    """The drawn board is ``state``: every pit's count, and the clickable houses are its legal moves."""
    assert board_counts(driver) == {i: int(x) for i, x in enumerate(state.board)}
    assert legal_pits(driver) == (state.legal_moves() if not state.is_over and state.player == 0 else [])


def error_line(driver) -> str:
    return driver.find_element(By.ID, "error").text


@pytest.mark.slow
def test_play_a_full_game_against_random_by_clicking(page):
    new_game(page, 4, 3, p1="random")
    state = KalahState.initial(4, 3)
    checked = 0  # plies of the page's move list checked against the rules so far
    clicks = 0

    def settled(d):
        """Our turn again (random has moved) or the game is over, with every ply since the click listed."""
        h = history(d)
        if len(h) <= checked and clicks:
            return False
        text = d.find_element(By.ID, "board").get_attribute("data-position")
        if h and text != h[-1][1]:
            return False
        shown = KalahState.from_text(text)
        return shown.is_over or (shown.player == 0 and bool(legal_pits(d)))

    while True:
        until(page, settled)
        # every ply since the last check, ours and random's, is legal and leads where the page says
        for pit, text in history(page)[checked:]:
            assert int(pit) in state.legal_moves()
            state = state.play(int(pit))
            assert state.to_text() == text
            checked += 1
        check_board(page, state)  # every pit's seeds, and the clickable houses are exactly the legal moves
        if checked:
            assert page.execute_script("return document.querySelector('#board g.last').dataset.pit;") == \
                history(page)[-1][0]
        assert error_line(page) == ""
        if state.is_over:
            break
        pit = state.legal_moves()[clicks % len(state.legal_moves())]
        extra = state.play(pit).player == 0
        click_pit(page, pit)
        clicks += 1
        if extra:  # an extra turn: said on the board and in the status line
            until(page, lambda d: len(history(d)) > checked)
            assert "extra turn" in page.find_element(By.ID, "status").text
            assert "(extra turn)" in page.find_element(By.ID, "turn").text
    status = page.find_element(By.ID, "status").text
    assert status.startswith("game over") and f"margin {state.margin:+d}".replace("+0", "0") in status
    assert clicks >= 1 and checked >= clicks


def history(driver) -> list:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#history li'), li => [li.dataset.pit, li.dataset.position]);")


@pytest.mark.slow
def test_two_agents_play_each_other(page):
    new_game(page, 3, 3, p0="random", p1="alphabeta:depth=2")
    until(page, lambda d: shown_state(d).is_over)
    state = KalahState.initial(3, 3)
    for pit, text in history(page):
        state = state.play(int(pit))
        assert state.to_text() == text
    assert state.is_over and shown_state(page) == state
    check_board(page, state)
    assert page.find_element(By.ID, "status").text.startswith("game over")


@pytest.mark.slow
def test_new_game_while_the_engines_play(page):
    # db=0: no endgame database to build first (a build cannot be stopped, and would hold the search slot)
    new_game(page, 6, 4, p0="alphabeta:time=0.5,db=0", p1="alphabeta:time=0.5,db=0")
    until(page, lambda d: "thinking" in d.find_element(By.ID, "status").text)
    new_game(page, 3, 2, p0="random", p1="random")  # the old game's search is cancelled, the new game plays
    until(page, lambda d: shown_state(d).is_over and shown_state(d).houses == 3)
    assert error_line(page) == ""
    state = KalahState.initial(3, 2)
    for pit, text in history(page):
        state = state.play(int(pit))
        assert state.to_text() == text
    # the same with a person to move in the new game: the houses become clickable once the old search ends
    new_game(page, 6, 4, p0="alphabeta:time=0.5,db=0", p1="alphabeta:time=0.5,db=0")
    until(page, lambda d: "thinking" in d.find_element(By.ID, "status").text)
    new_game(page, 3, 2, p0="human", p1="random")
    until(page, lambda d: legal_pits(d) == [1, 2, 3])
    # and an analysis running while a new game starts
    new_game(page, 6, 6, p1="human")
    set_value(page, "engine", "alphabeta:time=20,db=0")
    set_value(page, "solve-time", 0)
    page.find_element(By.ID, "analyse").click()
    until(page, lambda d: legal_pits(d) == [])
    page.find_element(By.ID, "cancel").click()
    until(page, lambda d: legal_pits(d) == [1, 2, 3, 4, 5, 6], 15)
    set_value(page, "engine", "alphabeta:time=2,db=0")
    page.find_element(By.ID, "analyse").click()
    until(page, lambda d: legal_pits(d) == [])
    new_game(page, 3, 2, p0="human", p1="human")  # while it runs: clickable once it ends
    until(page, lambda d: legal_pits(d) == [1, 2, 3], 15)
    assert error_line(page) == ""


def test_undo_and_last_move_highlight(page):
    new_game(page, 3, 2, p1="human")
    click_pit(page, 1)
    after = KalahState.initial(3, 2).play(1)
    until(page, lambda d: shown_state(d) == after)
    assert page.find_element(By.CSS_SELECTOR, "#board g.last").get_attribute("data-pit") == "1"
    page.find_element(By.ID, "undo").click()
    until(page, lambda d: shown_state(d) == KalahState.initial(3, 2))
    assert not page.find_elements(By.CSS_SELECTOR, "#board g.last")


def test_set_up_a_position_by_text_and_bad_input(page):
    text = "0,4,4/1/3,3,3/0 p0"
    set_value(page, "p1", "human")
    set_value(page, "position-input", text)
    page.find_element(By.ID, "load-position").click()
    until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-position") == text)
    check_board(page, KalahState.from_text(text))
    bad = "4,4,4/0/4,4 p0"
    set_value(page, "position-input", bad)
    page.find_element(By.ID, "load-position").click()
    with pytest.raises(ValueError) as info:
        KalahState.from_text(bad)
    until(page, lambda d: error_line(d) == f"error: {info.value}")
    assert shown_state(page).to_text() == text  # the board is unchanged
    # an unknown agent: the same line the CLI prints
    new_game(page, 3, 2, p0="nonsense:depth=2", p1="human")
    with pytest.raises(ValueError) as info:
        parse_agent("nonsense:depth=2", seed=0)
    until(page, lambda d: error_line(d) == f"error: {info.value}")
    # a huge board
    set_value(page, "houses", 40)
    page.find_element(By.ID, "new-game").click()
    with pytest.raises(ValueError) as info:
        KalahState.initial(40, 2)
    until(page, lambda d: error_line(d) == f"error: {info.value}")


def analysis_rows(driver) -> list:
    """(move, source, value) of each row of the analysis table, read in one go."""
    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#analysis-table tbody tr'),"
        " tr => [tr.dataset.move, tr.dataset.source, tr.querySelector('td.value').textContent]);")
    return [(int(m), src, int(v) if src == "exact" else v) for m, src, v in rows]


def test_analysis_shows_exact_values_on_a_small_board(page):
    new_game(page, 3, 3, p1="human")
    set_value(page, "engine", "alphabeta:time=1")
    set_value(page, "solve-time", 50)
    page.find_element(By.ID, "analyse").click()
    until(page, lambda d: d.find_elements(By.CSS_SELECTOR, '#analysis-table tbody tr[data-source="exact"]'))
    ref = move_values(KalahState.initial(3, 3))
    rows = page.find_elements(By.CSS_SELECTOR, "#analysis-table tbody tr")
    assert [int(r.get_attribute("data-move")) for r in rows] == [m["move"] for m in ref["moves"]]
    assert {r.get_attribute("data-source") for r in rows} == {"exact"}
    shown = [int(r.find_element(By.CSS_SELECTOR, "td.value").text) for r in rows]
    assert shown == [m["value"] for m in ref["moves"]]
    best = page.find_element(By.CSS_SELECTOR, "#analysis-table tbody tr.best")
    assert int(best.get_attribute("data-move")) == ref["best_move"]
    assert page.find_element(By.ID, "pv").text.startswith(f"principal variation: p0 h{ref['best_move']}")
    # the values are drawn on the board too
    labels = page.find_elements(By.CSS_SELECTOR, "#board text.val")
    assert [int(t.text) for t in labels] == [m["value"] for m in ref["moves"]]


def test_analysis_can_be_cancelled(page):
    new_game(page, 6, 6, p1="human")
    set_value(page, "engine", "alphabeta:time=30,db=0")
    set_value(page, "solve-time", 30)
    page.find_element(By.ID, "analyse").click()
    until(page, lambda d: "s" in d.find_element(By.ID, "analysis-progress").text)
    # a second search while this one runs: one line, no hang
    page.find_element(By.ID, "analyse").click()
    until(page, lambda d: error_line(d).startswith("error: a search is already running (analysis"))
    t0 = time.monotonic()
    page.find_element(By.ID, "cancel").click()
    until(page, lambda d: d.find_element(By.ID, "analysis-progress").text.startswith("done in"), 15)
    assert time.monotonic() - t0 < 10
    assert "stopped early" in page.find_element(By.ID, "pv").text


@pytest.mark.slow
def test_open_a_record_file(page, server, capsys):
    path = server["records"] / "games.jsonl"
    assert main(["tournament", "--game", "kalah", "--houses", "3", "--seeds", "3", "--a", "random", "--b",
                 "alphabeta:depth=2", "--pairs", "1", "--out", str(path)]) == 0
    capsys.readouterr()
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    page.get(server["url"])  # the page lists the directory when it loads
    until(page, lambda d: Select(d.find_element(By.ID, "record-file")).options)
    Select(page.find_element(By.ID, "record-file")).select_by_value("games.jsonl")
    page.find_element(By.ID, "open-record").click()
    until(page, lambda d: len(Select(d.find_element(By.ID, "record-game")).options) == len(recs))
    Select(page.find_element(By.ID, "record-game")).select_by_index(1)
    rec = recs[1]
    start = KalahState.initial(3, 3)
    until(page, lambda d: d.find_element(By.ID, "replay-ply").text == f"ply 0 of {len(rec['moves'])}"
          and d.find_element(By.ID, "board").get_attribute("data-game") == "1")
    state = start
    for k, mv in enumerate(rec["moves"]):
        page.find_element(By.ID, "replay-next").click()
        state = state.play(mv)
        until(page, lambda d: d.find_element(By.ID, "replay-ply").text == f"ply {k + 1} of {len(rec['moves'])}")
        assert board_counts(page) == {i: int(x) for i, x in enumerate(state.board)}
        assert page.execute_script("return document.querySelector('#board g.last').dataset.pit;") == str(mv)
    assert state.to_text() == rec["final"]
    assert not page.find_elements(By.CSS_SELECTOR, "#board g.legal")  # replay: the board is not for playing
    page.find_element(By.ID, "replay-first").click()
    until(page, lambda d: shown_state(d) == start)
    # analyse each position while stepping: the table follows the board, with exact values
    set_value(page, "solve-time", 50)
    page.find_element(By.ID, "auto-analyse").click()
    state = start
    for k, mv in enumerate(rec["moves"][:3]):
        page.find_element(By.ID, "replay-next").click()
        state = state.play(mv)
        if state.is_over:
            break
        ref = move_values(state)
        until(page, lambda d: analysis_rows(d) == [(m["move"], "exact", m["value"]) for m in ref["moves"]])
    page.find_element(By.ID, "auto-analyse").click()
    if os.environ.get("JITSEARCH_SCREENSHOT"):  # docs/serve.png: two plies into the replayed game, analysed
        page.find_element(By.ID, "replay-first").click()
        page.find_element(By.ID, "replay-next").click()
        page.find_element(By.ID, "replay-next").click()
        until(page, lambda d: d.find_element(By.ID, "replay-ply").text.startswith("ply 2 "))
        set_value(page, "solve-time", 50)
        page.find_element(By.ID, "analyse").click()
        until(page, lambda d: d.find_elements(By.CSS_SELECTOR, '#analysis-table tbody tr[data-source="exact"]'))
        page.save_screenshot(os.environ["JITSEARCH_SCREENSHOT"])


def test_play_oware_by_clicking(page):
    """Oware on the page: chosen with the selector, a 2 x m board with the captured counts and no stores, the
    clickable houses are the legal moves, clicks and random's replies follow the rules (with the repetition
    record: the server replays the line), and the end says why."""
    from jitsearch.games.oware import OwareState

    set_value(page, "p0", "human")
    set_value(page, "p1", "random")
    set_value(page, "houses", 2)
    set_value(page, "seeds", 2)
    Select(page.find_element(By.ID, "game")).select_by_value("oware")  # a new game of the chosen kind
    start = OwareState.initial(2, 2)
    until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-start") == start.to_text())
    assert page.find_element(By.ID, "title").text == "jitsearch · Oware"
    assert not page.find_element(By.ID, "analysis-panel").is_displayed()
    from jitsearch.cli.common import agent_kinds_for

    offered = page.execute_script("return Array.from(document.querySelectorAll('#oware-agent-specs option'), "
                                  "o => o.value.split(':')[0]);")
    assert set(agent_kinds_for("oware")) <= set(offered)  # an agent kind added to the parser is offered
    state, checked, clicks = start, 0, 0
    while True:
        until(page, lambda d: (len(history(d)) > checked or not clicks)
              and (OwareState.from_text(d.find_element(By.ID, "board").get_attribute("data-position")).is_over
                   or bool(legal_pits(d))))
        for house, text in history(page)[checked:]:
            reason = state.end_reason(int(house))
            state = state.play(int(house))
            assert state.to_text() == text
            checked += 1
        shown = page.find_element(By.ID, "board").get_attribute("data-position")
        assert shown == state.to_text() and error_line(page) == ""
        captured = page.execute_script("return Array.from(document.querySelectorAll('#board g.captured'), "
                                       "g => [g.dataset.player, g.dataset.count]);")
        assert sorted((int(p), int(c)) for p, c in captured) == [(0, state.scores[0]), (1, state.scores[1])]
        assert board_counts(page) == {i: int(x) for i, x in enumerate(state.board[:4])}
        assert legal_pits(page) == (state.legal_moves() if not state.is_over and state.player == 0 else [])
        if state.is_over:
            break
        click_pit(page, state.legal_moves()[clicks % len(state.legal_moves())])
        clicks += 1
    status = page.find_element(By.ID, "status").text
    assert status.startswith("game over") and f"{state.scores[0]}–{state.scores[1]}" in status
    ends = {"repetition": "came back", "move limit": "move limit", "scores": "more than half",
            "no move": "no legal move"}
    assert ends[reason] in status and clicks >= 1


def test_oware_analysis_rows_appear(page):
    """Oware's analysis panel: a set-up position with 8 seeds on the board, analysed: one row a legal move,
    the MCTS visits and values of the library's search, the exact values of the endgame database."""
    from jitsearch.arena.analysis import analyse_moves
    from jitsearch.games.oware import OwareState

    text = "0,1,0,2,0,1/1,0,2,0,1,0/14,16 p0"
    ref = analyse_moves("oware", OwareState.from_text(text), iterations=400, playouts=4)  # (also compiles)
    Select(page.find_element(By.ID, "game")).select_by_value("oware")
    until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-kind") == "oware")
    set_value(page, "p0", "human")
    set_value(page, "p1", "human")
    set_value(page, "position-input", text)
    page.find_element(By.ID, "load-position").click()
    until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-position") == text)
    assert page.find_element(By.ID, "mcts-analysis-panel").is_displayed()
    assert not page.find_element(By.ID, "analysis-panel").is_displayed()
    set_value(page, "mcts-iterations", 400)
    set_value(page, "mcts-playouts", 4)
    page.find_element(By.ID, "mcts-analyse").click()
    until(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#mcts-analysis-table tbody tr"))
    rows = page.execute_script("return Array.from(document.querySelectorAll('#mcts-analysis-table tbody tr'), "
                               "tr => [tr.dataset.move, tr.dataset.visits, tr.dataset.exact, tr.className]);")
    assert [(int(m), int(v), float(d)) for m, v, d, _ in rows] == \
        [(r["move"], r["visits"], r["exact"]) for r in ref["moves"]]
    assert [int(m) for m, _, _, cls in rows if cls == "best"] == [ref["best_move"]]
    assert "exact values: endgame database" in page.find_element(By.ID, "mcts-analysis-summary").text
    assert page.find_element(By.ID, "mcts-analysis-progress").text.startswith("done in")
    labels = page.execute_script("return Array.from(document.querySelectorAll('#board text.val'), "
                                 "t => [t.parentNode.dataset.pit, t.textContent]);")  # on the board too
    assert [(int(p), t) for p, t in labels] == \
        [(r["move"], ("+" if r["exact"] > 0 else "") + f"{r['exact']:g}") for r in ref["moves"]]


@pytest.mark.slow
def test_replay_an_oware_record_file(page, server, capsys):
    path = server["records"] / "oware.jsonl"
    assert main(["tournament", "--game", "oware", "--houses", "3", "--seeds", "2", "--a", "random", "--b",
                 "alphabeta:depth=1", "--pairs", "1", "--out", str(path)]) == 0
    capsys.readouterr()
    rec = json.loads(path.read_text().splitlines()[0])
    page.get(server["url"])
    until(page, lambda d: "oware.jsonl" in [o.get_attribute("value") for o in
                                            Select(d.find_element(By.ID, "record-file")).options])
    Select(page.find_element(By.ID, "record-file")).select_by_value("oware.jsonl")
    page.find_element(By.ID, "open-record").click()
    n = len(rec["moves"])
    until(page, lambda d: d.find_element(By.ID, "replay-ply").text == f"ply 0 of {n}"
          and d.find_element(By.ID, "board").get_attribute("data-kind") == "oware")
    from jitsearch.games.oware import OwareState

    state = OwareState.from_text(rec["opening"])
    for k, house in enumerate(rec["moves"]):
        page.find_element(By.ID, "replay-next").click()
        state = state.play(house)
        until(page, lambda d: d.find_element(By.ID, "replay-ply").text == f"ply {k + 1} of {n}")
        assert page.find_element(By.ID, "board").get_attribute("data-position") == state.to_text()
        assert not page.find_elements(By.CSS_SELECTOR, "#board g.legal")  # replay: not for playing
    assert state.to_text() == rec["final"]


def test_stores_say_whose_they_are_and_the_suggestions_fit_the_board(page):
    new_game(page, 6, 4, p0="human", p1="alphabeta:depth=2")
    store = {o: page.find_element(By.ID, f"store-label-{o}").text for o in (0, 1)}
    who = {o: page.find_element(By.ID, f"store-who-{o}").text for o in (0, 1)}
    assert store == {0: "player 0", 1: "player 1"} and who == {0: "you", 1: "alphabeta…"}
    assert page.find_element(By.ID, "store-who-1").get_attribute("data-who") == "alphabeta:depth=2"
    # player 0's store is the one on the right, player 1's on the left (the layout of the rules)
    x = {o: float(page.find_element(By.ID, f"store-label-{o}").get_attribute("x")) for o in (0, 1)}
    assert x[0] > x[1]
    suggested = lambda d: d.execute_script(  # noqa: E731
        "return Array.from(document.querySelectorAll('#kalah-agent-specs option'), o => o.value);")
    from jitsearch.kernels.backend import cuda_status

    cuda = cuda_status()[0]
    assert "perfect" not in suggested(page) and "human" in suggested(page)
    assert any("backend=cuda" in s for s in suggested(page)) == cuda
    engines = page.execute_script("return Array.from(document.querySelectorAll('#engine-specs option'), o => o.value);")
    assert engines and any("backend=cuda" in s for s in engines) == cuda
    new_game(page, 3, 3, p0="human", p1="human")
    until(page, lambda d: "perfect" in suggested(d))
    assert page.find_element(By.ID, "store-who-1").text == "you"


def test_replay_starts_on_a_file_that_reads_and_a_broken_one_says_why(page, server, capsys):
    broken = server["records"] / "0-broken.jsonl"
    broken.write_text("not json\n")
    good = server["records"] / "1-good.jsonl"
    assert main(["tournament", "--game", "kalah", "--houses", "3", "--seeds", "2", "--a", "random", "--b",
                 "random", "--pairs", "1", "--out", str(good)]) == 0
    capsys.readouterr()
    try:
        page.get(server["url"])
        until(page, lambda d: d.find_element(By.ID, "record-file").get_attribute("value") == "1-good.jsonl")
        option = page.find_element(By.CSS_SELECTOR, '#record-file option[value="0-broken.jsonl"]')
        assert option.text.endswith("(broken)")
        assert error_line(page) == ""  # not shown until chosen
        Select(page.find_element(By.ID, "record-file")).select_by_value("0-broken.jsonl")
        until(page, lambda d: error_line(d) == "error: 0-broken.jsonl:1: not a JSON record (Expecting value)")
        page.find_element(By.ID, "open-record").click()  # opening it says the same, and opens nothing
        until(page, lambda d: error_line(d).startswith("error: 0-broken.jsonl:1"))
        Select(page.find_element(By.ID, "record-file")).select_by_value("1-good.jsonl")
        until(page, lambda d: error_line(d) == "")
        page.find_element(By.ID, "open-record").click()
        until(page, lambda d: len(Select(d.find_element(By.ID, "record-game")).options) == 2)
    finally:
        broken.unlink()
        good.unlink()


def test_connect4_two_people_click_to_a_win(page):
    """Connect Four's board (its board.js): two people click columns; the stones fall where the rules put
    them, the last one is marked, a full game ends with the winner in the status line."""
    Select(page.find_element(By.ID, "game")).select_by_value("connect4")
    until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-kind") == "connect4")
    set_value(page, "p0", "human")
    set_value(page, "p1", "human")
    page.find_element(By.ID, "new-game").click()
    until(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#board g.column.legal"))
    assert page.find_element(By.ID, "mcts-analysis-panel").is_displayed()
    assert not page.find_element(By.ID, "analysis-panel").is_displayed()
    from jitsearch.games import get

    state = get("connect4").initial()
    for k, column in enumerate([0, 1, 0, 1, 0, 1, 0]):
        page.find_element(By.CSS_SELECTOR, f"#board g.column[data-column='{column}']").click()
        state = state.play(column)
        until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-position") == state.to_text())
        last = page.execute_script("return Array.from(document.querySelectorAll('#board circle.last'), "
                                   "c => [c.dataset.row, c.dataset.column, c.dataset.owner]);")
        top = [r for r in range(6) if state.cell(column, 5 - r) >= 0][0]
        assert last == [[str(top), str(column), str(k % 2)]]
    cells = page.execute_script("return Array.from(document.querySelectorAll('#board circle.cell'), "
                                "c => [+c.dataset.row, +c.dataset.column, +c.dataset.owner]);")
    assert sorted(map(tuple, cells)) == sorted((r, c, state.cell(c, 5 - r)) for r in range(6) for c in range(7))
    assert page.find_element(By.ID, "status").text.startswith("game over: player 0 wins")
    assert not page.find_elements(By.CSS_SELECTOR, "#board g.column.legal")


def test_a_game_without_a_drawing_script_gets_the_generic_board(page):
    """A game registered from outside the package without a drawing script (TextUI.script): the page shows
    its text form and a button per legal move (named by the game). Here Connect Four's script is taken away to stand for one."""
    page.execute_script("delete window.BOARDS.connect4;")
    Select(page.find_element(By.ID, "game")).select_by_value("connect4")
    set_value(page, "p0", "human")
    set_value(page, "p1", "human")
    page.find_element(By.ID, "new-game").click()
    until(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#board button.generic-move"))
    from jitsearch.games import get

    state = get("connect4").initial()
    for column in (3, 3, 4):
        buttons = page.find_elements(By.CSS_SELECTOR, "#board button.generic-move")
        assert [int(b.get_attribute("data-pit")) for b in buttons] == state.legal_moves()
        next(b for b in buttons if int(b.get_attribute("data-pit")) == column).click()
        state = state.play(column)
        until(page, lambda d: d.find_element(By.ID, "board").get_attribute("data-position") == state.to_text())
    assert page.find_element(By.CSS_SELECTOR, "#board pre").text == state.to_text()
    assert "drops a stone in column 1" in page.find_element(By.CSS_SELECTOR, "#board button.generic-move").text

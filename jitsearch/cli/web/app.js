// The page of `jitsearch serve`: draws the board and calls the server's API; no game logic lives here
// (every position, legal move and value comes from the server).
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

const S = {
  history: [],      // [{state, move, mover, extra}] the game (or the replayed record) so far
  cursor: -1,       // the position shown: history[cursor]
  generation: 0,    // bumped by every new game / set-up / undo: late answers of an older one are dropped
  autoplay: true,   // engines move by themselves
  job: null,        // the search in progress: {id, kind}
  analysis: null,   // the last analysis result, for the position it was made for
  replay: null,     // {file, games, game}
};

function showError(message) { $("error").textContent = message ? "error: " + message : ""; }

// the server's token, in the page it served: a request that changes something sends it (another site's page
// cannot read it, so cannot make such requests)
const TOKEN = (document.querySelector('meta[name="jitsearch-token"]') || {}).content || "";

async function api(path, body) {
  const init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json",
                                                                    "X-Jitsearch-Token": TOKEN},
                                          body: JSON.stringify(body)};
  let resp;
  try { resp = await fetch(path, init); } catch (e) { throw new Error("the server does not answer"); }
  let data = {};
  try { data = await resp.json(); } catch (e) { data = {error: "the server sent no JSON (" + resp.status + ")"}; }
  if (!resp.ok) throw new Error(data.error || ("HTTP " + resp.status));
  return data;
}

const current = () => S.history[S.cursor];
const rules = () => ({empty_capture: current() ? current().state.empty_capture : $("empty-capture").checked});
const houseNumber = (state, pit) => pit <= state.houses ? pit : pit - state.houses - 1;
// Oware: the game of the position on the board (the selector only says what a new game is)
const isOware = (state) => state ? state.game === "oware" : $("game").value === "oware";
// Oware's house letters, OpenSpiel's: A.. for player 0 (indices 0..m-1), a.. for player 1 (m..2m-1)
const houseLetter = (state, h) => String.fromCharCode((h < state.houses ? 65 : 97) + h % state.houses);
// an Oware request names its line: the start (text) and the houses played since; the server replays them
const owareLine = () => ({position: S.history[0].state.text, moves: S.history.slice(1, S.cursor + 1).map(
  (h) => h.move)});
// what an Oware analysis was made for: the position and the line that reached it (its repetition record)
const lineKey = () => JSON.stringify(owareLine());
const OWARE_ENDS = {
  "repetition": "a position since the last capture came back",
  "move limit": "the move limit was reached",
  "scores": "a player has captured more than half of the seeds (or both half)",
  "no move": "the player to move has no legal move",
};
const moveName = (state, mover, move) => isOware(state) ? `p${mover} ${houseLetter(state, move)}`
  : `p${mover} h${houseNumber(state, move)}`;

function setGame(game) {
  document.body.className = game;
  $("title").textContent = "jitsearch · " + (game === "oware" ? "Oware" : "Kalah");
  $("position-input").placeholder = game === "oware" ? "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0"
    : "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0";
  for (const id of ["p0", "p1"]) $(id).setAttribute("list", game === "oware" ? "oware-agent-specs" : "agent-specs");
}

// ---- the board ------------------------------------------------------------------------------------
function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function drawBoard() {
  const entry = current();
  const box = $("board");
  box.innerHTML = "";
  if (!entry) return;
  if (isOware(entry.state)) drawOwareBoard(entry, box); else drawKalahBoard(entry, box);
  const st = entry.state;
  box.dataset.position = st.text;
  box.dataset.game = S.replay ? S.replay.game : "";
  box.dataset.generation = S.generation;   // (for tests: which game or set-up this board belongs to)
  box.dataset.start = S.history[0].state.text;
  box.dataset.player = st.player;
  box.dataset.kind = st.game || "kalah";
}

function drawOwareBoard(entry, box) {
  // player 1's houses on top, right to left (a at the right), player 0's below, left to right (A at the
  // left), as OpenSpiel draws Oware; each side's captured seeds at its right-hand end
  const st = entry.state, m = st.houses, b = st.board;
  const cell = 80, pad = 20, side = 90, W = 2 * pad + 2 * side + m * cell, H = 340;
  const svg = el("svg", {viewBox: `0 0 ${W} ${H}`, "aria-label": "Oware board"}, box);
  svg.style.maxWidth = Math.round(1.25 * W) + "px";
  el("rect", {x: 0, y: 0, width: W, height: H, rx: 24, class: "board-bg"}, svg);
  const human = !st.over && specOf(st.player) === "human" && !S.replay && !S.job;
  const sown = new Set(entry.sown || []);
  const values = {};
  if (S.analysis && S.analysis.game === "oware" && S.analysis.key === lineKey())
    for (const r of S.analysis.moves) values[r.move] = r;
  const house = (i, cx, cy, owner) => {
    const classes = ["pit", "house", "p" + owner];
    if (human && st.legal.includes(i)) classes.push("legal");
    if (entry.move === i) classes.push("last");
    if (sown.has(i)) classes.push("sown");
    const g = el("g", {class: classes.join(" "), "data-pit": i, "data-count": b[i], "data-owner": owner}, svg);
    el("circle", {cx, cy, r: cell / 2 - 8}, g);
    el("text", {x: cx, y: cy, class: "count"}, g).textContent = b[i];
    el("text", {x: cx, y: owner === 0 ? cy + 50 : cy - 44, class: "label"}, g).textContent = houseLetter(st, i);
    const v = values[i];   // the analysis, under the house: the exact margin where known, else the visit share
    if (v) el("text", {x: cx, y: owner === 0 ? cy + 64 : cy - 58, class: "val",
                       "data-source": v.db_value === undefined ? "mcts" : "exact"}, g).textContent =
      v.db_value === undefined ? `${Math.round(100 * v.share)}%` : (v.db_margin > 0 ? "+" : "") + v.db_margin;
    if (classes.includes("legal")) g.addEventListener("click", () => playMove(i));
  };
  for (let i = 0; i < m; i++) house(i, pad + side + (i + 0.5) * cell, 225, 0);
  for (let i = m; i < 2 * m; i++) house(i, pad + side + (2 * m - 1 - i + 0.5) * cell, 115, 1);
  const captured = (player, x, y) => {
    const g = el("g", {class: "captured", "data-player": player, "data-count": b[2 * m + player]}, svg);
    el("rect", {x: x - side / 2 + 6, y: y - 45, width: side - 12, height: 90, rx: 14}, g);
    el("text", {x, y: y - 28, class: "label"}, g).textContent = `p${player} captured`;
    el("text", {x, y: y + 8, class: "count"}, g).textContent = b[2 * m + player];
  };
  captured(1, pad + side / 2, 115);
  captured(0, W - pad - side / 2, 225);
  if (!st.over) {
    const y = st.player === 0 ? H - 10 : 22;
    el("text", {x: W / 2, y, class: "turn-text", "text-anchor": "middle", id: "turn"}, svg).textContent =
      `player ${st.player} to move`;
  }
}

function drawKalahBoard(entry, box) {
  const st = entry.state, m = st.houses, b = st.board;
  const cell = 80, pad = 20, storeW = 80, W = 2 * pad + 2 * storeW + m * cell, H = 340;
  const svg = el("svg", {viewBox: `0 0 ${W} ${H}`, "aria-label": "Kalah board"}, box);
  svg.style.maxWidth = Math.round(1.25 * W) + "px";
  el("rect", {x: 0, y: 0, width: W, height: H, rx: 24, class: "board-bg"}, svg);
  const values = {};
  if (S.analysis && S.analysis.position === st.text) for (const r of S.analysis.moves) values[r.move] = r;
  const human = !st.over && specOf(st.player) === "human" && !S.replay && !S.job;
  const sown = new Set(entry.sown || []);
  const pit = (i, cx, cy, store, owner) => {
    const classes = ["pit", store ? "store" : "house", "p" + owner];
    if (!store && human && st.legal.includes(i)) classes.push("legal");
    if (entry.move === i) classes.push("last");
    if (sown.has(i)) classes.push("sown");
    const g = el("g", {class: classes.join(" "), "data-pit": i, "data-count": b[i], "data-owner": owner}, svg);
    if (store) el("rect", {x: cx - storeW / 2 + 8, y: 70, width: storeW - 16, height: 200, rx: 30}, g);
    else el("circle", {cx, cy, r: cell / 2 - 8}, g);
    el("text", {x: cx, y: cy, class: "count"}, g).textContent = b[i];
    if (!store) {
      el("text", {x: cx, y: owner === 0 ? cy + 50 : cy - 44, class: "label"}, g).textContent =
        "h" + houseNumber(st, i);
      const v = values[i];
      if (v && v.value !== null) {
        el("text", {x: cx, y: owner === 0 ? cy + 64 : cy - 58, class: "val", "data-source": v.source}, g)
          .textContent = formatValue(v, true);
      }
    }
    if (classes.includes("legal")) g.addEventListener("click", () => playMove(i));
  };
  pit(0, pad + storeW / 2, H / 2, true, 1);
  pit(m + 1, W - pad - storeW / 2, H / 2, true, 0);
  // whose store is whose: the player, and who plays it (you, an agent, a record's player)
  for (const [owner, x] of [[1, pad + storeW / 2], [0, W - pad - storeW / 2]]) {
    el("text", {x, y: 60, class: "store-label", "data-owner": owner, id: "store-label-" + owner}, svg).textContent =
      `player ${owner}`;
    const name = playerName(owner);   // shortened to fit under the store; the whole of it in data-who
    el("text", {x, y: 292, class: "store-who", "data-owner": owner, id: "store-who-" + owner, "data-who": name},
       svg).textContent = name.length <= 14 ? name : name.split(":")[0].slice(0, 12) + "…";
  }
  for (let i = 1; i <= m; i++) pit(i, pad + storeW + (i - 0.5) * cell, 225, false, 0);
  for (let i = m + 2; i <= 2 * m + 1; i++) pit(i, pad + storeW + (2 * m + 1 - i + 0.5) * cell, 115, false, 1);
  if (!st.over) {
    const y = st.player === 0 ? H - 10 : 22;
    el("text", {x: W / 2, y, class: "turn-text", "text-anchor": "middle", id: "turn"}, svg).textContent =
      `player ${st.player} to move` + (entry.extra ? " (extra turn)" : "");
  }
}

function specOf(player) { return $("p" + player).value.trim() || "human"; }

// who plays a side, in a few words: "you", an agent spec, or in a replay the record's player
function playerName(player) {
  if (S.replay) {
    const g = S.replay.games[S.replay.game];
    return player === g.a_player ? g.a : g.b;
  }
  const spec = specOf(player);
  return spec === "human" ? "you" : spec;
}

// the Kalah agents the server suggests for the position on the board (none it would refuse there)
function suggestAgents(state) {
  if (!state || !state.agents) return;
  const list = $("agent-specs");
  if ([...list.options].map((o) => o.value).join() === state.agents.join()) return;
  list.innerHTML = "";
  for (const spec of state.agents) {
    const o = document.createElement("option");
    o.value = spec;
    list.appendChild(o);
  }
}

function drawStatus() {
  const entry = current();
  if (!entry) return;
  const st = entry.state;
  let text;
  if (st.over && isOware(st)) {
    text = st.result === "draw" ? "game over: a draw" : `game over: player ${st.result === "p0" ? 0 : 1} wins`;
    text += `, ${st.scores[0]}–${st.scores[1]}`;
    if (st.reason) text += ` (${OWARE_ENDS[st.reason] || st.reason}; the seeds left went to their side's owner)`;
  } else if (st.over) {
    text = st.result === "draw" ? "game over: a draw" : `game over: player ${st.result === "p0" ? 0 : 1} wins`;
    text += `, margin ${st.margin > 0 ? "+" : ""}${st.margin}`;
  } else {
    let who = specOf(st.player);
    if (S.replay) {   // the record's players: A was player a_player
      const g = S.replay.games[S.replay.game];
      who = "replay: " + (st.player === g.a_player ? g.a : g.b);
    }
    text = `player ${st.player} to move (${who})`;
    if (entry.extra) text += ` — extra turn: player ${st.player}'s last seed ended in its store`;
    if (isOware(st)) {
      const theirs = st.board.slice((1 - st.player) * st.houses, (2 - st.player) * st.houses);
      if (theirs.every((x) => x === 0)) text += ` — must feed: only moves that reach player ${1 - st.player}'s row`;
      text += ` · captured ${st.scores[0]}–${st.scores[1]} · ply ${st.ply}`;
    }
    if (S.job && S.job.kind === "move") text += " — thinking…";
  }
  if (entry.move !== null && entry.move !== undefined)
    text += isOware(st) ? ` · last: player ${entry.mover} ${houseLetter(st, entry.move)} (house ${entry.move})`
      : ` · last: player ${entry.mover} house ${houseNumber(st, entry.move)} (pit ${entry.move})`;
  $("status").textContent = text;
  $("position-text").textContent = st.text;
  const list = $("history");
  list.innerHTML = "";
  S.history.slice(1).forEach((h, k) => {
    const li = document.createElement("li");
    li.textContent = moveName(h.state, h.mover, h.move) + (h.extra ? " +" : "");
    li.dataset.pit = h.move;
    li.dataset.position = h.state.text;
    if (k + 1 === S.cursor) li.style.fontWeight = "700";
    list.appendChild(li);
  });
  if (S.replay) $("replay-ply").textContent = `ply ${S.cursor} of ${S.history.length - 1}`;
}

function render() {
  const entry = current();
  if (entry && !isOware(entry.state)) suggestAgents(entry.state);
  drawBoard(); drawStatus(); drawAnalysis();
}

// ---- playing ------------------------------------------------------------------------------------------
function sownPits(before, move, after) {
  const out = [];
  for (let i = 0; i < before.board.length; i++) if (after.board[i] !== before.board[i] && i !== move) out.push(i);
  return out;
}

function push(answer) {
  const before = current().state;
  S.history = S.history.slice(0, S.cursor + 1);
  S.history.push({state: answer.state, move: answer.move, mover: answer.player, extra: answer.extra_turn,
                  sown: sownPits(before, answer.move, answer.state)});
  S.cursor = S.history.length - 1;
}

function start(state) {
  if (S.job && S.job.kind === "move") stopSearch();   // the old game's search: its answer is dropped
  S.generation++;
  S.history = [{state, move: null, mover: null, extra: false}];
  S.cursor = 0;
  S.analysis = null;
  showError("");
  render();
  maybeEngineMove();
}

async function playMove(pitIndex) {
  const gen = S.generation;
  try {
    const answer = isOware(current().state)
      ? await api("/api/oware/move", {...owareLine(), move: pitIndex})
      : await api("/api/move", {position: current().state.text, ...rules(), move: pitIndex});
    if (gen !== S.generation) return;
    showError("");
    push(answer);
    render();
    maybeEngineMove();
  } catch (e) { showError(e.message); }
}

async function poll(job, onProgress) {
  S.job = {id: job.id, kind: job.kind};
  try {
    while (job.status === "running") {
      if (onProgress) onProgress(job);
      await new Promise((r) => setTimeout(r, 120));
      job = (await api(`/api/jobs/${job.id}`)).job;
    }
  } finally { S.job = null; }
  if (onProgress) onProgress(job);
  if (job.status !== "done") throw new Error(job.error || job.status);
  return job.result;
}

async function maybeEngineMove() {
  const entry = current();
  if (!entry || S.replay || !S.autoplay || S.job) return;
  const st = entry.state;
  if (st.over || specOf(st.player) === "human") return;
  const gen = S.generation;
  try {
    const started = isOware(st)
      ? await api("/api/oware/agent-move", {...owareLine(), agent: specOf(st.player), seed: S.cursor})
      : await api("/api/agent-move", {position: st.text, ...rules(), agent: specOf(st.player), seed: st.player});
    S.job = {id: started.job.id, kind: "move"};
    drawStatus();
    const result = await poll(started.job);
    if (gen !== S.generation || current().state.text !== st.text) {   // a new game or an undo took over
      render();
      setTimeout(maybeEngineMove, 0);
      return;
    }
    showError("");
    push(result);
    render();
    setTimeout(maybeEngineMove, 0);
  } catch (e) {
    if (gen !== S.generation) { render(); setTimeout(maybeEngineMove, 0); return; }   // a new game took over
    if (S.autoplay) showError(e.message);   // (Stop cancels the search on purpose: no error)
    render();
  }
}

async function newGame() {
  S.replay = null;
  try {
    const size = {houses: Number($("houses").value), seeds: Number($("seeds").value)};
    setGame($("game").value);
    const answer = isOware() ? await api("/api/oware/new", size)
      : await api("/api/new", {...size, empty_capture: $("empty-capture").checked});
    S.autoplay = true;
    start(answer.state);
  } catch (e) { showError(e.message); }
}

async function loadPosition() {
  S.replay = null;
  try {
    setGame($("game").value);
    const answer = isOware() ? await api("/api/oware/position", {position: $("position-input").value})
      : await api("/api/position", {position: $("position-input").value,
                                    empty_capture: $("empty-capture").checked});
    S.autoplay = false;   // a set-up position waits for a click or Go
    start(answer.state);
  } catch (e) { showError(e.message); }
}

async function stopSearch() {
  if (S.job) {
    try { await api(`/api/jobs/${S.job.id}/cancel`, {}); } catch (e) { showError(e.message); }
  }
}

function undo() {
  if (S.cursor <= 0) return;
  S.generation++;
  stopSearch();
  S.autoplay = false;
  let k = S.cursor - 1;
  // back to the last position where a person was to move (or one ply when nobody is human)
  while (k > 0 && specOf(S.history[k].state.player) !== "human"
         && ["0", "1"].some((p) => specOf(Number(p)) === "human")) k--;
  S.cursor = k;
  S.history = S.history.slice(0, k + 1);
  S.analysis = null;
  showError("");
  render();
}

// ---- analysis ---------------------------------------------------------------------------------------------
function formatValue(r, short) {
  if (r.value === null) return "–";
  if (r.source === "mcts") return short ? `${Math.round(100 * r.share)}%` :
    `${(100 * r.share).toFixed(1)}% visits, reward ${r.value.toFixed(3)}`;
  const v = Number.isInteger(r.value) ? String(r.value) : r.value.toFixed(2);
  return (r.value > 0 ? "+" : "") + v;
}

function drawAnalysis() {
  if (isOware(current() && current().state)) { drawOwareAnalysis(); return; }
  const body = $("analysis-table").querySelector("tbody");
  body.innerHTML = "";
  const a = S.analysis;
  const entry = current();
  if (!a || !entry || a.position !== entry.state.text) { $("pv").textContent = ""; return; }
  for (const r of a.moves) {
    const tr = document.createElement("tr");
    tr.dataset.move = r.move;
    tr.dataset.source = r.source || "none";
    if (r.move === a.best_move) tr.className = "best";
    const src = r.source === "engine" && r.depth ? `engine, depth ${r.depth}` : (r.source || "not valued");
    for (const [text, cls] of [["h" + r.house, ""], [formatValue(r, false), "value"], [src, "src-" + r.source]]) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  const s = entry.state, line = [];
  for (const mv of a.pv) line.push(`p${mv <= s.houses ? 0 : 1} h${houseNumber(s, mv)}`);
  $("pv").textContent = a.pv.length ? "principal variation: " + line.join(", ") +
    (a.interrupted ? " (stopped early)" : "") : (a.interrupted ? "stopped early" : "");
}

function drawOwareAnalysis() {
  const body = $("oware-analysis-table").querySelector("tbody");
  body.innerHTML = "";
  const a = S.analysis, entry = current();
  if (!a || !entry || a.game !== "oware" || a.key !== lineKey()) { $("oware-analysis-summary").textContent = "";
    return; }
  const st = entry.state;
  for (const r of a.moves) {
    const tr = document.createElement("tr");
    tr.dataset.move = r.move;
    tr.dataset.visits = r.visits;
    if (r.db_value !== undefined) tr.dataset.dbValue = r.db_value;
    if (r.move === a.best_move) tr.className = "best";
    const exact = r.db_value === undefined ? "–" : `${r.db_value / 2} of ${a.seeds_on_board}: ${r.db_result} ` +
      `${r.db_margin > 0 ? "+" : ""}${r.db_margin}` + (a.exact_best.includes(r.move) ? " ★" : "");
    const cells = [[`${houseLetter(st, r.move)} (${r.move})`, ""], [`${r.visits} (${(100 * r.share).toFixed(1)}%)`,
      "visits"], [r.value === null ? "–" : r.value.toFixed(3), "value"], [exact, "exact"]];
    for (const [text, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  let text = `${a.iterations} iterations in ${a.seconds.toFixed(2)} s (${a.backend}), best ` +
    `${houseLetter(st, a.best_move)}, root value ${a.value === null ? "–" : a.value.toFixed(3)}`;
  if (a.interrupted) text += " (stopped early)";
  text += a.exact ? ` · exact: ${a.seeds_on_board} seeds on the board, the database's rule (even split of ` +
    `endless play)` : ` · no exact values: ${a.seeds_on_board} seeds on the board, above ${a.exact_seeds}`;
  $("oware-analysis-summary").textContent = text;
}

async function analyseOware() {
  const entry = current();
  if (!entry || entry.state.over) return;
  const key = lineKey();
  $("oware-analysis-progress").textContent = "";
  try {
    const started = await api("/api/oware/analyse", {...owareLine(), iterations: Number($("oware-iterations").value),
      playouts: Number($("oware-playouts").value), exact: $("oware-exact").checked});
    S.job = {id: started.job.id, kind: "analysis"};
    drawBoard();   // the houses are not clickable while a search runs
    const result = await poll(started.job, (job) => {
      const phase = {database: "endgame database", mcts: "MCTS"}[(job.progress || {}).phase] || "starting";
      $("oware-analysis-progress").textContent = job.status === "running"
        ? `${phase} · ${job.seconds.toFixed(1)} s` + (job.stopping ? " · stopping" : "")
        : `${job.status} in ${job.seconds.toFixed(1)} s`;
    });
    showError("");
    S.analysis = {...result, game: "oware", key};   // drawn only while its line is on the board
    render();
  } catch (e) { showError(e.message); render(); }
}

async function analyse() {
  const entry = current();
  if (entry && isOware(entry.state)) { await analyseOware(); return; }
  if (!entry) return;
  const st = entry.state;
  $("analysis-progress").textContent = "";
  try {
    const started = await api("/api/analyse", {position: st.text, ...rules(), engine: $("engine").value.trim(),
                                               solve_time: Number($("solve-time").value)});
    S.job = {id: started.job.id, kind: "analysis"};
    drawBoard();   // the houses are not clickable while a search runs
    const result = await poll(started.job, (job) => {
      const p = job.progress || {};
      const phase = {exact: "solving exactly", engine: "engine",
                     database: "endgame database (built once on first use)"}[p.phase] || "starting";
      $("analysis-progress").textContent = job.status === "running"
        ? `${phase} ${p.done !== undefined ? p.done + "/" + p.total : ""} · ${job.seconds.toFixed(1)} s`
          + (job.stopping ? " · stopping" : "")
        : `${job.status} in ${job.seconds.toFixed(1)} s`;
    });
    showError("");
    S.analysis = result;   // drawn only while its position is on the board
    render();
  } catch (e) { showError(e.message); render(); }
}

// ---- replay -----------------------------------------------------------------------------------------------
async function loadRecordList(info) {
  $("version").textContent = "v" + info.version + " · search cap " + info.max_seconds + " s";
  if (!info.records) { $("replay-panel").hidden = true; return; }
  const files = (await api("/api/records")).files;
  const sel = $("record-file");
  sel.innerHTML = "";
  for (const f of files) {
    const o = document.createElement("option");
    o.value = f.name; o.textContent = `${f.name} (${f.bytes.toLocaleString()} bytes)`;
    sel.appendChild(o);
  }
  // Replay starts on the first file that reads: the broken ones before it are marked, with their error
  recordPicked = false;
  for (const f of files) {
    if (recordPicked) break;   // the user chose one meanwhile
    if (await readRecord(f.name)) { if (!recordPicked) sel.value = f.name; break; }
  }
}

let recordPicked = false;  // the user chose a record file (the page no longer picks one)
const recordErrors = {};   // file name -> its one-line error, for the files found broken
let recordRead = null;     // {name, data}: the last file read, so Open does not read it again

// the games of a record file, or null (its error marked on its option, and shown if asked)
async function readRecord(name, show) {
  if (recordRead && recordRead.name === name) return recordRead.data;
  try {
    const data = await api(`/api/records/${encodeURIComponent(name)}`);
    recordRead = {name, data};
    delete recordErrors[name];
    return data;
  } catch (e) {
    recordErrors[name] = e.message;
    const o = [...$("record-file").options].find((x) => x.value === name);
    if (o) { o.dataset.error = e.message; if (!o.textContent.endsWith("(broken)")) o.textContent += " (broken)"; }
    if (show) showError(e.message);
    return null;
  }
}

function recordChosen() {   // a broken file says why as soon as it is chosen
  recordPicked = true;
  const name = $("record-file").value;
  if (name in recordErrors) showError(recordErrors[name]);
  else if (name) readRecord(name, true).then((data) => { if (data) showError(""); });
}

async function openRecord() {
  const name = $("record-file").value;
  if (!name) { showError("no record file in the records directory"); return; }
  try {
    recordRead = null;   // read it again: it may have changed since it was listed
    const data = await readRecord(name, true);
    if (!data) return;
    const game = data.games[0].game === "oware" ? "oware" : "kalah";   // a file of Kalah or of Oware games
    $("game").value = game;
    setGame(game);
    S.replay = {file: data.file, games: data.games, game: 0};
    const sel = $("record-game");
    sel.innerHTML = "";
    data.games.forEach((g, k) => {
      const o = document.createElement("option");
      o.value = k;
      o.textContent = `line ${g.line}: ${g.a} vs ${g.b}, pair ${g.pair} seat ${g.seat}, ` +
        (g.game === "oware" ? `${g.scores[0]}–${g.scores[1]}` : `margin ${g.margin}`) + `, ${g.plies.length} plies`;
      sel.appendChild(o);
    });
    await showGame(0);
  } catch (e) { showError(e.message); }
}

async function showGame(k) {
  const g = S.replay.games[k];
  const gen = ++S.generation;
  // Oware: each position is the start and the moves played since, so that it carries the game's record
  const states = (await Promise.all(g.positions.map((text, i) => g.game === "oware"
    ? api("/api/oware/position", {position: g.start, moves: g.plies.slice(0, i)})
    : api("/api/position", {position: text, empty_capture: g.empty_capture})))).map((a) => a.state);
  if (gen !== S.generation) return;   // another game (or a new game) was asked for meanwhile
  S.replay.game = k;
  S.history = states.map((state, i) => i === 0 ? {state, move: null, mover: null, extra: false}
    : {state, move: g.plies[i - 1], mover: states[i - 1].player, extra: state.player === states[i - 1].player,
       sown: sownPits(states[i - 1], g.plies[i - 1], state)});
  S.cursor = 0;
  S.analysis = null;
  showError("");
  render();
  autoAnalyse();
}

function step(to) {
  if (!S.replay) return;
  S.cursor = Math.max(0, Math.min(S.history.length - 1, to));
  render();
  autoAnalyse();
}

let autoTimer = null, autoToken = 0;
function autoAnalyse() {
  // replay with "analyse each position": the analysis of the position left behind is cancelled, the new
  // one starts once the steps pause for a moment
  if (!S.replay || !$("auto-analyse").checked) return;
  clearTimeout(autoTimer);
  const token = ++autoToken;
  autoTimer = setTimeout(async () => {
    if (S.job && S.job.kind === "analysis") await stopSearch();
    while (S.job) await new Promise((r) => setTimeout(r, 50));
    if (token !== autoToken) return;   // a later step took over
    const entry = current();
    const done = S.analysis && (isOware(entry && entry.state) ? S.analysis.key === lineKey()
      : S.analysis.position === entry.state.text);
    if (entry && !entry.state.over && !done) analyse();
  }, 250);
}

// ---- wiring -----------------------------------------------------------------------------------------------
$("new-game").addEventListener("click", newGame);
$("load-position").addEventListener("click", loadPosition);
$("undo").addEventListener("click", undo);
$("go").addEventListener("click", () => { S.replay = null; S.autoplay = true; render(); maybeEngineMove(); });
$("stop-play").addEventListener("click", () => { S.autoplay = false; stopSearch(); });
$("analyse").addEventListener("click", analyse);
$("cancel").addEventListener("click", stopSearch);
$("oware-analyse").addEventListener("click", analyseOware);
$("oware-cancel").addEventListener("click", stopSearch);
$("open-record").addEventListener("click", openRecord);
$("record-file").addEventListener("change", recordChosen);
$("record-game").addEventListener("change", () => showGame(Number($("record-game").value)).catch(
  (e) => showError(e.message)));
$("replay-first").addEventListener("click", () => step(0));
$("replay-prev").addEventListener("click", () => step(S.cursor - 1));
$("replay-next").addEventListener("click", () => step(S.cursor + 1));
$("replay-last").addEventListener("click", () => step(S.history.length - 1));
$("auto-analyse").addEventListener("change", autoAnalyse);
for (const id of ["p0", "p1"]) $(id).addEventListener("change", () => render());

$("game").addEventListener("change", newGame);

(async () => {   // the server says which game to show first (jitsearch serve --game)
  let info = null;
  try { info = await api("/api/info"); } catch (e) { showError(e.message); }
  if (info && info.game) $("game").value = info.game;
  for (const kind of (info && info.oware_agents) || []) {   // every kind the server's Oware parser knows
    const list = $("oware-agent-specs");
    if (![...list.options].some((o) => o.value.split(":")[0] === kind)) {
      const o = document.createElement("option");
      o.value = kind === "openspiel" ? "openspiel:mcts,simulations=1000" : kind;
      list.appendChild(o);
    }
  }
  if (info && info.engines) {   // the analysis engines this machine runs (no CUDA one without a GPU)
    const list = $("engine-specs");
    list.innerHTML = "";
    for (const spec of info.engines) {
      const o = document.createElement("option");
      o.value = spec;
      list.appendChild(o);
    }
  }
  setGame($("game").value);
  if (info) loadRecordList(info).catch((e) => showError(e.message));
  newGame();
})();

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
  variant: {},      // the variant options the line's start was read with
};
let INFO = null;    // /api/info: the games, their variant options and agent kinds

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
// the drawing script of a state's game (its TextUI.script, in /boards.js; the selector says what a new game is)
const board = (state) => BOARDS[state ? state.game : $("game").value] || BOARDS.generic;
// a request names its line: the start (text), the moves played since (the server replays them, so a record
// the rules keep is the game's) and the variant the start was read with
const line = () => ({position: S.history[0].state.text, moves: S.history.slice(1, S.cursor + 1).map((h) => h.move),
                     ...S.variant});
// what an analysis was made for: the position and the line that reached it
const lineKey = () => JSON.stringify(line());

// the variant options of a game (from /api/info) as inputs, id = the option's name with "-" for "_"
function variantInputs(game) {
  const box = $("variant");
  const old = {};
  for (const input of box.querySelectorAll("input")) old[input.id] = input;
  box.innerHTML = "";
  for (const [key, opt] of Object.entries((INFO && INFO.variants && INFO.variants[game]) || {})) {
    const id = key.replace(/_/g, "-");
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.id = id;
    input.dataset.key = key;
    input.title = opt.help;
    if (opt.type === "bool") {
      input.type = "checkbox";
      input.checked = old[id] && old[id].type === "checkbox" ? old[id].checked : opt.default;
      label.append(input, " " + key.replace(/_/g, " "));
    } else {
      input.type = "number";
      input.value = old[id] && old[id].type === "number" ? old[id].value : opt.default;
      label.append(key.replace(/_/g, " ") + " ", input);
    }
    box.appendChild(label);
  }
}

function variantOf() {
  const out = {};
  for (const input of $("variant").querySelectorAll("input"))
    out[input.dataset.key] = input.type === "checkbox" ? input.checked : Number(input.value);
  return out;
}

function setGame(game) {
  const b = BOARDS[game] || BOARDS.generic;
  document.body.className = `${game} analysis-${b.analysis}`;
  $("title").textContent = "jitsearch · " + b.title;
  $("position-input").placeholder = b.placeholder;
  agentList(game);
  for (const id of ["p0", "p1"]) $(id).setAttribute("list", game + "-agent-specs");
  if ($("variant").dataset.game !== game) { variantInputs(game); $("variant").dataset.game = game; }
}

// ---- the board ------------------------------------------------------------------------------------
function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// what a drawing script (a game's TextUI.script) gets from the page besides el: the board's SVG with its background,
// the turn line, a pit of a sowing game (a house: a circle with its label and the analysis' value on its
// owner's outer side; or a store: the rectangle `store`), and the short value of an MCTS or exact analysis
function boardSvg(box, W, H, label) {
  const svg = el("svg", {viewBox: `0 0 ${W} ${H}`, "aria-label": label}, box);
  svg.style.maxWidth = Math.round(1.25 * W) + "px";
  el("rect", {x: 0, y: 0, width: W, height: H, rx: 24, class: "board-bg"}, svg);
  return svg;
}

function turnText(svg, x, y, text) {
  el("text", {x, y, class: "turn-text", "text-anchor": "middle", id: "turn"}, svg).textContent = text;
}

function drawPit(svg, entry, human, i, {cx, cy, r, owner, label, value, store}) {
  const st = entry.state;
  const classes = ["pit", store ? "store" : "house", "p" + owner];
  if (!store && human && st.legal.includes(i)) classes.push("legal");
  if (entry.move === i) classes.push("last");
  if ((entry.sown || []).includes(i)) classes.push("sown");
  const g = el("g", {class: classes.join(" "), "data-pit": i, "data-count": st.board[i], "data-owner": owner}, svg);
  if (store) el("rect", store, g); else el("circle", {cx, cy, r}, g);
  el("text", {x: cx, y: cy, class: "count"}, g).textContent = st.board[i];
  if (!store) {
    el("text", {x: cx, y: owner === 0 ? cy + 50 : cy - 44, class: "label"}, g).textContent = label;
    if (value) el("text", {x: cx, y: owner === 0 ? cy + 64 : cy - 58, class: "val", "data-source": value[0]}, g)
      .textContent = value[1];
  }
  if (classes.includes("legal")) g.addEventListener("click", () => playMove(i));
}

// [source, text] of an MCTS analysis' move: the exact margin where known, else the visit share
const shortValue = (v) => v.exact === undefined ? ["mcts", `${Math.round(100 * v.share)}%`]
  : ["exact", (v.exact > 0 ? "+" : "") + v.exact];

function drawBoard() {
  const entry = current();
  const box = $("board");
  box.innerHTML = "";
  if (!entry) return;
  const st = entry.state;
  const values = {};
  if (S.analysis && S.analysis.key === lineKey()) for (const r of S.analysis.moves) values[r.move] = r;
  const human = !st.over && specOf(st.player) === "human" && !S.replay && !S.job;
  board(st).draw(entry, box, {el, values, formatValue, playerName, play: playMove, human, shortValue,
                              svg: boardSvg, turn: turnText, pit: (svg, i, o) => drawPit(svg, entry, human, i, o)});
  box.dataset.position = st.text;
  box.dataset.game = S.replay ? S.replay.game : "";
  box.dataset.generation = S.generation;   // (for tests: which game or set-up this board belongs to)
  box.dataset.start = S.history[0].state.text;
  box.dataset.player = st.player;
  box.dataset.kind = st.game;
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

// the agents the server suggests for the position on the board (none it would refuse there, and every other
// kind its parser knows for the game)
function agentList(game, state) {
  let list = $(game + "-agent-specs");
  if (!list) {
    list = document.createElement("datalist");
    list.id = game + "-agent-specs";
    document.body.appendChild(list);
  }
  if (state && state.over) return;   // (a finished game suggests nothing: the list stays)
  const specs = state ? state.agents : ["human", ...((INFO && INFO.agent_kinds && INFO.agent_kinds[game]) || [])];
  if ([...list.options].map((o) => o.value).join() === specs.join()) return;
  list.innerHTML = "";
  for (const spec of specs) {
    const o = document.createElement("option");
    o.value = spec;
    list.appendChild(o);
  }
}

function drawStatus() {
  const entry = current();
  if (!entry) return;
  const st = entry.state, b = board(st);
  let text;
  if (st.over) {
    text = st.result === "draw" ? "game over: a draw" : `game over: player ${st.result === "p0" ? 0 : 1} wins`;
    text += b.overText(st);
  } else {
    let who = specOf(st.player);
    if (S.replay) {   // the record's players: A was player a_player
      const g = S.replay.games[S.replay.game];
      who = "replay: " + (st.player === g.a_player ? g.a : g.b);
    }
    text = `player ${st.player} to move (${who})` + b.statusText(st, entry);
    if (S.job && S.job.kind === "move") text += " — thinking…";
  }
  if (entry.move !== null && entry.move !== undefined) text += b.lastText(st, entry);
  $("status").textContent = text;
  $("position-text").textContent = st.text;
  const list = $("history");
  list.innerHTML = "";
  S.history.slice(1).forEach((h, k) => {
    const li = document.createElement("li");
    li.textContent = b.moveName(h.state, h.mover, h.move) + (h.extra ? " +" : "");
    li.dataset.pit = h.move;
    li.dataset.position = h.state.text;
    if (k + 1 === S.cursor) li.style.fontWeight = "700";
    list.appendChild(li);
  });
  if (S.replay) $("replay-ply").textContent = `ply ${S.cursor} of ${S.history.length - 1}`;
}

function render() {
  const entry = current();
  if (entry) agentList(entry.state.game, entry.state);
  drawBoard(); drawStatus(); drawAnalysis();
}

// ---- playing ------------------------------------------------------------------------------------------
// the pits a move changed besides the one played (a drawing script's `changed`, by default the board's)
const changedPits = (before, move, after) => after.board.map((x, i) => i).filter(
  (i) => after.board[i] !== before.board[i] && i !== move);
const sownPits = (before, move, after) => (board(after).changed || changedPits)(before, move, after);

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
    const answer = await api(`/api/${current().state.game}/move`, {...line(), move: pitIndex});
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
    const started = await api(`/api/${st.game}/agent-move`, {...line(), agent: specOf(st.player), seed: st.player});
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
    const game = $("game").value;
    setGame(game);
    const variant = variantOf();
    const answer = await api(`/api/${game}/new`, variant);
    S.variant = variant;
    S.autoplay = true;
    start(answer.state);
  } catch (e) { showError(e.message); }
}

async function loadPosition() {
  S.replay = null;
  try {
    const game = $("game").value;
    setGame(game);
    const variant = variantOf();
    const answer = await api(`/api/${game}/position`, {position: $("position-input").value, ...variant});
    S.variant = variant;
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

// an exact solve's result and margin, starred where it is a best move (a drawing script's `exactText`, by default)
const exactText = (r, a) => `${r.exact_result} ${r.exact > 0 ? "+" : ""}${r.exact}` +
  (a.exact_best.includes(r.move) ? " ★" : "");

function drawAnalysis() {
  const entry = current();
  if (entry && board(entry.state).analysis === "engine") drawEngineAnalysis(); else drawMctsAnalysis();
}

// the engine panel (a game whose drawing script says analysis: "engine"): exact solves, then an engine
function drawEngineAnalysis() {
  const body = $("analysis-table").querySelector("tbody");
  body.innerHTML = "";
  const a = S.analysis;
  const entry = current();
  if (!a || !entry || a.key !== lineKey()) { $("pv").textContent = ""; return; }
  const s = entry.state, b = board(s);
  for (const r of a.moves) {
    const tr = document.createElement("tr");
    tr.dataset.move = r.move;
    tr.dataset.source = r.source || "none";
    if (r.move === a.best_move) tr.className = "best";
    const src = r.source === "engine" && r.depth ? `engine, depth ${r.depth}` : (r.source || "not valued");
    for (const [text, cls] of [[b.houseName(s, r.move), ""], [formatValue(r, false), "value"],
                               [src, "src-" + r.source]]) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  const pv = a.pv.map((mv) => b.pvName(s, mv));
  $("pv").textContent = a.pv.length ? "principal variation: " + pv.join(", ") +
    (a.interrupted ? " (stopped early)" : "") : (a.interrupted ? "stopped early" : "");
}

// the MCTS panel (every other game): one tree, and the game's exact values where it gives them
function drawMctsAnalysis() {
  const body = $("mcts-analysis-table").querySelector("tbody");
  body.innerHTML = "";
  const a = S.analysis, entry = current();
  if (!a || !entry || a.key !== lineKey()) { $("mcts-analysis-summary").textContent = ""; return; }
  const st = entry.state, b = board(st);
  for (const r of a.moves) {
    const tr = document.createElement("tr");
    tr.dataset.move = r.move;
    tr.dataset.visits = r.visits;
    if (r.exact !== undefined) tr.dataset.exact = r.exact;
    if (r.move === a.best_move) tr.className = "best";
    const exact = r.exact === undefined ? "–" : (b.exactText || exactText)(r, a, st);
    const cells = [[b.houseName(st, r.move), ""], [`${r.visits} (${(100 * r.share).toFixed(1)}%)`, "visits"],
      [r.value === null ? "–" : r.value.toFixed(3), "value"], [exact, "exact"]];
    for (const [text, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  let text = `${a.iterations} iterations in ${a.seconds.toFixed(2)} s (${a.backend}), best ` +
    `${b.houseName(st, a.best_move)}, root value ${a.value === null ? "–" : a.value.toFixed(3)}`;
  if (a.interrupted) text += " (stopped early)";
  text += a.exact ? ` · exact values: ${a.exact_rule || "perfect play"}` : " · no exact values in this position";
  $("mcts-analysis-summary").textContent = text;
}

async function analyseMcts() {
  const entry = current();
  if (!entry || entry.state.over) return;
  const key = lineKey();
  $("mcts-analysis-progress").textContent = "";
  try {
    const started = await api(`/api/${entry.state.game}/analyse`, {...line(),
      iterations: Number($("mcts-iterations").value), playouts: Number($("mcts-playouts").value),
      exact: $("mcts-exact").checked});
    S.job = {id: started.job.id, kind: "analysis"};
    drawBoard();   // the board is not clickable while a search runs
    const result = await poll(started.job, (job) => {
      const phase = {exact: "exact values", mcts: "MCTS"}[(job.progress || {}).phase] || "starting";
      $("mcts-analysis-progress").textContent = job.status === "running"
        ? `${phase} · ${job.seconds.toFixed(1)} s` + (job.stopping ? " · stopping" : "")
        : `${job.status} in ${job.seconds.toFixed(1)} s`;
    });
    showError("");
    S.analysis = {...result, key};   // drawn only while its line is on the board
    render();
  } catch (e) { showError(e.message); render(); }
}

async function analyse() {
  const entry = current();
  if (!entry) return;
  if (board(entry.state).analysis !== "engine") { await analyseMcts(); return; }
  const st = entry.state, key = lineKey();
  $("analysis-progress").textContent = "";
  try {
    const started = await api(`/api/${st.game}/engine-analysis`, {...line(), engine: $("engine").value.trim(),
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
    S.analysis = {...result, key};   // drawn only while its line is on the board
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
    const game = data.games[0].game;
    $("game").value = game;
    setGame(game);
    S.replay = {file: data.file, games: data.games, game: 0};
    const sel = $("record-game");
    sel.innerHTML = "";
    data.games.forEach((g, k) => {
      const o = document.createElement("option");
      o.value = k;
      o.textContent = `line ${g.line}: ${g.a} vs ${g.b}, pair ${g.pair} seat ${g.seat}, ` +
        (BOARDS[game] || BOARDS.generic).recordResult(g) + `, ${g.plies.length} plies`;
      sel.appendChild(o);
    });
    await showGame(0);
  } catch (e) { showError(e.message); }
}

async function showGame(k) {
  const g = S.replay.games[k];
  const gen = ++S.generation;
  // each position is the start and the moves played since, so that it carries the game's record
  const game = g.game, variant = (BOARDS[game] || BOARDS.generic).recordRules(g);
  const states = (await Promise.all(g.positions.map((text, i) => api(`/api/${game}/position`,
    {position: g.start, moves: g.plies.slice(0, i), ...variant})))).map((a) => a.state);
  if (gen !== S.generation) return;   // another game (or a new game) was asked for meanwhile
  S.variant = variant;
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
    const done = S.analysis && S.analysis.key === lineKey();
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
$("mcts-analyse").addEventListener("click", analyseMcts);
$("mcts-cancel").addEventListener("click", stopSearch);
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

(async () => {   // the server says which game to show first (jitsearch serve --game) and which it has
  try { INFO = await api("/api/info"); } catch (e) { showError(e.message); }
  const sel = $("game");
  for (const game of (INFO && INFO.games) || []) {
    if ([...sel.options].some((o) => o.value === game)) continue;
    const o = document.createElement("option");
    o.value = game;
    o.textContent = BOARDS[game] ? BOARDS[game].title : game;
    sel.appendChild(o);
  }
  if (INFO && INFO.game) sel.value = INFO.game;
  if (INFO && INFO.engines) {   // the analysis engines this machine runs (no CUDA one without a GPU)
    const list = $("engine-specs");
    list.innerHTML = "";
    for (const spec of INFO.engines) {
      const o = document.createElement("option");
      o.value = spec;
      list.appendChild(o);
    }
  }
  setGame(sel.value);
  if (INFO) loadRecordList(INFO).catch((e) => showError(e.message));
  newGame();
})();

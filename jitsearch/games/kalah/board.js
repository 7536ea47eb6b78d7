// Kalah's board on the page of `jitsearch serve` (the page's app.js calls BOARDS.kalah; the server sends
// the state: board (pits: player 0's houses, store, player 1's houses, store), houses, empty_capture, legal moves).
"use strict";

(window.BOARDS = window.BOARDS || {}).kalah = (() => {
  const houseNumber = (state, pit) => pit <= state.houses ? pit : pit - state.houses - 1;
  return {
    title: "Kalah",
    placeholder: "4,4,4,4,4,4/0/4,4,4,4,4,4/0 p0",
    analysis: "engine",   // the page's engine panel: exact solves, then alphabeta or MCTS (/api/analyse)
    recordRules: (g) => ({empty_capture: g.empty_capture}),
    recordResult: (g) => `margin ${g.margin}`,
    moveName: (state, mover, move) => `p${mover} h${houseNumber(state, move)}`,
    lastText: (state, entry) => ` · last: player ${entry.mover} house ${houseNumber(state, entry.move)} (pit ${entry.move})`,
    statusText: (state, entry) => entry.extra ? ` — extra turn: player ${state.player}'s last seed ended in its store` : "",
    overText: (st) => `, margin ${st.margin > 0 ? "+" : ""}${st.margin}`,
    pvName: (state, move) => `p${move <= state.houses ? 0 : 1} h${houseNumber(state, move)}`,
    houseName: (state, move) => "h" + houseNumber(state, move),
    draw(entry, box, page) {
      const st = entry.state, m = st.houses, el = page.el;
      const cell = 80, pad = 20, storeW = 80, W = 2 * pad + 2 * storeW + m * cell, H = 340;
      const svg = page.svg(box, W, H, "Kalah board");
      const pit = (i, cx, cy, store, owner) => {
        const v = page.values[i];
        page.pit(svg, i, {cx, cy, r: cell / 2 - 8, owner, label: "h" + houseNumber(st, i),
                          value: v && v.value !== null ? [v.source, page.formatValue(v, true)] : null,
                          store: store && {x: cx - storeW / 2 + 8, y: 70, width: storeW - 16, height: 200, rx: 30}});
      };
      pit(0, pad + storeW / 2, H / 2, true, 1);
      pit(m + 1, W - pad - storeW / 2, H / 2, true, 0);
      // whose store is whose: the player, and who plays it (you, an agent, a record's player)
      for (const [owner, x] of [[1, pad + storeW / 2], [0, W - pad - storeW / 2]]) {
        el("text", {x, y: 60, class: "store-label", "data-owner": owner, id: "store-label-" + owner}, svg)
          .textContent = `player ${owner}`;
        const name = page.playerName(owner);   // shortened to fit under the store; the whole of it in data-who
        el("text", {x, y: 292, class: "store-who", "data-owner": owner, id: "store-who-" + owner, "data-who": name},
           svg).textContent = name.length <= 14 ? name : name.split(":")[0].slice(0, 12) + "…";
      }
      for (let i = 1; i <= m; i++) pit(i, pad + storeW + (i - 0.5) * cell, 225, false, 0);
      for (let i = m + 2; i <= 2 * m + 1; i++) pit(i, pad + storeW + (2 * m + 1 - i + 0.5) * cell, 115, false, 1);
      if (!st.over) {
        page.turn(svg, W / 2, st.player === 0 ? H - 10 : 22,
                  `player ${st.player} to move` + (entry.extra ? " (extra turn)" : ""));
      }
    },
  };
})();

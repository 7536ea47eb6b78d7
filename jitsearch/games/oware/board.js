// Oware's board on the page of `jitsearch serve` (the page's app.js calls BOARDS.oware; the server sends the
// state: board (houses 0..2m-1, then the two captured counts), houses, scores, ply, legal moves, reason).
"use strict";

(window.BOARDS = window.BOARDS || {}).oware = (() => {
  // OpenSpiel's house letters: A.. for player 0 (indices 0..m-1), a.. for player 1 (m..2m-1)
  const houseLetter = (state, h) => String.fromCharCode((h < state.houses ? 65 : 97) + h % state.houses);
  const ENDS = {
    "repetition": "a position since the last capture came back",
    "move limit": "the move limit was reached",
    "scores": "a player has captured more than half of the seeds (or both half)",
    "no move": "the player to move has no legal move",
  };
  return {
    title: "Oware",
    placeholder: "4,4,4,4,4,4/4,4,4,4,4,4/0,0 p0",
    analysis: "mcts",
    recordRules: () => ({}),
    recordResult: (g) => `${g.scores[0]}–${g.scores[1]}`,
    moveName: (state, mover, move) => `p${mover} ${houseLetter(state, move)}`,
    lastText: (state, entry) => ` · last: player ${entry.mover} ${houseLetter(state, entry.move)} (house ${entry.move})`,
    statusText(st) {
      let text = "";
      const theirs = st.board.slice((1 - st.player) * st.houses, (2 - st.player) * st.houses);
      if (theirs.every((x) => x === 0)) text += ` — must feed: only moves that reach player ${1 - st.player}'s row`;
      return text + ` · captured ${st.scores[0]}–${st.scores[1]} · ply ${st.ply}`;
    },
    overText(st) {
      let text = `, ${st.scores[0]}–${st.scores[1]}`;
      if (st.reason) text += ` (${ENDS[st.reason] || st.reason}; the seeds left went to their side's owner)`;
      return text;
    },
    houseName: (state, move) => `${houseLetter(state, move)} (${move})`,
    draw(entry, box, page) {
      // player 1's houses on top, right to left (a at the right), player 0's below, left to right (A at the
      // left), as OpenSpiel draws Oware; each side's captured seeds at its right-hand end
      const st = entry.state, m = st.houses, b = st.board, el = page.el;
      const cell = 80, pad = 20, side = 90, W = 2 * pad + 2 * side + m * cell, H = 340;
      const svg = page.svg(box, W, H, "Oware board");
      const house = (i, cx, cy, owner) => {   // under the house: the analysis, the exact margin or the share
        const v = page.values[i];
        page.pit(svg, i, {cx, cy, r: cell / 2 - 8, owner, label: houseLetter(st, i), value: v && page.shortValue(v)});
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
      if (!st.over) page.turn(svg, W / 2, st.player === 0 ? H - 10 : 22, `player ${st.player} to move`);
    },
  };
})();

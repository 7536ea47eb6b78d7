// Connect Four's board on the page of `jitsearch serve` (the page's app.js calls BOARDS.connect4; the server
// sends the state: width, height, cells[row][column] top row first, -1 empty or the player whose stone).
"use strict";

(window.BOARDS = window.BOARDS || {}).connect4 = (() => {
  const STONE = ["x", "o"];
  return {
    title: "Connect Four",
    placeholder: "4455 (columns from 1) or ......./......./......./......./......./...x... p1",
    analysis: "mcts",
    recordRules: () => ({}),
    recordResult: (g) => `margin ${g.margin}`,
    moveName: (state, mover, move) => `${STONE[mover]} ${move + 1}`,
    lastText: (state, entry) => ` · last: ${STONE[entry.mover]} (player ${entry.mover}) in column ${entry.move + 1}`,
    statusText: (st) => ` · ${STONE[st.player]} to move · ply ${st.ply}`,
    overText: () => "",
    houseName: (state, move) => `column ${move + 1}`,
    exactText: (r, a) => `${r.exact_result} (score ${r.exact > 0 ? "+" : ""}${r.exact})` +
      (a.exact_best.includes(r.move) ? " ★" : ""),
    changed: () => [],
    draw(entry, box, page) {
      // the grid as it stands, top row first; a click on a column that is not full drops a stone there
      const st = entry.state, w = st.width, h = st.height, el = page.el;
      const cell = 70, pad = 20, top = 40, W = 2 * pad + w * cell, H = top + h * cell + 50;
      const svg = page.svg(box, W, H, "Connect Four board");
      let lastRow = -1;   // the stone just dropped: the top stone of the last column played
      if (entry.move !== null && entry.move !== undefined)
        lastRow = st.cells.findIndex((row) => row[entry.move] >= 0);
      for (let c = 0; c < w; c++) {
        const legal = page.human && st.legal.includes(c);
        const g = el("g", {class: "column" + (legal ? " legal" : ""), "data-column": c, "data-pit": c}, svg);
        el("rect", {x: pad + c * cell, y: top, width: cell, height: h * cell, class: "column-bg"}, g);
        for (let r = 0; r < h; r++) {
          const who = st.cells[r][c];
          const cls = ["cell", who < 0 ? "empty" : "p" + who];
          if (c === entry.move && r === lastRow) cls.push("last");
          el("circle", {cx: pad + (c + 0.5) * cell, cy: top + (r + 0.5) * cell, r: cell / 2 - 7, class: cls.join(" "),
                        "data-row": r, "data-column": c, "data-owner": who}, g);
        }
        el("text", {x: pad + (c + 0.5) * cell, y: top - 12, class: "label"}, g).textContent = c + 1;
        const v = page.values[c];   // under the column: the exact score where known, else the visit share
        if (v) {
          const [source, text] = page.shortValue(v);
          el("text", {x: pad + (c + 0.5) * cell, y: top + h * cell + 22, class: "val", "data-source": source}, g)
            .textContent = text;
        }
        if (legal) g.addEventListener("click", () => page.play(c));
      }
      if (!st.over) page.turn(svg, W / 2, H - 10, `${STONE[st.player]} (player ${st.player}) to move`);
    },
  };
})();

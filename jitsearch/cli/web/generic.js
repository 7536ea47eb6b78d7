// The board of a game without a drawing script of its own (one registered from outside the package): its
// text form, and a button for each legal move named as the game names it (the state's `names`).
"use strict";

(window.BOARDS = window.BOARDS || {}).generic = {
  title: "a game",
  placeholder: "the game's text form",
  analysis: "mcts",
  recordRules: () => ({}),
  recordResult: (g) => `margin ${g.margin}`,
  moveName: (state, mover, move) => `p${mover} ${move}`,
  lastText: (state, entry) => ` · last: player ${entry.mover} played ${entry.move}`,
  statusText: () => "",
  overText: (st) => `, margin ${st.margin > 0 ? "+" : ""}${st.margin}`,
  houseName: (state, move) => String(move),
  changed: () => [],
  draw(entry, box, page) {
    const st = entry.state;
    const pre = document.createElement("pre");
    pre.className = "mono generic-board";
    pre.textContent = st.text;
    box.appendChild(pre);
    for (const move of st.legal) {
      const b = document.createElement("button");
      b.className = "generic-move";
      b.dataset.pit = move;
      const v = page.values[move];
      b.textContent = (st.names && st.names[move]) || String(move);
      if (v) b.textContent += v.exact === undefined ? ` (${Math.round(100 * v.share)}%)` : ` (${v.exact})`;
      b.disabled = !page.human;
      b.addEventListener("click", () => page.play(move));
      box.appendChild(b);
    }
  },
};

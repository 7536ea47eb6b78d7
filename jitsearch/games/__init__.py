"""Games: Kalah (:mod:`jitsearch.games.kalah`, a package: rules, engines, the
exact solver and endgame databases) and the random-tree game of seed 001
(:mod:`jitsearch.games.random_tree_game`)."""

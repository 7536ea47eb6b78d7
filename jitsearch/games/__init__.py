"""Games: Kalah (:mod:`jitsearch.games.kalah`, a package: rules, engines, the
exact solver and endgame databases), Oware (:mod:`jitsearch.games.oware`, OpenSpiel's
``oware`` rules, search and a small-variant solver) and the random-tree game of seed 001
(:mod:`jitsearch.games.random_tree_game`)."""

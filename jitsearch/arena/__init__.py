"""The arena: agents (search algorithms behind one spec string) and the
tournaments that pit them against each other.

It sits above :mod:`jitsearch.mcts` in the layers (trees -> search -> games
-> kernels -> mcts -> arena -> interop -> cli), so an agent may use any
searcher.

* agents: :mod:`.agents` (``parse_agent(spec, game=...)`` for every game, one
  :class:`~.agents.Agent`: the generic kinds, or the MCTSConfig ones of a game with ``config_agents``,
  and the game's ``Game.engines``), :mod:`.search_thread` (Ctrl-C safe searches), :mod:`.openspiel_agents`
  (OpenSpiel's bots, with the ``openspiel`` extra), :mod:`.external_engine`
  (``cmd:`` programs speaking the line protocol of :mod:`.engine_protocol`);
* games and matches: :mod:`.game_match` (one game of any game, its records
  and their checks), :mod:`.legacy_records` (Kalah's older record format,
  read by ``rate`` and the web page), :mod:`.matches` (matches of every game with SPRT stopping,
  gauntlets and round robins), :mod:`.random_tree_tournament`;
* statistics: :mod:`.stats` (W/D/L, pentanomial, Elo, nElo, LOS, SPRT),
  :mod:`.ratings` (maximum-likelihood ratings of many players) and
  :mod:`.rating_list` (rating lists from record files, table and chart);
* openings: :mod:`.openings` (suites from files, generated, balanced),
  :mod:`.opening_suites` (balanced suites valued exactly or by a deep
  search, and those a game ships: ``ArenaHooks``);
* scheduling: :mod:`.executor` (this process, a local Dask cluster or a
  remote one);
* record files: :mod:`.records` (checked, resumable JSONL).
"""

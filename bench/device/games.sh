#!/bin/bash
# The game protocol's CUDA kernels and the engine's strength on a lent GPU machine (one NVIDIA H100/H200,
# 16 CPU cores), one call:   device run: bash bench/device/games.sh   (carry .whl: a numpy < 2.5 cp312 wheel;
# the image's numpy 2.5 breaks numba-cuda 0.30). What it measures lands in $OUT (8 files at most come back).
# 1. tests/test_gpu.py on the device (Kalah's kernels and the generic ones against their CPU twins)
# 2. bench/gpu_games.py: per game (Kalah, Oware, Connect Four) the generic CUDA kernels against their CPU twins
#    (playouts, multi-tree, tree-parallel), their rates against 16 CPU cores, Kalah's register kernel
# 3. bench/gpu_playout_kernels.py --no-search: Kalah's own CUDA playout kernels (register path) after the refactor
# 4. strength, short: the engine on 16 threads against 1 (0.1 s a move), GPU MCTS with evaluation leaves
#    against the engine on 16 threads (0.2 s a move); each match keeps the games it finished at its limit
. bench/device/preamble.sh
step tests 130 python3 -m pytest -q -p no:cacheprovider -n 8 -W ignore tests/test_gpu.py
step games 140 python3 bench/gpu_games.py --out "$OUT/gpu_games.json"
step kernels 80 python3 bench/gpu_playout_kernels.py --no-search --repeats 3 --out "$OUT/gpu_playout_kernels.json"
step smp16v1 85 python3 bench/kalah_engine.py match --a alphabeta:time=0.1,threads=16 --b alphabeta:time=0.1 \
  --pairs 100 --workers 1 --out "$OUT/engine" --name smp16v1_0.1s
step gpu_vs_smp16 85 python3 bench/kalah_engine.py match \
  --a "mcts:time=0.2,backend=cuda,eval=store,eval_plies=4,imm=0.3" --b alphabeta:time=0.2,threads=16 \
  --pairs 100 --workers 1 --out "$OUT/engine" --name gpu_mcts_eval_vs_smp16_0.2s
ls -R "$OUT" >>"$log"

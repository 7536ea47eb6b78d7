#!/bin/bash
# The Kalah engine's strength on a lent GPU machine (one NVIDIA H100/H200, 16 CPU cores), one call:
#   device run: bash bench/device/engine_strength.sh   (carry .whl: a numpy < 2.5 cp312 wheel; the image's
#   numpy 2.5 breaks numba-cuda 0.30). What it measures lands in $OUT (8 files at most come back).
# 1. Lazy SMP: the engine on 16 threads against the engine on 1, 0.1 s a move, balanced Kalah(6,4) suite
# 2. GPU MCTS with evaluation leaves and implicit minimax against the engine on 16 threads, 0.2 s a move
# 3. the GPU tests on the device (every kernel against its CPU twin), a short selection
# Each match is stopped by SIGINT at its time limit and keeps the games it finished (the arena's Ctrl-C).
. bench/device/preamble.sh
step smp16v1 170 python3 bench/kalah_engine.py match --a alphabeta:time=0.1,threads=16 --b alphabeta:time=0.1 \
  --pairs 100 --workers 1 --out "$OUT/engine" --name smp16v1_0.1s
step gpu_vs_smp16 230 python3 bench/kalah_engine.py match \
  --a "mcts:time=0.2,backend=cuda,eval=store,eval_plies=4,imm=0.3" --b alphabeta:time=0.2,threads=16 \
  --pairs 100 --workers 1 --out "$OUT/engine" --name gpu_mcts_eval_vs_smp16_0.2s
step tests 80 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_gpu.py -k "twin or equal or consistent" \
  -W ignore
ls -R "$OUT" >>"$log"

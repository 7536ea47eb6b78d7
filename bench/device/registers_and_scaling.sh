#!/bin/bash
# GPU playouts with the board in registers, and 16-core scaling, on a lent GPU machine (one NVIDIA H100/H200,
# 16 CPU cores), one call:   device run: bash bench/device/registers_and_scaling.sh   (carry .whl: a numpy < 2.5
# cp312 wheel, bench/device/preamble.sh). Everything it measures lands in $OUT (8 files at most come back).
# 1. kernel-only playout rates of every CUDA playout kernel + identical counters, tree-parallel MCTS rates
# 2. CPU scaling on 1..16 threads (playouts, root-parallel MCTS, the endgame build)
# 3. the GPU tests on the device (every kernel against its CPU twin)
# 4. strength: tree-parallel GPU MCTS against CPU root-parallel MCTS on every core, equal time per move
. bench/device/preamble.sh
step kernels 170 python3 bench/gpu_playout_kernels.py --out "$OUT/gpu_playout_kernels.json"
step scaling 170 python3 bench/many_core_scaling.py --out "$OUT/many_core_scaling.json"
step tests 110 python3 -m pytest -q -p no:cacheprovider -n 6 tests/test_gpu.py -k "twin or equal or consistent or every" \
  -W ignore
step strength 80 python3 bench/gpu_mcts.py --backend cuda --parallel tree --rates "" --positions 0 \
  --move-times 0.05 --pairs 6 --opponents all --out "$OUT/strength"
ls -R "$OUT" >>"$log"

#!/bin/bash
# Issue 24 on a lent GPU machine (one NVIDIA H100/H200, 16 CPU cores), one call:
#   device run: bash bench/device/issue24.sh   (carry .whl: a numpy < 2.5 cp312 wheel; the image's numpy 2.5
#   breaks numba-cuda 0.30). Everything it measures lands in $OUT (8 files at most come back).
# 1. kernel-only playout rates of every CUDA playout kernel + identical counters, tree-parallel MCTS rates
# 2. CPU scaling on 1..16 threads (playouts, root-parallel MCTS, the endgame build)
# 3. the GPU tests on the device (every kernel against its CPU twin)
# 4. strength: tree-parallel GPU MCTS against CPU root-parallel MCTS on every core, equal time per move
set -u
export PYTHONUNBUFFERED=1
start=$(date +%s)
log="$OUT/run.log"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "wheel install failed" >>"$log"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
  echo "cores: $(nproc)"; lscpu | grep -m1 "Model name"
  python3 -c "import sys, numba, numpy; from numba import cuda; print(sys.version.split()[0], 'numba', numba.__version__, 'numpy', numpy.__version__, 'cuda', cuda.is_available())"
  python3 -c "import importlib.metadata as m; print('numba-cuda', m.version('numba-cuda'))"
} >>"$log" 2>&1
step() {  # step NAME SECONDS COMMAND...: run with a time limit, log its output and its exit status
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit}s, at $(( $(date +%s) - start ))s)" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start ))s" >>"$log"
}
step kernels 170 python3 bench/gpu_playout_kernels.py --out "$OUT/gpu_playout_kernels.json"
step scaling 170 python3 bench/many_core_scaling.py --out "$OUT/many_core_scaling.json"
step tests 110 python3 -m pytest -q -p no:cacheprovider -n 6 tests/test_gpu.py -k "twin or equal or consistent or every" \
  -W ignore
step strength 80 python3 bench/gpu_mcts.py --backend cuda --parallel tree --rates "" --positions 0 \
  --move-times 0.05 --pairs 6 --opponents all --out "$OUT/strength"
ls -R "$OUT" >>"$log"

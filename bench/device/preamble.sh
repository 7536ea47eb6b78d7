# Sourced by the scripts of bench/device/ (run on a lent GPU machine from the repository root, $OUT set):
# installs the carried numpy wheel (.whl: a numpy < 2.5 cp312 wheel; the image's numpy 2.5 breaks numba-cuda
# 0.30) into /tmp/site, logs the machine and the versions to $OUT/run.log, and defines `step`.
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
  python3 -c "import typer, rich, dask; print('typer, rich, dask import')"
} >>"$log" 2>&1
step() {  # step NAME SECONDS COMMAND...: run with a time limit (then SIGINT: a match keeps the games it
  # finished, the arena's Ctrl-C; killed 20 s later), log its output and exit status
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit}s, at $(( $(date +%s) - start ))s)" >>"$log"
  timeout -s INT -k 20 "$limit" "$@" >>"$log" 2>&1
  echo "== $name: exit $? at $(( $(date +%s) - start ))s" >>"$log"
}

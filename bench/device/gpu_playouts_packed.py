"""Kernel-only playout rates on the GPU, generic vs packed boards, Kalah(6,4) from the start."""
import json, os, statistics, time
import numpy as np
from numba import cuda
from jitsearch.games.kalah import KalahState
from jitsearch.games.kalah.cuda_playouts import playout_kernel, packed_kernel

out = {"device": cuda.get_current_device().name.decode() if isinstance(cuda.get_current_device().name, bytes) else str(cuda.get_current_device().name)}
s = KalahState.initial(6, 4)
states, per = 262144, 64
b = np.repeat(np.asarray(s.board, np.int32)[None, :], states, axis=0)
p = np.zeros(states, np.int64)
d_b, d_p = cuda.to_device(b), cuda.to_device(p)
outs = [cuda.to_device(np.zeros(states, np.int64)) for _ in range(5)]
kernels = {"generic": playout_kernel, "packed": packed_kernel(6)}
sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
results = {}
for tpb in (128, 256):
    blocks = sms * 2048 // tpb
    for name, k in kernels.items():
        k[blocks, tpb](d_b, d_p, 6, False, per, np.uint64(1), *outs); cuda.synchronize()
    times = {name: [] for name in kernels}
    for rep in range(5):
        for name, k in kernels.items():
            for o in outs: o.copy_to_device(np.zeros(states, np.int64))
            cuda.synchronize(); t0 = time.perf_counter()
            k[blocks, tpb](d_b, d_p, 6, False, per, np.uint64(rep + 1), *outs); cuda.synchronize()
            times[name].append(time.perf_counter() - t0)
    for name in kernels:
        rates = [states * per / t for t in times[name]]
        results[f"{name}_tpb{tpb}"] = {"median_playouts_per_second": statistics.median(rates), "runs": rates}
# identical results check between the two kernels
res = {}
for name, k in kernels.items():
    for o in outs: o.copy_to_device(np.zeros(states, np.int64))
    k[sms * 16, 128](d_b, d_p, 6, False, per, np.uint64(99), *outs); cuda.synchronize()
    res[name] = [o.copy_to_host() for o in outs]
out["identical"] = all((x == y).all() for x, y in zip(res["generic"], res["packed"]))
out["rates"] = results
out["states"], out["playouts_per_state"] = states, per
print(json.dumps(out, indent=1))
open(os.path.join(os.environ["OUT"], "gpu_playouts_packed.json"), "w").write(json.dumps(out, indent=1))

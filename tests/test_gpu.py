"""CUDA playouts: backend selection and errors (always), the kernel against
its CPU twin (under the CUDA simulator or on a GPU), and a PTX compile check
for a real architecture (where numba-cuda's NVVM wheels are installed).

CI runs this file a second time with ``NUMBA_ENABLE_CUDASIM=1`` set before
Python starts, and the PTX check in a venv with the ``gpu`` extra
(``JITSEARCH_REQUIRE_PTX=1`` makes a missing toolchain a failure there)."""

from __future__ import annotations

import json
import os
import random
import warnings

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.kernels.backend import BackendError, cuda_status, evaluate, resolve
from jitsearch.kernels.playouts import evaluate_cpu

CUDA_OK, CUDA_WHY = cuda_status()
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
needs_cuda = pytest.mark.skipif(not CUDA_OK, reason=f"no CUDA device or simulator: {CUDA_WHY}")
KEYS = ("wins", "draws", "losses", "margin_sum", "plies")


@pytest.fixture(autouse=True)
def _quiet_simulator():
    # the simulator runs the kernel on NumPy scalars, whose uint64 arithmetic
    # wraps exactly as on the GPU but warns about it
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)
        yield


def _batch(m, n, count, seed, near_end=False, empty_capture=False):
    rnd = random.Random(seed)
    states = []
    while len(states) < count:
        s = KalahState.initial(m, n, empty_capture=empty_capture)
        plies = rnd.randrange(4 * m * n) if near_end else rnd.randrange(6)
        for _ in range(plies):
            if s.is_over:
                break
            s = s.play(rnd.choice(s.legal_moves()))
        if not s.is_over:
            states.append(s)
    return np.stack([s.board for s in states]), np.array([s.player for s in states])


# -- backend selection (no GPU needed) ------------------------------------------------

def test_backend_names_and_auto_fallback():
    with pytest.raises(BackendError, match="backend must be one of"):
        resolve("gpu")
    assert resolve("cpu") == "cpu"
    assert resolve("auto") == ("cuda" if CUDA_OK else "cpu")
    b, p = _batch(6, 4, 3, 1)
    r = evaluate(b, p, 4, 7, backend="auto")
    assert r["backend"] == resolve("auto")
    cpu = evaluate_cpu(b, p, 4, 7)
    for k in KEYS:
        assert (r[k] == cpu[k]).all()


@pytest.mark.skipif(CUDA_OK, reason="a CUDA device (or the simulator) is present")
def test_cuda_without_a_device_is_one_clear_error(capsys):
    from jitsearch.cli.app import main

    with pytest.raises(BackendError, match="no CUDA driver or device|gpu extra"):
        resolve("cuda")
    assert main(["bench", "playouts", "--backend", "cuda", "--states", "2", "--playouts", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: CUDA backend requested") and "jitsearch[gpu]" in err[0]
    assert main(["bench", "playouts", "--backend", "auto", "--states", "4", "--playouts", "2", "--repeats", "1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["backend"] == "cpu"
    assert main(["play", "--houses", "3", "--seeds", "2", "--p0", "mcts:iterations=10,backend=cuda", "--p1",
                 "random", "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "CUDA backend requested" in err[0]


# -- the kernel against the CPU twin ----------------------------------------------------

@needs_cuda
@pytest.mark.parametrize("m, n, near_end, ec", [(6, 4, False, False), (6, 4, True, True), (1, 3, False, False),
                                                (3, 2, True, False), (8, 3, False, True), (6, 6, True, False)])
def test_gpu_equals_cpu_twin(m, n, near_end, ec):
    from jitsearch.kernels.cuda_playouts import CudaEvaluator

    b, p = _batch(m, n, 5, seed=m * 100 + n, near_end=near_end, empty_capture=ec)
    for seed in (0, 1, 2**64 - 1, 987654321):
        cpu = evaluate_cpu(b, p, 3, seed, empty_capture=ec)
        gpu = CudaEvaluator(threads_per_block=32).evaluate(b, p, 3, seed, empty_capture=ec)
        for k in KEYS:
            assert (gpu[k] == cpu[k]).all(), (k, seed)


@needs_cuda
@pytest.mark.parametrize("threads_per_block, blocks", [(1, 1), (7, 2), (32, None), (64, 3)])
def test_launch_shape_does_not_change_results(threads_per_block, blocks):
    from jitsearch.kernels.cuda_playouts import CudaEvaluator

    b, p = _batch(6, 4, 4, seed=5)
    cpu = evaluate_cpu(b, p, 5, 11)
    ev = CudaEvaluator(threads_per_block=threads_per_block, blocks=blocks)
    for _ in range(2):  # the second call reuses the device buffers
        gpu = ev.evaluate(b, p, 5, 11)
        for k in KEYS:
            assert (gpu[k] == cpu[k]).all()


@needs_cuda
def test_device_arrays_in_and_out():
    from numba import cuda

    from jitsearch.kernels.cuda_playouts import CudaEvaluator

    b, p = _batch(4, 3, 3, seed=9)
    cpu = evaluate_cpu(b, p, 4, 3)
    ev = CudaEvaluator(threads_per_block=16)
    d_b = cuda.to_device(np.ascontiguousarray(b, dtype=np.int32))
    d_p = cuda.to_device(np.ascontiguousarray(p, dtype=np.int64))
    out = ev.evaluate(d_b, d_p, 4, 3, to_host=False)
    for k in KEYS:
        assert hasattr(out[k], "copy_to_host") and (out[k].copy_to_host() == cpu[k]).all()


@needs_cuda
def test_mcts_with_gpu_leaf_evaluation_equals_the_cpu_backend():
    from jitsearch.mcts.search import mcts_search

    s = KalahState.initial(4, 3)
    kw = dict(iterations=48, batch=8, playouts=2, seed=4)
    g = mcts_search(s, backend="cuda", **kw)
    c = mcts_search(s, backend="cpu", **kw)
    assert g["backend"] == "cuda" and c["backend"] == "cpu"
    assert g["children"] == c["children"] and g["move"] == c["move"]


# -- PTX for a real architecture ---------------------------------------------------------

def test_kernel_compiles_to_ptx_for_sm90():
    if SIMULATOR:
        pytest.skip("the simulator has no compiler")
    try:
        from jitsearch.kernels.cuda_playouts import compile_ptx

        ptx = compile_ptx((9, 0))
    except Exception as exc:  # no numba-cuda / NVVM / NVRTC here
        if os.environ.get("JITSEARCH_REQUIRE_PTX") == "1":
            raise
        pytest.skip(f"no CUDA compiler toolchain ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})")
    assert ".target sm_90" in ptx and "_playout_kernel" in ptx

"""CUDA playouts: backend selection and errors (always), the kernel against
its CPU twin (under the CUDA simulator or on a GPU), and a PTX compile check
for a real architecture (where numba-cuda's NVVM wheels are installed).

CI runs this file a second time with ``NUMBA_ENABLE_CUDASIM=1`` set before
Python starts, and the PTX check in a venv with the ``gpu`` extra
(``JITSEARCH_REQUIRE_PTX=1`` makes a missing toolchain a failure there)."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import warnings

import numpy as np
import pytest

from jitsearch.games.kalah import KalahState
from jitsearch.kernels.backend import BackendError, cuda_status, evaluate, resolve
from jitsearch.games.kalah.playouts import evaluate_cpu

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

@pytest.mark.slow
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
@pytest.mark.slow
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
    from jitsearch.games.kalah.cuda_playouts import CudaEvaluator

    b, p = _batch(m, n, 5, seed=m * 100 + n, near_end=near_end, empty_capture=ec)
    for seed in (0, 1, 2**64 - 1, 987654321):
        cpu = evaluate_cpu(b, p, 3, seed, empty_capture=ec)
        gpu = CudaEvaluator(threads_per_block=32).evaluate(b, p, 3, seed, empty_capture=ec)
        for k in KEYS:
            assert (gpu[k] == cpu[k]).all(), (k, seed)


@needs_cuda
@pytest.mark.parametrize("m, n, near_end, ec", [(6, 4, False, False), (6, 4, True, True), (4, 30, False, False),
                                                (7, 3, True, False)])
def test_packed_board_kernel_equals_cpu_twin(m, n, near_end, ec):
    """The packed-board kernel (the CPU's packed playout compiled for CUDA) gives the generic results."""
    from numba import cuda

    from jitsearch.games.kalah.cuda_playouts import packed_kernel

    b, p = _batch(m, n, 4, seed=m * 10 + n, near_end=near_end, empty_capture=ec)
    for seed in (0, 2**64 - 1):
        cpu = evaluate_cpu(b, p, 3, seed, empty_capture=ec)
        out = {k: cuda.to_device(np.zeros(len(p), dtype=np.int64)) for k in KEYS}
        packed_kernel(m)[2, 32](cuda.to_device(np.ascontiguousarray(b, dtype=np.int32)),
                                cuda.to_device(np.ascontiguousarray(p, dtype=np.int64)), m, ec, 3, np.uint64(seed),
                                *(out[k] for k in KEYS))
        for k in KEYS:
            assert (out[k].copy_to_host() == cpu[k]).all(), (k, seed)


@needs_cuda
@pytest.mark.parametrize("kind", ["registers", "registers-playout", "generic", "packed"])
@pytest.mark.parametrize("m, n, near_end, ec", [(6, 4, False, False), (6, 4, True, True), (2, 5, False, False),
                                                (9, 2, True, False)])
def test_every_playout_kernel_equals_cpu_twin(kind, m, n, near_end, ec):
    """Each kernel the evaluator can run (the register-board ones in both forms, generic, packed) gives the
    CPU twin's counters, with launches of fewer threads than jobs (a thread plays several games)."""
    from jitsearch.games.kalah.cuda_playouts import CudaEvaluator

    b, p = _batch(m, n, 4, seed=m * 31 + n, near_end=near_end, empty_capture=ec)
    for seed, tpb, blocks in ((5, 32, None), (2**64 - 1, 7, 2)):
        cpu = evaluate_cpu(b, p, 6, seed, empty_capture=ec)
        gpu = CudaEvaluator(threads_per_block=tpb, blocks=blocks, kernel=kind).evaluate(b, p, 6, seed,
                                                                                        empty_capture=ec)
        for k in KEYS:
            assert (gpu[k] == cpu[k]).all(), (k, seed)


def test_unknown_playout_kernel_is_a_clear_error():
    if not CUDA_OK:
        pytest.skip(f"no CUDA device or simulator: {CUDA_WHY}")
    from jitsearch.games.kalah.cuda_playouts import CudaEvaluator

    with pytest.raises(ValueError, match="kernel must be one of registers"):
        CudaEvaluator(kernel="fast")


@needs_cuda
@pytest.mark.parametrize("threads_per_block, blocks", [(1, 1), (7, 2), (32, None), (64, 3)])
def test_launch_shape_does_not_change_results(threads_per_block, blocks):
    from jitsearch.games.kalah.cuda_playouts import CudaEvaluator

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

    from jitsearch.games.kalah.cuda_playouts import CudaEvaluator

    b, p = _batch(4, 3, 3, seed=9)
    cpu = evaluate_cpu(b, p, 4, 3)
    ev = CudaEvaluator(threads_per_block=16)
    d_b = cuda.to_device(np.ascontiguousarray(b, dtype=np.int32))
    d_p = cuda.to_device(np.ascontiguousarray(p, dtype=np.int64))
    out = ev.evaluate(d_b, d_p, 4, 3, to_host=False)
    for k in KEYS:
        assert hasattr(out[k], "copy_to_host") and (out[k].copy_to_host() == cpu[k]).all()


@needs_cuda
@pytest.mark.parametrize("name, variant, iterations", [("kalah", {"houses": 4, "seeds": 3}, 48),
                                                       ("oware", {"houses": 3, "seeds": 2, "move_limit": 40}, 6),
                                                       ("connect4", {"width": 4, "height": 4}, 6)])
def test_mcts_with_gpu_leaf_evaluation_equals_the_cpu_backend(name, variant, iterations):
    from jitsearch.games import get
    from jitsearch.mcts.search import mcts_search

    s = get(name).initial(**variant)
    kw = dict(iterations=iterations, batch=8 if name == "kalah" else 3, playouts=2, seed=4)
    g = mcts_search(s, backend="cuda", **kw)
    c = mcts_search(s, backend="cpu", **kw)
    assert g["backend"] == "cuda" and c["backend"] == "cpu"
    assert g["children"] == c["children"] and g["move"] == c["move"]


# -- PTX for a real architecture ---------------------------------------------------------

#: numba-cuda's errors for a compiler library it cannot find (NVVM, NVRTC, the CUDA toolkit's files).
TOOLCHAIN_ERRORS = ("NvvmSupportError", "NvrtcSupportError", "CudaSupportError")


def missing_toolchain(exc: BaseException) -> str | None:
    """One line naming the missing compiler library if ``exc`` says one is missing, else None."""
    text = str(exc).splitlines()[0][:160] if str(exc) else ""
    if type(exc).__name__ in TOOLCHAIN_ERRORS or (
            any(lib in text for lib in ("NVVM", "libnvvm", "NVRTC", "libnvrtc"))
            and any(w in text.lower() for w in ("not found", "cannot be found", "could not", "missing"))):
        return f"{type(exc).__name__}: {text}"
    return None


def test_missing_toolchain_is_told_from_an_incompatibility():
    """A skip is for a compiler library that is absent; a signature error or a typing error must fail."""
    class NvvmSupportError(Exception):
        pass

    assert missing_toolchain(NvvmSupportError("libNVVM cannot be found")) is not None
    assert missing_toolchain(OSError("NVRTC library not found: libnvrtc.so")) is not None
    assert missing_toolchain(TypeError("Signature mismatch: 2 argument types given, but function takes 1 "
                                       "arguments")) is None
    assert missing_toolchain(ValueError("something else")) is None


def test_builtin_cuda_target_is_not_taken_for_a_usable_backend(monkeypatch):
    """Without numba-cuda (and outside the simulator), CUDA is reported unusable in one line that says why,
    instead of failing later inside a kernel compile."""
    import importlib.util as util

    from jitsearch.kernels import backend

    real = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    backend.cuda_status.cache_clear()
    try:
        ok, why = backend.cuda_status()
    finally:
        backend.cuda_status.cache_clear()
    assert not ok and "numba-cuda is not installed" in why



def test_kernel_compiles_to_ptx_for_sm90():
    """The kernels (playouts, multi-tree MCTS, shared-tree MCTS, Oware's MCTS) compile to PTX for sm_90."""
    if SIMULATOR:
        pytest.skip("the simulator has no compiler")
    require = os.environ.get("JITSEARCH_REQUIRE_PTX") == "1"
    if importlib.util.find_spec("numba_cuda") is None and not require:
        pytest.skip("numba-cuda (the gpu extra) is not installed; numba's built-in CUDA target is not supported")
    try:
        from jitsearch.games.kalah.cuda_playouts import compile_ptx
        from jitsearch.games.kalah.cuda_playouts import compile_packed_ptx, compile_register_ptx
        from jitsearch.games import get as get_game
        from jitsearch.kernels.cuda_game_mcts import compile_ptx as compile_game_mcts_ptx
        from jitsearch.kernels.cuda_game_playouts import compile_ptx as compile_game_playouts_ptx
        from jitsearch.kernels.cuda_game_shared_tree import compile_ptx as compile_game_shared_ptx

        kalah = get_game("kalah")
        ptx = compile_ptx((9, 0))
        mcts_ptx = compile_game_mcts_ptx(kalah, (9, 0), node_dtype=np.int16, param=np.int64(0))
        shared_ptx = compile_game_shared_ptx(kalah, (9, 0), param=np.int64(0))
        shared_register_ptx = compile_game_shared_ptx(kalah, (9, 0), param=np.int64(0), fast=True)
        packed_ptx = compile_packed_ptx(6, (9, 0))
        register_ptx = {form: compile_register_ptx(6, (9, 0), form) for form in ("jobs", "playout")}
        oware = get_game("oware")
        oware_mcts_ptx = compile_game_mcts_ptx(oware, (9, 0), node_dtype=np.int16)
        oware_shared_ptx = compile_game_shared_ptx(oware, (9, 0), param=0.25, hist_dtype=np.int32)
        oware_playouts_ptx = compile_game_playouts_ptx(oware, (9, 0))
    except Exception as exc:
        why = missing_toolchain(exc)
        if why is None or require:  # anything but a missing NVVM/NVRTC is a failure, not a skip
            raise
        pytest.skip(f"no CUDA compiler toolchain ({why})")
    assert ".target sm_90" in ptx and "_playout_kernel" in ptx
    assert ".target sm_90" in mcts_ptx and "_mcts_kernel" in mcts_ptx
    assert ".target sm_90" in shared_ptx and "_shared_tree_kernel" in shared_ptx
    assert ".target sm_90" in shared_register_ptx and "register_board_playout" in shared_register_ptx
    assert ".target sm_90" in packed_ptx and "_packed_playout_kernel" in packed_ptx
    for form, text in register_ptx.items():
        assert ".target sm_90" in text and f"_register_{form}_kernel" in text
        # the point of these kernels: the board never leaves registers (the generic kernel's lives in local memory)
        assert "ld.local" not in text and "st.local" not in text, form
    assert "ld.local" in ptx
    assert ".target sm_90" in oware_mcts_ptx and "_oware_mcts_kernel" in oware_mcts_ptx
    assert ".target sm_90" in oware_shared_ptx and "_oware_shared_tree_kernel" in oware_shared_ptx
    assert ".target sm_90" in oware_playouts_ptx and "_oware_playout_kernel" in oware_playouts_ptx
    assert "ld.global.cg" in shared_ptx and "atom.global.cas" in shared_ptx.replace("atom.cas", "atom.global.cas")


# -- the multi-tree MCTS kernel against its CPU twin ------------------------------------

def _grow_both(m, n, empty_capture, positions, trees_per_position, capacity, playouts, reward, formula, chunks,
               leaves, seed, near_end=False, max_plies=1 << 30, alpha=0.0):
    """Grow the same trees with the CPU twin (one call) and the CUDA kernel
    (in ``chunks`` launches); returns the two TreeBatches. ``reward`` is a
    kernel reward code (2: the store evaluation), ``max_plies`` the plies
    before a playout is scored, ``alpha`` the implicit minimax weight."""
    from jitsearch.games import get as get_game
    from jitsearch.games.protocol import no_record
    from jitsearch._cuda import threads_for
    from jitsearch.kernels.cuda_game_mcts import DeviceGameTrees
    from jitsearch.kernels.tree_step import log_table_for
    from jitsearch.mcts.multi import tree_keys_for
    from kalah_trees import TreeBatch, grow_trees_cpu, kalah_param

    b, p = _batch(m, n, positions, seed, near_end=near_end, empty_capture=empty_capture)
    boards = np.repeat(b.astype(np.int32), trees_per_position, axis=0)
    players = np.repeat(p.astype(np.int32), trees_per_position)
    t = boards.shape[0]
    keys = tree_keys_for(seed, t)
    totals = boards.astype(np.int64).sum(axis=1)
    logs = log_table_for(1024)
    iterations = sum(chunks)
    cpu = TreeBatch(t, capacity, m, imm=alpha > 0)
    cpu.set_roots(boards, players)
    grow_trees_cpu(*cpu.arrays(), keys, totals, logs, m, 1.3, formula, reward, playouts, empty_capture, max_plies,
                   alpha, leaves, 0, iterations)
    gpu = TreeBatch(t, capacity, m, imm=alpha > 0)
    gpu.set_roots(boards, players)
    zeros = np.zeros(t, np.int32)
    dev = DeviceGameTrees(get_game("kalah"), gpu, keys, no_record(t), zeros, zeros.copy(), logs, 1,
                          threads_for(leaves * playouts))
    done = 0
    for k in chunks:
        dev.grow((m, bool(empty_capture)), 1.3, formula, playouts, max_plies, kalah_param(reward), alpha, leaves, done,
                 k)
        done += k
    dev.copy_back(gpu)
    return cpu, gpu


MULTI_CASES = [  # m, n, empty capture, positions, trees each, capacity, playouts, reward, formula, steps, leaves
    (3, 3, False, 1, 3, 64, 5, 0, 0, (4, 8), 1),
    (4, 2, True, 2, 2, 96, 3, 1, 1, (6,), 3),
    (2, 3, False, 3, 1, 16, 2, 0, 2, (3, 3, 6), 2),  # small pool: fills, expansion stops
    (3, 2, False, 1, 2, 128, 40, 0, 0, (2, 3), 4),  # 160 playouts a step: more than one per thread
]


MULTI_FIELDS = ("parent", "first_child", "num_children", "move", "to_move", "mover_in", "visits", "value", "imm",
                "boards", "size")
#: Leaf evaluations and implicit minimax backups: (reward code, max plies, alpha) on top of a MULTI_CASES row.
EVAL_CASES = [(2, 2, 0.3), (2, 0, 0.0), (0, 3, 0.5), (2, 1 << 30, 1.0)]


@needs_cuda
@pytest.mark.parametrize("case", MULTI_CASES)
@pytest.mark.parametrize("seed", [1, 2**64 - 1])
def test_multi_tree_kernel_equals_cpu_twin(case, seed):
    cpu, gpu = _grow_both(*case, seed)
    for name, a, b in zip(MULTI_FIELDS, cpu.arrays(), gpu.arrays(), strict=True):
        assert np.array_equal(a, b), name
    iterations = sum(case[-2]) * case[-1]
    assert (cpu.visits[:, 0] == iterations).all()  # every iteration passes the root; virtual visits are gone
    assert (cpu.size <= case[5]).all()


@needs_cuda
@pytest.mark.parametrize("reward, max_plies, alpha", EVAL_CASES)
def test_multi_tree_kernel_with_evaluations_and_imm_equals_cpu_twin(reward, max_plies, alpha):
    """k random plies then the store difference or the heuristic, implicit
    minimax values: the same trees, node for node, imm included."""
    cpu, gpu = _grow_both(3, 3, False, 2, 1, 48, 2, reward, 0, (3, 4), 2, 5, max_plies=max_plies, alpha=alpha)
    for name, a, b in zip(MULTI_FIELDS, cpu.arrays(), gpu.arrays(), strict=True):
        assert np.array_equal(a, b), name
    assert (cpu.visits[:, 0] == 14).all()
    if alpha:
        assert (cpu.imm[:, 0] >= 0).all()


@needs_cuda
def test_multi_tree_search_cuda_equals_cpu():
    from jitsearch.mcts.multi import analyse_positions, multi_tree_search

    s = KalahState.initial(3, 3)
    kw = dict(trees=4, iterations=10, playouts=4, seed=9, leaves=2)
    a = multi_tree_search(s, backend="cpu", **kw)
    b = multi_tree_search(s, backend="cuda", **kw)
    assert a["children"] == b["children"] and a["move"] == b["move"] and b["backend"] == "cuda"
    states = [s, s.play(2), s.play(3)]
    x = analyse_positions(states, iterations=6, playouts=3, backend="cpu", seed=4, leaves=3)
    y = analyse_positions(states, iterations=6, playouts=3, backend="cuda", seed=4, leaves=3)
    assert x["positions"] == y["positions"]


@needs_cuda
@pytest.mark.parametrize("parallel", ["root", "tree"])
def test_searches_with_evaluations_and_imm_cuda_equal_cpu(parallel):
    """mcts_search with eval= and imm= on the CUDA backend: the CPU backend's
    visits, values and move (one block per shared tree)."""
    from jitsearch.mcts.search import mcts_search

    s = KalahState.initial(3, 3)
    kw = dict(iterations=12, playouts=2, seed=9, trees=2, parallel=parallel, eval="store", eval_plies=2, imm=0.3)
    kw.update(blocks=1) if parallel == "tree" else kw.update(leaves=2)
    a = mcts_search(s, backend="cpu", **kw)
    b = mcts_search(s, backend="cuda", **kw)
    assert b["backend"] == "cuda" and a["children"] == b["children"] and a["move"] == b["move"]


# -- the tree-parallel (shared-tree) kernel against its CPU twin ------------------------

SHARED_CASES = [  # m, n, empty capture, trees, capacity, playouts, reward, formula, chunks
    (3, 3, False, 2, 400, 5, 0, 0, (7, 13)),
    (4, 2, True, 3, 300, 3, 1, 1, (20,)),
    (2, 3, False, 2, 12, 2, 0, 2, (5, 5, 10)),  # small pool: fills, expansion stops
    (6, 4, False, 1, 2000, 40, 0, 0, (9, 3)),  # 40 playouts a leaf: more than one per thread
]


def _shared_both(m, n, empty_capture, trees, capacity, playouts, reward, formula, chunks, seed, blocks=1,
                 max_plies=1 << 30, alpha=0.0):
    from jitsearch._cuda import threads_for
    from jitsearch.kernels.cuda_game_shared_tree import DeviceSharedTrees
    from jitsearch.kernels.tree_step import log_table_for
    from jitsearch.mcts.multi import tree_keys_for
    from kalah_trees import KALAH, SharedTrees, grow_shared_cpu, kalah_param

    b, p = _batch(m, n, trees, seed, empty_capture=empty_capture)
    boards, players = b.astype(np.int32), p.astype(np.int32)
    keys = tree_keys_for(seed, trees)
    totals = boards.astype(np.int64).sum(axis=1)
    logs = log_table_for(1024)
    cpu = SharedTrees(trees, capacity, boards, players, imm=alpha > 0)
    grow_shared_cpu(*cpu.arrays(), cpu.root_boards, cpu.root_players, keys, totals, logs, capacity, m, 1.3, formula,
                    reward, playouts, empty_capture, max_plies, alpha, 0, sum(chunks))
    gpu = SharedTrees(trees, capacity, boards, players, imm=alpha > 0)
    dev = DeviceSharedTrees(KALAH, trees, capacity, alpha > 0, gpu.roots(), keys, 1, blocks,
                            threads_for(playouts))
    done = 0
    for k in chunks:
        dev.grow(logs, (m, bool(empty_capture)), 1.3, formula, playouts, max_plies, kalah_param(reward), alpha, done, k)
        done += k
    dev.copy_back(gpu)
    return cpu, gpu


def _allocated(t, g):
    """Tree g's node arrays at its reachable nodes, in walk order (the pool's
    other slots are never written on the GPU, so they hold whatever was there)."""
    base = g * t.capacity
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        f = int(t.first_child[base + node])
        if f >= 0:
            stack.extend(range(f, f + int(t.num_children[base + node])))
    idx = base + np.array(order)
    arrays = (t.first_child, t.num_children, t.move, t.visits, t.value) + ((t.imm,) if t.imm.shape[0] > 1 else ())
    return [a[idx] for a in arrays]


@needs_cuda
@pytest.mark.parametrize("case", SHARED_CASES)
@pytest.mark.parametrize("seed", [3, 2**64 - 2])
def test_shared_tree_kernel_with_one_block_per_tree_equals_cpu_twin(case, seed):
    cpu, gpu = _shared_both(*case, seed)
    assert np.array_equal(cpu.size, gpu.size)
    for g in range(case[3]):
        for name, a, b in zip(("first_child", "num_children", "move", "visits", "value"), _allocated(cpu, g),
                              _allocated(gpu, g)):
            assert np.array_equal(a, b), (name, g)
        assert cpu.visits[g * case[4]] == sum(case[-1])


@needs_cuda
@pytest.mark.parametrize("reward, max_plies, alpha", EVAL_CASES)
def test_shared_tree_kernel_with_evaluations_and_imm_equals_cpu_twin(reward, max_plies, alpha):
    cpu, gpu = _shared_both(3, 3, False, 2, 200, 2, reward, 0, (6, 5), 8, max_plies=max_plies, alpha=alpha)
    assert np.array_equal(cpu.size, gpu.size)
    for g in range(2):
        a, b = _allocated(cpu, g), _allocated(gpu, g)
        assert len(a) == len(b) == (6 if alpha else 5)
        for name, x, y in zip(("first_child", "num_children", "move", "visits", "value", "imm"), a, b):
            assert np.array_equal(x, y), (name, g)
        assert cpu.visits[g * 200] == 11 and (not alpha or cpu.imm[g * 200] >= 0)


@needs_cuda
@pytest.mark.parametrize("blocks", [4, 64])
def test_shared_tree_kernel_with_many_blocks_keeps_the_tree_consistent(blocks):
    """Many blocks per tree (concurrently on a GPU): every iteration passes
    the root and ends at one node, children are the legal moves, no value
    leaves its bounds, the pool is never overrun."""
    from test_shared_tree import _walk

    m, n, trees, capacity, playouts = 4, 3, 2, 3000, 8
    chunks = (40, 200) if not SIMULATOR else (6, 10)
    cpu, gpu = _shared_both(m, n, False, trees, capacity, playouts, 0, 0, chunks, 7,
                            blocks=blocks if not SIMULATOR else 2)
    iterations = sum(chunks)
    b, p = _batch(m, n, trees, 7)
    for g in range(trees):
        base = g * capacity
        assert gpu.visits[base] == iterations
        assert gpu.size[g] <= capacity
        ends = 0
        for node, st in _walk(gpu, g, KalahState.from_board(b[g].tolist(), int(p[g]))):
            i = base + node
            assert 0 <= gpu.value[i] <= gpu.visits[i] * playouts * 65536
            f = int(gpu.first_child[i])
            if f >= 0:
                k = int(gpu.num_children[i])
                assert [int(gpu.move[base + f + j]) for j in range(k)] == st.legal_moves()
                ends += gpu.visits[i] - gpu.visits[base + f:base + f + k].sum()
            else:
                ends += gpu.visits[i]
        assert ends == iterations


@needs_cuda
def test_tree_parallel_search_cuda_with_one_block_equals_cpu():
    from jitsearch.mcts.shared import search_many_shared, tree_parallel_search

    s = KalahState.initial(3, 3)
    kw = dict(trees=2, iterations=12, playouts=4, seed=9, blocks=1)
    a = tree_parallel_search(s, backend="cpu", **kw)
    b = tree_parallel_search(s, backend="cuda", **kw)
    assert a["children"] == b["children"] and b["backend"] == "cuda"
    many = search_many_shared([s, s.play(2)], [1, 2], iterations=8, playouts=2, backend="cuda")  # default blocks
    assert all(sum(c["visits"] for c in r["children"]) <= r["iterations"] for r in many)
    assert all(r["iterations"] == 8 for r in many)

"""Kalah's multi-tree MCTS on the GPU: the CUDA twin of
:func:`jitsearch.kernels.multi_mcts.grow_trees_cpu`, the generic kernel of
:mod:`jitsearch.kernels.cuda_game_mcts` with Kalah's units
(:func:`jitsearch.kernels.multi_mcts.game_units`).

Imported lazily (only when the CUDA backend is asked for). Mapping (block
parallelism, Rocki & Suda 2011): thread block ``t`` owns tree ``t`` and runs
every stage of an iteration itself, for ``iterations`` iterations in one
launch, with no host round trip: thread 0 selects and expands (the tree is
in global memory) the step's leaves with virtual visits, then the block's
threads run the step's leaves x ``playouts`` playouts at once (thread j
takes jobs j, j + blockDim, ...), each writing its reward units into its
slot of shared memory, and thread 0 adds each leaf's playouts in order and
backs the leaves up in order (with ``alpha`` > 0 also the implicit minimax
values of each leaf's path). Integer sums make the result independent of the
threads' timing: bit-identical to the CPU twin for the same keys.

The limits every multi-tree kernel shares and :func:`free_bytes` are
:mod:`jitsearch.kernels.cuda_game_mcts`'s, re-exported here.
"""

from __future__ import annotations

import numpy as np

from ..games.kalah.game import GAME as KALAH
from .cuda_game_mcts import MAX_JOBS, MAX_LEAVES, MAX_THREADS, DeviceGameTrees, free_bytes  # noqa: F401  (re-exported)
from .cuda_game_mcts import compile_ptx as game_ptx
from .multi_mcts import game_units


def compile_ptx(cc=(9, 0)) -> str:
    """PTX of Kalah's MCTS kernel for compute capability ``cc`` without a device (needs NVVM
    only), as :func:`jitsearch.kernels.cuda_playouts.compile_ptx`."""
    return game_ptx(KALAH, cc, units=game_units, node_dtype=np.int16, param=np.int64(0))

"""Small shared helpers of the dense, reduction and special-function kernels (launch geometry, input generation).

Private module (the registry skips names starting with ``_``); it imports nothing of Portcast.
"""

from __future__ import annotations

import numpy as np


def blocks_for(n: int, threads_per_block: int) -> int:
    """Number of blocks of ``threads_per_block`` threads needed to cover ``n`` items (at least 1).

    Parameters
    ----------
    n : int
        Items to cover (one per thread).
    threads_per_block : int
        Block size.

    Returns
    -------
    int
        ``ceil(n / threads_per_block)``, at least 1.
    """
    return max(1, (int(n) + threads_per_block - 1) // threads_per_block)


def rng(seed: int) -> np.random.Generator:
    """The NumPy generator every input generator of this corpus uses (PCG64 seeded with ``seed``)."""
    return np.random.default_rng(int(seed))

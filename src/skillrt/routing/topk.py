"""The best entries of a score vector: :func:`top` (their indices, best first) and
:func:`kth` (the k-th best value). Evidence, rerank and recall rank with them; numpy is
imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["kth", "top"]


def top(values: Any, k: int) -> list[int]:
    """Indices of the ``k`` largest values, best first (ties: lower index first)."""
    import numpy as np

    n = len(values)
    if n == 0 or k <= 0:
        return []
    if k >= n:
        order = np.argsort(-values, kind="stable")
    else:
        part = np.argpartition(-values, k - 1)[:k]
        order = part[np.lexsort((part, -values[part]))]
    return [int(i) for i in order]


def kth(values: Any, k: int) -> float:
    """The k-th largest value (the smallest value when there are fewer than k)."""
    import numpy as np

    n = len(values)
    if n == 0:
        return float("inf")
    if k >= n:
        return float(np.min(values))
    return float(np.partition(values, n - k)[n - k])

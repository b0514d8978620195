"""Each skill's nearest skills by description, and how crowded its neighbourhood is.

The similarity is the cosine of the router's document vectors (name in words and
description); without a semantic backend, the overlap of name and description terms.
The cosine matrix is computed in blocks, so memory stays ``O(n · block)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt.routing.index import RouterIndex

__all__ = ["NEAREST", "Neighbourhood", "neighbourhood"]

#: Neighbours kept per skill (and averaged for crowding).
NEAREST = 5
_BLOCK = 512


@dataclass(frozen=True)
class Neighbourhood:
    """``nearest[i]``: ``(j, similarity)`` best first; ``crowding[i]``: their mean (>= 0)."""

    nearest: tuple[tuple[tuple[int, float], ...], ...]
    crowding: tuple[float, ...]

    def similarity(self, i: int, j: int) -> float:
        return next((s for k, s in self.nearest[i] if k == j), 0.0)


def neighbourhood(index: RouterIndex, k: int = NEAREST) -> Neighbourhood:
    """The ``k`` nearest skills of every skill of ``index``."""
    n = len(index)
    nearest: list[tuple[tuple[int, float], ...]] = []
    if index.semantic is not None and n > 1:
        import numpy as np

        vectors = index.semantic.doc_vectors
        kk = min(k, n - 1)
        for start in range(0, n, _BLOCK):
            sims = vectors[start : start + _BLOCK] @ vectors.T
            rows = np.arange(len(sims))
            sims[rows, rows + start] = -np.inf
            top = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
            for r, cols in enumerate(top):
                order = sorted(cols.tolist(), key=lambda j: (-float(sims[r, j]), j))
                nearest.append(tuple((j, round(float(sims[r, j]), 4)) for j in order))
    else:
        for i in range(n):
            scored = sorted(
                ((index.overlap(i, j), j) for j in range(n) if j != i), key=lambda x: (-x[0], x[1])
            )
            nearest.append(tuple((j, round(s, 4)) for s, j in scored[:k]))
    crowding = tuple(
        (sum(max(0.0, s) for _, s in near) / len(near)) if near else 0.0 for near in nearest
    )
    return Neighbourhood(tuple(nearest), crowding)

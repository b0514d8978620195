"""The part prefilter of the semantic index: the skills with parts among each request
row's best by document similarity, sorted, each once; without importing numpy.ma (a
cold hook routes once, and that import was ~15 ms of its answer)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.routing.semantic import PART_PREFILTER, SemanticIndex


class _Parts:
    def __init__(self, has_parts: np.ndarray) -> None:  # type: ignore[type-arg]
        self.has_parts = has_parts


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(PART_PREFILTER + 1, PART_PREFILTER * 3),
    rows=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_prefilter_is_each_rows_best_skills_with_parts(n: int, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    doc = rng.random((n, rows)).astype(np.float32)
    has_parts = rng.random(n) < 0.5
    got = SemanticIndex._part_prefilter(_Parts(has_parts), doc)  # type: ignore[arg-type]
    best = set()
    for r in range(rows):
        best |= set(np.argsort(-doc[:, r], kind="stable")[:PART_PREFILTER].tolist())
    assert got.tolist() == sorted(i for i in best if has_parts[i])


def test_the_prefilter_does_not_import_numpy_ma() -> None:
    code = (
        "import sys, numpy as np\n"
        "from skillrt.routing.semantic import SemanticIndex, PART_PREFILTER\n"
        "class P: has_parts = np.ones(PART_PREFILTER + 5, dtype=bool)\n"
        "SemanticIndex._part_prefilter(P(), np.random.rand(PART_PREFILTER + 5, 2))\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""What the routing benches share: skillrt importable from a checkout, where the data
sets are, and the real-skills dev catalogue and requests.

Imported first by a bench run as a script (``bench/`` is then on ``sys.path``)::

    from dev_data import add_data_arguments, queries_of, real_skills  # before skillrt
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from skillrt.eval.datasets import LabelledQuery, load_catalog, load_queries
from skillrt.skills.model import Skill

HERE = Path(__file__).resolve().parent
DEFAULT_DATASETS = HERE.parents[1] / "shared" / "datasets"
DEFAULT_CORPORA = HERE.parents[1] / "shared" / "corpora"
#: The real-skills dev requests: one-need short and long ones and no-skill ones, then
#: the requests by style (two-need, crowded one-need, more no-skill).
REAL_QUERIES = (
    HERE / "data" / "real-skills-dev.queries.jsonl",
    HERE / "data" / "real-skills-dev.styles.queries.jsonl",
)
#: Implicit requests (the need is never named) and their no-skill look-alikes, written
#: after the fits above: measured everywhere, fitted nowhere.
IMPLICIT_QUERIES = (HERE / "data" / "real-skills-dev.implicit.queries.jsonl",)
#: Every real-skills dev request: what the benches report on.
ALL_REAL_QUERIES = (*REAL_QUERIES, *IMPLICIT_QUERIES)


def add_data_arguments(ap: argparse.ArgumentParser) -> None:
    """``--datasets``, ``--corpora`` and ``--cache`` (where vectors and features are kept)."""
    ap.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    ap.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))


def real_skills_catalogue(datasets: Path) -> Path:
    """The real-skills dev catalogue file (its skills' paths are under the corpora)."""
    return datasets / "real-skills-dev" / "skills.jsonl"


def real_skills(datasets: Path, corpora: Path) -> list[Skill]:
    """The real-skills dev catalogue's skills, bodies read from ``corpora``."""
    return load_catalog(real_skills_catalogue(datasets), base=corpora)


def queries_of(files: Iterable[Path], limit: int | None = None) -> list[LabelledQuery]:
    """The labelled requests of ``files``, in order (the first ``limit`` of them)."""
    queries = [q for f in files for q in load_queries(f)]
    return queries[:limit] if limit is not None else queries

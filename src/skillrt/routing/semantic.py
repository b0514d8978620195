"""Multi-vector semantic index: one document vector per skill plus its parts and sections.

Each skill has a *document* vector (its name in words + description), optional *part*
vectors (each example, and each clause of a description that lists several abilities)
and optional *section* vectors (each body section, :mod:`skillrt.routing.fields`). A
skill's semantic evidence combines the document similarity, the best part similarity,
the similarity to its examples' centroid (with two or more examples) and the best
section similarity: the best section counts, not the average, since a skill matches a
request when one of its parts is about it (see :meth:`SemanticIndex.combine`). All
vectors live in float32 matrices, so a query costs one matrix-vector product per
matrix; exact search stays cheap up to ~100k vectors.

Vectors come from :class:`~skillrt.routing.vector_cache.VectorCache`, keyed by the
sha256 of each text, so an unchanged skill is never embedded again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillrt.routing.text import identifier_words
from skillrt.routing.vector_cache import VectorCache, text_hash
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend

__all__ = ["SemanticIndex", "SemanticScores", "Similarities", "document_text", "part_texts"]

#: Description text past this many characters adds little to a 256-token model.
MAX_DOC_CHARS = 1200
MAX_EXAMPLES = 16
MAX_CLAUSES = 6
#: Above this many part vectors, parts are scored only for the best-matching skills.
MAX_FULL_PARTS = 2048
PART_PREFILTER = 256
#: Weights of (document, best part, example centroid) similarity; see :func:`combine`.
DEFAULT_MIX = (0.45, 0.35, 0.20)

_DESC_SPLIT = re.compile(
    r"(?<=[.!?;:])\s+|\s*[\n•]\s*|,\s+(?:and\s+|or\s+)?(?=[a-z])"
    r"|\s+(?:and|or|as well as)\s+(?=[a-z]+(?:s|es|ing)?\s)",
)


def matvec(matrix: NDArray[np.float32], vector: NDArray[np.float32]) -> NDArray[np.float32]:
    """``matrix @ vector`` without BLAS threads.

    A multi-threaded BLAS gemv right after an onnxruntime run fights the runtime's
    thread pool for the cores and takes milliseconds instead of microseconds; a
    single-threaded SIMD loop is memory-bound and predictable.
    """
    import numpy as np

    out: NDArray[np.float32] = np.einsum("ij,j->i", matrix, vector)
    return out


def document_text(skill: Skill) -> str:
    """What the document vector embeds: the name in words, then the description."""
    desc = " ".join(skill.description.split())[:MAX_DOC_CHARS]
    return f"{identifier_words(skill.name)}: {desc}"


def description_clauses(description: str) -> list[str]:
    """A description's separate abilities, when it lists more than one."""
    parts = [p.strip(" ,;.") for p in _DESC_SPLIT.split(" ".join(description.split()))]
    parts = [p for p in parts if len(p.split()) >= 3]
    return parts[:MAX_CLAUSES] if len(parts) >= 2 else []


def _example_count(skill: Skill) -> int:
    return min(sum(1 for e in skill.routing.examples if e.strip()), MAX_EXAMPLES)


def part_texts(skill: Skill) -> list[str]:
    """The part vectors' texts: examples first, then description clauses."""
    examples = [e for e in skill.routing.examples if e.strip()][:MAX_EXAMPLES]
    return [*examples, *description_clauses(skill.description)]


@dataclass(frozen=True)
class SemanticScores:
    """Per-skill similarities for one query (all arrays indexed like the skills)."""

    doc: NDArray[np.float32]
    part: NDArray[np.float32]
    centroid: NDArray[np.float32]
    #: Best body-section similarity, never under the document's (the document's for a
    #: skill without sections).
    section: NDArray[np.float32]
    combined: NDArray[np.float32]


@dataclass(frozen=True)
class Similarities:
    """Raw similarities of every skill to some query rows, a column per row, before
    :meth:`SemanticIndex.scores` combines them."""

    #: (skills, rows) document similarities.
    doc: NDArray[np.float32]
    #: (skills, rows) best part similarity; the document's where a skill has no part or
    #: its parts were not scored.
    part: NDArray[np.float32]
    #: (skills, rows) best section similarity, never under the document's.
    section: NDArray[np.float32]
    #: (skills with an example centroid, rows), in ``centroid_owner`` order.
    centroid: NDArray[np.float32]
    #: Parts were scored for every skill, not only the prefiltered ones.
    every_part: bool = False

    def column(self, r: int) -> Similarities:
        """Row ``r``'s similarities alone (copied, not a view of these)."""
        a, b = r, r + 1
        return Similarities(
            self.doc[:, a:b].copy(),
            self.part[:, a:b].copy(),
            self.section[:, a:b].copy(),
            self.centroid[:, a:b].copy(),
            self.every_part,
        )

    @staticmethod
    def join(columns: Sequence[Similarities]) -> Similarities:
        """Several :meth:`column` results side by side (all scored alike: a column
        with every part scored next to a prefiltered one would be narrowed wrongly)."""
        import numpy as np

        every_part = {c.every_part for c in columns}
        if len(every_part) != 1:
            raise ValueError("columns scored with and without every part")
        return Similarities(
            np.hstack([c.doc for c in columns]),
            np.hstack([c.part for c in columns]),
            np.hstack([c.section for c in columns]),
            np.hstack([c.centroid for c in columns]),
            every_part.pop(),
        )


class SemanticIndex:
    """Document and part vectors of a fixed list of skills."""

    def __init__(
        self,
        skills: Sequence[Skill],
        backend: EmbeddingBackend,
        cache: VectorCache,
        *,
        mix: tuple[float, float, float] = DEFAULT_MIX,
        sections: Sequence[Sequence[str]] | None = None,
    ) -> None:
        import numpy as np

        self.backend = backend
        self.mix = mix
        n = len(skills)
        docs = [document_text(s) for s in skills]
        parts: list[list[str]] = [part_texts(s) for s in skills]
        secs: list[Sequence[str]] = list(sections) if sections is not None else [()] * n
        n_examples = [_example_count(s) for s in skills]
        flat = [t for p in parts for t in p]
        flat_secs = [t for group in secs for t in group]
        items = [(text_hash(t), t) for t in [*docs, *flat, *flat_secs]]
        vectors = cache.get_or_embed(backend, items) if items else np.zeros((0, backend.dim))
        n_parts = len(flat)
        self.doc_vectors: NDArray[np.float32] = np.ascontiguousarray(vectors[:n], dtype=np.float32)
        self.part_vectors: NDArray[np.float32] = np.ascontiguousarray(
            vectors[n : n + n_parts], dtype=np.float32
        )
        self.section_vectors: NDArray[np.float32] = np.ascontiguousarray(
            vectors[n + n_parts :], dtype=np.float32
        )
        sec_counts = np.asarray([len(g) for g in secs], dtype=np.int64)
        self.has_sections: NDArray[np.bool_] = sec_counts > 0
        sec_ends = np.cumsum(sec_counts).astype(np.int64)
        #: Each skill's sections are rows section_start[i]:section_end[i].
        self.section_start: NDArray[np.int64] = sec_ends - sec_counts
        self.section_end: NDArray[np.int64] = sec_ends
        counts = np.asarray([len(p) for p in parts], dtype=np.int64)
        self.part_owner: NDArray[np.int64] = np.repeat(np.arange(n), counts)
        self.has_parts: NDArray[np.bool_] = counts > 0
        #: Start offset of each skill's parts (only meaningful where has_parts).
        ends = np.cumsum(counts).astype(np.int64)
        #: Each skill's parts are rows part_start[i]:part_end[i] of part_vectors.
        self.part_start: NDArray[np.int64] = ends - counts
        self.part_end: NDArray[np.int64] = ends
        # Example centroids for skills with two or more examples.
        with_centroid = [i for i in range(n) if n_examples[i] >= 2]
        self.centroid_owner: NDArray[np.int64] = np.asarray(with_centroid, dtype=np.int64)
        cents = np.zeros((len(with_centroid), backend.dim), dtype=np.float32)
        for row, i in enumerate(with_centroid):
            start = int(self.part_start[i])
            c = self.part_vectors[start : start + n_examples[i]].mean(axis=0)
            cents[row] = c / max(float(np.linalg.norm(c)), 1e-12)
        self.centroid_vectors: NDArray[np.float32] = cents
        self._centroid_row = {i: row for row, i in enumerate(with_centroid)}
        self.n_skills = n

    def score(
        self,
        query_vector: NDArray[np.float32],
        mix: tuple[float, float, float] | None = None,
        section_weight: float = 0.0,
    ) -> SemanticScores:
        """Similarities of every skill to one query vector (see :meth:`score_many`)."""
        import numpy as np

        q = np.asarray(query_vector, dtype=np.float32).reshape(1, -1)
        return self.score_many(q, mix, section_weight)[0]

    @property
    def prefilters_parts(self) -> bool:
        """Whether parts are scored only for each request's best skills (:meth:`score_many`)."""
        return len(self.part_vectors) > MAX_FULL_PARTS and self.n_skills > PART_PREFILTER

    def _part_prefilter(self, doc: NDArray[np.float32]) -> NDArray[np.int64]:
        """The skills whose parts count for the rows of ``doc`` (skills x rows): those
        with parts among the best ``PART_PREFILTER`` by document similarity of some row."""
        import numpy as np

        best = np.argpartition(-doc, PART_PREFILTER - 1, axis=0)[:PART_PREFILTER]
        # A mask, not np.unique: that imports numpy.ma (~15 ms) in a cold hook's route.
        chosen = np.zeros(doc.shape[0], dtype=bool)
        chosen[best.ravel()] = True
        top = np.flatnonzero(chosen & self.has_parts)
        return top

    def score_many(
        self,
        query_vectors: NDArray[np.float32],
        mix: tuple[float, float, float] | None = None,
        section_weight: float = 0.0,
    ) -> list[SemanticScores]:
        """Similarities of every skill to each row of ``query_vectors`` (a request and
        its clauses): one matrix product per kind of vector, however many rows, since
        the product is bound by reading the skill vectors, not by the rows.

        With many part vectors, parts are scored only for the skills whose document
        vector is among the best ``PART_PREFILTER`` of some row (a part only reorders
        the top). A skill's section evidence is never below its description's: a body
        adds evidence, it never makes a skill look less relevant (a stub body such as
        ``# Title`` would otherwise score under a skill without one).
        """
        import numpy as np

        queries = np.ascontiguousarray(query_vectors, dtype=np.float32)
        return self.scores(self.similarities(queries), mix, section_weight)

    def similarities(
        self, queries: NDArray[np.float32], *, every_part: bool = False
    ) -> Similarities:
        """The raw similarities :meth:`score_many` combines, for the rows of ``queries``.

        ``every_part`` scores every skill's parts even when :attr:`prefilters_parts`
        (for rows of many requests at once; :meth:`scores` keeps each request's own).
        """
        import numpy as np

        qt = queries.T
        doc = self.doc_vectors @ qt  # (skills, rows)
        part = doc.copy()
        if self.prefilters_parts and not every_part:
            top = self._part_prefilter(doc)
            if len(top):
                counts = self.part_end[top] - self.part_start[top]
                idx = np.repeat(self.part_start[top] - np.cumsum(counts) + counts, counts)
                idx += np.arange(int(counts.sum()))
                sims = self.part_vectors[idx] @ qt
                part[top] = np.maximum.reduceat(sims, np.cumsum(counts) - counts, axis=0)
        elif len(self.part_vectors):
            sims = self.part_vectors @ qt
            starts = self.part_start[self.has_parts]
            part[self.has_parts] = np.maximum.reduceat(sims, starts, axis=0)
        centroid = (
            self.centroid_vectors @ qt
            if len(self.centroid_vectors)
            else np.zeros((0, len(queries)), np.float32)
        )
        section = doc.copy()
        if len(self.section_vectors):
            sims = self.section_vectors @ qt
            has = self.has_sections
            section[has] = np.maximum(
                np.maximum.reduceat(sims, self.section_start[has], axis=0), doc[has]
            )
        return Similarities(doc, part, section, centroid, every_part)

    def scores(
        self,
        sims: Similarities,
        mix: tuple[float, float, float] | None = None,
        section_weight: float = 0.0,
    ) -> list[SemanticScores]:
        """Each row's :class:`SemanticScores` from its raw similarities (all the rows of
        ``sims`` are one request: with prefiltered parts, the union of its rows' best
        skills keep their parts)."""
        import numpy as np

        doc, part = sims.doc, sims.part
        if sims.every_part and self.prefilters_parts:
            # Elsewhere a skill's part score is its document's, as if never scored.
            top = self._part_prefilter(doc)
            kept = doc.copy()
            kept[top] = part[top]
            part = kept
        centroid = part.copy()
        if len(self.centroid_vectors):
            centroid[self.centroid_owner] = sims.centroid
        combined = self.combine(doc, part, centroid, mix, sims.section, section_weight)
        columns = [
            np.ascontiguousarray(a.T, dtype=np.float32)
            for a in (doc, part, centroid, sims.section, combined)
        ]
        return [
            SemanticScores(
                columns[0][r], columns[1][r], columns[2][r], columns[3][r], columns[4][r]
            )
            for r in range(doc.shape[1])
        ]

    def best_section(self, i: int, query_vector: NDArray[np.float32]) -> tuple[int, float]:
        """Which of skill ``i``'s sections is most like the query, and how much (-1: none)."""
        import numpy as np

        if not self.has_sections[i]:
            return -1, float("nan")
        start, end = int(self.section_start[i]), int(self.section_end[i])
        sims = matvec(self.section_vectors[start:end], np.asarray(query_vector, np.float32))
        k = int(np.argmax(sims))
        return k, float(sims[k])

    def score_subset(
        self,
        query_vector: NDArray[np.float32],
        rows: NDArray[np.int64],
        mix: tuple[float, float, float] | None = None,
        section_weight: float = 0.0,
    ) -> SemanticScores:
        """Like :meth:`score` but only for ``rows`` (result arrays are indexed like ``rows``)."""
        import numpy as np

        q = np.asarray(query_vector, dtype=np.float32)
        doc = matvec(self.doc_vectors[rows], q)
        part = doc.copy()
        centroid = np.empty_like(doc)
        for k, i in enumerate(rows.tolist()):
            if self.has_parts[i]:
                start, end = int(self.part_start[i]), int(self.part_end[i])
                part[k] = float(matvec(self.part_vectors[start:end], q).max())
            c = self._centroid_row.get(i)
            centroid[k] = float(self.centroid_vectors[c] @ q) if c is not None else part[k]
        section = doc.copy()
        for k, i in enumerate(rows.tolist()):
            if self.has_sections[i]:
                section[k] = max(self.best_section(i, q)[1], float(doc[k]))
        combined = self.combine(doc, part, centroid, mix, section, section_weight)
        return SemanticScores(doc, part, centroid, section, combined)

    def combine(
        self,
        doc: NDArray[np.float32],
        part: NDArray[np.float32],
        centroid: NDArray[np.float32],
        mix: tuple[float, float, float] | None = None,
        section: NDArray[np.float32] | None = None,
        section_weight: float = 0.0,
    ) -> NDArray[np.float32]:
        """Weighted mix of the similarities (missing kinds fall back to doc/part)."""
        import numpy as np

        wd, wp, wc = mix or self.mix
        out: NDArray[np.float32] = (wd * doc + wp * part + wc * centroid).astype("float32")
        if section is not None and section_weight:
            out += np.float32(section_weight) * section
        return out

    # -- snapshots (skillrt.routing.snapshot) -------------------------------------------
    _ARRAYS = (
        "doc_vectors",
        "part_vectors",
        "part_owner",
        "has_parts",
        "part_start",
        "part_end",
        "section_vectors",
        "has_sections",
        "section_start",
        "section_end",
        "centroid_owner",
        "centroid_vectors",
    )

    def to_arrays(self) -> dict[str, NDArray[Any]]:
        """The index's vectors and offsets, by name."""
        return {name: getattr(self, name) for name in self._ARRAYS}

    @classmethod
    def from_arrays(
        cls,
        backend: EmbeddingBackend,
        arrays: Mapping[str, NDArray[Any]],
        *,
        mix: tuple[float, float, float] = DEFAULT_MIX,
    ) -> SemanticIndex:
        """The index :meth:`to_arrays` described, without reading or embedding a text."""
        self = cls.__new__(cls)
        self.backend = backend
        self.mix = mix
        for name in cls._ARRAYS:
            setattr(self, name, arrays[name])
        self.n_skills = len(self.doc_vectors)
        self._centroid_row = {int(i): row for row, i in enumerate(self.centroid_owner.tolist())}
        dims = {a.shape[1] for a in (self.doc_vectors, self.part_vectors, self.section_vectors)}
        if dims != {backend.dim} or len(self.section_start) != self.n_skills:
            raise ValueError("inconsistent semantic snapshot")
        return self

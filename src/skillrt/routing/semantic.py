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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillrt.routing.text import identifier_words
from skillrt.routing.vector_cache import VectorCache, text_hash
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend

__all__ = ["SemanticIndex", "SemanticScores", "document_text", "part_texts"]

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
    #: Best body-section similarity (the document's for a skill without sections).
    section: NDArray[np.float32]
    #: Which of the skill's sections was best (-1: none).
    best_section: NDArray[np.int64]
    combined: NDArray[np.float32]


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
        """Similarities of every skill to one query vector.

        With many part vectors, parts are scored only for the skills whose document
        vector is among the best ``PART_PREFILTER`` (a part only reorders the top).
        """
        import numpy as np

        q = np.asarray(query_vector, dtype=np.float32)
        doc = matvec(self.doc_vectors, q)
        part = doc.copy()
        if len(self.part_vectors) > MAX_FULL_PARTS and self.n_skills > PART_PREFILTER:
            top = np.argpartition(-doc, PART_PREFILTER - 1)[:PART_PREFILTER]
            top = top[self.has_parts[top]]
            if len(top):
                counts = self.part_end[top] - self.part_start[top]
                idx = np.repeat(self.part_start[top] - np.cumsum(counts) + counts, counts)
                idx += np.arange(int(counts.sum()))
                sims = matvec(self.part_vectors[idx], q)
                part[top] = np.maximum.reduceat(sims, np.cumsum(counts) - counts)
        elif len(self.part_vectors):
            sims = matvec(self.part_vectors, q)
            starts = self.part_start[self.has_parts]
            part[self.has_parts] = np.maximum.reduceat(sims, starts)
        centroid = part.copy()
        if len(self.centroid_vectors):
            centroid[self.centroid_owner] = matvec(self.centroid_vectors, q)
        section, best = self._sections(q, doc, None)
        return SemanticScores(
            doc,
            part,
            centroid,
            section,
            best,
            self.combine(doc, part, centroid, mix, section, section_weight),
        )

    def _sections(
        self,
        q: NDArray[np.float32],
        doc: NDArray[np.float32],
        rows: NDArray[np.int64] | None,
    ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """Best section similarity per skill (of ``rows``) and which section it was.

        A skill's section evidence is never below its description's: a body adds
        evidence, it never makes a skill look less relevant (a stub body such as
        ``# Title`` would otherwise score under a skill without one).
        """
        import numpy as np

        section = doc.copy()
        best = np.full(len(doc), -1, dtype=np.int64)
        if not len(self.section_vectors):
            return section, best
        if rows is None:
            has = self.has_sections
            sims = matvec(self.section_vectors, q)
            starts = self.section_start[has]
            section[has] = np.maximum.reduceat(sims, starts)
            # The first maximal row of each skill's block, as an offset into the block.
            owner = np.repeat(np.arange(len(doc)), self.section_end - self.section_start)
            is_max = sims >= section[owner]
            first = np.full(len(doc), len(sims), dtype=np.int64)
            np.minimum.at(first, owner[is_max], np.nonzero(is_max)[0])
            best[has] = first[has] - self.section_start[has]
            return np.maximum(section, doc), best
        for k, i in enumerate(rows.tolist()):
            if self.has_sections[i]:
                start, end = int(self.section_start[i]), int(self.section_end[i])
                sims = matvec(self.section_vectors[start:end], q)
                best[k] = int(np.argmax(sims))
                section[k] = max(float(sims[best[k]]), float(doc[k]))
        return section, best

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
        section, best = self._sections(q, doc, rows)
        return SemanticScores(
            doc,
            part,
            centroid,
            section,
            best,
            self.combine(doc, part, centroid, mix, section, section_weight),
        )

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

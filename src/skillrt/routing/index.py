"""The router's view of a catalogue: skills by position, phrase, lexical and vector indices.

Built once per catalogue (a long-lived process keeps it; the CLI rebuilds it cheaply
because every skill's fields and vectors come from the store's cache). Immutable after
construction: a changed catalogue gets a new index.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from skillrt.routing.directives import name_key, variant_key
from skillrt.routing.fields import SkillFields, skill_fields
from skillrt.routing.lexical import LexicalIndex
from skillrt.routing.phrases import PhraseIndex
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend
    from skillrt.routing.semantic import SemanticIndex
    from skillrt.routing.snapshot import Snapshot
    from skillrt.routing.tokens import TokenIndex
    from skillrt.routing.vector_cache import VectorCache

__all__ = ["DEFER_MIN_TEXTS", "FIELD_WEIGHTS", "RouterIndex"]

#: Deferred builds (``defer_sections``) embed sections up front when fewer than this
#: many section texts are missing from the cache: a pool's sections cost about as
#: much as that, so deferring below it saves nothing.
DEFER_MIN_TEXTS = 300

#: BM25F weight of each lexical field (name words, description, examples and triggers,
#: body sections): the description stays the strongest field a skill has in common with
#: every catalogue; a body word counts less than the same word in the description.
FIELD_WEIGHTS = (2.0, 1.0, 1.0, 0.5)


class RouterIndex:
    """Everything the router looks up, for one fixed list of skills.

    A deferred build (``defer_sections``) leaves out the section vectors of the skills
    the cache lacks them for (:attr:`pending_sections`): their section evidence is
    their description's until :meth:`with_sections` embeds them, which the router does
    for each request's candidate pool. A first command over a new catalogue then
    embeds the descriptions and a dozen skills' sections instead of every section.
    """

    def __init__(
        self,
        skills: Sequence[Skill],
        *,
        backend: EmbeddingBackend | None,
        query_backend: EmbeddingBackend | None = None,
        cache: VectorCache | None = None,
        is_enabled: Callable[[Skill], bool] | None = None,
        token_match_max_texts: int = 0,
        fields: Sequence[SkillFields] | None = None,
        snapshot: Snapshot | None = None,
        defer_sections: bool = False,
    ) -> None:
        from skillrt.routing.vector_cache import VectorCache

        self.skills: list[Skill] = list(skills)
        if snapshot is not None:
            fields = snapshot.fields
        #: Each skill's derived fields (body sections; lexical terms unless restored from
        #: a snapshot, whose lexical part is already built).
        self.fields: list[SkillFields] = (
            list(fields) if fields is not None else [skill_fields(s, ()) for s in self.skills]
        )
        if len(self.fields) != len(self.skills):
            raise ValueError("one SkillFields per skill")
        #: Which skills have body sections (None: none has), for per-kind weights.
        self.has_body: NDArray[np.bool_] | None = None
        if any(f.sections for f in self.fields):
            import numpy as np

            self.has_body = np.asarray([bool(f.sections) for f in self.fields], dtype=bool)
        self.names: list[str] = [s.qualified_name for s in self.skills]
        self.position: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.enabled: list[bool] = [
            True if is_enabled is None else bool(is_enabled(s)) for s in self.skills
        ]
        # Name keys users may type: qualified always; a bare name only when unique.
        keys: dict[str, str] = {}
        bare_count: dict[str, int] = {}
        for s in self.skills:
            bare_count[name_key(s.name)] = bare_count.get(name_key(s.name), 0) + 1
        for s in self.skills:
            keys[name_key(s.qualified_name)] = s.qualified_name
            if bare_count[name_key(s.name)] == 1:
                keys.setdefault(name_key(s.name), s.qualified_name)
        self.name_keys = keys
        # Names of two words or more as a user may write them (close variants): a key
        # two skills share names neither ("").
        variants: dict[str, str] = {}
        for s in self.skills:
            for name in {s.qualified_name, s.name}:
                if name == s.name and bare_count[name_key(s.name)] != 1:
                    continue
                key = variant_key(name)
                if key:
                    held = variants.get(key)
                    variants[key] = s.qualified_name if held in (None, s.qualified_name) else ""
        self.name_variants = variants

        self.triggers = PhraseIndex()
        self.anti_triggers = PhraseIndex()
        for i, s in enumerate(self.skills):
            self.triggers.add_all(s.routing.triggers, i)
            self.anti_triggers.add_all(s.routing.anti_triggers, i)
        self.lexical = (
            snapshot.lexical
            if snapshot is not None
            else LexicalIndex([f.field_terms for f in self.fields], weights=FIELD_WEIGHTS)
        )
        #: What encodes the requests: ``query_backend`` (the same model behind a cache
        #: of its own, say) or ``backend``, which encodes the skills.
        self.backend = query_backend if query_backend is not None else backend
        self.cache = cache if cache is not None else VectorCache(None)
        self.semantic: SemanticIndex | None = None
        #: Rows whose section vectors are not embedded yet (a deferred build).
        self.pending_sections: frozenset[int] = frozenset()
        #: Token states for token matching (None: off, unsupported or over the limit).
        self.tokens: TokenIndex | None = None
        if backend is not None and self.skills:
            if snapshot is not None:
                self.semantic = snapshot.semantic
            else:
                if defer_sections:
                    self.pending_sections = self._uncached_sections(backend)
                self.semantic = self._semantic(backend, self.pending_sections)
            if token_match_max_texts > 0:
                from skillrt.routing.tokens import TokenCache, TokenIndex

                self.tokens = TokenIndex.build(
                    self.skills,
                    backend,
                    TokenCache(self.cache.store, progress=self.cache.progress),
                    max_texts=token_match_max_texts,
                )

    def __len__(self) -> int:
        return len(self.skills)

    def with_sections(self, rows: Iterable[int]) -> RouterIndex:
        """This index with the section vectors of ``rows`` embedded (those still
        pending); ``self`` when none of them is."""
        fill = self.pending_sections.intersection(rows)
        if not fill or self.semantic is None:
            return self
        view = copy.copy(self)
        view.pending_sections = self.pending_sections - fill
        view.semantic = self._semantic(self.semantic.backend, view.pending_sections)
        return view

    def _section_texts(self) -> list[list[str]]:
        return [[s.embed_text for s in f.sections] for f in self.fields]

    def _semantic(self, backend: EmbeddingBackend, without: frozenset[int]) -> SemanticIndex:
        """The semantic index, leaving out the sections of the rows ``without``."""
        from skillrt.routing.semantic import SemanticIndex

        texts = self._section_texts()
        return SemanticIndex(
            self.skills,
            backend,
            self.cache,
            sections=[() if i in without else group for i, group in enumerate(texts)],
        )

    def _uncached_sections(self, backend: EmbeddingBackend) -> frozenset[int]:
        """The rows with a section the cache lacks, when they are worth deferring."""
        from skillrt.routing.vector_cache import text_hash

        texts = self._section_texts()
        items = [(text_hash(t), t) for group in texts for t in group]
        missing = self.cache.missing(backend, items) if items else set()
        if len(missing) < DEFER_MIN_TEXTS:
            return frozenset()
        return frozenset(
            i for i, group in enumerate(texts) if any(text_hash(t) in missing for t in group)
        )

    def resolve_key(self, key: str) -> str | None:
        return self.name_keys.get(key)

    def resolve_variant(self, key: str) -> str | None:
        """The skill whose name of two words or more has this
        :func:`~skillrt.routing.directives.variant_key` (None: none, or several)."""
        return self.name_variants.get(key) or None

    @property
    def model_id(self) -> str:
        """The query-side model (see :attr:`EmbeddingBackend.query_model_id`)."""
        return self.backend.query_model_id if self.backend is not None else "lexical"

    def overlap(self, a: int, b: int) -> float:
        """How much two skills overlap: cosine of their document vectors (or term Jaccard)."""
        if self.semantic is not None:
            va = self.semantic.doc_vectors[a]
            vb = self.semantic.doc_vectors[b]
            return float(va @ vb)
        ta = {t for f in self.fields[a].field_terms[:3] for t in f}
        tb = {t for f in self.fields[b].field_terms[:3] for t in f}
        return len(ta & tb) / max(1, len(ta | tb))

    def rows_for(self, names: Sequence[str]) -> tuple[NDArray[np.int64], list[str]]:
        """Positions of ``names`` (qualified or unique bare), and the names not found."""
        import numpy as np

        rows: list[int] = []
        missing: list[str] = []
        for name in names:
            i = self.position.get(name)
            if i is None:
                qn = self.name_keys.get(name_key(name))
                i = self.position.get(qn) if qn else None
            if i is None:
                missing.append(name)
            elif i not in rows:
                rows.append(i)
        return np.asarray(rows, dtype=np.int64), missing

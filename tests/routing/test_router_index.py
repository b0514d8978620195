"""Skill vectors are cached by content: an unchanged skill is never embedded again."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillrt.routing.embeddings import HashingBackend
from skillrt.routing.index import RouterIndex
from skillrt.routing.semantic import description_clauses, document_text, part_texts
from skillrt.routing.vector_cache import VectorCache
from skillrt.store import open_location

from .conftest import catalogue, make


class CountingBackend(HashingBackend):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.embedded.extend(texts)
        return super().embed_documents(texts)


def test_unchanged_skills_are_not_reembedded(tmp_path: Path) -> None:
    skills = catalogue()
    backend = CountingBackend()
    store = open_location(tmp_path / "state.db")
    RouterIndex(skills, backend=backend, cache=VectorCache(store))
    first = len(backend.embedded)
    assert first >= len(skills)
    store.close()

    # A new process: a fresh cache layer over the same store file.
    store = open_location(tmp_path / "state.db")
    backend.embedded.clear()
    RouterIndex(skills, backend=backend, cache=VectorCache(store))
    assert backend.embedded == []

    changed = [*skills[:-1], make(skills[-1].name, "Forecast the weather for any city.")]
    RouterIndex(changed, backend=backend, cache=VectorCache(store))
    assert backend.embedded == [document_text(changed[-1])]
    store.close()


def test_multi_vector_documents_include_examples_and_clauses() -> None:
    s = make(
        "pto-request",
        "pto request (work domain)",
        examples=["i want to take friday off", "book vacation days", ""],
    )
    assert document_text(s) == "pto request: pto request (work domain)"
    assert part_texts(s) == ["i want to take friday off", "book vacation days"]
    assert description_clauses(
        "Interact with PDF files, provide page references for fact-checking. "
        "Summarise web pages and answer questions about source code."
    )
    assert description_clauses("Provides weather.") == []
    index = RouterIndex([s], backend=HashingBackend())
    assert index.semantic is not None
    assert index.semantic.part_vectors.shape[0] == 2
    assert index.semantic.centroid_vectors.shape[0] == 1


def test_name_keys_and_rows() -> None:
    skills = [make("acme:deploy", "Deploy."), make("other:deploy", "Deploy too."), make("x", "X.")]
    index = RouterIndex(skills, backend=None)
    assert index.resolve_key("acme:deploy") == "acme:deploy"
    assert index.resolve_key("deploy") is None  # ambiguous bare name
    rows, missing = index.rows_for(["x", "acme:deploy", "nope"])
    assert rows.tolist() == [2, 0] and missing == ["nope"]

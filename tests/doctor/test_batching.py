"""Batched semantic scoring gives the router the scores ``score_many`` would."""

from __future__ import annotations

import numpy as np
import pytest

from skillrt.doctor.batching import BatchedSemantic, request_rows
from skillrt.routing.embeddings.hashing import HashingBackend
from skillrt.routing.semantic import MAX_FULL_PARTS, PART_PREFILTER, SemanticIndex, Similarities

DIM = HashingBackend().dim


def unit(rows: int, rng: np.random.Generator) -> np.ndarray:
    m = rng.normal(size=(rows, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def index(n_skills: int, parts_per_skill: int, seed: int) -> SemanticIndex:
    rng = np.random.default_rng(seed)
    parts = np.full(n_skills, parts_per_skill, dtype=np.int64)
    parts[::3] = 0  # some skills have no parts
    sections = rng.integers(0, 5, size=n_skills).astype(np.int64)
    p_end, s_end = np.cumsum(parts), np.cumsum(sections)
    owners = np.flatnonzero(parts >= 2)
    arrays = {
        "doc_vectors": unit(n_skills, rng),
        "part_vectors": unit(int(parts.sum()), rng),
        "part_owner": np.repeat(np.arange(n_skills), parts),
        "has_parts": parts > 0,
        "part_start": p_end - parts,
        "part_end": p_end,
        "section_vectors": unit(int(sections.sum()), rng),
        "has_sections": sections > 0,
        "section_start": s_end - sections,
        "section_end": s_end,
        "centroid_owner": owners,
        "centroid_vectors": unit(len(owners), rng),
    }
    return SemanticIndex.from_arrays(HashingBackend(), arrays)


@pytest.mark.parametrize(
    ("n_skills", "parts"),
    [(40, 2), (PART_PREFILTER + 100, MAX_FULL_PARTS // (PART_PREFILTER + 100) * 2 + 2)],
)
def test_prepared_scores_equal_score_many(n_skills: int, parts: int) -> None:
    """The batch scores every skill's parts in one product and each request keeps its own
    best skills' parts; ``score_many`` scores only those: both give the same scores."""
    plain = index(n_skills, parts, seed=n_skills)
    assert plain.prefilters_parts == (n_skills > PART_PREFILTER)
    batched = BatchedSemantic.over(plain)
    rng = np.random.default_rng(7)
    requests = [request_rows(unit(1, rng)[0], unit(k, rng)) for k in (0, 1, 3, 2, 0)]
    batched.prepare(requests)
    for rows in requests:
        want = plain.score_many(rows, (0.5, 0.3, 0.2), 0.4)
        got = batched.score_many(rows, (0.5, 0.3, 0.2), 0.4)
        assert len(got) == len(want) == len(rows)
        for g, w in zip(got, want, strict=True):
            for name in ("doc", "part", "centroid", "section", "combined"):
                np.testing.assert_allclose(getattr(g, name), getattr(w, name), atol=1e-5)
    assert (batched.hits, batched.misses) == (len(requests), 0)
    if plain.prefilters_parts:
        # The comparison has teeth: every skill's best part is not what a request keeps.
        rows = requests[2]
        every = plain.similarities(rows, every_part=True)
        assert not np.allclose(every.part, plain.similarities(rows).part, atol=1e-3)


def test_similarities_scored_differently_are_not_joined() -> None:
    plain = index(30, 2, seed=2)
    rows = unit(2, np.random.default_rng(4))
    every = plain.similarities(rows, every_part=True)
    some = plain.similarities(rows)
    joined = Similarities.join([every.column(1), every.column(0)])
    np.testing.assert_array_equal(joined.section, every.section[:, ::-1])
    with pytest.raises(ValueError, match="every part"):
        Similarities.join([every.column(0), some.column(1)])


def test_an_unprepared_request_is_scored_the_usual_way() -> None:
    plain = index(30, 2, seed=1)
    batched = BatchedSemantic.over(plain)
    rows = unit(2, np.random.default_rng(3))
    got = batched.score_many(rows)  # nothing prepared
    assert (batched.hits, batched.misses) == (0, 1)
    want = plain.score_many(rows)
    np.testing.assert_allclose(got[1].combined, want[1].combined, atol=1e-6)
    batched.prepare([rows[:1]])
    assert len(batched.score_many(rows)) == 2  # one row unknown: all computed afresh
    batched.clear()
    assert batched._ready == {}


def test_a_router_gives_the_same_answers_batched(tmp_path: object) -> None:
    """The rows prepared per request are the rows the router scores: routing with the
    batched index changes no candidate and no total."""
    from pathlib import Path

    from skillrt.config import DiscoveryConfig, RootConfig, RoutingConfig
    from skillrt.doctor.encodings import request_spans
    from skillrt.routing.router import Router
    from skillrt.skills.registry import SkillRegistry

    examples = Path(__file__).resolve().parents[2] / "examples" / "skills"
    registry = SkillRegistry.discover(
        DiscoveryConfig(conventional_roots=False),
        project_dir=examples,
        explicit_roots=(RootConfig(examples, scope="flag"),),
    )
    config = RoutingConfig(use_stats=False, cold_start=False)
    router = Router.from_skills(registry.skills(), config, backend="hashing")
    texts = [
        "write a commit message for my staged changes",
        "review this SQL query for injection, then write the release notes",
        "organise my invoices by vendor and month and also file the receipts",
    ]
    plain = [router.route(t, surface="eval").candidates for t in texts]
    assert router.index.semantic is not None and router.index.backend is not None
    batched = BatchedSemantic.over(router.index.semantic)
    router.index.semantic = batched
    encodings = [router.index.backend.encode_query(t, request_spans(t)) for t in texts]
    batched.prepare([request_rows(e.vector, e.parts) for e in encodings])
    assert any(len(e.parts) > 1 for e in encodings)  # a multi-clause request is covered
    again = [router.route(t, surface="eval").candidates for t in texts]
    assert (batched.hits, batched.misses) == (len(texts), 0)
    for a, b in zip(plain, again, strict=True):
        assert [c.name for c in a] == [c.name for c in b]
        assert [c.score.total for c in a] == pytest.approx([c.score.total for c in b], abs=1e-4)

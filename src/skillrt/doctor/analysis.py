"""The routing analysis: pseudo-requests through leave-out routers, then the findings.

1. The router over the catalogue, from the index cache (fields, vectors, snapshot): an
   unchanged skill is never read or embedded again.
2. Each skill's pseudo-requests (:mod:`skillrt.doctor.pseudo`), their encodings from the
   cache (:mod:`skillrt.doctor.encodings`).
3. Each fold's requests through that fold's leave-out router
   (:mod:`skillrt.doctor.folds`): risk and shadowing.
4. Each skill's first few requests through the unchanged router: unreachable skills.
5. Stubs and copies (:mod:`skillrt.doctor.stubs`, :mod:`skillrt.doctor.copies`), from
   the same fields: findings of their own, left out of the pairs and the unreachable.

Stats and cold start are off (as in ``skillrt eval``): the doctor judges the catalogue,
not one installation's history. Nothing is recorded.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillrt.doctor.commands import CommandLine
from skillrt.doctor.confusion import Observation, route_requests
from skillrt.doctor.copies import Copy, find_copies
from skillrt.doctor.findings import risk_entries, shadow_pairs, skill_text, unreachable_skills
from skillrt.doctor.model import RiskEntry, ShadowPair, Unreachable
from skillrt.doctor.neighbours import Neighbourhood, neighbourhood
from skillrt.doctor.pseudo import FOLDS, PseudoRequest, by_fold, per_skill_limit, pseudo_requests
from skillrt.doctor.stubs import Stub, find_stubs
from skillrt.doctor.words import TermStats

if TYPE_CHECKING:
    from skillrt.config import RoutingConfig
    from skillrt.routing.router import Router
    from skillrt.routing.vector_cache import BuildProgress
    from skillrt.skills.model import Skill
    from skillrt.store.base import Store

__all__ = ["Analysis", "analyse"]

#: Requests per skill routed through the unchanged router (the unreachable check).
PROBES = 2


@dataclass(frozen=True)
class Analysis:
    """The routing findings and what they were computed on."""

    risk: tuple[RiskEntry, ...]
    shadowing: tuple[ShadowPair, ...]
    unreachable: tuple[Unreachable, ...]
    neighbourhood: Neighbourhood
    names: tuple[str, ...]
    held_out: tuple[Observation, ...]
    router: Router
    summary: dict[str, Any]
    stubs: tuple[Stub, ...] = ()
    copies: tuple[Copy, ...] = ()


def analyse(
    skills: Sequence[Skill],
    config: RoutingConfig,
    store: Store | None,
    *,
    is_enabled: Callable[[Skill], bool] | None = None,
    env: dict[str, str] | None = None,
    samples: int | None = None,
    progress: BuildProgress | None = None,
    commands: CommandLine | None = None,
) -> Analysis:
    """Route every skill's pseudo-requests and derive the findings (module docstring).

    ``commands``: how the findings' commands are written (the caller's flags)."""
    from skillrt.doctor.encodings import EncodingCache, cached_queries
    from skillrt.doctor.folds import fold_router, section_terms
    from skillrt.routing.embeddings import resolve_backend
    from skillrt.routing.fields import load_fields
    from skillrt.routing.router import Router

    started = time.perf_counter()
    cfg = dataclasses.replace(config, use_stats=False, cold_start=False)
    # The folds first, the unchanged router after them: only one index at a time.
    real = resolve_backend(cfg.embedding_backend, cfg)
    backend = cached_queries(real) if real is not None else None
    fields = load_fields(skills, store, progress=progress)
    stubs = find_stubs(skills, fields)
    stub_at = frozenset(x.position for x in stubs)
    copies = find_copies(skills, fields, _body_reader(skills), skip=stub_at)
    limit = per_skill_limit(len(skills), samples)
    requests = [
        r for i, s in enumerate(skills) for r in pseudo_requests(i, s, fields[i], limit=limit)
    ]
    folds = by_fold(requests)
    total = len(requests)
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress("routing pseudo-requests", done, total)

    cache = EncodingCache(store, progress=progress)
    terms_of = section_terms(fields)
    held: list[Observation] = []
    index_s = 0.0
    embedded = 0
    for fold in range(FOLDS):
        t0 = time.perf_counter()
        fold_r = fold_router(
            skills,
            fields,
            fold,
            backend=backend,
            config=cfg,
            store=store,
            is_enabled=is_enabled,
            progress=progress,
            env=env,
            terms_of=terms_of,
        )
        index_s += time.perf_counter() - t0
        embedded += fold_r.index.cache.misses
        _batched(fold_r)
        held += route_requests(fold_r, backend, cache, folds[fold], progress=step)
        del fold_r
        gc.collect()  # the next index replaces this one: free it first
    del terms_of
    texts = [
        " ".join([s.description, *(x.text for x in f.sections)])
        for s, f in zip(skills, fields, strict=True)
    ]
    stats = TermStats(fields, texts)
    own_texts = [
        skill_text(s.description, [x.text for x in f.sections])
        for s, f in zip(skills, fields, strict=True)
    ]
    del fields, texts
    router = Router.from_skills(
        skills,
        cfg,
        caches=store,  # the store gives vectors; no stats
        backend=real,
        query_backend=backend,  # requests encoded once, then cached
        is_enabled=is_enabled,
        env=env,
        progress=progress,
    )
    embedded += router.index.cache.misses
    _batched(router)
    probes = _probes(requests, PROBES)
    total += len(probes)
    probed = route_requests(router, backend, cache, probes, progress=step)
    hood = neighbourhood(router.index)
    threshold = cfg.selection_threshold
    names = router.index.names
    own_finding = {x.position: "a stub: fill it in or remove it (see stubs)" for x in stubs}
    for c in copies:
        own_finding.setdefault(c.original, f"{names[c.position]} is a copy of it (see duplicates)")
        own_finding[c.position] = f"a copy of {names[c.original]} (see duplicates)"
    shadowing = shadow_pairs(
        skills,
        held,
        hood,
        stats,
        own_texts,
        threshold=threshold,
        commands=commands,
        exclude=stub_at,
        copies=frozenset(frozenset((c.position, c.original)) for c in copies),
    )
    listed = {(p.skill, p.shadowed_by) for p in shadowing}
    risk = risk_entries(skills, held, hood, stats, threshold, actions=own_finding, listed=listed)
    unreachable = unreachable_skills(
        skills,
        probed,
        router.index.enabled,
        stats,
        threshold,
        skip=frozenset(own_finding),
        commands=commands,
    )
    summary = {
        "skills": len(skills),
        "pseudo_requests": len(requests),
        "per_skill": limit,
        "probes": len(probes),
        "folds": FOLDS,
        "backend": router.index.model_id,
        "threshold": threshold,
        "texts_embedded": embedded,
        "encodings_computed": cache.misses,
        "fold_index_s": round(index_s, 3),
        "seconds": round(time.perf_counter() - started, 3),
    }
    return Analysis(
        risk=tuple(risk),
        shadowing=tuple(shadowing),
        unreachable=tuple(unreachable),
        neighbourhood=hood,
        names=tuple(router.index.names),
        held_out=tuple(held),
        router=router,
        summary=summary,
        stubs=tuple(stubs),
        copies=tuple(copies),
    )


def _body_reader(skills: Sequence[Skill]) -> Callable[[int], str | None]:
    """Reads skill ``i``'s SKILL.md body through the loader (None: none, or unreadable)."""
    from skillrt.errors import SkillrtError
    from skillrt.loading.loader import read_skill_body

    def read(i: int) -> str | None:
        if skills[i].skill_file is None:
            return None
        try:
            return read_skill_body(skills[i]).text
        except SkillrtError:
            return None

    return read


def _batched(router: Router) -> None:
    """Score each chunk of requests' semantic evidence in one product
    (:mod:`skillrt.doctor.batching`)."""
    from skillrt.doctor.batching import BatchedSemantic

    if router.index.semantic is not None:
        router.index.semantic = BatchedSemantic.over(router.index.semantic)


def _probes(requests: Sequence[PseudoRequest], per_skill: int) -> list[PseudoRequest]:
    """Each skill's first ``per_skill`` requests (its description first, then sections)."""
    seen: dict[int, int] = {}
    out: list[PseudoRequest] = []
    for r in requests:
        if seen.get(r.skill, 0) < per_skill:
            seen[r.skill] = seen.get(r.skill, 0) + 1
            out.append(r)
    return out

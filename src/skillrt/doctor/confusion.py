"""Route pseudo-requests through the real router and keep what each answer says.

An :class:`Observation` is one routed pseudo-request reduced to what the findings use:
where its own skill ranked and scored, which skill ranked first, the strongest other
skill (the one that takes the request when its own skill falls short) and the next
strongest ones (its :data:`CONTENDERS`). Nothing is recorded: the routers here are plain
:class:`~skillrt.routing.router.Router` objects, not the runtime's recording router.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillrt.doctor.pseudo import PseudoRequest

if TYPE_CHECKING:
    from skillrt.doctor.encodings import CachedQueries, EncodingCache
    from skillrt.routing.router import Router

__all__ = ["Observation", "route_requests"]

#: Requests routed per chunk: their packed encodings (about 12 KB each) and their
#: semantic similarities (3 arrays of every skill each) are held at once.
CHUNK = 128
#: Other skills kept per request, strongest first: the skills that would take it if
#: its wording moved a little (the shadowing pairs count them, findings.py).
CONTENDERS = 3


@dataclass(frozen=True, slots=True)
class Observation:
    """One routed pseudo-request (skills by catalogue position)."""

    request: PseudoRequest
    #: Where its own skill ranked (0 = first; None: not among the candidates).
    own_rank: int | None
    #: Its own skill's calibrated total (0 when not a candidate).
    own_score: float
    #: The skill ranked first and its total (None: no candidate at all).
    first: int | None
    first_score: float
    #: Its own skill is the plan's primary selected skill.
    selected: bool
    #: Its own skill's status in the route ("selected", "below_threshold", "disabled",
    #: "manual_only", "unavailable", ...; "" when not a candidate).
    own_status: str = ""
    #: The :data:`CONTENDERS` strongest other skills, strongest first, and their totals.
    contenders: tuple[int, ...] = ()
    contender_scores: tuple[float, ...] = ()

    @property
    def rival(self) -> int | None:
        """The strongest other skill (None: no other candidate)."""
        return self.contenders[0] if self.contenders else None

    @property
    def rival_score(self) -> float:
        """The strongest other skill's total (0 when there is none)."""
        return self.contender_scores[0] if self.contender_scores else 0.0

    @property
    def lost(self) -> bool:
        """Another skill ranked first."""
        return self.first is not None and self.first != self.request.skill


def observe(request: PseudoRequest, ranked: Sequence[tuple[int, float, str]]) -> Observation:
    """``ranked``: the route's candidates in output order as (position, total, status)."""
    own_rank = next((k for k, (i, _, _) in enumerate(ranked) if i == request.skill), None)
    own_score = ranked[own_rank][1] if own_rank is not None else 0.0
    own_status = ranked[own_rank][2] if own_rank is not None else ""
    first, first_score = (ranked[0][0], ranked[0][1]) if ranked else (None, 0.0)
    others = [(i, t) for i, t, _ in ranked if i != request.skill][:CONTENDERS]
    selected = bool(ranked) and ranked[0][0] == request.skill and ranked[0][2] == "selected"
    return Observation(
        request=request,
        own_rank=own_rank,
        own_score=own_score,
        first=first,
        first_score=first_score,
        selected=selected,
        own_status=own_status,
        contenders=tuple(i for i, _ in others),
        contender_scores=tuple(t for _, t in others),
    )


def route_requests(
    router: Router,
    backend: CachedQueries | None,
    cache: EncodingCache,
    requests: Sequence[PseudoRequest],
    *,
    progress: Callable[[int], None] | None = None,
) -> list[Observation]:
    """Route each request through ``router`` (whose index uses ``backend``; None for a
    lexical router), its encoding from ``cache``; ``progress(n)`` after each chunk.

    With a :class:`~skillrt.doctor.batching.BatchedSemantic` index, a chunk's semantic
    similarities are computed in one product before its requests are routed."""
    from skillrt.doctor.batching import BatchedSemantic, request_rows
    from skillrt.doctor.encodings import unpack_vectors

    def _rows(vectors: Any) -> Any:
        return request_rows(vectors[0], vectors[1:])

    position = router.index.position
    semantic = router.index.semantic
    out: list[Observation] = []
    for start in range(0, len(requests), CHUNK):
        chunk = requests[start : start + CHUNK]
        if backend is not None and semantic is not None:
            encodings = cache.encodings(backend.inner, [r.text for r in chunk])
            backend.encodings = encodings
            if isinstance(semantic, BatchedSemantic):
                dim = backend.dim
                semantic.prepare([_rows(unpack_vectors(blob, dim)) for blob in encodings.values()])
        for request in chunk:
            result = router.route(request.text, surface="eval")
            ranked = [(position[c.name], c.score.total, c.status) for c in result.candidates]
            out.append(observe(request, ranked))
        if backend is not None:
            backend.encodings = {}
        if isinstance(semantic, BatchedSemantic):
            semantic.clear()
        if progress is not None:
            progress(len(chunk))
    return out

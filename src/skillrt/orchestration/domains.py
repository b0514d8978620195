"""Step 2: classify a request's domain with the router's embedding backend.

Each domain is a short description: a comma- or semicolon-separated list of the kinds
of work it covers. The query is compared (cosine) with the whole description and with
each listed phrase; a domain's similarity is the mean of the whole-description cosine
and its best phrase cosine (a phrase list is recalled well by its best phrase, the
whole text keeps the domain's overall sense). A softmax over the domains' similarities
(temperature ``T``) gives the numeric score of the winner, and thresholds map it onto
seed 002's labels: ``CERTAIN`` >= ``certain``, ``PROBABLE`` >= ``probable``, else
``UNCERTAIN``. No keyword lists: change a domain by editing its description in
``orchestration.domains``.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillrt.errors import WorkflowConfigError

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import EmbeddingBackend, Matrix

__all__ = [
    "DEFAULT_DOMAINS",
    "DomainClassifier",
    "DomainResult",
    "confidence_label",
]

#: Seed 002's four domains. Phrases are separated by commas / semicolons.
DEFAULT_DOMAINS: Mapping[str, str] = {
    "technical": (
        "software development, building application features, programming and source code, "
        "debugging errors and crashes, "
        "writing and fixing tests, web and mobile app frameworks, APIs and databases, SQL "
        "and schema migrations, security and authentication, servers, cloud, containers "
        "and deployment, CI pipelines, computer and IT problems"
    ),
    "personal": (
        "personal life, health, sleep and wellbeing, fitness and exercise, food, cooking "
        "and baking, family, children and relationships, travel and holidays, home, "
        "cleaning and tidying, personal money and shopping, hobbies and self-improvement, "
        "weddings, gifts and celebrations"
    ),
    "creative": (
        "creative writing, fiction and stories, poetry and song lyrics, screenplays, art "
        "and drawing, music composition, visual design and logos, fantasy worldbuilding, "
        "characters for games, brainstorming imaginative ideas"
    ),
    "professional": (
        "business and work tasks, meetings and emails, reports and presentations, project "
        "management and status updates, hiring, HR and careers, sales and marketing, "
        "clients, suppliers and contracts, legal matters, company finance and accounting"
    ),
}

DEFAULT_TEMPERATURE = 0.05
DEFAULT_CERTAIN = 0.80
DEFAULT_PROBABLE = 0.55
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class DomainResult:
    """Step 2's output: the domain, its label and the numbers behind it."""

    domain: str
    #: ``CERTAIN``, ``PROBABLE`` or ``UNCERTAIN`` (seed 002's labels).
    confidence: str
    #: Softmax probability of ``domain`` among all domains (0..1).
    score: float
    #: Probability of every domain, highest first.
    scores: Mapping[str, float] = field(default_factory=dict)
    #: The winner's combined cosine similarity.
    similarity: float = 0.0
    #: The embedding model id, or ``explicit`` when the caller named the domain.
    method: str = ""

    def to_output(self) -> dict[str, Any]:
        """The step-2 entry of the data contract (``domain``, ``confidence`` + extras)."""
        return {
            "domain": self.domain,
            "confidence": self.confidence,
            "score": round(self.score, 4),
            "similarity": round(self.similarity, 4),
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "method": self.method,
        }


def confidence_label(score: float, *, certain: float, probable: float) -> str:
    if score >= certain:
        return "CERTAIN"
    if score >= probable:
        return "PROBABLE"
    return "UNCERTAIN"


def _phrases(description: str) -> list[str]:
    return [p.strip() for p in re.split(r"[;,\n]", description) if len(p.strip()) > 2]


# Prototype vectors per (model id, domains): built once a process, reused by every run.
_proto_cache: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Any, Any, list[int]]] = {}
_proto_lock = threading.Lock()


class DomainClassifier:
    """Classifies queries into the configured domains by embedding similarity."""

    def __init__(
        self,
        backend: EmbeddingBackend,
        domains: Mapping[str, str] | None = None,
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        certain: float = DEFAULT_CERTAIN,
        probable: float = DEFAULT_PROBABLE,
    ) -> None:
        self.backend = backend
        self.domains = dict(domains or DEFAULT_DOMAINS)
        problems = [
            {"where": f"orchestration.domains.{name}", "message": "must be a plain name"}
            for name in self.domains
            if not _NAME.match(name)
        ]
        problems += [
            {"where": f"orchestration.domains.{name}", "message": "needs a description"}
            for name, desc in self.domains.items()
            if not isinstance(desc, str) or not desc.strip()
        ]
        if not self.domains:
            problems.append({"where": "orchestration.domains", "message": "no domains"})
        if not temperature > 0 or not 0 <= probable <= certain <= 1:
            problems.append(
                {
                    "where": "orchestration",
                    "message": "need temperature > 0 and 0 <= probable <= certain <= 1",
                }
            )
        if problems:
            raise WorkflowConfigError(
                f"invalid domain configuration: {problems[0]['message']}", problems=problems
            )
        self.temperature = temperature
        self.certain = certain
        self.probable = probable

    def _prototypes(self) -> tuple[Matrix, Matrix, list[int]]:
        key = (self.backend.model_id, tuple(sorted(self.domains.items())))
        with _proto_lock:
            cached = _proto_cache.get(key)
        if cached is not None:
            return cached
        names = list(self.domains)
        whole = self.backend.embed_documents([self.domains[n] for n in names])
        phrases: list[str] = []
        owner: list[int] = []
        for i, name in enumerate(names):
            for phrase in _phrases(self.domains[name]) or [self.domains[name]]:
                phrases.append(phrase)
                owner.append(i)
        parts = self.backend.embed_documents(phrases)
        value = (whole, parts, owner)
        with _proto_lock:
            _proto_cache[key] = value
        return value

    def classify(self, query: str) -> DomainResult:
        """The best domain for ``query`` with its confidence label and score."""
        import numpy as np

        names = list(self.domains)
        whole, parts, owner = self._prototypes()
        q = self.backend.embed_queries([query])[0]
        whole_sim = whole @ q
        part_sim = parts @ q
        best_part = np.full(len(names), -1.0, dtype=np.float64)
        for j, i in enumerate(owner):
            best_part[i] = max(best_part[i], float(part_sim[j]))
        combined = 0.5 * whole_sim.astype(np.float64) + 0.5 * best_part
        top = float(combined.max())
        weights = [math.exp((float(c) - top) / self.temperature) for c in combined]
        total = sum(weights)
        probs = {name: w / total for name, w in zip(names, weights, strict=True)}
        winner = max(names, key=lambda n: (probs[n], -names.index(n)))
        score = probs[winner]
        ranked = dict(sorted(probs.items(), key=lambda kv: -kv[1]))
        return DomainResult(
            domain=winner,
            confidence=confidence_label(score, certain=self.certain, probable=self.probable),
            score=score,
            scores=ranked,
            similarity=float(combined[names.index(winner)]),
            method=self.backend.model_id,
        )

    def explicit(self, domain: str) -> DomainResult:
        """The caller named the domain (``--domain``): certain by definition."""
        if domain not in self.domains:
            raise WorkflowConfigError(
                f"unknown domain {domain!r}; configured: {', '.join(self.domains)}",
                domain=domain,
                domains=list(self.domains),
            )
        return DomainResult(
            domain=domain,
            confidence="CERTAIN",
            score=1.0,
            scores={domain: 1.0},
            similarity=1.0,
            method="explicit",
        )

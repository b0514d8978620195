"""Step 2: classify a request's domain with the router's embedding backend.

Each domain is a short description: a comma- or semicolon-separated list of the kinds
of work it covers. The query is compared (cosine) with each listed phrase, and a
domain's similarity is the mean of its :data:`TOP_PHRASES` best phrase cosines: a
request is about a domain when several of its phrases fit, so one phrase sharing a
word ("reports" in "Add CSV export to the reports API") does not carry it (measured on
the labelled sets of ``tests/orchestration/domain_queries.py``, docs/orchestration.md).
A softmax over the domains' similarities (temperature ``T``) gives the numeric score of
the winner, and thresholds map it onto seed 002's labels: ``CERTAIN`` >= ``certain``,
``PROBABLE`` >= ``probable``, else ``UNCERTAIN``. No keyword lists: change a domain by
editing its description in ``orchestration.domains``.
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
        "software development, adding a feature to an app, a website, an API or a service, "
        "programming and source code, data import and export in file formats such as CSV "
        "and JSON, debugging errors and crashes, writing and fixing tests, web and mobile "
        "app frameworks, APIs and databases, SQL and schema migrations, security and "
        "authentication, servers, cloud, containers and deployment, CI pipelines, computer "
        "and IT problems"
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
        "business and office work, meetings and emails, writing business reports and slide "
        "presentations, project management and status updates, hiring, HR and careers, "
        "sales and marketing, clients, suppliers and contracts, legal matters, company "
        "finance and accounting"
    ),
}

#: A domain's similarity is the mean of this many of its best phrase cosines.
TOP_PHRASES = 3
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


def _top_mean(sims: list[float]) -> float:
    """The mean of the :data:`TOP_PHRASES` largest values (of all, when fewer)."""
    top = sorted(sims)[-TOP_PHRASES:]
    return sum(top) / len(top) if top else -1.0


def _phrases(description: str) -> list[str]:
    return [p.strip() for p in re.split(r"[;,\n]", description) if len(p.strip()) > 2]


# Prototype vectors per (model id, domains): built once a process, reused by every run.
_proto_cache: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Any, list[int]]] = {}
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

    def _prototypes(self) -> tuple[Matrix, list[int]]:
        """Each domain phrase's vector and the domain it belongs to."""
        key = (self.backend.model_id, tuple(sorted(self.domains.items())))
        with _proto_lock:
            cached = _proto_cache.get(key)
        if cached is not None:
            return cached
        names = list(self.domains)
        phrases: list[str] = []
        owner: list[int] = []
        for i, name in enumerate(names):
            for phrase in _phrases(self.domains[name]) or [self.domains[name]]:
                phrases.append(phrase)
                owner.append(i)
        parts = self.backend.embed_documents(phrases)
        value = (parts, owner)
        with _proto_lock:
            _proto_cache[key] = value
        return value

    def classify(self, query: str) -> DomainResult:
        """The best domain for ``query`` with its confidence label and score."""
        import numpy as np

        names = list(self.domains)
        parts, owner = self._prototypes()
        q = self.backend.embed_queries([query])[0]
        part_sim = parts @ q
        per_domain: list[list[float]] = [[] for _ in names]
        for j, i in enumerate(owner):
            per_domain[i].append(float(part_sim[j]))
        combined = np.asarray([_top_mean(sims) for sims in per_domain], dtype=np.float64)
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

"""Why the router decided what it did: raw signals per candidate and the routing reason."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillrt.routing.planner import QUICK_FACT_REASON
from skillrt.routing.scoring import weighted_sum

if TYPE_CHECKING:
    from skillrt.config import RoutingConfig
    from skillrt.routing.calibration import ScoreModel
    from skillrt.routing.candidate import Candidate
    from skillrt.routing.evidence import Evidence
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.scoring import Terms

__all__ = ["matched_part", "routing_reason", "signals"]

#: A part must beat the description's similarity by this much to be named instead.
_PART_MARGIN = 0.02


def signals(
    ev: Evidence,
    k: int | None,
    intent_q: float,
    clause_intents: Sequence[float],
    t: Terms,
    model: ScoreModel,
    cfg: RoutingConfig,
    damping: float,
) -> dict[str, float]:
    """The raw evidence behind one candidate's score (``--explain``)."""
    out: dict[str, float] = {}
    if k is not None:
        out["fused"] = float(ev.fused[k])
        out["margin"] = ev.margin(k)
        out["p_scope"] = model.scope(ev.signals)
        # What P(scope) read, by signal (skillrt.routing.signals.REQUEST_SIGNALS).
        for name, value in ev.signals.items():
            out[f"scope_{name}"] = value
        out["bm25"] = float(ev.lex_raw[k])
        out["bm25_norm"] = float(ev.lex_norm[k])
        if ev.sem_doc is not None:
            assert ev.sem_part is not None and ev.sem_centroid is not None
            out["cos_doc"] = float(ev.sem_doc[k])
            out["cos_part"] = float(ev.sem_part[k])
            out["cos_centroid"] = float(ev.sem_centroid[k])
        if ev.rerank is not None and not math.isnan(float(ev.rerank[k])):
            out["tokens"] = float(ev.rerank[k])
    out["intent_query"] = intent_q
    for n, ci in enumerate(clause_intents):
        out[f"intent_clause_{n + 1}"] = ci
    out["weighted_sum"] = weighted_sum(t, cfg.weights)
    out["cold_start_factor"] = damping
    return {key: round(v, 4) for key, v in out.items()}


def matched_part(index: RouterIndex, ev: Evidence, k: int | None, i: int) -> str:
    """Which part of skill ``i`` matched the query best: its description, an example (or
    a clause of the description), or a body section by its heading."""
    if k is None or ev.sem_doc is None:
        return "description"
    doc = float(ev.sem_doc[k])
    best_label, best = "description", doc + _PART_MARGIN
    if index.semantic is not None and ev.query_vector is not None:
        at, similarity = index.semantic.best_section(i, ev.query_vector)
        if at >= 0 and similarity > best:
            heading = index.fields[i].sections[at].heading or "(opening text)"
            best_label, best = f"section: {heading}", similarity
    if ev.sem_part is not None and float(ev.sem_part[k]) > best:
        best_label = "example or description clause"
    return best_label


def routing_reason(
    selected: Sequence[Candidate],
    candidates: Sequence[Candidate],
    threshold: float,
    n_clauses: int,
    notes: Sequence[str],
) -> str:
    """One sentence (or a few, joined by ``;``) saying why the plan is what it is."""
    parts: list[str] = []
    if selected:
        forced = [c.name for c in selected if c.forced]
        routed = [c for c in selected if not c.forced]
        if forced:
            parts.append(f"selected {', '.join(forced)} (forced by the user)")
        elif routed:
            first = routed.pop(0)
            parts.append(f"selected {first.name} ({first.total:.2f} >= {threshold:.2f})")
        for c in routed:
            parts.append(f"{c.name} {c.reason}")
        chosen = {c.idx for c in selected}
        runner_up = next(
            (c for c in candidates if c.idx not in chosen and c.status in ("covered",)), None
        )
        if runner_up is None and n_clauses > 1:
            runner_up = next(
                (c for c in candidates if c.idx not in chosen and c.reason.startswith("best for")),
                None,
            )
        if runner_up is not None:
            parts.append(f"runner-up {runner_up.name}: {runner_up.reason}")
    else:
        blocked = [
            c
            for c in candidates
            if c.status in ("unavailable", "disabled", "manual_only", "excluded")
        ]
        best = next((c for c in candidates if c.status not in ("excluded",)), None)
        if not candidates:
            parts.append("no skill: no candidate was recalled")
        elif best is not None and best.reason.startswith(QUICK_FACT_REASON):
            parts.append(f"no skill: {best.reason}")
        elif best is not None and best.status == "below_threshold":
            assert best.breakdown is not None
            parts.append(
                f"no skill: the best candidate {best.name} scores {best.breakdown.total:.2f}, "
                f"under the threshold {threshold:.2f}"
            )
        else:
            parts.append("no skill: no candidate passes the threshold")
        if blocked:
            parts.append(
                "blocked: " + "; ".join(f"{c.name} ({c.status}: {c.reason})" for c in blocked[:3])
            )
    parts.extend(notes)
    return "; ".join(parts)

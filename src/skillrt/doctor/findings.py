"""From routed pseudo-requests to findings: risk, shadowing pairs, unreachable skills.

* **Risk** of skill A: the mean of three measures in 0..1 (each measured on its own and
  together, docs/doctor.md):

  - ``routed_elsewhere``: over A's held-out pseudo-requests, 1 when another skill ranked
    first and ``1 - A's calibrated total`` when A did (a win the router is unsure of is
    half a loss): how A fares against the catalogue on requests in other words than its
    own;
  - ``crowding``: the mean similarity of A's description to its five nearest skills'
    (:mod:`skillrt.doctor.neighbours`): how many near neighbours it has to get past;
  - ``genericness``: how common its description's words are in the catalogue
    (:meth:`TermStats.genericness`): a description of words every skill uses gives the
    router nothing to tell A apart by.

* **Shadowing**: B shadows A with score ``routed_elsewhere(A) * taken(A, B)``, where
  ``taken`` is the share of A's held-out requests on which B is one of the three
  strongest other skills (:data:`~skillrt.doctor.confusion.CONTENDERS`): a real request
  is worded differently from A's own sentences, and a skill that keeps coming right
  behind on them is the one such a request goes to (measured: counting only the
  strongest other skill finds fewer of the real misroutes, docs/doctor.md). Ties go to
  the rival ranked higher on them. At most three per skill; a pair found both ways is
  listed once, the stronger way, marked ``mutual``. A pair is listed only when it rests
  on several requests on which B passes the selection threshold, drawn from
  :data:`STRONG_EVIDENCE` different parts of A (sections, description clauses): one
  request, two drawn from one sentence, or a rival that would not be selected anyway,
  is no finding.
  Requests whose text B has too (shared set-up steps, a copied paragraph) are no
  evidence for the pair: B wins them by quoting them, not by doing A's job.
* **Unreachable**: a skill that, routed its own sentences through the unchanged router,
  is never the selected skill.

Stubs and copies (:mod:`skillrt.doctor.stubs`, :mod:`skillrt.doctor.copies`) are
findings of their own; the caller leaves them out of the pairs (``exclude``, ``copies``)
and the unreachable skills, and their risk entry points at them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from skillrt.doctor.commands import CommandLine
from skillrt.doctor.confusion import Observation
from skillrt.doctor.model import Evidence, RiskEntry, ShadowPair, Unreachable
from skillrt.doctor.neighbours import Neighbourhood
from skillrt.doctor.words import TermStats
from skillrt.skills.model import Skill

__all__ = ["risk_entries", "route_risk", "shadow_pairs", "unreachable_skills"]

#: Rivals kept per skill.
RIVALS_PER_SKILL = 3
#: Descriptions this similar (or bodies sharing half their sections) are duplicates.
DUPLICATE_SIMILARITY = 0.9
EVIDENCE_KEPT = 3
#: Parts of a skill (sections, description clauses) on whose requests the rival passes
#: the threshold that a pair needs to be listed.
STRONG_EVIDENCE = 2
#: Words a sentence needs to count as text two skills share.
SHARED_WORDS = 5
#: A description this generic gets its own reason and action.
GENERIC = 0.6


def route_risk(observations: Sequence[Observation]) -> float | None:
    """Mean of (1 if lost else 1 - own total) over a skill's held-out requests."""
    if not observations:
        return None
    total = sum(1.0 if o.lost else 1.0 - o.own_score for o in observations)
    return total / len(observations)


def _by_skill(
    skills: Sequence[Skill], observations: Sequence[Observation]
) -> tuple[list[str], list[list[Observation]]]:
    """The skills' names, and each skill's observations (of the requests drawn from it)."""
    out: list[list[Observation]] = [[] for _ in skills]
    for o in observations:
        out[o.request.skill].append(o)
    return [s.qualified_name for s in skills], out


def _lost_to(observations: Sequence[Observation]) -> Counter[int]:
    """Which skills came first on the requests a skill lost, and how often."""
    return Counter(o.first for o in observations if o.lost and o.first is not None)


def risk_entries(
    skills: Sequence[Skill],
    held_out: Sequence[Observation],
    hood: Neighbourhood,
    stats: TermStats,
    threshold: float,
    *,
    actions: Mapping[int, str] | None = None,
    listed: set[tuple[str, str]] | None = None,
) -> list[RiskEntry]:
    """Every skill's risk entry, worst first (see the module docstring).

    ``actions``: the action of skills with a finding of their own (a stub, a copy),
    which says what to do about them better than their risk does; ``listed``: the
    shadowing pairs listed (an action points at one only when it is there)."""
    names, per_skill = _by_skill(skills, held_out)
    out: list[RiskEntry] = []
    for i, obs in enumerate(per_skill):
        routed = route_risk(obs)
        crowd = hood.crowding[i]
        generic = stats.genericness(i)
        parts = [crowd, generic] if routed is None else [routed, crowd, generic]
        score = sum(parts) / len(parts)
        reasons: list[str] = []
        action = ""
        rivals = _lost_to(obs)
        if obs:
            lost = sum(o.lost for o in obs)
            line = f"{lost} of {len(obs)} requests drawn from its own text went to other skills"
            if rivals:
                top = ", ".join(f"{names[j]} ({c})" for j, c in rivals.most_common(2))
                line += f", most to {top}"
            reasons.append(line)
            mean_own = sum(o.own_score for o in obs) / len(obs)
            if mean_own < threshold:
                reasons.append(
                    f"it scores {mean_own:.2f} on them on average, under the threshold "
                    f"{threshold:.2f}"
                )
        else:
            reasons.append("no text to draw requests from (no body, a one-line description)")
        if generic >= GENERIC:
            reasons.append(
                f"its description is made of common words (genericness {generic:.2f}): "
                "little in it tells the router this skill apart"
            )
        near = [(names[j], s) for j, s in hood.nearest[i][:2]]
        if near:
            reasons.append(
                "nearest descriptions: " + ", ".join(f"{name} ({s:.2f})" for name, s in near)
            )
        if rivals and rivals.most_common(1)[0][1] * 2 >= len(obs):
            j = rivals.most_common(1)[0][0]
            sep = stats.separating(i, j)
            listed_pair = {(names[i], names[j]), (names[j], names[i])} & (listed or set())
            action = ("see shadowing: " if listed_pair else "") + (
                f"{names[i]} loses most of its requests to {names[j]}"
            )
            if sep:
                action += f"; say what only it covers ({', '.join(sep)})"
        elif obs and routed is not None and routed >= 0.5:
            words = stats.missing_from_head(i)
            action = "say in its description when to use it, in the words its body uses"
            if words:
                action += f" ({', '.join(words)})"
        elif generic >= GENERIC:
            words = stats.missing_from_head(i)
            action = "name in its description the tools, files and situations it is for"
            if words:
                action += f" ({', '.join(words)})"
        elif near and hood.nearest[i][0][1] >= DUPLICATE_SIMILARITY:
            action = f"merge it with {near[0][0]} or tell them apart: they describe the same"
        else:
            action = "nothing urgent" if score < 0.5 else "check it against its nearest skills"
        if actions is not None and i in actions:
            action = actions[i]
        out.append(
            RiskEntry(
                skill=names[i],
                score=round(score, 4),
                reasons=tuple(reasons),
                routed_elsewhere=None if routed is None else round(routed, 4),
                crowding=round(crowd, 4),
                genericness=round(generic, 4),
                neighbours=tuple(name for name, _ in near),
                requests=len(obs),
                action=action,
            )
        )
    out.sort(key=lambda r: (-r.score, r.skill))
    return out


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def skill_text(description: str, sections: Sequence[str]) -> str:
    """A skill's text as :func:`shadow_pairs` compares sentences with it."""
    return " ".join(" ".join([description, *sections]).split()).lower()


def _shared(request: str, other: str) -> bool:
    """A sentence of ``request`` (5+ words) is in ``other``'s text word for word."""
    for sentence in _SENTENCE.split(request):
        words = sentence.split()
        if len(words) >= SHARED_WORDS and " ".join(words).lower() in other:
            return True
    return False


def shadow_pairs(
    skills: Sequence[Skill],
    held_out: Sequence[Observation],
    hood: Neighbourhood,
    stats: TermStats,
    texts: Sequence[str],
    *,
    threshold: float,
    commands: CommandLine | None = None,
    exclude: frozenset[int] = frozenset(),
    copies: frozenset[frozenset[int]] = frozenset(),
    limit: int | None = None,
    min_strong: int = STRONG_EVIDENCE,
) -> list[ShadowPair]:
    """Shadowing pairs, worst first (see the module docstring).

    ``texts``: each skill's :func:`skill_text` (a request whose sentence the rival has
    too is no evidence against it); ``exclude``: skills paired with nothing (stubs);
    ``copies``: pairs reported as copies; ``min_strong``: requests over the threshold
    a pair needs (0: every pair, as a benchmark compares).
    """
    commands = commands or CommandLine()
    names, per_skill = _by_skill(skills, held_out)
    # taken[a][b]: A's requests on which B is a contender, with B's total on each
    # (requests B shares the text of left out).
    taken: list[dict[int, list[tuple[Observation, float]]]] = []
    # pull[a][b]: the sum of 1/position of B among A's contenders (breaks ties).
    pull: list[dict[int, float]] = []
    for a, obs in enumerate(per_skill):
        by_rival: dict[int, list[tuple[Observation, float]]] = defaultdict(list)
        ranked: dict[int, float] = defaultdict(float)
        if a not in exclude:
            for o in obs:
                for k, (b, total) in enumerate(zip(o.contenders, o.contender_scores, strict=True)):
                    if b in exclude or frozenset((a, b)) in copies:
                        continue
                    if _shared(o.request.text, texts[b]):
                        continue
                    by_rival[b].append((o, total))
                    ranked[b] += 1.0 / (k + 1)
        taken.append(by_rival)
        pull.append(ranked)
    scored: list[tuple[float, float, int, int]] = []
    for a, obs in enumerate(per_skill):
        routed = route_risk(obs)
        if routed is None:
            continue
        rivals = [
            (b, hits)
            for b, hits in taken[a].items()
            if len({_unit(o) for o, total in hits if total >= threshold}) >= min_strong
        ]
        rivals.sort(key=lambda kv: (-len(kv[1]), -pull[a][kv[0]], kv[0]))
        for b, hits in rivals[:RIVALS_PER_SKILL]:
            scored.append((routed * len(hits) / len(obs), pull[a][b] / len(obs), a, b))
    scored.sort(key=lambda x: (-x[0], -x[1], names[x[2]], names[x[3]]))
    found_both_ways = {(a, b) for _, _, a, b in scored}
    out: list[ShadowPair] = []
    listed: set[frozenset[int]] = set()
    for score, _, a, b in scored:
        key = frozenset((a, b))
        if key in listed:
            continue
        listed.add(key)
        # The requests the rival would take (over the threshold), then those it outscores
        # the skill on, closest first; a request the skill keeps is no evidence.
        hits = sorted(taken[a][b], key=lambda h: (h[1] < threshold, h[0].own_score - h[1]))
        evidence = tuple(
            Evidence(o.request.text, o.request.source, round(total, 4), round(o.own_score, 4))
            for o, total in hits
            if total >= threshold or total > o.own_score
        )[:EVIDENCE_KEPT] or tuple(
            Evidence(o.request.text, o.request.source, round(total, 4), round(o.own_score, 4))
            for o, total in hits[:EVIDENCE_KEPT]
        )
        duplicate = hood.similarity(a, b) >= DUPLICATE_SIMILARITY
        mutual = (b, a) in found_both_ways
        action = _pair_action(names[a], names[b], duplicate, mutual, stats.separating(a, b))
        why = commands("route", _clip(evidence[0].request), "--why-not", names[a])
        action += f"; see why: `{why}`"
        out.append(
            ShadowPair(
                skill=names[a],
                shadowed_by=names[b],
                score=round(score, 4),
                evidence=evidence,
                words=stats.pull([o.request.text for o, _ in hits], b),
                taken=round(len(hits) / len(per_skill[a]), 4),
                requests=len(per_skill[a]),
                mutual=mutual,
                over_threshold=sum(total >= threshold for _, total in hits),
                kind="duplicate" if duplicate else "overlap",
                action=action,
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out


def _unit(o: Observation) -> str:
    """What one piece of evidence is: a section (its requests are one sentence or two
    of it: one piece), or a description clause, example or trigger."""
    source = o.request.source
    return source if source.startswith("section") else f"{source}: {o.request.text}"


def _clip(text: str, limit: int = 120) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit]


def _pair_action(a: str, b: str, duplicate: bool, mutual: bool, separating: Sequence[str]) -> str:
    words = ", ".join(separating[:4])
    if duplicate:
        return (
            f"{a} and {b} describe nearly the same job: merge them, or say in each "
            "description what only it does" + (f" (only {a}: {words})" if words else "")
        )
    if mutual:
        base = f"merge {a} and {b}, or split them by task: they take each other's requests"
        return base + (f"; only {a} covers: {words}" if words else "")
    if words:
        return (
            f"sharpen {a}'s description with what only it covers ({words}), or add "
            f"anti_triggers to {b} for those words"
        )
    return f"sharpen {a}'s description: say when to use it rather than {b}"


def unreachable_skills(
    skills: Sequence[Skill],
    probes: Sequence[Observation],
    enabled: Sequence[bool],
    stats: TermStats,
    threshold: float,
    *,
    skip: frozenset[int] = frozenset(),
    commands: CommandLine | None = None,
) -> list[Unreachable]:
    """Skills never selected for their own sentences by the unchanged router (``skip``:
    skills reported otherwise: stubs, copies)."""
    commands = commands or CommandLine()
    names, per_skill = _by_skill(skills, probes)
    out: list[Unreachable] = []
    for i, obs in enumerate(per_skill):
        skill = skills[i]
        if i in skip or (enabled[i] and any(o.selected for o in obs)):
            continue
        first = sum(o.own_rank == 0 for o in obs)
        best = max((o.own_score for o in obs), default=0.0)
        goes_to = tuple(names[j] for j, _ in _lost_to(obs).most_common(3))
        statuses = {o.own_status for o in obs}
        if not enabled[i]:
            reason, action = "disabled", f"enable it: `{commands('enable', names[i])}`"
        elif skill.disable_model_invocation:
            reason = "manual only (disable-model-invocation: true): never selected automatically"
            action = "none if intended; else remove disable-model-invocation"
        elif "unavailable" in statuses:
            missing = ", ".join(
                (*skill.routing.prerequisites.bins, *skill.routing.prerequisites.env)
            )
            reason = f"its prerequisites are missing here ({missing})"
            action = "install the missing programs or set the variables"
        elif not obs:
            reason = "nothing to route by: no description sentence of 3+ words and no body"
            action = "write a description that says what it does and when to use it"
        elif first:
            reason = (
                f"ranks first for {first} of {len(obs)} of its own sentences but never reaches "
                f"the threshold (best {best:.2f} < {threshold:.2f})"
            )
            words = stats.missing_from_head(i)
            action = "say in its description when to use it" + (
                f", with the words its body uses ({', '.join(words)})" if words else ""
            )
        else:
            reason = f"never ranks first for its own sentences: they go to {', '.join(goes_to)}"
            action = (
                f"merge it into {goes_to[0]}, or rewrite its description so it stands apart"
                if goes_to
                else "rewrite its description so it stands apart"
            )
        out.append(
            Unreachable(
                skill=names[i],
                reason=reason,
                probes=len(obs),
                ranked_first=first,
                best_score=round(best, 4),
                goes_to=goes_to,
                action=action,
            )
        )
    return out

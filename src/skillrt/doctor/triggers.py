"""Per-skill trigger precision and recall on a labelled query set, without a model.

The same measure Anthropic's skill-creator takes by running ``claude -p`` on hand-written
trigger queries, taken here with the router over the whole catalogue at once: a skill
*triggers* on a request when the route's plan selects it.

* recall of S: requests expecting S on which S triggered / requests expecting S;
* precision of S: requests on which S triggered and that expect S (or list it in
  ``also_ok``) / requests on which S triggered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from skillrt.doctor.model import SkillTrigger, TriggerEval
from skillrt.eval.harness import QueryOutcome

__all__ = ["NO_SKILL", "trigger_eval"]

NO_SKILL = "(no skill)"


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def trigger_eval(outcomes: Sequence[QueryOutcome], source: str) -> TriggerEval:
    """Trigger precision and recall of every skill that is expected or triggered."""
    expected: Counter[str] = Counter()
    triggered: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    missed_to: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        right = {*o.expected, *o.also_ok}
        chosen = set(o.selected)
        for name in o.expected:
            expected[name] += 1
            if name in chosen:
                hit[name] += 1
            else:
                missed_to[name][o.selected[0] if o.selected else NO_SKILL] += 1
        for name in chosen:
            triggered[name] += 1
            correct[name] += name in right
    skills = []
    for name in sorted(set(expected) | set(triggered)):
        precision = _ratio(correct[name], triggered[name])
        recall = _ratio(hit[name], expected[name])
        went = tuple(n for n, _ in missed_to[name].most_common(3))
        action = ""
        if recall is not None and recall < 0.5 and went and went[0] == NO_SKILL:
            action = "its requests score under the threshold: say in its description when to use it"
        elif recall is not None and recall < 0.5 and went:
            action = f"its requests go to {went[0]}: see the doctor's shadowing and risk"
        elif precision is not None and precision < 0.5:
            action = "it triggers on other skills' requests: narrow its description"
        skills.append(
            SkillTrigger(
                skill=name,
                expected=expected[name],
                triggered=triggered[name],
                correct=correct[name],
                precision=precision,
                recall=recall,
                missed_to=went,
                action=action,
            )
        )
    skills.sort(key=lambda s: ((s.recall if s.recall is not None else 2.0), s.skill))
    return TriggerEval(
        queries=source,
        count=len(outcomes),
        precision=_ratio(sum(correct.values()), sum(triggered.values())),
        recall=_ratio(sum(hit.values()), sum(expected.values())),
        skills=tuple(skills),
    )

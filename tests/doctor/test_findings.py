"""Risk, shadowing and unreachable findings from routed pseudo-requests."""

from __future__ import annotations

from pathlib import Path

from skillrt.doctor.confusion import Observation, observe
from skillrt.doctor.findings import (
    risk_entries,
    route_risk,
    shadow_pairs,
    skill_text,
    unreachable_skills,
)
from skillrt.doctor.neighbours import Neighbourhood
from skillrt.doctor.pseudo import PseudoRequest
from skillrt.doctor.words import TermStats
from skillrt.routing.fields import skill_fields
from skillrt.skills.model import Prerequisites, RoutingMeta, Skill


def make(name: str, description: str, **kw: object) -> Skill:
    return Skill(name=name, description=description, path=Path(f"/x/{name}"), skill_file=None, **kw)  # type: ignore[arg-type]


SKILLS = [
    make("pdf-tools", "Merge, split and fill PDF forms with pypdf."),
    make("docx-tools", "Edit Word documents and track changes with python-docx."),
    make("helper", "Helps with many tasks and general work."),
]
STATS = TermStats([skill_fields(s, ()) for s in SKILLS], [s.description for s in SKILLS])
HOOD = Neighbourhood(
    nearest=(((2, 0.6), (1, 0.4)), ((2, 0.5), (0, 0.4)), ((0, 0.6), (1, 0.5))),
    crowding=(0.5, 0.45, 0.55),
)
HOOD_SAME = Neighbourhood(
    nearest=(((2, 0.95), (1, 0.4)), ((2, 0.5), (0, 0.4)), ((0, 0.95), (1, 0.5))),
    crowding=(0.5, 0.45, 0.55),
)


def obs(
    skill: int,
    ranked: list[tuple[int, float, str]],
    text: str = "a request",
    source: str | None = None,
) -> Observation:
    """A routed request, drawn from a section of its own (``source``: another one)."""
    return observe(PseudoRequest(skill, text, source or f"section: {text}", 0), ranked)


def test_observe_reads_own_rank_rival_and_selection() -> None:
    o = obs(0, [(2, 0.8, "selected"), (0, 0.4, "below_threshold"), (1, 0.1, "below_threshold")])
    assert o.lost and o.own_rank == 1 and o.own_score == 0.4 and o.rival == 2
    assert not o.selected and o.own_status == "below_threshold"
    won = obs(0, [(0, 0.9, "selected"), (1, 0.3, "below_threshold")])
    assert not won.lost and won.selected and won.rival == 1
    assert o.contenders == (2, 1) and o.contender_scores == (0.8, 0.1)
    nothing = obs(0, [])
    assert nothing.first is None and nothing.rival is None and not nothing.lost


def test_route_risk_counts_losses_and_unsure_wins() -> None:
    assert route_risk([]) is None
    sure = obs(0, [(0, 1.0, "selected")])
    unsure = obs(0, [(0, 0.6, "selected")])
    lost = obs(0, [(2, 0.7, "selected"), (0, 0.2, "below_threshold")])
    assert route_risk([sure]) == 0.0
    assert abs((route_risk([unsure, lost]) or 0) - 0.7) < 1e-9


def test_the_skill_losing_its_requests_is_the_riskiest() -> None:
    held = [obs(0, [(0, 0.95, "selected"), (1, 0.2, "below_threshold")])] * 4
    held += [obs(1, [(0, 0.7, "selected"), (1, 0.3, "below_threshold")])] * 4
    listed = {("docx-tools", "pdf-tools")}
    risk = risk_entries(SKILLS, held, HOOD, STATS, threshold=0.65, listed=listed)
    assert [r.skill for r in risk][0] == "docx-tools"
    top = risk[0]
    assert top.routed_elsewhere == 1.0 and top.requests == 4
    assert "4 of 4 requests" in top.reasons[0] and "pdf-tools" in top.reasons[0]
    assert top.action.startswith("see shadowing: docx-tools loses most of its requests")
    # A pair that is not listed is not pointed at.
    unlisted = risk_entries(SKILLS, held, HOOD, STATS, threshold=0.65)[0]
    assert unlisted.action.startswith("docx-tools loses most of its requests to pdf-tools")
    helper = next(r for r in risk if r.skill == "helper")
    assert helper.routed_elsewhere is None and helper.requests == 0
    assert all(0.0 <= r.score <= 1.0 for r in risk)


TEXTS = ["", "", ""]


def test_shadowing_pairs_are_listed_once_worst_first_with_evidence() -> None:
    held = [obs(1, [(0, 0.8, "selected"), (1, 0.3, "below_threshold")], f"r{k}") for k in range(3)]
    held += [obs(1, [(1, 0.9, "selected"), (2, 0.4, "below_threshold")], "own")]
    held += [obs(0, [(0, 0.9, "selected"), (1, 0.7, "below_threshold")], f"b{k}") for k in range(2)]
    pairs = shadow_pairs(SKILLS, held, HOOD, STATS, TEXTS, threshold=0.65)
    first = pairs[0]
    assert (first.skill, first.shadowed_by) == ("docx-tools", "pdf-tools")
    assert first.taken == 0.75 and first.requests == 4 and first.mutual
    assert [e.request for e in first.evidence] == ["r0", "r1", "r2"]
    assert first.evidence[0].score == 0.8 and first.evidence[0].own_score == 0.3
    # pdf-tools -> docx-tools is the same pair the other way: not listed again.
    assert not any((p.skill, p.shadowed_by) == ("pdf-tools", "docx-tools") for p in pairs)
    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert "--why-not docx-tools" in first.action and "skillrt route r0" in first.action


def test_a_rival_right_behind_on_every_request_shadows_though_never_the_strongest() -> None:
    # docx-tools wins its requests, or loses them to pdf-tools; helper is never the
    # strongest other skill but comes right behind on every one of them.
    held = [obs(1, [(1, 0.9, "selected"), (0, 0.5, "below_threshold"),
                    (2, 0.4, "below_threshold")], f"w{k}") for k in range(3)]  # fmt: skip
    held += [obs(1, [(0, 0.8, "selected"), (1, 0.3, "below_threshold"),
                     (2, 0.35, "below_threshold")], "lost")]  # fmt: skip
    pairs = shadow_pairs(SKILLS, held, HOOD, STATS, TEXTS, threshold=0.3)
    found = {(p.skill, p.shadowed_by): p for p in pairs}
    helper = found[("docx-tools", "helper")]
    assert helper.taken == 1.0 and helper.requests == 4 and not helper.mutual
    # Its evidence is helper's own totals, closest to docx-tools' first.
    assert [e.request for e in helper.evidence] == ["lost", "w0", "w1"]
    assert helper.evidence[0].score == 0.35 and helper.evidence[0].own_score == 0.3
    # Equal shares: the rival ranked higher on them (pdf-tools) is listed first.
    assert [(p.skill, p.shadowed_by) for p in pairs] == [
        ("docx-tools", "pdf-tools"),
        ("docx-tools", "helper"),
    ]


def test_a_pair_needs_several_requests_the_rival_would_take() -> None:
    """Issue 30: one request, or a rival under the threshold, is no finding."""
    one = [obs(1, [(0, 0.9, "selected"), (1, 0.2, "below_threshold")], "alone")]
    one += [obs(1, [(1, 0.9, "selected")], f"own{k}") for k in range(3)]
    assert shadow_pairs(SKILLS, one, HOOD, STATS, TEXTS, threshold=0.65) == []
    weak = [obs(1, [(0, 0.5, "selected"), (1, 0.2, "below_threshold")], f"w{k}") for k in range(4)]
    assert shadow_pairs(SKILLS, weak, HOOD, STATS, TEXTS, threshold=0.65) == []
    assert shadow_pairs(SKILLS, weak, HOOD, STATS, TEXTS, threshold=0.45) != []
    # Two requests drawn from one section (its first sentence, then two) are one piece.
    same = [
        obs(1, [(0, 0.9, "selected"), (1, 0.2, "below_threshold")], t, "section: Safety")
        for t in ("Avoid changes in production.", "Avoid changes in production. Redact.")
    ]
    assert shadow_pairs(SKILLS, same, HOOD, STATS, TEXTS, threshold=0.65) == []


def test_text_the_rival_shares_is_no_evidence() -> None:
    """Set-up steps both skills carry (issue 30: `gh auth status`) do not make a pair."""
    shared = "Run the login command first to make sure you are authenticated here."
    held = [
        obs(1, [(0, 0.9, "selected"), (1, 0.2, "below_threshold")], shared, f"section: {k}")
        for k in range(3)
    ]
    texts = [skill_text("x", [f"Setup. {shared} Then go."]), "", ""]
    assert shadow_pairs(SKILLS, held, HOOD, STATS, texts, threshold=0.65) == []
    assert shadow_pairs(SKILLS, held, HOOD, STATS, TEXTS, threshold=0.65) != []


def test_stubs_and_copies_are_left_out_of_the_pairs() -> None:
    held = [obs(1, [(0, 0.9, "selected"), (1, 0.2, "below_threshold")], f"r{k}") for k in range(3)]
    assert shadow_pairs(SKILLS, held, HOOD, STATS, TEXTS, threshold=0.65) != []
    for kw in ({"exclude": frozenset({0})}, {"exclude": frozenset({1})},
               {"copies": frozenset({frozenset({0, 1})})}):  # fmt: skip
        assert shadow_pairs(SKILLS, held, HOOD, STATS, TEXTS, threshold=0.65, **kw) == []  # type: ignore[arg-type]


def test_near_identical_descriptions_are_a_duplicate_kind() -> None:
    held = [obs(2, [(0, 0.8, "selected"), (2, 0.3, "below_threshold")], f"r{k}") for k in range(2)]
    pairs = shadow_pairs(SKILLS, held, HOOD_SAME, STATS, TEXTS, threshold=0.65)
    assert pairs[0].kind == "duplicate" and "describe nearly the same job" in pairs[0].action


def test_unreachable_skills_and_why() -> None:
    skills = [
        *SKILLS,
        make("manual", "Deploy to production by hand only.", disable_model_invocation=True),
        make("needs-tool", "Convert videos with ffmpeg.",
             routing=RoutingMeta(prerequisites=Prerequisites(bins=("ffmpeg-none",)))),
    ]  # fmt: skip
    stats = TermStats([skill_fields(s, ()) for s in skills], [s.description for s in skills])
    probes = [
        obs(0, [(0, 0.9, "selected")]),
        obs(1, [(1, 0.5, "below_threshold")]),  # first, under the threshold
        obs(2, [(0, 0.8, "selected"), (2, 0.1, "below_threshold")]),
        obs(3, [(3, 0.9, "manual_only")]),
        obs(4, [(4, 0.9, "unavailable")]),
    ]
    enabled = [True, True, True, True, True]
    found = {u.skill: u for u in unreachable_skills(skills, probes, enabled, stats, 0.65)}
    assert "pdf-tools" not in found
    assert "never reaches the threshold" in found["docx-tools"].reason
    assert found["docx-tools"].ranked_first == 1 and found["docx-tools"].best_score == 0.5
    assert found["helper"].goes_to == ("pdf-tools",)
    assert "manual only" in found["manual"].reason
    assert "ffmpeg-none" in found["needs-tool"].reason
    disabled = unreachable_skills(skills, probes, [False, *enabled[1:]], stats, 0.65)
    assert disabled[0].skill == "pdf-tools" and disabled[0].reason == "disabled"
    assert "skillrt enable pdf-tools" in disabled[0].action


def test_genericness_reads_how_common_description_words_are() -> None:
    common = make("a", "code code code")
    rare = make("b", "zyxel quokka fandango")
    skills = [common, rare, make("c", "code review"), make("d", "code tests")]
    stats = TermStats([skill_fields(s, ()) for s in skills])
    assert stats.genericness(0) > stats.genericness(1)
    assert 0.0 <= stats.genericness(1) <= 1.0
    assert (
        TermStats([skill_fields(rare, ())]).genericness(0) == 0.0
    )  # one skill: nothing to compare

"""``doctor --html``: the report as one self-contained page (:mod:`skillrt.webpage`).

A heat map of the most confused skills, per-skill trigger precision/recall bars (or,
without ``--queries``, the riskiest skills' risk), the listing-budget chart, and the
tables of every section.
"""

from __future__ import annotations

from html import escape

from skillrt.doctor.model import DoctorReport
from skillrt.webpage import svg
from skillrt.webpage.page import cards, document, section, table

__all__ = ["render_html"]

#: Skills in the heat map and rows in each chart / table.
HEAT_SKILLS = 20
CHART_ROWS = 30
TABLE_ROWS = 100


def _heat(report: DoctorReport) -> str:
    """The skills of the worst shadowing pairs, linked skills next to each other."""
    weight: dict[str, float] = {}
    cells_by_name: dict[tuple[str, str], float] = {}
    order: list[str] = []  # the skills of the worst pairs first
    for p in report.shadowing:
        cells_by_name[(p.skill, p.shadowed_by)] = p.score
        for n in (p.skill, p.shadowed_by):
            weight[n] = weight.get(n, 0.0) + p.score
            if n not in order:
                order.append(n)
    chosen = set(order[:HEAT_SKILLS])
    linked: dict[str, dict[str, float]] = {n: {} for n in chosen}
    for (a, b), score in cells_by_name.items():
        if a in chosen and b in chosen:
            linked[a][b] = max(linked[a].get(b, 0.0), score)
            linked[b][a] = max(linked[b].get(a, 0.0), score)
    # Greedy order: each next skill is the unplaced one most linked to the last placed
    # (else the most confused one left), so clusters sit together on the diagonal.
    names: list[str] = []
    left = set(chosen)
    while left:
        last = names[-1] if names else None
        near = [n for n in left if last is not None and n in linked[last]]
        pick = max(near, key=lambda n: (linked[last][n], n)) if last and near else None
        if pick is None:
            pick = min(left, key=lambda n: (-weight[n], n))
        names.append(pick)
        left.discard(pick)
    at = {n: k for k, n in enumerate(names)}
    cells = {
        (at[a], at[b]): score for (a, b), score in cells_by_name.items() if a in at and b in at
    }
    return svg.heat_map(names, cells)


def _triggers(report: DoctorReport) -> str:
    t = report.triggers
    if t is None:
        items = [(r.skill, r.score) for r in report.risk[:CHART_ROWS]]
        return section(
            "Riskiest skills",
            svg.bars(items, maximum=1.0),
            "Risk of each skill's requests going elsewhere (0..1). Run with --queries FILE "
            "for measured trigger precision and recall.",
            "triggers",
        )
    rows = [(s.skill, s.precision, s.recall) for s in t.skills[:CHART_ROWS]]
    body = svg.paired_bars(rows, ("precision", "recall"))
    body += table(
        ["skill", "expected", "triggered", "precision", "recall", "missed to", "action"],
        [
            [
                s.skill,
                s.expected,
                s.triggered,
                _pct(s.precision),
                _pct(s.recall),
                ", ".join(s.missed_to),
                s.action,
            ]
            for s in t.skills[:TABLE_ROWS]
        ],  # fmt: skip
    )
    note = (
        f"{t.count} labelled requests from {t.queries}: precision {_pct(t.precision)}, "
        f"recall {_pct(t.recall)}. Lowest recall first."
    )
    return section("Trigger precision and recall", body, note, "triggers")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _listing(report: DoctorReport) -> str:
    items = []
    for c in report.listing.clients:
        items.append((f"{c.client} needs", float(c.listed_chars)))
        items.append((f"{c.client} allows", float(c.budget_chars)))
    body = svg.bars(items, unit="characters")
    body += table(
        ["client", "needs", "allows", "cut", "dropped", "assumptions", "action"],
        [
            [
                c.client,
                f"{c.listed_chars:,}",
                f"{c.budget_chars:,}",
                len(c.truncated),
                len(c.dropped),
                c.assumptions,
                c.action,
            ]
            for c in report.listing.clients
        ],  # fmt: skip
    )
    dropped = [
        [c.client, ", ".join(c.dropped[:40]) + (" …" if len(c.dropped) > 40 else "")]
        for c in report.listing.clients
        if c.dropped
    ]
    if dropped:
        body += table(["client", "descriptions dropped (listed by name only)"], dropped)
    return section(
        "Listing budget",
        body,
        "Which descriptions Claude Code and Codex cut or drop from the skill listing they "
        "put in the model's context: a dropped description is a skill the model cannot see.",
        "listing",
    )


def _environment(report: DoctorReport) -> str:
    env = report.environment
    rows = [
        [r.path, r.scope, "yes" if r.searched else "NO", "yes" if r.exists else "no", r.skills,
         r.note]
        for r in env.roots
    ]  # fmt: skip
    body = table(["root", "scope", "searched", "exists", "skills", "note"], rows)
    facts = [
        ["store", f"{env.store.get('backend')} at {env.store.get('location')}"],
        ["embedding", env.backend],
        ["daemon", "running at " + str(env.daemon.get("address"))
         if env.daemon.get("running") else "not running"],
        *[[f"hook {k}", ", ".join(v["where"]) if v["installed"] else "not installed"]
          for k, v in env.hooks.items()],
        *[[f"extra {e['extra']}", f"missing: {e['install']}"] for e in env.missing_extras],
        *[["problem", p] for p in env.problems],
    ]  # fmt: skip
    body += table(["", ""], facts)
    return section("Environment", body, anchor="environment")


def render_html(report: DoctorReport) -> str:
    """The whole page for ``report``."""
    a = report.analysis
    high = sum(1 for r in report.risk if r.score >= 0.5)
    dropped = max((len(c.dropped) for c in report.listing.clients), default=0)
    parts = [
        cards(
            [
                (f"{int(a.get('skills', len(report.risk))):,}", "skills"),
                (f"{len(report.findings):,}", "findings to act on"),
                (f"{len(report.shadowing):,}", "shadowing pairs"),
                (f"{len(report.unreachable):,}", "unreachable"),
                (f"{high:,}", "risk ≥ 0.5"),
                (f"{dropped:,}", "descriptions dropped"),
            ]
        ),
        section(
            "Act on these first",
            table(
                ["#", "kind", "skill", "finding", "action"],
                [
                    [k, f.kind, f.skill, f.summary, f.action]
                    for k, f in enumerate(report.findings[:TABLE_ROWS], start=1)
                ],
            )
            + (
                f'<p class="note">Disabled, not diagnosed: {escape(", ".join(report.disabled))}</p>'
                if report.disabled
                else ""
            ),
            "Name collisions, stubs, copies of other skills, then the shadowing pairs that "
            "rest on several requests the rival would take. Each command runs as printed "
            "from the folder the doctor ran in.",
            "findings",
        ),
        section(
            "Most confused skills",
            _heat(report),
            "Row skill loses its requests to column skill: the darker, the larger the share "
            "(the shadowing score). Hover a cell for its value.",
            "heat",
        ),
        _triggers(report),
        _listing(report),
        section(
            "Shadowing",
            table(
                ["skill", "shadowed by", "score", "taken", "kind", "words", "evidence", "action"],
                [
                    [
                        p.skill,
                        p.shadowed_by,
                        f"{p.score:.2f}",
                        _pct(p.taken),
                        p.kind + (", mutual" if p.mutual else ""),
                        ", ".join(p.words),
                        " | ".join(f"{e.source}: {e.request[:120]}" for e in p.evidence[:2]),
                        p.action,
                    ]
                    for p in report.shadowing[:TABLE_ROWS]
                ],
            ),  # fmt: skip
            "Pairs of skills whose requests go to each other, worst first.",
            "shadowing",
        ),
        section(
            "Unreachable skills",
            table(
                ["skill", "why", "action"],
                [[u.skill, u.reason, u.action] for u in report.unreachable[:TABLE_ROWS]],
            ),
            "Skills never selected for their own sentences.",
            "unreachable",
        ),
        section(
            "Risk",
            table(
                ["skill", "risk", "reasons", "action"],
                [
                    [r.skill, f"{r.score:.2f}", "; ".join(r.reasons), r.action]
                    for r in report.risk[:TABLE_ROWS]
                ],  # fmt: skip
            ),
            "How likely each skill's requests go elsewhere, worst first.",
            "risk",
        ),
        _environment(report),
    ]
    subtitle = (
        f"{a.get('skills')} skills · {a.get('pseudo_requests')} pseudo-requests routed · "
        f"backend {a.get('backend')}"
    )
    return document("skillrt doctor", subtitle, "".join(parts))

"""What one turn of a conversation gets from the skills: the context a prompt hook, the
daemon or an agent framework adds before the model sees the user's message.

For one message (SPEC I2-I4, R1, L5; seed 004 §4):

1. ``$name`` mentions resolve first, as the user surface does: an activated skill is
   injected (a ``disable-model-invocation`` one too: the user named it). A mention that
   does not resolve adds its seed 004 §7 message, and nothing is routed: the user named a
   skill, so another one is never picked for them silently.
2. Without mentions the router routes the message (with the conversation's last turns as
   history) and records its T1 event; each skill of the plan that is enabled and may be
   invoked by a model is injected. An empty plan injects nothing at all.

A skill already ``loaded`` in the conversation (its block stands in the context the
client keeps: the prompt hook reads that from the client's transcript) is not injected
again: it gets one reminder line instead (:data:`REMINDER`).

When the route points to skills beside its plan (docs/routing.md, *Pointers*), the
context ends with one line per pointer (its name, why, and ``skillrt show NAME`` to load
it): the model weighs them itself; no body is injected for them. Only skills the
registry holds, enabled and invocable by a model and not already loaded, are pointed to.

Each injected skill is the line ``Using skill: <name>`` followed by its injection block,
the one ``skillrt show --inject`` prints (seed 003 §6). All of it fits in ``budget``
characters: when it does not, each body gets a share of what is left after the header
lines (short bodies keep their whole text, long ones share the rest) and is fitted by the
loader's truncate policy, which keeps the key sections.

A turn takes what it uses (:class:`TurnSources`: the registry, the ``$`` resolver, the
router that records, the loader and the injection block, the loader's limits), never
the runtime that wires them; :meth:`skillrt.runtime.SkillRuntime.turn_context` gives
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from skillrt.clients import CLIENTS
from skillrt.errors import SkillrtError
from skillrt.skills.checks import validate_problem
from skillrt.wellformed import well_formed

if TYPE_CHECKING:
    from skillrt.config import LoaderLimits
    from skillrt.invocation.results import Resolution
    from skillrt.loading.report import LoadResult
    from skillrt.routing.plan import RouteResult
    from skillrt.skills.registry import SkillRegistry

#: Claude Code keeps hook context up to 10,000 characters (more becomes a file preview).
DEFAULT_BUDGET = 9_500
#: Below this many characters a body is not worth injecting; later skills are dropped.
MIN_BODY_CHARS = 400
#: Marks a block cut to fit when the loader's fitting still left it too long.
CUT_MARK = "\n[... cut to fit the context budget]\n"
#: What a skill already in the conversation's context gets instead of its body again.
REMINDER = "Still using skill: {name} (its instructions are earlier in this conversation)."

TurnSource = Literal["mention", "route", "none"]


class RouteTurn(Protocol):
    """Routes a message and records its T1 event (``record=False``: the caller does)."""

    def __call__(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] | None,
        surface: str | None,
        record: bool | None,
    ) -> RouteResult: ...


class LoadBody(Protocol):
    """A skill's body within ``limits``, never spilled to a file."""

    def __call__(self, name: str, *, limits: LoaderLimits) -> LoadResult: ...


@dataclass(frozen=True)
class TurnSources:
    """What a turn reads the skills through."""

    #: Which skills exist and which are enabled.
    registry: SkillRegistry
    #: The ``$`` mentions of a message as the user typed it.
    resolve: Callable[[str], Resolution]
    route: RouteTurn
    load_body: LoadBody
    #: The seed 003 §6 injection block of a loaded body.
    inject: Callable[[LoadResult], str]
    #: The loader's limits (a turn fits bodies with their ``truncate`` policy).
    limits: LoaderLimits


@dataclass(frozen=True)
class TurnContext:
    """The context for one turn; ``text`` is empty when nothing applies."""

    #: What goes into the model's context: ``Using skill:`` lines, blocks, messages.
    text: str
    #: The injected skills, in plan (or mention) order.
    skills: tuple[str, ...] = ()
    #: One ``Using skill: <name>`` line per injected skill (for the person to see).
    lines: tuple[str, ...] = ()
    #: The seed 004 §7 diagnostics of ``$`` mentions: ``{"code", "message"}``.
    diagnostics: tuple[dict[str, str], ...] = ()
    #: Skills that were chosen but could not be loaded: ``{"skill", "code", "message"}``.
    errors: tuple[dict[str, str], ...] = ()
    source: TurnSource = "none"
    route_id: str | None = None
    routing_reason: str | None = None
    #: True when a body was fitted or cut to stay within the budget.
    truncated: bool = False
    #: Skills of this turn already in the conversation's context: a reminder line each,
    #: no body.
    reminded: tuple[str, ...] = ()
    #: Skills named beside the plan for the model to weigh: ``{"name", "why", "load"}``.
    pointers: tuple[dict[str, str], ...] = ()
    #: The route behind a ``source="route"`` turn (not serialised).
    _route: RouteResult | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnContext:
        """Rebuild from the JSON form (what the daemon sends)."""
        return cls(
            text=str(data.get("text") or ""),
            skills=tuple(data.get("skills") or ()),
            lines=tuple(data.get("lines") or ()),
            diagnostics=tuple(dict(d) for d in data.get("diagnostics") or ()),
            errors=tuple(dict(e) for e in data.get("errors") or ()),
            source=data.get("source") or "none",
            route_id=data.get("route_id"),
            routing_reason=data.get("routing_reason"),
            truncated=bool(data.get("truncated")),
            reminded=tuple(data.get("reminded") or ()),
            pointers=tuple(dict(p) for p in data.get("pointers") or ()),
        )


def build_turn_context(
    sources: TurnSources,
    prompt: str,
    *,
    history: Sequence[str | Mapping[str, Any]] | None = None,
    surface: str = "hook",
    budget: int = DEFAULT_BUDGET,
    record: bool | None = None,
    loaded: Collection[str] = (),
    client: str | None = None,
) -> TurnContext:
    """The context for ``prompt`` (see the module docstring).

    ``client`` (the prompt hook's: claude-code, codex, gemini) says how its model loads
    a pointed-to skill: the client's own skill tool for a skill in its folders, else
    the SKILL.md file to read.

    ``record=False`` routes without writing the T1 event (the caller records it, as the
    daemon does through its background writer); ``surface`` labels that event.
    ``loaded`` names the skills already in the conversation's context.
    """
    prompt = well_formed(prompt)  # what is echoed back (mentions, lines) must encode
    resolution = sources.resolve(prompt)
    if resolution.mentions:
        from skillrt.invocation.messages import for_shell

        # No coding agent has the /skill palette: the messages name skillrt's commands.
        diagnostics = tuple(
            {"code": d.code, "message": for_shell(d.message)} for d in resolution.diagnostics
        )
        names = [a.skill for a in resolution.activated]
        return _assemble(sources, names, budget, "mention", diagnostics=diagnostics, loaded=loaded)
    result = sources.route(prompt, history=history, surface=surface, record=record)
    registry = sources.registry
    names = []
    primary = None
    invalid: list[dict[str, str]] = []
    for name in result.plan.names:
        try:
            skill = registry.get(name)
        except SkillrtError:
            continue  # a catalogue-only skill has no body to inject
        if not registry.is_enabled(skill) or skill.disable_model_invocation:
            continue
        problem = validate_problem(skill)
        if problem is not None:  # `validate` fails it: `list` and `doctor` report it
            why = f"not injected: it fails validation ({problem.message})"
            invalid.append({"skill": skill.qualified_name, "code": problem.code, "message": why})
            continue
        names.append(skill.qualified_name)
        if name == result.plan.primary:
            primary = skill.qualified_name
    ctx = _assemble(
        sources, names, budget, "route" if names else "none", primary=primary, loaded=loaded
    )
    if invalid:
        ctx = dataclasses.replace(ctx, errors=(*ctx.errors, *invalid))
    pointers: tuple[dict[str, str], ...] = ()
    # A plan that injects nothing names skills only when its decision pointed to them (a
    # quick question of fact); one whose skills could not be injected names none.
    if ctx.skills or ctx.reminded or not result.plan.names:
        pointers = _pointers(sources.registry, result, budget - len(ctx.text), loaded, client)
    text = ctx.text
    if pointers:
        head = POINTER_HEAD if text else POINTER_HEAD_ALONE
        text += ("\n\n" if text else "") + head
        text += "".join(f"\n- {p['name']}: {p['why']} (load: `{p['load']}`)" for p in pointers)
    return dataclasses.replace(
        ctx,
        text=text,
        pointers=pointers,
        route_id=result.route_id,
        routing_reason=result.routing_reason,
        _route=result,
    )


POINTER_HEAD = "Skills that may also apply (not loaded; load one only if it fits the request):"
#: The same, when the route injects no skill.
POINTER_HEAD_ALONE = "Skills that may apply (not loaded; load one only if the answer needs it):"


def _pointers(
    registry: SkillRegistry,
    result: RouteResult,
    room: int,
    loaded: Collection[str] = (),
    client: str | None = None,
) -> tuple[dict[str, str], ...]:
    """The route's pointers to skills a model may load (not ``loaded`` already), as many
    as fit in ``room``."""
    out: list[dict[str, str]] = []
    used = len(POINTER_HEAD) + 2
    for p in result.pointers:
        try:
            skill = registry.get(p.name)
        except SkillrtError:
            continue  # a catalogue-only skill: nothing to load
        if not registry.is_enabled(skill) or skill.disable_model_invocation:
            continue
        if skill.qualified_name in loaded:
            continue  # already in the conversation's context
        item = {"name": skill.qualified_name, "why": p.why, "load": _load(skill, client, p.load)}
        line = len(item["name"]) + len(item["why"]) + len(item["load"]) + 16
        if used + line > room:
            break
        used += line
        out.append(item)
    return tuple(out)


def _load(skill: Any, client: str | None, default: str) -> str:
    """How the client's model loads ``skill``: its own skill tool where it has one and
    lists the skill, else reading the SKILL.md (every coding agent reads files);
    ``default`` (``skillrt show NAME``) off a coding agent."""
    if client is None:
        return default
    spec = CLIENTS.get(client)
    tool = spec.load_tool if spec is not None else None
    path = str(skill.path).replace("\\", "/")
    if tool and spec is not None and any(f"/{f}/" in path for f in spec.load_tool_folders):
        return tool.format(name=skill.name)
    return f"read {skill.skill_file}" if skill.skill_file is not None else default


def _assemble(
    sources: TurnSources,
    names: Sequence[str],
    budget: int,
    source: TurnSource,
    *,
    diagnostics: tuple[dict[str, str], ...] = (),
    primary: str | None = None,
    loaded: Collection[str] = (),
) -> TurnContext:
    from skillrt.invocation.messages import using_skill

    reminded = tuple(n for n in names if n in loaded)
    names = [n for n in names if n not in loaded]
    limits = dataclasses.replace(sources.limits, body_policy="truncate")
    bodies: dict[str, LoadResult] = {}
    errors: list[dict[str, str]] = []
    for name in names:
        try:
            bodies[name] = sources.load_body(name, limits=limits)
        except SkillrtError as exc:
            errors.append({"skill": name, "code": exc.code, "message": exc.message})
    kept = list(bodies)
    tail = "\n".join([*(REMINDER.format(name=n) for n in reminded),
                      *(d["message"] for d in diagnostics)])  # fmt: skip
    # Per skill: everything but the body text (the activation line, the block header).
    overhead = {n: len(using_skill(n)) + 2 + len(sources.inject(bodies[n])) - len(bodies[n].text)
                for n in kept}  # fmt: skip
    fixed = len(tail) + 1
    # The primary skill (the one chosen for the request as a whole) is served first.
    first = primary if primary in bodies else None
    kept.sort(key=lambda n: n != first)
    while kept and fixed + sum(overhead[n] for n in kept) + MIN_BODY_CHARS * len(kept) > budget:
        kept.pop()  # the plan's last skills give way to its first
    truncated = False
    if sum(overhead[n] + len(bodies[n].text) for n in kept) + fixed > budget:
        available = budget - fixed - sum(overhead[n] for n in kept)
        sizes = {n: len(bodies[n].text) for n in kept}
        if first is not None and first in sizes:
            # Its whole body if it fits beside a minimal share for each other skill.
            room = available - MIN_BODY_CHARS * (len(kept) - 1)
            own = min(sizes.pop(first), room)
            shares = {first: own, **_shares(sizes, available - own)}
        else:
            shares = _shares(sizes, available)
        for n in kept:
            if len(bodies[n].text) > shares[n]:
                fitted = dataclasses.replace(limits, max_skill_body_chars=max(1, shares[n]))
                bodies[n] = sources.load_body(n, limits=fitted)
                truncated = True
    truncated = truncated or any(bodies[n].report.truncated for n in kept)
    kept.sort(key=lambda n: names.index(n))  # shown in plan order
    parts: list[str] = []
    for n in kept:
        parts.append(f"{using_skill(n)}\n{sources.inject(bodies[n])}".rstrip("\n"))
    if tail:
        parts.append(tail)
    text = "\n\n".join(parts)
    if len(text) > budget:  # the loader's fitting note can overshoot by a line
        text = text[: max(0, budget - len(CUT_MARK))].rstrip() + CUT_MARK
        truncated = True
    return TurnContext(
        text=text,
        skills=tuple(kept),
        lines=tuple(using_skill(n) for n in kept),
        diagnostics=diagnostics,
        errors=tuple(errors),
        source=source if kept or diagnostics or reminded else "none",
        truncated=truncated,
        reminded=reminded,
    )


def _shares(sizes: Mapping[str, int], available: int) -> dict[str, int]:
    """Split ``available`` characters: a body smaller than an equal share keeps all of
    it, and what it leaves goes to the longer ones (water-filling)."""
    shares: dict[str, int] = {}
    left = max(0, available)
    pending = sorted(sizes, key=lambda n: sizes[n])
    while pending:
        equal = left // len(pending)
        name = pending[0]
        if sizes[name] <= equal:
            shares[name] = sizes[name]
            left -= sizes[name]
            pending.pop(0)
            continue
        for name in pending:
            shares[name] = equal
        break
    return shares

"""Resolve ``$id`` mentions and activate a skill (seed 004 §3, §4, §7; SPEC I2-I6).

Resolution order per mention (004 §3): exact name -> namespaced exact ``ns:skill`` ->
enabled check -> fuzzy (case-insensitive prefix / substring / initials) that only
suggests. On top of that, ``disable-model-invocation: true`` skills do not activate
from the ``model`` surface.

Several mentions in one turn (004 §4) compose only when that is unambiguous:

1. each mention resolves on its own;
2. the turn's *lead set* is every distinct skill named by a mention that resolved
   exactly and may activate, plus the skill of every single fuzzy suggestion;
3. one skill in the lead set, named exactly (any number of times, by any of its ids)
   -> it activates; its mentions leave the task text;
4. two or more -> "Choose one skill to lead this turn: $a or $b." and nothing activates;
5. no match, ambiguity, disabled, a glob, a model-invocation refusal or a failed body
   load only add a diagnostic: they never activate and never block the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skillrt.config import LoaderLimits
from skillrt.errors import SkillrtError, UsageError
from skillrt.invocation import commands as _commands
from skillrt.invocation import messages
from skillrt.invocation.index import SkillIndex
from skillrt.invocation.results import (
    SURFACES,
    Activation,
    Completion,
    InvocationDiagnostic,
    Resolution,
    Surface,
)
from skillrt.invocation.scanner import Mention, scan_mentions
from skillrt.invocation.tidy import remove_spans
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry
from skillrt.wellformed import well_formed

if TYPE_CHECKING:
    from skillrt.invocation.completion import Completer

#: At most this many distinct ``$ids`` are resolved per message; the rest stay text.
MAX_DISTINCT_MENTIONS = 200


class LoadedBody(Protocol):
    """What a body loader returns (``skillrt.loading.LoadResult`` fits)."""

    @property
    def text(self) -> str: ...

    @property
    def report(self) -> Any: ...


BodyLoader = Callable[[Skill], LoadedBody]


def default_body_loader(
    limits: LoaderLimits | None = None, *, spill_dir: Path | None = None
) -> BodyLoader:
    """The loader's ``load_skill_body`` (seed 003) bound to ``limits``."""
    from skillrt.loading import load_skill_body

    def load(skill: Skill) -> LoadedBody:
        return load_skill_body(skill, limits, spill_dir=spill_dir)

    return load


@dataclass(frozen=True)
class _Outcome:
    """How one mention resolved: activate / suggest a skill index, or a diagnostic."""

    kind: str  # "activate" | "suggest" | "diagnostic" | "skipped"
    index: int = -1
    diagnostic: InvocationDiagnostic | None = None


class InvocationResolver:
    """One resolver for the three surfaces of 004 §4: user, palette, model.

    Args:
        registry: The skills; its enable state is read on every call (never cached).
        load_body: ``skill -> result with .text and .report``; by default the loader's
            ``load_skill_body`` with ``limits``. A load failure becomes a ``LOAD_FAILED``
            diagnostic for that mention.
        limits: Loader limits for the default ``load_body``.
        spill_dir: Where the default loader spills large content.
    """

    def __init__(
        self,
        registry: SkillRegistry,
        *,
        load_body: BodyLoader | None = None,
        limits: LoaderLimits | None = None,
        spill_dir: Path | None = None,
    ) -> None:
        self.registry = registry
        self.index = SkillIndex(registry.skills())
        self._load_body = load_body or default_body_loader(limits, spill_dir=spill_dir)
        self._completer: Completer | None = None

    # -- public -----------------------------------------------------------------------
    def resolve(
        self,
        text: str,
        *,
        surface: Surface = "user",
        apply_commands: bool = False,
        load_body: BodyLoader | None = None,
    ) -> Resolution:
        """Scan ``text``, resolve every mention and ``/skill`` command, activate at most one.

        ``surface`` changes nothing but the event record, except that a
        ``disable-model-invocation`` skill does not activate from ``"model"`` and
        ``/skill enable|disable`` from ``"model"`` is not applied. With
        ``apply_commands`` the commands run (before the mentions resolve, so
        ``/skill enable x`` then ``$x`` works in one message). ``load_body`` replaces
        the resolver's loader for this call (a run that reads each body once).
        """
        t0 = time.perf_counter()
        if surface not in SURFACES:
            raise UsageError(
                f"unknown surface {surface!r}; use one of {', '.join(SURFACES)}",
                surface=surface,
            )
        text = well_formed(text)  # echoed in messages and recorded: it must encode
        mentions = scan_mentions(text)
        commands, diagnostics = _commands.parse_commands(text)
        outcomes = (
            _commands.apply_commands(self.registry, commands, surface=surface)
            if apply_commands
            else ()
        )

        per_mention = self._classify_all(mentions, surface)
        diagnostics.extend(o.diagnostic for o in per_mention if o.diagnostic is not None)
        skipped = sum(o.kind == "skipped" for o in per_mention)
        if skipped:
            diagnostics.append(
                InvocationDiagnostic(
                    messages.TOO_MANY_MENTIONS,
                    messages.too_many_mentions(MAX_DISTINCT_MENTIONS, skipped),
                )
            )
        lead: dict[int, bool] = {}  # skill index -> named exactly (activatable)
        for o in per_mention:
            if o.kind in ("activate", "suggest"):
                lead[o.index] = lead.get(o.index, False) or o.kind == "activate"

        activated: list[Activation] = []
        removed: list[tuple[int, int]] = [(c.start, c.end) for c in commands]
        if len(lead) >= 2:
            ids = [self.index.skills[i].qualified_name for i in lead]
            diagnostics.append(
                InvocationDiagnostic(
                    messages.MULTIPLE_MENTIONS, messages.choose_one(ids), suggestions=tuple(ids)
                )
            )
        elif len(lead) == 1:
            ((i, exact),) = lead.items()
            if exact:
                named = [
                    m
                    for m, o in zip(mentions, per_mention, strict=True)
                    if o.kind == "activate" and o.index == i
                ]
                activation = self._activate(i, named[0], diagnostics, load_body)
                if activation is not None:
                    activated.append(activation)
                    removed.extend((m.start, m.end) for m in named)

        task_text = remove_spans(text, removed) if removed else text
        event = {
            "kind": "invocation",
            "surface": surface,
            "mentions": [m.id for m in mentions],
            "activated": [a.skill for a in activated],
            "diagnostics": [d.code for d in diagnostics],
            "commands": [c.action for c in commands],
            "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
        }
        return Resolution(
            activated=tuple(activated),
            task_text=task_text,
            diagnostics=tuple(diagnostics),
            mentions=tuple(mentions),
            commands=tuple(commands),
            surface=surface,
            event=event,
            command_results=outcomes,
        )

    def complete(
        self, text: str, cursor: int | None = None, *, limit: int = 20
    ) -> list[Completion]:
        """Completions for the partial ``$tok`` (or ``/skill`` argument) under the cursor."""
        if self._completer is None:
            from skillrt.invocation.completion import Completer

            self._completer = Completer(self.index, self.registry.is_enabled)
        return self._completer.complete(text, cursor, limit=limit)

    # -- one mention ------------------------------------------------------------------
    def _classify_all(self, mentions: Sequence[Mention], surface: str) -> list[_Outcome]:
        """Classify each mention; a repeated id is looked up once, and at most
        :data:`MAX_DISTINCT_MENTIONS` distinct ids are resolved (a hostile message full
        of unknown ids must not cost a fuzzy search each)."""
        memo: dict[str, _Outcome] = {}
        out: list[_Outcome] = []
        for m in mentions:
            known = memo.get(m.id)
            if known is None:
                if len(memo) >= MAX_DISTINCT_MENTIONS:
                    out.append(_Outcome("skipped"))
                    continue
                known = memo[m.id] = self._classify(m, surface)
                out.append(known)
            elif known.diagnostic is not None:
                diag = replace(known.diagnostic, mention_id=m.id, start=m.start, end=m.end)
                out.append(replace(known, diagnostic=diag))
            else:
                out.append(known)
        return out

    def _classify(self, m: Mention, surface: str) -> _Outcome:
        if m.glob:
            return _diag(messages.GLOB_NOT_SUPPORTED, m, self._glob_message(m))
        found = self.index.lookup(m.id)
        skills = self.index.skills
        if found.kind == "exact":
            i = found.indices[0]
            skill = skills[i]
            qn = skill.qualified_name
            if not self.registry.is_enabled(skill):
                return _diag(messages.DISABLED, m, messages.disabled(qn), (qn,))
            if surface == "model" and skill.disable_model_invocation:
                return _diag(
                    messages.MODEL_INVOCATION_DISABLED, m, messages.model_invocation_disabled(qn)
                )
            return _Outcome("activate", i)
        if found.kind == "ambiguous":
            ids = self._ranked_ids(found.indices)
            return _diag(messages.AMBIGUOUS, m, messages.ambiguous(m.id, ids), tuple(ids))
        hits = self.index.fuzzy(m.id)
        if not hits.indices:
            return _diag(messages.NO_MATCH, m, messages.no_match(m.id))
        ids = [skills[i].qualified_name for i in hits.indices]
        if len(ids) == 1 and not hits.truncated:
            out = _diag(
                messages.FUZZY_SUGGESTION, m, messages.fuzzy_suggestion(m.id, ids[0]), (ids[0],)
            )
            return _Outcome("suggest", hits.indices[0], out.diagnostic)
        message = messages.ambiguous(m.id, ids, more=hits.truncated)
        return _diag(messages.AMBIGUOUS, m, message, tuple(ids))

    def _activate(
        self,
        i: int,
        mention: Mention,
        diagnostics: list[InvocationDiagnostic],
        load_body: BodyLoader | None = None,
    ) -> Activation | None:
        skill = self.index.skills[i]
        qn = skill.qualified_name
        try:
            loaded = (load_body or self._load_body)(skill)
        except (SkillrtError, OSError, UnicodeError) as exc:
            code = exc.code if isinstance(exc, SkillrtError) else type(exc).__name__
            detail = exc.message if isinstance(exc, SkillrtError) else str(exc)
            diagnostics.append(
                InvocationDiagnostic(
                    messages.LOAD_FAILED,
                    messages.load_failed(qn, code, detail),
                    mention.id,
                    start=mention.start,
                    end=mention.end,
                )
            )
            return None
        return Activation(
            skill=qn,
            injection=_injection(skill, loaded),
            mention=mention,
            line=messages.using_skill(qn),
            body=loaded.text,
            load_report=loaded.report,
            allowed_tools=skill.allowed_tools,
            allowed_tools_enforced=False,
            tools_line=messages.allowed_tools(skill.allowed_tools),
            description=skill.description,
        )

    def _ranked_ids(self, indices: Sequence[int]) -> list[str]:
        skills = self.index.skills
        ordered = sorted(indices, key=lambda i: skills[i].qualified_name)
        return [skills[i].qualified_name for i in ordered]

    def _glob_message(self, m: Mention) -> str:
        example = None
        if m.namespace:
            for i in self.index.prefix(m.namespace.lower() + ":"):
                if self.registry.is_enabled(self.index.skills[i]):
                    example = self.index.skills[i].qualified_name
                    break
        return messages.glob_not_supported(m.id, example)


def _diag(code: str, m: Mention, message: str, suggestions: tuple[str, ...] = ()) -> _Outcome:
    return _Outcome(
        "diagnostic",
        diagnostic=InvocationDiagnostic(code, message, m.id, suggestions, start=m.start, end=m.end),
    )


def _injection(skill: Skill, loaded: LoadedBody) -> str:
    """The seed 003 §6 block for a real load; the bare text for a custom loader's result."""
    from skillrt.loading import LoadResult, injection_block

    if isinstance(loaded, LoadResult):
        return injection_block(skill, loaded)
    return loaded.text

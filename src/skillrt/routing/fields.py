"""A skill's body as the router reads it: sections split at headings, within caps.

Real skills say most of what they do in their body: steps, tools, file types, errors
and situations. The router reads the body (through the loader's path jail), splits it at
headings of levels 1-3 (the text before the first heading is a section of its own; a
fenced code block stays with its section, since headings inside fences are not headings),
collapses whitespace, and keeps at most :data:`MAX_SECTIONS` sections of at most
:data:`MAX_SECTION_CHARS` characters each, in document order. The caps bound the cost of
a skill whatever its size: one vector per section, a bounded lexical field. They were
chosen by measurement on the real-skills dev split (docs/routing.md).

A skill without a SKILL.md (a JSONL catalogue line without ``path``), or whose body
cannot be read, simply has no sections: the router then routes it on its name,
description, examples and triggers, as before.

:class:`SkillFields` is everything the router derives from one skill's text: the sections
and the terms of each lexical field. :func:`load_fields` caches it in the store under a
key of the skill's identity and its SKILL.md's size and mtime, so an unchanged skill is
never read, split or tokenised again (only changed skills cost anything).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillrt.errors import SkillrtError, StoreError
from skillrt.routing.text import identifier_words, terms

if TYPE_CHECKING:
    from skillrt.routing.vector_cache import BuildProgress
    from skillrt.skills.model import Skill
    from skillrt.store.base import Store

__all__ = [
    "FIELD_NAMES",
    "MAX_SECTIONS",
    "MAX_SECTION_CHARS",
    "EMBED_RECIPE",
    "BodySection",
    "BodyWarning",
    "SkillFields",
    "load_fields",
    "prose",
    "read_sections",
    "skill_fields",
    "split_sections",
]

#: Sections kept per skill (the first ones, in document order).
MAX_SECTIONS = 12
#: Characters kept per section (a 256-token encoder reads about 1,000).
MAX_SECTION_CHARS = 600
#: Heading levels that start a section (deeper headings stay inside theirs).
MAX_LEVEL = 3
_SPACE = re.compile(r"\s+")
#: The lexical fields, in :attr:`SkillFields.field_terms` order.
FIELD_NAMES = ("name", "description", "examples", "body")
#: Bump when what is derived from a skill changes: old cache rows are then ignored.
FIELDS_RECIPE = f"fields-v2:{MAX_SECTIONS}:{MAX_SECTION_CHARS}:{MAX_LEVEL}"


class BodyWarning(UserWarning):
    """A skill's body could not be read for routing (it is routed without it)."""


@dataclass(frozen=True)
class BodySection:
    """One section of a skill body: its heading ("" before the first) and its text."""

    heading: str
    text: str

    @property
    def embed_text(self) -> str:
        """What the section's vector embeds: the heading, then the text without its
        fenced code blocks (:func:`prose`)."""
        text = prose(self.text) or ("" if self.heading else self.text)
        return f"{self.heading}: {text}" if self.heading and text else (self.heading or text)


_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
#: What the embedded text of a section is made of; part of the index snapshot's key.
EMBED_RECIPE = "prose-v1"


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (white space collapsed).

    A section's code is a third of the tokens a catalogue's sections embed (real skills
    on the dev split), and a sentence encoder says little about code: without it the
    sections' vectors route the dev requests as well (top-1 equal, top-3 0.7 points
    up) at three quarters of the cost (docs/performance.md). The lexical field keeps the
    code: an identifier or a command is a word a request may use.
    """
    return " ".join(_FENCE.sub(" ", text).split())


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    return text[: cut if cut > limit // 2 else limit]


def split_sections(
    body: str,
    *,
    max_sections: int = MAX_SECTIONS,
    max_chars: int = MAX_SECTION_CHARS,
) -> tuple[BodySection, ...]:
    """The body's sections (see the module docstring), within the caps."""
    from skillrt.loading.sections import scan_headings

    headings = [h for h in scan_headings(body) if h.level <= MAX_LEVEL]
    spans: list[tuple[str, int, int]] = []
    start = headings[0].start if headings else len(body)
    spans.append(("", 0, start))
    for k, h in enumerate(headings):
        end = headings[k + 1].start if k + 1 < len(headings) else len(body)
        spans.append((h.text.strip(), h.end, end))
    out: list[BodySection] = []
    for heading, a, b in spans:
        if len(out) >= max_sections:
            break
        # Only what is kept is normalised: a huge section costs its cap, not its size.
        raw = body[a : min(b, a + 4 * max_chars)]
        text = _clip(_SPACE.sub(" ", raw).strip(), max_chars)
        heading = _clip(_SPACE.sub(" ", heading), 200)
        if text or heading:
            out.append(BodySection(heading, text))
    return tuple(out)


def read_sections(
    skills: Sequence[Skill],
    *,
    max_sections: int = MAX_SECTIONS,
    max_chars: int = MAX_SECTION_CHARS,
) -> list[tuple[BodySection, ...]]:
    """Each skill's body sections (empty for a skill without a readable SKILL.md).

    Bodies are read through the loader (path jail, size limit, text only). A body that
    cannot be read is reported as a :class:`BodyWarning` and routed without; it never
    fails the catalogue.
    """
    from skillrt.loading.loader import read_skill_body

    out: list[tuple[BodySection, ...]] = []
    for skill in skills:
        if skill.skill_file is None:
            out.append(())
            continue
        try:
            body = read_skill_body(skill).text
        except SkillrtError as exc:
            warnings.warn(
                f"{skill.qualified_name}: body not read for routing ({exc.code}: {exc})",
                BodyWarning,
                stacklevel=2,
            )
            out.append(())
            continue
        out.append(split_sections(body, max_sections=max_sections, max_chars=max_chars))
    return out


@dataclass(frozen=True)
class SkillFields:
    """What the router derives from one skill's text (see the module docstring)."""

    sections: tuple[BodySection, ...] = ()
    #: Terms of each lexical field, in :data:`FIELD_NAMES` order.
    field_terms: tuple[tuple[str, ...], ...] = ((), (), (), ())

    def to_json(self) -> str:
        # A field's terms joined by spaces (a term never holds white space): a cold
        # route parses a thousand of these, and split() is several times faster than
        # decoding JSON lists.
        return json.dumps(
            {
                "sections": [[s.heading, s.text] for s in self.sections],
                "terms": [" ".join(f) for f in self.field_terms],
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> SkillFields | None:
        """The fields of a cache row, or None when the row is not of this shape."""
        try:
            data = json.loads(text)
            sections = tuple(BodySection(str(h), str(t)) for h, t in data["sections"])
            field_terms = tuple(tuple(f.split()) for f in data["terms"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        if len(field_terms) != len(FIELD_NAMES):
            return None
        return cls(sections, field_terms)


def skill_fields(skill: Skill, sections: Sequence[BodySection]) -> SkillFields:
    """The fields of ``skill`` whose body has ``sections``."""
    extra: list[str] = []
    for text in (*skill.routing.examples, *skill.routing.triggers):
        extra += terms(text)
    body: list[str] = []
    for section in sections:
        body += terms(f"{section.heading} {section.text}")
    return SkillFields(
        tuple(sections),
        (
            tuple(terms(identifier_words(skill.name), keep_stopwords=True)),
            tuple(terms(skill.description)),
            tuple(extra),
            tuple(body),
        ),
    )


def fields_key(skill: Skill) -> str:
    """The cache key of a skill's fields: its identity, its SKILL.md stat, the recipe."""
    stamp = ""
    if skill.skill_file is not None:
        try:
            st = os.stat(skill.skill_file)
            stamp = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
        except OSError:
            stamp = "missing"
    data = "\0".join(
        (
            FIELDS_RECIPE,
            skill.qualified_name,
            skill.content_hash,
            skill.description,
            str(skill.skill_file or ""),
            stamp,
            *skill.routing.examples,
            *skill.routing.triggers,
        )
    )
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def load_fields(
    skills: Sequence[Skill],
    store: Store | None = None,
    *,
    progress: BuildProgress | None = None,
    keys: Sequence[str] | None = None,
) -> list[SkillFields]:
    """Each skill's fields: from the store's cache, or derived (and then cached).

    ``keys``: the skills' :func:`fields_key` when the caller has them already. A store
    that cannot be read or written costs time, never the route (a warning).
    """
    keys = [fields_key(s) for s in skills] if keys is None else list(keys)
    cached: dict[str, SkillFields] = {}
    if store is not None and keys:
        cached = _cached_fields(store, keys)
    missing = [n for n, k in enumerate(keys) if k not in cached]
    fresh: dict[str, SkillFields] = {}
    if missing:
        sections = read_sections([skills[n] for n in missing])
        for done, (n, secs) in enumerate(zip(missing, sections, strict=True), start=1):
            fresh[keys[n]] = skill_fields(skills[n], secs)
            if progress is not None:
                progress("reading skills", done, len(missing))
        if store is not None:
            _save_fields(store, fresh)
    return [cached.get(k) or fresh[k] for k in keys]


def _cached_fields(store: Store, keys: Sequence[str]) -> dict[str, SkillFields]:
    out: dict[str, SkillFields] = {}
    try:
        records = store.field_cache.get(keys)
    except StoreError as exc:
        warnings.warn(f"cannot read cached routing fields ({exc})", BodyWarning, stacklevel=3)
        return out
    for key, record in records.items():
        fields = SkillFields.from_json(record)
        if fields is not None:
            out[key] = fields
    return out


def _save_fields(store: Store, fresh: dict[str, SkillFields]) -> None:
    rows = [(k, f.to_json()) for k, f in fresh.items()]
    try:
        store.field_cache.put(rows, at=time.time())
    except StoreError as exc:
        warnings.warn(f"cannot cache routing fields ({exc})", BodyWarning, stacklevel=3)

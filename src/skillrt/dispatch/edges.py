"""Classify every skill reference in a skill's body (seed 000 §3).

Only ``requires_now`` edges may run automatically; anything not labelled is
``reference_only`` (000 §3's default). The rules, in the order they apply:

* **Code is not prose.** Fenced code blocks (```` ``` ```` / ``~~~``) and HTML comments
  are skipped entirely: they hold templates, diagrams and shell, where a skill name is
  an example, not a reference. A name inside inline code (`` `x` ``) *is* a reference,
  but a marker inside inline code (`` `**REQUIRED SUB-SKILL:** Use x` ``, an example
  of the syntax) labels nothing.
* **requires_now**: a ``REQUIRED SUB-SKILL`` marker (any case, bold or not, ``SUB-SKILL``
  / ``SUBSKILL`` / ``SUB SKILL``, or an upper-case ``REQUIRED SKILL:``) labels every
  skill named after it up to the end of its sentence. Names joined by "or" are
  alternatives: the dispatcher runs the first one that may run.
* **requires_later**: "after this (skill) completes, use x", "then use x", "once
  (this is) complete, use x", "next, use x", "when this completes, use x" (also with
  invoke / run / load / continue with / hand off to / switch to), and ``完成后使用 x``;
  the phrase labels the names after it up to the end of its sentence. "x is the next
  step" labels the name before it.
* **reference_only**: ``REQUIRED BACKGROUND`` (marker ``required-background``) and every
  other mention (marker ``mention``).
* **What counts as a name**: a token that resolves in the registry. ``ns:x`` resolves to
  ``ns:x``, else to the un-namespaced ``x``, else to the only ``x`` there is; a bare
  ``x`` prefers the source skill's own namespace. A token that is part of a path
  (``../x/file.md``, ``skills/x``) or a file name (``x.md``) is not a mention. A name with
  no hyphen or digit (``brainstorming``) is an ordinary word too, so it counts only when
  namespaced, ``$``-prefixed, in inline code, followed by "skill", or labelled by a marker.
* **One edge per (source, target)**, the strongest type wins (now > later > reference),
  keeping the line of its first occurrence. A skill mentioning itself is no edge,
  unless a marker labels it (so a self-loop ``requires_now`` is kept for the guards to
  block).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from skillrt.config import LoaderLimits
from skillrt.loading.loader import RawBody, read_skill_body
from skillrt.skills.frontmatter import normalise_text
from skillrt.skills.model import Skill

EdgeType = Literal["requires_now", "requires_later", "reference_only"]
EDGE_TYPES: tuple[EdgeType, ...] = ("requires_now", "requires_later", "reference_only")
_RANK: dict[EdgeType, int] = {"requires_now": 2, "requires_later": 1, "reference_only": 0}


@dataclass(frozen=True)
class SkillEdge:
    """One reference from ``source`` to ``target`` (qualified names) and its type."""

    source: str
    target: str
    type: EdgeType
    #: What labelled it: ``required-sub-skill``, ``required-background``, the
    #: requires_later phrase (``after-completes``, ``then-use``, ``once-complete``,
    #: ``next-use``, ``when-completes``, ``zh-after``, ``next-step``), or ``mention``.
    marker: str
    #: 1-based line in SKILL.md of the occurrence that decided the type.
    line: int
    #: The name as written (``superpowers:executing-plans``, ``$x``-less).
    mention: str
    #: That line, trimmed (evidence for people).
    context: str
    #: Other targets offered with "or" in the same directive (requires_now only).
    alternatives: tuple[str, ...] = ()

    @property
    def executable(self) -> bool:
        return self.type == "requires_now"


# -- masking ---------------------------------------------------------------------------
_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _blank(text: str) -> str:
    """Same length, newlines kept, everything else a space."""
    return re.sub(r"[^\n]", " ", text)


def mask_code(body: str) -> str:
    """``body`` with fenced code blocks and HTML comments blanked (offsets preserved)."""
    out: list[str] = []
    fence: tuple[str, int] | None = None
    for line in body.splitlines(keepends=True):
        stripped = line.rstrip("\n")
        if fence is None:
            m = _FENCE_OPEN.match(stripped)
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence = (m.group(2)[0], len(m.group(2)))
                out.append(_blank(line))
                continue
            out.append(line)
        else:
            close = re.match(r"^ {0,3}(`{3,}|~{3,})\s*$", stripped)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]:
                fence = None
            out.append(_blank(line))
    text = "".join(out)
    return _HTML_COMMENT.sub(lambda m: _blank(m.group(0)), text)


def mask_inline_code(text: str) -> str:
    """``text`` with inline code spans blanked (for finding markers)."""
    return _INLINE_CODE.sub(lambda m: _blank(m.group(0)), text)


def _inline_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _INLINE_CODE.finditer(text)]


# -- markers and phrases ---------------------------------------------------------------
_NOW = re.compile(
    r"(?i:required)[ \t_-]*(?i:sub)[ \t_-]*(?i:skills?)\b|\bREQUIRED[ \t]+SKILLS?\b(?=\**\s*:)"
)
_BACKGROUND = re.compile(r"(?i:required)[ \t_-]*(?i:background)\b")
_VERB = r"(?:use|invoke|run|load|apply|continue\s+with|hand\s+(?:it\s+)?off\s+to|switch\s+to)\b"
_DONE = (
    r"(?:completes|finishes|ends|is\s+(?:complete|completed|done|finished)"
    r"|has\s+(?:completed|finished))"
)
_LATER: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "after-completes",
        re.compile(
            rf"\bafter\s+(?:this|that|the|it)\s+(?:(?:skill|phase|step|task|work|plan)\s+)?"
            rf"{_DONE}\s*[,:]?\s*{_VERB}",
            re.IGNORECASE,
        ),
    ),
    (
        "when-completes",
        re.compile(
            rf"\bwhen\s+(?:this|that|it)\s+(?:(?:skill|phase|step|task)\s+)?{_DONE}\s*[,:]?\s*{_VERB}",
            re.IGNORECASE,
        ),
    ),
    (
        "once-complete",
        re.compile(
            r"\bonce\s+(?:(?:this|that|it|the\s+\w+)\s+(?:skill\s+)?(?:is\s+|has\s+)?)?"
            rf"(?:complete|completed|done|finished)\s*[,:]?\s*(?:then\s+)?{_VERB}",
            re.IGNORECASE,
        ),
    ),
    ("then-use", re.compile(rf"\bthen\s*,?\s*{_VERB}", re.IGNORECASE)),
    ("next-use", re.compile(rf"\bnext\s*[,:]?\s*{_VERB}", re.IGNORECASE)),
    (
        "zh-after",
        re.compile(r"完成(?:后|後)\s*[，,]?\s*再?\s*(?:使用|执行|執行|调用|調用|运行|運行)"),
    ),
)
# Sentence ends: . ! ? ; (or CJK 。！？；) before a space/end, a blank line, or a new
# block (list item, heading, quote, table row) on the next line.
_SENTENCE_END = re.compile(
    r"[.!?;](?=\s|$)|[。！？；]|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|#|>|\|))"
)
_OR_GAP = re.compile(
    r"^[\s`*_\"'$]*(?:\([^()\n]{0,40}\)[\s`*_\"']*)?,?\s*(?:or|either)\s+(?:use\s+|invoke\s+)?"
    r"(?:the\s+)?[\s`*_\"'$]*$",
    re.IGNORECASE,
)

# A candidate name: optional namespace, then a name; not part of a path, a file name,
# an identifier, an e-mail address or a URL.
_TOKEN = re.compile(
    r"(?<![\w/\\.@:-])(\$?)((?:[\w][\w.-]*:)?[\w]+(?:-[\w]+)*)"
    r"(?![\w/\\-]|\.[A-Za-z0-9]{1,5}\b|:[\w/])"
)
_SKILL_WORD = re.compile(r"^[`*_\"']*\s+(?:skill|skills)\b", re.IGNORECASE)
# "x is the next step": a requires_later phrase that follows the name.
_NEXT_STEP = re.compile(
    r"^[`*_\"']*\s+(?:skill\s+)?is\s+(?:the\s+)?next\s+(?:step|phase|skill)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class _Label:
    type: EdgeType
    marker: str
    start: int
    end: int  # end of its scope (sentence end)
    directive_start: int  # where the labelled text begins (after the marker/phrase)


def _sentence_end(boundaries: list[int], pos: int, limit: int) -> int:
    i = bisect.bisect_right(boundaries, pos)
    return boundaries[i] if i < len(boundaries) else limit


def _labels(prose: str, boundaries: list[int]) -> list[_Label]:
    labels: list[_Label] = []
    n = len(prose)
    for m in _NOW.finditer(prose):
        labels.append(
            _Label(
                "requires_now",
                "required-sub-skill",
                m.start(),
                _sentence_end(boundaries, m.end(), n),
                m.end(),
            )
        )
    for m in _BACKGROUND.finditer(prose):
        labels.append(
            _Label(
                "reference_only",
                "required-background",
                m.start(),
                _sentence_end(boundaries, m.end(), n),
                m.end(),
            )
        )
    for marker, pattern in _LATER:
        for m in pattern.finditer(prose):
            labels.append(
                _Label(
                    "requires_later",
                    marker,
                    m.start(),
                    _sentence_end(boundaries, m.end(), n),
                    m.end(),
                )
            )
    return labels


def _label_for(labels: list[_Label], pos: int) -> _Label | None:
    """The label whose scope covers ``pos``: the nearest marker before it wins."""
    best: _Label | None = None
    for label in labels:
        if label.directive_start <= pos < label.end and (best is None or label.start > best.start):
            best = label
    return best


# -- resolution ------------------------------------------------------------------------
class NameIndex:
    """Resolves mentions to qualified skill names (built once per registry)."""

    def __init__(self, skills: Iterable[Skill]) -> None:
        self.qualified: dict[str, Skill] = {}
        self.bare: dict[str, list[Skill]] = {}
        for skill in skills:
            self.qualified[skill.qualified_name] = skill
            self.bare.setdefault(skill.name, []).append(skill)

    def resolve(self, token: str, source_namespace: str | None = None) -> str | None:
        """The qualified name ``token`` refers to, or None."""
        if ":" in token:
            if token in self.qualified:
                return token
            _, _, name = token.rpartition(":")
            plain = self.qualified.get(name)
            if plain is not None and plain.namespace is None:
                return plain.qualified_name
            candidates = self.bare.get(name, [])
            return candidates[0].qualified_name if len(candidates) == 1 else None
        matches = self.bare.get(token)
        if not matches:
            return None
        if len(matches) == 1:
            return matches[0].qualified_name
        for skill in matches:
            if skill.namespace == source_namespace:
                return skill.qualified_name
        for skill in matches:
            if skill.namespace is None:
                return skill.qualified_name
        return None


# -- extraction ------------------------------------------------------------------------
@dataclass
class _Hit:
    target: str
    mention: str
    start: int
    end: int
    label: _Label | None


def extract_edges(
    source: str,
    body: str,
    resolve: Callable[[str], str | None],
    *,
    body_line: int = 1,
) -> tuple[SkillEdge, ...]:
    """Every edge from skill ``source`` found in ``body`` (frontmatter already removed).

    ``resolve`` maps a token as written to a qualified name (or None: not a skill);
    ``body_line`` is the file line the body starts on (for the ``line`` field).
    """
    body = normalise_text(body)
    text = mask_code(body)
    prose = mask_inline_code(text)
    spans = _inline_spans(text)
    boundaries = [m.start() for m in _SENTENCE_END.finditer(prose)]
    labels = _labels(prose, boundaries)
    hits: list[_Hit] = []
    for m in _TOKEN.finditer(text):
        dollar, token = m.group(1), m.group(2)
        if not any(c.isalpha() for c in token):
            continue
        target = resolve(token)
        if target is None:
            continue
        start = m.start(2)
        label = _label_for(labels, start)
        if label is None and _NEXT_STEP.match(prose[m.end() : m.end() + 40]):
            label = _Label("requires_later", "next-step", start, m.end(), start)
        if (
            ":" not in token
            and not dollar
            and "-" not in token
            and not any(c.isdigit() for c in token)
        ):
            in_code = any(a <= start < b for a, b in spans)
            labelled = label is not None and label.marker != "required-background"
            if not (in_code or labelled or _SKILL_WORD.match(text[m.end() : m.end() + 12])):
                continue  # an ordinary word, not a reference
        if target == source and (label is None or label.type == "reference_only"):
            continue
        hits.append(_Hit(target, token, start, m.end(), label))
    groups = _alternatives(hits, text)
    lines = body.split("\n")
    line_starts = [0]
    for line in lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)
    best: dict[str, SkillEdge] = {}
    order: list[str] = []
    for i, hit in enumerate(hits):
        edge_type: EdgeType = hit.label.type if hit.label is not None else "reference_only"
        marker = hit.label.marker if hit.label is not None else "mention"
        alts = (
            tuple(t for t in groups.get(i, ()) if t != hit.target)
            if edge_type == "requires_now"
            else ()
        )
        line_no = bisect.bisect_right(line_starts, hit.start) - 1
        line_text = lines[line_no]
        edge = SkillEdge(
            source=source,
            target=hit.target,
            type=edge_type,
            marker=marker,
            line=body_line + line_no,
            mention=hit.mention,
            context=_trim(line_text),
            alternatives=alts,
        )
        prev = best.get(hit.target)
        if prev is None:
            order.append(hit.target)
            best[hit.target] = edge
        elif _RANK[edge.type] > _RANK[prev.type]:
            best[hit.target] = edge
    return tuple(best[t] for t in order)


def _alternatives(hits: list[_Hit], text: str) -> dict[int, tuple[str, ...]]:
    """Hits in one requires_now directive joined by "or" form an alternatives group."""
    groups: dict[int, tuple[str, ...]] = {}
    i = 0
    while i < len(hits):
        j = i
        label = hits[i].label
        while (
            label is not None
            and label.type == "requires_now"
            and j + 1 < len(hits)
            and hits[j + 1].label is label
            and _OR_GAP.match(text[hits[j].end : hits[j + 1].start])
        ):
            j += 1
        if j > i:
            members = tuple(h.target for h in hits[i : j + 1])
            for k in range(i, j + 1):
                groups[k] = members
        i = j + 1
    return groups


def _trim(line: str, limit: int = 200) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


class EdgeIndex:
    """Edges of every skill in a registry, computed on demand and cached by content."""

    def __init__(self, skills: Iterable[Skill], *, max_bytes: int = 10_000_000) -> None:
        self._skills: Mapping[str, Skill] = {s.qualified_name: s for s in skills}
        self.names = NameIndex(self._skills.values())
        self._limits = LoaderLimits(max_skill_file_bytes=max_bytes)
        self._cache: dict[tuple[str, str], tuple[SkillEdge, ...]] = {}
        self._lock = threading.Lock()

    def edges(self, skill: Skill | str, body: RawBody | None = None) -> tuple[SkillEdge, ...]:
        """The edges of one skill (qualified name or Skill); () for catalogue entries.

        Edges come from the whole body (not the limits-fitted one a model gets), so a
        truncated body never hides a sub-skill edge. ``body`` is that body when the caller
        has read it already; otherwise it is read here, through the loader's path jail.
        """
        if isinstance(skill, str):
            found = self._skills.get(skill)
            if found is None:
                from skillrt.errors import SkillNotFound

                raise SkillNotFound(f"No skill named '{skill}'", name=skill)
            skill = found
        key = (skill.qualified_name, skill.content_hash)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        if skill.skill_file is None:
            result: tuple[SkillEdge, ...] = ()
        else:
            raw = body if body is not None else read_skill_body(skill, self._limits)
            ns = skill.namespace
            result = extract_edges(
                skill.qualified_name,
                raw.text,
                lambda tok: self.names.resolve(tok, ns),
                body_line=raw.body_line,
            )
        with self._lock:
            self._cache[key] = result
        return result

    def all_edges(self) -> tuple[SkillEdge, ...]:
        """Every edge of every skill, sources in registry order."""
        out: list[SkillEdge] = []
        for skill in self._skills.values():
            out.extend(self.edges(skill))
        return tuple(out)

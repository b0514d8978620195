"""The user's explicit words about skills: hard triggers and exclusions (seed 001 §6.1, §9).

* ``$name`` mentions, found by the invocation scanner (never inside code), and phrasing
  such as "use the X skill", "with the X skill", "run X skill", "用 X skill", "使用X技能"
  name a skill to force.
* "don't use X", "do not use the X skill", "without X", "不要用 X" exclude it.

X must be a skill's exact name (bare or ``ns:name``; spaces may stand for hyphens).
An exclusion beats a force of the same skill: the user's negative words are the most
specific instruction there is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from skillrt.routing.text import normalise

__all__ = ["Directives", "find_directives", "name_key"]

_OPEN_QUOTE = r"[`'\"“‘「『]?"
_CLOSE_QUOTE = r"[`'\"”’」』]?"
_DET = r"(?:(?:the|a|an|this|that|my|our|your)\s+)?"
_NAME = r"(?P<x>[^\W_][\w:./-]*(?:[ ][^\W_][\w:./-]*){0,5}?)"
_ONE_NAME = r"(?P<x>[^\W_][\w:./-]*)"
_SKILL = r"(?:skill(?!\w)|技能)"
_USE = (
    r"(?:(?<!\w)(?:use|using|with|via|run|invoke|apply|call|load|activate|try)\s+"
    r"|(?:用|使用|调用|运行|启用)\s*)"
)

_FORCE = re.compile(rf"{_USE}{_DET}{_OPEN_QUOTE}{_NAME}{_CLOSE_QUOTE}\s*{_SKILL}")
_NEGATION = (
    r"(?:(?<!\w)(?:don'?t|do\s+not|does\s+not|doesn'?t|never|avoid|stop|no\s+need\s+to|please\s+don'?t)"
    r"\s+(?:use|using|run|invoke|call|apply|load|try)\s+"
    r"|(?<!\w)(?:without|not)\s+(?:using\s+|the\s+|any\s+)*"
    r"|不要用|不要使用|别用|不用|不使用|禁用|不要调用)"
)
_EXCLUDE_SKILL = re.compile(
    rf"{_NEGATION}\s*{_DET}{_OPEN_QUOTE}{_NAME}{_CLOSE_QUOTE}\s*{_SKILL}",
)
_EXCLUDE_NAME = re.compile(rf"{_NEGATION}\s*{_DET}{_OPEN_QUOTE}{_ONE_NAME}{_CLOSE_QUOTE}")


@dataclass(frozen=True)
class Directives:
    """Skills the user forced or excluded, by qualified name, with the words used."""

    forced: dict[str, str] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)
    #: ``$ids`` that resolved to no skill (reported in the routing reason).
    unknown_mentions: tuple[str, ...] = ()


def name_key(name: str) -> str:
    """Lookup key for a skill name as a user may type it: lowercase, spaces -> hyphens."""
    return re.sub(r"[\s_]+", "-", normalise(name).strip())


def find_directives(
    query: str,
    resolve: Callable[[str], str | None],
    *,
    mentions: Callable[[str], list[tuple[str, str]]] | None = None,
) -> Directives:
    """Explicit forces and exclusions in ``query``.

    ``resolve(key)`` maps a :func:`name_key` to a qualified skill name or None.
    ``mentions(query)`` returns ``(raw, id)`` pairs of ``$`` mentions; by default the
    invocation scanner is used when installed, else a plain ``$name`` pattern.
    """
    forced: dict[str, str] = {}
    excluded: dict[str, str] = {}
    unknown: list[str] = []
    scan = mentions or _scan_mentions
    for raw, ident in scan(query):
        qn = resolve(name_key(ident))
        if qn is None:
            unknown.append(raw)
        else:
            forced.setdefault(qn, raw)
    norm = normalise(query)
    for m in _FORCE.finditer(norm):
        qn = _resolve_capture(m.group("x"), resolve)
        if qn is not None:
            forced.setdefault(qn, m.group(0).strip())
    for pattern in (_EXCLUDE_SKILL, _EXCLUDE_NAME):
        for m in pattern.finditer(norm):
            qn = _resolve_capture(m.group("x"), resolve)
            if qn is not None:
                excluded.setdefault(qn, m.group(0).strip())
    for qn in excluded:
        forced.pop(qn, None)
    return Directives(forced, excluded, tuple(unknown))


def _resolve_capture(text: str, resolve: Callable[[str], str | None]) -> str | None:
    text = text.strip().rstrip(".:/-")
    return resolve(name_key(text)) if text else None


_PLAIN_MENTION = re.compile(r"(?<![\w$\\=/@])\$(?P<id>[a-z0-9][\w:.-]*[\w])")


def _scan_mentions(query: str) -> list[tuple[str, str]]:
    if "$" not in query:
        return []
    try:
        from skillrt.invocation.scanner import scan_mentions
    except ImportError:  # the invocation package is optional for the router
        return [(m.group(0), m.group("id")) for m in _PLAIN_MENTION.finditer(query)]
    return [(m.raw, m.id) for m in scan_mentions(query) if not getattr(m, "glob", False)]


def build_resolver(names: Mapping[str, str]) -> Callable[[str], str | None]:
    """A resolver over ``{name_key: qualified name}``; ambiguous bare names map to ""."""

    def resolve(key: str) -> str | None:
        qn = names.get(key)
        return qn or None

    return resolve

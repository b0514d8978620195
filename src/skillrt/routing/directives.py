"""The user's explicit words about skills: hard triggers and exclusions (seed 001 §6.1, §9).

* ``$name`` mentions, found by the invocation scanner (never inside code), and phrasing
  such as "use the X skill", "with the X skill", "run X skill", "用 X skill", "使用X技能"
  name a skill to force.
* A skill's name of two words or more needs no "skill" after it: "use systematic
  debugging to find why the login test fails", "do test driven development on the
  parser", "apply the writing plans process" force it (seed 001 §6.1's "明确使用 X"). The
  name may be written with spaces or as a close variant (each word through the router's
  light stemmer: "writing plan" for ``writing-plans``). A one-word name ("use docker")
  is an everyday word and still needs "skill" or ``$``; a question ("should I use test
  driven development here?") asks about the process, it does not ask for it; nor does a
  document of over 2,000 characters (a pasted system prompt telling an agent to "use the
  send_message function").
* "don't use X", "do not use the X skill", "without X", "不要用 X" exclude it (a name of
  two words or more needs no "skill" here either).

X must be a skill's name (bare or ``ns:name``; spaces may stand for hyphens). An
exclusion beats a force of the same skill: the user's negative words are the most
specific instruction there is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from skillrt.routing.text import identifier_words, normalise, stem

__all__ = ["Directives", "find_directives", "name_key", "variant_key"]

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
#: A verb that asks for a named process without the word "skill" after it (a name of
#: two words or more: see the module docstring).
#: "do" takes no article: "do test driven development" names the process, "do a code
#: review" is the everyday noun.
_NAMED_USE = re.compile(
    r"(?:(?<!\w)(?:use|using|apply|applying|follow|following|run|invoke|try)\s+(?:the\s+)?"
    rf"|(?<!\w)do\s+|(?:用|使用|调用|运行|启用)\s*){_OPEN_QUOTE}",
)
_NAMED_NEGATION = re.compile(
    r"(?:(?<!\w)(?:don'?t|do\s+not|does\s+not|doesn'?t|never|avoid|stop|no\s+need\s+to"
    r"|without|not)\s+|不要|别|不)\s*$"
)
_NAME_WORD = re.compile(r"[^\W_][\w:./-]*")
#: Words of a name read after a verb, at most.
MAX_NAME_WORDS = 6
#: A message longer than this is a document (a pasted prompt, a spec) read for what it is
#: about: its "use X" are not the user's words to the router (the word "skill" still is).
MAX_NAMED_USE_CHARS = 2_000


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


def variant_key(text: str) -> str:
    """The key of a name of two words or more as a user may write it: its words in
    order, each through the light stemmer ("Writing Plan", ``writing_plans`` ->
    ``writ-plan``); "" for a name of one word."""
    parts = [stem(normalise(w)) for w in identifier_words(text).split() if w]
    return "-".join(parts) if len(parts) > 1 else ""


def find_directives(
    query: str,
    resolve: Callable[[str], str | None],
    *,
    mentions: Callable[[str], list[tuple[str, str]]] | None = None,
    resolve_variant: Callable[[str], str | None] | None = None,
) -> Directives:
    """Explicit forces and exclusions in ``query``.

    ``resolve(key)`` maps a :func:`name_key` to a qualified skill name or None.
    ``mentions(query)`` returns ``(raw, id)`` pairs of ``$`` mentions; by default the
    invocation scanner is used when installed, else a plain ``$name`` pattern.
    ``resolve_variant(key)`` maps a :func:`variant_key` to the qualified name of a skill
    whose name has two words or more (None: names only with the word "skill").
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
    if resolve_variant is not None and len(query) <= MAX_NAMED_USE_CHARS:
        _named_uses(norm, resolve_variant, forced, excluded)
    for qn in excluded:
        forced.pop(qn, None)
    return Directives(forced, excluded, tuple(unknown))


def _named_uses(
    norm: str,
    resolve_variant: Callable[[str], str | None],
    forced: dict[str, str],
    excluded: dict[str, str],
) -> None:
    """Names of two words or more after a verb ("use systematic debugging to ..."):
    forced, or excluded when the verb is negated ("don't use ..."). A question asks
    about a process, not for it: nothing is forced in a sentence that asks one
    (exclusions still count), whatever the rest of the message is."""
    from skillrt.routing.request_form import is_question

    for m in _NAMED_USE.finditer(norm):
        words: list[re.Match[str]] = []
        pos = m.end()
        while len(words) < MAX_NAME_WORDS:
            w = _NAME_WORD.match(norm, pos)
            if w is None:
                break
            words.append(w)
            gap = re.match(r"[ \t]+", norm[w.end() :])
            if gap is None:
                break
            pos = w.end() + gap.end()
        # The longest run of words that names a skill.
        for n in range(len(words), 0, -1):
            text = norm[words[0].start() : words[n - 1].end()].rstrip(".:/-")
            key = variant_key(text)
            qn = resolve_variant(key) if key else None
            if not qn:
                continue
            said = norm[m.start() : words[n - 1].end()].strip()
            if _NAMED_NEGATION.search(norm[max(0, m.start() - 24) : m.start()]):
                excluded.setdefault(qn, said)
            elif not is_question(_sentence_at(norm, m.start(), words[0].start() + len(text))):
                forced.setdefault(qn, said)
            break


def _sentence_at(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``text[start:end]`` (its final mark included):
    "Use systematic debugging on this:" is an ask even when the message ends in a
    question about the paste below it."""
    left = max(text.rfind(mark, 0, start) for mark in ".!?\n") + 1
    ends = [i for i in (text.find(mark, end) for mark in ".!?\n") if i != -1]
    return text[left : min(ends) + 1 if ends else len(text)]


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

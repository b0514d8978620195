"""Completions for a partial ``$tok`` under the cursor (seed 004 §6 slice 2; SPEC I5).

Candidates are enabled skills that a person may invoke (``user-invocable: false``
skills are hidden from the menu, as in other clients), best first:

1. prefix of the bare or qualified name (shorter first),
2. substring,
3. initials (``$tdd`` -> ``test-driven-development``),
4. letters in order (``$sysdbg`` -> ``systematic-debugging``).

The inserted id is the bare name when that resolves to the skill, ``ns:name`` when it
is needed. Nothing is offered inside code or on a shell command line. On a ``/skill``
line the sub-commands complete, and ``/skill enable|disable <partial>`` completes the
skills that command can change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from skillrt.errors import UsageError
from skillrt.invocation.codespans import code_mask
from skillrt.invocation.index import SkillIndex
from skillrt.invocation.results import Completion
from skillrt.invocation.scanner import SKILL_COMMAND_LINE, id_run_end, is_id_char, prose_line
from skillrt.skills.model import Skill

_NOT_BEFORE_DOLLAR = frozenset("$\\=/@")
_ENV_PARTIAL = re.compile(r"[A-Z][A-Z0-9_]+")
_SUBCOMMANDS = ("list", "enable", "disable")
#: At most this many prefix (or substring) hits are ranked (a one-letter prefix at 100k skills).
_SCAN_CAP = 5000


class Completer:
    """Completion over a :class:`SkillIndex`; enable state is read per call."""

    def __init__(self, index: SkillIndex, is_enabled: Callable[[Skill], bool]) -> None:
        self.index = index
        self.is_enabled = is_enabled
        self._alpha = sorted(range(len(index)), key=lambda i: index.typed_id(i).lower())

    def complete(
        self, text: str, cursor: int | None = None, *, limit: int = 20
    ) -> list[Completion]:
        if cursor is None:
            cursor = len(text)
        if not 0 <= cursor <= len(text):
            raise UsageError(f"cursor {cursor} is outside the text (0..{len(text)})", cursor=cursor)
        if limit <= 0:
            return []
        line_start = text.rfind("\n", 0, cursor) + 1
        line_end = text.find("\n", cursor)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        if SKILL_COMMAND_LINE.match(line):
            if code_mask(text).covers(line_start + line.index("/")):
                return []
            return self._complete_command(text, line_start, line, cursor, limit)
        return self._complete_mention(text, cursor, limit)

    # -- $mentions --------------------------------------------------------------------
    def _complete_mention(self, text: str, cursor: int, limit: int) -> list[Completion]:
        j = cursor
        while j > 0 and is_id_char(text[j - 1]):
            j -= 1
        dollar = j - 1
        if dollar < 0 or text[dollar] != "$":
            return []
        if dollar > 0 and (text[dollar - 1].isalnum() or text[dollar - 1] in _NOT_BEFORE_DOLLAR):
            return []
        partial = text[j:cursor]
        if partial and (not partial[0].isalnum() or partial[0].isdigit()):
            return []
        if _ENV_PARTIAL.fullmatch(partial):
            return []
        if code_mask(text).covers(dollar) or not prose_line(text, dollar):
            return []
        end = id_run_end(text, cursor)
        hits = self._ranked(partial.lower(), self._menu_ok)
        return [self._item(i, tier, dollar, end, "$") for i, tier in _take(hits, limit)]

    def _menu_ok(self, i: int) -> bool:
        skill = self.index.skills[i]
        return skill.user_invocable and self.is_enabled(skill)

    # -- /skill lines -----------------------------------------------------------------
    def _complete_command(
        self, text: str, line_start: int, line: str, cursor: int, limit: int
    ) -> list[Completion]:
        slash = line.index("/skill")
        if cursor - line_start <= slash:
            return []
        head = line[slash : cursor - line_start]
        words = head.split()
        if not head[-1:].isspace():
            current = words[-1] if words else ""
            words = words[:-1]
        else:
            current = ""
        tok_start = cursor - len(current)
        tok_end = cursor
        while tok_end < len(text) and not text[tok_end].isspace():
            tok_end += 1
        if not words:  # still typing "/skill" itself
            return []
        if len(words) == 1:
            return [
                Completion(sub, f"/skill {sub}", _SUB_HELP[sub], tok_start, tok_end, sub, "command")
                for sub in _SUBCOMMANDS
                if sub.startswith(current.lower())
            ][:limit]
        action = words[1].lower()
        if action not in ("enable", "on", "disable", "off"):
            return []
        want_enabled = action in ("disable", "off")  # disable offers enabled skills

        def ok(i: int) -> bool:
            return self.is_enabled(self.index.skills[i]) == want_enabled

        query = current.lstrip("$").lower()
        hits = self._ranked(query, ok)
        return [self._item(i, tier, tok_start, tok_end, "") for i, tier in _take(hits, limit)]

    # -- ranking ----------------------------------------------------------------------
    def _ranked(self, query: str, ok: Callable[[int], bool]) -> Iterator[tuple[int, str]]:
        index = self.index
        if not query:
            yield from ((i, "prefix") for i in self._alpha if ok(i))
            return
        seen: set[int] = set()
        tiers: list[tuple[str, Callable[[], Iterable[int]]]] = [
            ("prefix", lambda: self._prefix_ranked(query)),
            ("substring", lambda: self._substring_ranked(query)),
            ("initials", lambda: index.initials(query)),
        ]
        if ":" not in query:  # a typed namespace is precise enough: no letters-in-order tier
            tiers.append(("subsequence", lambda: index.subsequence(query)))
        # Tiers are computed only when the earlier ones did not fill the menu.
        for tier, hits in tiers:
            for i in hits():
                if i not in seen:
                    seen.add(i)
                    if ok(i):
                        yield i, tier

    def _prefix_ranked(self, query: str) -> list[int]:
        typed = self.index.typed_id
        hits = [i for _, i in zip(range(_SCAN_CAP), self.index.prefix(query), strict=False)]
        hits.sort(key=lambda i: (len(typed(i)), typed(i)))
        return hits

    def _substring_ranked(self, query: str) -> list[int]:
        typed = self.index.typed_id
        hits = [i for _, i in zip(range(_SCAN_CAP), self.index.substring(query), strict=False)]
        hits.sort(key=lambda i: (not self._at_word_start(i, query), len(typed(i)), typed(i)))
        return hits

    def _at_word_start(self, i: int, query: str) -> bool:
        low = self.index.skills[i].qualified_name.lower()
        return any(f"{sep}{query}" in low for sep in "-:_.")

    def _item(self, i: int, tier: str, start: int, end: int, sigil: str) -> Completion:
        skill = self.index.skills[i]
        ident = self.index.typed_id(i)
        desc = skill.description.strip().split("\n", 1)[0]
        if len(desc) > 120:
            desc = desc[:119] + "…"
        return Completion(
            id=ident,
            display=f"{sigil}{ident}",
            description=desc,
            replace_start=start,
            replace_end=end,
            insert=f"{sigil}{ident}",
            match=tier,
            qualified_name=skill.qualified_name,
        )


_SUB_HELP = {
    "list": "list the skills and whether each is enabled",
    "enable": "enable a skill (persisted)",
    "disable": "disable a skill (persisted)",
}


def _take(hits: Iterator[tuple[int, str]], limit: int) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for item in hits:
        out.append(item)
        if len(out) >= limit:
            break
    return out

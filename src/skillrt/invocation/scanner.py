"""Find ``$<skill-id>`` mentions in a message, outside code (seed 004 §2, §6; SPEC I1).

One compiled-regex pass finds candidate ``$`` signs; each candidate is then checked
against a code mask (fenced blocks, inline spans) and the shell-line rule, computed
lazily and only when a candidate exists.

The id is the run of skill-id characters after ``$`` (Unicode letters, digits and
combining marks, ``-``, ``_``, ``.``, and one ``:`` for a namespace), which must end
at whitespace, the end of the text, or sentence punctuation (``$tdd,`` ``$tdd.``
``($tdd)`` ``$tdd's`` ``**$tdd**``); trailing ``.``, ``-``, ``_`` and ``:`` are not part of
it. Not a mention:

* ``$`` in fenced code (```` ``` ```` or ``~~~``, any length, unclosed runs to the end) or
  inline code (`` `…` ``, ``` ``…`` ```);
* ``${VAR}``, ``$(cmd)``, ``$1``, ``$@``, ``$#``, ``$?``, ``$$``, ``$_`` (no letter or digit
  after ``$``);
* money: ``$5``, ``$3.50``, ``$1,000``, ``$5k``, ``$20M``, ``$100s``;
* a ``$`` right after a letter, a digit, ``$``, ``\\`` (``\\$x`` is escaped), ``=``
  (``X=$y``), ``/`` or ``@``;
* an id followed by anything but whitespace or punctuation (``$HOME/x``, ``$x(y)``,
  ``$a$b``);
* ALL-CAPS environment-variable style ids (``$PATH``, ``$OPENAI_API_KEY``): skill names
  are lowercase;
* any ``$`` on a shell-like command line (:func:`skillrt.invocation.shell.is_command_line`)
  or on a ``/skill …`` command line (those ids are command arguments).

``$ns:*`` (and ``$ns:prefix*``) is returned as a mention with ``glob=True``; the resolver
refuses it (globs are deferred, seed 004 §6).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from skillrt.invocation.codespans import code_mask
from skillrt.invocation.shell import is_command_line

# A "$" not preceded by a letter/digit or one of $ \ = / @, followed by a letter/digit.
# The literal "$" comes first so the regex engine can jump between "$" signs. The two
# negative lookaheads only pre-filter what parse_id_at would reject anyway (an ALL-CAPS
# env var, money), so common shell and price text costs no Python call.
_DOLLAR = re.compile(
    r"\$(?<![^\W_]\$)(?<![$\\=/@]\$)(?=[^\W_])"
    r"(?![A-Z][A-Z0-9_]*(?![\w.:-]))(?!\d+(?:\.\d+)?[A-Za-z]{0,3}(?![\w.:-]))"
)
_ID_RUN = re.compile(r"[\w.:-]+")
_GLOB_RUN = re.compile(r"[\w.:*-]+")
_ENV_VAR = re.compile(r"[A-Z][A-Z0-9_]*")
_MONEY = re.compile(r"\d+(?:\.\d+)?[A-Za-z]{0,3}")
SKILL_COMMAND_LINE = re.compile(r"[ \t]*(?:>[ \t]*)*/skill(?=[ \t\r]|$)")
#: Characters that may follow an id and end it (sentence punctuation, closing quotes
#: and brackets, Markdown emphasis).
SEPARATORS = frozenset(",.;:!?)]}'\"*~`…—–’”»›」』）】。，、；：！？")
_TRAILING = ".-_:"


@dataclass(frozen=True, slots=True)
class Mention:
    """One ``$id`` in a message; ``text[start:end] == raw`` and ``raw[0] == "$"``."""

    #: The mention exactly as written, ``$`` included.
    raw: str
    #: The id (NFKC-normalised): ``name`` or ``namespace:name``.
    id: str
    namespace: str | None
    name: str
    start: int
    end: int
    #: ``$ns:*``: a namespace wildcard, recognised only to be refused.
    glob: bool = False


def scan_mentions(text: str) -> list[Mention]:
    """Every ``$id`` mention of ``text`` outside code and command lines, in text order."""
    if "$" not in text:
        return []
    starts = [m.start() for m in _DOLLAR.finditer(text)]
    if not starts:
        return []
    # Candidates and code spans are both sorted: walk them together (no per-$ bisect).
    spans = code_mask(text).spans
    n_spans = len(spans)
    j = 0
    line_ok: dict[int, bool] = {}
    out: list[Mention] = []
    seen_to = line_start = 0  # line starts found incrementally: linear on one huge line
    for start in starts:
        while j < n_spans and spans[j][1] <= start:
            j += 1
        if j < n_spans and spans[j][0] <= start:
            continue  # inside code
        parsed = parse_id_at(text, start)
        if parsed is None:
            continue
        nl = text.rfind("\n", seen_to, start)
        if nl >= 0:
            line_start = nl + 1
        seen_to = start
        if not prose_line(text, start, line_ok, line_start=line_start):
            continue
        end, ident, glob = parsed
        namespace, _, name = ident.rpartition(":")
        out.append(Mention(text[start:end], ident, namespace or None, name, start, end, glob))
    return out


def parse_id_at(text: str, dollar: int) -> tuple[int, str, bool] | None:
    """Parse the id after the ``$`` at ``dollar``: ``(end, id, glob)`` or None.

    Applies the shape rules only (punctuation, money, env vars); the caller checks code
    and command lines.
    """
    n = len(text)
    begin = dollar + 1
    end = id_run_end(text, begin)
    glob = False
    if end < n and text[end] == "*" and ":" in text[begin:end]:
        m = _GLOB_RUN.match(text, end)
        end = m.end() if m else end
        glob = True
    if end < n and not text[end].isspace() and text[end] not in SEPARATORS:
        return None  # $HOME/x, $x(y), $a$b, $x=1: not an id
    raw = text[begin:end]
    stripped = raw.rstrip(_TRAILING) if not glob else raw
    if not stripped:
        return None
    end -= len(raw) - len(stripped)
    if stripped.count(":") > 1:
        return None
    ns, colon, name = stripped.partition(":")
    if colon and (not ns or not name or not (name[0].isalnum() or name[0] == "*")):
        return None
    if _ENV_VAR.fullmatch(stripped) or _MONEY.fullmatch(stripped):
        return None
    ident = stripped if stripped.isascii() else unicodedata.normalize("NFKC", stripped)
    return end, ident, glob


def id_run_end(text: str, i: int) -> int:
    """End of the run of id characters starting at ``i`` (combining marks included)."""
    n = len(text)
    while True:
        m = _ID_RUN.match(text, i)
        if m is not None:
            i = m.end()
        if i < n and text[i] > "\x7f" and unicodedata.category(text[i]).startswith("M"):
            i += 1
            continue
        return i


def is_id_char(ch: str) -> bool:
    """Can ``ch`` be part of a skill id (letter, digit, mark, ``-``, ``_``, ``.``, ``:``)?"""
    return ch.isalnum() or ch in "-_.:" or unicodedata.category(ch).startswith("M")


def prose_line(
    text: str, pos: int, cache: dict[int, bool] | None = None, *, line_start: int | None = None
) -> bool:
    """True when the line holding ``pos`` is neither shell-like nor a ``/skill`` command."""
    if line_start is None:
        line_start = text.rfind("\n", 0, pos) + 1
    if cache is not None:
        known = cache.get(line_start)
        if known is not None:
            return known
    line_end = text.find("\n", pos)
    line = text[line_start : len(text) if line_end < 0 else line_end].rstrip("\r")
    ok = not (SKILL_COMMAND_LINE.match(line) or is_command_line(line))
    if cache is not None:
        cache[line_start] = ok
    return ok

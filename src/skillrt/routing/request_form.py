"""The form of a request: how much it reads as a quick question rather than a task.

A skill carries a procedure for a job. A person who wants a job done describes it, with
its files, errors and goal; a person who asks "which nmap flag is the UDP scan again?"
wants one fact, answered without loading anything, however close the topic is to a
skill's. Similarity cannot tell these apart (the question is *about* the skill's
subject), so P(scope) also reads the request's form: :func:`quick_question` is near 1
for a question of a few words and falls linearly to 0 at :data:`LONG_REQUEST_WORDS` words, so a
question that gives the details of a job weighs as a task. The words are English; a
request in another language counts only by its question mark and length.
"""

from __future__ import annotations

import re

from skillrt.routing.text import CJK_CHARS

__all__ = ["LONG_REQUEST_WORDS", "is_question", "quick_question", "request_words"]

#: At this many words a request has room for the details of a task: "one or two
#: sentences" of situation and goal are about 20-40 words.
LONG_REQUEST_WORDS = 20

_WORD = re.compile(r"[^\W\d_][\w'’.-]*|\d[\w.]*")
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_QUESTION_END = re.compile(r"[?？]\s*[)\"'”’]*\s*$")
#: Words that open an English question (wh-words and inverted auxiliaries).
_OPENER_TEXT = """
    what what's whats which who whom whose when where why how how's is isn't are aren't
    am was wasn't were does doesn't do don't did didn't can can't could should would will
    won't shall has have hasn't haven't
"""
_OPENERS = frozenset(_OPENER_TEXT.split())
#: "can you ...", "could you please ...": a task asked politely, unless it only asks to be
#: told something ("can you tell me which flag ...").
_POLITE_REQUEST = re.compile(
    r"(?:can|could|would|will)\s+(?:you|u|ya|someone)\b(?!\s+(?:tell|remind)\s+me\b)",
    re.IGNORECASE,
)
_PLEASE = re.compile(r"\b(?:please|pls|plz)\b", re.IGNORECASE)
#: Fillers before the question proper ("quick one: what ...", "hey, is ...").
_LEAD_IN = re.compile(
    r"^\s*(?:(?:quick\s+(?:one|q|question)|q|hey|hi|hello|btw|so|ok|okay|um|also)\b[\s:,!-]*)+",
    re.IGNORECASE,
)


def request_words(text: str) -> int:
    """Words in ``text``; a CJK run counts one word per two characters."""
    cjk = sum((len(run) + 1) // 2 for run in _CJK_RUN.findall(text))
    return len(_WORD.findall(_CJK_RUN.sub(" ", text))) + cjk


def is_question(text: str) -> bool:
    """True when ``text`` asks something: a final question mark, or an English question
    opener. A polite request ("can you fix ...?", "please ...") is a task, not a question."""
    body = _LEAD_IN.sub("", text, count=1).lstrip()
    if _POLITE_REQUEST.match(body) or _PLEASE.search(body):
        return False
    if _QUESTION_END.search(text):
        return True
    first = _WORD.search(body)
    return first is not None and first.group(0).lower().rstrip(".") in _OPENERS


def quick_question(text: str) -> float:
    """How much ``text`` is a quick question: 0 for anything else, up to 1 (see module)."""
    if not is_question(text):
        return 0.0
    return max(0.0, 1.0 - request_words(text) / LONG_REQUEST_WORDS)

"""Text normalisation for routing: tokens, a light stemmer, identifiers, clauses.

Everything is Unicode-aware: text is NFKC-normalised and case-folded; words are
``\\w`` runs. CJK scripts have no spaces between words, so a CJK run becomes
overlapping character bigrams for the lexical index (the usual trick of CJK search
engines) while phrase matching treats CJK triggers as substrings.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "CJK_CHARS",
    "STOPWORDS",
    "has_cjk",
    "identifier_words",
    "normalise",
    "split_clauses",
    "stem",
    "terms",
    "words",
]

_WORD = re.compile(r"\w+")
# Han, Hiragana, Katakana, Hangul (syllables and jamo), CJK compatibility ideographs.
CJK_CHARS = (
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
)
_CJK = re.compile(f"[{CJK_CHARS}]")
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

#: English function words and request filler ("can you please help me ...") that say
#: nothing about which skill applies.
_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own please same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very want was we were what when where which while who whom why
    will with would you your yours yourself yourselves i'm i'd i've you're it's tell
    help need give get like know use using used skill skills hey hi thanks thank
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# Suffixes stripped by :func:`stem` after the plural step, first match wins.
_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ying", "y"),
    ("ings", ""),
    ("ing", ""),
    ("ied", "y"),
    ("ed", ""),
)
_UNDOUBLE_AFTER = ("ing", "ings", "ed")


def normalise(text: str) -> str:
    """NFKC plus case folding: the form every matcher compares."""
    return unicodedata.normalize("NFKC", text).casefold()


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A tiny suffix stripper: ``reviews``/``reviewing``/``reviewed`` -> ``review``.

    Deliberately light (plurals, -ing, -ed, -ment, -ation, a final -e): it only
    has to make query and description forms meet (``invoice``/``invoices``,
    ``save``/``saving``, ``translate``/``translation``), and every merge it makes
    applies to both sides, so consistency matters more than linguistic truth. Words
    shorter than 4 chars and non-ASCII words are kept as is.
    """
    if len(word) < 4 or not word.isascii() or not word.isalpha():
        return word
    w = word
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix, repl in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) + len(repl) >= 3:
            w = w[: len(w) - len(suffix)] + repl
            # "running" -> "runn" -> "run"; "called" keeps its "ll".
            if (
                suffix in _UNDOUBLE_AFTER
                and len(w) >= 4
                and w[-1] == w[-2]
                and w[-1] not in "aeiousl"
            ):
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    """Normalised ``\\w`` runs, in order, stopwords kept (for phrase matching)."""
    return _WORD.findall(normalise(text))


def terms(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Index terms: normalised words minus stopwords, stemmed; CJK runs as bigrams."""
    out: list[str] = []
    for word in _WORD.findall(normalise(text)):
        if _CJK.search(word):
            out.extend(_cjk_terms(word))
            continue
        if not keep_stopwords and word in STOPWORDS:
            continue
        if word.isdigit() and len(word) > 4:
            continue  # ids, years, phone numbers: noise for skill choice
        out.append(stem(word))
    return out


def _cjk_terms(word: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in _CJK_RUN.finditer(word):
        if m.start() > pos:
            rest = word[pos : m.start()]
            out.append(stem(rest))
        run = m.group(0)
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        pos = m.end()
    if pos < len(word):
        out.append(stem(word[pos:]))
    return out


def identifier_words(name: str) -> str:
    """``pdf-url_tool``/``ns:PdfTool`` -> ``pdf url tool``/``ns pdf tool`` (for text use)."""
    spaced = _CAMEL.sub(" ", name)
    return " ".join(p for p in re.split(r"[-_:./\s]+", spaced) if p).lower()


# Clause boundaries: ";" and conjunctions that start a new request.
_CLAUSE_SPLIT = re.compile(
    r"\s*(?:[;；]+|,?\s+(?:and\s+then|and\s+also|and|then|also|after\s+that"
    r"|afterwards|plus|as\s+well\s+as)\s+|,\s+(?:then|also|after\s+that|next)\s+"
    r"|然后|并且|接着|以及|同时)\s*",
    re.IGNORECASE,
)
# Sentence ends are boundaries only between two *requests*: a sentence that opens with
# a subject ("I'm planning a trip.", "My PR is ready.") gives context to the next one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])|\n+")
_CONTEXT_OPENER_TEXT = (
    "i i'm im i've my we we're we've our it it's its this that these those there the a an "
    "he she they his her their yesterday today recently currently"
)
_CONTEXT_OPENERS = frozenset(_CONTEXT_OPENER_TEXT.split())
_REQUEST_AFTER_SUBJECT = re.compile(
    r"^(?:i|we)\s+(?:need|want|would\s+like|'d\s+like|must|have\s+to)\b", re.IGNORECASE
)


def _is_request(sentence: str) -> bool:
    text = sentence.strip()
    if not text or text.endswith(("?", "？")):
        return True
    first = re.match(r"[\w']+", text.lower())
    if first is None or first.group(0) not in _CONTEXT_OPENERS:
        return True
    return _REQUEST_AFTER_SUBJECT.match(text) is not None


def _sentences(query: str) -> list[tuple[int, int]]:
    """Sentence spans, with context sentences merged into the request that follows."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(query):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(query):
        spans.append((pos, len(query)))
    merged: list[tuple[int, int]] = []
    carry: int | None = None
    for a, b in spans:
        start = a if carry is None else carry
        if _is_request(query[a:b]) or (a, b) == spans[-1]:
            merged.append((start, b))
            carry = None
        else:
            carry = start
    return merged


def split_clauses(query: str, *, min_terms: int = 2, max_clauses: int = 5) -> list[str]:
    """The query's request clauses, for covering a query with more than one skill.

    A piece with fewer than ``min_terms`` content terms is merged into the one before
    it, so "book a flight and a hotel" stays one clause about booking. Clauses are
    substrings of the query (separators dropped), in order.
    """
    return [
        query[a:b] for a, b in clause_spans(query, min_terms=min_terms, max_clauses=max_clauses)
    ]


def clause_spans(query: str, *, min_terms: int = 2, max_clauses: int = 5) -> list[tuple[int, int]]:
    """Where :func:`split_clauses`'s clauses are: ``(start, end)`` character offsets."""
    spans: list[tuple[int, int]] = []
    for s_start, s_end in _sentences(query):
        pos = s_start
        for m in _CLAUSE_SPLIT.finditer(query, s_start, s_end):
            if m.start() > pos:
                spans.append((pos, m.start()))
            pos = m.end()
        if pos < s_end:
            spans.append((pos, s_end))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if not query[start:end].strip():
            continue
        if merged and len(terms(query[start:end])) < min_terms:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    if len(merged) > 1 and len(terms(query[merged[0][0] : merged[0][1]])) < min_terms:
        merged[1] = (merged[0][0], merged[1][1])
        merged.pop(0)
    if len(merged) > max_clauses > 0:
        # The tail becomes one last clause rather than being dropped.
        merged = [*merged[: max_clauses - 1], (merged[max_clauses - 1][0], merged[-1][1])]
    return [_stripped(query, a, b) for a, b in merged]


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` narrowed past surrounding white space."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    trail = len(piece) - len(piece.rstrip())
    return start + lead, max(start + lead, end - trail)

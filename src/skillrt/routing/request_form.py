"""The form of a request: how much it reads as a quick question rather than a task.

A skill carries a procedure for a job. A person who wants a job done describes it, with
its files, errors and goal; a person who asks "which nmap flag is the UDP scan again?"
wants one fact, answered without loading anything, however close the topic is to a
skill's. Similarity cannot tell these apart (the question is *about* the skill's
subject), so P(scope) also reads the request's form: :func:`quick_question` is near 1
for a question of a few words and falls linearly to 0 at :data:`LONG_REQUEST_WORDS` words, so a
question that gives the details of a job weighs as a task. The words are English; a
request in another language counts only by its question mark and length.

A person often pastes what they are looking at (an error, a log line, a command's
output) and asks about it in a few words of their own. The form is read on those words
(:func:`own_words`: the message without fenced blocks and lines that read as pasted
output), so "``Exit Code: 137`` ... is 137 always an OOM kill?" is the quick question
it is, however long the paste.

Three more readings of form:

* :func:`brevity` (language-light): how short the whole message is, whatever its form. A
  request that needs a skill's procedure states a job and its particulars; a one-line
  message ("thanks, merged", "reply to Priya: Thursday works", "add a newline at the end
  of README.md") rarely does, however close its words are to a skill's.
* :func:`fact_about_material` (English): whether the message ends in a quick question of
  fact about something it shows (a paste, a code span, a line set apart). Such a
  message needs an answer, not a procedure, however close the paste's words are to a
  skill's: the decision names its skills as pointers rather than injecting them
  (:mod:`skillrt.routing.planner`). Only a few forms count, because a question about
  pasted material is as often an ask for work ("does this leak goroutines?", "how do I
  test this?", "what are the problems with this code?"): what a *marked* thing means
  ("what does the "-" mean there?", not "what does this error mean?"), an attribute of a
  named thing ("what's the max timeout on ...", "which flag ...", "in which version
  ..."), or an alternative ("is that gzipped or raw?") that names no diagnosis or
  judgement ("is this a leak or a small heap?"); none asking for advice ("should ...",
  "best ..."), and none after an ask for work ("Please review this PR: ... is the
  timeout in seconds or ms?"). It misses many facts; it is built not to take a task
  for one.
* :func:`asks`: whether one clause of a request asks for something (a task in the
  imperative, "I need / can you / please ...", or a question) rather than describing the
  situation ("it runs from Jenkins on Ubuntu"). A second skill joins a plan only for a
  part of the request that asks for something (:mod:`skillrt.routing.planner`).
"""

from __future__ import annotations

import re

from skillrt.routing.text import CJK_CHARS

__all__ = [
    "BRIEF_REQUEST_WORDS",
    "LONG_REQUEST_WORDS",
    "asks",
    "brevity",
    "fact_about_material",
    "is_question",
    "own_words",
    "quick_question",
    "request_words",
]

#: At this many words a request has room for the details of a task: "one or two
#: sentences" of situation and goal are about 20-40 words.
LONG_REQUEST_WORDS = 20
#: At this many words any message (not only a question) has room for a job's details.
BRIEF_REQUEST_WORDS = 30

_WORD = re.compile(r"[^\W\d_][\w'’.-]*|\d[\w.]*")
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
#: Words that open an English question (wh-words and inverted auxiliaries).
_OPENER_TEXT = """
    what what's whats which who whom whose when where why how how's is isn't are aren't
    am was wasn't were does doesn't do don't did didn't can can't could should would will
    won't shall has have hasn't haven't
"""
_OPENERS = frozenset(_OPENER_TEXT.split())
#: What follows "do" in a question ("do you ...", "do these ..."); anything else after it
#: is an imperative ("do a review").
_DO_SUBJECT_TEXT = "i you u ya we they these those people any all most"
_DO_SUBJECTS = frozenset(_DO_SUBJECT_TEXT.split())
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


#: A short lead-in closed by a colon ("before I merge: does ...", "remind me: is ...").
_COLON_LEAD = re.compile(r"^[^:\n?]{1,40}:\s+(?=\S)")


def is_question(text: str) -> bool:
    """True when ``text`` asks something: a final question mark, or an English question
    opener. A polite request ("can you fix ...?", "please ...") is a task, not a question."""
    body = _LEAD_IN.sub("", text, count=1).lstrip()
    body = _COLON_LEAD.sub("", body, count=1)
    if _POLITE_REQUEST.match(body) or _PLEASE.search(body):
        return False
    if _ends_in_question(text):
        return True
    words = _WORD.findall(body[:80])
    if not words:
        return False
    first = words[0].lower().rstrip(".")
    if first == "do":  # "do a code review ..." is a task; "do you / do we ..." asks
        return len(words) > 1 and words[1].lower() in _DO_SUBJECTS
    return first in _OPENERS


_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
#: A word of prose: letters (an apostrophe, a hyphen inside), maybe a closing mark.
_PROSE_TOKEN = re.compile(r"^[(\"'“‘`]?[^\W\d_][^\W\d_'’-]*(?:['’-][^\W\d_]+)*[`\"'”’)]?[.,;:!?]*$")
_PROMPT = re.compile(r"^(?:\$|>>>|>|PS>|%|#)\s")
#: Share of a line's tokens that must be prose words for the line to be the person's.
PROSE_SHARE = 0.6


def _is_prose(line: str) -> bool:
    if not line.strip() or line[:1] in " \t" and line[:2] != " -":
        return False  # blank, or indented: a paste (a stack frame, a YAML block)
    if _PROMPT.match(line):
        return False  # a shell or REPL line
    tokens = line.split()
    prose = sum(bool(_PROSE_TOKEN.match(t)) for t in tokens)
    return prose >= PROSE_SHARE * len(tokens)


def own_words(text: str) -> str:
    """What the person says about a paste: with pasted material in ``text`` (fenced
    blocks, indented lines, lines that are mostly not words: logs, tables, stack traces,
    shell output), the prose lines after the last of it (else before the first);
    ``text`` itself when nothing in it reads as pasted."""
    if "\n" not in text and "```" not in text:
        return text
    lines = [line for line in _FENCE.sub("\n```\n", text).splitlines() if line.strip()]
    prose = [_is_prose(line) and line.strip() != "```" for line in lines]
    if all(prose):
        return text
    last = max(n for n, p in enumerate(prose) if not p)
    after = [line for line, p in zip(lines[last + 1 :], prose[last + 1 :], strict=True) if p]
    if after:
        return "\n".join(after)
    first = prose.index(False)
    return "\n".join(lines[:first]) or text


def quick_question(text: str) -> float:
    """How much ``text`` is a quick question: 0 for anything else, up to 1 (see module);
    read on :func:`own_words` (a paste is what the question is about)."""
    own = own_words(text)
    if not is_question(own):
        return 0.0
    return max(0.0, 1.0 - request_words(own) / LONG_REQUEST_WORDS)


def brevity(text: str) -> float:
    """How brief ``text`` is: 1 for an empty message, falling linearly to 0 at
    :data:`BRIEF_REQUEST_WORDS` words."""
    return max(0.0, 1.0 - request_words(text) / BRIEF_REQUEST_WORDS)


#: Verbs that open an English request in the imperative ("write ...", "then deploy ...").
_TASK_VERB_TEXT = """
    add adapt adjust analyse analyze annotate apply archive assess audit automate backfill
    benchmark bootstrap build bump calculate capture change check clean clear clone close
    collect combine compare compile compose compress compute configure confirm connect
    consolidate containerize convert copy correct create cut debug decide decompose
    deduplicate define delete deploy describe design detect diagnose disable do document
    download draft drop dump edit enable encrypt enforce estimate evaluate examine explain
    export extend extract figure file find finish fix flag flatten format generate get give
    grab graph harden help highlight identify implement import improve inspect install
    instrument integrate investigate isolate keep label launch lay lint list load locate
    lock log look make map mark measure merge migrate mock model modernize monitor move
    normalize open optimise optimize organise organize outline package parse patch pick pin
    plan plot polish port prepare prevent prioritize probe produce profile propose
    prototype provision prune publish pull push put query rank read rebase rebuild record
    recover redesign reduce refactor register reindex release remove rename render
    reorganize repair replace reply report reproduce rerun research reset resolve restore
    restructure retry review revise rewrite roll rotate run sanitize save scaffold scan
    schedule scrape script search secure send set setup ship show shrink simplify sketch
    slim sort split squash start stop store streamline structure stub submit suggest
    summarise summarize swap switch sync tag take tell test tidy trace track train
    transcribe transform translate triage trim troubleshoot tune turn undo unify uninstall
    update upgrade upload use validate verify visualise visualize walk watch wire wrap write
"""
_TASK_VERBS = frozenset(_TASK_VERB_TEXT.split())
#: Connectives and fillers before a clause's verb ("and then", "once that works,").
_CLAUSE_LEAD = re.compile(
    r"^\s*(?:(?:(?:and|then|also|plus|so|but|first|firstly|next|finally|lastly|after\s+that"
    r"|afterwards|additionally|separately|meanwhile|at\s+the\s+same\s+time|ideally|now|ok"
    r"|okay|just|quickly)\b|(?:once|when|if)\s+[^,]{1,60},)[\s,:;.-]*)+",
    re.IGNORECASE,
)
#: Words that ask for work anywhere in a clause ("I need", "can you", "please", ...).
_ASKING = re.compile(
    r"\b(?:i\s*(?:'d|would)\s+(?:like|love|want)|i\s+(?:need|want)|we\s+(?:need|want)"
    r"|need\s+to|needs\s+to|want\s+you\s+to|help\s+(?:me|us)|(?:can|could|would|will)\s+you"
    r"|please|pls|let'?s|make\s+sure|i'?m\s+(?:trying|looking)\s+to|(?:has|have)\s+to)\b",
    re.IGNORECASE,
)


def asks(clause: str) -> bool:
    """True when ``clause`` asks for something: it opens with an imperative verb (after
    connectives such as "and then"), carries words that ask for work, or is a question."""
    body = _CLAUSE_LEAD.sub("", clause, count=1)
    first = _WORD.match(body.lstrip())
    if first is not None and first.group(0).lower() in _TASK_VERBS:
        return True
    return bool(_ASKING.search(clause)) or is_question(clause)


#: A sentence ends at ., ! or ? before white space.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?？])[ \t]+")
#: What may follow a final question mark: closing quotes and brackets, white space.
_AFTER_QUESTION = " \t\r\n)]\"'”’"
#: A lead-in closed by a colon before the question ("quick q:", "remind me:").
_QUESTION_LEAD = re.compile(r"^[^:?\n]{1,50}:\s+")
#: What a shown thing means: "what does the "-" mean there?" (the thing is marked: quoted,
#: code, a symbol or an all-caps name; "what does this error mean?" asks for a diagnosis).
_MEANING = re.compile(
    r"^what(?:'s|\s+is|\s+does|\s+do|\s+did)\s+(.{1,80}?)\s*\b(?:mean|means|stand\s+for"
    r"|refers?\s+to)\b",
    re.IGNORECASE,
)
_MARKED = re.compile(r"[`\"'“”‘’]|\S[-_./:=#+]\S|^[-_./:=#+]|\b[A-Z0-9]{3,}\b")
#: An attribute of a named thing ("what's the max timeout on ...", "which flags ...") or
#: when something came or goes ("since which version ...", "when was X deprecated?").
_ATTRIBUTE = re.compile(
    r"^(?:what|which)(?:'s|\s+is|\s+are|\s+was|\s+were)?\s+(?:the\s+|a\s+|an\s+)?"
    r"(?:[^\s?]+\s+){0,3}?(?:default|defaults|max|maximum|min|minimum|limit|limits|name"
    r"|syntax|command|equivalent|difference|unit|units|version|versions|flag|flags|option"
    r"|options|setting|settings|port|format|range|timeout|alias)\b"
    r"|^(?:when\s+(?:was|were|did|does|is|will)|since\s+(?:when|which)|in\s+which)\b",
    re.IGNORECASE,
)
#: An alternative between named things: "is that gzipped or raw?"
_ALTERNATIVE = re.compile(
    r"^(?:is|isn't|are|aren't|was|were|does|doesn't|do|did|has|have|what|which)\b.*\sor\s",
    re.IGNORECASE,
)
#: What asks for advice or a preference rather than a fact ("which version should I ...").
_ADVICE = re.compile(
    r"\b(?:should|would|could|ought|supposed\s+to|recommend\w*|suggest\w*|advi[sc]e"
    r"|approach|strategy|ideas?|thoughts|best|better|safest|cleanest|prefer\w*)\b",
    re.IGNORECASE,
)
#: What asks for a diagnosis or a judgement of the material ("is this a memory leak or
#: just a small heap?", "is this safe or not?"): a skill's procedure may be the answer.
_JUDGEMENT = re.compile(
    r"\b(?:caus(?:e|es|ed|ing)|happen(?:s|ed|ing)?|fail(?:s|ed|ing|ures?)?"
    r"|crash(?:es|ed|ing)?|break(?:s|ing)?|broken?|bugs?|buggy|leak\w*|deadlock\w*|race"
    r"|slow\w*|bottleneck\w*|problems?|issues?|wrong|missing|miss|vulnerab\w*|exploit\w*"
    r"|inject\w*|expos\w*|risk\w*|secur\w*|safe\w*|enough|faster|errors?)\b",
    re.IGNORECASE,
)
#: A fact question is short: longer ones carry a task's particulars.
FACT_QUESTION_WORDS = 25
#: Lines before the question read for an ask for work, at its start and at its end.
ASK_LINES = 10


def _ends_in_question(text: str) -> bool:
    """``text`` ends in a question mark (closing quotes, brackets, white space after it)."""
    return text.rstrip(_AFTER_QUESTION).endswith(("?", "？"))


def _question_tail(text: str) -> tuple[str, str] | None:
    """The question that ends ``text`` (the run of question sentences on its last line)
    and the text before it; None when ``text`` does not end in a question."""
    stripped = text.strip()
    if not _ends_in_question(stripped):
        return None
    line_start = max(stripped.rfind("\n"), stripped.rfind("\r")) + 1
    line = stripped[line_start:]
    starts = [0, *(m.end() for m in _SENTENCE_BREAK.finditer(line))]
    first = len(starts) - 1
    # Walk back over sentences of the line that are questions too ("which flag? just -g?").
    while first > 0 and _ends_in_question(line[starts[first - 1] : starts[first]]):
        first -= 1
    cut = line_start + starts[first]
    return stripped[cut:], stripped[:cut]


def _asks_for_work(before: str) -> bool:
    """A prose sentence before the question asks for work ("Please review this PR:",
    "Write tests for this change."); a pasted title or log line that opens with such a
    verb ("REPORT RequestId: ...", "Package  Current  Wanted") does not."""
    # The person's own lines: not those inside a fence ("Run npm ci" in a CI log), and
    # the first and last few only (an ask opens or closes a message; a long paste is not
    # read line by line).
    lines = [line for line in _FENCE.sub("\n", before).splitlines() if line.strip()]
    if len(lines) > 2 * ASK_LINES:
        lines = lines[:ASK_LINES] + lines[-ASK_LINES:]
    for line in lines:
        if not _is_prose(line):
            continue
        for sentence in _SENTENCE_BREAK.split(line.strip()):
            if not sentence or _ends_in_question(sentence):
                continue
            if _ASKING.search(sentence):
                return True
            words = _WORD.findall(_CLAUSE_LEAD.sub("", sentence, count=1))
            if not words or words[0].lower() not in _TASK_VERBS or words[0].isupper():
                continue
            if len(words) == 1 or not words[1][:1].isupper():
                return True
    return False


def fact_about_material(text: str) -> bool:
    """True when ``text`` ends in a quick question of fact about something it shows (see
    the module docstring): after pasted material, a code span or a line break, and with
    no ask for work before it, a question of at most :data:`FACT_QUESTION_WORDS` words in
    one of the forms of a fact (what a shown thing means; an attribute of a named thing:
    its default, limit, name, syntax, version, flag ...; when something came or goes; an
    alternative, "is that gzipped or raw?") that asks for no advice, diagnosis or
    judgement."""
    tail = _question_tail(text)
    if tail is None:
        return False
    question, before = tail
    if not before.strip():
        return False
    if not ("\n" in before or "\r" in before or "`" in before or own_words(text) != text):
        return False
    question = _QUESTION_LEAD.sub("", question.strip(), count=1)
    if request_words(question) > FACT_QUESTION_WORDS or _ADVICE.search(question):
        return False
    meaning = _MEANING.match(question)
    if meaning is not None:
        fact = bool(_MARKED.search(meaning.group(1))) and not _JUDGEMENT.search(question)
    else:
        fact = bool(_ATTRIBUTE.match(question)) or (
            bool(_ALTERNATIVE.match(question)) and not _JUDGEMENT.search(question)
        )
    return fact and not _asks_for_work(before)

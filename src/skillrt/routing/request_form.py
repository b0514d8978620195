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

Two more readings of form, both language-light:

* :func:`brevity`: how short the whole message is, whatever its form. A request that
  needs a skill's procedure states a job and its particulars; a one-line message
  ("thanks, merged", "reply to Priya: Thursday works", "add a newline at the end of
  README.md") rarely does, however close its words are to a skill's.
* :func:`fact_about_material`: whether the message ends in a quick question of fact
  (closed, "is that gzipped or raw?", or a specific wh-question, "what's the max timeout
  on the consumption plan?") asked about something it shows (a paste, a code span, a
  paragraph set apart). Such a message needs an answer, not a procedure, however close
  the paste's words are to a skill's: the decision names its skills as pointers rather
  than injecting them (:mod:`skillrt.routing.planner`). A question that asks for advice,
  a recommendation, a plan or a method ("how should I structure this?", "where do I even
  start?", "anything off with this?"), a diagnosis ("why does this fail?", "what's
  causing this error?") or a judgement ("is this safe to merge?") is not one: a skill's
  procedure may be its answer.
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
_QUESTION_END = re.compile(r"[?？]\s*[)\"'”’]*\s*$")
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
    if _QUESTION_END.search(text):
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


#: A sentence ends at ., ! or ? before white space, or at a line break.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?？])\s+|\n+")
#: A lead-in closed by a colon before the question ("quick q:", "remind me:").
_QUESTION_LEAD = re.compile(r"^[^:?\n]{1,50}:\s+")
#: Words that open a closed (yes/no) question.
_CLOSED_TEXT = "is isn't are aren't does doesn't did didn't was wasn't were weren't has hasn't have"
_CLOSED_OPENERS = frozenset((_CLOSED_TEXT + " haven't").split())
#: Wh-words: a question of fact when it names what it asks about (see _FILLER).
_WH_TEXT = "what what's whats which when where who whose how"
_WH_OPENERS = frozenset(_WH_TEXT.split())
#: What asks for advice, a recommendation, a plan or a method rather than a fact ("how
#: should ...", "what's the best way ...", "is there a tool that ..."): a skill's
#: procedure may be the answer.
_ADVICE = re.compile(
    r"\b(?:should|would|could|ought|supposed\s+to|recommend\w*|suggest\w*|advi[sc]e"
    r"|approach|strategy|idea|ideas|thoughts)\b"
    r"|\b(?:best|safest|right|proper|good|better|cleanest|sensible)\s+(?:way|order|practice)"
    r"|\b(?:is|are)\s+there\b|\b(?:can|could|will|would)\s+(?:i|we|you|u)\b"
    r"|\b(?:go\s+about|get\s+started|start\s+with)\b|\bwhat\s+needs\b"
    r"|\bhow\s+(?:do|does|can|will)\s+(?:i|we|you|one)\s+(?:know|tell|ensure|make\s+sure|prove)\b"
    # "how do I fix ..." asks for the work itself.
    r"|\bhow\s+(?:do|can|could|to)\s+(?:(?:i|we|you)\s+)?(?:fix|solve|debug|resolve|repair"
    r"|troubleshoot|handle|deal\s+with|get\s+rid\s+of|prevent|avoid|speed\s+up|optimi[sz]e"
    r"|improve|refactor|clean\s+up|migrate|secure|harden)\b"
    # "what's causing this error?" asks for a diagnosis: debugging.
    r"|\b(?:caus(?:e|es|ed|ing)|happen(?:s|ed|ing)?|going\s+on|fail(?:s|ed|ing|ures?)?"
    r"|crash(?:es|ed|ing)?|break(?:s|ing)?|broke|errors?|bugs?|buggy)\b"
    # "is this safe to merge?" asks for a judgement of the material: a review.
    r"|\b(?:safe|ok|okay|fine|correct|right|good|secure|ready|enough|sane|reasonable"
    r"|acceptable|idiomatic|efficient|wrong|broken|bad|worth|legit|risky)\b",
    re.IGNORECASE,
)
#: Words that name nothing in a question ("what now?", "where do I even start?").
_FILLER_TEXT = """
    a an the this that these those it its it's here there now then i me my we us our you
    your u do does did is are was were be been am to of in on for with at by from up down
    out off about even just so also really actually anything something everything get go
    going start
"""
_FILLER = frozenset(_FILLER_TEXT.split()) | _WH_OPENERS
#: A fact question is short: longer ones carry a task's particulars.
FACT_QUESTION_WORDS = 25


def _question_tail(text: str) -> tuple[str, str] | None:
    """The trailing run of sentences that end in a question mark, and the text before
    it; None when ``text`` does not end in a question."""
    stripped = text.strip()
    if not _QUESTION_END.search(stripped):
        return None
    spans = [m.end() for m in _SENTENCE_BREAK.finditer(stripped)]
    starts = [0, *spans]
    first = len(starts) - 1
    # Walk back over sentences that are questions too ("which flag? just -g?").
    while first > 0 and _QUESTION_END.search(stripped[starts[first - 1] : starts[first]]):
        first -= 1
    return stripped[starts[first] :], stripped[: starts[first]]


def fact_about_material(text: str) -> bool:
    """True when ``text`` ends in a quick question of fact about something it shows (see
    the module docstring): the question is closed or a wh-question that names what it
    asks about, of at most :data:`FACT_QUESTION_WORDS` words, asks for no advice, and
    comes after pasted material, a code span or a line break."""
    tail = _question_tail(text)
    if tail is None:
        return False
    question, before = tail
    shown = "\n" in before or "`" in before or own_words(text) != text
    if not before.strip() or not shown:
        return False
    question = _QUESTION_LEAD.sub("", question, count=1)
    if _ADVICE.search(question) or request_words(question) > FACT_QUESTION_WORDS:
        return False
    words = [w.lower().rstrip(".") for w in _WORD.findall(question)]
    if sum(w not in _FILLER for w in words) < 2:
        return False
    first = words[0]
    if first in _CLOSED_OPENERS or first in _WH_OPENERS:
        return True
    if first == "do":
        return len(words) > 1 and words[1] in _DO_SUBJECTS
    return " or " in question.lower()

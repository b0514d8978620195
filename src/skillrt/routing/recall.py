"""Stage 1 (seed 001 §6.1): which skills are considered at all, and why.

Candidates come from four sources, tagged on each: ``forced`` (the user's explicit
words: ``$x``, "use the x skill", and "don't use x", which must be seen to be obeyed),
``rule`` (a trigger phrase, or a follow-up to a skill named in the history),
``lexical`` (BM25 top-N) and ``semantic`` (vector top-N), for the whole query and for
each of its clauses. Anti-trigger hits and history mentions are noted on the members.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillrt.routing.candidate import Candidate
from skillrt.routing.directives import Directives, find_directives
from skillrt.routing.evidence import Evidence
from skillrt.routing.history import is_follow_up
from skillrt.routing.text import terms
from skillrt.routing.topk import kth, top

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.index import RouterIndex

__all__ = ["CLAUSE_POOL", "Pool", "history_evidence", "recall"]

#: Candidates recalled per clause of a multi-clause query.
CLAUSE_POOL = 5


@dataclass
class Pool:
    """The recalled candidates of one query, by skill position, and what recall saw."""

    members: dict[int, Candidate]
    #: Skills within the semantic top-k of the query or a clause (seed 001 §6.1 k=3).
    top_select: set[int]
    #: Per clause: the skills whose anti-triggers the clause hits.
    clause_anti: list[set[int]]
    #: Lexical evidence of the history (None without history), for context readiness.
    history_lexical: NDArray[np.float32] | None


def recall(
    index: RouterIndex,
    query: str,
    clauses: Sequence[str],
    ev: Evidence,
    clause_ev: Sequence[Evidence],
    directives: Directives,
    rows: NDArray[np.int64] | None,
    *,
    pool_size: int,
    k_select: int,
    history: Sequence[str],
) -> Pool:
    """Merge the four recall sources into one pool (see the module docstring)."""
    pool: dict[int, Candidate] = {}

    def add(i: int, source: str | None = None) -> Candidate:
        cand = pool.get(i)
        if cand is None:
            cand = pool[i] = Candidate(i, index.names[i])
        if source is not None:
            cand.sources.add(source)
        return cand

    allowed = None if rows is None else set(rows.tolist())
    extra = max(1, pool_size // 4)
    for e, size in ((ev, pool_size), *((c, CLAUSE_POOL) for c in clause_ev)):
        for k in top(e.fused, size):
            if e.fused[k] > 0:
                add(int(e.rows[k]))
        for k in top(e.lex_raw, extra):
            if e.lex_raw[k] > 0:
                add(int(e.rows[k]))
        if e.sem_combined is not None:
            for k in top(e.sem_combined, extra):
                add(int(e.rows[k]))
    _tag_sources(pool, (ev, *clause_ev), pool_size)

    hits: dict[int, list[str]] = {}
    for hit in index.triggers.match(query):
        if allowed is None or hit.owner in allowed:
            hits.setdefault(hit.owner, []).append(hit.phrase)
    if len(hits) > pool_size:
        # A trigger shared by many skills: keep the best-evidenced of them.
        hits = dict(
            sorted(hits.items(), key=lambda kv: -float(ev.fused[ev.index_of(kv[0]) or 0]))[
                :pool_size
            ]
        )
    for owner, phrases in hits.items():
        add(owner, "rule").triggers.extend(phrases)
    for name, words in directives.forced.items():
        i = index.position[name]
        if allowed is None or i in allowed:
            cand = add(i, "forced")
            cand.forced = True
            cand.forced_words = words
            cand.forced_clause = _clause_of(words, clauses)
    for name in directives.excluded:
        i = index.position[name]
        if i in pool or allowed is None or i in allowed:
            add(i, "forced")

    history_lexical = None
    if history:
        named, history_lexical = history_evidence(index, history)
        if is_follow_up(query) and named:
            for i in named:
                if allowed is None or i in allowed:
                    add(i, "rule")
        for i in named:
            if i in pool:
                pool[i].history_named = True
    for hit in index.anti_triggers.match(query):
        if hit.owner in pool:
            pool[hit.owner].anti.append(hit.phrase)
    clause_anti: list[set[int]] = []
    if clause_ev:
        clause_anti = [{h.owner for h in index.anti_triggers.match(c)} for c in clauses]

    top_select = {int(ev.rows[k]) for k in top(ev.fused, k_select)}
    for cev in clause_ev:
        top_select |= {int(cev.rows[k]) for k in top(cev.fused, k_select)}
    return Pool(pool, top_select, clause_anti, history_lexical)


def _tag_sources(pool: dict[int, Candidate], evidence: Sequence[Evidence], size: int) -> None:
    """Source tags: within the top-N of a recall list for the query or a clause."""
    for e in evidence:
        lex_cut = kth(e.lex_raw, size)
        sem_cut = kth(e.sem_combined, size) if e.sem_combined is not None else None
        for i, cand in pool.items():
            at = e.index_of(i)
            if at is None:
                continue
            if e.lex_raw[at] > 0 and e.lex_raw[at] >= lex_cut:
                cand.sources.add("lexical")
            if e.sem_combined is not None and sem_cut is not None and e.sem_combined[at] >= sem_cut:
                cand.sources.add("semantic")


def history_evidence(
    index: RouterIndex, texts: Sequence[str]
) -> tuple[set[int], NDArray[np.float32]]:
    """Skills the history names (by name words or ``$mention``) and its lexical evidence."""
    from skillrt.routing.phrases import PhraseIndex
    from skillrt.routing.text import identifier_words

    names = PhraseIndex()
    for i, skill in enumerate(index.skills):
        names.add(identifier_words(skill.name), i)
    joined = "\n".join(texts)
    named = {m.owner for m in names.match(joined)}
    for text in texts:
        directives = find_directives(text, index.resolve_key)
        named |= {index.position[n] for n in directives.forced}
    lex = index.lexical.score(terms(joined))
    return named, lex.norm


def _clause_of(words: str, clauses: Sequence[str]) -> int:
    if len(clauses) <= 1:
        return -1
    low = words.lower()
    for n, clause in enumerate(clauses):
        if low and low in clause.lower():
            return n
    return -1

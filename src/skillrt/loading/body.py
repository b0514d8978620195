"""Fitting an over-long SKILL.md body into the Level-2 limits (seed 003 §5.2).

The body is cut into heading sections. Kept: the overview (text before the first
section heading, plus the first section), and every section whose heading (or an
ancestor's) names a trigger, steps, acceptance/self-check, a resource index or rules
(English and Chinese keywords). Dropped: the rest (long background, repeated examples),
named in one note line that points at ``references/``. When even the kept sections are
too long, budget goes to them in priority order and the last one is cut at a line end,
so the result always fits both the line and the character limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from skillrt.loading.sections import Heading, normalise_heading, scan_headings

#: Heading keywords per kind, matched as substrings of the normalised heading text.
KEY_SECTIONS: dict[str, tuple[str, ...]] = {
    "triggers": (
        "trigger", "when to use", "when to apply", "when to invoke", "use when", "use this",
        "usage", "applicab", "触发", "适用", "何时", "使用场景", "使用时机", "场景",
    ),
    "steps": (
        "step", "workflow", "process", "procedure", "instruction", "how to", "quick start",
        "quickstart", "getting started", "步骤", "流程", "操作", "指令", "指南", "做法",
    ),
    "acceptance": (
        "acceptance", "verif", "check", "validat", "definition of done", "done when",
        "success criteria", "criteria", "验收", "自检", "检查", "校验", "验证", "完成标准",
    ),
    "resources": (
        "resource", "reference", "index", "contents", "files", "see also", "资源", "参考",
        "索引", "目录",
    ),
    "rules": ("rule", "constraint", "guardrail", "约束", "规则"),
    "overview": ("overview", "summary", "introduction", "purpose", "概述", "概览", "简介", "目的"),
}  # fmt: skip
#: Headings that are never the overview, even as the first section (seed 003 §5.2:
#: long background and repeated examples go first).
DROP_FIRST: tuple[str, ...] = (
    "background", "history", "example", "appendix", "faq", "changelog", "背景", "历史",
    "示例", "例子", "范例", "附录",
)  # fmt: skip
#: Budget order when the kept sections alone are over the limits (first = kept first).
PRIORITY = ("preamble", "steps", "triggers", "acceptance", "rules", "resources", "overview")


def classify(heading_text: str) -> str | None:
    """The key kind a heading names (see :data:`KEY_SECTIONS`), or None."""
    text = normalise_heading(heading_text)
    for kind, words in KEY_SECTIONS.items():
        if any(w in text for w in words):
            return kind
    return None


def _droppable(heading_text: str) -> bool:
    text = normalise_heading(heading_text)
    return any(w in text for w in DROP_FIRST)


def count_lines(text: str) -> int:
    return len(text.splitlines())


@dataclass(frozen=True)
class FittedBody:
    text: str
    truncated: bool
    #: Headings of the sections left out, as ``## Heading``.
    dropped: tuple[str, ...] = ()
    #: Headings of the sections kept whole or in part.
    kept: tuple[str, ...] = ()


@dataclass
class _Chunk:
    start: int
    end: int
    heading: Heading | None
    kind: str | None
    parents: tuple[int, ...]  # indexes of ancestor chunks
    keep: bool = False

    @property
    def size(self) -> int:
        return self.end - self.start


def _unit_level(headings: list[Heading]) -> int:
    """The level whose headings split the body into sections: the shallowest level,
    unless it is a lone title above deeper headings (``# Title`` then ``## …``)."""
    top = min(h.level for h in headings)
    tops = [h for h in headings if h.level == top]
    deeper = [h.level for h in headings if h.level > top]
    if len(tops) == 1 and tops[0] is headings[0] and deeper:
        return min(deeper)
    return top


def _chunks(body: str, headings: list[Heading]) -> list[_Chunk]:
    unit = _unit_level(headings)
    chunks = [_Chunk(0, headings[0].start, None, "preamble", ())] if headings[0].start else []
    stack: list[int] = []  # chunk indexes of open ancestors
    first_unit_seen = False
    in_first_unit = False
    for i, h in enumerate(headings):
        end = headings[i + 1].start if i + 1 < len(headings) else len(body)
        while stack and chunks[stack[-1]].heading is not None:
            parent = chunks[stack[-1]].heading
            assert parent is not None
            if parent.level < h.level:
                break
            stack.pop()
        kind = classify(h.text)
        if h.level < unit:
            kind = "preamble"  # the title above the sections
        elif h.level == unit:
            in_first_unit = not first_unit_seen
            first_unit_seen = True
            if kind is None and in_first_unit and not _droppable(h.text):
                kind = "overview"
        if kind is None:
            inherited = [chunks[p].kind for p in stack if chunks[p].kind not in (None, "preamble")]
            if inherited:
                kind = inherited[-1]
        chunks.append(_Chunk(h.start, end, h, kind, tuple(stack)))
        stack.append(len(chunks) - 1)
    return chunks


#: Section names a cut's note shows before it only counts the rest.
NOTE_NAMES = 2


def _note(limit_lines: int, limit_chars: int, dropped: list[str], extra: str) -> str:
    """One or two lines: how much was left out (a count and the first names, never a
    list longer than what was kept) and where the whole text is (``extra``)."""
    if dropped:
        names = ", ".join(dropped[:NOTE_NAMES]) + (", …" if len(dropped) > NOTE_NAMES else "")
        plural = "s" if len(dropped) != 1 else ""
        what = f"{len(dropped)} section{plural} left out ({names})"
    else:
        what = "the end of long sections left out"
    text = f"[skillrt: body cut to fit {limit_lines} lines / {limit_chars:,} chars; {what}.{extra}]"
    if len(text) > max(200, limit_chars // 4):
        text = text[: max(200, limit_chars // 4) - 2] + "…]"
    return text


def hard_cut(text: str, max_lines: int, max_chars: int) -> str:
    """The longest prefix of ``text`` within both limits, ending at a line end if possible."""
    if count_lines(text) > max_lines:
        lines = text.splitlines(keepends=True)[: max(0, max_lines)]
        text = "".join(lines)
    if len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars)
        text = text[: cut + 1] if cut > max_chars // 2 else text[:max_chars]
    return text


def fit_body(body: str, max_lines: int, max_chars: int, *, note_extra: str = "") -> FittedBody:
    """``body`` if it is within both limits, else the key sections plus a note."""
    if count_lines(body) <= max_lines and len(body) <= max_chars:
        return FittedBody(body, False)
    headings = scan_headings(body)
    chunks = _chunks(body, headings) if headings else [_Chunk(0, len(body), None, "preamble", ())]
    note_probe = _note(max_lines, max_chars, [h.render() for h in headings], note_extra)
    budget_chars = max(0, max_chars - len(note_probe) - 2)
    budget_lines = max(0, max_lines - count_lines(note_probe) - 1)
    cut_at: dict[int, int] = {}  # chunk index -> end offset when kept only in part
    for kind in PRIORITY:
        for idx, chunk in enumerate(chunks):
            if chunk.kind != kind or chunk.keep:
                continue
            # A kept chunk needs its ancestors' heading lines for context.
            heads = [chunks[p] for p in chunk.parents if not chunks[p].keep]
            head_text = "".join(body[p.start : p.heading.end] for p in heads if p.heading)
            piece = body[chunk.start : chunk.end]
            need_chars = len(head_text) + len(piece)
            need_lines = count_lines(head_text) + count_lines(piece)
            if need_chars <= budget_chars and need_lines <= budget_lines:
                chunk.keep = True
            elif (
                budget_chars - len(head_text) >= 120 and budget_lines - count_lines(head_text) >= 3
            ):
                part = hard_cut(
                    piece,
                    budget_lines - count_lines(head_text) - 1,
                    budget_chars - len(head_text) - 2,
                )
                if not part.strip():
                    continue
                chunk.keep = True
                cut_at[idx] = chunk.start + len(part)
                need_chars = len(head_text) + len(part)
                need_lines = count_lines(head_text) + count_lines(part)
            else:
                continue
            for p in heads:
                p.keep = True
                if p.heading is not None:
                    cut_at[chunks.index(p)] = p.heading.end
            budget_chars -= need_chars
            budget_lines -= need_lines
    parts: list[str] = []
    dropped: list[str] = []
    kept: list[str] = []
    for idx, chunk in enumerate(chunks):
        if chunk.keep:
            piece = body[chunk.start : cut_at.get(idx, chunk.end)]
            if not piece.endswith("\n"):
                piece += "\n"
            parts.append(piece)
            if chunk.heading is not None:
                kept.append(chunk.heading.render())
        elif chunk.heading is not None and not any(
            not chunks[p].keep for p in chunk.parents if chunks[p].heading is not None
        ):
            dropped.append(chunk.heading.render())  # only the top-most dropped heading
        if idx in cut_at and chunk.heading is not None and cut_at[idx] != chunk.heading.end:
            parts.append("…\n")
    note = _note(max_lines, max_chars, dropped, note_extra)
    text = "".join(parts).rstrip("\n") + "\n\n" + note
    # The probe note lists every heading (capped), so the final one is no longer and the
    # budget holds; guard anyway: the contract is that the result fits.
    if count_lines(text) > max_lines or len(text) > max_chars:
        text = hard_cut(text, max_lines, max_chars)
    return FittedBody(text, True, tuple(dropped), tuple(kept))

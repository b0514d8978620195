"""Level 2 and Level 3 loading (seed 003 §3): a skill's body, one resource excerpt.

Both functions read exactly one file through :func:`~skillrt.loading.paths.open_in_jail`,
never list a folder, and return a :class:`LoadResult` whose text is within the limits.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from skillrt.config import LoaderLimits
from skillrt.errors import (
    DisallowedFileType,
    InvalidFrontmatter,
    SectionNotFound,
    SkillIOError,
    SkillNotFound,
    SkillrtError,
)
from skillrt.loading.body import count_lines, fit_body
from skillrt.loading.cache import CONTENT_CACHE, CachedText, file_key
from skillrt.loading.paths import check_relative_path, open_in_jail, read_limited, real_jail
from skillrt.loading.report import LoadMode, LoadReport, LoadResult, spill, spill_name
from skillrt.loading.sections import (
    Heading,
    cut_point,
    find_heading,
    outline,
    scan_headings_cached,
    section_end,
    suggest,
)
from skillrt.loading.structured import KIND_BY_SUFFIX, key_excerpt, top_level_keys
from skillrt.skills.frontmatter import normalise_text, split_frontmatter
from skillrt.skills.model import Skill, SkillRef

#: Suffixes whose sections are Markdown headings (a .txt is often Markdown too).
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".txt"})
#: Most characters the "how to read further" note may take from an excerpt.
MAX_NOTE_CHARS = 1500


def _as_ref(ref: Skill | SkillRef) -> SkillRef:
    return ref.ref if isinstance(ref, Skill) else ref


def _with_skill(exc: SkillrtError, ref: SkillRef) -> SkillrtError:
    return exc.fill(skill=ref.qualified_name)


def decode_text(data: bytes, shown: str) -> str:
    """UTF-8 text with LF line ends; binary (NUL bytes) and non-UTF-8 content refused."""
    if b"\x00" in data:
        raise DisallowedFileType(
            f"{shown!r} is a binary file (it contains NUL bytes), not text",
            path=shown,
            reason="binary",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillIOError(
            f"{shown!r} is not UTF-8 text (invalid byte at offset {exc.start}); save it as UTF-8",
            path=shown,
            reason="encoding",
            offset=exc.start,
        ) from exc
    return normalise_text(text)


@dataclass(frozen=True)
class _Loaded:
    sha256: str
    text: str
    bytes_read: int
    real_path: str
    cached: bool


def _read(
    ref: SkillRef,
    segments: tuple[str, ...],
    shown: str,
    limit: int,
    what: str,
    allowed: tuple[str, ...] | None,
) -> _Loaded:
    """Hash and decoded text of one file inside the skill's real folder.

    The walk and the open always happen; the content cache is consulted only with the
    opened descriptor's identity (see :mod:`skillrt.loading.cache`).
    """
    if not ref.path.is_dir():
        raise SkillNotFound(
            f"skill folder of '{ref.qualified_name}' is gone: {ref.path}",
            name=ref.qualified_name,
            path=str(ref.path),
        )
    jail = real_jail(ref.path)
    opened = open_in_jail(jail, segments, shown=shown, allowed_extensions=allowed)
    real = str(opened.real_path)
    try:
        key = file_key(opened.stat)
        if opened.stat.st_size <= limit:
            hit = CONTENT_CACHE.get(key)
            if hit is not None:
                return _Loaded(hit.sha256, hit.text, hit.size, real, True)
        data = read_limited(opened, limit, shown=shown, what=what)
    finally:
        os.close(opened.fd)
    sha = hashlib.sha256(data).hexdigest()
    text = decode_text(data, shown)
    if len(data) == opened.stat.st_size:  # unchanged while read: safe to remember
        CONTENT_CACHE.put(key, CachedText(sha, text, len(data)))
    return _Loaded(sha, text, len(data), real, False)


@dataclass(frozen=True)
class RawBody:
    """A SKILL.md body as read (frontmatter stripped), before any Level-2 fitting."""

    text: str
    #: sha256 of the whole SKILL.md file.
    sha256: str
    bytes_read: int
    real_path: str
    cached: bool
    #: The file line ``text`` starts on (for edges' line numbers).
    body_line: int = 1


def read_skill_body(ref: Skill | SkillRef, limits: LoaderLimits | None = None) -> RawBody:
    """The whole SKILL.md body through the path jail, frontmatter stripped, not fitted.

    The router reads bodies this way (it picks its own sections); :func:`load_skill_body`
    fits the same text into the Level-2 limits. Raises the loader's structured errors.
    """
    limits = limits or LoaderLimits()
    sref = _as_ref(ref)
    if sref.skill_file is None:
        raise SkillNotFound(
            f"'{sref.qualified_name}' has no SKILL.md (a catalogue entry); nothing to load",
            name=sref.qualified_name,
            skill=sref.qualified_name,
        )
    file_name = sref.skill_file.name
    try:
        loaded = _read(sref, (file_name,), file_name, limits.max_skill_file_bytes, "SKILL.md", None)
        try:
            doc = split_frontmatter(loaded.text)
            stripped = doc.body.lstrip("\n")
            body_line = doc.body_line + len(doc.body) - len(stripped)
            body = stripped.rstrip() + "\n"
        except InvalidFrontmatter as exc:
            exc.fill(path=loaded.real_path)
            raise
    except SkillIOError as exc:
        if exc.reason == "not_found":
            raise _with_skill(
                SkillNotFound(
                    f"SKILL.md of '{sref.qualified_name}' is missing",
                    name=sref.qualified_name,
                    path=str(sref.skill_file),
                ),
                sref,
            ) from exc
        raise _with_skill(exc, sref) from exc
    except SkillrtError as exc:
        raise _with_skill(exc, sref) from exc
    return RawBody(
        "" if body == "\n" else body,
        loaded.sha256,
        loaded.bytes_read,
        loaded.real_path,
        loaded.cached,
        body_line,
    )


def load_skill_body(
    ref: Skill | SkillRef,
    limits: LoaderLimits | None = None,
    *,
    spill_dir: Path | None = None,
) -> LoadResult:
    """The SKILL.md body (frontmatter stripped), within the Level-2 limits.

    Over the limits, ``limits.body_policy`` decides: ``"reject"`` raises
    :class:`~skillrt.errors.BodyTooLarge` with advice; ``"truncate"`` keeps the key sections
    (see :mod:`skillrt.loading.body`), sets ``truncated``, and spills the whole body to
    ``spill_dir`` when one is given. Never opens anything but SKILL.md.
    """
    limits = limits or LoaderLimits()
    return fit_skill_body(ref, read_skill_body(ref, limits), limits, spill_dir=spill_dir)


def fit_skill_body(
    ref: Skill | SkillRef,
    raw: RawBody,
    limits: LoaderLimits | None = None,
    *,
    spill_dir: Path | None = None,
) -> LoadResult:
    """Fit a body already read by :func:`read_skill_body` into the Level-2 limits (see
    :func:`load_skill_body`); reads nothing but what it spills."""
    from skillrt.errors import BodyTooLarge

    limits = limits or LoaderLimits()
    sref = _as_ref(ref)
    body, sha, real = raw.text, raw.sha256, raw.real_path
    file_name = sref.skill_file.name if sref.skill_file is not None else "SKILL.md"
    lines, chars = count_lines(body), len(body)
    over = lines > limits.max_skill_body_lines or chars > limits.max_skill_body_chars
    if over and limits.body_policy == "reject":
        raise BodyTooLarge(
            f"the body of '{sref.qualified_name}' is {lines} lines / {chars:,} chars, over "
            f"the {limits.max_skill_body_lines} lines / {limits.max_skill_body_chars:,} chars "
            "limit. Split long material (background, examples, tables) into references/*.md "
            "and index those files from the body, so they load only when needed.",
            skill=sref.qualified_name,
            path=real,
            lines=lines,
            chars=chars,
            limit_lines=limits.max_skill_body_lines,
            limit_chars=limits.max_skill_body_chars,
            advice="split into references/ and index them in the body",
        )
    storage_ref: str | None = None
    extra = f" The whole text: {sref.skill_file}" if sref.skill_file else ""
    if over and spill_dir is not None:
        target = Path(spill_dir) / spill_name(sref.qualified_name, sha, file_name)
        extra = f" Full body: {target}"
    fitted = fit_body(
        body, limits.max_skill_body_lines, limits.max_skill_body_chars, note_extra=extra
    )
    if fitted.truncated and spill_dir is not None:
        storage_ref = str(
            spill(Path(spill_dir), spill_name(sref.qualified_name, sha, file_name), body)
        )
    report = LoadReport(
        kind="body",
        skill=sref.qualified_name,
        source=sref.source,
        path=real,
        relative_path=file_name,
        sha256=sha,
        bytes_read=raw.bytes_read,
        cached=raw.cached,
        chars_total=chars,
        chars_returned=len(fitted.text),
        truncated=fitted.truncated,
        mode="fitted" if fitted.truncated else "full",
        storage_ref=storage_ref,
        dropped_sections=fitted.dropped,
    )
    return LoadResult(fitted.text, report)


def load_resource(
    ref: Skill | SkillRef,
    relative_path: str,
    section_hint: str | None = None,
    limits: LoaderLimits | None = None,
    *,
    spill_dir: Path | None = None,
    full: bool = False,
    strict: bool = False,
) -> LoadResult:
    """One file under the skill folder, as an excerpt within ``max_resource_excerpt_chars``.

    ``section_hint`` names a heading (``"## Security"`` matches that level only,
    ``"Security"`` any level) or, for JSON/YAML, a top-level key. No hint: the head of the
    file. A hint that matches nothing degrades to the head with a ``SectionNotFound`` entry
    in ``report.errors`` (``strict=True`` raises it instead). Content over
    ``spill_threshold_chars`` (or over the excerpt cap when ``full`` is asked) is written
    whole to ``spill_dir`` and ``report.storage_ref`` points at it. The path goes through
    every check of :mod:`skillrt.loading.paths`; no glob is ever expanded.
    """
    limits = limits or LoaderLimits()
    sref = _as_ref(ref)
    if sref.skill_file is None:
        raise SkillNotFound(
            f"'{sref.qualified_name}' is a catalogue entry without a skill folder; "
            "it has no resources",
            name=sref.qualified_name,
            skill=sref.qualified_name,
            path=relative_path,
        )
    try:
        segments = check_relative_path(relative_path)
        loaded = _read(
            sref,
            segments,
            relative_path,
            limits.max_resource_file_bytes,
            "resource",
            limits.allowed_extensions,
        )
    except SkillrtError as exc:
        raise _with_skill(exc, sref) from exc
    sha, text, real = loaded.sha256, loaded.text, loaded.real_path
    suffix = os.path.splitext(real)[1].lower()
    structured = KIND_BY_SUFFIX.get(suffix)
    markdown = suffix in MARKDOWN_SUFFIXES
    # The heading list is immutable; the cache key is the hash of the exact bytes read.
    headings = scan_headings_cached(sha, text) if markdown else []

    start, end = 0, len(text)
    whole = text
    mode: LoadMode = "head"
    matched: str | None = None
    errors: list[dict[str, object]] = []
    inner = headings
    if section_hint is not None and section_hint.strip():
        found = False
        if markdown:
            idx = find_heading(headings, section_hint)
            if idx is not None:
                start, end = headings[idx].start, section_end(text, headings, idx)
                # End on one newline, not on the blank lines before the next heading.
                tail = len(text[start:end].rstrip("\n"))
                end = min(end, start + tail + 1)
                inner = [h for h in headings if start < h.start < end]
                whole, mode, found = text[start:end], "section", True
                matched = headings[idx].render()
        elif structured is not None:
            hit = key_excerpt(text, structured, section_hint)
            if hit is not None:
                whole, mode, matched, found = hit.text, "key", hit.key, True
                text, start, end, inner = hit.text, 0, len(hit.text), []
        if not found:
            available = (
                [h.render() for h in headings] if markdown
                else top_level_keys(text, structured) if structured else []
            )  # fmt: skip
            err = SectionNotFound(
                f"no section {section_hint!r} in {relative_path!r}; returning the head instead",
                skill=sref.qualified_name,
                path=relative_path,
                section_hint=section_hint,
                available=available[:50],
                suggestions=suggest(headings, section_hint) if markdown else [],
            )
            if strict:
                raise err
            errors.append(err.to_dict())
    cap = limits.max_resource_excerpt_chars
    storage_ref: str | None = None
    spill_file: Path | None = None
    if spill_dir is not None and (
        len(whole) > limits.spill_threshold_chars or (full and len(whole) > cap)
    ):
        if len(whole) > limits.spill_threshold_chars:
            cap = min(cap, max(1, limits.spill_threshold_chars))
        name = os.path.basename(real) + (f"-{matched}" if matched else "")
        spill_file = Path(spill_dir) / spill_name(sref.qualified_name, sha, name)
    excerpt, truncated = _excerpt(
        text, start, end, inner, cap,
        shown=relative_path, matched=matched, spill_file=spill_file,
    )  # fmt: skip
    if truncated and spill_file is not None:
        storage_ref = str(spill(spill_file.parent, spill_file.name, whole))
    report = LoadReport(
        kind="resource",
        skill=sref.qualified_name,
        source=sref.source,
        path=real,
        relative_path=relative_path,
        sha256=sha,
        bytes_read=loaded.bytes_read,
        cached=loaded.cached,
        chars_total=len(whole),
        chars_returned=len(excerpt),
        truncated=truncated,
        mode="full" if mode == "head" and not truncated else mode,
        storage_ref=storage_ref,
        section_hint=section_hint,
        section=matched,
        errors=errors,
    )
    return LoadResult(excerpt, report)


def _excerpt(
    text: str,
    start: int,
    end: int,
    headings: list[Heading],
    cap: int,
    *,
    shown: str,
    matched: str | None,
    spill_file: Path | None,
) -> tuple[str, bool]:
    """``text[start:end]`` if it fits ``cap``; else a cut at a good boundary plus one
    note line saying what was left out and how to read it."""
    if end - start <= cap:
        return text[start:end], False
    reserve = min(MAX_NOTE_CHARS, max(cap // 5, 1))
    # First pass: cut leaving room for the longest note; second pass: cut again with the
    # room the actual note needs (it only shrinks as the cut moves later), so the excerpt
    # uses the cap rather than a fixed reserve.
    cut = cut_point(text, start, end, cap - reserve, headings)
    note = _note(text, start, end, cut, headings, reserve, shown, matched, spill_file)
    slack = 16  # the shown char count may gain a few digits
    second = cut_point(text, start, end, cap - len(note) - 2 - slack, headings)
    if second > cut:
        cut = second
        note = _note(text, start, end, cut, headings, reserve, shown, matched, spill_file)
    out = text[start:cut].rstrip("\n") + "\n\n" + note
    if len(out) > cap:  # only for a tiny cap: the content comes first
        out = out[:cap]
    return out, True


def _note(
    text: str,
    start: int,
    end: int,
    cut: int,
    headings: list[Heading],
    reserve: int,
    shown: str,
    matched: str | None,
    spill_file: Path | None,
) -> str:
    """The one-line note closing an excerpt: what is missing and how to read it."""
    where = f"{shown} {matched}" if matched else shown
    head = f"[skillrt: excerpt of {where}: {cut - start:,} of {end - start:,} chars"
    tail = (f" Full text: {spill_file}" if spill_file else "") + "]"
    rest = [h for h in headings if h.start >= cut]
    if not rest:
        return f"{head}; the rest is not shown.{tail}"
    top = min(h.level for h in rest)
    first = next(h for h in rest if h.level == top)
    example = f'Read one with section_hint (e.g. "{first.render()}").'
    fixed = len(head) + len(". Not shown: (+99999 more). ") + len(example) + len(tail)
    listed, left = outline(rest, max(0, reserve - fixed))
    more = f" (+{left} more)" if left else ""
    return f"{head}. Not shown: {listed or '…'}{more}. {example}{tail}"

"""Repair proposals from a model: the structured record (001 §12) and the file changes,
as JSON (full contents) or a unified diff, and a strict unified-diff applier."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from skillrt.errors import PatchRejected


@dataclass(frozen=True)
class FileChange:
    """One file of a proposal: its new full ``content``, or a unified ``diff``."""

    path: str
    content: str | None = None
    diff: str | None = None


@dataclass(frozen=True)
class PatchProposal:
    """A repair proposal with the structured record of 001 §12."""

    error_signature: str
    root_cause: str
    expected_effect: str
    changes: tuple[FileChange, ...]


# -- parsing -------------------------------------------------------------------------
_FENCED = re.compile(r"```([A-Za-z0-9_-]*)[^\n]*\n(.*?)```", re.DOTALL)


def parse_proposal(text: str) -> PatchProposal:
    """Read a proposal from a model's answer.

    Accepted: a JSON object (alone, or in a ```json block) with ``error_signature``,
    ``root_cause``, ``expected_effect`` and ``files: [{path, content} | {path, diff}]``;
    or that object without ``files`` plus a ```diff block holding a unified diff.
    """
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCED.finditer(text)]
    data: dict[str, Any] | None = None
    for lang, body in blocks:
        if lang in ("json", ""):
            data = _json_object(body)
            if data is not None:
                break
    if data is None:
        data = _json_object(text.strip())
    if data is None:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            data = _json_object(text[start : end + 1])
    if data is None:
        raise PatchRejected("the repair proposal has no JSON record", reason="unparseable")
    record = {k: data.get(k) for k in ("error_signature", "root_cause", "expected_effect")}
    for key, value in record.items():
        if not isinstance(value, str) or not value.strip():
            raise PatchRejected(f"the repair proposal lacks '{key}'", reason="unparseable")
    changes: list[FileChange] = []
    files = data.get("files")
    if files is not None:
        if not isinstance(files, list):
            raise PatchRejected("'files' must be a list", reason="unparseable")
        for item in files:
            if not isinstance(item, dict) or not isinstance(item.get("path"), str):
                raise PatchRejected("each file needs a 'path'", reason="unparseable")
            content, diff = item.get("content"), item.get("diff")
            if not isinstance(content, str) and not isinstance(diff, str):
                raise PatchRejected(
                    f"file {item['path']!r} needs 'content' or 'diff'", reason="unparseable"
                )
            changes.append(
                FileChange(
                    item["path"],
                    content if isinstance(content, str) else None,
                    diff if isinstance(diff, str) else None,
                )
            )
    for lang, body in blocks:
        if lang in ("diff", "patch", "udiff"):
            changes.extend(split_unified_diff(body))
    if not changes:
        raise PatchRejected("the repair proposal changes no file", reason="empty")
    return PatchProposal(
        error_signature=str(record["error_signature"]).strip(),
        root_cause=str(record["root_cause"]).strip(),
        expected_effect=str(record["expected_effect"]).strip(),
        changes=tuple(changes),
    )


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def split_unified_diff(text: str) -> list[FileChange]:
    """One :class:`FileChange` per file of a unified diff (``a/`` ``b/`` prefixes dropped)."""
    changes: list[FileChange] = []
    current: str | None = None
    lines: list[str] = []
    source: str | None = None

    def flush() -> None:
        if current is not None:
            changes.append(FileChange(current, diff="".join(lines)))

    for line in text.splitlines(keepends=True):
        if line.startswith("--- "):
            flush()
            current, lines = None, []
            source = _diff_path(line[4:])
            continue
        if line.startswith("+++ "):
            target = _diff_path(line[4:])
            current = target if target != "/dev/null" else source
            if current is None:
                raise PatchRejected("a diff has no file name", reason="unparseable")
            continue
        if current is not None:
            lines.append(line)
    flush()
    return changes


def _diff_path(raw: str) -> str:
    path = raw.rstrip("\n").split("\t")[0].strip()
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_unified_diff(old: str, diff: str, *, path: str) -> str:
    """Apply the hunks of one file's unified diff to ``old`` (context must match)."""
    src = old.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    hunks = _parse_hunks(diff, path)
    if not hunks:
        raise PatchRejected(f"the diff for {path!r} has no hunks", reason="unparseable", path=path)
    for start, body in hunks:
        before = [line[1:] for line in body if line[:1] in (" ", "-")]
        after = [line[1:] for line in body if line[:1] in (" ", "+")]
        at = _locate(src, before, max(start - 1, 0), pos)
        if at is None:
            raise PatchRejected(
                f"a hunk of the diff for {path!r} does not match the file",
                reason="diff_mismatch",
                path=path,
            )
        out.extend(src[pos:at])
        out.extend(after)
        pos = at + len(before)
    out.extend(src[pos:])
    return "".join(out)


def _parse_hunks(diff: str, path: str) -> list[tuple[int, list[str]]]:
    hunks: list[tuple[int, list[str]]] = []
    body: list[str] | None = None
    for line in diff.splitlines(keepends=True):
        m = _HUNK.match(line)
        if m:
            body = []
            hunks.append((int(m.group(1)), body))
            continue
        if body is None or line.startswith("\\"):
            continue  # preamble, or "\ No newline at end of file"
        if line[:1] in (" ", "-", "+"):
            body.append(line if line.endswith("\n") else line + "\n")
        elif line.strip() == "":
            body.append(" \n")
        else:
            raise PatchRejected(
                f"bad line in the diff for {path!r}: {line[:60]!r}", reason="unparseable"
            )
    return hunks


def _locate(src: list[str], before: list[str], hint: int, floor: int) -> int | None:
    """Where ``before`` occurs in ``src`` at or after ``floor``, nearest to ``hint``."""
    n = len(before)
    if n == 0:
        return max(min(hint, len(src)), floor)
    spots = [i for i in range(floor, len(src) - n + 1) if src[i : i + n] == before]
    if not spots:
        return None
    return min(spots, key=lambda i: abs(i - hint))

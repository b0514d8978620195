"""What every load returns: the text, its report (seed 003 §4.3), the injection block
(§6), and spilling large content to ``.agent/runs/<run_id>/observations/``."""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillrt.errors import UsageError
from skillrt.skills.model import Skill, SkillRef

LoadKind = Literal["body", "resource"]
#: How the returned text relates to the file: the whole of it, its head, one section,
#: one top-level key (JSON/YAML), or a body fitted to the limits.
LoadMode = Literal["full", "head", "section", "key", "fitted"]

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class LoadReport:
    """The audit record of one load (seed 003 §2.2, §4.3)."""

    kind: LoadKind
    #: Qualified skill name (``ns:name`` or ``name``).
    skill: str
    source: str
    #: The real absolute path of the file read.
    path: str
    #: The path as asked for (``SKILL.md`` for a body), relative to the skill folder.
    relative_path: str
    #: sha256 of the full file content read (bytes, before decoding).
    sha256: str
    #: Size of the content the text comes from (the whole file, as read from disk).
    bytes_read: int
    #: Characters of the whole content asked for (the body, section, key or file).
    chars_total: int
    chars_returned: int
    truncated: bool
    mode: LoadMode = "full"
    #: Where the full content was written when it was too large to return.
    storage_ref: str | None = None
    section_hint: str | None = None
    #: The heading (``## Security``) or key the hint matched.
    section: str | None = None
    #: Body sections left out by the truncate policy.
    dropped_sections: tuple[str, ...] = ()
    #: Degraded-load problems, as error dicts (``{"code": "SectionNotFound", ...}``).
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: True when the content came from the in-process cache (same device, inode, size,
    #: mtime and ctime as the file just opened) instead of being read again.
    cached: bool = False

    def summary(self) -> str:
        """One line for people (the CLI prints it on stderr)."""
        bits = [
            f"{self.skill}: {self.relative_path}",
            f"sha256={self.sha256[:12]}",
            f"bytes_read={self.bytes_read}",
            f"chars={self.chars_returned}/{self.chars_total}",
            f"truncated={str(self.truncated).lower()}",
        ]
        if self.section:
            bits.append(f"section={self.section!r}")
        if self.storage_ref:
            bits.append(f"storage_ref={self.storage_ref}")
        return "  ".join(bits)


@dataclass(frozen=True)
class LoadResult:
    """Loaded text (already within the limits) and its report."""

    text: str
    report: LoadReport

    @property
    def truncated(self) -> bool:
        return self.report.truncated


def _field(value: object) -> str:
    # Keep the block's header lines one line each, whatever a name or path contains.
    return str(value).replace("\r", " ").replace("\n", " ")


def injection_block(skill: Skill | SkillRef | None, result: LoadResult) -> str:
    """The context block of seed 003 §6, exactly: three header lines, then the text.

    ``[Skill: <name> | source=<source>]``, ``[Skill Path: <path>]``,
    ``[Load Report: sha256=<...> truncated=<true|false> bytes_read=<...>]``, ``<text>``.
    The identity comes from ``skill`` when given, else from the report.
    """
    report = result.report
    name = skill.qualified_name if skill is not None else report.skill
    source = skill.source if skill is not None else report.source
    return (
        f"[Skill: {_field(name)} | source={_field(source)}]\n"
        f"[Skill Path: {_field(report.path)}]\n"
        f"[Load Report: sha256={report.sha256} truncated={str(report.truncated).lower()} "
        f"bytes_read={report.bytes_read}]\n"
        f"{result.text}"
    )


# -- spilling -----------------------------------------------------------------------------
def new_run_id() -> str:
    """A fresh, sortable run id: ``20250101T120000Z-a1b2c3``."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        raise UsageError(
            f"invalid run id {run_id!r}: use letters, digits, '.', '_' and '-' (max 128)",
            run_id=run_id,
        )
    return run_id


def observations_dir(project_dir: Path, run_id: str) -> Path:
    """``<project>/.agent/runs/<run_id>/observations`` (the folder is not created here)."""
    return Path(project_dir) / ".agent" / "runs" / check_run_id(run_id) / "observations"


def spill_name(skill: str, sha256: str, name: str) -> str:
    """``<skill>-<sha8>-<name>.txt`` with every unsafe character replaced."""

    def clean(value: str, limit: int) -> str:
        return _UNSAFE_NAME.sub("_", value).strip("._")[:limit] or "x"

    return f"{clean(skill, 80)}-{sha256[:8]}-{clean(name, 100)}.txt"


def spill(spill_dir: Path, file_name: str, text: str) -> Path:
    """Write ``text`` to ``spill_dir/file_name`` atomically (temp file + rename)."""
    spill_dir.mkdir(parents=True, exist_ok=True)
    target = spill_dir / file_name
    fd, tmp = tempfile.mkstemp(prefix=".spill-", suffix=".tmp", dir=spill_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return target

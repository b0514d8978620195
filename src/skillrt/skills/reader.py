"""Read one skill folder into a :class:`Skill` (or a :class:`BrokenSkill` that says why)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from skillrt.errors import InvalidFrontmatter
from skillrt.fileopen import NotRegularFile, open_regular
from skillrt.skills.frontmatter import load_yaml_mapping, split_frontmatter
from skillrt.skills.model import (
    COST_HINTS,
    BrokenSkill,
    CostHint,
    Diagnostic,
    Prerequisites,
    RoutingMeta,
    Skill,
)
from skillrt.skills.validate import normalise_name, validate_frontmatter

SKILL_FILENAMES = ("SKILL.md", "skill.md")
#: Codes of a skill file caught mid-change (swapped, replaced, unreadable for now):
#: not cached, so the next walk reads the file again.
TRANSIENT_CODES = frozenset(
    {"SKILL_FILE_UNREADABLE", "SKILL_FILE_NOT_REGULAR", "SKILL_FILE_CHANGED"}
)
#: Bump when parsing (or the cache record format) changes: the index cache re-reads
#: every skill whose row has another version.
PARSER_VERSION = 3
_BINARY_SNIFF = 8192


def find_skill_md(skill_dir: Path) -> Path | None:
    """The folder's SKILL.md, or a lowercase skill.md when there is no SKILL.md."""
    try:
        names = set(os.listdir(skill_dir))
    except OSError:
        return None
    for name in SKILL_FILENAMES:
        if name in names:
            return skill_dir / name
    return None


def _diag(code: str, message: str, path: Path | None) -> Diagnostic:
    return Diagnostic(
        code=code, severity="error", message=message, path=str(path) if path else None
    )


def read_skill(
    skill_dir: Path,
    *,
    skill_file: Path | None = None,
    namespace: str | None = None,
    source: str = "project",
    root: Path | None = None,
    max_file_bytes: int = 10_000_000,
    max_frontmatter_bytes: int = 64_000,
    stat_result: os.stat_result | None = None,
) -> Skill | BrokenSkill:
    """Parse ``skill_dir``'s SKILL.md. Never raises for bad content: it reports it.

    Only the frontmatter is read (Level 1): reading stops at the closing fence.
    ``stat_result`` is the file's stat when the caller already has it.
    """

    def broken(code: str, message: str) -> BrokenSkill:
        return BrokenSkill(
            skill_dir,
            skill_file,
            source,
            namespace,
            (_diag(code, message, skill_file or skill_dir),),
        )

    if skill_file is None:
        skill_file = find_skill_md(skill_dir)
    if skill_file is None:
        return broken(
            "SKILL_FILE_MISSING",
            f"Missing required file: SKILL.md (SKILL.md not found in {skill_dir})",
        )
    try:
        st = stat_result if stat_result is not None else os.stat(skill_file)
    except OSError as exc:
        return broken("SKILL_FILE_UNREADABLE", f"cannot read {skill_file}: {exc.strerror}")
    if not stat.S_ISREG(st.st_mode):
        return broken("SKILL_FILE_NOT_REGULAR", f"{skill_file} is not a regular file")
    if st.st_size > max_file_bytes:
        return broken(
            "SKILL_FILE_TOO_LARGE",
            f"{skill_file} is {st.st_size} bytes, over the {max_file_bytes} limit",
        )
    try:
        # Non-blocking, and the file opened must be the one just stat'ed: a FIFO or
        # another file swapped in since (by the walk's lstat or ours) is refused.
        fh, _ = open_regular(skill_file, expect=st)
        with fh:
            raw = read_frontmatter_bytes(fh, max_frontmatter_bytes)
    except NotRegularFile as exc:
        return broken("SKILL_FILE_NOT_REGULAR", f"{skill_file} {exc.strerror}")
    except OSError as exc:
        if exc.errno == errno.ESTALE:
            return broken("SKILL_FILE_CHANGED", f"{skill_file} was replaced while being read")
        return broken("SKILL_FILE_UNREADABLE", f"cannot read {skill_file}: {exc.strerror}")
    return parse_skill_bytes(
        raw,
        skill_dir=skill_dir,
        skill_file=skill_file,
        namespace=namespace,
        source=source,
        root=root,
        max_frontmatter_bytes=max_frontmatter_bytes,
    )


_CLOSING_FENCE = re.compile(rb"\n(?:---|\.\.\.)[ \t]*\r?(?:\n|$)")
_CHUNK = 4096


def read_frontmatter_bytes(fh: BinaryIO, max_frontmatter_bytes: int) -> bytes:
    """Read up to the end of the closing fence, and no further: Level 1 never reads a body.

    Stops early on a file that does not start with a fence, and after
    ``max_frontmatter_bytes`` (plus one chunk) when no fence is found.
    """
    buf = b""
    while True:
        chunk = fh.read(_CHUNK)
        buf += chunk
        first_nl = buf.find(b"\n")
        if first_nl >= 0 or not chunk:
            head = buf if first_nl < 0 else buf[:first_nl]
            if head.lstrip(b"\xef\xbb\xbf").rstrip() != b"---":
                return buf
            m = _CLOSING_FENCE.search(buf, first_nl if first_nl >= 0 else len(buf))
            if m and (m.group(0).endswith(b"\n") or not chunk):
                return buf[: m.end()]
        if not chunk or len(buf) > max_frontmatter_bytes + _CHUNK:
            return buf


def parse_skill_bytes(
    raw: bytes,
    *,
    skill_dir: Path,
    skill_file: Path,
    namespace: str | None,
    source: str,
    root: Path | None,
    max_frontmatter_bytes: int = 64_000,
) -> Skill | BrokenSkill:
    def broken(code: str, message: str) -> BrokenSkill:
        return BrokenSkill(
            skill_dir, skill_file, source, namespace, (_diag(code, message, skill_file),)
        )

    if len(raw) > max_frontmatter_bytes + len(b"\n---\r\n"):
        return broken(
            "FRONTMATTER_TOO_LARGE", f"frontmatter is over the {max_frontmatter_bytes}-byte limit"
        )
    if b"\x00" in raw[:_BINARY_SNIFF]:
        return broken("SKILL_FILE_BINARY", f"{skill_file} is a binary file, not Markdown")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return broken(
            "SKILL_FILE_INVALID_UTF8",
            f"{skill_file} is not valid UTF-8 (byte {exc.start}): {exc.reason}",
        )
    try:
        doc = split_frontmatter(text)
    except InvalidFrontmatter as exc:
        return broken(exc.reason or "FRONTMATTER_INVALID", exc.message)
    if len(doc.frontmatter.encode("utf-8")) > max_frontmatter_bytes:
        return broken(
            "FRONTMATTER_TOO_LARGE", f"frontmatter is over the {max_frontmatter_bytes}-byte limit"
        )
    try:
        data, repaired = load_yaml_mapping(doc.frontmatter)
    except InvalidFrontmatter as exc:
        return broken(exc.reason or "FRONTMATTER_INVALID", exc.message)
    diagnostics = [
        Diagnostic(d.code, d.severity, d.message, str(skill_file), d.field)
        for d in validate_frontmatter(data, skill_dir.name)
    ]
    if repaired:
        diagnostics.append(
            Diagnostic(
                "FRONTMATTER_REPAIRED",
                "warning",
                "frontmatter was not valid YAML; unquoted values were quoted to read it "
                "(quote values that contain ': ')",
                str(skill_file),
            )
        )
    name = data.get("name")
    description = data.get("description")
    if (
        not isinstance(name, str)
        or not name.strip()
        or not isinstance(description, str)
        or not description.strip()
    ):
        return BrokenSkill(skill_dir, skill_file, source, namespace, tuple(diagnostics))
    return build_skill(
        data,
        name=normalise_name(name),
        description=description.strip(),
        path=skill_dir,
        skill_file=skill_file,
        namespace=namespace,
        source=source,
        root=root,
        content_hash=hashlib.sha256(raw).hexdigest(),
        diagnostics=tuple(diagnostics),
    )


def build_skill(
    data: Mapping[str, Any],
    *,
    name: str,
    description: str,
    path: Path,
    skill_file: Path | None,
    namespace: str | None,
    source: str,
    root: Path | None,
    content_hash: str,
    diagnostics: tuple[Diagnostic, ...],
) -> Skill:
    """Make a Skill from a frontmatter-like mapping (also used for JSONL catalogues)."""
    raw_meta = data.get("metadata")
    meta_map: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    from skillrt.skills.validate import KNOWN_FIELDS

    return Skill(
        name=name,
        description=description,
        path=path,
        skill_file=skill_file,
        namespace=namespace,
        source=source,
        root=root,
        license=_opt_str(data.get("license")),
        compatibility=_opt_str(data.get("compatibility")),
        allowed_tools=parse_allowed_tools(data.get("allowed-tools")),
        metadata={str(k): _meta_str(v) for k, v in meta_map.items()},
        routing=routing_meta(data, meta_map),
        disable_model_invocation=_bool(data.get("disable-model-invocation"), False),
        user_invocable=_bool(data.get("user-invocable"), True),
        argument_hint=_opt_str(data.get("argument-hint") or meta_map.get("argument-hint")),
        context=_opt_str(data.get("context")),
        content_hash=content_hash,
        diagnostics=diagnostics,
        extra={
            k: v
            for k, v in data.items()
            if isinstance(k, str) and k not in KNOWN_FIELDS and _is_json(v)
        },
    )


def parse_allowed_tools(value: Any) -> tuple[str, ...]:
    """``allowed-tools`` as a space-separated string or a YAML list (S1)."""
    if isinstance(value, str):
        return tuple(_split_tools(value))
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return ()


def _split_tools(value: str) -> list[str]:
    # Split on spaces/commas but keep parenthesised patterns such as "Bash(git log:*)" whole.
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch.isspace() or ch == ","):
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def routing_meta(data: Mapping[str, Any], meta: Mapping[str, Any]) -> RoutingMeta:
    def pick(key: str) -> Any:
        return data[key] if key in data else meta.get(key)

    cost = pick("cost_hint")
    cost_hint: CostHint = cost if cost in COST_HINTS else "medium"
    return RoutingMeta(
        triggers=_str_list(pick("triggers")),
        anti_triggers=_str_list(pick("anti_triggers")),
        examples=_str_list(pick("examples")),
        cost_hint=cost_hint,
        prerequisites=_prerequisites(pick("prerequisites")),
        parallel_safe=_bool(pick("parallel_safe"), False),
        always=_bool(pick("always"), False),
    )


def _prerequisites(value: Any) -> Prerequisites:
    if isinstance(value, Mapping):
        return Prerequisites(bins=_str_list(value.get("bins")), env=_str_list(value.get("env")))
    if isinstance(value, (list, str)):
        return Prerequisites(bins=_str_list(value))
    return Prerequisites()


def _str_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        parts = value.split(",") if "," in value else [value]
        return tuple(p.strip() for p in parts if p.strip())
    if isinstance(value, (list, tuple)):
        return tuple(
            str(v).strip()
            for v in value
            if v is not None and not isinstance(v, (dict, list)) and str(v).strip()
        )
    return ()


def _bool(value: Any, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
    return default


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _meta_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True

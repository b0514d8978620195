"""Labelled routing data: JSONL skill catalogues and JSONL query sets (SPEC E3).

A catalogue line is a skill: ``{"name", "description", "examples"?, "triggers"?,
"anti_triggers"?, "cost_hint"?, "prerequisites"?, "parallel_safe"?, "path"?, ...}`` —
the same keys as SKILL.md frontmatter, built with the same code
(:func:`skillrt.skills.reader.build_skill`, source ``"catalog"``). ``path`` names the
skill's SKILL.md relative to a base folder (by default the catalogue's own folder): the
skill then has a body (the router reads it, the loader serves it) and its folder is the
SKILL.md's folder. A path that leaves the base folder, or names no file, is reported and
the line kept without a body. A catalogue is a first-class skill source:
``skillrt route --catalog FILE`` routes over it.

A query line is ``{"query", "expected": [names], "also_ok"?: [names], "candidates"?:
[names], ...}``; ``expected: []`` means no skill should fire; ``also_ok`` names skills
that are equally right answers. Other keys are kept in ``meta``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrt.errors import CatalogError
from skillrt.skills.model import Diagnostic, Skill
from skillrt.skills.reader import build_skill
from skillrt.skills.validate import normalise_name
from skillrt.wellformed import well_formed_json

__all__ = [
    "CatalogError",
    "LabelledQuery",
    "load_catalog",
    "load_catalog_report",
    "load_queries",
]

MAX_LINE_BYTES = 1_000_000
_QUERY_KEYS = ("query", "expected", "candidates", "also_ok")


@dataclass(frozen=True)
class LabelledQuery:
    query: str
    expected: tuple[str, ...]
    candidates: tuple[str, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: Skills that are equally right answers (a hit on one counts as a hit).
    also_ok: tuple[str, ...] = ()

    @property
    def no_skill(self) -> bool:
        return not self.expected


@dataclass(frozen=True)
class CatalogReport:
    skills: tuple[Skill, ...]
    #: One diagnostic per skipped line (bad JSON, missing name/description, duplicate).
    problems: tuple[Diagnostic, ...]


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        fh = path.open("r", encoding="utf-8-sig")
    except OSError as exc:
        raise CatalogError(f"cannot read {path}: {exc.strerror}", path=str(path)) from exc
    with fh:
        try:
            for number, line in enumerate(fh, start=1):
                if line.strip():
                    yield number, line
        except UnicodeDecodeError as exc:
            raise CatalogError(f"{path} is not UTF-8 text", path=str(path)) from exc


def _skill_file(
    value: object, base: Path, number: int, problem: Callable[[int, str, str], None]
) -> Path | None:
    """The SKILL.md a line's ``path`` names, inside ``base`` (None, reported, otherwise)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        problem(number, "CATALOG_BAD_PATH", "'path' must be a relative file path")
        return None
    target = (base / value).resolve()
    if not target.is_relative_to(base):
        problem(number, "CATALOG_PATH_OUTSIDE_BASE", f"'path' {value!r} leaves {base}")
        return None
    if not target.is_file():
        problem(number, "CATALOG_PATH_MISSING", f"'path' {value!r}: no such file under {base}")
        return None
    return target


def load_catalog_report(path: Path | str, *, base: Path | str | None = None) -> CatalogReport:
    """Every valid skill of a JSONL catalogue plus a diagnostic per skipped line.

    ``base`` is the folder a line's ``path`` is relative to (default: the catalogue's
    folder). A bad ``path`` is reported; the line still loads, without a body.
    """
    path = Path(path)
    base_dir = Path(base).resolve() if base is not None else path.parent.resolve()
    skills: list[Skill] = []
    problems: list[Diagnostic] = []
    seen: set[str] = set()

    def problem(number: int, code: str, message: str) -> None:
        problems.append(Diagnostic(code, "error", f"line {number}: {message}", str(path)))

    folder = path.parent.resolve()
    for number, line in _lines(path):
        if len(line) > MAX_LINE_BYTES:
            problem(number, "CATALOG_LINE_TOO_LONG", f"over {MAX_LINE_BYTES} characters")
            continue
        try:
            data = well_formed_json(json.loads(line))  # no lone surrogate reaches a model
        except json.JSONDecodeError as exc:
            problem(number, "CATALOG_BAD_JSON", f"not JSON: {exc.msg}")
            continue
        if not isinstance(data, dict):
            problem(number, "CATALOG_NOT_OBJECT", "a catalogue line must be a JSON object")
            continue
        name, description = data.get("name"), data.get("description")
        if not isinstance(name, str) or not name.strip():
            problem(number, "CATALOG_NO_NAME", "missing 'name'")
            continue
        if not isinstance(description, str) or not description.strip():
            problem(number, "CATALOG_NO_DESCRIPTION", f"'{name}' has no 'description'")
            continue
        namespace = None
        bare = name.strip()
        if ":" in bare:
            namespace, bare = bare.split(":", 1)
        bare = normalise_name(bare)
        qualified = f"{namespace}:{bare}" if namespace else bare
        if qualified in seen:
            problem(number, "CATALOG_DUPLICATE", f"duplicate skill '{qualified}' skipped")
            continue
        seen.add(qualified)
        skill_file = _skill_file(data.get("path"), base_dir, number, problem)
        skills.append(
            build_skill(
                data,
                name=bare,
                description=description.strip(),
                path=skill_file.parent if skill_file is not None else folder,
                skill_file=skill_file,
                namespace=namespace,
                source="catalog",
                root=base_dir if skill_file is not None else folder,
                content_hash=hashlib.sha256(line.strip().encode("utf-8")).hexdigest(),
                diagnostics=(),
            )
        )
    return CatalogReport(tuple(skills), tuple(problems))


def load_catalog(path: Path | str, *, base: Path | str | None = None) -> list[Skill]:
    """The skills of a JSONL catalogue (bad lines are skipped; see load_catalog_report)."""
    return list(load_catalog_report(path, base=base).skills)


def load_queries(path: Path | str, *, limit: int | None = None) -> list[LabelledQuery]:
    """Labelled queries of a JSONL file; a malformed line is an error (data must be exact)."""
    path = Path(path)
    out: list[LabelledQuery] = []
    for number, line in _lines(path):
        if limit is not None and len(out) >= limit:
            break
        try:
            data = well_formed_json(json.loads(line))
        except json.JSONDecodeError as exc:
            raise CatalogError(
                f"{path}:{number}: not JSON: {exc.msg}", path=str(path), line=number
            ) from exc
        if not isinstance(data, dict) or not isinstance(data.get("query"), str):
            raise CatalogError(
                f"{path}:{number}: each line needs a string 'query'", path=str(path), line=number
            )
        expected = data.get("expected", [])
        if not isinstance(expected, list) or not all(isinstance(e, str) for e in expected):
            raise CatalogError(
                f"{path}:{number}: 'expected' must be a list of names",
                path=str(path),
                line=number,
            )
        lists: dict[str, tuple[str, ...] | None] = {}
        for key in ("candidates", "also_ok"):
            value = data.get(key)
            if value is not None and (
                not isinstance(value, list) or not all(isinstance(c, str) for c in value)
            ):
                raise CatalogError(
                    f"{path}:{number}: '{key}' must be a list of names",
                    path=str(path),
                    line=number,
                )
            lists[key] = None if value is None else tuple(value)
        meta = {k: v for k, v in data.items() if k not in _QUERY_KEYS}
        out.append(
            LabelledQuery(
                query=data["query"],
                expected=tuple(expected),
                candidates=lists["candidates"],
                meta=meta,
                also_ok=lists["also_ok"] or (),
            )
        )
    return out

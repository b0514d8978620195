"""``skillrt validate``: check skill folders, or every skill under a root."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skillrt.config import DiscoveryConfig
from skillrt.skills.discovery import Root, WalkReport, stands_alone, walk_root
from skillrt.skills.model import BrokenSkill, Diagnostic, Skill
from skillrt.skills.reader import SKILL_FILENAMES, find_skill_md, read_skill


@dataclass(frozen=True)
class ValidationResult:
    """Every problem of one skill folder (or of a path that is not one)."""

    path: Path
    name: str | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def valid(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


#: Warnings for discovery (S4: the skill still loads) that ``validate`` fails on, as
#: the spec's "must" and skills-ref 0.1.1's validator do: a name that is not its folder's.
STRICT_IN_VALIDATE = frozenset({"NAME_DIR_MISMATCH"})


def validate_problem(skill: Skill) -> Diagnostic | None:
    """The first problem ``skillrt validate`` fails ``skill`` on, or None: such a skill
    still loads (S4) and is listed with its problem, but is never injected."""
    for d in skill.diagnostics:
        if d.severity == "error" or d.code in STRICT_IN_VALIDATE:
            return d
    return None


def _result(item: Skill | BrokenSkill) -> ValidationResult:
    name = item.qualified_name if isinstance(item, Skill) else None
    diagnostics = tuple(
        dataclasses.replace(d, severity="error") if d.code in STRICT_IN_VALIDATE else d
        for d in item.diagnostics
    )
    return ValidationResult(item.path, name, diagnostics)


def validate_dir(skill_dir: Path, config: DiscoveryConfig | None = None) -> ValidationResult:
    """Validate one skill folder."""
    config = config or DiscoveryConfig()
    if not skill_dir.exists():
        return ValidationResult(
            skill_dir,
            None,
            (
                Diagnostic(
                    "PATH_NOT_FOUND", "error", f"Path does not exist: {skill_dir}", str(skill_dir)
                ),
            ),
        )
    if not skill_dir.is_dir():
        return ValidationResult(
            skill_dir,
            None,
            (
                Diagnostic(
                    "NOT_A_DIRECTORY", "error", f"Not a directory: {skill_dir}", str(skill_dir)
                ),
            ),
        )
    return _result(
        read_skill(
            skill_dir,
            max_file_bytes=config.max_skill_file_bytes,
            max_frontmatter_bytes=config.max_frontmatter_bytes,
        )
    )


def validate_paths(
    paths: Sequence[Path], config: DiscoveryConfig | None = None
) -> list[ValidationResult]:
    """Validate each path: a skill folder (or its SKILL.md) directly, any other folder
    as a root. Under a root, a skill hidden by an earlier one of the same qualified name
    gets a ``SHADOWED`` warning (S5: never silent)."""
    config = config or DiscoveryConfig()
    results: list[ValidationResult] = []
    for path in paths:
        if path.is_file() and path.name in SKILL_FILENAMES:
            path = path.parent
        if not path.is_dir() or find_skill_md(path) is not None:
            results.append(validate_dir(path, config))
            continue
        report = WalkReport(diagnostics=[])
        found_any = False
        first_seen: dict[str, Path] = {}
        listed: dict[Path, str] = {}
        for found in walk_root(Root(path, None, "flag"), config, report):
            item = read_skill(
                found.path,
                skill_file=found.skill_file,
                namespace=found.namespace,
                max_file_bytes=config.max_skill_file_bytes,
                max_frontmatter_bytes=config.max_frontmatter_bytes,
                stat_result=found.stat,
            )
            if found.enclosing and not stands_alone(item, found.enclosing, listed):
                continue  # a file of the skill it is nested in
            found_any = True
            if isinstance(item, Skill):
                listed[found.path] = item.name
            result = _result(item)
            if isinstance(item, Skill):
                winner = first_seen.setdefault(item.qualified_name, item.path)
                if winner != item.path:
                    shadowed = Diagnostic(
                        "SHADOWED",
                        "warning",
                        f"{item.qualified_name} is also defined at {winner}, which takes "
                        "precedence; this one is not used",
                        str(item.path),
                    )
                    result = ValidationResult(
                        result.path, result.name, (*result.diagnostics, shadowed)
                    )
            results.append(result)
        problems = list(report.diagnostics)
        if not found_any:
            problems.append(
                Diagnostic(
                    "SKILL_FILE_MISSING",
                    "error",
                    "Missing required file: SKILL.md (and no skills below)",
                    str(path),
                )
            )
        if problems:
            results.append(ValidationResult(path, None, tuple(problems)))
    return results

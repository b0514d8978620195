"""Repair patches: parse a proposal, check it, apply it atomically, list and revert it.

A proposal may only touch the failing skill's own ``SKILL.md``, ``scripts/*`` and
``references/*`` (001 §12). Every path goes through the loader's path jail
(:func:`skillrt.loading.check_relative_path` + :func:`skillrt.loading.safe_join`: no
``..``, no absolute path, no NUL, no symlink leaving the folder); the resolved path must
still be in an allowed area, and a symlink is never written through. A ``SKILL.md``
patch may not change the security fields of its frontmatter (``name``,
``allowed-tools``, ``disable-model-invocation``, ``user-invocable``, ``prerequisites``:
001 §12 forbids editing permission policy).

Applying: originals are copied to ``<state>/repairs/<patch_id>/files/`` with a
``manifest.json`` first, then each file is written to a temp file in its own folder and
``os.replace``-d over the target; if any write fails the written files are restored.
Reverting puts the originals back the same way, and refuses (``E_PATCH_CONFLICT``) when
a file changed since the patch, unless forced.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.atomic import atomic_write_bytes
from skillrt.errors import PatchConflict, PatchNotFound, PatchRejected
from skillrt.execution.proposals import (
    FileChange,
    PatchProposal,
    apply_unified_diff,
    parse_proposal,
    split_unified_diff,
)
from skillrt.skills.model import Skill
from skillrt.store.base import Store
from skillrt.store.repairs import PatchRecord

ALLOWED_FILES = ("SKILL.md",)
ALLOWED_DIRS = ("scripts", "references")
#: Frontmatter fields a repair may never change.
PROTECTED_FIELDS = (
    "name",
    "allowed-tools",
    "allowed_tools",
    "disable-model-invocation",
    "user-invocable",
    "prerequisites",
)
MAX_FILE_BYTES = 512_000

__all__ = [
    "FileChange",
    "PatchBudget",
    "PatchProposal",
    "PatchRecord",
    "PlannedFile",
    "apply_patch",
    "apply_unified_diff",
    "get_patch",
    "list_patches",
    "parse_proposal",
    "plan_patch",
    "revert_patch",
    "split_unified_diff",
]
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class PlannedFile:
    """A checked change, ready to write."""

    path: str
    target: Path
    old: str | None
    new: str
    hunks: int
    added_tokens: int


@dataclass(frozen=True)
class PatchBudget:
    """001 §13 per-attempt limits."""

    max_files: int = 3
    max_hunks: int = 8
    max_added_tokens_in_skill_doc: int = 300


# -- checking ------------------------------------------------------------------------
def _allowed(rel: str) -> bool:
    parts = rel.split("/")
    if len(parts) == 1:
        return parts[0] in ALLOWED_FILES
    return parts[0] in ALLOWED_DIRS and all(parts[1:])


def resolve_target(skill_dir: Path, rel: str) -> tuple[str, Path]:
    """The checked relative path and its real target inside ``skill_dir``."""
    from skillrt.errors import LoadError
    from skillrt.loading import check_relative_path, safe_join

    try:
        segments = check_relative_path(rel)
        target = safe_join(skill_dir, rel)
    except LoadError as exc:  # traversal, symlink escape, a file used as a folder
        raise PatchRejected(
            f"patch path {rel!r} is refused: {exc.message}",
            reason="path_unsafe",
            path=rel,
            detail=exc.reason,
        ) from exc
    norm = "/".join(segments)
    real_dir = Path(os.path.realpath(skill_dir))
    try:
        resolved_rel = target.relative_to(real_dir).as_posix()
    except ValueError as exc:
        raise PatchRejected(
            f"patch path {rel!r} leaves the skill folder", reason="path_unsafe", path=rel
        ) from exc
    if not _allowed(norm) or not _allowed(resolved_rel):
        raise PatchRejected(
            f"patch path {rel!r} is outside SKILL.md, scripts/ and references/",
            reason="path_not_allowed",
            path=rel,
        )
    if os.path.islink(skill_dir / norm):
        raise PatchRejected(
            f"patch path {rel!r} is a symlink; repairs never write through links",
            reason="symlink",
            path=rel,
        )
    if target.exists() and not target.is_file():
        raise PatchRejected(f"patch path {rel!r} is not a regular file", reason="not_a_file")
    return norm, target


def count_hunks(old: str, new: str) -> int:
    """Hunks a unified diff (3 lines of context) of the change would have."""
    a, b = old.splitlines(), new.splitlines()
    return sum(1 for _ in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3))


def added_tokens(old: str, new: str) -> int:
    """Tokens (words and punctuation marks) on the lines the change adds."""
    a, b = old.splitlines(), new.splitlines()
    added: list[str] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag in ("insert", "replace"):
            added.extend(b[j1:j2])
    return len(_TOKEN.findall("\n".join(added)))


def _frontmatter(text: str) -> dict[str, Any]:
    from skillrt.errors import InvalidFrontmatter
    from skillrt.skills.frontmatter import load_yaml_mapping, split_frontmatter

    try:
        data, _ = load_yaml_mapping(split_frontmatter(text).frontmatter)
    except InvalidFrontmatter as exc:
        raise PatchRejected(
            "the patched SKILL.md has no valid frontmatter", reason="frontmatter"
        ) from exc
    return data


def _check_protected(old: str, new: str) -> None:
    before, after = _frontmatter(old), _frontmatter(new)
    raw_b, raw_a = before.get("metadata"), after.get("metadata")
    meta_b: dict[str, Any] = raw_b if isinstance(raw_b, dict) else {}
    meta_a: dict[str, Any] = raw_a if isinstance(raw_a, dict) else {}
    for key in PROTECTED_FIELDS:
        if before.get(key) != after.get(key) or meta_b.get(key) != meta_a.get(key):
            raise PatchRejected(
                f"a repair may not change the '{key}' field of SKILL.md",
                reason="protected_field",
                field=key,
            )


def plan_patch(skill: Skill, proposal: PatchProposal, budget: PatchBudget) -> list[PlannedFile]:
    """Check every rule and budget; the new content of each file (nothing written)."""
    if skill.skill_file is None:
        raise PatchRejected(f"'{skill.qualified_name}' has no folder to patch", reason="no_folder")
    skill_dir = skill.path
    by_path: dict[str, PlannedFile] = {}
    for change in proposal.changes:
        norm, target = resolve_target(skill_dir, change.path)
        if norm in by_path:
            raise PatchRejected(f"{norm!r} is changed twice", reason="duplicate", path=norm)
        old: str | None = None
        if target.exists():
            data = target.read_bytes()
            if len(data) > MAX_FILE_BYTES or b"\0" in data:
                raise PatchRejected(f"{norm!r} is binary or too large", reason="not_text")
            old = data.decode("utf-8", errors="strict")
        if change.content is not None:
            new = change.content
        else:
            new = apply_unified_diff(old or "", change.diff or "", path=norm)
        if "\0" in new or len(new.encode("utf-8")) > MAX_FILE_BYTES:
            raise PatchRejected(f"the new {norm!r} is binary or too large", reason="not_text")
        if norm == "SKILL.md":
            if old is None:
                raise PatchRejected("SKILL.md is missing", reason="no_skill_md")
            _check_protected(old, new)
        if new == (old or ""):
            continue
        tokens = added_tokens(old or "", new) if norm == "SKILL.md" else 0
        by_path[norm] = PlannedFile(norm, target, old, new, count_hunks(old or "", new), tokens)
    planned = list(by_path.values())
    if not planned:
        raise PatchRejected("the proposal changes nothing", reason="empty")
    if len(planned) > budget.max_files:
        raise PatchRejected(
            f"the proposal changes {len(planned)} files, over the {budget.max_files} allowed",
            reason="budget_files",
            files=len(planned),
        )
    hunks = sum(p.hunks for p in planned)
    if hunks > budget.max_hunks:
        raise PatchRejected(
            f"the proposal has {hunks} hunks, over the {budget.max_hunks} allowed",
            reason="budget_hunks",
            hunks=hunks,
        )
    tokens = sum(p.added_tokens for p in planned)
    if tokens > budget.max_added_tokens_in_skill_doc:
        raise PatchRejected(
            f"the proposal adds {tokens} tokens to SKILL.md, over the "
            f"{budget.max_added_tokens_in_skill_doc} allowed",
            reason="budget_tokens",
            tokens=tokens,
        )
    return planned


# -- applying ------------------------------------------------------------------------
def _sha(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text is not None else None


def apply_patch(
    store: Store | None,
    repairs_dir: Path,
    skill: Skill,
    planned: Sequence[PlannedFile],
    *,
    attempt_id: str | None = None,
) -> PatchRecord:
    """Back up the originals, then write every file atomically (all or none)."""
    patch_id = f"patch-{secrets.token_hex(6)}"
    backup = repairs_dir / patch_id
    files_dir = backup / "files"
    manifest: list[dict[str, Any]] = []
    modes: dict[str, int | None] = {}
    for p in planned:
        entry = {
            "path": p.path,
            "existed": p.old is not None,
            "sha_before": _sha(p.old),
            "sha_after": _sha(p.new),
            "hunks": p.hunks,
            "added_tokens": p.added_tokens,
        }
        if p.old is not None:
            atomic_write_bytes(files_dir / p.path, p.old.encode("utf-8"))
            modes[p.path] = os.stat(p.target).st_mode & 0o7777
        else:
            modes[p.path] = None
        manifest.append(entry)
    meta = {
        "patch_id": patch_id,
        "attempt_id": attempt_id,
        "skill": skill.qualified_name,
        "skill_dir": str(skill.path),
        "files": manifest,
        "created_at": time.time(),
    }
    atomic_write_bytes(backup / "manifest.json", json.dumps(meta, indent=2).encode("utf-8"))
    record = PatchRecord(
        patch_id,
        attempt_id,
        skill.qualified_name,
        str(skill.path),
        str(backup),
        tuple(manifest),
        "applying",
        meta["created_at"],  # type: ignore[arg-type]
    )
    _save(store, record)
    written: list[PlannedFile] = []
    try:
        for p in planned:
            atomic_write_bytes(p.target, p.new.encode("utf-8"), mode=modes[p.path])
            written.append(p)
    except BaseException:
        for p in reversed(written):
            _restore(p.target, p.old, files_dir / p.path, modes[p.path])
        _set_status(store, patch_id, "failed")
        raise
    _set_status(store, patch_id, "applied")
    return _replace_status(record, "applied")


def _restore(target: Path, old: str | None, backup: Path, mode: int | None) -> None:
    if old is None:
        try:
            target.unlink()
        except FileNotFoundError:
            pass
    else:
        atomic_write_bytes(target, backup.read_bytes(), mode=mode)


def _save(store: Store | None, r: PatchRecord) -> None:
    if store is not None:
        store.repairs.add_patch(r)


def _set_status(store: Store | None, patch_id: str, status: str) -> None:
    if store is not None:
        store.repairs.set_patch_status(patch_id, status, at=time.time())


def _replace_status(r: PatchRecord, status: str, reverted_at: float | None = None) -> PatchRecord:
    import dataclasses

    return dataclasses.replace(r, status=status, reverted_at=reverted_at)


def list_patches(store: Store) -> list[PatchRecord]:
    return store.repairs.patches()


def get_patch(store: Store, ident: str) -> PatchRecord:
    """A patch by its id, or by the id of the repair attempt that made it."""
    record = store.repairs.find_patch(ident)
    if record is None:
        raise PatchNotFound(f"no repair patch or attempt '{ident}'", id=ident)
    return record


def revert_patch(store: Store, ident: str, *, force: bool = False) -> PatchRecord:
    """Put back the originals of a patch (by patch id or attempt id)."""
    record = get_patch(store, ident)
    if record.status == "reverted":
        return record
    skill_dir = Path(record.skill_dir)
    files_dir = Path(record.backup_dir) / "files"
    plan: list[tuple[Path, dict[str, Any]]] = []
    for entry in record.files:
        try:
            # The folder may have changed since: check the path jail again.
            _, target = resolve_target(skill_dir, entry["path"])
        except PatchRejected as exc:
            raise PatchConflict(
                f"{entry['path']} can no longer be written safely: {exc.message}",
                path=entry["path"],
                patch_id=record.patch_id,
            ) from exc
        current = target.read_bytes().decode("utf-8", "replace") if target.exists() else None
        if not force and _sha(current) != entry["sha_after"]:
            raise PatchConflict(
                f"{entry['path']} changed after the patch; revert with --force to discard "
                "those changes",
                path=entry["path"],
                patch_id=record.patch_id,
            )
        plan.append((target, entry))
    for target, entry in reversed(plan):
        if entry["existed"]:
            backup = files_dir / entry["path"]
            mode = os.stat(target).st_mode & 0o7777 if target.exists() else None
            atomic_write_bytes(target, backup.read_bytes(), mode=mode)
        else:
            try:
                target.unlink()
            except FileNotFoundError:
                pass
    _set_status(store, record.patch_id, "reverted")
    return _replace_status(record, "reverted", time.time())


def remove_backup(record: PatchRecord) -> None:
    """Delete a patch's backup folder (after a successful revert, if wanted)."""
    shutil.rmtree(record.backup_dir, ignore_errors=True)

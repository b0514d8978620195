"""Progressive disclosure, proven by counting file access (seed 003 §1).

(a) Listing, lookup, the catalogue and Level-1 routing (``routing.read_bodies: false``)
never read a body: bytes read from each SKILL.md stop at the end of its frontmatter,
and a marker placed deep in the body is never seen. Routing on bodies (the default)
reads each SKILL.md through the loader and nothing under references/ or scripts/.
(b) Loading a body opens SKILL.md and nothing else: no file under references/ or
scripts/ is opened, stat'ed or listed.
(c) Loading a resource touches that one file only.
"""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The loader decides at import whether os.open takes dir_fd: import it before any test
# patches os.open.
import skillrt.loading.loader  # noqa: F401
from skillrt.runtime import SkillRuntime

BODY_MARKER = "BODY-MARKER-5a1e"


class _CountingFile:
    """Wraps a binary file object and counts what is read through it."""

    def __init__(self, inner: Any, log: dict[str, bytearray], key: str) -> None:
        self._inner, self._log, self._key = inner, log, key

    def read(self, *args: Any) -> Any:
        data = self._inner.read(*args)
        if isinstance(data, bytes):
            self._log[self._key] += data
        elif isinstance(data, str):
            self._log[self._key] += data.encode()
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __enter__(self) -> _CountingFile:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)

    def __iter__(self) -> Iterator[Any]:
        for line in self._inner:
            self._log[self._key] += line if isinstance(line, bytes) else line.encode()
            yield line


@pytest.fixture
def read_log(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytearray]:
    """Bytes read from each SKILL.md, through open() and os.read()."""
    log: dict[str, bytearray] = {}
    real_open = builtins.open
    real_os_open, real_os_read, real_os_close = os.open, os.read, os.close
    fds: dict[int, str] = {}

    def tracking_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        fh = real_open(file, *args, **kwargs)
        name = str(file)
        if name.endswith("SKILL.md"):
            log.setdefault(name, bytearray())
            return _CountingFile(fh, log, name)
        return fh

    def tracking_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_os_open(path, flags, *args, **kwargs)
        if str(path).endswith("SKILL.md"):
            fds[fd] = str(path)
            log.setdefault(str(path), bytearray())
        return fd

    def tracking_os_read(fd: int, n: int) -> bytes:
        data = real_os_read(fd, n)
        if fd in fds:
            log[fds[fd]] += data
        return data

    def tracking_close(fd: int) -> None:
        fds.pop(fd, None)
        real_os_close(fd)

    monkeypatch.setattr(builtins, "open", tracking_open)
    monkeypatch.setattr(io, "open", tracking_open)
    monkeypatch.setattr(os, "open", tracking_os_open)
    monkeypatch.setattr(os, "read", tracking_os_read)
    monkeypatch.setattr(os, "close", tracking_close)
    return log


def _catalogue(make_skill: Callable[..., Path], root: Path, n: int = 5) -> None:
    body = "# Body\n\n" + "filler line of the body\n" * 20_000 + BODY_MARKER + "\n"
    for i in range(n):
        make_skill(
            f"skill-{i}",
            root=root,
            body=body,
            triggers=[f"trigger {i}"],
            files={"references/ref.md": "# Ref\n" + BODY_MARKER, "scripts/x.sh": "echo"},
        )


def test_listing_and_routing_never_read_a_body(
    make_skill: Callable[..., Path], tmp_path: Path, read_log: dict[str, bytearray]
) -> None:
    from skillrt.config import RoutingConfig, RuntimeConfig

    root = tmp_path / "skills"
    _catalogue(make_skill, root)
    level_one = RuntimeConfig().replace_section(routing=RoutingConfig(read_bodies=False))
    rt = SkillRuntime(level_one, roots=[root], persist=False)
    try:
        entries = rt.list()
        assert len(entries) == 5
        skills = rt.registry.skills()
        rt.registry.enabled_skills()
        rt.get("skill-3")
        rt.catalog()
        # What a router reads: every Level-1 field.
        seen = [
            (s.name, s.description, s.routing.triggers, s.routing.anti_triggers, s.routing.examples,
             s.routing.cost_hint, s.allowed_tools, s.metadata, s.content_hash)
            for s in skills
        ]  # fmt: skip
        assert len(seen) == 5
        route = getattr(rt, "route", None)
        if callable(route):
            route("trigger 3")
    finally:
        rt.close()
    assert read_log, "the registry must have read the frontmatter"
    for path, data in read_log.items():
        size = os.path.getsize(path)
        assert size > 400_000
        assert BODY_MARKER.encode() not in data, path
        # The frontmatter plus at most one read chunk; never the 400 KB body.
        assert len(data) <= 8192, (path, len(data))
    # Then loading one body reads exactly that one file in full.
    read_log.clear()
    rt = SkillRuntime(roots=[root], persist=False)
    try:
        result = rt.load_body("skill-3", spill=False)
    finally:
        rt.close()
    assert result.report.truncated
    body_reads = {p: d for p, d in read_log.items() if BODY_MARKER.encode() in d}
    assert list(body_reads) in (["SKILL.md"], [str(root / "skill-3" / "SKILL.md")])


def test_routing_on_bodies_reads_skill_md_only(
    make_skill: Callable[..., Path], tmp_path: Path, access_log: list[str]
) -> None:
    root = tmp_path / "skills"
    for name in ("ledger", "poetry"):
        make_skill(
            name,
            root=root,
            body=f"# {name}\n\n## Steps\nReconcile the {name} statements.\n",
            files={"references/ref.md": "# Ref\n", "scripts/x.sh": "echo"},
        )
    rt = SkillRuntime(roots=[root], persist=False)
    try:
        access_log.clear()
        assert len(rt.registry) == 2
        # Discovery looks into skill folders for nested SKILL.md files (a stat of
        # references/SKILL.md), but opens nothing else.
        opened = [e for e in access_log if e.startswith("open:") and not e[5:].isdigit()]
        assert opened and all(e.endswith("/SKILL.md") for e in opened), opened
        assert "x.sh" not in " ".join(access_log) and "ref.md" not in " ".join(access_log)
        access_log.clear()
        result = rt.route("reconcile the ledger statements")
    finally:
        rt.close()
    assert result.candidates[0].name == "ledger"
    touched = " ".join(access_log)
    assert "references" not in touched and "scripts" not in touched and "x.sh" not in touched
    assert access_log.count("open:SKILL.md") == 2  # each body, through the jail


@pytest.fixture
def access_log(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path given to open/stat/list calls (names relative to a dir fd included)."""
    log: list[str] = []

    def wrap(module: Any, name: str) -> None:
        real = getattr(module, name)

        def recorder(path: Any = ".", *args: Any, **kwargs: Any) -> Any:
            log.append(f"{name}:{path}")
            return real(path, *args, **kwargs)

        monkeypatch.setattr(module, name, recorder)

    for name in ("open", "stat", "lstat", "scandir", "listdir", "readlink"):
        wrap(os, name)
    wrap(builtins, "open")
    wrap(io, "open")
    return log


def test_loading_a_body_opens_nothing_but_skill_md(
    make_skill: Callable[..., Path], tmp_path: Path, access_log: list[str]
) -> None:
    from skillrt.loading import load_skill_body
    from skillrt.skills.reader import read_skill

    folder = make_skill(
        "quiet",
        body="# Quiet\n\nSee references/guide.md and scripts/run.sh.\n",
        files={"references/guide.md": "# Guide\n", "scripts/run.sh": "echo"},
    )
    skill = read_skill(folder)
    access_log.clear()
    result = load_skill_body(skill)  # type: ignore[arg-type]
    assert "references/guide.md" in result.text
    touched = " ".join(access_log)
    assert "references" not in touched.replace("See references/guide.md", "")
    assert "scripts" not in touched
    assert not any(e.startswith(("scandir:", "listdir:")) for e in access_log)
    opened = [e for e in access_log if e.startswith("open:")]
    assert opened == [f"open:{folder.resolve()}", "open:SKILL.md"], access_log


def test_loading_a_resource_touches_only_that_file(
    make_skill: Callable[..., Path], access_log: list[str]
) -> None:
    from skillrt.loading import load_resource
    from skillrt.skills.reader import read_skill

    folder = make_skill(
        "one",
        files={"references/a.md": "# A\n", "references/b.md": "# B\n", "scripts/s.sh": "x"},
    )
    skill = read_skill(folder)
    access_log.clear()
    load_resource(skill, "references/a.md")  # type: ignore[arg-type]
    touched = " ".join(access_log)
    assert "b.md" not in touched and "scripts" not in touched and "SKILL.md" not in touched
    assert not any(e.startswith(("scandir:", "listdir:")) for e in access_log)

"""A hostile skill tree, built at test time (symlinks, FIFOs and devices are never committed).

Layout under ``tmp_path``::

    outside/SECRET.md, outside/dir/SECRET.md      the bytes that must never come back
    real/hostile/                                  the skill's real folder (the jail)
        SKILL.md
        references/guide.md                        a normal reference
        references/inside_link.md -> guide.md      allowed: stays inside
        references/abs_inside.md -> <jail>/references/guide.md   allowed
        references/up_and_back.md -> ../references/guide.md     allowed
        references/link_out.md -> ../../../outside/SECRET.md    escape (relative)
        references/abs_out.md -> <tmp>/outside/SECRET.md         escape (absolute)
        references/dir_out -> ../../../outside/dir               escape (directory)
        deep/a/b/c -> ../../../../../outside                     escape at depth
        deep/a/b/hop.md -> ../../../references/link_out.md       escape via a chain
        sibling_link.md -> ../sibling/SECRET.md                  escape to a sibling
        loop_a -> loop_b, loop_b -> loop_a, self -> self         loops
        references/fifo.md, references/socket.md, references/device.md
        references/binary.md, references/latin1.md, references/huge.md
        references/script.sh, references/NOTES.MD, references/star*.md
        scripts/run.sh
    real/sibling/SECRET.md
    skills/hostile -> ../real/hostile                  the skill is reached through a link
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill

SECRET = "TOP-SECRET-7f3a9c-never-return-me"
GUIDE = """# Guide

Intro paragraph.

## Setup

Install things.

## Security

Be careful.
"""


@dataclass
class Hostile:
    root: Path
    jail: Path
    link: Path
    skill: Skill
    outside: Path
    device: bool
    sockets: list[socket.socket]


def _symlink(target: str | Path, at: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(str(target), at)


def build_hostile(tmp_path: Path) -> Hostile:
    """Build the tree under ``tmp_path`` (see the module docstring)."""
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "SECRET.md").write_text(SECRET + "\n", encoding="utf-8")
    (outside / "dir" / "SECRET.md").write_text(SECRET + " (dir)\n", encoding="utf-8")
    jail = tmp_path / "real" / "hostile"
    (jail / "references").mkdir(parents=True)
    (jail / "scripts").mkdir()
    (tmp_path / "real" / "sibling").mkdir()
    (tmp_path / "real" / "sibling" / "SECRET.md").write_text(SECRET, encoding="utf-8")
    (jail / "SKILL.md").write_text(
        "---\nname: hostile\ndescription: Use when testing hostile trees.\n---\n# Hostile\n",
        encoding="utf-8",
    )
    refs = jail / "references"
    (refs / "guide.md").write_text(GUIDE, encoding="utf-8")
    _symlink("guide.md", refs / "inside_link.md")
    _symlink(jail / "references" / "guide.md", refs / "abs_inside.md")
    _symlink("../references/guide.md", refs / "up_and_back.md")
    _symlink("../../../outside/SECRET.md", refs / "link_out.md")
    _symlink(outside / "SECRET.md", refs / "abs_out.md")
    _symlink("../../../outside/dir", refs / "dir_out")
    (jail / "deep" / "a" / "b").mkdir(parents=True)
    _symlink("../../../../../outside", jail / "deep" / "a" / "b" / "c")
    _symlink("../../../references/link_out.md", jail / "deep" / "a" / "b" / "hop.md")
    _symlink("../sibling/SECRET.md", jail / "sibling_link.md")
    _symlink("loop_b", jail / "loop_a")
    _symlink("loop_a", jail / "loop_b")
    _symlink("self", jail / "self")
    os.mkfifo(refs / "fifo.md")
    sockets = []
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(refs / "socket.md"))
        sockets.append(sock)
    except OSError:
        sock.close()
    device = False
    try:
        os.mknod(refs / "device.md", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null
        device = True
    except (PermissionError, OSError):
        pass
    (refs / "binary.md").write_bytes(b"# Title\n\x00\x01\x02binary")
    (refs / "latin1.md").write_bytes("# Café\n".encode("latin-1"))
    (refs / "huge.md").write_bytes(b"a" * 2_000_001)
    (refs / "script.sh").write_text("echo hi\n", encoding="utf-8")
    (refs / "NOTES.MD").write_text("# Notes\n", encoding="utf-8")
    (refs / "star*.md").write_text("# Literal star\n", encoding="utf-8")
    (jail / "scripts" / "run.sh").write_text("echo run\n", encoding="utf-8")
    link = tmp_path / "skills" / "hostile"
    _symlink("../real/hostile", link)
    skill = read_skill(link)
    assert isinstance(skill, Skill)
    return Hostile(tmp_path, jail, link, skill, outside, device, sockets)


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Hostile]:
    tree = build_hostile(tmp_path)
    yield tree
    for s in tree.sockets:
        s.close()


@pytest.fixture(scope="module")
def hostile_shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    """One tree for a whole module (property tests); tests must not change it."""
    tree = build_hostile(tmp_path_factory.mktemp("hostile"))
    yield tree
    for s in tree.sockets:
        s.close()

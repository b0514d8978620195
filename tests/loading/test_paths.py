"""The string gate (check_relative_path) and safe_join."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillrt.errors import PathTraversalBlocked
from skillrt.loading.paths import check_relative_path, safe_join

from .conftest import Hostile

REFUSED = [
    ("", "empty"),
    (".", "empty"),
    ("./", "empty"),
    ("..", "dotdot"),
    ("../x.md", "dotdot"),
    ("references/../../x.md", "dotdot"),
    ("references/..", "dotdot"),
    ("a/../b.md", "dotdot"),
    ("/etc/passwd", "absolute"),
    ("//server/share/x.md", "absolute"),
    ("x\x00.md", "nul"),
    ("references/x.md\x00.txt", "nul"),
    ("x\n.md", "control_char"),
    ("x\x7f.md", "control_char"),
    ("..\\x.md", "backslash"),
    ("references\\x.md", "backslash"),
    ("\\\\server\\share\\x.md", "backslash"),
    ("C:\\Windows\\win.ini", "backslash"),
    ("C:foo.md", "drive"),
    ("c:/x.md", "drive"),
    ("x.md:stream", "colon"),
    ("~/x.md", "tilde"),
    ("~root/x.md", "tilde"),
    ("references/~x.md", "tilde"),
    ("%2e%2e/x.md", "encoded"),
    ("%2E%2E/x.md", "encoded"),
    ("references/%2e%2e/%2e%2e/x.md", "encoded"),
    ("..%2fx.md", "encoded"),
    ("%2e%2e%2fx.md", "encoded"),
    ("a%2fb.md", "encoded"),
    ("a%5cb.md", "encoded"),
    ("%252e%252e/x.md", "encoded"),
    ("%25252e%25252e/x.md", "encoded"),
    ("%2fetc/passwd", "encoded"),
    ("x%00.md", "encoded"),
    ("%7e/x.md", "encoded"),
    ("\uff0e\uff0e/x.md", "unicode"),  # fullwidth dots
    ("a\uff0fb.md", "unicode"),  # fullwidth solidus
    ("\u2025/x.md", "unicode"),  # two-dot leader
    ("x" * 5000, "too_long"),
]


@pytest.mark.parametrize(("path", "reason"), REFUSED)
def test_refused_paths(path: str, reason: str) -> None:
    with pytest.raises(PathTraversalBlocked) as info:
        check_relative_path(path)
    assert info.value.context["reason"] == reason
    assert info.value.code == "PathTraversalBlocked"


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("references/guide.md", ("references", "guide.md")),
        ("./references//guide.md", ("references", "guide.md")),
        ("references/./guide.md", ("references", "guide.md")),
        ("references/*.md", ("references", "*.md")),  # a glob is just a name
        ("references/[a-z]?.md", ("references", "[a-z]?.md")),
        ("100%.md", ("100%.md",)),
        ("100%25.md", ("100%25.md",)),  # decodes to 100%.md: harmless
        ("résumé/指南.md", ("résumé", "指南.md")),
        ("notes~.md", ("notes~.md",)),
        ("a..b.md", ("a..b.md",)),
        ("...", ("...",)),
        ("references/", ("references",)),
    ],
)
def test_accepted_paths(path: str, segments: tuple[str, ...]) -> None:
    assert check_relative_path(path) == segments


def test_non_string_refused() -> None:
    with pytest.raises(PathTraversalBlocked):
        check_relative_path(b"x.md")  # type: ignore[arg-type]


def test_safe_join_inside(hostile: Hostile) -> None:
    jail = hostile.jail
    assert safe_join(hostile.link, "references/guide.md") == jail / "references" / "guide.md"
    # A link inside the folder resolves to its target.
    assert safe_join(hostile.link, "references/inside_link.md") == jail / "references/guide.md"
    assert safe_join(hostile.link, "references/abs_inside.md") == jail / "references/guide.md"
    # A missing leaf is joined as written, under the real folder.
    assert safe_join(hostile.link, "references/new/file.md") == jail / "references/new/file.md"
    assert safe_join(hostile.link, ".") == jail


@pytest.mark.parametrize(
    "path",
    [
        "references/link_out.md",
        "references/abs_out.md",
        "references/dir_out/SECRET.md",
        "references/dir_out/missing.md",
        "deep/a/b/c/SECRET.md",
        "deep/a/b/hop.md",
        "sibling_link.md",
        "loop_a",
        "self/x.md",
        "../x",
    ],
)
def test_safe_join_blocks_escapes(hostile: Hostile, path: str) -> None:
    with pytest.raises(PathTraversalBlocked):
        safe_join(hostile.link, path)


def test_safe_join_refuses_climbing_out_of_a_missing_folder(tmp_path: Path) -> None:
    base = tmp_path / "skill"
    base.mkdir()
    (tmp_path / "secret.md").write_text("x", encoding="utf-8")
    os.symlink("missing/../../secret.md", base / "tricky.md")
    with pytest.raises(PathTraversalBlocked):
        safe_join(base, "tricky.md")

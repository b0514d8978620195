"""Property: for any relative path, the file read is inside the skill's real folder,
or the call raises PathTraversalBlocked (or another LoadError for a non-traversal reason).

Paths are built from the names planted in the hostile tree (links out, loops, the
SECRET's own folder names), ``..``/``.``, separators, encoded and Unicode forms.
An oracle (``os.path.realpath`` of the plain join) says where the OS would go: when
that is outside the jail, the loader must refuse with PathTraversalBlocked.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillrt.config import LoaderLimits
from skillrt.errors import LoadError, PathTraversalBlocked
from skillrt.loading import load_resource, safe_join

from .conftest import SECRET, Hostile

PLANTED = [
    "references", "guide.md", "inside_link.md", "abs_inside.md", "up_and_back.md",
    "link_out.md", "abs_out.md", "dir_out", "deep", "a", "b", "c", "hop.md",
    "sibling_link.md", "loop_a", "loop_b", "self", "SECRET.md", "outside", "sibling",
    "real", "hostile", "dir", "SKILL.md", "scripts", "run.sh", "star*.md", "NOTES.MD",
]  # fmt: skip
TRICKY = [
    "..", ".", "", "...", "%2e%2e", "%2E%2e", "%252e%252e", "..%2f", "%2f", "%5c", "~",
    "~root", "C:", "c:\\", "\\\\srv\\share", "\uff0e\uff0e", "\u2025", "指南.md", "é",
    "*", "?", "[a]", " ", "\x00", "%00", "%", "a:b",
]  # fmt: skip
SEPARATORS = ["/", "/", "/", "//", "\\", "/./"]

segment = st.one_of(
    st.sampled_from(PLANTED),
    st.sampled_from(TRICKY),
    st.text(alphabet="ab.~%2e/\\:", min_size=1, max_size=6),
)


@st.composite
def relative_paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(segment, min_size=1, max_size=7))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(SEPARATORS)) + part
    if draw(st.booleans()) and draw(st.booleans()):
        out = draw(st.sampled_from(["/", "./", "../", "~/"])) + out
    return out


LIMITS = LoaderLimits(allowed_extensions=(".md", ".txt", ".sh", ".json", ""))


def _inside(path: str | Path, jail: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(jail)


@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rel=relative_paths())
@example(rel="references/abs_out.md")
@example(rel="references/link_out.md")
@example(rel="references/dir_out/SECRET.md")
@example(rel="deep/a/b/c/SECRET.md")
@example(rel="deep/a/b/hop.md")
@example(rel="sibling_link.md")
@example(rel="references/abs_inside.md")
def test_any_path_stays_inside_or_is_refused(hostile_shared: Hostile, rel: str) -> None:
    jail = hostile_shared.jail
    try:
        result = load_resource(hostile_shared.skill, rel, None, LIMITS)
    except PathTraversalBlocked:
        return
    except LoadError as exc:
        # Refused for another reason; still, nothing outside may be named in the error.
        assert SECRET not in str(exc.to_dict())
        _assert_oracle_allows(rel, jail)
        return
    assert _inside(result.report.path, jail), (rel, result.report.path)
    assert SECRET not in result.text
    # What was returned is the content of the file the path names inside the jail.
    real = Path(result.report.path)
    assert result.report.sha256 and real.is_file()
    _assert_oracle_allows(rel, jail)


def _assert_oracle_allows(rel: str, jail: Path) -> None:
    """When the OS itself would resolve ``rel`` outside the jail, the loader must have
    raised PathTraversalBlocked (so reaching here with such a path is a failure)."""
    if "\x00" in rel or "\\" in rel or rel.startswith("/"):
        return  # the OS join is not meaningful for these
    try:
        target = os.path.realpath(os.path.join(jail, rel))
    except (OSError, ValueError):
        return
    if os.path.exists(target):
        assert Path(target).is_relative_to(jail), (
            f"{rel!r} resolves to {target} but was not blocked"
        )


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rel=relative_paths())
def test_safe_join_result_is_always_inside(hostile_shared: Hostile, rel: str) -> None:
    try:
        joined = safe_join(hostile_shared.link, rel)
    except LoadError:
        return
    assert joined.is_relative_to(hostile_shared.jail)
    # Where it exists, its real path is inside too (links were followed, not just joined).
    if os.path.lexists(joined):
        assert _inside(joined, hostile_shared.jail), (rel, joined)

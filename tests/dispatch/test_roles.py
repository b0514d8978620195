"""Role guides: shipped defaults, a configurable folder, structured errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.dispatch.model import DispatchRequest
from skillrt.dispatch.roles import DEFAULT_ROLES, RoleGuides
from skillrt.errors import ConfigError, UnknownRole
from skillrt.execution.runners import DryRunRunner

from .support import make_runtime


def test_default_roles_ship_with_real_guides() -> None:
    guides = RoleGuides()
    assert guides.names() == DEFAULT_ROLES
    for role in DEFAULT_ROLES:
        guide = guides.get(role)
        assert guide.source == "package"
        assert guide.text.startswith(f"# Role: {role}")
        assert "## You do" in guide.text and "## Output" in guide.text
        assert 400 < len(guide.text) < 4000


def test_roles_dir_overrides_and_extends(tmp_path: Path) -> None:
    (tmp_path / "fixer.md").write_text("# Role: fixer\nHOUSE RULES\n")
    (tmp_path / "reviewer.md").write_text("# Role: reviewer\nREVIEW\n")
    (tmp_path / "Bad Name.md").write_text("ignored")
    guides = RoleGuides(tmp_path)
    assert guides.get("fixer").text == "# Role: fixer\nHOUSE RULES\n"
    assert guides.get("fixer").source == "roles_dir"
    assert guides.get("oracle").source == "package"
    assert guides.names() == (*DEFAULT_ROLES, "reviewer")
    assert "REVIEW" in guides.get("reviewer").text


@pytest.mark.parametrize("role", ["wizard", "../fixer", "FIXER", "", "a/b"])
def test_unknown_or_invalid_role(role: str) -> None:
    with pytest.raises(UnknownRole) as info:
        RoleGuides().get(role)
    assert info.value.code == "E_UNKNOWN_ROLE"
    assert list(DEFAULT_ROLES) == info.value.to_dict()["available"][:5]


def test_roles_dir_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        RoleGuides(tmp_path / "missing").get("fixer")


def test_oversized_role_guide_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_text("x" * 70_000)
    with pytest.raises(ConfigError):
        RoleGuides(tmp_path).get("big")


def test_dispatcher_uses_the_configured_roles_dir(make_skill, tmp_path: Path) -> None:
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "reviewer.md").write_text("# Role: reviewer\nCUSTOM-GUIDE\n")
    make_skill("lead-x", body="**REQUIRED SUB-SKILL:** Use leaf-x\n")
    make_skill("leaf-x")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path, dispatch={"roles_dir": str(roles)})
    result = rt.dispatch(
        DispatchRequest(skill="lead-x", prompt="t", role="reviewer"), runner=DryRunRunner()
    )
    assert "CUSTOM-GUIDE" in result.children[0].prompt

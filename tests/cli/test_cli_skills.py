"""The Level-1 commands: list, validate, catalog, enable, disable (CLI contract, E1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli import main

Make = Callable[..., Path]
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
ENTRY_KEYS = {"name", "description", "path", "namespace", "enabled", "valid", "diagnostics"}


@pytest.fixture
def home(project: Path) -> Path:
    """An empty project folder as cwd and an empty HOME: no stray skills or state
    (``conftest.project``)."""
    return project


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    """Run the CLI in-process; with --json, parse stdout as exactly one JSON document."""
    code = main(list(args))
    out, err = capsys.readouterr()
    if "--json" in args:
        return code, json.loads(out), err
    return code, out, err


@pytest.fixture
def catalogue(tmp_path: Path, make_skill: Make) -> Path:
    root = tmp_path / "cat"
    make_skill("alpha", description="Alpha <does> & things", root=root)
    make_skill("beta", root=root, triggers=["beta it"], cost_hint="low")
    make_skill("hidden", root=root, disable__model__invocation=True)
    make_skill("badname", root=root, folder="bad-folder")
    make_skill("broken", root=root, raw="no frontmatter here\n")
    return root


# -- list ---------------------------------------------------------------------------------


def test_list_json_contract(
    home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run(capsys, "list", "--root", str(catalogue), "--json")
    assert code == 0
    assert set(data) == {"skills", "broken", "shadowed", "diagnostics"}
    names = [s["name"] for s in data["skills"]]
    assert names == ["alpha", "badname", "beta", "hidden"]
    for entry in data["skills"]:
        assert set(entry) >= ENTRY_KEYS
        assert entry["enabled"] is True
        assert entry["path"] == str(
            catalogue / (entry["name"] if entry["name"] != "badname" else "bad-folder")
        )
    by_name = {s["name"]: s for s in data["skills"]}
    assert by_name["alpha"]["description"] == "Alpha <does> & things"
    assert by_name["beta"]["routing"]["triggers"] == ["beta it"]
    assert by_name["beta"]["routing"]["cost_hint"] == "low"
    assert by_name["badname"]["valid"] is True
    assert [d["code"] for d in by_name["badname"]["diagnostics"]] == ["NAME_DIR_MISMATCH"]
    assert by_name["hidden"]["disable_model_invocation"] is True
    [broken] = data["broken"]
    assert broken["valid"] is False and broken["diagnostics"][0]["code"] == "FRONTMATTER_MISSING"


def test_list_human_output(home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--root", str(catalogue))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SCOPE", "STATE", "DESCRIPTION"]
    assert any(line.startswith("alpha") and "enabled" in line for line in lines)
    assert any(line.startswith("broken:") and "FRONTMATTER_MISSING" in line for line in lines)
    assert lines[-1] == "4 skills, 1 broken, 0 shadowed"


def test_list_reports_shadowed_skills(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("dup", description="first", root=tmp_path / "one")
    make_skill("dup", description="second", root=tmp_path / "two")
    code, data, _ = run(
        capsys, "list", "--root", str(tmp_path / "one"), "--root", str(tmp_path / "two"), "--json"
    )
    assert code == 0
    [entry] = data["skills"]
    assert entry["description"] == "first"
    [shadow] = data["shadowed"]
    assert shadow["path"] == str(tmp_path / "two" / "dup")
    assert shadow["shadowed_by"] == str(tmp_path / "one" / "dup")
    assert "takes precedence" in shadow["reason"]
    assert entry["shadowed"][0]["path"] == shadow["path"]


def test_root_is_repeatable_and_exclusive(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("conventional", root=home / ".agents" / "skills")
    make_skill("one", root=tmp_path / "r1")
    make_skill("two", root=tmp_path / "r2")
    _, data, _ = run(capsys, "list", "--json")
    assert [s["name"] for s in data["skills"]] == ["conventional"]
    _, data, _ = run(
        capsys, "list", "--root", str(tmp_path / "r1"), "--root", str(tmp_path / "r2"), "--json"
    )
    assert [s["name"] for s in data["skills"]] == ["one", "two"]
    assert {s["source"] for s in data["skills"]} == {"flag"}


def test_global_options_before_the_command(
    home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run(capsys, "--root", str(catalogue), "--json", "list")
    assert code == 0 and len(data["skills"]) == 4


def test_enabled_only(home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "disable", "beta", "--root", str(catalogue))
    _, data, _ = run(capsys, "list", "--root", str(catalogue), "--enabled-only", "--json")
    assert "beta" not in [s["name"] for s in data["skills"]]


# -- enable / disable ---------------------------------------------------------------------


def test_enable_disable_persist_in_the_state_folder(
    home: Path, catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code, data, _ = run(
        capsys, "disable", "alpha", "--root", str(catalogue), "--state", str(state), "--json"
    )
    assert (code, data) == (0, {"name": "alpha", "enabled": False})
    assert (state / "state.db").is_file()
    assert not (home / ".skillrt").exists()
    _, data, _ = run(capsys, "list", "--root", str(catalogue), "--state", str(state), "--json")
    assert {s["name"]: s["enabled"] for s in data["skills"]}["alpha"] is False
    _, data, _ = run(capsys, "catalog", "--root", str(catalogue), "--state", str(state), "--json")
    assert "alpha" not in data["names"]
    # another state folder knows nothing of it
    _, data, _ = run(capsys, "list", "--root", str(catalogue), "--json")
    assert all(s["enabled"] for s in data["skills"])
    assert (home / ".skillrt" / "state.db").is_file()  # default: ./.skillrt/
    code, out, _ = run(capsys, "enable", "alpha", "--root", str(catalogue), "--state", str(state))
    assert (code, out) == (0, "alpha enabled\n")


def test_enable_unknown_skill_is_a_json_error(
    home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run(capsys, "enable", "nope", "--root", str(catalogue), "--json")
    assert code == 1
    assert data["error"]["code"] == "SkillNotFound"
    assert data["error"]["name"] == "nope"


def test_error_without_json_goes_to_stderr(
    home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "disable", "nope", "--root", str(catalogue))
    assert code == 1 and out == ""
    assert err.startswith("skillrt: error [SkillNotFound]:")


# -- validate -----------------------------------------------------------------------------


def test_validate_exit_codes(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_skill("good", root=tmp_path / "v")
    warn = make_skill("warn", root=tmp_path / "v", license=["not", "a", "string"])
    bad = make_skill("bad", description="x" * 1100, root=tmp_path / "v")
    assert run(capsys, "validate", str(good))[0] == 0
    assert run(capsys, "validate", str(good / "SKILL.md"))[0] == 0
    assert run(capsys, "validate", str(warn))[0] == 0  # warnings do not fail...
    assert run(capsys, "validate", "--strict", str(warn))[0] == 1  # ...unless --strict
    code, data, _ = run(capsys, "validate", str(good), str(bad), "--json")
    assert code == 1 and data["valid"] is False
    assert [r["valid"] for r in data["results"]] == [True, False]
    assert data["results"][1]["diagnostics"][0]["code"] == "DESCRIPTION_TOO_LONG"
    code, data, _ = run(capsys, "validate", str(tmp_path / "missing"), "--json")
    assert code == 1 and data["results"][0]["diagnostics"][0]["code"] == "PATH_NOT_FOUND"


def test_validate_fails_on_a_folder_that_does_not_match_the_name(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    """The spec says the name must match the folder and skills-ref 0.1.1 reports it as
    an error: validate fails on it. Discovery stays lenient (S4): the skill is listed
    under its frontmatter name, with the mismatch as a warning."""
    folder = make_skill("the-name", root=tmp_path / "v", folder="other-folder")
    code, data, _ = run(capsys, "validate", str(folder), "--json")
    assert code == 1 and data["valid"] is False
    [diag] = data["results"][0]["diagnostics"]
    assert (diag["code"], diag["severity"]) == ("NAME_DIR_MISMATCH", "error")
    assert diag["message"] == "Directory name 'other-folder' must match skill name 'the-name'"
    code, out, _ = run(capsys, "validate", str(tmp_path / "v"))
    assert code == 1 and "FAIL the-name" in out
    code, listed, _ = run(capsys, "list", "--root", str(tmp_path / "v"), "--json")
    [entry] = listed["skills"]
    assert entry["name"] == "the-name" and entry["valid"] is True
    assert [(d["code"], d["severity"]) for d in entry["diagnostics"]] == [
        ("NAME_DIR_MISMATCH", "warning")
    ]


def test_validate_a_root_reports_every_skill(
    home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", str(catalogue))
    assert code == 1
    assert "FAIL" in out and "[FRONTMATTER_MISSING]" in out
    assert out.splitlines()[-1] == "5 checked, 2 with problems"  # and badname's folder


def test_validate_the_bundled_examples(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run(capsys, "validate", str(EXAMPLES), "--json")
    assert code == 0, data
    assert len(data["results"]) >= 10
    assert all(r["diagnostics"] == [] for r in data["results"])


# -- catalog ------------------------------------------------------------------------------


def test_catalog(home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "catalog", "--root", str(catalogue))
    assert code == 0
    assert out.startswith("<available_skills>\n") and out.endswith("</available_skills>\n")
    assert "Alpha &lt;does&gt; &amp; things" in out
    assert "hidden" not in out  # disable-model-invocation
    code, data, _ = run(capsys, "catalog", "--root", str(catalogue), "--budget", "200", "--json")
    assert data["names"] == ["alpha", "badname", "beta"]
    assert data["budget"] == 200 and data["over_budget"] is True
    assert data["descriptions_dropped"] == ["alpha", "badname", "beta"]
    assert all(f"<name>\n{n}\n</name>" in data["catalog"] for n in data["names"])


def test_negative_budget_is_a_usage_error(
    home: Path, catalogue: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run(capsys, "catalog", "--root", str(catalogue), "--budget", "-1", "--json")
    assert code == 2 and data["error"]["code"] == "E_USAGE"


def test_bad_arguments_are_usage_errors(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run(capsys, "list", "--no-such-flag", "--json")
    assert code == 2 and data["error"]["code"] == "E_USAGE"
    code, out, err = run(capsys, "validate")
    assert code == 2 and out == "" and "usage:" in err
    assert main([]) == 2
    capsys.readouterr()


# -- config -------------------------------------------------------------------------------


def write_config(folder: Path, text: str) -> Path:
    path = folder / "skillrt.yaml"
    path.write_text(text)
    return path


def test_config_file_roots_namespaces_and_limits(
    home: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("local", root=home / "skills-a")
    make_skill("fix-ci", root=home / "vendor" / "github")
    make_skill("deep", root=home / "skills-a" / "x" / "y")
    write_config(
        home,
        "roots:\n  - skills-a\n  - path: vendor\n    scope: user\n"
        "namespaces:\n  vendor/github: gh\n"
        "discovery:\n  conventional_roots: false\n  max_depth: 2\n"
        "limits:\n  max_skill_body_lines: 100\n",
    )
    code, data, _ = run(capsys, "list", "--json")
    assert code == 0, data
    got = {s["qualified_name"]: s["source"] for s in data["skills"]}
    assert got == {"local": "project", "gh:fix-ci": "user"}  # "deep" is 3 levels down


def test_explicit_config_path_and_relative_roots(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    make_skill("from-config", root=conf_dir / "my-skills")
    config = write_config(conf_dir, "roots: [my-skills]\n")
    code, data, _ = run(capsys, "list", "--config", str(config), "--json")
    assert [s["name"] for s in data["skills"]] == ["from-config"]
    assert (conf_dir / ".skillrt" / "state.db").is_file()  # state next to the config


def test_flags_override_the_config(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("configured", root=home / "configured")
    make_skill("flagged", root=tmp_path / "flagged")
    write_config(home, "roots: [configured]\nstate_dir: state-from-config\n")
    _, data, _ = run(capsys, "list", "--json")
    assert [s["name"] for s in data["skills"]] == ["configured"]
    assert (home / "state-from-config" / "state.db").is_file()
    _, data, _ = run(
        capsys,
        "list",
        "--root",
        str(tmp_path / "flagged"),
        "--state",
        str(tmp_path / "st"),
        "--json",
    )
    assert [s["name"] for s in data["skills"]] == ["flagged"]
    assert (tmp_path / "st" / "state.db").is_file()


@pytest.mark.parametrize(
    "text",
    [
        "rootz: [skills]\n",
        "discovery:\n  max_dept: 3\n",
        "discovery:\n  max_depth: deep\n",
        "roots:\n  - path: x\n    scope: galaxy\n",
        "roots:\n  - path: x\n    namespace: 'a:b'\n",
        "namespaces: [a, b]\n",
        "limits:\n  allowed_extensions: [1, null]\n",
        "- not\n- a mapping\n",
        "roots: [unclosed\n",
    ],
)
def test_bad_config_is_an_e_config_error(
    home: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    write_config(home, text)
    code, data, _ = run(capsys, "list", "--json")
    assert code == 1
    assert data["error"]["code"] == "E_CONFIG", data


def test_missing_explicit_config_is_an_error(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data, _ = run(capsys, "list", "--config", str(home / "absent.yaml"), "--json")
    assert code == 1 and data["error"]["code"] == "E_CONFIG"


# -- the real entry point -----------------------------------------------------------------


def entry_point() -> list[str]:
    script = Path(sys.executable).with_name("skillrt")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "skillrt"]


def subprocess_run(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home))
    env.pop("SKILLRT_DEBUG", None)
    return subprocess.run(
        entry_point() + args, capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def test_entry_point_list_json_on_examples(tmp_path: Path) -> None:
    proc = subprocess_run(["list", "--root", str(EXAMPLES), "--json"], tmp_path, tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # exactly one JSON document on stdout
    names = {s["qualified_name"] for s in data["skills"]}
    assert {"code-review", "acme:gh-fix-ci"} <= names
    assert all(set(s) >= ENTRY_KEYS for s in data["skills"])
    assert data["broken"] == [] and data["shadowed"] == []


def test_entry_point_errors_are_json_with_non_zero_exit(tmp_path: Path) -> None:
    (tmp_path / "skillrt.yaml").write_text("unknown_key: 1\n")
    proc = subprocess_run(["list", "--json"], tmp_path, tmp_path)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "E_CONFIG"
    assert "Traceback" not in proc.stderr


def test_entry_point_validate_and_help(tmp_path: Path) -> None:
    proc = subprocess_run(["validate", str(EXAMPLES / "code-review")], tmp_path, tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("ok")
    proc = subprocess_run(["--help"], tmp_path, tmp_path)
    assert proc.returncode == 0
    for command in ("list", "validate", "catalog", "enable", "disable"):
        assert command in proc.stdout


def test_python_dash_m(tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "catalog", "--root", str(EXAMPLES), "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["catalog"].startswith("<available_skills>")


def test_config_home_dir_beats_the_environment(
    home: Path, tmp_path: Path, make_skill: Make, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("from-env-home", root=Path(os.environ["HOME"]) / ".agents" / "skills")
    make_skill("from-config-home", root=tmp_path / "other-home" / ".agents" / "skills")
    _, data, _ = run(capsys, "list", "--json")
    assert [(s["name"], s["source"]) for s in data["skills"]] == [("from-env-home", "user")]
    write_config(home, f"discovery:\n  home_dir: {tmp_path / 'other-home'}\n")
    _, data, _ = run(capsys, "list", "--json")
    assert [s["name"] for s in data["skills"]] == ["from-config-home"]

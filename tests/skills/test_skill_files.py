"""Reading real-world SKILL.md files: lenient where the spec allows, never wrong (S1, S4)."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt.errors import InvalidFrontmatter
from skillrt.skills.frontmatter import parse_frontmatter, split_frontmatter
from skillrt.skills.model import BrokenSkill, Skill
from skillrt.skills.reader import read_skill

Make = Callable[..., Path]


def skill_at(folder: Path) -> Skill:
    item = read_skill(folder)
    assert isinstance(item, Skill), item.diagnostics
    return item


def broken_at(folder: Path) -> BrokenSkill:
    item = read_skill(folder)
    assert isinstance(item, BrokenSkill), item
    return item


def codes(item: Skill | BrokenSkill) -> list[str]:
    return [d.code for d in item.diagnostics]


def write(tmp_path: Path, folder: str, data: str | bytes, filename: str = "SKILL.md") -> Path:
    d = tmp_path / folder
    d.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    (d / filename).write_bytes(raw)
    return d


# -- values that contain "---" are never cut -------------------------------------------


def test_description_containing_dashes_is_kept_whole(tmp_path: Path) -> None:
    d = write(tmp_path, "dash", '---\nname: dash\ndescription: "a --- b"\n---\n# Body\n')
    assert skill_at(d).description == "a --- b"


def test_plain_value_with_dashes_is_kept_whole(tmp_path: Path) -> None:
    d = write(tmp_path, "dash", "---\nname: dash\ndescription: before --- after\n---\nbody\n")
    assert skill_at(d).description == "before --- after"


def test_block_scalar_with_an_indented_fence_line(tmp_path: Path) -> None:
    text = (
        "---\nname: blk\ndescription: |\n  first line\n  ---\n  after the rule\n"
        "license: MIT\n---\n# Body\n---\nnot frontmatter\n"
    )
    d = write(tmp_path, "blk", text)
    skill = skill_at(d)
    assert skill.description == "first line\n---\nafter the rule"
    assert skill.license == "MIT"
    doc = split_frontmatter(text)
    assert doc.body == "# Body\n---\nnot frontmatter\n"
    assert doc.body_line == 9


def test_parse_frontmatter_returns_the_stripped_body() -> None:
    data, body = parse_frontmatter("---\nname: x\ndescription: y\n---\n\n# Title\n\ntext\n")
    assert data == {"name": "x", "description": "y"}
    assert body == "# Title\n\ntext"


# -- encodings and line ends ------------------------------------------------------------


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    d = write(tmp_path, "bom", b"\xef\xbb\xbf---\nname: bom\ndescription: with a BOM\n---\n")
    assert skill_at(d).description == "with a BOM"


def test_crlf_line_ends_are_accepted(tmp_path: Path) -> None:
    text = "---\r\nname: crlf\r\ndescription: |\r\n  two\r\n  lines\r\n---\r\nbody\r\n"
    d = write(tmp_path, "crlf", text)
    assert skill_at(d).description == "two\nlines"


def test_bom_and_crlf_together(tmp_path: Path) -> None:
    d = write(tmp_path, "both", "\ufeff---\r\nname: both\r\ndescription: ok\r\n---\r\n")
    assert skill_at(d).name == "both"


def test_old_mac_cr_line_ends(tmp_path: Path) -> None:
    d = write(tmp_path, "cr", "---\rname: cr\rdescription: ok\r---\rbody")
    assert skill_at(d).name == "cr"


# -- allowed-tools ------------------------------------------------------------------------


def test_allowed_tools_as_a_string(make_skill: Make) -> None:
    d = make_skill("tools", allowed__tools="Bash(git log:*) Read Write")
    assert skill_at(d).allowed_tools == ("Bash(git log:*)", "Read", "Write")


def test_allowed_tools_as_a_list(make_skill: Make) -> None:
    d = make_skill("tools", allowed__tools=["Bash(jq:*)", "Read"])
    assert skill_at(d).allowed_tools == ("Bash(jq:*)", "Read")


def test_allowed_tools_comma_separated(make_skill: Make) -> None:
    d = make_skill("tools", allowed__tools="Read, Grep, Bash(npm run test:*)")
    assert skill_at(d).allowed_tools == ("Read", "Grep", "Bash(npm run test:*)")


def test_allowed_tools_of_another_type_is_an_error(make_skill: Make) -> None:
    d = make_skill("tools", allowed__tools={"bash": True})
    assert "ALLOWED_TOOLS_TYPE" in codes(read_skill(d))


# -- lenient YAML -------------------------------------------------------------------------


def test_unquoted_colon_value_is_repaired_and_reported(tmp_path: Path) -> None:
    text = "---\nname: colon\ndescription: Use when: the build fails\n---\n"
    skill = skill_at(write(tmp_path, "colon", text))
    assert skill.description == "Use when: the build fails"
    repaired = [d for d in skill.diagnostics if d.code == "FRONTMATTER_REPAIRED"]
    assert repaired and repaired[0].severity == "warning"
    assert skill.valid


def test_repair_drops_trailing_comments_and_keeps_other_types(tmp_path: Path) -> None:
    text = (
        "---\nname: fix\ndescription: Use when: CI fails # see notes\n"
        "disable-model-invocation: true\ntriggers: [ci, build]\n---\n"
    )
    skill = skill_at(write(tmp_path, "fix", text))
    assert skill.description == "Use when: CI fails"
    assert skill.disable_model_invocation is True
    assert skill.routing.triggers == ("ci", "build")


def test_angle_brackets_and_ampersands_in_text(tmp_path: Path) -> None:
    text = "---\nname: xml\ndescription: Turns <div> & <span> into components\n---\n"
    assert skill_at(write(tmp_path, "xml", text)).description == (
        "Turns <div> & <span> into components"
    )


def test_yaml_comments_are_ignored(tmp_path: Path) -> None:
    text = (
        "---\n# a leading comment\nname: cmt # trailing comment\n"
        "description: kept  # dropped\n  # indented comment\nlicense: MIT\n---\n"
    )
    skill = skill_at(write(tmp_path, "cmt", text))
    assert (skill.name, skill.description, skill.license) == ("cmt", "kept", "MIT")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"double: quoted # not a comment"', "double: quoted # not a comment"),
        ("'single ''quoted'' value'", "single 'quoted' value"),
        ('"escaped \\"quote\\" and \\u00e9"', 'escaped "quote" and é'),
    ],
)
def test_quoted_values(tmp_path: Path, raw: str, expected: str) -> None:
    text = f"---\nname: q\ndescription: {raw}\n---\n"
    assert skill_at(write(tmp_path, "q", text)).description == expected


def test_folded_and_literal_block_scalars(tmp_path: Path) -> None:
    text = (
        "---\nname: blocks\ndescription: >-\n  folded over\n  two lines\n"
        "compatibility: |\n  line one\n  line two\n---\n"
    )
    skill = skill_at(write(tmp_path, "blocks", text))
    assert skill.description == "folded over two lines"
    assert skill.compatibility == "line one\nline two\n"


def test_name_differs_from_folder_is_a_warning_and_still_loads(tmp_path: Path) -> None:
    text = "---\nname: template-skill\ndescription: A template\n---\n"
    skill = skill_at(write(tmp_path, "template", text))
    assert skill.name == "template-skill"
    mismatch = [d for d in skill.diagnostics if d.code == "NAME_DIR_MISMATCH"]
    assert mismatch and mismatch[0].severity == "warning"
    assert "must match skill name" in mismatch[0].message
    assert skill.valid


def test_names_are_nfkc_normalised(tmp_path: Path) -> None:
    decomposed = "cafe\u0301"
    composed = unicodedata.normalize("NFC", decomposed)
    text = f"---\nname: {decomposed}\ndescription: NFKC\n---\n"
    skill = skill_at(write(tmp_path, composed, text))
    assert skill.name == composed
    assert skill.diagnostics == ()


def test_fullwidth_name_normalises_to_ascii(tmp_path: Path) -> None:
    text = "---\nname: ｄｅｐｌｏｙ\ndescription: fullwidth letters\n---\n"
    assert skill_at(write(tmp_path, "deploy", text)).name == "deploy"


def test_lowercase_skill_md_is_accepted(tmp_path: Path) -> None:
    d = write(tmp_path, "lower", "---\nname: lower\ndescription: d\n---\n", "skill.md")
    skill = skill_at(d)
    assert skill.skill_file is not None and skill.skill_file.name == "skill.md"


def test_uppercase_skill_md_wins_over_lowercase(tmp_path: Path) -> None:
    d = write(tmp_path, "both", "---\nname: both\ndescription: upper\n---\n")
    (d / "skill.md").write_text("---\nname: both\ndescription: lower\n---\n")
    assert skill_at(d).description == "upper"


def test_every_problem_is_reported_not_only_the_first(tmp_path: Path) -> None:
    text = (
        "---\nname: -Bad--Name_\ndescription: " + "x" * 1100 + "\ncompatibility: " + "y" * 600
        + "\nfoo: 1\n---\n"
    )  # fmt: skip
    item = read_skill(write(tmp_path, "bad", text))
    found = set(codes(item))
    assert {
        "NAME_NOT_LOWERCASE",
        "NAME_HYPHEN_EDGE",
        "NAME_CONSECUTIVE_HYPHENS",
        "NAME_INVALID_CHARS",
        "NAME_DIR_MISMATCH",
        "DESCRIPTION_TOO_LONG",
        "COMPATIBILITY_TOO_LONG",
        "UNEXPECTED_FIELDS",
    } <= found
    assert not item.valid if isinstance(item, Skill) else True


def test_routing_and_client_fields_are_understood(tmp_path: Path) -> None:
    text = (
        "---\nname: r\ndescription: d\ntriggers: [deploy, ship it]\nanti_triggers:\n  - explain\n"
        "cost_hint: high\nprerequisites:\n  bins: [git]\n  env: [TOKEN]\nparallel_safe: true\n"
        "disable-model-invocation: true\nuser-invocable: false\nargument-hint: '[tag]'\n"
        "metadata:\n  always: 'true'\n  examples: a, b\n---\n"
    )
    skill = skill_at(write(tmp_path, "r", text))
    assert skill.routing.triggers == ("deploy", "ship it")
    assert skill.routing.anti_triggers == ("explain",)
    assert skill.routing.cost_hint == "high"
    assert skill.routing.prerequisites.bins == ("git",)
    assert skill.routing.prerequisites.env == ("TOKEN",)
    assert skill.routing.parallel_safe and skill.routing.always
    assert skill.routing.examples == ("a", "b")
    assert skill.disable_model_invocation and not skill.user_invocable
    assert skill.argument_hint == "[tag]"
    assert skill.diagnostics == ()


def test_malformed_routing_field_is_a_warning(tmp_path: Path) -> None:
    text = "---\nname: r\ndescription: d\ncost_hint: enormous\ntriggers: 3\n---\n"
    skill = skill_at(write(tmp_path, "r", text))
    assert [d.code for d in skill.diagnostics] == ["ROUTING_FIELD_INVALID"] * 2
    assert skill.valid and skill.routing.cost_hint == "medium"


# -- bad input: one diagnostic with a stable code each ------------------------------------


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\x00\x01\x02binary\x00" * 50, "SKILL_FILE_BINARY"),
        (b"---\nname: x\ndescription: \xff\xfe bad\n---\n", "SKILL_FILE_INVALID_UTF8"),
        (b"---\n- a\n- list\n---\n", "FRONTMATTER_NOT_MAPPING"),
        (b"---\njust a string\n---\n", "FRONTMATTER_NOT_MAPPING"),
        (b"# Title only, no frontmatter\n", "FRONTMATTER_MISSING"),
        (b"", "FRONTMATTER_MISSING"),
        (b"---\nname: x\ndescription: never closed\n", "FRONTMATTER_UNCLOSED"),
        (b"---\nname: [unclosed\n---\n", "FRONTMATTER_INVALID_YAML"),
        (b"---\nname: x\ndescription: y\nk: !!python/object:os.system ls\n---\n",
         "FRONTMATTER_INVALID_YAML"),
        (b"---\nname: x\ndescription: y\nk: &a [*a]\n---\n", "FRONTMATTER_TOO_DEEP"),
        (b"---\nname: x\ndescription: y\nk: " + b"[" * 200 + b"]" * 200 + b"\n---\n",
         "FRONTMATTER_TOO_DEEP"),
        (b"---\ndescription: no name\n---\n", "MISSING_NAME"),
        (b"---\nname: x\n---\n", "MISSING_DESCRIPTION"),
        (b"---\nname: x\ndescription: ''\n---\n", "DESCRIPTION_EMPTY"),
        (b"---\nname: 42\ndescription: y\n---\n", "NAME_EMPTY"),
    ],
)  # fmt: skip
def test_bad_input_becomes_one_stable_code(tmp_path: Path, data: bytes, code: str) -> None:
    item = broken_at(write(tmp_path, "bad", data))
    assert code in codes(item)
    assert all(d.severity == "error" for d in item.diagnostics if d.code == code)


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["---", "name: bomb", "description: d", 'a0: &a0 ["lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    lines.append("---")
    item = broken_at(write(tmp_path, "bomb", "\n".join(lines) + "\n"))
    assert codes(item) == ["YAML_ALIASES"]


def test_asterisks_in_prose_are_not_mistaken_for_aliases(tmp_path: Path) -> None:
    desc = " ".join(["*bold*"] * 30)
    d = write(tmp_path, "stars", f"---\nname: stars\ndescription: {desc!r}\n---\n")
    assert skill_at(d).description == desc


def test_huge_frontmatter_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    big = "---\nname: big\ndescription: d\npad: '" + "x" * 200_000 + "'\n---\nbody\n"
    item = broken_at(write(tmp_path, "big", big))
    assert codes(item) == ["FRONTMATTER_TOO_LARGE"]


def test_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    d = write(tmp_path, "huge", "---\nname: huge\ndescription: d\n---\n" + "x" * 5000)
    item = read_skill(d, max_file_bytes=1000)
    assert isinstance(item, BrokenSkill) and codes(item) == ["SKILL_FILE_TOO_LARGE"]


def test_directory_named_skill_md_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir" / "SKILL.md").mkdir(parents=True)
    assert codes(broken_at(tmp_path / "dir")) == ["SKILL_FILE_NOT_REGULAR"]


def test_dangling_skill_md_symlink_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "dangling").mkdir()
    (tmp_path / "dangling" / "SKILL.md").symlink_to(tmp_path / "nowhere.md")
    assert codes(broken_at(tmp_path / "dangling")) == ["SKILL_FILE_UNREADABLE"]


def test_permission_denied_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = write(tmp_path, "locked", "---\nname: locked\ndescription: d\n---\n")

    def denied(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Tests run as root, where chmod 000 does not stop a read: fail the open instead.
    monkeypatch.setattr("skillrt.skills.reader.open_regular", denied)
    item = broken_at(d)
    assert codes(item) == ["SKILL_FILE_UNREADABLE"]
    assert "Permission denied" in item.diagnostics[0].message


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_chmod_000_is_unreadable(tmp_path: Path) -> None:
    d = write(tmp_path, "locked", "---\nname: locked\ndescription: d\n---\n")
    (d / "SKILL.md").chmod(0)
    try:
        assert codes(broken_at(d)) == ["SKILL_FILE_UNREADABLE"]
    finally:
        (d / "SKILL.md").chmod(0o644)


def test_missing_skill_md(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    item = broken_at(tmp_path / "empty")
    assert codes(item) == ["SKILL_FILE_MISSING"]
    assert "Missing required file: SKILL.md" in item.diagnostics[0].message


def test_split_frontmatter_raises_invalid_frontmatter() -> None:
    with pytest.raises(InvalidFrontmatter) as exc:
        split_frontmatter("no fence")
    assert exc.value.code == "InvalidFrontmatter"
    assert exc.value.context["reason"] == "FRONTMATTER_MISSING"


# -- properties ---------------------------------------------------------------------------


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    d = tmp_path_factory.mktemp("fuzz") / "s"
    d.mkdir()
    (d / "SKILL.md").write_bytes(data)
    item = read_skill(d)
    assert isinstance(item, (Skill, BrokenSkill))
    assert isinstance(item, Skill) or (not item.valid and item.diagnostics)


_FM_PREFIXES = st.sampled_from([b"", b"---\n", b"---\nname: s\n", b"---\nname: s\ndescription: "])


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(prefix=_FM_PREFIXES, data=st.binary(max_size=500), close=st.booleans())
def test_arbitrary_frontmatter_bytes_never_raise(
    tmp_path_factory: pytest.TempPathFactory, prefix: bytes, data: bytes, close: bool
) -> None:
    d = tmp_path_factory.mktemp("fuzz") / "s"
    d.mkdir()
    (d / "SKILL.md").write_bytes(prefix + data + (b"\n---\nbody\n" if close else b""))
    assert isinstance(read_skill(d), (Skill, BrokenSkill))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    description=st.text(min_size=1, max_size=300).filter(lambda t: t.strip()),
    extra=st.sampled_from(["", "---", "a --- b", ": ", "\n---\n", "'\"", "é技🙂", "<x>&"]),
)
def test_description_round_trips_through_safe_dump(
    tmp_path_factory: pytest.TempPathFactory, description: str, extra: str
) -> None:
    value = description + extra + description
    fm = yaml.safe_dump({"name": "s", "description": value}, allow_unicode=True, sort_keys=False)
    d = tmp_path_factory.mktemp("rt") / "s"
    d.mkdir()
    (d / "SKILL.md").write_text("---\n" + fm + "---\n# Body\n---\n", encoding="utf-8")
    item = read_skill(d)
    loaded = yaml.safe_load(fm)["description"]
    # PyYAML itself folds a few Unicode line breaks (NEL, LS, PS) it wrote raw; skillrt
    # must then agree with PyYAML, and otherwise give the original value back exactly.
    assert loaded == value or any(c in value for c in "\x85\u2028\u2029")
    expected = loaded.strip()
    if len(expected) > 1024:
        assert isinstance(item, Skill) and not item.valid
    else:
        assert isinstance(item, Skill), item.diagnostics
    assert item.description == expected
    if loaded == value:
        assert item.description == value.strip()

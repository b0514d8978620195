"""The fast frontmatter reader returns exactly what PyYAML returns, or gives up."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillrt.errors import InvalidFrontmatter
from skillrt.skills import fastyaml
from skillrt.skills.frontmatter import load_yaml_mapping, split_frontmatter
from skillrt.skills.validate import validate_frontmatter

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
SHARED = REPO.parent / "shared"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def pyyaml(source: str) -> Any:
    try:
        return yaml.load(source, Loader=LOADER)
    except Exception as exc:  # any failure: the fast reader must not succeed either
        return exc


def assert_agrees(source: str) -> Any:
    fast = fastyaml.parse(source)
    if fast is not None:
        expected = pyyaml(source)
        assert fast == expected, source
        # bools and ints compare equal to each other; the types must match too
        assert repr(fast) == repr(expected), source
    return fast


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("name: a\ndescription: b\n", {"name": "a", "description": "b"}),
        ("a: 'it''s'\n", {"a": "it's"}),
        ('a: "x # y" # comment\n', {"a": "x # y"}),
        ("a: b # comment\n", {"a": "b"}),
        ("a: C#\n", {"a": "C#"}),
        ("a: 1.0\nb: 10\nd: ~\ne:\n", {"a": 1.0, "b": 10, "d": None, "e": None}),
        ("a: yes\nb: Off\n", {"a": True, "b": False}),
        ("a: [x, 'y z', \"w\", 1]\n", {"a": ["x", "y z", "w", 1]}),
        ("a:\n- b\n- c\nd: e\n", {"a": ["b", "c"], "d": "e"}),
        ("m:\n  k: v\n  n:\n    - z\n", {"m": {"k": "v", "n": ["z"]}}),
        ("a: >\n  x\n  y\n\n  z\n", {"a": "x y\nz\n"}),
        ("a: |-\n  x\n\n  y\n\n\nb: 1\n", {"a": "x\n\ny", "b": 1}),
        ("a:\n  folded plain\n  over lines\nb: 1\n", {"a": "folded plain over lines", "b": 1}),
        ("a: starts here\n  and goes on\n", {"a": "starts here and goes on"}),
        ("a: a --- b\n", {"a": "a --- b"}),
        ("a: <tag> & more\n", {"a": "<tag> & more"}),
    ],
)
def test_known_shapes(source: str, expected: dict[str, Any]) -> None:
    assert assert_agrees(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "a: !!str 1\n",  # tags
        'a: "esc\\n"\n',  # escapes
        "a: 'multi\n  line'\n",  # multi-line quoted
        "a: b: c\n",  # invalid, PyYAML decides (and the caller repairs)
        "a: 2001-01-01\n",  # timestamps
        "a: 0x1f\n",  # non-decimal ints
        "a:\tb\n",  # tabs
        "yes: 1\n",  # non-string keys
        "- a\n- b\n",  # not a mapping
        "",  # empty
        "a: |\n  no final break",
        "a: {b: c}\n",  # flow mappings
    ],
)
def test_gives_up_on_the_unusual(source: str) -> None:
    assert fastyaml.parse(source) is None
    pyyaml(source)  # and PyYAML still decides


def _frontmatters() -> list[Path]:
    files = sorted(EXAMPLES.rglob("SKILL.md"))
    corpora = SHARED / "corpora"
    if corpora.is_dir():
        files += sorted(corpora.rglob("SKILL.md"))
    return files


#: Values the fast path leaves to PyYAML by design (see test_gives_up_on_the_unusual):
#: a timestamp, or a flow collection holding a mapping.
_BY_DESIGN = re.compile(r"^\s*[\w-]+:\s*(?:\d{4}-\d\d-\d\d\s*$|[\[{].*:)", re.M)


def test_real_frontmatter_takes_the_fast_path() -> None:
    files = _frontmatters()
    assert files
    declined = []
    for path in files:
        fm = split_frontmatter(path.read_text(encoding="utf-8")).frontmatter
        if assert_agrees(fm) is None:  # agreement is checked whenever it answers
            declined.append(path)
            assert _BY_DESIGN.search(fm), path
    assert len(declined) <= len(files) // 20, declined


# -- differential fuzzing -------------------------------------------------------------

_TOKENS = st.sampled_from(
    [
        "a", "b", "key", "name", "yes", "no", "null", "~", "1", "0", "-1", "1.5", "1e3", "0x1",
        " ", "  ", ": ", ":", "- ", "-", "#", " #", "'", "''", '"', "\\", "[", "]", ",", "{",
        "}", "|", ">", "|-", ">-", "|+", "&x", "*x", "!", "%", "@", "`", "?", "---", "...",
        "é", "技", "\t", "\u2028", "\x85", "\ufeff", "<b>", "&amp;",
    ]
)  # fmt: skip
_LINE = st.builds(
    lambda indent, toks: " " * indent + "".join(toks),
    st.sampled_from([0, 0, 0, 1, 2, 2, 4]),
    st.lists(_TOKENS, max_size=8),
)


@settings(
    max_examples=int(os.environ.get("FASTYAML_FUZZ", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_LINE, max_size=10), st.booleans())
@example(["a: |", "  x", "   y"], True)
@example(["a:", "  - b", "  c: d"], True)
def test_never_disagrees_with_pyyaml_on_token_soup(lines: list[str], final_nl: bool) -> None:
    assert_agrees("\n".join(lines) + ("\n" if final_nl else ""))


_SCALAR = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["yes", "no", "~", "null", "1", "1.0", "-3", "a: b", "# c", "x #y", ""]),
    st.integers(-1000, 1000),
    st.booleans(),
    st.none(),
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_-]{0,8}", fullmatch=True), inner, max_size=4),
    ),
    max_leaves=8,
)


@settings(
    max_examples=int(os.environ.get("FASTYAML_FUZZ", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.dictionaries(st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True), _VALUE, max_size=6),
    st.sampled_from([None, False]),
    st.sampled_from([20, 80, 1000]),
)
def test_never_disagrees_with_pyyaml_on_dumped_mappings(
    data: dict[str, Any], flow: bool | None, width: int
) -> None:
    source = yaml.safe_dump(data, default_flow_style=flow, width=width, allow_unicode=True)
    assert_agrees(source)


# -- the whole frontmatter reader against yaml.safe_load (issue 22) -------------------


def _safe_load(source: str) -> Any:
    """``yaml.safe_load`` with the loader skillrt uses: libyaml's where installed. Its
    scanner and the pure-Python one differ on a few whitespace cases (``a: \\t`` is
    ``{'a': None}`` to libyaml and an error to the Python scanner)."""
    try:
        return yaml.load(source, Loader=LOADER)
    except Exception as exc:
        return exc


def assert_frontmatter_agrees(source: str) -> None:
    """``load_yaml_mapping`` is ``yaml.safe_load``, key types and all, except where
    SPEC S4's leniency or a safety check decides: YAML that does not parse may be read
    by the quoting retry (reported as repaired), and alias bombs or absurd nesting are
    refused."""
    expected = _safe_load(source)
    try:
        data, repaired = load_yaml_mapping(source)
    except InvalidFrontmatter as exc:
        if isinstance(expected, dict):
            assert exc.reason in ("YAML_ALIASES", "FRONTMATTER_TOO_DEEP"), (source, exc)
        return
    if isinstance(expected, Exception):
        assert repaired, (source, data)  # only the S4 retry reads what PyYAML refuses
        return
    assert not repaired, source
    expected = {} if expected is None else expected
    assert data == expected, source
    assert repr(data) == repr(expected), source  # 1 and True, "1" and 1 stay apart


@pytest.mark.parametrize(
    "source",
    [
        "1: a\n'1': b\nname: x\n",
        '1: a\n"1": b\n',
        "null: x\n~: y\nNone: z\n",
        "yes: 1\n'yes': 2\ntrue: 3\n",
        "1.5: a\n'1.5': b\n",
        "k" * 1025 + ": v\n",
        "m:\n  " + "k" * 1025 + ": v\n",
        "name: x\n" + "k" * 1024 + ": v\n",
    ],
)
def test_keys_are_what_pyyaml_makes_of_them(source: str) -> None:
    assert_frontmatter_agrees(source)


def test_a_key_over_1024_characters_is_refused_like_pyyaml() -> None:
    assert fastyaml.parse("k" * 1025 + ": v\n") is None
    assert fastyaml.parse("k" * 1024 + ": v\n") == {"k" * 1024: "v"}
    with pytest.raises(InvalidFrontmatter):
        load_yaml_mapping("name: x\n" + "k" * 1025 + ": v\n")


def test_non_string_keys_are_reported_as_unexpected_fields() -> None:
    data, _ = load_yaml_mapping("name: x\ndescription: d\n1: a\n'1': b\nnull: c\n")
    codes = [(d.code, d.message) for d in validate_frontmatter(data, "x")]
    assert codes[0][0] == "UNEXPECTED_FIELDS"
    assert "'1', 1, null" in codes[0][1]


_KEYS = st.one_of(
    st.sampled_from(
        [
            "name",
            "description",
            "1",
            "'1'",
            '"1"',
            "null",
            "~",
            "'null'",
            "yes",
            "'yes'",
            "True",
            "1.5",
            "-1",
            "0x1f",
            "'a b'",
            '"x"',
            "a.b",
            "_k",
            "metadata",
            "1e3",
            "? k",
        ]
    ),  # fmt: skip
    st.integers(1015, 1030).map(lambda n: "k" * n),
    st.integers(1015, 1030).map(lambda n: "'" + "q" * n + "'"),
    st.from_regex(r"[a-z_][a-z0-9_.-]{0,6}", fullmatch=True),
)
_VALUES = st.sampled_from(
    ["v", "'q'", '"d"', "1", "yes", "~", "", "[a, 1]", "a: b", "x #c", "|\n  t", ">-\n  f",
     "\n  - i\n  - 2", "\n  k: v\n  1: w", "{a: 1}", "&a x", "*a", "'it''s'", "2001-01-01"]
)  # fmt: skip


@settings(
    max_examples=int(os.environ.get("FASTYAML_FUZZ", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(_KEYS, _VALUES, st.sampled_from(["", "  "])), max_size=6))
@example([("1", "a", ""), ("'1'", "b", "")])
@example([("k" * 1025, "v", "")])
def test_frontmatter_never_disagrees_with_safe_load(lines: list[tuple[str, str, str]]) -> None:
    source = "".join(f"{indent}{key}: {value}\n" for key, value, indent in lines)
    assert_frontmatter_agrees(source)


@settings(
    max_examples=int(os.environ.get("FASTYAML_FUZZ", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_LINE, max_size=10), st.booleans())
def test_frontmatter_never_disagrees_with_safe_load_on_token_soup(
    lines: list[str], final_nl: bool
) -> None:
    assert_frontmatter_agrees("\n".join(lines) + ("\n" if final_nl else ""))

"""Split and parse SKILL.md frontmatter, leniently (S4) but never wrongly.

Unlike a plain ``text.split("---", 2)``, the closing fence is a *line* that is exactly
``---``, so a value containing ``---`` is never cut. A UTF-8 BOM and CRLF line ends are
accepted. Unquoted ``key: value: more`` lines are retried with quoting (and reported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillrt.errors import InvalidFrontmatter

FENCE = "---"
_ALIAS = re.compile(r"(?:^|[\s,\[{])\*[^\s,\]}]+", re.MULTILINE)
MAX_ALIASES = 16
#: Frontmatter is a flat record; anything deeper than this is hostile or broken.
MAX_NESTING = 32
MAX_NODES = 50_000
# A top-level "key: value" line whose value is a plain scalar we may safely quote.
_TOP_LEVEL = re.compile(r"^([A-Za-z_][\w.-]*)(\s*:[ \t]+)(\S.*?)\s*$")
_BLOCK_INDICATOR = re.compile(r"^[|>][+-]?\d?[+-]?$")
_COMMENT = re.compile(r"[ \t]+#")
# The closing fence: a line that is exactly --- (or ...), trailing whitespace allowed.
_CLOSING = re.compile(r"^(?:---|\.\.\.)[^\S\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class SplitDocument:
    """A SKILL.md text cut into frontmatter and body."""

    frontmatter: str
    body: str
    #: 1-based line number of the body's first line in the file.
    body_line: int


def normalise_text(text: str) -> str:
    """Drop a BOM and turn CRLF / CR line ends into LF."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def split_frontmatter(text: str) -> SplitDocument:
    """Cut ``text`` at its frontmatter fences; raise :class:`InvalidFrontmatter` if absent."""
    text = normalise_text(text)
    first_nl = text.find("\n")
    first_line = text if first_nl < 0 else text[:first_nl]
    if first_line.rstrip() != FENCE:
        raise InvalidFrontmatter(
            "SKILL.md must start with YAML frontmatter (---)", reason="FRONTMATTER_MISSING"
        )
    if first_nl < 0:
        raise InvalidFrontmatter(
            "SKILL.md frontmatter not properly closed with ---", reason="FRONTMATTER_UNCLOSED"
        )
    m = _CLOSING.search(text, first_nl + 1)
    if m is not None:
        pos = m.start()
        body_start = m.end() + 1 if m.end() < len(text) else len(text)
        line_no = text.count("\n", 0, pos) + 1  # 1-based line of the closing fence
        return SplitDocument(text[first_nl + 1 : pos], text[body_start:], line_no + 1)
    raise InvalidFrontmatter(
        "SKILL.md frontmatter not properly closed with ---", reason="FRONTMATTER_UNCLOSED"
    )


def load_yaml_mapping(source: str) -> tuple[dict[Any, Any], bool]:
    """Parse frontmatter YAML into a mapping; returns (data, repaired).

    ``data`` is what ``yaml.safe_load`` returns, keys as YAML types them: ``1:`` is the
    int 1 and ``"1":`` the string, ``null:`` is None (the spec's fields are all strings;
    any other key is an unexpected field, never folded into another).

    Raises :class:`InvalidFrontmatter` (with a ``reason`` code in its context) for YAML
    that does not parse, is not a mapping, uses too many aliases, or nests too deep.
    """
    from skillrt.skills import fastyaml

    fast = fastyaml.parse(source)
    if fast is not None:
        # No aliases, string keys, and nesting bounded by fastyaml.MAX_DEPTH: nothing
        # for the alias and shape checks to find.
        return fast, False

    import yaml

    _check_aliases(source, yaml)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    repaired = False
    try:
        data = _load(source, yaml, loader)
    except _YAML_FAILURES as first_error:
        fixed = _quote_plain_values(source)
        if fixed == source:
            raise _invalid_yaml(first_error) from first_error
        try:
            data = _load(fixed, yaml, loader)
        except _YAML_FAILURES:
            raise _invalid_yaml(first_error) from first_error
        repaired = True
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidFrontmatter(
            "SKILL.md frontmatter must be a YAML mapping", reason="FRONTMATTER_NOT_MAPPING"
        )
    _check_shape(data)
    return data, repaired


# What a YAML load may raise on hostile text: YAMLError for syntax, ValueError and
# friends from the constructors (``2001-13-45`` is a timestamp with a bad month,
# ``!!int 12a``), RecursionError for absurd nesting.
_YAML_FAILURES: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    OverflowError,
    RecursionError,
    AttributeError,
)


def _load(source: str, yaml: Any, loader: Any) -> Any:
    try:
        return yaml.load(source, Loader=loader)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from exc


def _invalid_yaml(error: BaseException) -> InvalidFrontmatter:
    cause = error.__cause__ if error.__cause__ is not None else error
    detail = str(cause) or type(cause).__name__
    return InvalidFrontmatter(
        f"Invalid YAML in frontmatter: {detail}", reason="FRONTMATTER_INVALID_YAML"
    )


def _check_aliases(source: str, yaml: Any) -> None:
    """Refuse alias-heavy YAML (a "billion laughs" bomb) before building any value.

    The regex is a cheap over-estimate (``*bold*`` in a description matches it); only
    when it trips are the real alias events counted.
    """
    if len(_ALIAS.findall(source)) <= MAX_ALIASES:
        return
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    count = 0
    try:
        for event in yaml.parse(source, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                count += 1
                if count > MAX_ALIASES:
                    raise InvalidFrontmatter(
                        f"Invalid YAML in frontmatter: more than {MAX_ALIASES} aliases",
                        reason="YAML_ALIASES",
                    )
    except yaml.YAMLError:
        return  # the real load reports the syntax error


def _check_shape(data: dict[Any, Any]) -> None:
    """Refuse values nested deeper than MAX_NESTING (recursive aliases are infinitely deep)."""
    if all(_flat(v) for v in data.values()):
        return  # the usual frontmatter: scalars and lists/mappings of scalars
    stack: list[tuple[Any, int]] = [(data, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if depth > MAX_NESTING or nodes > MAX_NODES:
            raise InvalidFrontmatter(
                f"Invalid YAML in frontmatter: values nest deeper than {MAX_NESTING} levels "
                f"or hold more than {MAX_NODES} items (or an alias refers to itself)",
                reason="FRONTMATTER_TOO_DEEP",
            )
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple, set)):
            stack.extend((v, depth + 1) for v in value)


def parse_frontmatter(text: str) -> tuple[dict[Any, Any], str]:
    """Parse a SKILL.md text into (frontmatter mapping, stripped body)."""
    doc = split_frontmatter(text)
    data, _ = load_yaml_mapping(doc.frontmatter)
    return data, doc.body.strip()


def _quote_plain_values(source: str) -> str:
    """Quote top-level plain values so ``description: a: b`` or a leading ``@`` parse."""
    out: list[str] = []
    for line in source.split("\n"):
        m = _TOP_LEVEL.match(line)
        if m:
            key, sep, value = m.groups()
            if not (value[0] in "\"'[{#!&*" or _BLOCK_INDICATOR.match(value)):
                value = _COMMENT.split(value, 1)[0]  # " # ..." ends a plain value
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}{sep}"{escaped}"'
        out.append(line)
    return "\n".join(out)


def _flat(value: Any) -> bool:
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        return True
    return not any(isinstance(v, (dict, list, tuple, set)) for v in value)

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
# A top-level "key: value" line whose value is a plain scalar we may safely quote.
_TOP_LEVEL = re.compile(r"^([A-Za-z_][\w.-]*)(\s*:[ \t]+)(\S.*?)\s*$")
_BLOCK_INDICATOR = re.compile(r"^[|>][+-]?\d?[+-]?$")


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
    pos = first_nl + 1
    line_no = 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl < 0 else text[pos:nl]
        line_no += 1
        if line.rstrip() in (FENCE, "..."):
            body_start = len(text) if nl < 0 else nl + 1
            return SplitDocument(text[first_nl + 1 : pos], text[body_start:], line_no + 1)
        if nl < 0:
            break
        pos = nl + 1
    raise InvalidFrontmatter(
        "SKILL.md frontmatter not properly closed with ---", reason="FRONTMATTER_UNCLOSED"
    )


def load_yaml_mapping(source: str) -> tuple[dict[str, Any], bool]:
    """Parse frontmatter YAML into a mapping; returns (data, repaired)."""
    import yaml

    if len(_ALIAS.findall(source)) > MAX_ALIASES:
        raise InvalidFrontmatter(
            f"Invalid YAML in frontmatter: more than {MAX_ALIASES} aliases", reason="YAML_ALIASES"
        )
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    repaired = False
    try:
        data = yaml.load(source, Loader=loader)
    except yaml.YAMLError as first_error:
        fixed = _quote_plain_values(source)
        if fixed == source:
            raise InvalidFrontmatter(
                f"Invalid YAML in frontmatter: {first_error}", reason="FRONTMATTER_INVALID_YAML"
            ) from first_error
        try:
            data = yaml.load(fixed, Loader=loader)
        except yaml.YAMLError:
            raise InvalidFrontmatter(
                f"Invalid YAML in frontmatter: {first_error}", reason="FRONTMATTER_INVALID_YAML"
            ) from first_error
        repaired = True
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidFrontmatter(
            "SKILL.md frontmatter must be a YAML mapping", reason="FRONTMATTER_NOT_MAPPING"
        )
    return {str(k): v for k, v in data.items()}, repaired


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
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
            if not (value[0] in "\"'[{#" or _BLOCK_INDICATOR.match(value)):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}{sep}"{escaped}"'
        out.append(line)
    return "\n".join(out)

"""``skill://`` URIs for skill files (MCP skills extension, SEP-2640).

A file of skill ``name`` is ``skill://<name>/<relative path>``; a namespaced skill
``ns:name`` lives under the namespace as a path prefix, ``skill://ns/name/<path>``, so
the final segment of the skill path is always the skill's own name (a SEP-2640 MUST,
and a ``:`` in the URI authority would read as a port). ``skill://ns:name/<path>`` is
accepted on input as a convenience.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

from skillrt.errors import UsageError

SCHEME = "skill://"
#: The JSON index of every published skill (name, description, sha256, files).
INDEX_URI = "skill://index.json"
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class SkillUri:
    """A parsed ``skill://`` URI: which skill, and which file inside it."""

    qualified_name: str
    path: str


def skill_path(qualified_name: str) -> str:
    """The URI skill path of a qualified name: ``ns:name`` -> ``ns/name``."""
    ns, sep, name = qualified_name.rpartition(":")
    return f"{ns}/{name}" if sep else qualified_name


def skill_uri(qualified_name: str, relative_path: str = SKILL_FILE) -> str:
    """``skill://<skill path>/<relative path>``, each path segment percent-quoted."""
    rel = "/".join(quote(seg, safe="") for seg in relative_path.split("/"))
    return f"{SCHEME}{skill_path(qualified_name)}/{rel}"


def parse_skill_uri(uri: str, known: frozenset[str] | set[str]) -> SkillUri:
    """Split ``uri`` into a known qualified name and a relative path.

    ``known`` holds the qualified names that may be addressed. The skill path is
    matched against them, longest first, so ``skill://acme/tool/SKILL.md`` is
    ``acme:tool`` when that skill exists and skill ``acme``'s ``tool/SKILL.md``
    otherwise. The relative path is returned decoded and unchecked: the loader
    decides whether it may be read.
    """
    if not uri.startswith(SCHEME):
        raise UsageError(f"not a skill:// URI: {uri!r}", uri=uri)
    rest = uri[len(SCHEME) :]
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    segments = rest.split("/")
    # ns:name in the authority (lenient input form).
    if ":" in segments[0] and len(segments) >= 2 and segments[0] in known:
        return SkillUri(segments[0], _join(segments[1:], uri))
    for cut in range(len(segments) - 1, 0, -1):
        head = segments[:cut]
        candidate = head[0] if cut == 1 else ":".join(["/".join(head[:-1]), head[-1]])
        if candidate in known:
            return SkillUri(candidate, _join(segments[cut:], uri))
    raise UsageError(f"no published skill matches {uri!r}", uri=uri)


def _join(segments: list[str], uri: str) -> str:
    if not segments or segments == [""]:
        raise UsageError(f"{uri!r} names a skill but no file in it", uri=uri)
    return "/".join(unquote(seg) for seg in segments)

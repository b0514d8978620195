"""Routing rules for ``orchestrate`` (seed 000 §8's ``skill-routing.yaml``).

A rules file maps conversation text to a role and a skill::

    version: 1
    default:
      role: explorer          # used when no rule matches (and for router picks)
      skill: null             # null: no skill when the router finds none either
    rules:
      - id: debugging
        priority: 100         # higher first; ties keep file order
        role: fixer
        skill: systematic-debugging
        keywords: [bug, stack trace, failing test]   # case-insensitive, whole words
        patterns: ['\\bregress(ed|ion)\\b']           # Python regex, case-insensitive
        match: any            # any (default) | all  - over keywords + patterns

The first rule (by priority) that matches picks role and skill; when none matches,
``orchestrate`` asks the router, then falls back to ``default``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from skillrt.errors import ConfigError

#: Only this much of a conversation is matched (its end: the latest turns matter most).
MAX_TEXT_CHARS = 100_000
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_RULE_KEYS = {"id", "priority", "role", "skill", "keywords", "patterns", "match", "description"}


@dataclass(frozen=True)
class RoutingRule:
    """One rule: what to look for, and the role + skill it picks."""

    id: str
    role: str | None
    skill: str | None
    priority: int = 0
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    match: Literal["any", "all"] = "any"
    description: str = ""
    order: int = 0

    def matches(self, text: str) -> tuple[str, ...]:
        """The keywords/patterns that matched (empty = the rule does not apply)."""
        hits: list[str] = []
        checks: list[tuple[str, re.Pattern[str]]] = [(kw, _keyword(kw)) for kw in self.keywords] + [
            (p, _compiled(p)) for p in self.patterns
        ]
        for label, rx in checks:
            if rx.search(text):
                hits.append(label)
            elif self.match == "all":
                return ()
        return tuple(hits)


@dataclass(frozen=True)
class RuleMatch:
    """The rule that fired and the keywords/patterns behind it."""

    rule_id: str
    role: str | None
    skill: str | None
    matched: tuple[str, ...]


@dataclass(frozen=True)
class RoutingRules:
    """A parsed rules file."""

    rules: tuple[RoutingRule, ...]
    default_role: str | None = None
    default_skill: str | None = None
    path: str | None = None

    @classmethod
    def from_file(cls, path: Path | str) -> RoutingRules:
        import yaml

        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8-sig"))
        except OSError as exc:
            raise ConfigError(f"cannot read routing rules {p}: {exc}", path=str(p)) from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"routing rules {p} are not valid YAML: {exc}", path=str(p)) from exc
        return cls.from_mapping(data or {}, path=str(p))

    @classmethod
    def from_mapping(cls, data: Any, *, path: str | None = None) -> RoutingRules:
        where = path or "routing rules"
        if not isinstance(data, dict):
            raise ConfigError(f"{where} must be a YAML mapping", path=path)
        unknown = set(data) - {"version", "default", "rules"}
        if unknown:
            raise ConfigError(f"unknown keys in {where}: {', '.join(sorted(unknown))}", path=path)
        if data.get("version", 1) != 1:
            raise ConfigError(f"{where}: unsupported version {data.get('version')!r}", path=path)
        default = data.get("default") or {}
        if not isinstance(default, dict) or set(default) - {"role", "skill"}:
            raise ConfigError(f"{where}: 'default' takes only role and skill", path=path)
        raw_rules = data.get("rules") or []
        if not isinstance(raw_rules, list):
            raise ConfigError(f"{where}: 'rules' must be a list", path=path)
        rules: list[RoutingRule] = []
        seen: set[str] = set()
        for i, raw in enumerate(raw_rules):
            rule = _rule(raw, i, where, path)
            if rule.id in seen:
                raise ConfigError(f"{where}: duplicate rule id {rule.id!r}", path=path)
            seen.add(rule.id)
            rules.append(rule)
        rules.sort(key=lambda r: (-r.priority, r.order))
        return cls(
            rules=tuple(rules),
            default_role=_opt_str(default.get("role"), f"{where}: default.role", path),
            default_skill=_opt_str(default.get("skill"), f"{where}: default.skill", path),
            path=path,
        )

    def match(self, text: str) -> RuleMatch | None:
        """The first rule (priority order) that matches ``text``, or None."""
        tail = text[-MAX_TEXT_CHARS:]
        for rule in self.rules:
            hits = rule.matches(tail)
            if hits:
                return RuleMatch(rule.id, rule.role, rule.skill, hits)
        return None


def _rule(raw: Any, index: int, where: str, path: str | None) -> RoutingRule:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: rule #{index + 1} must be a mapping", path=path)
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise ConfigError(
            f"{where}: rule #{index + 1} has unknown keys: {', '.join(sorted(unknown))}",
            path=path,
        )
    rid = raw.get("id", f"rule-{index + 1}")
    if not isinstance(rid, str) or not _ID.match(rid):
        raise ConfigError(f"{where}: rule #{index + 1} has an invalid id {rid!r}", path=path)
    label = f"{where}: rule {rid!r}"
    keywords = _str_list(raw.get("keywords"), f"{label} keywords", path)
    patterns = _str_list(raw.get("patterns"), f"{label} patterns", path)
    if not keywords and not patterns:
        raise ConfigError(f"{label} needs keywords or patterns", path=path, rule=rid)
    for p in patterns:
        try:
            _compiled(p)
        except re.error as exc:
            raise ConfigError(f"{label}: bad pattern {p!r}: {exc}", path=path, rule=rid) from exc
    match = raw.get("match", "any")
    if match not in ("any", "all"):
        raise ConfigError(f"{label}: match must be any or all", path=path, rule=rid)
    priority = raw.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ConfigError(f"{label}: priority must be an integer", path=path, rule=rid)
    role = _opt_str(raw.get("role"), f"{label} role", path)
    skill = _opt_str(raw.get("skill"), f"{label} skill", path)
    if role is None and skill is None:
        raise ConfigError(f"{label} must name a role, a skill, or both", path=path, rule=rid)
    return RoutingRule(
        id=rid,
        role=role,
        skill=skill,
        priority=priority,
        keywords=keywords,
        patterns=patterns,
        match=match,
        description=str(raw.get("description") or ""),
        order=index,
    )


def _str_list(value: Any, where: str, path: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a list of non-empty strings", path=path)
    return tuple(value)


def _opt_str(value: Any, where: str, path: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string or null", path=path)
    return value.strip()


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    rx = _CACHE.get(pattern)
    if rx is None:
        rx = re.compile(pattern, re.IGNORECASE)
        _CACHE[pattern] = rx
    return rx


def _keyword(keyword: str) -> re.Pattern[str]:
    """A keyword as a case-insensitive whole-word (or whole-phrase) match."""
    key = "\0kw:" + keyword
    rx = _CACHE.get(key)
    if rx is None:
        words = r"\s+".join(re.escape(w) for w in keyword.split())
        rx = re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)
        _CACHE[key] = rx
    return rx

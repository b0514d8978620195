"""Routing test helpers: skills built in memory (like a JSONL catalogue line)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.skills.model import Skill
from skillrt.skills.reader import build_skill

SkillMaker = Callable[..., Skill]


def make(name: str, description: str, **fields: Any) -> Skill:
    data = {"name": name, "description": description, **fields}
    raw = json.dumps(data, sort_keys=True)
    ns = None
    bare = name
    if ":" in name:
        ns, bare = name.split(":", 1)
    return build_skill(
        data,
        name=bare,
        description=description,
        path=Path("/nonexistent"),
        skill_file=None,
        namespace=ns,
        source="catalog",
        root=None,
        content_hash=hashlib.sha256(raw.encode()).hexdigest(),
        diagnostics=(),
    )


@pytest.fixture
def skill() -> SkillMaker:
    return make


def catalogue() -> list[Skill]:
    """A small catalogue with clearly separated skills."""
    return [
        make(
            "code-review",
            "Review a pull request or diff for bugs, security problems and style; "
            "reports findings by severity.",
            triggers=["code review", "review this PR"],
            anti_triggers=["release notes"],
            parallel_safe=True,
        ),
        make(
            "release-notes",
            "Write release notes and a changelog from merged pull requests for a version.",
            triggers=["release notes", "changelog"],
            cost_hint="low",
            parallel_safe=True,
        ),
        make(
            "invoice-organizer",
            "Organize invoice PDF files into folders by vendor and month; rename them.",
            triggers=["invoice", "发票"],
            anti_triggers=["weather"],
        ),
        make(
            "git-helper",
            "Run git commands: rebase, cherry-pick, resolve merge conflicts, bisect.",
            triggers=["git"],
        ),
        make(
            "weather-report",
            "Give the weather forecast, temperature and rain for a city.",
            triggers=["weather forecast"],
        ),
    ]


class RecordingRouter:
    """A router whose every route is recorded the way the facade records it."""

    def __init__(self, router: Any) -> None:
        self.router = router

    def __getattr__(self, name: str) -> Any:
        return getattr(self.router, name)

    def route(self, query: str, **kwargs: Any) -> Any:
        from skillrt.telemetry.recording import record_result

        router = self.router
        result = router.route(query, **kwargs)
        return record_result(
            router.store,
            result,
            surface=kwargs.get("surface") or router.surface,
            model_id=router.index.model_id,
            record_query_text=router.config.record_query_text,
        )

"""A deferred index: a first route over a catalogue new to the cache embeds the
descriptions and its own candidates' sections, and answers as the whole index does."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.config import DiscoveryConfig, RootConfig, RoutingConfig
from skillrt.routing import index as index_module
from skillrt.routing.index_build import build_lock, is_building
from skillrt.routing.router import Router
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry
from skillrt.store import Store, open_location

CFG = RoutingConfig(use_stats=False)
TOPICS = (
    ("ledger", "reconcile bank statements with the ledger", "month-end close checklist"),
    ("poetry", "compose sonnets and haiku", "meter and rhyme schemes"),
    ("deploy", "ship the service to production", "roll back a failed release"),
    ("invoices", "issue invoices to customers", "chase overdue payments"),
    ("recipes", "plan weekly meals and recipes", "scale a recipe for guests"),
    ("fitness", "design a strength training plan", "track running mileage"),
    ("garden", "plant a vegetable garden", "prune fruit trees in winter"),
    ("travel", "book flights and hotels", "build a day-by-day itinerary"),
    ("hiring", "write a job description", "run a structured interview"),
    ("security", "audit a web app for injection flaws", "rotate leaked credentials"),
    ("docker", "write a Dockerfile for a Python app", "shrink a container image"),
    ("sql", "tune a slow SQL query", "add an index to a large table"),
    ("music", "transcribe a melody to sheet music", "tune a guitar by ear"),
    ("taxes", "file quarterly estimated taxes", "deduct home office costs"),
    ("photos", "edit RAW photos in batches", "fix the white balance of a shot"),
    ("legal", "draft a non-disclosure agreement", "review a lease for risky clauses"),
)
QUERIES = (
    "reconcile the ledger with the bank statements",
    "my container image is huge, shrink it",
    "which clauses in this lease are risky",
    "help me tune a guitar",
    "compose a sonnet about the sea",
)


def _tree(root: Path) -> Path:
    for name, first, second in TOPICS:
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Helps with {name} work.\n---\n"
            f"## Basics\nHow to {first}.\n\n## Harder cases\nHow to {second}.\n\n"
            f"## Checklist\nSteps to {first} and {second}.\n",
            encoding="utf-8",
        )
    return root


def _skills(root: Path) -> list[Skill]:
    registry = SkillRegistry.discover(
        DiscoveryConfig(conventional_roots=False),
        project_dir=root,
        store=None,
        explicit_roots=(RootConfig(root, scope="flag"),),
    )
    return registry.skills()


def _answer(router: Router, query: str) -> tuple[str, ...]:
    """What is injected: the plan and the pointers, with the score of each candidate in
    them and of the first one (the pool's tail can differ: it holds what recall found
    by the hashing backend's noise, and a pending skill's section noise is its
    description's)."""
    result = router.route(query, explain=True)
    named = {*result.plan.names, *(p.name for p in result.pointers)}
    return (
        str(result.plan.names),
        str([p.name for p in result.pointers]),
        *(
            f"{c.name}:{c.score.total:.6f}"
            for n, c in enumerate(result.candidates)
            if n == 0 or c.name in named
        ),
    )


@pytest.fixture
def skills(tmp_path: Path) -> list[Skill]:
    return _skills(_tree(tmp_path / "skills"))


@pytest.fixture
def defer_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "DEFER_MIN_TEXTS", 1)


def _router(skills: list[Skill], store: Store, *, defer: bool) -> Router:
    return Router.from_skills(skills, CFG, store=store, backend="hashing", defer_sections=defer)


@pytest.mark.usefixtures("defer_always")
def test_a_deferred_route_answers_as_the_whole_index_does(
    skills: list[Skill], tmp_path: Path
) -> None:
    whole = _router(skills, open_location(tmp_path / "a" / "state.db"), defer=False)
    for n, query in enumerate(QUERIES):
        # Each one a first command: a new store, nothing cached.
        store = open_location(tmp_path / f"b-{n}" / "state.db")
        deferred = _router(skills, store, defer=True)
        assert deferred.index.pending_sections == frozenset(range(len(skills)))
        assert _answer(deferred, query) == _answer(whole, query)
        # Only the request's candidates got their sections: the rest are still pending.
        left = deferred.index.pending_sections
        assert 0 < len(left) < len(skills)
        filled = {deferred.index.names[i] for i in set(range(len(skills))) - left}
        assert deferred.route(query).plan.names[0] in filled
        store.close()


@pytest.mark.usefixtures("defer_always")
def test_routes_fill_sections_as_they_go_and_answer_like_the_whole_index(
    skills: list[Skill], tmp_path: Path
) -> None:
    whole = _router(skills, open_location(tmp_path / "a" / "state.db"), defer=False)
    deferred = _router(skills, open_location(tmp_path / "b" / "state.db"), defer=True)
    before = deferred.index.pending_sections
    answers = [_answer(deferred, q) for q in QUERIES]
    assert answers == [_answer(whole, q) for q in QUERIES]
    assert deferred.index.pending_sections < before


@pytest.mark.usefixtures("defer_always")
def test_a_deferred_index_is_not_saved_and_a_whole_one_is(
    skills: list[Skill], tmp_path: Path
) -> None:
    store = open_location(tmp_path / "state" / "state.db")
    saved = tmp_path / "state" / "router-index"
    _router(skills, store, defer=True).route(QUERIES[0])
    assert not list(saved.glob("*.npz"))
    _router(skills, store, defer=False)
    assert len(list(saved.glob("*.npz"))) == 1
    # The saved index is whole: a deferred build reads it and defers nothing.
    assert not _router(skills, store, defer=True).index.pending_sections
    store.close()


def test_a_few_missing_sections_are_embedded_up_front(skills: list[Skill], tmp_path: Path) -> None:
    assert 3 * len(skills) < index_module.DEFER_MIN_TEXTS
    store = open_location(tmp_path / "state" / "state.db")
    router = _router(skills, store, defer=True)
    assert not router.index.pending_sections
    assert router.index.with_sections(range(len(skills))) is router.index
    store.close()


def test_one_build_at_a_time_and_the_lock_is_never_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "router-index"
    assert not is_building(folder)
    with build_lock(folder) as held:
        assert held and is_building(folder)
        with build_lock(folder) as second:
            assert not second
    assert not is_building(folder)


@pytest.mark.usefixtures("defer_always")
def test_routes_on_several_threads_keep_each_others_sections(
    skills: list[Skill], tmp_path: Path
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    whole = _router(skills, open_location(tmp_path / "a" / "state.db"), defer=False)
    deferred = _router(skills, open_location(tmp_path / "b" / "state.db"), defer=True)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda q: _answer(deferred, q), QUERIES))
    assert answers == [_answer(whole, q) for q in QUERIES]
    # Every request's winner has its sections in the index the router ends with.
    names = deferred.index.names
    for q in QUERIES:
        winner = whole.route(q).plan.names[0]
        assert names.index(winner) not in deferred.index.pending_sections


class _FlatReader:
    """A reader of the caller's own: says nothing."""

    name = "flat"
    depth = 4

    def score(self, query: object, rows: object) -> None:
        return None


@pytest.mark.usefixtures("defer_always")
def test_a_reader_passed_in_is_refused_on_a_deferred_index(
    skills: list[Skill], tmp_path: Path
) -> None:
    from skillrt.errors import UsageError

    deferred = _router(skills, open_location(tmp_path / "b" / "state.db"), defer=True)
    with pytest.raises(UsageError) as raised:
        Router(deferred.index, CFG, reader=_FlatReader())
    assert raised.value.code == "E_USAGE" and raised.value.argument == "reader"
    whole = _router(skills, open_location(tmp_path / "a" / "state.db"), defer=False)
    assert Router(whole.index, CFG, reader=_FlatReader()).route(QUERIES[0]).plan.names
    # Asked to defer with a reader, from_skills builds the whole index, cold cache or not.
    cold = Router.from_skills(
        skills,
        CFG,
        store=open_location(tmp_path / "c" / "state.db"),
        backend="hashing",
        defer_sections=True,
        reader=_FlatReader(),
    )
    assert not cold.index.pending_sections and isinstance(cold.reader, _FlatReader)


def test_a_lock_file_that_holds_no_pid_names_no_holder(tmp_path: Path) -> None:
    from skillrt.routing.index_build import LOCK_NAME, build_holder

    folder = tmp_path / "router-index"
    with build_lock(folder) as held:
        assert held and build_holder(folder) is not None
        for junk in (b"", b"not a pid\n", b"\xff\xfe\x00binary", b"-12\n", b"9" * 5000):
            (folder / LOCK_NAME).write_bytes(junk)
            assert build_holder(folder) is None
